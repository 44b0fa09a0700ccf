package xengine

import (
	"strings"
	"testing"
)

// TestDemoPageSignInReloadSignOut is what a person does with `make run`:
// connect to the protected demo server (the page's default), see a
// neutral "Sign in required" (no error banner, no error in the log, no
// window opened by itself), sign in through the popup, reload and stay
// signed in, sign out.
func TestDemoPageSignInReloadSignOut(t *testing.T) {
	eitherRuntime(t)
	parallel(t)
	d := newDemoWorld(t, true)
	d.openDemo("/")
	if got := d.value("#server-url"); got != d.MCPURL {
		t.Fatalf("server URL field = %q; want the dev server's protected demo server %q", got, d.MCPURL)
	}
	// The Servers panel lists the same server, waiting for a sign-in too.
	d.shown(`#servers li[data-server="demo"][data-state="needs_auth"]`)
	d.shown(`#servers li[data-server="notes"][data-state="connected"]`)
	d.click("#connect")
	d.shown(`#state[data-state="needs_auth"]`)
	d.shown("#auth-notice")
	d.shown("#sign-in")

	// A sign-in request is an expected step: neutral, not an error.
	if got := d.text("#auth-notice"); !strings.Contains(got, "Sign in required") {
		t.Errorf("the sign-in notice says %q; want Sign in required", got)
	}
	if got := d.js(`document.querySelector("#auth-notice").dataset.tone`); got != "info" {
		t.Errorf("the sign-in notice's tone is %q; want info", got)
	}
	if got := d.js(`document.querySelector("#state-error").hidden`); got != "true" {
		t.Errorf("the red error banner shows %q on the way to signing in", d.text("#state-error"))
	}
	if got := d.js(`document.activeElement.id`); got != "sign-in" {
		t.Errorf("focus is on #%s after the server asked for a sign-in; want the Sign in button", got)
	}
	for _, line := range strings.Split(d.logLines(), "\n") {
		if strings.HasPrefix(line, "error ") || strings.Contains(line, " error ") {
			t.Errorf("the event log has an error line on the way to signing in: %q", line)
		}
	}
	if n, auth := d.opens(), d.snapshot()["authorize"]; n != 0 || auth != 0 {
		t.Errorf("before any click the page opened %d windows and the authorization server saw %d authorization requests; want none", n, auth)
	}

	d.signIn("#sign-in", "#approve")
	d.shown(`#state[data-state="connected"]`)
	d.shown(`#tools [data-tool="add"]`)
	d.shown("#sign-out")
	if got := d.js(`document.querySelector("#auth-notice").hidden`); got != "true" {
		t.Errorf("the sign-in notice still shows once connected: %q", d.text("#auth-notice"))
	}

	// Reload: connected again from the stored grant, no popup, no consent.
	before := d.snapshot()
	if err := d.win.Reload(d.ctx); err != nil {
		t.Fatalf("reload: %v", err)
	}
	d.until("the demo page to be ready after the reload", `document.body.dataset.ready === "true"`)
	d.shown(`#state[data-state="connected"]`)
	d.shown(`#tools [data-tool="add"]`)
	if n := d.diff(before)["authorize"]; n != 0 {
		t.Errorf("the reload went through the authorization server again (%d authorization requests)", n)
	}
	if n := d.opens(); n != 0 {
		t.Errorf("the reload opened %d windows; want none", n)
	}

	d.click("#sign-out")
	d.shown(`#state[data-state="needs_auth"]`)
	d.shown("#sign-in")
	if n := d.AS.Count("revoke"); n < 1 {
		t.Errorf("sign out: the authorization server saw %d revocations", n)
	}
	d.checkPage()
}

// TestDemoChatAsksForSignIn is the sign-in a model asks for, as a person
// meets it in the demo's chat: the model needs a tool of the demo server,
// which waits for a sign-in, so it lists the servers and asks to use that
// one (an approval the person gives); the chat then shows a "Sign in to
// Demo server" card, whose click (and only that) opens the sign-in window,
// and the same turn goes on with the tool once the person signed in.
func TestDemoChatAsksForSignIn(t *testing.T) {
	eitherRuntime(t)
	parallel(t)
	d := newDemoWorld(t, true)
	d.openDemo("/")
	d.shown(`#servers li[data-server="demo"][data-state="needs_auth"]`)
	d.enabled("#chat-send")
	d.fill("#chat-input", "add 2 and 40")
	d.enter("#chat-input")

	ask := `#chat-log li.chat-approval[data-tool="catalog_enable_server"]`
	d.shown(ask + ` button.approve`)
	if got := d.text(ask); !strings.Contains(got, "The model asks to use Demo server") {
		t.Errorf("the approval prompt says %q; want the model asking to use Demo server", got)
	}
	d.click(ask + ` button.approve`)

	card := `#chat-log li.chat-note[data-kind="auth"]`
	d.shown(card + ` button.sign-in`)
	if got := d.text(card); !strings.Contains(got, "Demo server, which needs you to sign in") || !strings.Contains(got, "Sign in to Demo server") {
		t.Errorf("the sign-in card says %q; want Demo server needing a sign-in and its Sign in button", got)
	}
	if n := d.opens(); n != 0 {
		t.Errorf("the page opened %d windows before the card's click; want none", n)
	}
	d.signIn(card+` button.sign-in`, "#approve")

	d.shown(`#chat-log[data-runs="1"]`)
	d.shown(`#chat-log li.chat-tool[data-server="demo"][data-tool="add"][data-state="ok"]`)
	if got := d.js(`[...document.querySelectorAll("#chat-log li.chat-msg.assistant")].at(-1).querySelector(".chat-text").textContent`); !strings.Contains(got, "2 + 40 = 42") {
		t.Errorf("the turn's answer is %q; want the add tool's 2 + 40 = 42 after the sign-in", got)
	}
	d.shown(`#servers li[data-server="demo"][data-state="connected"]`)
	if n := d.opens(); n != 1 {
		t.Errorf("the page opened %d windows; want the one sign-in window", n)
	}
	d.checkPage()
}
