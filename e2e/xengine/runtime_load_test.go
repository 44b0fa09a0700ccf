package xengine

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mcpwasm/mcpwasm/devkit/devserver"
	"github.com/mcpwasm/mcpwasm/devkit/webbuild"
)

// TestCSPWithoutWorkers: a page whose Content-Security-Policy forbids
// workers (worker-src 'none') still gets a working client in the default
// runtime: load() falls back to the main thread and says so once, at
// info level.
func TestCSPWithoutWorkers(t *testing.T) {
	w := newServers(t, devserver.AuthConfig{}, os.DirFS(webDir), func(w *world, mux *http.ServeMux) {
		mux.HandleFunc("/e2e/no-workers.html", func(rw http.ResponseWriter, r *http.Request) {
			rw.Header().Set("Content-Type", "text/html; charset=utf-8")
			rw.Header().Set("Cache-Control", "no-store")
			rw.Header().Set("Content-Security-Policy", "default-src 'none'; script-src 'self' 'wasm-unsafe-eval'; worker-src 'none'; connect-src 'self' "+strings.TrimSuffix(w.OpenURL, "/mcp"))
			fmt.Fprint(rw, blankPage)
		})
	})
	w.open()
	w.navigate(w.win, w.PageURL+"/e2e/no-workers.html")
	var got struct {
		Runtime string   `json:"runtime"`
		Sum     float64  `json:"sum"`
		Notices []string `json:"notices"`
	}
	w.eval(fmt.Sprintf(`(async () => {
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
	})()`, w.OpenURL), &got)
	if got.Runtime != "main" {
		t.Errorf("runtime = %q under worker-src 'none'; want main", got.Runtime)
	}
	if got.Sum != 42 {
		t.Errorf("add(2, 40) = %v; want 42", got.Sum)
	}
	switch {
	case runtimeMode() == "main" && len(got.Notices) != 0:
		// No worker was asked for: nothing to say.
		t.Errorf("console on the main thread: %q; want nothing", got.Notices)
	case runtimeMode() != "main" && (len(got.Notices) != 1 || !strings.HasPrefix(got.Notices[0], "info: ") ||
		!strings.Contains(got.Notices[0], "main thread") || !strings.Contains(got.Notices[0], "Content-Security-Policy")):
		t.Errorf("console: %q; want one notice that the workers were refused and Go runs on the main thread", got.Notices)
	}
}

// TestPreloadLoadsOnce: preload() at import starts the work and load()
// joins it: the module is requested once, and the client works.
func TestPreloadLoadsOnce(t *testing.T) {
	w := blankWorld(t, devserver.AuthConfig{})
	before := w.snapshot()
	var got struct {
		Runtime string  `json:"runtime"`
		Sum     float64 `json:"sum"`
	}
	w.eval(fmt.Sprintf(`(async () => {
		const m = await import("/mcp.js");
		m.preload();
		await new Promise((r) => setTimeout(r, 50)); // the page's own start-up
		window.MCPError = m.MCPError;
		const mcp = await m.load();
		const c = mcp.client(%q);
		await c.connect();
		const r = await c.callTool("add", { a: 2, b: 40 });
		return { runtime: mcp.runtime, sum: r.structuredContent.sum };
	})()`, w.OpenURL), &got)
	if got.Sum != 42 {
		t.Errorf("add(2, 40) = %v; want 42", got.Sum)
	}
	if n := w.diff(before)["wasm"]; n != 1 {
		t.Errorf("module downloads after preload() and load() in runtime %q: %d; want 1", got.Runtime, n)
	}
}

// TestRepeatVisitCompilesTheKeptModule: the module's decoded bytes are
// kept in the Cache API under its content-hashed name, in place of another
// build's, without a second download, and a repeat visit compiles them
// without downloading the module, even from a server whose answer the
// HTTP cache may not keep (no-store here). A kept copy that does not
// compile (cut short) does not stop a visit: the module is downloaded
// again and kept whole.
func TestRepeatVisitCompilesTheKeptModule(t *testing.T) {
	name := hashedModule(t)
	body, err := os.ReadFile(filepath.Join(webDir, name))
	if err != nil {
		t.Fatal(err)
	}
	w := newServers(t, devserver.AuthConfig{}, os.DirFS(webDir), func(w *world, mux *http.ServeMux) {
		mux.Handle("/"+name, w.counting(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
			rw.Header().Set("Content-Type", "application/wasm")
			rw.Header().Set("Cache-Control", "no-store")
			_, _ = rw.Write(body)
		})))
	})
	w.open()
	w.navigate(w.win, w.PageURL+"/e2e/blank.html")
	// What earlier visits left: another build's module, and a copy of
	// this build's cut short after the header.
	w.eval(fmt.Sprintf(`(async () => {
		const c = await caches.open("mcpwasm-module");
		const wasm = (bytes) => new Response(new Uint8Array(bytes), { headers: { "Content-Type": "application/wasm" } });
		await c.put("/mcp-0123456789abcdef.wasm", wasm([0, 97, 115, 109, 1, 0, 0, 0]));
		await c.put("/%s", wasm([0, 97, 115, 109, 1, 0, 0, 0, 1]));
	})()`, name), nil)
	visit := func(when string) {
		t.Helper()
		var sum float64
		w.eval(fmt.Sprintf(`(async () => {
			const m = await import("/mcp.js");
			window.MCPError = m.MCPError;
			const mcp = await m.load();
			const c = mcp.client(%q);
			await c.connect();
			return (await c.callTool("add", { a: 2, b: 40 })).structuredContent.sum;
		})()`, w.OpenURL), &sum)
		if sum != 42 {
			t.Fatalf("%s: add(2, 40) = %v; want 42", when, sum)
		}
	}
	before0 := w.snapshot()
	visit("the first visit, over a kept copy cut short")
	downloads := w.diff(before0)["wasm"]
	var kept struct {
		Keys []string `json:"keys"`
		Size int      `json:"size"`
	}
	w.waitFor("the module kept whole, and only it", func() bool {
		w.eval(fmt.Sprintf(`(async () => {
			const c = await caches.open("mcpwasm-module");
			const keys = (await c.keys()).map((r) => new URL(r.url).pathname.slice(1));
			const hit = await c.match("/%s");
			return { keys, size: hit ? (await hit.arrayBuffer()).byteLength : 0 };
		})()`, name), &kept)
		return slices.Equal(kept.Keys, []string{name}) && kept.Size == len(body)
	})
	if n := w.diff(before0)["wasm"] - downloads; n != 0 {
		t.Errorf("keeping the module asked the server for it %d more time(s); want none (the copy is the response compiled)", n)
	}
	// Whether this browser keeps Cache API records across documents: a
	// record written before the navigation is read after it.
	w.eval(`(async () => { await (await caches.open("e2e-probe")).put("/e2e/probe", new Response("kept")); })()`, nil)
	before := w.snapshot()
	w.navigate(w.win, w.PageURL+"/e2e/blank.html")
	var probe string
	w.eval(`(async () => (await (await caches.open("e2e-probe")).match("/e2e/probe"))?.text() ?? "")()`, &probe)
	visit("the repeat visit")
	if probe != "kept" {
		// WebKitGTK under WebDriver: its automation session keeps no
		// Cache API record across a navigation, ours or any other.
		t.Logf("%s kept no Cache API record across the navigation (a probe record written before it was gone after it), so the repeat visit downloaded the module again (%d time(s)) and worked; the check that it downloads nothing runs in the browsers that keep them", browser.Name(), w.diff(before)["wasm"])
		return
	}
	if n := w.diff(before)["wasm"]; n != 0 {
		t.Errorf("the repeat visit downloaded the module %d time(s); want none: the kept copy compiles", n)
	}
}

// hashedModule is the name of the content-hashed module in webDir.
func hashedModule(t *testing.T) string {
	t.Helper()
	entries, err := os.ReadDir(webDir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if webbuild.IsHashed(e.Name()) && strings.HasSuffix(e.Name(), ".wasm") {
			return e.Name()
		}
	}
	t.Fatalf("no mcp-<hash>.wasm in %s", webDir)
	return ""
}
