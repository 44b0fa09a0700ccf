package xengine

import (
	"fmt"
	"testing"
	"time"

	"github.com/mcpwasm/mcpwasm/demo/authserver"
	"github.com/mcpwasm/mcpwasm/devkit/devserver"
	"github.com/mcpwasm/mcpwasm/e2e/engine"
)

// TestTwoTabsShareSignInAndSignOut: a second tab of the same browser
// waits for a sign-in; the sign-in in the first reaches it without a
// window of its own, and signing out in the first signs it out too.
func TestTwoTabsShareSignInAndSignOut(t *testing.T) {
	parallel(t)
	w := newWorld(t, devserver.AuthConfig{})
	tabB, pre := w.openTab()
	if pre != "auth_required" {
		t.Fatalf("tab B before any sign-in: connect() %q; want auth_required", pre)
	}
	if !w.signedIn(w.popupSignIn(`{}`)) {
		return
	}
	w.awaitState(tabB, "tab B to connect with tab A's grant", "connected")
	w.eval(`c.logout()`, nil)
	w.awaitState(tabB, "tab B to follow the sign-out", "needs_auth")
	if n := w.AS.Count("authorize"); n != 1 {
		t.Errorf("authorization requests = %d; want 1 (tab B never opened a window)", n)
	}
}

// TestTwoTabsOneRefreshForOneExpiry: two tabs signed in to one grant
// both call a tool at one instant once its access token has expired (an
// hour and a minute pass on the tabs' clocks); the authorization server
// sees exactly one refresh (the tabs take turns under a Web Lock and the
// second re-reads the first's new token, or they share one runtime), no
// rotated refresh token comes back, and both calls work.
func TestTwoTabsOneRefreshForOneExpiry(t *testing.T) {
	parallel(t)
	const ttl = time.Hour
	w := newWorld(t, devserver.AuthConfig{TokenTTL: ttl})
	tabB, _, ok := w.twoTabsSignedIn()
	if !ok {
		return
	}
	before := w.refreshes()
	// Go keeps time where it runs: in each tab's page or dedicated
	// worker, or once in the tabs' SharedWorker.
	var rt string
	w.eval(`mcp.runtime`, &rt)
	w.skewClock(w.win, ttl+time.Minute)
	if rt != "shared-worker" {
		w.skewClock(tabB, ttl+time.Minute)
	}
	// Both calls start at one instant of real time (performance's
	// clock, which the skew leaves alone).
	at := time.Now().Add(500 * time.Millisecond).UnixMilli()
	for i, tab := range []engine.Window{w.win, tabB} {
		w.evalIn(tab, fmt.Sprintf(`void (window.sum = null, setTimeout(() => c.callTool("add", { a: %d, b: 1 }).then(
			(r) => { sum = { value: r.structuredContent.sum }; }, (e) => { sum = { error: e.code + ": " + e.message }; }),
			%d - (performance.timeOrigin + performance.now())))`, i, at), nil)
	}
	for i, tab := range []engine.Window{w.win, tabB} {
		var got struct {
			Value float64 `json:"value"`
			Error string  `json:"error"`
		}
		w.waitFor(fmt.Sprintf("the call in tab %d", i+1), func() bool {
			_ = tab.Eval(w.ctx, `window.sum`, &got)
			return got.Value != 0 || got.Error != ""
		})
		if got.Error != "" || got.Value != float64(i+1) {
			t.Errorf("tab %d after the expiry: sum %v, error %q; want %d", i+1, got.Value, got.Error, i+1)
		}
	}
	if n := w.refreshes() - before; n != 1 {
		t.Errorf("refresh grants after one expiry seen by two tabs = %d; want exactly 1", n)
	}
	if n := w.AS.Count(authserver.EventRefreshReuse); n != 0 {
		t.Errorf("a rotated refresh token came back %d times (a tab refreshed with a stale grant)", n)
	}
}

// twoTabsSignedIn signs in in the world's tab and opens a second tab of
// the same browser connected with that grant; it returns the tab and when
// the grant's current access token was issued, or false when the sign-in
// stops at an engine's expected failure.
func (w *world) twoTabsSignedIn() (engine.Window, time.Time, bool) {
	w.t.Helper()
	if !w.signedIn(w.popupSignIn(`{}`)) {
		return nil, time.Time{}, false
	}
	tabB, code := w.openTab()
	if code != "" {
		w.t.Fatalf("tab B after the sign-in: connect() %q; want connected", code)
	}
	var runtimes [2]string
	w.eval(`mcp.runtime`, &runtimes[0])
	w.evalIn(tabB, `mcp.runtime`, &runtimes[1])
	if runtimes[0] != runtimes[1] {
		w.t.Fatalf("the tabs run in runtimes %q and %q; want both in the pass's (MCPWASM_E2E_RUNTIME=%s)", runtimes[0], runtimes[1], runtimeMode())
	}
	var issued time.Time
	for _, ev := range w.AS.Events() {
		if (ev.Kind == authserver.EventTokenCode || ev.Kind == authserver.EventTokenRefresh) && ev.Err == "" {
			issued = ev.Time
		}
	}
	if issued.IsZero() {
		w.t.Fatal("the authorization server recorded no code exchange for the sign-in")
	}
	return tabB, issued, true
}
