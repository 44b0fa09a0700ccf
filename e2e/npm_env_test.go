package e2e

import (
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"

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

// wasmAssetRE is the name Vite gives the emitted module: a content hash
// between the name and the extension.
var wasmAssetRE = regexp.MustCompile(`^mcp-[A-Za-z0-9_-]{6,}\.wasm$`)

// wasmAsset is the name of the one wasm file under dist/assets, failing the
// test unless there is exactly one, hashed.
func wasmAsset(t *testing.T, dist string) string {
	t.Helper()
	entries, err := os.ReadDir(filepath.Join(dist, "assets"))
	if err != nil {
		t.Fatal(err)
	}
	var found []string
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".wasm") {
			found = append(found, e.Name())
		}
	}
	if len(found) != 1 || !wasmAssetRE.MatchString(found[0]) {
		t.Fatalf("the app's dist/assets has wasm files %q; want one, named with a content hash (mcp-<hash>.wasm)", found)
	}
	return found[0]
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

// countOf is how many recorded items equal want.
func countOf(items []string, want string) int {
	n := 0
	for _, s := range items {
		if s == want {
			n++
		}
	}
	return n
}

// jsonRPCMethods is a copy of the demo servers' JSON-RPC methods so far.
func (e *demoEnv) jsonRPCMethods() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]string(nil), e.methods...)
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

// countPopups counts, from now on, the windows the tab opens.
func (e *demoEnv) countPopups() func() int {
	me := chromedp.FromContext(e.ctx).Target.TargetID
	var mu sync.Mutex
	seen := map[target.ID]bool{}
	_ = chromedp.Listen(e.ctx, func(ev any) {
		if ev, ok := ev.(*target.EventTargetCreated); ok && ev.TargetInfo.OpenerID == me {
			mu.Lock()
			seen[ev.TargetInfo.TargetID] = true
			mu.Unlock()
		}
	})
	return func() int {
		mu.Lock()
		defer mu.Unlock()
		return len(seen)
	}
}
