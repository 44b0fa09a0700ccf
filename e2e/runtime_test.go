package e2e

import (
	"fmt"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/mcpwasm/mcpwasm/demo/authserver"
	"github.com/mcpwasm/mcpwasm/devkit/devserver"
)

// The tests of load()'s runtime option: they choose their runtime
// themselves, so the suite's main-thread pass skips those that need a
// worker (they run in the auto pass).

func skipInMainPass(t *testing.T) {
	t.Helper()
	if runtimeMode() == "main" {
		t.Skip("chooses worker runtimes itself; runs in the auto pass")
	}
}

// loadIn loads a separate instance of mcp.js (its own module URL) with
// runtime into window[name].
func loadIn(e *env, name, runtime string) {
	e.t.Helper()
	e.eval(fmt.Sprintf(`(async () => {
		const m = await import("/mcp.js?%s");
		window.MCPError ??= m.MCPError;
		window[%q] = await m.load({ runtime: %q });
		return window[%q].runtime;
	})()`, name, name, runtime, name), nil)
}

// TestSyncErrorsMatchAcrossRuntimes: client() and catalog.add() throw the
// same invalid_argument errors, synchronously, whether Go runs on the main
// thread or in a worker, and they are Go's: the same input given to Go in
// wasm directly (the main thread's operations) is refused with the same
// sentence.
func TestSyncErrorsMatchAcrossRuntimes(t *testing.T) {
	e := newEnv(t)
	loadIn(e, "onMain", "main")
	loadIn(e, "inWorker", "worker")
	bad := []string{
		`["not a url"]`,
		`["ftp://example.com/mcp"]`,
		`["http:///mcp"]`,
		`[URL, 5]`,
		`[URL, { colour: "blue" }]`,
		`[URL, { scopes: "a b" }]`,
		`[URL, { scopes: [1] }]`,
		`[URL, { headers: { "X-A": 1 } }]`,
		`[URL, { headers: { "bad name": "v" } }]`,
		`[URL, { headers: { "X-A": "caf\u00e9" } }]`,
		`[URL, { headers: { "Mcp-Session-Id": "x" } }]`,
		`[URL, { storage: "disk" }]`,
		`[URL, { authMode: "tab" }]`,
		`[URL, { transport: "ws" }]`,
		`[URL, { authTimeoutMs: 0 }]`,
		`[URL, { severedPopupTimeoutMs: -1 }]`,
		`[URL, { dpop: "yes" }]`,
		`[URL, { interactive: "yes" }]`,
		`[URL, { authMode: "redirect", storage: "memory" }]`,
		`[URL, { clientSecret: "s" }]`,
		`[URL, { grant: "client_credentials" }]`,
		`[URL, { grant: "workload_identity" }]`,
		`[URL, { grant: "password" }]`,
		`[URL, { idpIssuer: "https://idp.example" }]`,
		`[URL, { identityAssertion: async () => "t", accessToken: async () => "t" }]`,
		`[URL, { identityAssertion: async () => "t" }]`,
		`[URL, { identityAssertion: async () => "t", idpIssuer: "https://idp.example" }]`,
		`[URL, { identityAssertion: async () => "t", idpIssuer: "https://idp.example", idpClientId: "a" }]`,
		`[URL, { identityAssertion: async () => "t", idpIssuer: "https://idp.example", idpClientId: "a", clientId: "b", clientMetadataUrl: "https://x.example/m" }]`,
		`[URL, { accessToken: "t" }]`,
		`[{ url: URL }]`,
	}
	var got []struct {
		Case   string `json:"case"`
		Main   string `json:"main"`
		Worker string `json:"worker"`
		Go     string `json:"go"`
	}
	e.eval(fmt.Sprintf(`(() => {
		const URL = %q;
		const cases = [%s];
		const attempt = (m, args) => {
			try { m.client(...args); return "no error"; }
			catch (e) { return e.code + ": " + e.message; }
		};
		// What mcp.js sends Go: functions as true, the redirect URI resolved.
		const RU = new globalThis.URL("/oauth/callback.html", location.href).href;
		const sent = (o) => JSON.parse(JSON.stringify(o, (k, v) => typeof v === "function" ? true : v));
		let n = 0;
		const direct = (args) => {
			if (typeof args[0] !== "string" || (args[1] !== undefined && (typeof args[1] !== "object" || args[1] === null))) return "page only";
			try { onMain._invokeSync("client.new", { id: "direct-" + ++n, url: args[0], options: { redirectUri: RU, ...sent(args[1] ?? {}) } }); return "no error"; }
			catch (e) { return e.code + ": " + e.message; }
		};
		return cases.map((args, i) => ({ case: String(i), main: attempt(onMain, args), worker: attempt(inWorker, args), go: direct(args) }));
	})()`, e.MCPURL, strings.Join(bad, ",\n")), &got)
	if len(got) != len(bad) {
		t.Fatalf("got %d results for %d cases", len(got), len(bad))
	}
	for i, g := range got {
		if !strings.HasPrefix(g.Main, "invalid_argument: ") {
			t.Errorf("%s on the main thread: %s; want invalid_argument", bad[i], g.Main)
		}
		if g.Main != g.Worker || (g.Go != "page only" && g.Go != g.Main) {
			t.Errorf("%s:\n  main:   %s\n  worker: %s\n  go:     %s", bad[i], g.Main, g.Worker, g.Go)
		}
	}

	// catalog.add(id, config) is synchronous too: a catalog holding "one"
	// (maxServers 2) in each runtime, and the same bad entries added.
	badAdd := []string{
		`["local", { command: "npx", args: ["-y", "x"] }]`,
		`["local", { type: "stdio", url: URL }]`,
		`["t", { url: URL, type: "ws" }]`,
		`["t", { url: URL, transport: 5 }]`,
		`["t", { url: URL, disabled: "yes" }]`,
		`["t", { url: URL, enabled: 1 }]`,
		`["t", { url: URL, title: 5 }]`,
		`["t", { url: URL, allowTools: "a*" }]`,
		`["t", { url: URL, denyTools: ["[a-"] }]`,
		`["t", { url: URL, allowTools: ["x\\"] }]`,
		`["t", {}]`,
		`["t", { url: "ftp://example.com/mcp" }]`,
		`["t", { serverUrl: "not a url" }]`,
		`["one", { url: URL }]`,
		`["t", { url: URL, storage: "disk" }]`,
		`["t", { url: URL, colour: "blue" }]`,
		`["t", { url: URL, headers: { "Mcp-Session-Id": "x" } }]`,
	}
	got = nil
	e.eval(fmt.Sprintf(`(() => {
		const URL = %q;
		const cases = [%s];
		const cats = [onMain, inWorker].map((m) => m.catalog({ servers: { one: { url: URL } }, maxServers: 2 }));
		const attempt = (c, args) => {
			try { c.add(...args); return "no error"; }
			catch (e) { return e.code + ": " + e.message; }
		};
		const RU = new globalThis.URL("/oauth/callback.html", location.href).href;
		onMain._invokeSync("catalog.new", { id: "direct", options: { servers: { one: { url: URL, redirectUri: RU } }, maxServers: 2 } });
		const direct = (args) => {
			try { onMain._invokeSync("catalog.add", { id: "direct", server: args[0], config: { redirectUri: RU, ...args[1] } }); return "no error"; }
			catch (e) { return e.code + ": " + e.message; }
		};
		const out = cases.map((args, i) => ({ case: String(i), main: attempt(cats[0], args), worker: attempt(cats[1], args), go: direct(args) }));
		// Full: the third server is one too many.
		for (const c of cats) c.add("two", { url: URL });
		direct(["two", { url: URL }]);
		out.push({ case: "full", main: attempt(cats[0], ["three", { url: URL }]), worker: attempt(cats[1], ["three", { url: URL }]), go: direct(["three", { url: URL }]) });
		return out;
	})()`, e.MCPURL, strings.Join(badAdd, ",\n")), &got)
	badAdd = append(badAdd, "a third server (maxServers 2)")
	if len(got) != len(badAdd) {
		t.Fatalf("got %d results for %d catalog.add cases", len(got), len(badAdd))
	}
	for i, g := range got {
		if !strings.HasPrefix(g.Main, "invalid_argument: ") {
			t.Errorf("catalog.add%s on the main thread: %s; want invalid_argument", badAdd[i], g.Main)
		}
		if g.Main != g.Worker || g.Go != g.Main {
			t.Errorf("catalog.add%s:\n  main:   %s\n  worker: %s\n  go:     %s", badAdd[i], g.Main, g.Worker, g.Go)
		}
	}
}

// TestSharedRuntimeSignsInAndRefreshesOnce: two tabs of one app use one
// runtime: one sign-in serves both (no popup, no broadcast needed in the
// second), and a due token is refreshed once for both.
func TestSharedRuntimeSignsInAndRefreshesOnce(t *testing.T) {
	skipInMainPass(t)
	e := newAuthEnv(t, devserver.AuthConfig{TokenTTL: refreshTTL})
	loadIn(e.env, "mcp", "shared-worker")
	e.signIn(`{}`)
	tab2 := newBareEnv(t, e.env)
	loadIn(tab2, "mcp", "shared-worker")
	var ids []string
	for _, tab := range []*env{e.env, tab2} {
		var id string
		tab.eval(`mcp._runtimeId`, &id)
		ids = append(ids, id)
	}
	if ids[0] == "" || ids[0] != ids[1] {
		t.Fatalf("runtimes of the two tabs: %q; want one shared", ids)
	}
	tab2.eval(fmt.Sprintf(`(async () => { window.c = mcp.client(%q); await c.connect(); })()`, e.MCPURL), nil)
	if n := e.AS.Count("authorize"); n != 1 {
		t.Fatalf("authorization requests = %d; want 1 (the second tab shares the sign-in)", n)
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
	first := 0
	for _, ev := range e.AS.Events() {
		if ev.Kind == authserver.EventTokenRefresh && ev.Err == "" && strings.HasSuffix(ev.Detail, fmt.Sprintf(" rotation=%d", rotation+1)) {
			first++
		}
	}
	if first != 1 {
		t.Errorf("refreshes of the grant due (rotation %d) = %d; want exactly 1", rotation, first)
	}
	if n := e.AS.Count("refresh_reuse"); n != 0 {
		t.Errorf("refresh token reuse detected %d times", n)
	}
}

// TestClosedTabReleasesItsSession: a tab closed during a tool call
// releases what it had in the shared runtime: the server sees the call
// cancelled and the session ended (DELETE), while another tab goes on.
func TestClosedTabReleasesItsSession(t *testing.T) {
	skipInMainPass(t)
	var deletes atomic.Int32
	e := newEnvWith(t, func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method == http.MethodDelete {
				deletes.Add(1)
			}
			h.ServeHTTP(w, r)
		})
	})
	loadIn(e, "mcp", "shared-worker")
	tab2 := newBareEnv(t, e)
	loadIn(tab2, "mcp", "shared-worker")
	tab2.eval(fmt.Sprintf(`(async () => {
		window.c = mcp.client(%q);
		await c.connect();
		window.progressed = false;
		c.callTool("slow", { steps: 100, delayMs: 100 }, { onProgress: () => { progressed = true; } }).catch(() => {});
	})()`, e.MCPURL), nil)
	tab2.waitFor("the slow call to run", func() bool {
		var p bool
		_ = tab2.tryEval(`progressed`, &p)
		return p
	})
	if err := chromedp.Cancel(tab2.tab); err != nil {
		t.Fatalf("closing the tab: %v", err)
	}
	e.waitFor("the server to see the call cancelled", func() bool { return slices.Contains(e.cancelledTools(), "slow") })
	e.waitFor("the server to see the session end", func() bool { return deletes.Load() >= 1 })
	var sum float64
	e.eval(fmt.Sprintf(`(async () => {
		const c = mcp.client(%q);
		await c.connect();
		return (await c.callTool("add", { a: 2, b: 3 })).structuredContent.sum;
	})()`, e.MCPURL), &sum)
	if sum != 5 {
		t.Errorf("the other tab's call after the close = %v; want 5", sum)
	}
}

// TestWorkerCrashRejectsPendingAndRecovers: when the worker runtime ends,
// every pending call rejects with MCPError "closed", the client reports
// failed, and the next call runs in a new runtime.
func TestWorkerCrashRejectsPendingAndRecovers(t *testing.T) {
	skipInMainPass(t)
	for _, mode := range []string{"worker", "shared-worker"} {
		t.Run(mode, func(t *testing.T) {
			e := newEnv(t)
			loadIn(e, "m", mode)
			var got struct {
				Error   jsErr  `json:"error"`
				State   string `json:"state"`
				Sum     int    `json:"sum"`
				Old     string `json:"old"`
				NewID   string `json:"newID"`
				FirstID string `json:"firstID"`
			}
			e.eval(fmt.Sprintf(`(async () => {
				const firstID = m._runtimeId;
				const c = m.client(%q);
				await c.connect();
				let state = "";
				c.addEventListener("statechange", (ev) => { state = ev.detail.state; });
				let progressed;
				const seen = new Promise((r) => { progressed = r; });
				const pending = c.callTool("slow", { steps: 100, delayMs: 100 }, { onProgress: () => progressed() });
				await seen;
				m._crashForTest();
				const error = await pending.then(() => ({ code: "none" }), (e) => ({ name: e.name, code: e.code, message: e.message }));
				const old = await c.ping().then(() => "ok", (e) => e.code);
				const c2 = m.client(%q);
				await c2.connect();
				const sum = (await c2.callTool("add", { a: 4, b: 5 })).structuredContent.sum;
				return { error, state, sum, old, firstID, newID: m._runtimeId };
			})()`, e.MCPURL, e.MCPURL), &got)
			if got.Error.Code != "closed" || got.Error.Name != "MCPError" {
				t.Errorf("the pending call rejected with %+v; want MCPError closed", got.Error)
			}
			if got.State != "failed" {
				t.Errorf("client state after the crash = %q; want failed", got.State)
			}
			if got.Old != "closed" {
				t.Errorf("a call on the old client = %q; want closed", got.Old)
			}
			if got.Sum != 9 {
				t.Errorf("a new client's call after the crash = %d; want 9", got.Sum)
			}
			if got.NewID == "" || got.NewID == got.FirstID {
				t.Errorf("runtime after the crash = %q (before: %q); want a new one", got.NewID, got.FirstID)
			}
		})
	}
}

// TestNewBuildGetsANewRuntime: a tab of a newer build of mcp.wasm at a
// URL the host chose (the plain name, told apart by its ETag) never uses
// the runtime an older build's tab started; tabs of the same build share
// one. (The default, content-hashed URL is a new URL for a new build.)
func TestNewBuildGetsANewRuntime(t *testing.T) {
	skipInMainPass(t)
	var build atomic.Int32
	build.Store(1)
	e := newAuthEnvWith(t, devserver.AuthConfig{}, func(_ *authEnv, name string, h http.Handler) http.Handler {
		if name != "page" {
			return h
		}
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/mcp.wasm" {
				w = etagWriter{w, fmt.Sprintf(`"build-%d"`, build.Load())}
				r.Header.Del("If-None-Match") // the build's real validator decides nothing here
				r.Header.Del("If-Modified-Since")
			}
			h.ServeHTTP(w, r)
		})
	})
	loadPlain := func(e *env) {
		t.Helper()
		e.eval(`(async () => {
			const m = await import("/mcp.js?plain"); // a module of its own: a load() of its own
			window.MCPError ??= m.MCPError;
			window.mcp = await m.load({ runtime: "shared-worker", wasmURL: "/mcp.wasm" });
			return mcp.runtime;
		})()`, nil)
	}
	loadPlain(e.env)
	tab2 := newBareEnv(t, e.env)
	loadPlain(tab2)
	build.Store(2)
	tab3 := newBareEnv(t, e.env)
	loadPlain(tab3)
	ids := make([]string, 3)
	for i, tab := range []*env{e.env, tab2, tab3} {
		tab.eval(`mcp._runtimeId`, &ids[i])
	}
	if ids[0] == "" || ids[0] != ids[1] {
		t.Errorf("tabs of one build: runtimes %q, %q; want one shared", ids[0], ids[1])
	}
	if ids[2] == ids[0] {
		t.Errorf("a tab of the new build got the old build's runtime %q", ids[2])
	}
	var text string
	tab3.eval(fmt.Sprintf(`(async () => { const c = mcp.client(%q); await c.connect(); return (await c.callTool("reverse", { text: "abc" })).content[0].text; })()`, e.MCP2URL), &text)
	if text != "cba" {
		t.Errorf("a call in the new build's runtime = %q; want cba", text)
	}
}

// etagWriter replaces the ETag of a response.
type etagWriter struct {
	http.ResponseWriter
	etag string
}

func (w etagWriter) WriteHeader(code int) {
	w.Header().Set("ETag", w.etag)
	w.ResponseWriter.WriteHeader(code)
}

func (w etagWriter) Write(b []byte) (int, error) {
	if w.Header().Get("ETag") != w.etag {
		w.Header().Set("ETag", w.etag)
	}
	return w.ResponseWriter.Write(b)
}

// TestCSPWithoutWorkers: a page whose Content-Security-Policy forbids
// workers (worker-src 'none') still gets a working client in the default
// runtime: load() falls back to the main thread and says so once.
func TestCSPWithoutWorkers(t *testing.T) {
	e := newEnv(t)
	if err := chromedp.Do(e.ctx, chromedp.Navigate(e.PageURL+"/e2e/no-workers.html")); err != nil {
		t.Fatalf("navigate: %v", err)
	}
	var got struct {
		Runtime string   `json:"runtime"`
		Sum     float64  `json:"sum"`
		Notices []string `json:"notices"`
	}
	e.eval(fmt.Sprintf(`(async () => {
		const notices = [];
		for (const level of ["debug", "log", "info", "warn", "error"]) {
			const orig = console[level];
			console[level] = (...a) => { notices.push(level + ": " + a.join(" ")); orig.apply(console, a); };
		}
		const m = await import("/mcp.js");
		window.MCPError = m.MCPError;
		const mcp = await m.load();
		const c = mcp.client(%q);
		await c.connect();
		const r = await c.callTool("add", { a: 2, b: 40 });
		return { runtime: mcp.runtime, sum: r.structuredContent.sum, notices };
	})()`, e.MCPURL), &got)
	if got.Runtime != "main" {
		t.Errorf("runtime = %q under worker-src 'none'; want main", got.Runtime)
	}
	if got.Sum != 42 {
		t.Errorf("add(2, 40) = %v; want 42", got.Sum)
	}
	want := "main thread"
	if runtimeMode() == "main" {
		want = "" // no worker was asked for: nothing to say
	}
	switch {
	case want == "" && len(got.Notices) != 0:
		t.Errorf("console on the main thread: %q; want nothing", got.Notices)
	case want != "" && (len(got.Notices) != 1 || !strings.HasPrefix(got.Notices[0], "info: ") || !strings.Contains(got.Notices[0], want) || !strings.Contains(got.Notices[0], "Content-Security-Policy")):
		t.Errorf("console: %q; want one notice that the workers were refused and Go runs on the main thread", got.Notices)
	}
}

// TestPreloadLoadsOnce: preload() at import starts the work and load()
// joins it: mcp.wasm is requested once, and the client works.
func TestPreloadLoadsOnce(t *testing.T) {
	e := newSiteEnv(t, false, os.DirFS(webDir), nil)
	var got struct {
		Runtime string  `json:"runtime"`
		Sum     float64 `json:"sum"`
	}
	e.eval(fmt.Sprintf(`(async () => {
		const m = await import("/mcp.js");
		m.preload();
		await new Promise((r) => setTimeout(r, 50)); // the page's own start-up
		window.MCPError = m.MCPError;
		const mcp = await m.load();
		const c = mcp.client(%q);
		await c.connect();
		const r = await c.callTool("add", { a: 2, b: 40 });
		return { runtime: mcp.runtime, sum: r.structuredContent.sum };
	})()`, e.MCPURL), &got)
	if got.Sum != 42 {
		t.Errorf("add(2, 40) = %v; want 42", got.Sum)
	}
	var gets []string
	wasm := builtWasm(t)
	for _, r := range e.requestLog() {
		if strings.HasSuffix(r, " page "+wasm) {
			gets = append(gets, r)
		}
	}
	if n := slices.Index(gets, "GET page "+wasm); n < 0 || slices.Contains(gets[n+1:], "GET page "+wasm) {
		t.Errorf("mcp.wasm requests after preload() and load() in runtime %q: %q; want one GET", got.Runtime, gets)
	}
}
