package e2e

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpwasm/mcpwasm/devkit/npmapp"
)

// npmBuild is the npm package as a user gets it and the example app built
// from it (production and development builds): made once per test
// binary, by the first test that needs it.
type npmBuild = npmapp.Build

var (
	npmOnce sync.Once
	npmOut  *npmBuild
	npmErr  string
)

// buildNpm packs the package from this tree's web/ and the wasm module of
// the e2e build and builds examples/react-vite with it (npmapp.Make). It
// fails the test when a step fails; later tests fail with the same
// message.
func buildNpm(t *testing.T) *npmBuild {
	t.Helper()
	npmOnce.Do(func() {
		tmp, err := os.MkdirTemp("", "e2e-npm-")
		if err == nil {
			npmOut, err = npmapp.Make(repoRoot, webDir, tmp, true)
		}
		if err != nil {
			npmErr = err.Error()
		}
	})
	if npmOut == nil {
		t.Fatal(npmErr)
	}
	return npmOut
}

// newAppEnv serves a built example app (dist) as the page origin, with the
// SPA fallback every single-page app host has: the app's routes
// (/oauth/callback) answer with its index.html. The page is served under
// the strict Content-Security-Policy of docs/JSAPI.md (cspFor).
func newAppEnv(t *testing.T, auth bool, dist string) *demoEnv {
	t.Helper()
	index, err := os.ReadFile(filepath.Join(dist, "index.html"))
	if err != nil {
		t.Fatal(err)
	}
	var e *demoEnv
	serveIndex := func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Cache-Control", "no-cache")
		w.Header().Set("Content-Security-Policy", cspFor(e))
		w.Write(index)
	}
	e = newSiteEnv(t, auth, os.DirFS(dist), func(mux *http.ServeMux) {
		mux.HandleFunc("GET /{$}", serveIndex)
		mux.HandleFunc("GET /oauth/callback", serveIndex)
	})
	return e
}

// cspFor is the smallest policy docs/JSAPI.md documents, for the demo
// servers and the authorization server of e.
func cspFor(e *demoEnv) string {
	return "default-src 'none'; script-src 'self' 'wasm-unsafe-eval'; style-src 'self'; " +
		"connect-src 'self' " + e.MCPBase + " " + origin(e.MCP2URL) + " " + e.ASURL
}

// waitApp polls a JavaScript condition on the example app until it is
// true, for at most 60 s; then it fails the test with what the page shows
// and the last requests of its origins.
func waitApp(e *demoEnv, what, cond string) {
	e.t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		var ok bool
		if e.tryEval(`Boolean(`+cond+`)`, &ok) == nil && ok {
			return
		}
		if time.Now().After(deadline) {
			var shown string
			_ = e.tryEval(`location.href + "\n" + document.body.innerText`, &shown)
			reqs := e.requestLog()
			if len(reqs) > 20 {
				reqs = reqs[len(reqs)-20:]
			}
			e.emu.Lock()
			errs := strings.Join(e.pageErrs, "\n")
			e.emu.Unlock()
			e.t.Fatalf("timed out waiting for %s; the page shows:\n%s\nlast requests:\n%s\npage errors:\n%s", what, shown, strings.Join(reqs, "\n"), errs)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// origin is the scheme://host:port of a URL.
func origin(u string) string {
	if i := strings.Index(u[len("http://"):], "/"); i >= 0 {
		return u[:len("http://")+i]
	}
	return u
}

// checkAppErrors fails the test for the page's uncaught exceptions,
// console errors and Content-Security-Policy violations.
func checkAppErrors(e *demoEnv) {
	e.t.Helper()
	if got := e.js(`document.body.dataset.cspViolations || "0"`); got != "0" {
		e.t.Errorf("%s Content-Security-Policy violations on the page", got)
	}
	time.Sleep(50 * time.Millisecond) // let late console events arrive
	e.emu.Lock()
	defer e.emu.Unlock()
	for _, msg := range e.pageErrs {
		e.t.Errorf("page error: %s", msg)
	}
}
