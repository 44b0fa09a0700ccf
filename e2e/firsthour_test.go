package e2e

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// TestNpmReactDenyThenSignInAgain: in the React example (useMcpClient), a
// person clicks Sign in and denies on the consent page: the hook's state
// is declined and its error says so; Sign in again opens the popup, the
// approval connects, and a tool call works.
func TestNpmReactDenyThenSignInAgain(t *testing.T) {
	onlyInPass(t, "auto", packageInDefaultRuntime)
	b := buildNpm(t)
	e := newAppEnv(t, true, b.Prod)
	e.do("open the app", chromedp.Navigate(e.PageURL+"/"))
	waitApp(e, "state needs_auth", `document.querySelector("#server")?.dataset.state === "needs_auth"`)

	popups := e.ownPopup()
	e.do("click Sign in", chromedp.Click(chromedp.ID("sign-in")))
	e.consent(e.popup(popups), "deny")
	waitApp(e, "state declined", `document.querySelector("#server")?.dataset.state === "declined"`)
	waitApp(e, "the decline's message", `document.querySelector("#error") !== null`)
	if got := e.text("#error"); !strings.Contains(got, "declined") {
		t.Errorf("after Deny the hook's error says %q; want the decline", got)
	}

	popups = e.ownPopup()
	e.do("click Sign in again", chromedp.Click(chromedp.ID("sign-in")))
	e.consent(e.popup(popups), "approve")
	waitApp(e, "state connected", `document.querySelector("#server")?.dataset.state === "connected"`)
	waitApp(e, "the tool list", `document.querySelector('#tools [data-tool="add"]') !== null`)
	e.do("call add", chromedp.Click(chromedp.ID("add")))
	waitApp(e, "the tool's result", `document.querySelector("#result").textContent !== ""`)
	if got := e.text("#result"); !strings.Contains(got, "42") {
		t.Errorf("add(2, 40) after signing in again shows %q; want 42", got)
	}
	checkAppErrors(e)
}
