// Package e2e drives the real product in headless Chromium: the wasm module
// built from this tree, web/mcp.js, the dev server's handlers and the demo
// MCP server, each on its own loopback origin.
package e2e

import (
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/mcpwasm/mcpwasm/demo"
	"github.com/mcpwasm/mcpwasm/webserve"
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
	_, file, _, _ := runtime.Caller(0)
	repoRoot = filepath.Dir(filepath.Dir(file))
	var err error
	webDir, err = buildWeb()
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e: building the web bundle:", err)
		return 1
	}
	defer os.RemoveAll(webDir)

	chromium := os.Getenv("CHROMIUM")
	if chromium == "" {
		chromium = "/usr/bin/chromium"
	}
	if _, err := os.Stat(chromium); err != nil {
		fmt.Fprintf(os.Stderr, "e2e: Chromium not found at %s (set CHROMIUM, or run scripts/install-deps.sh): the e2e tests cannot run\n", chromium)
		return 1
	}
	profile, err := os.MkdirTemp("", "e2e-chromium-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(profile)
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(chromium),
		chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck, chromedp.UserDataDir(profile),
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.Flag("disable-features", "Translate,MediaRouter,OptimizationHints"),
		chromedp.WindowSize(1280, 900),
	}
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancelAlloc()
	ctx, cancel := chromedp.NewContext(allocCtx)
	defer cancel()
	// Start the browser; no timeout on the first Do (it would kill it).
	if err := chromedp.Do(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "e2e: starting Chromium:", err)
		return 1
	}
	browserCtx = ctx
	return m.Run()
}

// buildWeb copies web/ to a temporary directory and builds the wasm module
// and wasm_exec.js into it, so the tests always run this tree's code.
func buildWeb() (string, error) {
	dir, err := os.MkdirTemp("", "e2e-web-")
	if err != nil {
		return "", err
	}
	if err := os.CopyFS(dir, os.DirFS(filepath.Join(repoRoot, "web"))); err != nil {
		return "", err
	}
	for _, f := range []string{"mcp.wasm", "mcp.wasm.gz", "mcp.wasm.br"} {
		os.Remove(filepath.Join(dir, f))
	}
	goroot := strings.TrimSpace(runOut("go", "env", "GOROOT"))
	execJS, err := os.ReadFile(filepath.Join(goroot, "lib", "wasm", "wasm_exec.js"))
	if err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(dir, "wasm_exec.js"), execJS, 0o644); err != nil {
		return "", err
	}
	cmd := exec.Command("go", "build", "-trimpath", "-ldflags=-s -w -X main.version=e2e", "-o", filepath.Join(dir, "mcp.wasm"), "./wasm")
	cmd.Dir = repoRoot
	cmd.Env = append(os.Environ(), "GOOS=js", "GOARCH=wasm")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("%v\n%s", err, out)
	}
	// Precompressed, as make build does: the page gets it gzip-encoded.
	if err := gzipFile(filepath.Join(dir, "mcp.wasm")); err != nil {
		return "", err
	}
	return dir, nil
}

func gzipFile(name string) error {
	b, err := os.ReadFile(name)
	if err != nil {
		return err
	}
	f, err := os.Create(name + ".gz")
	if err != nil {
		return err
	}
	zw, _ := gzip.NewWriterLevel(f, gzip.BestSpeed)
	if _, err := zw.Write(b); err != nil {
		return err
	}
	if err := zw.Close(); err != nil {
		return err
	}
	return f.Close()
}

func runOut(name string, args ...string) string {
	out, _ := exec.Command(name, args...).Output()
	return string(out)
}

// env is one test's world: the page origin and a demo MCP server origin.
type env struct {
	t        *testing.T
	ctx      context.Context // the test's tab
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
	e := &env{t: t}
	mux := http.NewServeMux()
	mux.HandleFunc("/e2e/blank.html", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, blankPage)
	})
	mux.Handle("/", webserve.Handler(os.DirFS(webDir)))
	page := httptest.NewServer(mux)
	t.Cleanup(page.Close)
	e.PageURL = page.URL

	mcpSrv := httptest.NewServer(demo.Handler(demo.Options{
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
	}))
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

// newBareEnv opens a new tab on the blank page of an existing page server,
// without loading mcp.js.
func newBareEnv(t *testing.T, pageURL string) *env {
	t.Helper()
	e := &env{t: t, PageURL: pageURL}
	e.openTab()
	return e
}

// openTab opens the test's tab on the blank page.
func (e *env) openTab() {
	e.t.Helper()
	tab, cancel := chromedp.NewContext(browserCtx)
	e.t.Cleanup(cancel)
	ctx, cancelT := context.WithTimeout(tab, 2*time.Minute)
	e.t.Cleanup(cancelT)
	e.ctx = ctx
	if err := chromedp.Do(ctx, chromedp.Navigate(e.PageURL+"/e2e/blank.html")); err != nil {
		e.t.Fatalf("navigate: %v", err)
	}
}

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
