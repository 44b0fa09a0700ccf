package main

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/mcpwasm/mcpwasm/demo"
	"github.com/mcpwasm/mcpwasm/devkit/devserver"
	"github.com/mcpwasm/mcpwasm/devkit/npmapp"
	"github.com/mcpwasm/mcpwasm/devkit/webbuild"
)

// The npm scenario (-only npm runs it alone): what an app built from the
// npm package pays until its first connection, against the demo page's
// load. The React example (examples/react-vite), built by Vite against the
// packed package as a user's app is, is timed from navigation to its first
// "connected"; the demo page (web/demo/) from navigation to ready. Every
// visit is a first visit.

const npmSectionTitle = "## The React example from the npm package against the demo page"

// npmPages are the two pages, in the order of run 0.
var npmPages = []struct{ key, label, until string }{
	{"demo", "demo page (`web/demo/`)", "ready (`data-ready` on its body)"},
	{"app", "React example (`examples/react-vite`, production build)", "its first `connected` (`useMcpClient`)"},
}

// npmResult is the scenario's figures.
type npmResult struct {
	ms       map[string][]float64 // page key → ms per run
	wire     map[string]string    // page key → how its wasm went over the wire (last run)
	versions string               // React and Vite of the example
	err      string               // why it was not measured ("" when it was)
	load     [2]string
	at       time.Time
	runs     int
}

// readyAtJS runs in the demo page before its scripts: it notes when
// app.js marks the body ready.
const readyAtJS = `new MutationObserver((_, o) => {
  if (document.body?.dataset.ready) { window.__readyAt = performance.now(); o.disconnect(); }
}).observe(document, { subtree: true, attributes: true, attributeFilter: ["data-ready"] });`

// waitVar resolves with window[name] once the page has set it.
func waitVar(name string) string {
	return `(async () => { while (window.` + name + ` === undefined) await new Promise((r) => setTimeout(r, 5)); return window.` + name + `; })()`
}

// npmScenario builds the example app from the packed package, then times
// the two pages, alternating with the order rotating, cfg.runs runs after
// a warm-up. In a full run a failure is reported in the section, not as a
// failure of the bench.
func npmScenario(br *browser, cfg config, rep *report, webDir, tmp string) error {
	res := &npmResult{ms: map[string][]float64{}, wire: map[string]string{}, at: time.Now(), runs: cfg.runs}
	rep.npm = res
	res.load[0] = loadAvg()
	err := res.run(br, cfg, webDir, tmp)
	res.load[1] = loadAvg()
	if err != nil {
		if cfg.only == "npm" {
			return err
		}
		logf("npm: %v", err)
		res.err = strings.SplitN(err.Error(), "\n", 2)[0]
	}
	return nil
}

func (res *npmResult) run(br *browser, cfg config, webDir, tmp string) error {
	logf("npm: packing the package, building examples/react-vite with Vite")
	// The package as a user gets it (npm pack), and the example app built
	// against it: what the e2e tests serve.
	built, err := npmapp.Make(cfg.root, webDir, filepath.Join(tmp, "npm"), false)
	if err != nil {
		return err
	}
	dist := built.Prod
	app := filepath.Join(cfg.root, "examples", "react-vite")
	res.versions = fmt.Sprintf("React %s, Vite %s", pkgVersion(app, "react"), pkgVersion(app, "vite"))
	appWasm, err := filepath.Glob(filepath.Join(dist, "assets", "*.wasm"))
	if err != nil || len(appWasm) != 1 {
		return fmt.Errorf("npm: the app's dist/assets has wasm files %q; want one", appWasm)
	}
	// The app's module gets the precompressed siblings the demo's has (a
	// full run made those; -only npm makes them here), so both pages
	// download the same bytes: the comparison is of what runs, not of the
	// host's compression.
	comp := newCompressor()
	for _, f := range []string{filepath.Join(webDir, "mcp.wasm"), appWasm[0]} {
		if _, err := os.Stat(f + ".br"); err != nil {
			comp.start(f)
			if err := comp.wait(); err != nil {
				return err
			}
		}
	}
	// The demo loads the hashed copy: it gets the siblings too.
	if _, err := webbuild.Stamp(webDir); err != nil {
		return err
	}
	srv, err := startNpmServers(webDir, dist)
	if err != nil {
		return err
	}
	defer srv.Close()
	urls := map[string]string{"demo": srv.DemoURL + "/", "app": srv.AppURL + "/?server=mcp2"}
	for r := 0; r <= cfg.runs; r++ {
		logf("npm: run %d/%d (0 = warm-up): the demo page and the React example, first visits", r, cfg.runs)
		for i := range npmPages {
			key := npmPages[(i+r)%len(npmPages)].key
			var v float64
			var err error
			if key == "demo" {
				v, err = br.firstVisit(urls[key], readyAtJS, "__readyAt")
			} else {
				v, err = br.firstVisit(urls[key], "", "__connectedAt")
			}
			if err != nil {
				return fmt.Errorf("npm: %s: %v", key, err)
			}
			if r > 0 {
				res.ms[key] = append(res.ms[key], v)
			}
		}
	}
	res.wire = srv.wire.snapshot()
	return nil
}

// firstVisit opens pageURL in a new browser context with the HTTP cache
// cleared, with script (if any) evaluated before the page's own, and
// returns window[name], which the page sets to performance.now() (ms since
// navigation start).
func (b *browser) firstVisit(pageURL, script, name string) (float64, error) {
	ctx, closeTab := b.tabWithin(2*time.Minute, chromedp.WithNewBrowserContext())
	defer closeTab()
	err := chromedp.Do(ctx, chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		if _, err := cdp.Call(ctx, t, network.ClearBrowserCache, cdp.Empty{}); err != nil {
			return err
		}
		if script == "" {
			return nil
		}
		_, err := cdp.Call(ctx, t, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: script})
		return err
	}), chromedp.Navigate(pageURL))
	if err != nil {
		return 0, err
	}
	return eval[float64](ctx, waitVar(name))
}

// pkgVersion is the version of the package pkg installed in dir.
func pkgVersion(dir, pkg string) string {
	b, err := os.ReadFile(filepath.Join(dir, "node_modules", pkg, "package.json"))
	var p struct{ Version string }
	if err != nil || json.Unmarshal(b, &p) != nil {
		return "?"
	}
	return p.Version
}

// npmServers are the origins of `make run` without sign-in: the demo page
// (the bench's web directory), the two demo MCP servers and the stand-in
// model; and the app's dist on a page origin of its own with the same
// /devserver/config.json.
type npmServers struct {
	DemoURL, AppURL string
	wire            *wireLog
	close           []func()
}

func startNpmServers(webDir, dist string) (*npmServers, error) {
	lns, err := listenLoopback(5)
	if err != nil {
		return nil, err
	}
	base := func(i int) string { return "http://" + lns[i].Addr().String() }
	pc := devserver.PageConfig{
		MCPURL: base(2) + demo.StreamablePath, SSEURL: base(2) + demo.SSEPath,
		MCP2URL: base(3) + demo.StreamablePath, ModelURL: base(4) + "/v1",
	}
	origins, err := devserver.Handlers(devserver.Config{Web: os.DirFS(webDir), Demo: true}, pc)
	if err != nil {
		return nil, err
	}
	appOrigins, err := devserver.Handlers(devserver.Config{Web: os.DirFS(dist)}, pc)
	if err != nil {
		return nil, err
	}
	s := &npmServers{DemoURL: base(0), AppURL: base(1), wire: &wireLog{m: map[string]string{}}}
	listener := map[string]net.Listener{"page": lns[0], "mcp": lns[2], "mcp2": lns[3], "model": lns[4]}
	serve := func(ln net.Listener, h http.Handler) {
		srv := &http.Server{Handler: h}
		go srv.Serve(ln)
		s.close = append(s.close, func() { srv.Close() })
	}
	for _, o := range origins {
		h := o.Handler
		if o.Name == "page" {
			h = s.wire.wrap("demo", h)
		}
		serve(listener[o.Name], h)
	}
	serve(lns[1], s.wire.wrap("app", appOrigins[0].Handler))
	return s, nil
}

func (s *npmServers) Close() {
	for _, f := range s.close {
		f()
	}
}

// wireLog notes, per page origin, how the last .wasm response went over
// the wire: its Content-Encoding and body bytes.
type wireLog struct {
	mu sync.Mutex
	m  map[string]string
}

func (l *wireLog) wrap(key string, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.HasSuffix(r.URL.Path, ".wasm") {
			h.ServeHTTP(w, r)
			return
		}
		cw := &countingWriter{ResponseWriter: w}
		h.ServeHTTP(cw, r)
		enc := w.Header().Get("Content-Encoding")
		if enc == "" {
			enc = "identity"
		}
		l.mu.Lock()
		l.m[key] = fmt.Sprintf("%s, %s (`%s`)", enc, kb(float64(cw.n)), r.URL.Path)
		l.mu.Unlock()
	})
}

func (l *wireLog) snapshot() map[string]string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return maps.Clone(l.m)
}

// countingWriter counts the body bytes written through it.
type countingWriter struct {
	http.ResponseWriter
	n int64
}

func (c *countingWriter) Write(b []byte) (int, error) {
	n, err := c.ResponseWriter.Write(b)
	c.n += int64(n)
	return n, err
}

func (c *countingWriter) Unwrap() http.ResponseWriter { return c.ResponseWriter }

// ratios are the app's figure over the demo page's, within each run.
func (res *npmResult) ratios() []float64 {
	var out []float64
	for i := range min(len(res.ms["app"]), len(res.ms["demo"])) {
		if d := res.ms["demo"][i]; d > 0 {
			out = append(out, res.ms["app"][i]/d)
		}
	}
	return out
}

// npmMarkdown is the scenario's section ("" when it did not run).
func (r *report) npmMarkdown() string {
	p := r.npm
	if p == nil {
		return ""
	}
	var b strings.Builder
	w := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	w("%s\n\n", npmSectionTitle)
	w("%s", r.measuredLine(p.at, p.load))
	w("- Command: `%s`\n", npmCommand(r.cfg))
	if p.versions != "" {
		w("- The example: %s\n", p.versions)
	}
	w("\nThe package as a user gets it (`npm pack` of what `make dist` writes, this run's module), installed into `examples/react-vite` and built with `vite build`; the app is served from its `dist` on a page origin of its own, the demo page as `make run` serves it, both with the demo servers of `make run` without sign-in. ")
	w("Each visit is a first visit in a new browser context (HTTP cache cleared, no wasm code cache, no worker running): the demo page from navigation to ready (`data-ready` on its body: the module loaded, the panels wired; it has not connected yet), the React example from navigation to its first `connected` (`/?server=mcp2`: `useMcpClient` against the demo server without sign-in; the app notes `performance.now()` in `window.__connectedAt`), so the app's figure also holds its first connect and React's renders. ")
	w("The app's hashed `mcp-<hash>.wasm` is served with the same precompressed brotli sibling as the demo's `mcp.wasm`: both download the same bytes. The pages alternate, the order rotating, %d runs after a warm-up run; a cell is median (min–max), the ratio is taken within each run.\n\n", p.runs)
	if p.err != "" {
		w("**Not measured in this run** (%s). To reproduce: `BENCH_ONLY=npm make bench`.\n\n", p.err)
		return b.String()
	}
	w("| page | navigation → | ms |\n| --- | --- | ---: |\n")
	for _, pg := range npmPages {
		w("| %s | %s | %s |\n", pg.label, pg.until, cell(p.ms[pg.key], ms))
	}
	w("| React example against the demo page | | %s |\n\n", cell(p.ratios(), ratio))
	var wire []string
	for _, pg := range npmPages {
		if s, ok := p.wire[pg.key]; ok {
			wire = append(wire, pg.key+": "+s)
		}
	}
	if len(wire) > 0 {
		w("The module on the wire, last run: %s.\n\n", strings.Join(wire, "; "))
	}
	return b.String()
}

// npmCommand is the command line that measures the section.
func npmCommand(cfg config) string {
	flags := runsFlag(cfg)
	if f := flagArgs(cfg); len(f) > 0 {
		flags += " " + strings.Join(f, " ")
	}
	if cfg.only == "npm" {
		return "BENCH_ONLY=npm make bench  # = go run ./cmd/bench -out BENCHMARKS.md -only npm" + flags
	}
	return "go run ./cmd/bench -out BENCHMARKS.md" + flags
}

// runNpmOnly is `-only npm`: the module build, the package, the app,
// their servers, Chromium and the scenario; the report keeps its other
// sections.
func runNpmOnly(cfg config, rep *report, webDir, tmp string) error {
	br, err := startBrowser()
	if err != nil {
		return err
	}
	defer br.Close()
	rep.chromium = br.Version
	if err := npmScenario(br, cfg, rep, webDir, tmp); err != nil {
		return err
	}
	return writeSection(cfg, rep, rep.npmMarkdown(), "the npm section", sectionSplicer(npmSectionTitle))
}
