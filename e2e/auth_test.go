package e2e

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"

	"github.com/mcpwasm/mcpwasm/demo/authserver"
	"github.com/mcpwasm/mcpwasm/devkit/devserver"
	"github.com/mcpwasm/mcpwasm/e2e/internal/respstatus"
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
		(e) => { result = { error: { name: e.name, code: e.code, status: e.status ?? 0, message: e.message + " — " + (e.detail ?? "") }, state: c.state }; }))`)
}

// openDB is page-side JavaScript that opens the client's IndexedDB
// database as it is, for tests that inspect what is stored.
const openDB = `void (window.openDB = () => new Promise((res, rej) => {
	const r = indexedDB.open("mcpwasm"); r.onsuccess = () => res(r.result); r.onerror = () => rej(r.error); }))`

// openConsent creates window.c with clientOpts, starts authorize() in a
// gesture and returns the popup once it shows the consent page.
func (e *authEnv) openConsent(clientOpts string) context.Context {
	e.t.Helper()
	popups := e.expectPopup()
	e.startLogin(clientOpts)
	popup := e.popup(popups)
	if err := chromedp.Do(popup, chromedp.WaitVisible(chromedp.ID("approve"))); err != nil {
		e.t.Fatalf("the consent page: %v", err)
	}
	return popup
}

// signIn creates window.c with clientOpts and signs in through the popup
// (Approve), failing the test unless it ends connected.
func (e *authEnv) signIn(clientOpts string) {
	e.t.Helper()
	popups := e.expectPopup()
	e.startLogin(clientOpts)
	e.consent(e.popup(popups), "approve")
	if r := e.awaitLogin(); !r.OK || r.State != "connected" {
		e.t.Fatalf("sign-in: %+v; want connected", r)
	}
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

func TestClosingThePopupDeclines(t *testing.T) {
	e := newAuthEnv(t, devserver.AuthConfig{})
	e.setSeverWindow(personSeverWindow)
	popup := e.openConsent(`{}`)
	// A person reads the consent page for a while, then closes the window.
	personReads()
	if _, err := chromedp.Run(popup, chromedp.Evaluate[any](`window.close()`)); err != nil && err != chromedp.ErrJSUndefined {
		t.Logf("closing the popup: %v", err)
	}
	r := e.awaitLogin()
	if r.Error == nil || r.Error.Code != "declined" || r.State != "declined" {
		t.Fatalf("closing the login window: %+v; want declined", r)
	}
	if n := e.AS.Count("token_code"); n != 0 {
		t.Errorf("token requests after a closed popup = %d; want 0", n)
	}
	// A new explicit authorize() starts fresh and works.
	popups := e.expectPopup()
	e.gesture(`void (result = null, c.authorize().then(() => { result = { ok: true, state: c.state }; },
		(e) => { result = { error: { code: e.code, message: e.message }, state: c.state }; }))`)
	e.consent(e.popup(popups), "approve")
	if r := e.awaitLogin(); !r.OK || r.State != "connected" {
		t.Fatalf("authorize() after a decline = %+v; want connected", r)
	}
}

func TestCOOPLoginCompletesThroughBroadcastChannel(t *testing.T) {
	e := newAuthEnv(t, devserver.AuthConfig{COOP: true})
	e.setSeverWindow(coopSeverWindow)
	console := e.console()
	popup := e.openConsent(`{}`)
	// The consent page severs window.opener; a person takes a while.
	e.awaitSevered(console)
	personTakesLong()
	e.consent(popup, "approve")
	if r := e.awaitLogin(); !r.OK || r.State != "connected" {
		t.Fatalf("login with COOP on the authorization server: %+v; want connected", r)
	}
	// The switch really severed the opener (else this test proves nothing).
	if !strings.Contains(console(), "Cross-Origin-Opener-Policy") {
		t.Errorf("the page never saw the login window severed; console: %q", console())
	}
}

func TestReplayedCallbackIsRejected(t *testing.T) {
	e := newAuthEnv(t, devserver.AuthConfig{})
	// Record what the callback page relays, as an attacker on the same
	// machine might have seen the URL.
	e.eval(`(() => { new BroadcastChannel("mcpwasm-oauth").onmessage = (ev) => { window.relayed = ev.data.url; }; })()`, nil)
	e.signIn(`{}`)
	tokens := e.AS.Count("token_code")
	var replay struct {
		Taken   bool   `json:"taken"`
		Relayed string `json:"relayed"`
		State   string `json:"state"`
	}
	e.eval(`(async () => {
		for (let i = 0; i < 100 && !window.relayed; i++) await new Promise((r) => setTimeout(r, 20));
		const taken = await mcp.handleCallback(window.relayed);
		return { taken, relayed: window.relayed ?? "", state: c.state };
	})()`, &replay)
	if replay.Relayed == "" {
		t.Fatal("the callback page relayed nothing on the BroadcastChannel")
	}
	if replay.Taken || replay.State != "connected" {
		t.Errorf("replaying the callback URL: taken=%v state=%q; want false, still connected", replay.Taken, replay.State)
	}
	if n := e.AS.Count("token_code"); n != tokens {
		t.Errorf("the replay reached the token endpoint (%d → %d requests)", tokens, n)
	}
}

func TestForgedMessageFromAnotherOriginIsIgnored(t *testing.T) {
	e := newAuthEnv(t, devserver.AuthConfig{})
	// The forger is a page on another loopback origin, framed by ours.
	forger := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprintf(w, `<script>parent.postMessage({ type: "mcpwasm:oauth-callback",
			url: %q + "/oauth/callback.html?code=forged&state=" + new URLSearchParams(location.search).get("state") }, "*");</script>`, e.PageURL)
	}))
	t.Cleanup(forger.Close)
	console := e.console()
	popup := e.openConsent(`{}`)
	state := e.lastState()
	if state == "" {
		t.Fatal("the authorization server saw no state")
	}
	e.eval(fmt.Sprintf(`new Promise((resolve) => {
		const f = document.createElement("iframe");
		f.src = %q + "/?state=" + encodeURIComponent(%q);
		f.onload = () => setTimeout(resolve, 300);
		document.body.append(f);
	})`, forger.URL, state), nil)
	var mid string
	e.eval(`c.state`, &mid)
	if mid != "authorizing" {
		t.Fatalf("after the forged message the state is %q; want still authorizing", mid)
	}
	e.consent(popup, "approve")
	if r := e.awaitLogin(); !r.OK || r.State != "connected" {
		t.Fatalf("login after a forged message: %+v; want connected", r)
	}
	if !strings.Contains(console(), "another origin") {
		t.Errorf("no console warning about the forged message; console: %q", console())
	}
}

// TestLogoutRevokesAndEmptiesStorage: logout() ends the session first,
// with a DELETE the MCP server accepts (the token still works then), and
// only then revokes the grant and empties the storage.
func TestLogoutRevokesAndEmptiesStorage(t *testing.T) {
	type deleteSeen struct{ status, revokesBefore int }
	var (
		mu      sync.Mutex
		deletes []deleteSeen
	)
	e := newAuthEnvWith(t, devserver.AuthConfig{}, func(e *authEnv, name string, h http.Handler) http.Handler {
		if name != "mcp" {
			return h
		}
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method != http.MethodDelete {
				h.ServeHTTP(w, r)
				return
			}
			revokes := e.AS.Count("revoke")
			sw := &respstatus.Writer{ResponseWriter: w}
			h.ServeHTTP(sw, r)
			if sw.Status == 0 {
				sw.Status = http.StatusOK // nothing written
			}
			mu.Lock()
			deletes = append(deletes, deleteSeen{sw.Status, revokes})
			mu.Unlock()
		})
	})
	e.signIn(`{}`)
	var got struct {
		State  string `json:"state"`
		Grants int    `json:"grants"`
		Next   string `json:"next"`
	}
	e.eval(`(async () => {
		await c.logout();
		const db = await openDB();
		const grants = await new Promise((res) => { const r = db.transaction("grants").objectStore("grants").count(); r.onsuccess = () => res(r.result); });
		db.close();
		const next = await c.connect().then(() => "ok", (e) => e.code);
		return { state: c.state, grants, next };
	})()`, &got)
	if n := e.AS.Count("revoke"); n < 1 {
		t.Errorf("the authorization server saw %d revocations; want ≥1", n)
	}
	mu.Lock()
	seen := append([]deleteSeen(nil), deletes...)
	mu.Unlock()
	if len(seen) != 1 || seen[0].status < 200 || seen[0].status > 299 || seen[0].revokesBefore != 0 {
		t.Errorf("DELETEs the MCP server saw (status, revocations before): %+v; want one, accepted, before any revocation", seen)
	}
	if got.Grants != 0 {
		t.Errorf("%d grants left in IndexedDB after logout; want 0", got.Grants)
	}
	if got.Next != "auth_required" {
		t.Errorf("connect() after logout = %q; want auth_required", got.Next)
	}
}

func TestStoredGrantIsNotPlaintext(t *testing.T) {
	e := newAuthEnv(t, devserver.AuthConfig{})
	e.signIn(`{}`)
	// Dump every record of every store, binary fields as latin1 strings and
	// as base64, and look for token material.
	var dump string
	e.eval(`(async () => {
		const db = await openDB();
		const out = {};
		for (const name of db.objectStoreNames) {
			out[name] = await new Promise((res) => { const r = db.transaction(name).objectStore(name).getAll(); r.onsuccess = () => res(r.result); });
		}
		db.close();
		const seen = new Set();
		const flat = (v) => {
			if (v instanceof Uint8Array || v instanceof ArrayBuffer) { const b = new Uint8Array(v); const s = String.fromCharCode(...b); return s + " " + btoa(s); }
			if (v instanceof CryptoKey) return "CryptoKey(extractable=" + v.extractable + ")";
			if (v && typeof v === "object") { if (seen.has(v)) return ""; seen.add(v); return Object.entries(v).map(([k, x]) => k + "=" + flat(x)).join(" "); }
			return String(v);
		};
		return flat(out);
	})()`, &dump)
	if !strings.Contains(dump, "grants=") || !strings.Contains(dump, "CryptoKey(extractable=false)") {
		t.Fatalf("dump does not look like our database: %.300s", dump)
	}
	for _, secret := range []string{authserver.AccessTokenPrefix, authserver.RefreshTokenPrefix} {
		if strings.Contains(dump, secret) {
			t.Errorf("IndexedDB holds token material in plaintext (%q found)", secret)
		}
	}
}

func TestIndexedDBUnavailableFallsBackToMemory(t *testing.T) {
	e := newAuthEnv(t, devserver.AuthConfig{})
	console := e.console()
	// Private-mode-like: no IndexedDB at all, in this page (a worker runtime
	// has the worker's own indexedDB: this test pins the main thread).
	e.eval(`void Object.defineProperty(window, "indexedDB", { get() { return undefined; } })`, nil)
	e.eval(`(async () => { window.mcp = await (await import("/mcp.js?main")).load({ runtime: "main" }); })()`, nil)
	e.eval(fmt.Sprintf(`(() => {
		window.fallback = null;
		window.c = mcp.client(%q);
		c.addEventListener("storagefallback", (ev) => { fallback = ev.detail.reason; });
		window.result = null;
	})()`, e.MCPURL), nil)
	popups := e.expectPopup()
	e.gesture(`void (c.authorize().then(() => { result = { ok: true, state: c.state }; },
		(e) => { result = { error: { code: e.code, message: e.message }, state: c.state }; }))`)
	e.consent(e.popup(popups), "approve")
	if r := e.awaitLogin(); !r.OK || r.State != "connected" {
		t.Fatalf("login without IndexedDB: %+v; want connected (memory)", r)
	}
	var reason string
	e.eval(`fallback`, &reason)
	if reason == "" {
		t.Error("no storagefallback event when IndexedDB is unavailable")
	}
	if c := console(); !strings.Contains(c, "warning: ") || !strings.Contains(c, "mcp: sign-ins are kept in memory") {
		t.Errorf("no console.warn about the memory fallback; console: %q", console())
	}
}

func TestStepUpOnScopedTool(t *testing.T) {
	e := newAuthEnv(t, devserver.AuthConfig{ScopedTool: "add"})
	e.signIn(`{ interactive: true }`)
	// echo needs only the base scope.
	var echo string
	e.eval(`(async () => (await c.callTool("echo", { text: "base scope" })).content[0].text)()`, &echo)
	if !strings.Contains(echo, "base scope") {
		t.Fatalf("echo = %q", echo)
	}
	// add needs mcp:admin: 403 insufficient_scope → a second consent with
	// the union of scopes → the call is retried and succeeds.
	popups := e.expectPopup()
	e.gesture(`void (window.stepped = null, c.callTool("add", { a: 20, b: 22 }).then(
		(r) => { stepped = { sum: r.structuredContent?.sum }; }, (e) => { stepped = { code: e.code, message: e.message }; }))`)
	e.consent(e.popup(popups), "approve")
	var got struct {
		Sum  float64 `json:"sum"`
		Code string  `json:"code"`
	}
	e.eval(`(async () => {
		for (let i = 0; i < 600 && !window.stepped; i++) await new Promise((r) => setTimeout(r, 50));
		return window.stepped;
	})()`, &got)
	if got.Sum != 42 {
		t.Fatalf("add after step-up = %+v; want sum 42", got)
	}
	var st string
	e.eval(`c.state`, &st)
	if st != "connected" {
		t.Errorf("client.state after a successful step-up = %q; want connected", st)
	}
	if n := e.AS.Count("token_code"); n != 2 {
		t.Errorf("token exchanges = %d; want 2 (login + step-up)", n)
	}
}

func TestShortLivedTokenRefreshesSilently(t *testing.T) {
	e := newAuthEnv(t, devserver.AuthConfig{TokenTTL: refreshTTL})
	e.signIn(`{}`)
	e.awaitTokenDue(refreshTTL)
	before := e.AS.Count("token_refresh")
	var sum float64
	e.eval(`(async () => (await c.callTool("add", { a: 1, b: 1 })).structuredContent.sum)()`, &sum)
	if sum != 2 {
		t.Fatalf("call after expiry = %v", sum)
	}
	if n := e.AS.Count("token_refresh") - before; n != 1 {
		t.Errorf("refresh requests = %d; want 1", n)
	}
	if n := e.AS.Count("authorize"); n != 1 {
		t.Errorf("authorization requests = %d; want 1 (no second popup)", n)
	}
}

func TestTwoTabsRefreshOnce(t *testing.T) {
	e := newAuthEnv(t, devserver.AuthConfig{TokenTTL: refreshTTL})
	e.signIn(`{}`)
	// A second tab of the same app picks the grant up from IndexedDB.
	tab2 := newBareEnv(t, e.env)
	tab2.eval(fmt.Sprintf(`(async () => {
		const m = await import("/mcp.js");
		window.mcp = await m.load();
		window.c = mcp.client(%q);
		await c.connect();
	})()`, e.MCPURL), nil)
	if n := e.AS.Count("authorize"); n != 1 {
		t.Fatalf("the second tab needed a login (%d authorization requests)", n)
	}
	rotation := e.awaitTokenDue(refreshTTL)
	const call = `(async () => { await new Promise((r) => setTimeout(r, 1000 - Date.now() %% 1000)); return (await c.callTool("add", { a: %d, b: 1 })).structuredContent.sum; })()`
	var wg sync.WaitGroup
	sums := make([]float64, 2)
	for i, tab := range []*env{e.env, tab2} {
		wg.Go(func() { tab.eval(fmt.Sprintf(call, i), &sums[i]) })
	}
	wg.Wait()
	if sums[0] != 1 || sums[1] != 2 {
		t.Fatalf("calls from both tabs = %v; want [1 2]", sums)
	}
	// Both tabs held one grant when it fell due (the sign-in's, or its
	// refresh while a slow setup ran on): its refresh token must be
	// presented exactly once. (A later refresh of the new grant, once
	// that one falls due on a slow machine, is not a repeat.)
	first := 0
	for _, ev := range e.AS.Events() {
		if ev.Kind == authserver.EventTokenRefresh && ev.Err == "" && strings.HasSuffix(ev.Detail, fmt.Sprintf(" rotation=%d", rotation+1)) {
			first++
		}
	}
	if first != 1 {
		t.Errorf("refreshes of the grant due (rotation %d) from two tabs = %d; want exactly 1 (all refreshes: %d)", rotation, first, e.AS.Count("token_refresh"))
	}
	if n := e.AS.Count("refresh_reuse"); n != 0 {
		t.Errorf("refresh token reuse detected %d times (the grant would be revoked)", n)
	}
}

// TestRedirectModeCompletes, also with DPoP-only demo servers: the page
// that returns from the authorization server finishes the exchange from
// storage, with the IndexedDB key the code was bound to (dpop_jkt).
func TestRedirectModeCompletes(t *testing.T) {
	for _, dpop := range []bool{false, true} {
		t.Run(fmt.Sprintf("dpop=%v", dpop), func(t *testing.T) {
			t.Parallel()
			testRedirectMode(t, dpop)
		})
	}
}

func testRedirectMode(t *testing.T, dpop bool) {
	e := newAuthEnv(t, devserver.AuthConfig{DPoP: dpop})
	e.eval(fmt.Sprintf(`void (window.c = mcp.client(%q, { authMode: "redirect" }))`, e.MCPURL), nil)
	// The page itself goes to the authorization server.
	e.gesture(`void c.authorize()`)
	clickLoaded(t, e.ctx, "approve", "the consent page in the tab")
	// oauth/callback.html sends the tab back to the app page.
	e.waitFor("the return to the app page", func() bool {
		var path string
		_ = e.tryEval(`location.pathname + (document.readyState === "complete" ? "" : "…")`, &path)
		return path == "/e2e/blank.html"
	})
	var got struct {
		Taken  bool    `json:"taken"`
		Again  bool    `json:"again"`
		State  string  `json:"state"`
		Sum    float64 `json:"sum"`
		Stored bool    `json:"stored"`
	}
	e.eval(fmt.Sprintf(`(async () => {
		const m = await import("/mcp.js");
		window.mcp = await m.load();
		const stored = sessionStorage.getItem("mcpwasm:callback") !== null;
		const taken = await mcp.handleCallback();
		const c = mcp.client(%q, { authMode: "redirect" });
		await c.connect();
		const r = await c.callTool("add", { a: 40, b: 2 });
		const again = await mcp.handleCallback(location.origin + "/oauth/callback.html?code=x&state=y");
		return { taken, again, state: c.state, sum: r.structuredContent.sum, stored };
	})()`, e.MCPURL), &got)
	if !got.Stored || !got.Taken {
		t.Fatalf("redirect return: callback saved=%v, handleCallback()=%v; want both true", got.Stored, got.Taken)
	}
	if got.State != "connected" || got.Sum != 42 {
		t.Errorf("after the redirect: state %q, sum %v; want connected, 42", got.State, got.Sum)
	}
	if got.Again {
		t.Error("handleCallback() took a URL with an unknown state")
	}
	exchanged := 0
	for _, ev := range e.AS.Events() {
		if ev.Kind == authserver.EventTokenCode && ev.Err == "" {
			exchanged++
		} else if ev.Kind == authserver.EventTokenCode && !(dpop && ev.Err == "use_dpop_nonce") {
			t.Errorf("token request refused: %s %s", ev.Err, ev.Detail)
		}
	}
	if exchanged != 1 {
		t.Errorf("token exchanges = %d; want 1", exchanged)
	}
}

func TestAbortClosesThePopupAndReleases(t *testing.T) {
	e := newAuthEnv(t, devserver.AuthConfig{})
	popups := e.expectPopup()
	e.eval(fmt.Sprintf(`(() => {
		window.c = mcp.client(%q);
		window.ac = new AbortController();
		window.result = null;
	})()`, e.MCPURL), nil)
	e.gesture(`void c.authorize({ signal: ac.signal }).then(() => { result = { ok: true }; },
		(e) => { result = { error: { code: e.code, message: e.message }, state: c.state }; })`)
	popup := e.popup(popups)
	if err := chromedp.Do(popup, chromedp.WaitVisible(chromedp.ID("approve"))); err != nil {
		t.Fatal(err)
	}
	e.eval(`ac.abort()`, nil)
	r := e.awaitLogin()
	if r.Error == nil || r.Error.Code != "aborted" {
		t.Fatalf("aborted authorize() = %+v; want aborted", r)
	}
	// The popup is closed by the page.
	e.waitFor("the popup to close", func() bool {
		targets, err := chromedp.Targets(e.ctx)
		if err != nil {
			return false
		}
		for _, ti := range targets {
			if ti.Type == "page" && strings.Contains(ti.URL, "/authorize") {
				return false
			}
		}
		return true
	})
	// Nothing stays locked: the next attempt is not refused as busy.
	popups = e.expectPopup()
	e.gesture(`void (result = null, c.authorize().then(() => { result = { ok: true, state: c.state }; },
		(e) => { result = { error: { code: e.code, message: e.message }, state: c.state }; }))`)
	e.consent(e.popup(popups), "approve")
	if r := e.awaitLogin(); !r.OK || r.State != "connected" {
		t.Fatalf("authorize() after an abort = %+v; want connected", r)
	}
}

func TestAuthTimeoutEndsAnUnfinishedLogin(t *testing.T) {
	e := newAuthEnv(t, devserver.AuthConfig{})
	popups := e.expectPopup()
	// Long enough for discovery and registration on a loaded machine, so
	// that the time runs out in the open popup.
	e.startLogin(`{ authTimeoutMs: 4000 }`)
	e.popup(popups) // opened, and left alone
	r := e.awaitLogin()
	if r.Error == nil || r.Error.Code != "timeout" {
		t.Fatalf("a login nobody finishes: %+v; want timeout", r)
	}
	t.Logf("unfinished login ended: %s (%s), state %s", r.Error.Code, r.Error.Message, r.State)
	// It says the sign-in was not finished, not that the server was slow.
	if !strings.Contains(r.Error.Message, "was not finished within 4 seconds") || strings.Contains(r.Error.Message, "did not answer") || r.State != "declined" {
		t.Errorf("the unfinished sign-in says %q (state %s); want that it was not finished within 4 seconds, state declined", r.Error.Message, r.State)
	}
}

func TestOtherTabsFollowSignInAndSignOut(t *testing.T) {
	e := newAuthEnv(t, devserver.AuthConfig{})
	// Tab B waits for a login.
	tabB := newBareEnv(t, e.env)
	var pre string
	tabB.eval(fmt.Sprintf(`(async () => {
		const m = await import("/mcp.js");
		window.mcp = await m.load();
		window.c = mcp.client(%q);
		return c.connect().then(() => "connected", (e) => e.code);
	})()`, e.MCPURL), &pre)
	if pre != "auth_required" {
		t.Fatalf("tab B before any login: %q", pre)
	}
	// Tab A signs in; tab B connects without a popup.
	e.signIn(`{}`)
	tabB.waitFor("tab B to connect with tab A's grant", func() bool {
		var s string
		_ = tabB.tryEval(`c.state`, &s)
		return s == "connected"
	})
	// Tab A signs out; tab B's session ends too.
	e.eval(`c.logout()`, nil)
	tabB.waitFor("tab B to follow the sign-out", func() bool {
		var s string
		_ = tabB.tryEval(`c.state`, &s)
		return s == "needs_auth"
	})
	if n := e.AS.Count("authorize"); n != 1 {
		t.Errorf("authorization requests = %d; want 1 (tab B never opened a popup)", n)
	}
}

func TestClearStorageSignsEverythingOut(t *testing.T) {
	e := newAuthEnv(t, devserver.AuthConfig{})
	e.signIn(`{}`)
	var got struct {
		State   string `json:"state"`
		Records int    `json:"records"`
		Next    string `json:"next"`
	}
	e.eval(`(async () => {
		await mcp.clearStorage();
		const db = await openDB();
		let records = 0;
		for (const name of ["grants", "clients", "metadata", "pending"]) {
			records += await new Promise((res) => { const r = db.transaction(name).objectStore(name).count(); r.onsuccess = () => res(r.result); });
		}
		db.close();
		const state = c.state;
		const next = await c.connect().then(() => "ok", (e) => e.code);
		return { state, records, next };
	})()`, &got)
	if got.Records != 0 || got.State != "needs_auth" || got.Next != "auth_required" {
		t.Errorf("after clearStorage(): %+v; want 0 records, needs_auth, auth_required", got)
	}
}

// TestLoginWhenWWWAuthenticateIsHidden: most servers do not expose
// WWW-Authenticate through CORS, so the page cannot read the 401's
// challenge; discovery falls through to the well-known URLs (most servers do not
// expose WWW-Authenticate to pages).
func TestLoginWhenWWWAuthenticateIsHidden(t *testing.T) {
	e := newAuthEnv(t, devserver.AuthConfig{HideWWWAuthenticate: true})
	var header string
	e.eval(fmt.Sprintf(`(async () => {
		const r = await fetch(%q, { method: "POST", headers: { "Content-Type": "application/json" }, body: "{}" });
		return r.headers.get("WWW-Authenticate") ?? "hidden";
	})()`, e.MCPURL), &header)
	if header != "hidden" {
		t.Fatalf("the switch did not hide WWW-Authenticate from the page (%q)", header)
	}
	e.signIn(`{}`)
	var sum float64
	e.eval(`(async () => (await c.callTool("add", { a: 1, b: 2 })).structuredContent.sum)()`, &sum)
	if sum != 3 {
		t.Errorf("add after a login with a hidden challenge = %v", sum)
	}
}

func TestCOOPRealCloseStillDeclines(t *testing.T) {
	e := newAuthEnv(t, devserver.AuthConfig{COOP: true})
	popups := e.expectPopup()
	e.startLogin(`{ severedPopupTimeoutMs: 2500 }`)
	id := <-popups
	popup, cancel := chromedp.NewContext(e.ctx, chromedp.WithTargetID(id))
	defer cancel()
	if err := chromedp.Do(popup, chromedp.WaitVisible(chromedp.ID("approve"))); err != nil {
		t.Fatal(err)
	}
	// The person closes the window (the page cannot see it: COOP severed it).
	if _, err := chromedp.CallBrowser(e.ctx, target.CloseTarget, target.CloseTargetParams{TargetID: id}); err != nil {
		t.Fatalf("closing the popup: %v", err)
	}
	r := e.awaitLogin()
	if r.Error == nil || r.Error.Code != "declined" || r.State != "declined" {
		t.Fatalf("closing a COOP-severed popup: %+v; want declined", r)
	}
}

func TestCloseDuringSignInSettles(t *testing.T) {
	e := newAuthEnv(t, devserver.AuthConfig{})
	e.openConsent(`{}`)
	e.eval(`c.close()`, nil)
	r := e.awaitLogin()
	if r.Error == nil || r.Error.Code != "closed" || r.State != "closed" {
		t.Fatalf("close() during authorize(): %+v; want closed", r)
	}
}

// TestSecondAuthorizeJoinsTheRunningSignIn: a second click on Sign in while
// the popup is showing brings that popup forward; both calls end connected.
func TestSecondAuthorizeJoinsTheRunningSignIn(t *testing.T) {
	e := newAuthEnv(t, devserver.AuthConfig{})
	first := e.openConsent(`{}`)
	second := e.expectPopup()
	e.gesture(`void (window.result2 = null, c.authorize().then(() => { result2 = { ok: true, state: c.state }; },
		(e) => { result2 = { error: { code: e.code, message: e.message }, state: c.state }; }))`)
	select {
	case id := <-second:
		t.Fatalf("a second popup opened (%v)", id)
	case <-time.After(time.Second):
	}
	e.consent(first, "approve")
	var got []loginResult
	e.eval(`(async () => {
		for (let i = 0; i < 600 && !(window.result && window.result2); i++) await new Promise((r) => setTimeout(r, 50));
		return [window.result, window.result2];
	})()`, &got)
	for i, r := range got {
		if !r.OK || r.State != "connected" {
			t.Errorf("authorize() #%d = %+v; want connected", i+1, r)
		}
	}
}

// TestPopupClosedBeforeItLoadsDeclinesAtOnce: closed while it still said
// "Connecting…" is a person's close, not a COOP severance.
func TestPopupClosedBeforeItLoadsDeclinesAtOnce(t *testing.T) {
	e := newAuthEnv(t, devserver.AuthConfig{})
	e.eval(`void (() => { const o = window.open; window.open = function (...a) { const w = o.apply(window, a); setTimeout(() => w.close(), 30); return w; }; })()`, nil)
	// With an hour's severed-popup timeout, a decline within awaitLogin's
	// 30 s can only be the person's close, seen after the short grace.
	e.startLogin(`{ severedPopupTimeoutMs: 3600000 }`)
	r := e.awaitLogin()
	if r.Error == nil || r.Error.Code != "declined" {
		t.Fatalf("a popup closed before it loaded: %+v; want declined (not taken for a COOP severance)", r)
	}
}

// TestSlowCOOPServerIsNotTakenForAClose: the server's response time before
// its page shows must not count toward the COOP-severance window.
func TestSlowCOOPServerIsNotTakenForAClose(t *testing.T) {
	e := newAuthEnv(t, devserver.AuthConfig{COOP: true})
	e.setSeverWindow(coopSeverWindow)
	e.cmu.Lock()
	e.authorizeDelay = coopSeverWindow + 500*time.Millisecond
	e.cmu.Unlock()
	console := e.console()
	popup := e.openConsent(`{}`)
	// The person reads the consent page.
	e.awaitSevered(console)
	personTakesLong()
	var mid any
	e.eval(`window.result`, &mid)
	if mid != nil {
		t.Fatalf("the sign-in ended while the person was on the consent page: %v", mid)
	}
	e.consent(popup, "approve")
	if r := e.awaitLogin(); !r.OK || r.State != "connected" {
		t.Fatalf("slow COOP server: %+v; want connected", r)
	}
}

// TestRedirectSignInReachesOtherTabs: a sign-in finished by a full-page
// redirect return (handleCallback, from storage) is announced like any
// other: a tab waiting for that server connects without a popup.
func TestRedirectSignInReachesOtherTabs(t *testing.T) {
	e := newAuthEnv(t, devserver.AuthConfig{})
	tabB := newBareEnv(t, e.env)
	var pre string
	tabB.eval(fmt.Sprintf(`(async () => {
		const m = await import("/mcp.js");
		window.mcp = await m.load();
		window.c = mcp.client(%q);
		return c.connect().then(() => "connected", (e) => e.code);
	})()`, e.MCPURL), &pre)
	if pre != "auth_required" {
		t.Fatalf("tab B before any sign-in: %q", pre)
	}
	// Tab A signs in by leaving for the authorization server and coming back.
	e.eval(fmt.Sprintf(`void (window.c = mcp.client(%q, { authMode: "redirect" }))`, e.MCPURL), nil)
	e.gesture(`void c.authorize()`)
	clickLoaded(t, e.ctx, "approve", "the consent page in the tab")
	e.waitFor("tab A's return to the app page", func() bool {
		var path string
		_ = e.tryEval(`location.pathname + (document.readyState === "complete" ? "" : "…")`, &path)
		return path == "/e2e/blank.html"
	})
	var taken bool
	e.eval(`(async () => {
		const m = await import("/mcp.js");
		window.mcp = await m.load();
		return mcp.handleCallback();
	})()`, &taken)
	if !taken {
		t.Fatal("tab A: handleCallback() did not take the redirect return")
	}
	tabB.waitFor("tab B to connect with tab A's grant", func() bool {
		var s string
		_ = tabB.tryEval(`c.state`, &s)
		return s == "connected"
	})
	if n := e.AS.Count("authorize"); n != 1 {
		t.Errorf("authorization requests = %d; want 1 (tab B never signed in itself)", n)
	}
}
