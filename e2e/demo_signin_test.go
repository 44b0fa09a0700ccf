package e2e

import (
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// TestDemoPageSignInReloadSignOut is what a person does with `make run`:
// connect to the protected demo server (the page's default), see a neutral
// "Sign in required" (no error banner, no error in the log, no window
// opened by itself), sign in through the popup, reload and stay signed in,
// sign out.
func TestDemoPageSignInReloadSignOut(t *testing.T) {
	onlyInPass(t, "auto", demoInDefaultRuntime)
	t.Parallel()
	e := newDemoEnv(t, true)
	waitState := func(want string) {
		t.Helper()
		e.waitJS("state "+want, `document.querySelector("#state").dataset.state === "`+want+`"`)
	}
	popups := e.ownPopup()
	e.openDemo("/")
	if got := e.value("#server-url"); got != e.MCPURL {
		t.Fatalf("server URL field = %q; want the dev server's protected demo server %q", got, e.MCPURL)
	}
	// The Servers panel lists the same server, waiting for a sign-in too.
	e.do("the catalog settles",
		chromedp.WaitVisible(chromedp.CSS(`#servers li[data-server="demo"][data-state="needs_auth"]`)),
		chromedp.WaitVisible(chromedp.CSS(`#servers li[data-server="notes"][data-state="connected"]`)))
	e.do("connect", chromedp.Click(chromedp.ID("connect")))
	waitState("needs_auth")
	e.do("sign-in notice and button", chromedp.WaitVisible(chromedp.ID("auth-notice")), chromedp.WaitVisible(chromedp.ID("sign-in")))

	// A sign-in request is an expected step: neutral, not an error.
	if got := e.text("#auth-notice"); !strings.Contains(got, "Sign in required") {
		t.Errorf("the sign-in notice says %q; want Sign in required", got)
	}
	if got := e.js(`document.querySelector("#auth-notice").dataset.tone`); got != "info" {
		t.Errorf("the sign-in notice's tone is %q; want info", got)
	}
	if got := e.js(`document.querySelector("#state-error").hidden`); got != "true" {
		t.Errorf("the red error banner shows %q on the way to signing in", e.text("#state-error"))
	}
	if got := e.js(`document.activeElement.id`); got != "sign-in" {
		t.Errorf("focus is on #%s after the server asked for a sign-in; want the Sign in button", got)
	}
	for _, line := range strings.Split(e.logLines(), "\n") {
		if strings.HasPrefix(line, "error ") || strings.Contains(line, " error ") {
			t.Errorf("the event log has an error line on the way to signing in: %q", line)
		}
	}
	e.noPopup(popups, 300*time.Millisecond)

	popups = e.ownPopup()
	e.do("click Sign in", chromedp.Click(chromedp.ID("sign-in")))
	e.consent(e.popup(popups), "approve")
	waitState("connected")
	e.do("tools listed", chromedp.WaitVisible(chromedp.CSS(`#tools [data-tool="add"]`)))
	e.do("sign-out button", chromedp.WaitVisible(chromedp.ID("sign-out")))
	if got := e.js(`document.querySelector("#auth-notice").hidden`); got != "true" {
		t.Errorf("the sign-in notice still shows once connected: %q", e.text("#auth-notice"))
	}

	// Reload: connected again from the stored grant, no popup, no consent.
	authorizations := e.AS.Count("authorize")
	e.do("reload", chromedp.Reload(), chromedp.WaitVisible(chromedp.CSS(`body[data-ready]`)))
	waitState("connected")
	e.do("tools listed after reload", chromedp.WaitVisible(chromedp.CSS(`#tools [data-tool="add"]`)))
	if n := e.AS.Count("authorize"); n != authorizations {
		t.Errorf("the reload went through the authorization server again (%d → %d)", authorizations, n)
	}
	e.shot("demo-signed-in.png", "")

	e.do("click Sign out", chromedp.Click(chromedp.ID("sign-out")))
	waitState("needs_auth")
	e.do("sign-in offered again", chromedp.WaitVisible(chromedp.ID("sign-in")))
	if n := e.AS.Count("revoke"); n < 1 {
		t.Errorf("sign out: the authorization server saw %d revocations", n)
	}
	e.checkPageErrors()
}
