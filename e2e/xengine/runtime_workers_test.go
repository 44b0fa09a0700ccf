package xengine

import (
	"fmt"
	"net/http"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpwasm/mcpwasm/devkit/devserver"
	"github.com/mcpwasm/mcpwasm/e2e/engine"
)

// sharedTab opens another tab of w's window (its storage, so its
// SharedWorkers) on the blank page and loads mcp.js there as window.mcp
// in the shared-worker runtime.
func (w *world) sharedTab() engine.Window {
	w.t.Helper()
	tab := w.newTab()
	w.navigate(tab, w.PageURL+"/e2e/blank.html")
	w.loadShared(w.t, tab, "mcp")
	return tab
}

// TestSharedRuntimeSignsInAndRefreshesOnce: two tabs of one app use one
// shared-worker runtime: one sign-in serves both (no popup, no sign-in in
// the second), and a token that has come due (the clocks skewed past its
// expiry) is refreshed once for both.
func TestSharedRuntimeSignsInAndRefreshesOnce(t *testing.T) {
	withWorkers(t)
	var skew atomic.Int64
	w := blankWorld(t, devserver.AuthConfig{
		TokenTTL: time.Hour,
		Now:      func() time.Time { return time.Now().Add(time.Duration(skew.Load())) },
	})
	w.loadShared(t, w.win, "mcp")
	if !w.signedIn(w.popupSignIn(`{}`)) {
		return
	}
	tab2 := w.sharedTab()
	ids := make([]string, 2)
	for i, tab := range []engine.Window{w.win, tab2} {
		w.evalIn(tab, `mcp._runtimeId ?? ""`, &ids[i])
	}
	if ids[0] == "" || ids[0] != ids[1] {
		t.Fatalf("runtimes of the two tabs: %q; want one shared", ids)
	}
	w.evalIn(tab2, fmt.Sprintf(`(async () => { window.c = mcp.client(%q); await c.connect(); })()`, w.MCPURL), nil)
	if n := w.AS.Count("authorize"); n != 1 {
		t.Fatalf("authorization requests = %d; want 1 (the second tab shares the sign-in)", n)
	}
	// The runtime's clock and the authorization server's jump past the
	// access token's hour; both tabs call at once.
	const slept = 2 * time.Hour
	skew.Store(int64(slept))
	w.eval(fmt.Sprintf(`mcp._skewClockForTest(%d)`, slept.Milliseconds()), nil)
	before := w.refreshes()
	var wg sync.WaitGroup
	sums := make([]float64, 2)
	for i, tab := range []engine.Window{w.win, tab2} {
		wg.Go(func() {
			sums[i], _, _ = w.callAdd(tab, i, 1)
		})
	}
	wg.Wait()
	if sums[0] != 1 || sums[1] != 2 {
		t.Fatalf("calls from both tabs after the expiry = %v; want [1 2]", sums)
	}
	if n := w.refreshes() - before; n != 1 {
		t.Errorf("refreshes of the grant that came due = %d; want exactly 1", n)
	}
	if n := w.AS.Count("refresh_reuse"); n != 0 {
		t.Errorf("refresh token reuse detected %d times", n)
	}
}

// TestClosedTabReleasesItsSession: a tab closed during a tool call
// releases what it had in the shared runtime: the server sees the call
// cancelled and the session ended (DELETE), while another tab goes on.
func TestClosedTabReleasesItsSession(t *testing.T) {
	withWorkers(t)
	w := blankWorld(t, devserver.AuthConfig{})
	d := newDemoRecorder(t)
	w.loadShared(t, w.win, "mcp")
	tab2 := w.sharedTab()
	w.evalIn(tab2, fmt.Sprintf(`(async () => {
		window.c = mcp.client(%q);
		await c.connect();
		let progressed;
		const seen = new Promise((r) => { progressed = r; });
		c.callTool("slow", { steps: 100, delayMs: 100 }, { onProgress: () => progressed() }).catch(() => {});
		await seen;
	})()`, d.URL), nil)
	if err := tab2.Close(); err != nil {
		t.Fatalf("closing the tab: %v", err)
	}
	w.waitFor("the server to see the call cancelled", func() bool { return d.cancelledTool("slow") })
	w.waitFor("the server to see the session end", func() bool { return d.sessionsEnded() >= 1 })
	var sum float64
	w.eval(fmt.Sprintf(`(async () => {
		const c = mcp.client(%q);
		await c.connect();
		return (await c.callTool("add", { a: 2, b: 3 })).structuredContent.sum;
	})()`, d.URL), &sum)
	if sum != 5 {
		t.Errorf("the other tab's call after the close = %v; want 5", sum)
	}
}

// TestWorkerCrashRejectsPendingAndRecovers: when the worker runtime
// crashes (it reports an error, unlike the silent kill of
// TestKilledWorkerClientsComeBack), every pending call rejects with
// MCPError "closed", the client reports failed, and a new client's call
// runs in a new runtime.
func TestWorkerCrashRejectsPendingAndRecovers(t *testing.T) {
	withWorkers(t)
	w := blankWorld(t, devserver.AuthConfig{})
	for _, mode := range []string{"worker", "shared-worker"} {
		t.Run(mode, func(t *testing.T) {
			name := "m_" + mode[:1]
			if mode == "shared-worker" {
				w.loadShared(t, w.win, name)
			} else {
				w.loadRuntime(w.win, name, mode)
			}
			var got struct {
				Error   jsErr  `json:"error"`
				State   string `json:"state"`
				Sum     int    `json:"sum"`
				Old     string `json:"old"`
				NewID   string `json:"newID"`
				FirstID string `json:"firstID"`
			}
			w.eval(fmt.Sprintf(`(async () => {
				const m = window[%q];
				const firstID = m._runtimeId;
				const c = m.client(%[2]q);
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
				const c2 = m.client(%[2]q);
				await c2.connect();
				const sum = (await c2.callTool("add", { a: 4, b: 5 })).structuredContent.sum;
				return { error, state, sum, old, firstID, newID: m._runtimeId };
			})()`, name, w.OpenURL), &got)
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
	withWorkers(t)
	var build atomic.Int32
	build.Store(1)
	site := os.DirFS(webDir)
	w := newServers(t, devserver.AuthConfig{}, site, func(_ *world, mux *http.ServeMux) {
		mux.HandleFunc("/mcp.wasm", func(rw http.ResponseWriter, r *http.Request) {
			r.Header.Del("If-None-Match") // the build's real validator decides nothing here
			r.Header.Del("If-Modified-Since")
			http.ServeFileFS(etagWriter{rw, fmt.Sprintf(`"build-%d"`, build.Load())}, r, site, "mcp.wasm")
		})
	})
	w.open()
	w.navigate(w.win, w.PageURL+"/e2e/blank.html")
	loadPlain := func(win engine.Window) {
		t.Helper()
		var runtime string
		w.evalIn(win, `(async () => {
			const m = await import("/mcp.js?plain"); // a module of its own: a load() of its own
			window.MCPError ??= m.MCPError;
			window.mcp = await m.load({ runtime: "shared-worker", wasmURL: "/mcp.wasm" });
			return mcp.runtime;
		})()`, &runtime)
		skipUnlessShared(t, runtime)
	}
	newTab := func() engine.Window {
		t.Helper()
		tab := w.newTab()
		w.navigate(tab, w.PageURL+"/e2e/blank.html")
		loadPlain(tab)
		return tab
	}
	loadPlain(w.win)
	tab2 := newTab()
	build.Store(2)
	tab3 := newTab()
	ids := make([]string, 3)
	for i, tab := range []engine.Window{w.win, tab2, tab3} {
		w.evalIn(tab, `mcp._runtimeId ?? ""`, &ids[i])
	}
	if ids[0] == "" || ids[0] != ids[1] {
		t.Errorf("tabs of one build: runtimes %q, %q; want one shared", ids[0], ids[1])
	}
	if ids[2] == ids[0] {
		t.Errorf("a tab of the new build got the old build's runtime %q", ids[2])
	}
	var text string
	w.evalIn(tab3, fmt.Sprintf(`(async () => { const c = mcp.client(%q); await c.connect(); return (await c.callTool("reverse", { text: "abc" })).content[0].text; })()`, w.MCP2URL), &text)
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
