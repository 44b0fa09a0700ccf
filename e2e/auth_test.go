package e2e

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/mcpwasm/mcpwasm/cmd/devserver/devserver"
)

// startLogin creates window.c for the MCP server and starts c.authorize()
// in a user gesture; the outcome lands in window.result.
func (e *authEnv) startLogin(clientOpts string) {
	e.t.Helper()
	e.eval(fmt.Sprintf(`(() => {
		window.c = mcp.client(%q, %s);
		window.states = [];
		c.addEventListener("statechange", (ev) => states.push(ev.detail.state));
		window.result = null;
	})()`, e.MCPURL, clientOpts), nil)
	e.gesture(`void (c.authorize().then(() => { result = { ok: true, state: c.state }; },
		(e) => { result = { error: { name: e.name, code: e.code, status: e.status ?? 0, message: e.message }, state: c.state }; }))`)
}

// loginResult waits for window.result.
type loginResult struct {
	OK    bool   `json:"ok"`
	State string `json:"state"`
	Error *jsErr `json:"error"`
}

func (e *authEnv) awaitLogin() loginResult {
	e.t.Helper()
	var r loginResult
	e.eval(`(async () => {
		for (let i = 0; i < 600 && !window.result; i++) await new Promise((r) => setTimeout(r, 50));
		return window.result ?? { state: c.state, error: { code: "test_timeout", message: "authorize() did not settle in 30s" } };
	})()`, &r)
	return r
}

func TestLoginPopupThenReloadWithoutPopup(t *testing.T) {
	e := newAuthEnv(t, devserver.AuthConfig{})

	// Without a grant, connect() says a login is needed and opens nothing.
	var pre struct {
		Error jsErr  `json:"error"`
		State string `json:"state"`
	}
	e.eval(fmt.Sprintf(`(async () => {
		const c = mcp.client(%q);
		const r = await c.connect().then(() => ({}), %s);
		return { ...r, state: c.state };
	})()`, e.MCPURL, catchJS), &pre)
	if pre.Error.Code != "auth_required" || pre.State != "needs_auth" {
		t.Fatalf("connect() without a grant: %+v state %q; want auth_required, needs_auth", pre.Error, pre.State)
	}

	before := e.snapshot()
	popups := e.expectPopup()
	e.startLogin(`{ clientName: "e2e app" }`)
	e.consent(e.popup(popups), "approve")
	r := e.awaitLogin()
	if !r.OK || r.State != "connected" {
		t.Fatalf("authorize() = %+v; want connected", r)
	}
	cold := e.diff(before)
	t.Logf("first login requests: %v", cold)
	for kind, want := range map[string]int{"register": 1, "token": 1} {
		if cold[kind] != want {
			t.Errorf("first login: %d %s requests; want %d (all: %v)", cold[kind], kind, want, cold)
		}
	}
	var tools []string
	e.eval(`(async () => (await c.listTools()).map((t) => t.name))()`, &tools)
	if !slices.Contains(tools, "add") {
		t.Errorf("tools after login = %v", tools)
	}
	var states []string
	e.eval(`states`, &states)
	if !slices.Contains(states, "authorizing") || states[len(states)-1] != "connected" {
		t.Errorf("states during login = %v; want authorizing … connected", states)
	}

	// Reload: the grant comes from IndexedDB; no popup, no discovery, no registration.
	before = e.snapshot()
	if err := chromedp.Do(e.ctx, chromedp.Reload()); err != nil {
		t.Fatal(err)
	}
	var after struct {
		State string `json:"state"`
		Sum   any    `json:"sum"`
	}
	e.eval(fmt.Sprintf(`(async () => {
		const m = await import("/mcp.js");
		window.MCPError = m.MCPError;
		window.mcp = await m.load();
		const c = mcp.client(%q);
		await c.connect();
		const r = await c.callTool("add", { a: 1, b: 2 });
		return { state: c.state, sum: r.structuredContent?.sum };
	})()`, e.MCPURL), &after)
	warm := e.diff(before)
	t.Logf("reload requests: %v", warm)
	if after.State != "connected" || after.Sum != float64(3) {
		t.Fatalf("after reload: %+v; want connected and sum 3", after)
	}
	for _, kind := range []string{"prm", "asmeta", "register", "token", "authorize"} {
		if warm[kind] != 0 {
			t.Errorf("reload made %d %s requests; want 0 (all: %v)", warm[kind], kind, warm)
		}
	}
}

func TestDenyDeclinesEveryWaiterWithOnePopup(t *testing.T) {
	e := newAuthEnv(t, devserver.AuthConfig{})
	popups := e.expectPopup()
	// interactive: connect() may run the login itself; 5 calls wait on it.
	e.eval(fmt.Sprintf(`(() => {
		window.c = mcp.client(%q, { interactive: true });
		window.results = [];
	})()`, e.MCPURL), nil)
	e.gesture(`void Promise.allSettled([1, 2, 3, 4, 5].map(() => c.connect())).then((rs) => {
		results = rs.map((r) => r.status === "fulfilled" ? "ok" : r.reason.code);
	})`)
	e.consent(e.popup(popups), "deny")
	var got struct {
		Results []string `json:"results"`
		State   string   `json:"state"`
		Again   string   `json:"again"`
	}
	e.eval(`(async () => {
		for (let i = 0; i < 600 && results.length === 0; i++) await new Promise((r) => setTimeout(r, 50));
		// A later call does not open a second popup: the decline is final for this attempt.
		const again = await c.connect().then(() => "ok", (e) => e.code);
		return { results, state: c.state, again };
	})()`, &got)
	if len(got.Results) != 5 {
		t.Fatalf("results = %v; want 5", got.Results)
	}
	for _, r := range got.Results {
		if r != "declined" {
			t.Errorf("a waiting connect() ended %q; want declined (all: %v)", r, got.Results)
		}
	}
	if got.State != "declined" || got.Again != "declined" {
		t.Errorf("state %q, next connect %q; want declined, declined", got.State, got.Again)
	}
	if n := e.AS.Count("authorize"); n != 1 {
		t.Errorf("authorization requests = %d; want exactly 1 (one popup)", n)
	}
	select {
	case id := <-e.expectPopup():
		t.Errorf("a second popup opened: %v", id)
	case <-time.After(500 * time.Millisecond):
	}
}

func TestPopupBlockedWithoutGesture(t *testing.T) {
	e := newAuthEnv(t, devserver.AuthConfig{})
	var got struct {
		Error jsErr  `json:"error"`
		State string `json:"state"`
	}
	e.eval(fmt.Sprintf(`(async () => {
		const c = mcp.client(%q);
		const r = await c.authorize().then(() => ({}), %s);
		return { ...r, state: c.state };
	})()`, e.MCPURL, catchJS), &got)
	if got.Error.Code != "popup_blocked" || got.State != "needs_auth" {
		t.Errorf("authorize() without a gesture: %+v, state %q; want popup_blocked, needs_auth", got.Error, got.State)
	}
}
