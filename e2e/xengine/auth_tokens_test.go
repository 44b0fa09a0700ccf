package xengine

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/mcpwasm/mcpwasm/devkit/devserver"
)

// TestTokenDueRefreshesSilently: once the access token is within the
// client's refresh margin (10 s) of its expiry (the page's clock moves 59
// minutes 55 seconds on; the token lives an hour, and is still valid at
// the authorization server), the next call refreshes it first,
// exactly once, without a window, and the MCP server never sees a token
// about to lapse.
func TestTokenDueRefreshesSilently(t *testing.T) {
	eitherRuntime(t)
	parallel(t)
	const ttl = time.Hour
	w := newWorld(t, devserver.AuthConfig{TokenTTL: ttl})
	w.mustSignIn(w.popupSignIn(`{}`))
	before, events := w.snapshot(), len(w.AS.Events())
	w.skewClock(w.win, ttl-5*time.Second)
	if sum, state, err := w.callAdd(w.win, 1, 1); sum != 2 || err != nil || state != "connected" {
		t.Fatalf("a call once the token is due: add(1, 1) = %v, state %s, error %v; want 2, connected", sum, state, err)
	}
	if n := w.refreshes(); n != 1 {
		t.Errorf("refreshes = %d; want exactly 1", n)
	}
	if n := w.expiredTokensSent(events); n != 0 {
		t.Errorf("the MCP server refused an expired token %d times; want 0", n)
	}
	if d := w.diff(before); d["authorize"] != 0 || d["register"] != 0 {
		t.Errorf("the refresh made %v; want no authorization or registration request (no window)", d)
	}
}

// TestStepUpOnScopedTool: a tool that needs more scope than the sign-in
// granted answers 403 insufficient_scope; the interactive client asks
// for consent again in a window with the union of the scopes and retries
// the call, which then works. Where the engine blocks a window opened
// after the call's request (written down in expectedFailures), the call
// says popup_blocked, the grant keeps working for what it covers, and the
// person's click on Sign in grants the scope.
func TestStepUpOnScopedTool(t *testing.T) {
	eitherRuntime(t)
	parallel(t)
	w := newWorld(t, devserver.AuthConfig{ScopedTool: "add"})
	w.mustSignIn(w.popupSignIn(`{ interactive: true }`))
	var echo string
	w.eval(`(async () => (await c.callTool("echo", { text: "base scope" })).content[0].text)()`, &echo)
	if !strings.Contains(echo, "base scope") {
		t.Fatalf("echo with the base scope = %q", echo)
	}
	var got struct {
		Sum   float64 `json:"sum"`
		Error *jsErr  `json:"error"`
	}
	popup := w.popupOrSettled(func() {
		if err := w.win.Gesture(w.ctx, `void (window.stepped = null, c.callTool("add", { a: 20, b: 22 }).then(
			(r) => { stepped = { sum: r.structuredContent?.sum }; }, (e) => { stepped = { error: { code: e.code, message: e.message } }; }))`); err != nil {
			t.Fatalf("gesture: %v", err)
		}
	}, "window.stepped")
	if popup != nil {
		w.popupOpened()
		if err := popup.Click(w.ctx, "#approve"); err != nil {
			t.Fatalf("approving the step-up: %v", err)
		}
		w.awaitPage("the call that needed more scope", "window.stepped", &got)
	} else {
		w.eval(`window.stepped`, &got)
		if got.Error == nil {
			t.Fatalf("the call that needed more scope ended %+v without a window", got)
		}
		w.popupBlocked(got.Error.Code, got.Error.Message)
		var state string
		w.eval(`c.state`, &state)
		if state != "connected" {
			t.Errorf("state after the blocked step-up = %q; want connected (the grant still works for what it covers)", state)
		}
		if r := w.reauthorize(); !r.OK || r.State != "connected" {
			t.Fatalf("authorize() from a click for the step-up: %s; want connected", r)
		}
		sum, _, err := w.callAdd(w.win, 20, 22)
		got.Sum, got.Error = sum, err
	}
	if got.Sum != 42 || got.Error != nil {
		t.Fatalf("add after the step-up = %v, %v; want 42", got.Sum, got.Error)
	}
	var state string
	w.eval(`c.state`, &state)
	if state != "connected" {
		t.Errorf("state after the step-up = %q; want connected", state)
	}
	if n := w.AS.Count("token_code"); n != 2 {
		t.Errorf("code exchanges = %d; want 2 (the sign-in and the step-up)", n)
	}
}

// TestLogoutRevokesAndEmptiesStorage: logout() ends the session first,
// with a DELETE the MCP server accepts (the token still works then), and
// only then revokes the grant and empties the storage; the next connect()
// needs a sign-in.
func TestLogoutRevokesAndEmptiesStorage(t *testing.T) {
	eitherRuntime(t)
	parallel(t)
	w := newWorld(t, devserver.AuthConfig{})
	w.mustSignIn(w.popupSignIn(`{}`))
	var got struct {
		Grants int    `json:"grants"`
		Next   string `json:"next"`
	}
	w.eval(fmt.Sprintf(`(async () => {
		await c.logout();
		const grants = (await (%s)(["grants"])).grants.length;
		const next = await c.connect().then(() => "ok", (e) => e.code);
		return { grants, next };
	})()`, readStores), &got)
	if n := w.AS.Count("revoke"); n < 1 {
		t.Errorf("the authorization server saw %d revocations; want ≥1", n)
	}
	if seen := w.mcpDeletes(); len(seen) != 1 || seen[0].status < 200 || seen[0].status > 299 || seen[0].revokesBefore != 0 {
		t.Errorf("DELETEs the MCP server answered (status, revocations before): %+v; want one, accepted, before any revocation", seen)
	}
	if got.Grants != 0 {
		t.Errorf("%d grants left in IndexedDB after logout; want 0", got.Grants)
	}
	if got.Next != "auth_required" {
		t.Errorf("connect() after logout = %q; want auth_required", got.Next)
	}
}
