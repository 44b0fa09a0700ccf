// Package xengine runs the e2e scenarios that must hold in every browser
// engine: each test body is written once against engine.Window and runs
// in Chromium (CDP), Firefox (WebDriver BiDi) and WebKitGTK (classic
// WebDriver), one engine per test binary run (MCPWASM_E2E_ENGINE), in the
// runtime mode MCPWASM_E2E_RUNTIME picks. Where an engine truly differs,
// expectedFailures says so, and the test checks it still does.
package xengine

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"hash/fnv"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpwasm/mcpwasm/demo"
	"github.com/mcpwasm/mcpwasm/demo/authserver"
	"github.com/mcpwasm/mcpwasm/demo/cors"
	"github.com/mcpwasm/mcpwasm/demo/model"
	"github.com/mcpwasm/mcpwasm/devkit/devserver"
	"github.com/mcpwasm/mcpwasm/devkit/npmapp"
	"github.com/mcpwasm/mcpwasm/devkit/webbuild"
	"github.com/mcpwasm/mcpwasm/e2e/engine"
	"github.com/mcpwasm/mcpwasm/e2e/internal/respstatus"
)

var (
	browser engine.Browser
	webDir  string
	repo    string // the repository's root
	appDir  string // npmapp.Make's output, when built before the run
)

func TestMain(m *testing.M) { os.Exit(run(m)) }

func run(m *testing.M) int {
	flag.Parse()
	_, file, _, _ := runtime.Caller(0)
	root := filepath.Dir(filepath.Dir(filepath.Dir(file)))
	// MCPWASM_E2E_BUILD=dir builds the web bundle into dir and stops;
	// MCPWASM_E2E_WEB=dir tests that bundle (scripts/e2e.sh builds
	// one for every engine and runtime).
	// With MCPWASM_E2E_APP=dir as well, it also builds the React example
	// app from the packed npm package into dir (and the AI SDK example
	// into dir/ai-sdk), and MCPWASM_E2E_APP=dir then tests those apps
	// (else the scenario that needs one builds it).
	repo = root
	appDir = os.Getenv("MCPWASM_E2E_APP")
	if dir := os.Getenv("MCPWASM_E2E_BUILD"); dir != "" {
		if err := buildWeb(root, dir); err != nil {
			fmt.Fprintln(os.Stderr, "xengine: building the web bundle:", err)
			return 1
		}
		if appDir != "" {
			if _, err := npmapp.Make(root, dir, appDir, true); err != nil {
				fmt.Fprintln(os.Stderr, "xengine: building the React example app:", err)
				return 1
			}
			if _, err := npmapp.MakeExample(root, dir, filepath.Join(appDir, "ai-sdk"), "ai-sdk", false); err != nil {
				fmt.Fprintln(os.Stderr, "xengine: building the AI SDK example app:", err)
				return 1
			}
		}
		return 0
	}
	webDir = os.Getenv("MCPWASM_E2E_WEB")
	if webDir == "" {
		dir, err := os.MkdirTemp("", "xengine-web-")
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		defer os.RemoveAll(dir)
		if err := buildWeb(root, dir); err != nil {
			fmt.Fprintln(os.Stderr, "xengine: building the web bundle:", err)
			return 1
		}
		webDir = dir
	}
	// The engine lives as long as the context it starts with.
	b, err := engine.Start(context.Background(), engine.FromEnv())
	if err != nil {
		fmt.Fprintln(os.Stderr, "xengine: the tests cannot run:", err)
		return 1
	}
	defer b.Close()
	browser = b
	fmt.Printf("xengine: engine %s, runtime %q\n", b.Name(), runtimeMode())
	code := m.Run()
	// WebKit says its version in its first session.
	fmt.Printf("xengine: %s was %s\n", b.Name(), b.Version())
	return code
}

func buildWeb(root, dir string) error {
	return webbuild.Build(root, dir, "-trimpath", "-ldflags=-s -w -X main.version=e2e")
}

// parallel runs the scenario beside others, in the engines whose driver
// can drive several windows at once (engine.ParallelWindows).
func parallel(t *testing.T) {
	if ok, _ := engine.Supports(browser.Name(), engine.ParallelWindows); ok {
		t.Parallel()
	}
}

// eitherRuntime runs a scenario whose subject is not where Go runs (the
// runtime is only the road its calls take) in one of load()'s runtime
// modes per engine, when MCPWASM_E2E_PLAN is "pairwise" (make e2e's
// default): by a hash of its name, Chromium and WebKit run it in one mode
// and Firefox in the other, so it runs in every engine and in both modes.
// It skips the pass that is not its own, with the reason. The scenarios
// about the runtime itself (its workers, tabs, storage, sign-in windows,
// lifecycle, load) do not call it and run in every pass. It reports
// whether this pass is the scenario's only one in this engine.
func eitherRuntime(t *testing.T) (only bool) {
	t.Helper()
	if os.Getenv("MCPWASM_E2E_PLAN") != "pairwise" {
		return false
	}
	mode := plannedRuntime(t.Name(), browser.Name())
	if mode != runtimeMode() {
		t.Skip(pairwiseReason)
	}
	return true
}

// pairwiseReason is the skip reason of eitherRuntime, one sentence for
// every scenario and pass so that the run's summary groups them.
const pairwiseReason = "its subject is not the runtime: runs in one runtime mode per engine, both modes across the engines (MCPWASM_E2E_PLAN=pairwise; E2E_PLAN=full runs every pass)"

// plannedRuntime is the runtime mode ("auto" or "main") in which the
// scenario named test runs in engine under the pairwise plan.
func plannedRuntime(test, engine string) string {
	h := fnv.New32a()
	h.Write([]byte(test))
	n := h.Sum32() & 1
	if engine == "firefox" {
		n ^= 1
	}
	return [2]string{"auto", "main"}[n]
}

// runtimeMode is load()'s runtime for every page: MCPWASM_E2E_RUNTIME
// ("auto" when unset).
func runtimeMode() string {
	if m := os.Getenv("MCPWASM_E2E_RUNTIME"); m != "" {
		return m
	}
	return "auto"
}

// bootJS is the first script of every test page: it records uncaught
// errors, rejections and console errors in globalThis.__e2eErrors (the
// only error log classic WebDriver has), and in globalThis.__e2eTrace the
// page's clicks and its crossings into and out of the runtime (mcp.js's
// trace hook), printed when a scenario fails.
const bootJS = `(() => {
  const trace = globalThis.__e2eTrace = [];
  const note = (what) => { trace.push([Date.now(), what]); if (trace.length > 80) trace.shift(); };
  globalThis.__mcpwasmTrace = (dir, what) => note(dir + " " + what);
  addEventListener("click", (e) => note("click " + (e.target?.id ? "#" + e.target.id : e.target?.tagName)), true);
  const errs = globalThis.__e2eErrors = [];
  addEventListener("error", (e) => errs.push("uncaught: " + (e.error?.stack || e.message)));
  addEventListener("unhandledrejection", (e) => errs.push("unhandled rejection: " + (e.reason?.stack || e.reason)));
  const ce = console.error;
  console.error = (...a) => { errs.push("console.error: " + a.join(" ")); ce.apply(console, a); };
  // Every window.open of the page, in order, with whether the browser let
  // it open (every sign-in window of mcp.js is one); the last window it
  // opened in __e2eLastOpened.
  if (!globalThis.__e2eOpens) {
    const opens = globalThis.__e2eOpens = [];
    const open = window.open;
    window.open = function (...a) {
      const x = open.apply(this, a);
      opens.push({ url: String(a[0] ?? ""), opened: !!x });
      if (x) globalThis.__e2eLastOpened = x;
      return x;
    };
  }
})();
`

// blankPage is the page each scenario starts on; strictPage is the same
// under the strict Content-Security-Policy docs/JSAPI.md documents.
const blankPage = `<!doctype html><meta charset="utf-8"><title>e2e</title><script src="/e2e/boot.js"></script><body></body>`

// world is one scenario's servers and window: the page origin, the demo
// MCP server behind the demo authorization server, an open demo MCP
// server, the catalog's second server and stand-in model, and the MCP Apps
// sandbox proxy (web/apps/), each on its own loopback origin; requests to
// the protected server, the authorization server and the model are
// counted by kind ("chat": a model request).
type world struct {
	t          *testing.T
	ctx        context.Context
	win        engine.Window
	PageURL    string
	MCPURL     string // protected demo server (Streamable HTTP)
	OpenURL    string // demo server without sign-in
	ASURL      string
	MCP2URL    string
	ModelURL   string
	SandboxURL string // MCP Apps sandbox proxy page (sandbox.html)
	AS         *authserver.Server

	browser   engine.Browser // the scenario's own browser (newWorldIn); nil: the run's
	preloaded bool           // the runtime mode is set by a preload script
	start     time.Time
	mu        sync.Mutex
	counts    map[string]int
	trace     []string // the servers' requests, printed when the scenario fails
	cancelled []string
	windows   []engine.Window
	closed    map[engine.Window]bool
}

type delegate struct{ h http.Handler }

func (d *delegate) ServeHTTP(w http.ResponseWriter, r *http.Request) { d.h.ServeHTTP(w, r) }

// newWorld starts the servers (ac configures the authorization), opens a
// window with storage of its own on the blank page and loads mcp.js into
// it as window.mcp.
func newWorld(t *testing.T, ac devserver.AuthConfig) *world {
	t.Helper()
	w := newServers(t, ac, os.DirFS(webDir), nil)
	w.open()
	w.navigate(w.win, w.PageURL+"/e2e/blank.html")
	w.load(w.win)
	return w
}

// newWorldIn is newWorld in browser b, which the scenario started for
// itself (engine.StartWith).
func newWorldIn(t *testing.T, ac devserver.AuthConfig, b engine.Browser) *world {
	t.Helper()
	w := newServers(t, ac, os.DirFS(webDir), nil)
	w.browser = b
	w.open()
	w.navigate(w.win, w.PageURL+"/e2e/blank.html")
	w.load(w.win)
	return w
}

// newServers starts a scenario's servers: the page origin serves site
// (and the routes routes adds), the others as newWorld says.
func newServers(t *testing.T, ac devserver.AuthConfig, site fs.FS, routes func(w *world, mux *http.ServeMux)) *world {
	t.Helper()
	return newServersWith(t, ac, site, routes, nil)
}

// newServersWith is newServers with tweak applied to the dev server's
// configuration and the page's (the relay's scenarios); it gets the page
// origin too.
func newServersWith(t *testing.T, ac devserver.AuthConfig, site fs.FS, routes func(w *world, mux *http.ServeMux), tweak func(cfg *devserver.Config, pc *devserver.PageConfig, pageOrigin string)) *world {
	t.Helper()
	ac.Enabled = true
	// A scenario's budget: the longest (a Deny, a sign-in, a reload in
	// WebKit) took 3 minutes on 2 cores running other browsers too.
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	t.Cleanup(cancel)
	w := &world{t: t, ctx: ctx, counts: map[string]int{}, start: time.Now()}
	t.Cleanup(w.logTrace)
	var dPage, dMCP, dAS, dMCP2, dModel, dSandbox delegate
	servers := map[string]*httptest.Server{}
	for name, d := range map[string]*delegate{"page": &dPage, "mcp": &dMCP, "as": &dAS, "mcp2": &dMCP2, "model": &dModel, "sandbox": &dSandbox} {
		servers[name] = httptest.NewUnstartedServer(d)
	}
	base := func(name string) string { return "http://" + servers[name].Listener.Addr().String() }
	pc := devserver.PageConfig{
		MCPURL:     base("mcp") + demo.StreamablePath,
		SSEURL:     base("mcp") + demo.SSEPath,
		ASURL:      base("as"),
		MCP2URL:    base("mcp2") + demo.StreamablePath,
		ModelURL:   base("model") + "/v1",
		SandboxURL: base("sandbox") + devserver.SandboxPath,
	}
	w.PageURL, w.MCPURL, w.ASURL, w.MCP2URL, w.ModelURL = base("page"), pc.MCPURL, pc.ASURL, pc.MCP2URL, pc.ModelURL
	w.SandboxURL = pc.SandboxURL
	cfg := devserver.Config{
		Web: site, Demo: true, Auth: ac,
		// open_link: a URL-mode elicitation for the React chat's link card.
		DemoOptions: demo.Options{CORS: cors.Options{AllowHeaders: []string{"X-Api-Key"}}, OpenLink: true},
	}
	if tweak != nil {
		tweak(&cfg, &pc, w.PageURL)
	}
	origins, err := devserver.Handlers(cfg, pc)
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range origins {
		switch o.Name {
		case "page":
			dPage.h = w.tracing("page", w.pageHandler(o.Handler, routes))
		case "mcp":
			dMCP.h = w.tracing("mcp", w.counting(o.Handler))
		case "as":
			dAS.h = w.tracing("as", w.counting(o.Handler))
			w.AS = o.AuthServer
		case "mcp2":
			dMCP2.h = w.tracing("mcp2", o.Handler)
		case "model":
			dModel.h = w.tracing("model", w.counting(o.Handler))
		case "sandbox":
			dSandbox.h = w.tracing("sandbox", o.Handler)
		}
	}
	for _, s := range servers {
		s.Start()
		t.Cleanup(func() { closeServer(s) })
	}
	open := serve(t, demo.Handler(demo.Options{OnCancelled: func(tool string) {
		w.mu.Lock()
		defer w.mu.Unlock()
		w.cancelled = append(w.cancelled, tool)
	}}))
	w.OpenURL = open.URL + demo.StreamablePath
	return w
}

// serve starts h on loopback for the test's life.
func serve(t *testing.T, h http.Handler) *httptest.Server {
	s := httptest.NewServer(h)
	t.Cleanup(func() { closeServer(s) })
	return s
}

// closeServer ends the connections a page left open before it waits for
// the server's requests: httptest's Close waits for every active request,
// and a worker may keep an MCP GET stream open after its window closed,
// which held a Firefox pass for minutes.
func closeServer(s *httptest.Server) {
	s.CloseClientConnections()
	s.Close()
}

// open opens the scenario's window, with storage of its own, on
// about:blank.
func (w *world) open() {
	w.t.Helper()
	b := browser
	if w.browser != nil {
		b = w.browser
	}
	win, err := b.NewWindow(w.ctx)
	if err != nil {
		w.t.Fatalf("opening a window: %v", err)
	}
	w.track(win)
	w.win = win
	w.preload(win)
}

// preload sets the runtime mode before any page script, where the engine
// can (CDP, BiDi); elsewhere boot.js sets it.
func (w *world) preload(win engine.Window) {
	w.t.Helper()
	err := win.Preload(w.ctx, fmt.Sprintf("globalThis.__mcpwasmRuntime = %q;", runtimeMode()))
	switch {
	case err == nil:
		w.preloaded = true
	case errors.Is(err, engine.ErrNoPreload):
	default:
		w.t.Fatalf("preload: %v", err)
	}
}

func (w *world) pageHandler(site http.Handler, routes func(w *world, mux *http.ServeMux)) http.Handler {
	mux := http.NewServeMux()
	if routes != nil {
		routes(w, mux)
	}
	page := func(csp string) http.HandlerFunc {
		return func(rw http.ResponseWriter, r *http.Request) {
			rw.Header().Set("Content-Type", "text/html; charset=utf-8")
			rw.Header().Set("Cache-Control", "no-store")
			if csp != "" {
				rw.Header().Set("Content-Security-Policy", csp)
			}
			fmt.Fprint(rw, blankPage)
		}
	}
	mux.HandleFunc("/e2e/blank.html", page(""))
	mux.HandleFunc("/e2e/strict.html", func(rw http.ResponseWriter, r *http.Request) {
		// The Content-Security-Policy docs/JSAPI.md gives for a page
		// using mcp.js: no inline script, wasm-unsafe-eval only, workers
		// and connections to the page and the MCP server's origins.
		page("default-src 'none'; script-src 'self' 'wasm-unsafe-eval'; worker-src 'self'; connect-src 'self' "+strings.TrimSuffix(w.OpenURL, demo.StreamablePath))(rw, r)
	})
	mux.HandleFunc("/e2e/boot.js", func(rw http.ResponseWriter, r *http.Request) {
		rw.Header().Set("Content-Type", "text/javascript; charset=utf-8")
		rw.Header().Set("Cache-Control", "no-store")
		fmt.Fprint(rw, bootJS)
		if !w.preloaded {
			fmt.Fprintf(rw, "globalThis.__mcpwasmRuntime = %q;\n", runtimeMode())
		}
	})
	mux.Handle("/", w.counting(site))
	return mux
}

// counting counts requests (not preflights) by kind.
func (w *world) counting(h http.Handler) http.Handler {
	return http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodOptions {
			kind := "other"
			switch p := r.URL.Path; {
			case strings.HasPrefix(p, "/.well-known/oauth-protected-resource"):
				kind = "prm"
			case strings.HasPrefix(p, "/.well-known/"):
				kind = "asmeta"
			case p == "/register", p == "/token", p == "/revoke":
				kind = p[1:]
			case p == "/authorize", p == "/consent":
				kind = "authorize"
			case p == demo.StreamablePath:
				kind = "mcp"
			case (p == "/mcp.wasm" || webbuild.IsHashed(strings.TrimPrefix(p, "/"))) && r.Method == http.MethodGet:
				kind = "wasm"
			case strings.HasSuffix(p, ".wasm") && r.Method == http.MethodHead:
				kind = "wasmHEAD"
			case p == model.ChatPath:
				kind = "chat"
			}
			w.mu.Lock()
			w.counts[kind]++
			w.mu.Unlock()
		}
		h.ServeHTTP(rw, r)
	})
}

// tracing records each request to the server named name, when it came and
// when (and how) it was answered: a scenario that fails in CI, where only
// the output remains, shows what the page asked last and what hung.
func (w *world) tracing(name string, h http.Handler) http.Handler {
	return http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		what := name + " " + r.Method + " " + r.URL.Path
		if m := r.Header.Get("Mcp-Method"); m != "" {
			what += " (" + m + ")"
		}
		if id := r.Header.Get("Mcp-Session-Id"); id != "" && len(id) > 6 {
			what += " session …" + id[len(id)-6:]
		}
		w.record(what + " began")
		sw := &respstatus.Writer{ResponseWriter: rw}
		began := time.Now()
		h.ServeHTTP(sw, r)
		// A refusal says why: a nonce challenge is not a bad key.
		if m := challengeError.FindStringSubmatch(rw.Header().Get("WWW-Authenticate")); sw.Status == http.StatusUnauthorized && m != nil {
			what += " " + m[0]
		}
		w.record(fmt.Sprintf("%s ended %d after %.2fs", what, sw.Status, time.Since(began).Seconds()))
	})
}

// challengeError finds a WWW-Authenticate challenge's error parameter.
var challengeError = regexp.MustCompile(`error="[^"]*"`)

func (w *world) record(line string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.trace = append(w.trace, fmt.Sprintf("%7.2fs %s", time.Since(w.start).Seconds(), line))
}

// logTrace prints the last requests of a failed scenario.
func (w *world) logTrace() {
	if !w.t.Failed() {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	tr := w.trace
	if len(tr) > 60 {
		tr = tr[len(tr)-60:]
	}
	w.t.Logf("the servers' last %d requests (of %d):\n  %s", len(tr), len(w.trace), strings.Join(tr, "\n  "))
}

// logPage prints what a failed scenario's window last did (bootJS's
// trace, on the servers' clock) and the state its page shows.
func (w *world) logPage(ctx context.Context, win engine.Window, n int) {
	var page struct {
		URL   string   `json:"url"`
		Trace [][2]any `json:"trace"`
		Shows string   `json:"shows"`
	}
	err := win.Eval(ctx, `(() => ({
		url: location.href,
		trace: globalThis.__e2eTrace ?? [],
		shows: (document.querySelector("main, body")?.innerText ?? "").slice(0, 600),
	}))()`, &page)
	if err != nil {
		w.t.Logf("window %d: its page did not answer: %v", n, err)
		return
	}
	var lines []string
	for _, e := range page.Trace {
		ms, _ := e[0].(float64)
		lines = append(lines, fmt.Sprintf("%7.2fs %v", (ms-float64(w.start.UnixMilli()))/1000, e[1]))
	}
	w.t.Logf("window %d (%s) at %s; its last crossings and clicks:\n  %s\nit shows: %q", n, browser.Name(), page.URL, strings.Join(lines, "\n  "), page.Shows)
}

func (w *world) snapshot() map[string]int {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := map[string]int{}
	for k, v := range w.counts {
		out[k] = v
	}
	return out
}

func (w *world) diff(before map[string]int) map[string]int {
	out := map[string]int{}
	for k, v := range w.snapshot() {
		if d := v - before[k]; d != 0 {
			out[k] = d
		}
	}
	return out
}

func (w *world) cancelledTools() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.cancelled...)
}

// track closes win when the test ends, and reports its errors first.
func (w *world) track(win engine.Window) {
	w.windows = append(w.windows, win)
	n := len(w.windows)
	w.t.Cleanup(func() { w.closeWindow(win, n) })
}

// openCall is one window.open of a page (bootJS records them).
type openCall struct {
	URL    string `json:"url"`
	Opened bool   `json:"opened"` // the browser let it open
}

// opensIn lists the window.open calls of win's page since it loaded.
func (w *world) opensIn(win engine.Window) []openCall {
	w.t.Helper()
	var calls []openCall
	w.evalIn(win, `globalThis.__e2eOpens ?? []`, &calls)
	return calls
}

// opened is how many windows the browser let the scenario's page open
// since it loaded.
func (w *world) opened() int {
	w.t.Helper()
	n := 0
	for _, c := range w.opensIn(w.win) {
		if c.Opened {
			n++
		}
	}
	return n
}

// newTab opens another tab of the scenario's window (its storage, its
// preload scripts) on about:blank, closed with the scenario.
func (w *world) newTab() engine.Window {
	w.t.Helper()
	tab, err := w.win.NewTab(w.ctx)
	if err != nil {
		w.t.Fatalf("opening a tab: %v", err)
	}
	w.track(tab)
	return tab
}

// closeWindows reports the errors of this world's windows and closes them
// now: WebKit's driver runs one session at a time, so a scenario that
// needs a second world ends the first's windows first.
func (w *world) closeWindows() {
	for i, win := range w.windows {
		w.closeWindow(win, i+1)
	}
}

func (w *world) closeWindow(win engine.Window, n int) {
	w.mu.Lock()
	if w.closed == nil {
		w.closed = map[engine.Window]bool{}
	}
	done := w.closed[win]
	w.closed[win] = true
	w.mu.Unlock()
	if done {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if errs, err := win.Errors(ctx); err == nil && len(pageErrors(errs)) > 0 {
		errs = pageErrors(errs)
		w.t.Logf("page errors in window %d (%s):\n  %s", n, browser.Name(), strings.Join(errs, "\n  "))
	}
	if w.t.Failed() {
		w.logPage(ctx, win, n)
	}
	_ = win.Close()
}

func (w *world) navigate(win engine.Window, url string) {
	w.t.Helper()
	if err := win.Navigate(w.ctx, url); err != nil {
		w.t.Fatalf("navigate to %s: %v", url, err)
	}
}

// load imports mcp.js into win as window.mcp (and window.MCPError).
func (w *world) load(win engine.Window) {
	w.t.Helper()
	w.evalIn(win, `(async () => {
		const m = await import("/mcp.js");
		window.MCPError = m.MCPError;
		window.loadMCP = m.load;
		window.mcp = await m.load();
	})()`, nil)
}

func (w *world) eval(expr string, out any) { w.t.Helper(); w.evalIn(w.win, expr, out) }

func (w *world) evalIn(win engine.Window, expr string, out any) {
	w.t.Helper()
	if err := win.Eval(w.ctx, expr, out); err != nil {
		w.t.Fatalf("evaluating JS: %v\n%s", err, expr)
	}
}

// waitFor polls cond until it holds, failing the test after waitLimit or
// when the scenario's time runs out.
func (w *world) waitFor(what string, cond func() bool) {
	w.t.Helper()
	// One wait is bounded well below the scenario's 6 minutes, so a hang
	// fails its test while the pass still has time for the others.
	limit := time.After(waitLimit)
	for !cond() {
		select {
		case <-w.ctx.Done():
			w.t.Fatalf("timed out waiting for %s", what)
		case <-limit:
			w.t.Fatalf("waited %s for %s", waitLimit, what)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// popup waits at most waitLimit for the window that wait expects, and
// tracks it; what names it in the failure.
func (w *world) popup(wait engine.Popup, what string) engine.Window {
	w.t.Helper()
	ctx, cancel := context.WithTimeout(w.ctx, waitLimit)
	defer cancel()
	p, err := wait(ctx)
	if err != nil {
		w.t.Fatalf("%s: %v", what, err)
	}
	w.track(p)
	return p
}

// waitLimit bounds one waitFor: the slowest wait on record is the token
// expiry of TestTwoTabsOneRefreshForOneExpiry, under a minute.
const waitLimit = 2 * time.Minute

// connected is the outcome of a new client's connect() in the scenario's
// page: the error it rejected with (zero when it connected) and the
// client's state after it. opts is a JS object literal of client options.
func (w *world) connected(url, opts string) (jsErr, string) {
	w.t.Helper()
	var got struct {
		Error jsErr  `json:"error"`
		State string `json:"state"`
	}
	w.eval(fmt.Sprintf(`(async () => {
		const c = mcp.client(%q, %s);
		const r = await c.connect().then(() => ({}), %s);
		return { ...r, state: c.state };
	})()`, url, opts, catchJS), &got)
	return got.Error, got.State
}

// jsErr is what the page reports for a rejected call.
type jsErr struct {
	Name    string `json:"name"`
	Code    string `json:"code"`
	Message string `json:"message"`
}

// catchJS turns a rejection into { error: jsErr }.
const catchJS = `(e) => ({ error: { name: e.name, code: e.code, message: e.message + (e.detail ? " — " + e.detail : "") } })`

// pageErrors leaves out the browser's own reports that say nothing of
// the code under test: Firefox logs the favicon request a page's
// default-src 'none' blocks (the authorization server's pages).
func pageErrors(errs []string) []string {
	var out []string
	for _, e := range errs {
		if !strings.Contains(e, "/favicon.ico") {
			out = append(out, e)
		}
	}
	return out
}
