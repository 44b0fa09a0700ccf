// Package e2e drives the real product in headless Chromium: the wasm module
// built from this tree, web/mcp.js, the dev server's handlers and the demo
// MCP server, each on its own loopback origin.
package e2e

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/mcpwasm/mcpwasm/demo"
	"github.com/mcpwasm/mcpwasm/devkit/devserver"
	"github.com/mcpwasm/mcpwasm/devkit/headless"
	"github.com/mcpwasm/mcpwasm/devkit/webbuild"
	"github.com/mcpwasm/mcpwasm/devkit/webserve"
)

var (
	browserCtx context.Context // one browser for the package; a tab per test
	webDir     string          // built copy of web/
	repoRoot   string
)

// blankPage is a same-origin page for API tests: no demo UI in the way.
const blankPage = `<!doctype html><meta charset="utf-8"><title>e2e</title><body></body>`

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	// The parallel cases (the hostile suite) mostly wait on the browser
	// and the loopback servers: run four at a time unless -parallel says
	// otherwise, so the suite keeps to its time on a 2-core machine.
	flag.Parse()
	explicit := false
	flag.Visit(func(f *flag.Flag) { explicit = explicit || f.Name == "test.parallel" })
	if !explicit {
		_ = flag.Set("test.parallel", "4")
	}
	_, file, _, _ := runtime.Caller(0)
	repoRoot = filepath.Dir(filepath.Dir(file))
	// MCPWASM_E2E_BUILD=dir: build the web bundle into dir and stop;
	// MCPWASM_E2E_WEB=dir: test that bundle instead of building one (so
	// the suite's passes in each runtime mode share one build; see
	// scripts/e2e.sh).
	if dir := os.Getenv("MCPWASM_E2E_BUILD"); dir != "" {
		if err := buildWebInto(dir); err != nil {
			fmt.Fprintln(os.Stderr, "e2e: building the web bundle:", err)
			return 1
		}
		return 0
	}
	if dir := os.Getenv("MCPWASM_E2E_WEB"); dir != "" {
		webDir = dir
	} else {
		var err error
		webDir, err = buildWeb()
		if err != nil {
			fmt.Fprintln(os.Stderr, "e2e: building the web bundle:", err)
			return 1
		}
		defer os.RemoveAll(webDir)
	}

	b, err := headless.Start(context.Background())
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e: the tests cannot run:", err)
		return 1
	}
	defer b.Close()
	browserCtx = b.Ctx
	return m.Run()
}

// buildWeb builds web/ with this tree's wasm module into a temporary
// directory, gzip-precompressed as make build does.
func buildWeb() (string, error) {
	dir, err := os.MkdirTemp("", "e2e-web-")
	if err != nil {
		return "", err
	}
	if err := buildWebInto(dir); err != nil {
		os.RemoveAll(dir)
		return "", err
	}
	return dir, nil
}

// buildWebInto builds the web bundle into dir (an empty directory).
func buildWebInto(dir string) error {
	return webbuild.Build(repoRoot, dir, "-trimpath", "-ldflags=-s -w -X main.version=e2e")
}

// env is one test's world: the page origin and a demo MCP server origin.
type env struct {
	t        *testing.T
	ctx      context.Context // the test's tab (with the test's time limit)
	tab      context.Context // the tab, without the limit (parent of sibling tabs)
	PageURL  string          // origin serving web/
	MCPURL   string          // demo server Streamable HTTP endpoint
	MCPBase  string          // demo server origin
	mu       sync.Mutex
	canceled []string
	methods  []string
}

// newEnv starts the page server and a demo MCP server on their own loopback
// origins, opens a tab on the blank page and loads mcp.js into it as
// window.mcp (the loaded module) and window.MCPError.
func newEnv(t *testing.T) *env {
	t.Helper()
	return newEnvWith(t, nil)
}

// newEnvWith is newEnv with the demo MCP server's handler wrapped by wrap
// when it is not nil.
func newEnvWith(t *testing.T, wrap func(http.Handler) http.Handler) *env {
	t.Helper()
	e := &env{t: t}
	mux := http.NewServeMux()
	mux.HandleFunc("/e2e/blank.html", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, blankPage)
	})
	// The blank page under a Content-Security-Policy that allows the
	// module and the demo server but no worker (TestCSPWithoutWorkers).
	mux.HandleFunc("/e2e/no-workers.html", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Content-Security-Policy", "default-src 'none'; script-src 'self' 'wasm-unsafe-eval'; connect-src 'self' "+e.MCPBase+"; worker-src 'none'")
		fmt.Fprint(w, blankPage)
	})
	mux.Handle("/", webserve.Handler(devserver.Site(os.DirFS(webDir))))
	page := httptest.NewServer(mux)
	t.Cleanup(page.Close)
	e.PageURL = page.URL

	if wrap == nil {
		wrap = func(h http.Handler) http.Handler { return h }
	}
	mcpSrv := httptest.NewServer(wrap(demo.Handler(demo.Options{
		OnCancelled: func(tool string) {
			e.mu.Lock()
			defer e.mu.Unlock()
			e.canceled = append(e.canceled, tool)
		},
		OnRequest: func(method string) {
			e.mu.Lock()
			defer e.mu.Unlock()
			e.methods = append(e.methods, method)
		},
	})))
	t.Cleanup(mcpSrv.Close)
	e.MCPBase = mcpSrv.URL
	e.MCPURL = mcpSrv.URL + demo.StreamablePath

	e.openTab()
	e.eval(`(async () => {
		const m = await import("/mcp.js");
		window.MCPError = m.MCPError;
		window.loadMCP = m.load;
		window.mcp = await m.load();
	})()`, nil)
	return e
}

// newBareEnv opens a new tab on the blank page of sibling's page server,
// in sibling's browser context (so the two tabs share storage, locks and
// broadcasts, as two tabs of one browser do), without loading mcp.js.
func newBareEnv(t *testing.T, sibling *env) *env {
	t.Helper()
	e := &env{t: t, PageURL: sibling.PageURL}
	e.openTabIn(sibling.tab)
	return e
}

// openTab opens the test's tab on the blank page, in a browser context of
// its own: nothing a test stored can reach another test whose page server
// got the same port later.
func (e *env) openTab() {
	e.t.Helper()
	e.openTabIn(browserCtx, chromedp.WithNewBrowserContext())
}

// openTabIn opens the test's tab as a child of parent: in parent's browser
// context unless opts make a new one.
func (e *env) openTabIn(parent context.Context, opts ...chromedp.ContextOption) {
	e.t.Helper()
	tab, cancel := chromedp.NewContext(parent, opts...)
	e.t.Cleanup(cancel)
	e.tab = tab
	ctx, cancelT := context.WithTimeout(tab, 2*time.Minute)
	e.t.Cleanup(cancelT)
	e.ctx = ctx
	if mode := runtimeMode(); mode != "" {
		// Every page of the tab loads mcp.js with this runtime by default.
		src := fmt.Sprintf("globalThis.__mcpwasmRuntime = %q;", mode)
		if err := chromedp.Do(ctx, chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
			_, err := cdp.Call(ctx, t, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: src})
			return err
		})); err != nil {
			e.t.Fatalf("runtime mode %s: %v", mode, err)
		}
	}
	if err := chromedp.Do(ctx, chromedp.Navigate(e.PageURL+"/e2e/blank.html")); err != nil {
		e.t.Fatalf("navigate: %v", err)
	}
}

// runtimeMode is load()'s runtime the suite runs in: MCPWASM_E2E_RUNTIME
// ("auto", "shared-worker", "worker" or "main"); empty means mcp.js's
// default.
func runtimeMode() string { return os.Getenv("MCPWASM_E2E_RUNTIME") }

// onlyInPass skips t in the passes of runtimes other than mode, saying
// why: what t checks does not depend on where Go runs, so one pass runs
// it. The auto pass (the default runtime, a worker) runs what a stranger
// meets first; the main pass what the Go core alone decides, which keeps
// the two passes about as long. The runtimes' own paths are tested by the
// rest of this suite and by e2e/xengine in every engine. Run without
// MCPWASM_E2E_RUNTIME, the suite runs every test.
func onlyInPass(t *testing.T, mode, why string) {
	t.Helper()
	if m := runtimeMode(); m != "" && m != mode {
		t.Skipf("runs in the %s pass only (the %s pass would add minutes, not coverage): %s", mode, m, why)
	}
}

// Why onlyInPass tests run once.
const (
	demoInDefaultRuntime    = "the demo page as make run serves it, in the default runtime; the main runtime of its catalog, agent and sign-in runs in TestCatalog*, TestAgent*, TestLogin* and e2e/xengine"
	packageInDefaultRuntime = "the packed package in a stranger's app, in the default runtime; the main runtime from the same tarball runs in e2e/xengine TestReactAppFromTarball"
	readmeInDefaultRuntime  = "the README's snippets as pasted, in the default runtime"
	interopInGoCore         = "servers of other authors differ in protocol, handled by the Go core the same in every runtime"
	hostileInGoCore         = "what a hostile server sends is checked by the Go core, the same code in every runtime; the sign-in window and its relay, which differ by runtime, are attacked in both passes (TestHostileCallback*)"
)

// onMainThread says whether the suite's pages run the Go runtime on the
// main thread ("main"); else in a worker (mcp.js's default, "auto", picks
// a SharedWorker in Chromium).
func onMainThread() bool { return runtimeMode() == "main" }

// eval runs an async JavaScript expression in the tab and decodes its
// (JSON-able) result into out, failing the test on an exception.
func (e *env) eval(expr string, out any) {
	e.t.Helper()
	if err := e.tryEval(expr, out); err != nil {
		e.t.Fatalf("evaluating JS: %v\n%s", err, expr)
	}
}

func (e *env) tryEval(expr string, out any) error {
	raw, err := chromedp.Run(e.ctx, chromedp.Evaluate[json.RawMessage](expr, chromedp.EvalAwaitPromise))
	if err != nil && err != chromedp.ErrJSUndefined {
		return err
	}
	if out != nil && len(raw) > 0 {
		return json.Unmarshal(raw, out)
	}
	return nil
}

// jsErr is what the page reports for a rejected call.
type jsErr struct {
	Name    string `json:"name"`
	Code    string `json:"code"`
	Status  int    `json:"status"`
	Message string `json:"message"`
}

// catchJS is a JS snippet turning a rejection into a jsErr-shaped object.
const catchJS = `(e) => ({ error: { name: e.name, code: e.code, status: e.status, message: e.message, isMCPError: e instanceof MCPError } })`

func (e *env) cancelledTools() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]string(nil), e.canceled...)
}

// waitFor polls cond until it holds or the test's tab times out.
func (e *env) waitFor(what string, cond func() bool) {
	e.t.Helper()
	for !cond() {
		select {
		case <-e.ctx.Done():
			e.t.Fatalf("timed out waiting for %s", what)
		case <-time.After(20 * time.Millisecond):
		}
	}
}
