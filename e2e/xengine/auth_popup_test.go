package xengine

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcpwasm/mcpwasm/devkit/devserver"
)

// TestPopupSignInThenReload: without a grant, connect() says a sign-in is
// needed and opens nothing; a sign-in through the authorization server's
// consent page in a popup registers once and exchanges one code, the
// client goes through authorizing to connected; then a reload connects
// with the grant from IndexedDB, with no discovery, registration,
// authorization or token request.
func TestPopupSignInThenReload(t *testing.T) {
	parallel(t)
	w := newWorld(t, devserver.AuthConfig{})
	if e, state := w.connected(w.MCPURL, `{}`); e.Code != "auth_required" || state != "needs_auth" {
		t.Fatalf("connect() without a grant: %+v, state %q; want auth_required, needs_auth", e, state)
	}
	before := w.snapshot()
	r := w.approve(w.consentPopupOf(func() {
		w.eval(fmt.Sprintf(`void (window.c = mcp.client(%q, { clientName: "xengine" }), window.states = [],
			c.addEventListener("statechange", (ev) => states.push(ev.detail.state)))`, w.MCPURL), nil)
		w.startAuthorize()
	}))
	if !w.signedIn(r) {
		return
	}
	cold := w.diff(before)
	for kind, want := range map[string]int{"register": 1, "token": 1} {
		if cold[kind] != want {
			t.Errorf("sign-in: %d %s requests; want %d (all: %v)", cold[kind], kind, want, cold)
		}
	}
	var states []string
	w.eval(`states`, &states)
	if !slices.Contains(states, "authorizing") || states[len(states)-1] != "connected" {
		t.Errorf("states during the sign-in = %v; want authorizing … connected", states)
	}
	var tools []string
	w.eval(`(async () => (await c.listTools()).map((t) => t.name))()`, &tools)
	if !slices.Contains(tools, "add") {
		t.Errorf("tools after sign-in = %v", tools)
	}
	reqs, sum := w.reloadAndConnect(`{}`)
	if sum != 3 {
		t.Errorf("add(1, 2) after reload = %v", sum)
	}
	for _, k := range []string{"prm", "asmeta", "register", "authorize", "token"} {
		if reqs[k] != 0 {
			t.Errorf("reload: %d %s requests; want 0 (all: %v)", reqs[k], k, reqs)
		}
	}
}

// TestPopupBlockedWithoutGesture: authorize() called without a click
// cannot open its window; it says so (popup_blocked) and the client still
// needs a sign-in.
func TestPopupBlockedWithoutGesture(t *testing.T) {
	parallel(t)
	w := newWorld(t, devserver.AuthConfig{})
	var got struct {
		Error jsErr  `json:"error"`
		State string `json:"state"`
	}
	w.eval(fmt.Sprintf(`(async () => {
		const c = mcp.client(%q);
		const r = await c.authorize().then(() => ({}), %s);
		return { ...r, state: c.state };
	})()`, w.MCPURL, catchJS), &got)
	if got.Error.Code != "popup_blocked" || got.State != "needs_auth" || !strings.Contains(got.Error.Message, "from a click") {
		t.Errorf("authorize() without a gesture: %+v, state %q; want popup_blocked saying to call it from a click, needs_auth", got.Error, got.State)
	}
	if n := w.AS.Count("authorize"); n != 0 {
		t.Errorf("authorization requests = %d; want 0", n)
	}
}

// TestPopupClosedDeclines: a person closes the sign-in window without
// answering; authorize() rejects declined and no token is asked for. A
// new click on Sign in starts afresh and signs in.
func TestPopupClosedDeclines(t *testing.T) {
	w := newWorld(t, devserver.AuthConfig{})
	w.setSeverWindow(personSeverWindow)
	popup, early := w.consentPopup(`{}`)
	if early != nil {
		w.signedIn(*early)
		return
	}
	// A person reads the consent page for a while, then closes the window.
	w.personTakes(personSeverWindow + 150*time.Millisecond)
	if err := popup.Close(); err != nil {
		t.Logf("closing the popup: %v", err)
	}
	r := w.awaitLogin()
	if r.Error == nil || r.Error.Code != "declined" || r.State != "declined" {
		t.Fatalf("closing the sign-in window: %s; want declined", r)
	}
	if n := w.AS.Count("token_code"); n != 0 {
		t.Errorf("token requests after a closed popup = %d; want 0", n)
	}
	if r := w.reauthorize(); !r.OK || r.State != "connected" {
		t.Fatalf("authorize() from a new click after the decline: %s; want connected", r)
	}
}

// TestPopupClosedBeforeItLoadsDeclinesAtOnce: a window closed while it
// still said "Connecting…" is a person's close, not a Cross-Origin-
// Opener-Policy severance: with an hour's severed-window timeout, the
// sign-in still ends declined within awaitLogin's 30 s. The window closes
// in a microtask of the click that opened it: a timer may run later than
// the authorization URL's arrival (Firefox on a busy machine ran it after
// the window was sent to the authorization server, which then looked like
// a severance).
func TestPopupClosedBeforeItLoadsDeclinesAtOnce(t *testing.T) {
	parallel(t)
	w := newWorld(t, devserver.AuthConfig{})
	w.eval(`void (() => { const o = window.open; window.open = function (...a) { const x = o.apply(window, a); queueMicrotask(() => x?.close()); return x; }; })()`, nil)
	w.startLogin(`{ severedPopupTimeoutMs: 3600000 }`)
	r := w.awaitLogin()
	if r.Error == nil || r.Error.Code != "declined" {
		t.Fatalf("a popup closed before it loaded: %s; want declined (not taken for a COOP severance)", r)
	}
}

// TestDenyDeclinesEveryWaiterWithOnePopup: five connect() calls of an
// interactive client wait on one sign-in window; Deny on the consent page
// declines all five, and the next connect() is declined too without a
// new window (the person's answer is final for this attempt).
func TestDenyDeclinesEveryWaiterWithOnePopup(t *testing.T) {
	parallel(t)
	w := newWorld(t, devserver.AuthConfig{})
	w.watchPage(w.win)
	w.eval(fmt.Sprintf(`void (window.c = mcp.client(%q, { interactive: true }), window.results = null)`, w.MCPURL), nil)
	connect := func(first string) func() {
		return func() {
			if err := w.win.Gesture(w.ctx, `void Promise.allSettled([`+first+`, c.connect(), c.connect(), c.connect(), c.connect()]).then((rs) => {
				results = rs.map((r) => r.status === "fulfilled" ? "ok" : r.reason.code + ": " + r.reason.message);
			})`); err != nil {
				t.Fatalf("gesture: %v", err)
			}
		}
	}
	popup := w.popupOrSettled(connect("c.connect()"), "window.results")
	if popup == nil {
		// connect() opens the window after its first request: too late
		// for this engine's popup blocker.
		var rs []string
		w.eval(`results`, &rs)
		code, msg, _ := strings.Cut(rs[0], ": ")
		w.popupBlocked(code, msg)
		// Each waiting call tells the person what to do.
		for _, r := range rs {
			if !strings.HasPrefix(r, "popup_blocked: ") || !strings.Contains(strings.ToLower(r), "call authorize() from a click") {
				t.Errorf("the blocked connect() calls ended %q; want each popup_blocked, saying to call authorize() from a click", rs)
				break
			}
		}
		// The person clicks Sign in; the app's four requests wait on it.
		w.eval(`void (results = null)`, nil)
		if popup = w.popupOrSettled(connect("c.authorize()"), "window.results"); popup == nil {
			var rs []string
			w.eval(`results`, &rs)
			t.Fatalf("Sign in from a click opened no window: %q", rs)
		}
	} else {
		w.popupOpened()
	}
	if err := popup.Click(w.ctx, "#deny"); err != nil {
		t.Fatalf("denying on the consent page: %v", err)
	}
	var rs []string
	w.awaitPage("the waiting calls to settle", "window.results", &rs)
	if len(rs) != 5 {
		t.Fatalf("results = %q; want 5", rs)
	}
	for _, r := range rs {
		if !strings.HasPrefix(r, "declined: ") {
			t.Errorf("a waiting call ended %q; want declined (all: %q)", r, rs)
		}
	}
	var after struct {
		State string `json:"state"`
		Again string `json:"again"`
	}
	w.eval(`(async () => {
		const again = await c.connect().then(() => "ok", (e) => e.code);
		return { state: c.state, again };
	})()`, &after)
	if after.State != "declined" || after.Again != "declined" {
		t.Errorf("state %q, next connect() %q; want declined, declined", after.State, after.Again)
	}
	if n := w.AS.Count("authorize"); n != 1 {
		t.Errorf("authorization requests = %d; want exactly 1 (one window)", n)
	}
	if n := w.opened(); n != 1 {
		t.Errorf("the page opened %d windows; want 1", n)
	}
}

// TestAbortClosesThePopupAndReleases: aborting authorize() while its
// window shows the consent page rejects aborted and closes the window;
// nothing stays locked, so the next click signs in.
func TestAbortClosesThePopupAndReleases(t *testing.T) {
	parallel(t)
	w := newWorld(t, devserver.AuthConfig{})
	w.watchPage(w.win)
	_, early := w.consentPopupOf(func() {
		w.eval(fmt.Sprintf(`void (window.c = mcp.client(%q), window.ac = new AbortController(), window.result = null)`, w.MCPURL), nil)
		if err := w.win.Gesture(w.ctx, `c.authorize({ signal: ac.signal }).then(() => { result = { ok: true, state: c.state }; },
			(e) => { result = { error: { code: e.code, message: e.message }, state: c.state }; })`); err != nil {
			t.Fatalf("gesture: %v", err)
		}
	})
	if early != nil {
		t.Fatalf("authorize() ended before its consent page: %s", early)
	}
	w.eval(`ac.abort()`, nil)
	if r := w.awaitLogin(); r.Error == nil || r.Error.Code != "aborted" {
		t.Fatalf("aborted authorize() = %s; want aborted", r)
	}
	w.awaitPage("the page to close the sign-in window", "globalThis.__e2eLastOpened?.closed", nil)
	if r := w.reauthorize(); !r.OK || r.State != "connected" {
		t.Fatalf("authorize() after an abort = %s; want connected", r)
	}
}

// TestAuthTimeoutEndsAnUnfinishedLogin: a sign-in window nobody answers
// ends at the client's authTimeoutMs, saying the sign-in was not finished
// (not that a server was slow), and the client is declined.
func TestAuthTimeoutEndsAnUnfinishedLogin(t *testing.T) {
	parallel(t)
	w := newWorld(t, devserver.AuthConfig{})
	// The wait for the person starts when the window opens. On a loaded
	// machine the consent page may take longer than that to load; the
	// sign-in must then end the same way (the window was open, nobody
	// finished), so an end before the page showed is checked alike: its
	// message tells the wait for the person from discovery running out.
	var r loginResult
	if _, early := w.consentPopup(`{ authTimeoutMs: 4000 }`); early != nil {
		t.Logf("the time ran out before the consent page showed: %s", early)
		r = *early
	} else {
		r = w.awaitLogin()
	}
	if n := w.opened(); n != 1 {
		t.Errorf("the page opened %d windows; want 1", n)
	}
	if r.Error == nil || r.Error.Code != "timeout" {
		t.Fatalf("a sign-in nobody finishes: %s; want timeout", r)
	}
	if !strings.Contains(r.Error.Message, "was not finished within 4 seconds") || strings.Contains(r.Error.Message, "did not answer") || r.State != "declined" {
		t.Errorf("the unfinished sign-in says %q (state %s); want that it was not finished within 4 seconds, state declined", r.Error.Message, r.State)
	}
}

// TestCloseDuringSignInSettles: close() while the consent page shows
// ends authorize() as closed.
func TestCloseDuringSignInSettles(t *testing.T) {
	parallel(t)
	w := newWorld(t, devserver.AuthConfig{})
	if _, early := w.consentPopup(`{}`); early != nil {
		t.Fatalf("authorize() ended before its consent page: %s", early)
	}
	w.eval(`c.close()`, nil)
	if r := w.awaitLogin(); r.Error == nil || r.Error.Code != "closed" || r.State != "closed" {
		t.Fatalf("close() during authorize(): %s; want closed", r)
	}
}

// TestSecondAuthorizeJoinsTheRunningSignIn: a second click on Sign in
// while the window shows brings that window forward instead of opening
// another; both calls end connected after one Approve.
func TestSecondAuthorizeJoinsTheRunningSignIn(t *testing.T) {
	parallel(t)
	w := newWorld(t, devserver.AuthConfig{})
	w.watchPage(w.win)
	popup, early := w.consentPopup(`{}`)
	if early != nil {
		t.Fatalf("authorize() ended before its consent page: %s", early)
	}
	if err := w.win.Gesture(w.ctx, `void (window.result2 = null, c.authorize().then(() => { result2 = { ok: true, state: c.state }; },
		(e) => { result2 = { error: { code: e.code, message: e.message }, state: c.state }; }))`); err != nil {
		t.Fatalf("gesture: %v", err)
	}
	if err := popup.Click(w.ctx, "#approve"); err != nil {
		t.Fatalf("approving on the consent page: %v", err)
	}
	var got []loginResult
	w.awaitPage("both authorize() calls to settle", "window.result && window.result2 && [window.result, window.result2]", &got)
	for i, r := range got {
		if !r.OK || r.State != "connected" {
			t.Errorf("authorize() #%d = %s; want connected", i+1, r)
		}
	}
	if n := w.opened(); n != 1 {
		t.Errorf("the page opened %d windows for two clicks on Sign in; want 1", n)
	}
	if n := w.AS.Count("authorize"); n != 1 {
		t.Errorf("authorization requests = %d; want 1", n)
	}
}

// TestLoginWhenWWWAuthenticateIsHidden: most servers do not expose
// WWW-Authenticate through CORS, so the page cannot read the 401's
// challenge; discovery falls through to the well-known URLs and the
// sign-in works.
func TestLoginWhenWWWAuthenticateIsHidden(t *testing.T) {
	parallel(t)
	w := newWorld(t, devserver.AuthConfig{HideWWWAuthenticate: true})
	var header string
	w.eval(fmt.Sprintf(`(async () => {
		const r = await fetch(%q, { method: "POST", headers: { "Content-Type": "application/json" }, body: "{}" });
		return r.headers.get("WWW-Authenticate") ?? "hidden";
	})()`, w.MCPURL), &header)
	if header != "hidden" {
		t.Fatalf("the switch did not hide WWW-Authenticate from the page (%q)", header)
	}
	w.mustSignIn(w.popupSignIn(`{}`))
	if !w.addWorks() {
		t.Error("add(1, 2) after a sign-in with a hidden challenge did not return 3")
	}
}
