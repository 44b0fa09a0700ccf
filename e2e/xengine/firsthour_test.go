package xengine

import (
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/mcpwasm/mcpwasm/devkit/devserver"
)

// TestRedirectPageWithoutCallback: the sign-in window comes back to a
// redirect URI whose page is the app's own (what a single-page app's
// fallback route serves there), which runs no callback module. The
// sign-in ends redirect_unhandled within seconds, naming that URL (a
// relative redirectUri resolves against the page), not after
// authTimeoutMs as a timeout that blames the server.
func TestRedirectPageWithoutCallback(t *testing.T) {
	w := newWorld(t, devserver.AuthConfig{})
	// Relative to the page (/e2e/blank.html): /e2e/blank.html, the app page.
	popup, early := w.consentPopup(`{ redirectUri: "blank.html", authTimeoutMs: 120000 }`)
	if early != nil {
		w.signedIn(*early)
		return
	}
	approved := time.Now()
	if err := popup.Click(w.ctx, "#approve"); err != nil {
		t.Fatalf("approving on the consent page: %v", err)
	}
	r := w.awaitLogin()
	took := time.Since(approved)
	t.Logf("authorize() settled %v after Approve: %s", took.Round(100*time.Millisecond), r)
	if r.Error == nil || r.Error.Code != "redirect_unhandled" || r.State != "failed" {
		t.Fatalf("a redirect page without the callback module: %s; want redirect_unhandled, state failed", r)
	}
	// The outcome, not a tight bound: long before authTimeoutMs (2 min).
	if took > time.Minute {
		t.Errorf("redirect_unhandled came %v after Approve; want it long before authTimeoutMs (2 min)", took)
	}
	msg := r.Error.Message
	for _, want := range []string{w.PageURL + "/e2e/blank.html", "mcpwasm/callback", "redirectUri"} {
		if !strings.Contains(msg, want) {
			t.Errorf("message %q does not say %q", msg, want)
		}
	}
	if strings.Contains(msg, "code=") || strings.Contains(msg, "state=") {
		t.Errorf("message %q carries the callback's query", msg)
	}
	// A call now says why there is no session: the same cause.
	var call jsErr
	w.eval(fmt.Sprintf(`c.listTools().then(() => ({}), %s).then((r) => r.error ?? {})`, catchJS), &call)
	if call.Code != "redirect_unhandled" {
		t.Errorf("listTools() after the sign-in failed: %+v; want redirect_unhandled", call)
	}
}

// TestCallsRejectWithTheStateCause: a call made while the sign-in window
// is open rejects auth_required (not protocol "not connected"), and one
// made after a connect that could not reach its server rejects network;
// the failed state is said once at console.warn.
func TestCallsRejectWithTheStateCause(t *testing.T) {
	w := newWorld(t, devserver.AuthConfig{})
	popup, early := w.consentPopup(`{ authTimeoutMs: 120000 }`)
	if early != nil {
		w.signedIn(*early)
		return
	}
	var during struct {
		State string `json:"state"`
		Error jsErr  `json:"error"`
	}
	w.eval(fmt.Sprintf(`c.callTool("add", { a: 1, b: 2 }).then(() => ({}), %s).then((r) => ({ state: c.state, ...r }))`, catchJS), &during)
	if during.State != "authorizing" || during.Error.Code != "auth_required" {
		t.Errorf("a call during the sign-in: state %s, %+v; want authorizing, auth_required", during.State, during.Error)
	}
	if err := popup.Click(w.ctx, "#approve"); err != nil {
		t.Fatalf("approving on the consent page: %v", err)
	}
	if !w.signedIn(w.awaitLogin()) {
		return
	}

	dead := httptest.NewServer(nil)
	deadURL := dead.URL + "/mcp"
	dead.Close()
	var after struct {
		Connect  jsErr    `json:"connect"`
		Call     jsErr    `json:"call"`
		State    string   `json:"state"`
		Warnings []string `json:"warnings"`
	}
	w.eval(fmt.Sprintf(`(async () => {
		const warnings = [];
		const warn = console.warn;
		console.warn = (...a) => { warnings.push(a.join(" ")); warn.apply(console, a); };
		try {
			const d = mcp.client(%q);
			const connect = await d.connect().then(() => ({}), %[2]s);
			const call = await d.listTools().then(() => ({}), %[2]s);
			return { connect: connect.error, call: call.error, state: d.state, warnings: warnings.filter((w) => w.includes(%[1]q)) };
		} finally {
			console.warn = warn;
		}
	})()`, deadURL, catchJS), &after)
	if after.Connect.Code != "network" || after.State != "failed" {
		t.Errorf("connect() to a closed port: %+v, state %s; want network, failed", after.Connect, after.State)
	}
	if after.Call.Code != "network" {
		t.Errorf("a call after the failed connect: %+v; want network (the connect's cause), not protocol", after.Call)
	}
	if len(after.Warnings) != 1 || !strings.Contains(after.Warnings[0], "could not be reached") {
		t.Errorf("console.warn for the failed client: %q; want one sentence saying it could not be reached", after.Warnings)
	}
}

// TestRedirectModeReturnWithoutCallback: in authMode "redirect" the tab
// itself comes back to a redirect URI whose page is the app's own (no
// callback module ran there): mcp.handleCallback() on that page rejects
// redirect_unhandled, naming the page, instead of answering false as if
// no sign-in had happened.
func TestRedirectModeReturnWithoutCallback(t *testing.T) {
	w := newWorld(t, devserver.AuthConfig{})
	opts := `{ authMode: "redirect", redirectUri: "blank.html", authTimeoutMs: 120000 }`
	w.eval(fmt.Sprintf(`void (window.c = mcp.client(%q, %s), window.result = null)`, w.MCPURL, opts), nil)
	if err := w.win.Gesture(w.ctx, `c.authorize().catch((e) => { result = { error: { name: e.name, code: e.code, message: e.message }, state: c.state }; })`); err != nil {
		t.Fatal(err)
	}
	if !w.approveInTab() {
		return
	}
	w.waitFor("the return to the app page", func() bool {
		var back bool
		_ = w.win.Eval(w.ctx, `location.pathname === "/e2e/blank.html" && new URLSearchParams(location.search).has("state") && document.readyState === "complete"`, &back)
		return back
	})
	w.load(w.win)
	var got struct {
		Taken *bool `json:"taken"`
		Error jsErr `json:"error"`
		Again bool  `json:"again"`
	}
	w.eval(fmt.Sprintf(`(async () => {
		const r = await mcp.handleCallback().then((taken) => ({ taken }), %s);
		// Said once: a second call has nothing more to say.
		return { ...r, again: await mcp.handleCallback() };
	})()`, catchJS), &got)
	if got.Error.Code != "redirect_unhandled" || !strings.Contains(got.Error.Message, w.PageURL+"/e2e/blank.html") || !strings.Contains(got.Error.Message, "mcpwasm/callback") {
		t.Fatalf("handleCallback() on a return no callback module took: taken %v, %+v; want redirect_unhandled naming %s/e2e/blank.html", got.Taken, got.Error, w.PageURL)
	}
	if got.Again {
		t.Errorf("a second handleCallback() = true; want false")
	}
}
