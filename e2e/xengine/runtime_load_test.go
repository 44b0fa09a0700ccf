package xengine

import (
	"fmt"
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/mcpwasm/mcpwasm/devkit/devserver"
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
