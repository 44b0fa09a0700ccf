package e2e

import (
	"net/url"
	"os"
	"path/filepath"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/mcpwasm/mcpwasm/internal/devserver"
)

// TestDemoPageSignInReloadSignOut is what a person does with `make run`:
// connect, sign in through the popup, reload and stay signed in, sign out.
func TestDemoPageSignInReloadSignOut(t *testing.T) {
	e := newAuthEnv(t, devserver.AuthConfig{})
	do := func(what string, actions ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		if err := chromedp.Do(e.ctx, actions...); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	state := func() string {
		t.Helper()
		var s string
		e.eval(`document.querySelector("#state").dataset.state`, &s)
		return s
	}
	waitState := func(want string) {
		t.Helper()
		e.waitFor("state "+want, func() bool { return state() == want })
	}
	page := e.PageURL + "/?server=" + url.QueryEscape(e.MCPURL)
	do("open the demo page", chromedp.Navigate(page), chromedp.WaitVisible(chromedp.CSS(`body[data-ready]`)))
	do("connect", chromedp.Click(chromedp.ID("connect")))
	waitState("needs_auth")
	do("sign-in button", chromedp.WaitVisible(chromedp.ID("sign-in")))

	popups := e.expectPopup()
	do("click Sign in", chromedp.Click(chromedp.ID("sign-in")))
	e.consent(e.popup(popups), "approve")
	waitState("connected")
	do("tools listed", chromedp.WaitVisible(chromedp.CSS(`#tools [data-tool="add"]`)))
	do("sign-out button", chromedp.WaitVisible(chromedp.ID("sign-out")))

	// Reload: connected again from the stored grant, no popup, no consent.
	authorizations := e.AS.Count("authorize")
	do("reload", chromedp.Reload(), chromedp.WaitVisible(chromedp.CSS(`body[data-ready]`)))
	waitState("connected")
	do("tools listed after reload", chromedp.WaitVisible(chromedp.CSS(`#tools [data-tool="add"]`)))
	if n := e.AS.Count("authorize"); n != authorizations {
		t.Errorf("the reload went through the authorization server again (%d → %d)", authorizations, n)
	}
	if shot, err := chromedp.Run(e.ctx, chromedp.FullScreenshot(100)); err == nil {
		dir := filepath.Join(repoRoot, "e2e", "artifacts")
		if os.MkdirAll(dir, 0o755) == nil && os.WriteFile(filepath.Join(dir, "demo-signed-in.png"), shot, 0o644) == nil {
			t.Logf("screenshot: %s", filepath.Join(dir, "demo-signed-in.png"))
		}
	}

	do("click Sign out", chromedp.Click(chromedp.ID("sign-out")))
	waitState("needs_auth")
	do("sign-in offered again", chromedp.WaitVisible(chromedp.ID("sign-in")))
	if n := e.AS.Count("revoke"); n < 1 {
		t.Errorf("sign out: the authorization server saw %d revocations", n)
	}
}
