package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpwasm/mcpwasm/demo"
	"github.com/mcpwasm/mcpwasm/demo/cors"
	"github.com/mcpwasm/mcpwasm/devkit/hashname"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
)

// The start-up and memory scenario (-only perf runs it alone): where
// navigation → ready goes, phase by phase, with the main thread's long
// tasks; and what 1, 10 and 100 clients, many calls and a catalog of 10
// servers leave in wasm memory and the JS heap.

// startupPhases are the phases of a load, each from one mark to the next
// (the marks are set by cmd/bench/pages/startup.html).
var startupPhases = []struct{ key, label, from, to string }{
	{"page", "navigation → the page's module script runs (HTML, wasm_exec.js, mcp.js)", "", "moduleStart"},
	{"fetch", "module script → mcp.wasm response headers (request, time to first byte)", "moduleStart", "wasmResponseStart"},
	{"download", "mcp.wasm body download (response headers → last byte)", "wasmResponseStart", "wasmResponseEnd"},
	{"compile", "compile + instantiate (compileStreaming starts with the headers, overlaps the download)", "instantiate.start", "instantiate.end"},
	{"tail", "last byte → instantiated (compile left after the download)", "wasmResponseEnd", "instantiate.end"},
	{"runtime", "go.run → main.main (Go runtime start + every package's init)", "run", "main"},
	{"main", "main.main → API ready (our own start-up in main)", "main", "goReady"},
	{"js", "API ready → load() resolves (mcp.js wraps the API)", "goReady", "ready"},
	{"total", "navigation → ready", "", "ready"},
}

// jsonString is s as a JavaScript string literal.
func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// startupRun is one load's marks (ms since navigation) and long tasks.
type startupRun struct {
	Marks      map[string]float64 `json:"marks"`
	Longtasks  []longtask         `json:"longtasks"`
	NoLongtask string             `json:"noLongtask"`
}

// startupCollect finds the module's download by its name: mcp.wasm, or
// the content-hashed name (hashname.Pattern).
var startupCollect = `(() => {
  const T = window.__startup, m = Object.assign({}, T.marks), hashed = new RegExp(` + jsonString(hashname.Pattern) + `);
  const e = performance.getEntriesByType("resource").find((r) => { const n = new URL(r.name).pathname.split("/").pop(); return n === "mcp.wasm" || hashed.test(n); });
  if (e) { m.wasmStart = e.startTime; m.wasmResponseStart = e.responseStart; m.wasmResponseEnd = e.responseEnd; }
  return { marks: m, longtasks: T.longtasks, noLongtask: T.noLongtask || "" };
})()`

// runStartup loads the start-up page twice in one new browser context:
// cold (HTTP cache cleared) and warm (a reload: HTTP cache, wasm code
// cache).
func (b *browser) runStartup(pageURL string) (cold, warm startupRun, err error) {
	ctx, closeTab := b.tab(chromedp.WithNewBrowserContext())
	defer closeTab()
	if err = chromedp.Do(ctx, chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		_, err := cdp.Call(ctx, t, network.ClearBrowserCache, cdp.Empty{})
		return err
	})); err != nil {
		return
	}
	load := func() (startupRun, error) {
		var r startupRun
		if err := chromedp.Do(ctx, chromedp.Navigate(pageURL)); err != nil {
			return r, err
		}
		if _, err := eval[float64](ctx, waitReady); err != nil {
			return r, err
		}
		time.Sleep(100 * time.Millisecond) // the last long task entries
		return eval[startupRun](ctx, startupCollect)
	}
	if cold, err = load(); err != nil {
		return
	}
	warm, err = load()
	return
}

// memRow is one line of the memory table: wasm memory and JS heap (after
// gc()) in bytes.
type memRow struct {
	Label string  `json:"label"`
	Wasm  float64 `json:"wasm"`
	Heap  float64 `json:"heap"`
}

// memJS runs in a ready mcpwasm page: clients, calls and a catalog, with
// gc() and a memory reading after each step.
const memJS = `(async (url) => {
  const mcp = window.__mcp, rows = [];
  const mem = (label) => {
    if (typeof gc === "function") gc();
    const m = globalThis.__go && globalThis.__go._inst && globalThis.__go._inst.exports.mem;
    rows.push({ label, wasm: m ? m.buffer.byteLength : 0, heap: performance.memory ? performance.memory.usedJSHeapSize : 0 });
  };
  const u = (i) => url + "?c=" + i;
  mem("loaded, no client");
  const clients = [];
  const open = async (n) => {
    const batch = [];
    while (clients.length + batch.length < n) {
      const c = mcp.client(u(clients.length + batch.length));
      batch.push(c.connect().then(() => c));
      if (batch.length === 10) clients.push(...await Promise.all(batch.splice(0)));
    }
    clients.push(...await Promise.all(batch));
  };
  await open(1); mem("1 client connected");
  await open(10); mem("10 clients connected");
  await open(100); mem("100 clients connected");
  for (const c of clients.splice(0)) await c.close();
  mem("the 100 clients closed");
  const c = mcp.client(url);
  await c.connect();
  const calls = async (n) => { for (let i = 0; i < n; i++) await c.callTool("echo", { text: "m" + i }); };
  await calls(100); mem("1 client, 100 warm-up calls");
  await calls(500); mem("1 client, 500 more calls (N)");
  await calls(1000); mem("1 client, 1,000 more calls (2N)");
  await c.close();
  const servers = {};
  for (let i = 0; i < 10; i++) servers["s" + i] = { url: url + "?s=" + i };
  const cat = mcp.catalog({ servers });
  const tools = await cat.tools();
  if (tools.length < 10) throw new Error("catalog listed " + tools.length + " tools");
  mem("catalog of 10 servers, tools listed (" + tools.length + " tools)");
  await cat.close();
  mem("catalog closed");
  return rows;
})`

// runMemory loads pageURL in a new browser context and runs memJS.
func (b *browser) runMemory(pageURL, mcpURL string) ([]memRow, error) {
	// 100 clients and 1,600 calls: on a loaded machine more than the
	// 3 minutes of a tab.
	ctx, closeTab := b.tabWithin(12*time.Minute, chromedp.WithNewBrowserContext())
	defer closeTab()
	if err := chromedp.Do(ctx, chromedp.Navigate(pageURL)); err != nil {
		return nil, err
	}
	if _, err := eval[float64](ctx, waitReady); err != nil {
		return nil, err
	}
	u, _ := json.Marshal(mcpURL)
	return eval[[]memRow](ctx, memJS+"("+string(u)+")")
}

// perfResult is the scenario's figures.
type perfResult struct {
	cold, warm  []startupRun
	lazy, eager []compileVisit            // the compile experiment: Chromium's default and --no-wasm-lazy-compilation
	compileErr  string                    // why the experiment did not run ("" when it did)
	preload     map[string][]preloadVisit // preload.html by variant key (preloadVariants)
	preloadErr  string                    // why the preload scenario did not finish ("" when it did)
	mem         []memRow
	memErr      string // why the memory run did not finish ("" when it did)
	load        [2]string
	at          time.Time
	runs        int
}

// statelessDemo serves an echo server without sessions and without
// list-changed notifications on its own loopback origin: its clients hold
// no long-lived request (no 2025-11-25 GET stream, which go-sdk answers
// 405 without sessions, and no 2026-07-28 subscriptions/listen stream,
// which a client opens only for a server that announces list changes),
// so 100 clients and a catalog of 10 fit in the browser's 6 connections
// per HTTP/1.1 origin; the demo server's streams would use them up at the
// seventh client.
func statelessDemo() (url string, stop func(), err error) {
	lns, err := listenLoopback(1)
	if err != nil {
		return "", nil, err
	}
	s := mcp.NewServer(&mcp.Implementation{Name: "bench-echo", Version: "1"}, &mcp.ServerOptions{
		Capabilities: &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{}},
	})
	type echoArgs struct {
		Text string `json:"text"`
	}
	mcp.AddTool(s, &mcp.Tool{Name: "echo", Description: "Returns its text."},
		func(_ context.Context, _ *mcp.CallToolRequest, a echoArgs) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: a.Text}}}, nil, nil
		})
	mux := http.NewServeMux()
	mux.Handle(demo.StreamablePath, mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s },
		&mcp.StreamableHTTPOptions{Stateless: true}))
	hs := &http.Server{Handler: cors.Wrap(mux, cors.Options{})}
	go hs.Serve(lns[0])
	return "http://" + lns[0].Addr().String() + demo.StreamablePath, func() { hs.Close() }, nil
}

// perfScenario runs the start-up breakdown cfg.runs times after a warm-up
// and the memory run once.
func perfScenario(br *browser, srv *servers, cfg config, rep *report) error {
	res := &perfResult{at: time.Now(), runs: cfg.runs}
	res.load[0] = loadAvg()
	logf("start-up breakdown: %d cold + warm loads after a warm-up", cfg.runs)
	for r := 0; r <= cfg.runs; r++ {
		cold, warm, err := br.runStartup(srv.PageURL + "/startup.html")
		if err != nil {
			return fmt.Errorf("start-up breakdown: %v", err)
		}
		if r > 0 {
			res.cold = append(res.cold, cold)
			res.warm = append(res.warm, warm)
		}
	}
	logf("preload: %d first visits of each variant", cfg.runs)
	if err := res.runPreload(br, srv, cfg); err != nil {
		logf("preload: %v", err)
		res.preloadErr = strings.SplitN(err.Error(), "\n", 2)[0]
	}
	logf("compile: %d first visits with lazy and with eager wasm compilation", cfg.runs)
	if err := res.runCompile(br, srv, cfg); err != nil {
		// The rest of the section still stands; the table says why it is empty.
		logf("compile: %v", err)
		res.compileErr = strings.SplitN(err.Error(), "\n", 2)[0]
	}
	logf("memory: 1, 10, 100 clients, 100 + 500 + 1,000 calls, a catalog of 10 servers")
	url, stop, err := statelessDemo()
	if err != nil {
		return err
	}
	defer stop()
	m, err := br.runMemory(srv.PageURL+"/wasm.html", url)
	if err != nil {
		// The rest of the report still stands; the section says so.
		logf("memory: %v", err)
		res.memErr = strings.SplitN(err.Error(), "\n", 2)[0]
	}
	res.mem = m
	res.load[1] = loadAvg()
	rep.perf = res
	return nil
}

// phase is a phase's duration in each run (runs missing a mark are left out).
func phase(runs []startupRun, from, to string) []float64 {
	var out []float64
	for _, r := range runs {
		t, ok := r.Marks[to]
		f := 0.0
		if from != "" {
			var okf bool
			f, okf = r.Marks[from]
			ok = ok && okf
		}
		if ok {
			out = append(out, t-f)
		}
	}
	return out
}

// longtaskCells are the number of main-thread tasks over 50 ms per load
// and the longest, median (min–max) over the runs.
func longtaskCells(runs []startupRun) (count, longest string) {
	var n, max []float64
	for _, r := range runs {
		m := 0.0
		for _, t := range r.Longtasks {
			if t.Ms > m {
				m = t.Ms
			}
		}
		n = append(n, float64(len(r.Longtasks)))
		max = append(max, m)
	}
	return cell(n, num), cell(max, ms)
}

// sortedLongtasks lists one run's long tasks, longest first.
func sortedLongtasks(r startupRun) string {
	var d []float64
	for _, t := range r.Longtasks {
		d = append(d, t.Ms)
	}
	sort.Sort(sort.Reverse(sort.Float64Slice(d)))
	var s []string
	for _, v := range d {
		s = append(s, fmt.Sprintf("%.0f ms", v))
	}
	if len(s) == 0 {
		return "none"
	}
	return strings.Join(s, ", ")
}

// compileVisit is one first visit of runtime.html with the runtime on the
// main thread: ms since navigation at ready and at the first tool result,
// the first connect, and a second connect in the same page (the same code,
// compiled and run once already).
type compileVisit struct {
	Ready, First, Connect, Reconnect float64
}

// eagerJSFlags are the V8 flags of the experiment's second browser: wasm
// functions compiled when the module is, not on their first call.
const eagerJSFlags = "--expose-gc --no-wasm-lazy-compilation"

// reconnectJS connects a new client to the same server in a ready
// runtime.html page and returns how long the connect took.
const reconnectJS = `(async (url) => {
  const t = performance.now();
  const c = window.__mcp.client(url);
  await c.connect();
  const d = performance.now() - t;
  await c.close();
  return d;
})`

// runCompile measures what lazy compilation costs the first connect: the
// same first visit in Chromium as shipped (V8 compiles a wasm function on
// its first call, on the calling thread) and in a second Chromium with
// eagerJSFlags, the two alternating, cfg.runs runs after a warm-up each.
func (p *perfResult) runCompile(br *browser, srv *servers, cfg config) error {
	eager, err := startBrowserWith(eagerJSFlags)
	if err != nil {
		return err
	}
	defer eager.Close()
	for r := 0; r <= cfg.runs; r++ {
		for i := range 2 {
			b, into := br, &p.lazy
			if (i+r)%2 == 1 {
				b, into = eager, &p.eager
			}
			v, err := b.runCompileVisit(srv.PageURL, srv.MCPURL)
			if err != nil {
				return err
			}
			if r > 0 {
				*into = append(*into, v)
			}
		}
	}
	return nil
}

// runCompileVisit opens runtime.html with the main-thread runtime in a new
// browser context (a first visit), waits for its first tool result and
// connects once more.
func (b *browser) runCompileVisit(pageURL, mcpURL string) (compileVisit, error) {
	var v compileVisit
	ctx, closeTab := b.tab(chromedp.WithNewBrowserContext())
	defer closeTab()
	if err := chromedp.Do(ctx, chromedp.Navigate(rtPage(pageURL, rtClient{runtime: "main"}, mcpURL))); err != nil {
		return v, err
	}
	if _, err := eval[float64](ctx, waitFirst); err != nil {
		return v, err
	}
	marks, err := eval[map[string]float64](ctx, "window.__rt.marks")
	if err != nil {
		return v, err
	}
	re, err := eval[float64](ctx, fmt.Sprintf("%s(%q)", reconnectJS, mcpURL))
	if err != nil {
		return v, err
	}
	return compileVisit{Ready: marks["ready"], First: marks["firstResult"], Connect: marks["connectEnd"] - marks["connectStart"], Reconnect: re}, nil
}

// preloadWork is the page's own start-up work in preload.html, ms.
const preloadWork = 150

// preloadVariants are the preload scenario's pages: load()'s runtime, with
// and without preload() at import.
var preloadVariants = []struct{ key, label, runtime, preload string }{
	{"auto", "`auto`, `load()` after the page's work", "auto", "0"},
	{"auto+pre", "`auto`, `preload()` at import", "auto", "1"},
	{"main", "`main`, `load()` after the page's work", "main", "0"},
	{"main+pre", "`main`, `preload()` at import", "main", "1"},
}

// preloadVisit is one first visit of preload.html: ms since navigation.
type preloadVisit struct {
	Marks map[string]float64 `json:"marks"`
	Mode  string             `json:"mode"`
}

// runPreload visits preload.html in every variant, the order rotating,
// cfg.runs runs after a warm-up.
func (p *perfResult) runPreload(br *browser, srv *servers, cfg config) error {
	p.preload = map[string][]preloadVisit{}
	n := len(preloadVariants)
	for r := 0; r <= cfg.runs; r++ {
		for i := range n {
			v := preloadVariants[(i+r)%n]
			got, err := br.runPreloadVisit(fmt.Sprintf("%s/preload.html?runtime=%s&preload=%s&work=%d", srv.PageURL, v.runtime, v.preload, preloadWork))
			if err != nil {
				return fmt.Errorf("%s: %v", v.key, err)
			}
			if r > 0 {
				p.preload[v.key] = append(p.preload[v.key], got)
			}
		}
	}
	return nil
}

// runPreloadVisit loads pageURL in a new browser context (a first visit)
// and returns its marks once load() resolved.
func (b *browser) runPreloadVisit(pageURL string) (preloadVisit, error) {
	ctx, closeTab := b.tab(chromedp.WithNewBrowserContext())
	defer closeTab()
	if err := chromedp.Do(ctx, chromedp.Navigate(pageURL)); err != nil {
		return preloadVisit{}, err
	}
	if _, err := eval[float64](ctx, waitReady); err != nil {
		return preloadVisit{}, err
	}
	return eval[preloadVisit](ctx, "window.__pre")
}
