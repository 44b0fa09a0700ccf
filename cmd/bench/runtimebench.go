package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/network"
	cdpruntime "github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// The runtime scenario (-only runtime runs it alone): where the Go runtime
// runs (load()'s runtime option) against the TS SDK in the same Chromium:
// the page's main-thread long tasks and a 10 ms timer's delay during load,
// first connect and sequential calls; per-call latency and throughput
// through the worker's message hop; a second and third tab of the same
// app; memory with three tabs open against one.

// rtClient is one column of the scenario: a runtime mode of mcpwasm, or
// the TS SDK.
type rtClient struct{ key, label, runtime string }

// rtClients are the columns of the long-task and per-call tables.
var rtClients = []rtClient{
	{"main", "mcpwasm `main`", "main"},
	{"worker", "mcpwasm `worker`", "worker"},
	{"shared", "mcpwasm `auto` (SharedWorker)", "auto"},
	{"ts", "TS SDK", "ts"},
}

// tabClients are the columns of the second-tab and memory tables.
var tabClients = []rtClient{
	{"shared", "mcpwasm `auto` (SharedWorker)", "auto"},
	{"main", "mcpwasm `main`", "main"},
	{"ts", "TS SDK", "ts"},
}

// longtask is one PerformanceObserver "longtask" entry, ms since navigation.
type longtask struct {
	Start float64 `json:"start"`
	Ms    float64 `json:"ms"`
}

// rtVisit is what one visit of runtime.html measured.
type rtVisit struct {
	Mode       string             `json:"mode"` // the runtime load() chose ("ts" for the TS SDK)
	Marks      map[string]float64 `json:"marks"`
	Longtasks  []longtask         `json:"longtasks"`
	NoLongtask string             `json:"noLongtask"`
	TimerWorst float64            `json:"timerWorst"` // worst lateness of a 10 ms timer during the calls, ms
	Calls      []float64          `json:"calls"`      // ms per sequential call
	ConcMs     float64            `json:"concMs"`     // wall time of the concurrent calls
	// Repeat is navigation → first tool result when the user comes back:
	// the same browser context (HTTP cache, wasm code cache, stored
	// hints), the page left first and its worker ended.
	Repeat float64 `json:"-"`
}

// rtCallsJS runs in runtime.html once its first call is done: n sequential
// calls with a 10 ms timer chain running beside them (its worst lateness
// is the page's responsiveness), then total calls shared by workers
// concurrent callers.
const rtCallsJS = `(async (n, workers, total) => {
  const R = window.__rt, c = window.__client, call = window.__rtCall;
  let worst = 0, running = true, expected = performance.now() + 10;
  const tick = () => {
    const now = performance.now();
    worst = Math.max(worst, now - expected);
    if (running) { expected = now + 10; setTimeout(tick, 10); }
  };
  setTimeout(tick, 10);
  const d = new Array(n);
  R.marks.callsStart = performance.now();
  for (let i = 1; i <= n; i++) {
    const t0 = performance.now();
    const r = await call(c, i);
    d[i - 1] = performance.now() - t0;
    if (i === n && r.content[0].text !== "hello " + i) throw new Error("unexpected echo result: " + JSON.stringify(r));
  }
  R.marks.callsEnd = performance.now();
  running = false;
  let next = 0;
  const t0 = performance.now();
  await Promise.all(Array.from({ length: workers }, async () => {
    while (next < total) { const i = next++; await call(c, i); }
  }));
  const concMs = performance.now() - t0;
  await c.close();
  await new Promise((r) => setTimeout(r, 100)); // the last long-task entries
  return { mode: R.mode, marks: R.marks, longtasks: R.longtasks, noLongtask: R.noLongtask || "", timerWorst: worst, calls: d, concMs };
})`

// waitFirst resolves with ms since navigation at the page's first tool result.
const waitFirst = `(async () => { while (!window.__firstP) await new Promise((r) => setTimeout(r, 2)); return await window.__firstP; })()`

// rtPage is runtime.html for client c, connecting to mcpURL.
func rtPage(pageURL string, c rtClient, mcpURL string) string {
	return pageURL + "/runtime.html?runtime=" + c.runtime + "&mcp=" + url.QueryEscape(mcpURL)
}

// runRuntimeVisit opens c's page in a new browser context (a first visit:
// no HTTP cache, no wasm code cache, no worker running) and runs load,
// the first connect and call, then the calls; then it times the repeat
// visit (visitTwice).
func (b *browser) runRuntimeVisit(pageURL, mcpURL string, c rtClient, cfg config) (rtVisit, error) {
	var v rtVisit
	_, repeat, err := visitTwice[float64](b, rtPage(pageURL, c, mcpURL), waitFirst, func(first context.Context) error {
		var err error
		v, err = eval[rtVisit](first, fmt.Sprintf("%s(%d, %d, %d)", rtCallsJS, cfg.calls, cfg.workers, cfg.concCalls))
		return err
	})
	v.Repeat = repeat
	return v, err
}

// visitTwice opens page in a new browser context (a first visit) and
// evaluates wait there, then runs then (nil: nothing) in that tab; then
// it closes that tab and, once no SharedWorker of it runs, opens the page
// again in the same browser context (a repeat visit) and evaluates wait
// again. wait resolves with the figure of a visit. A blank tab holds the
// browser context meanwhile: a page left by navigating would stay in the
// back/forward cache, its worker running.
func visitTwice[T any](b *browser, page, wait string, then func(first context.Context) error) (first, repeat T, err error) {
	holder, closeHolder := b.tab(chromedp.WithNewBrowserContext())
	defer closeHolder()
	if err := chromedp.Do(holder); err != nil { // create the browser context
		return first, repeat, err
	}
	tab, closeFirst := chromedp.NewContext(holder)
	defer closeFirst()
	if err := chromedp.Do(tab, chromedp.Navigate(page)); err != nil {
		return first, repeat, err
	}
	if first, err = eval[T](tab, wait); err != nil {
		return first, repeat, err
	}
	if then != nil {
		if err := then(tab); err != nil {
			return first, repeat, err
		}
	}
	closeFirst()
	if err := b.waitNoWorker(holder); err != nil {
		return first, repeat, fmt.Errorf("before the repeat visit: %v", err)
	}
	again, closeAgain := chromedp.NewContext(holder)
	defer closeAgain()
	if err := chromedp.Do(again, chromedp.Navigate(page)); err != nil {
		return first, repeat, err
	}
	repeat, err = eval[T](again, wait)
	return first, repeat, err
}

// waitNoWorker waits until no SharedWorker of the tab's browser context
// runs (a dedicated Worker ends with its page), so that a repeat visit
// starts its runtime as a user's return would.
func (b *browser) waitNoWorker(ctx context.Context) error {
	bc := chromedp.FromContext(ctx).BrowserContextID
	for start := time.Now(); ; time.Sleep(50 * time.Millisecond) {
		infos, err := chromedp.Targets(b.ctx)
		if err != nil {
			return err
		}
		running := 0
		for _, info := range infos {
			if info.Type == "shared_worker" && info.BrowserContextID == bc {
				running++
			}
		}
		if running == 0 {
			return nil
		}
		if time.Since(start) > 10*time.Second {
			return fmt.Errorf("%d SharedWorkers still run 10 s after the page was left", running)
		}
	}
}

// heapUse is one target's memory after gc(): its JS heap (V8's used size,
// Runtime.getHeapUsage) and the wasm linear memories it holds (every
// WebAssembly.Memory object, found with Runtime.queryObjects: neither the
// page nor the worker has to expose its Go instance).
type heapUse struct{ Heap, Wasm float64 }

// memOf reads a target's memory through CDP after a gc() in it.
func memOf(ctx context.Context) (heapUse, error) {
	var u heapUse
	err := chromedp.Do(ctx, chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		const group = "bench-mem"
		defer cdp.Call(ctx, t, cdpruntime.ReleaseObjectGroup, cdpruntime.ReleaseObjectGroupParams{ObjectGroup: group})
		if _, err := cdp.Call(ctx, t, cdpruntime.Evaluate, cdpruntime.EvaluateParams{Expression: `typeof gc === "function" && gc()`}); err != nil {
			return err
		}
		h, err := cdp.Call(ctx, t, cdpruntime.GetHeapUsage, cdp.Empty{})
		if err != nil {
			return err
		}
		u.Heap = h.UsedSize
		proto, err := cdp.Call(ctx, t, cdpruntime.Evaluate, cdpruntime.EvaluateParams{Expression: "WebAssembly.Memory.prototype", ObjectGroup: group})
		if err != nil || proto.Result == nil || proto.Result.ObjectID == "" {
			return fmt.Errorf("WebAssembly.Memory.prototype: %v", err)
		}
		objs, err := cdp.Call(ctx, t, cdpruntime.QueryObjects, cdpruntime.QueryObjectsParams{PrototypeObjectID: proto.Result.ObjectID, ObjectGroup: group})
		if err != nil || objs.Objects == nil {
			return fmt.Errorf("queryObjects(WebAssembly.Memory): %v", err)
		}
		byValue := true
		sum, err := cdp.Call(ctx, t, cdpruntime.CallFunctionOn, cdpruntime.CallFunctionOnParams{
			FunctionDeclaration: "function () { return this.reduce((s, m) => s + m.buffer.byteLength, 0); }",
			ObjectID:            objs.Objects.ObjectID, ReturnByValue: &byValue, ObjectGroup: group})
		if err != nil || sum.Result == nil {
			return fmt.Errorf("summing the wasm memories: %v", err)
		}
		return json.Unmarshal(sum.Result.Value, &u.Wasm)
	}))
	return u, err
}

// tabMem is the memory of one set of open tabs: their pages and the
// shared worker of their browser context (zero when none runs).
type tabMem struct {
	Pages, Worker heapUse
	Workers       int // shared workers found in the browser context
}

func (m tabMem) total() float64 {
	return m.Pages.Heap + m.Pages.Wasm + m.Worker.Heap + m.Worker.Wasm
}

// measureTabs reads the memory of tabs and of every shared worker in
// their browser context.
func (b *browser) measureTabs(tabs []context.Context) (tabMem, error) {
	var m tabMem
	for _, t := range tabs {
		u, err := memOf(t)
		if err != nil {
			return m, fmt.Errorf("memory of a tab: %v", err)
		}
		m.Pages.Heap += u.Heap
		m.Pages.Wasm += u.Wasm
	}
	bc := chromedp.FromContext(tabs[0]).BrowserContextID
	infos, err := chromedp.Targets(b.ctx)
	if err != nil {
		return m, err
	}
	for _, info := range infos {
		if info.Type != "shared_worker" || info.BrowserContextID != bc {
			continue
		}
		wctx, cancel := chromedp.NewContext(b.ctx, chromedp.WithTargetID(info.TargetID), chromedp.WithDetachOnCancel())
		u, err := memOf(wctx)
		cancel()
		if err != nil {
			return m, fmt.Errorf("memory of the shared worker: %v", err)
		}
		m.Worker.Heap += u.Heap
		m.Worker.Wasm += u.Wasm
		m.Workers++
	}
	return m, nil
}

// tabFig is one tab's figures: ms since its navigation when the page's
// module script starts, at ready and at the first tool result, its connect
// and the requests the server saw for that connect and call.
type tabFig struct {
	Module, Ready, First, Connect float64
	Requests                      map[string]int
}

// tabsRun is one run of the second-tab scenario for one client.
type tabsRun struct {
	Tabs       []tabFig // first, second, third tab
	One, Three tabMem
}

// runTabs opens three tabs of c's page one after the other in one new
// browser context (the first tab stays open, so a SharedWorker stays
// warm), each connecting and calling once; memory is read with one tab
// open and with three.
func (b *browser) runTabs(srv *servers, c rtClient) (tabsRun, error) {
	var res tabsRun
	first, closeFirst := b.tab(chromedp.WithNewBrowserContext())
	defer closeFirst()
	if err := chromedp.Do(first); err != nil { // create the tab and its browser context
		return res, err
	}
	if err := chromedp.Do(first, chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		_, err := cdp.Call(ctx, t, network.ClearBrowserCache, cdp.Empty{})
		return err
	})); err != nil {
		return res, err
	}
	tabs := []context.Context{first}
	for i := range 3 {
		ctx := first
		if i > 0 {
			var closeTab context.CancelFunc
			ctx, closeTab = chromedp.NewContext(first) // a tab in the same browser context
			defer closeTab()
			tabs = append(tabs, ctx)
		}
		srv.MCP.reset()
		if err := chromedp.Do(ctx, chromedp.Navigate(rtPage(srv.PageURL, c, srv.MCPURL))); err != nil {
			return res, err
		}
		if _, err := eval[float64](ctx, waitFirst); err != nil {
			return res, err
		}
		time.Sleep(settle)
		marks, err := eval[map[string]float64](ctx, "window.__rt.marks")
		if err != nil {
			return res, err
		}
		res.Tabs = append(res.Tabs, tabFig{Module: marks["moduleStart"], Ready: marks["ready"], First: marks["firstResult"],
			Connect: marks["connectEnd"] - marks["connectStart"], Requests: srv.MCP.snapshot()})
		if i == 0 {
			if res.One, err = b.measureTabs(tabs); err != nil {
				return res, err
			}
		}
	}
	var err error
	res.Three, err = b.measureTabs(tabs)
	return res, err
}

// runtimeResult is the scenario's figures.
type runtimeResult struct {
	visits map[string][]rtVisit // client key → one visit per run
	tabs   map[string][]tabsRun // client key → one per run
	modes  map[string]string    // client key → the runtime load() reported
	load   [2]string
	at     time.Time
	runs   int
	cfg    config
	// answers: client key → its first-agent-answer visits, one per run
	answers map[string][]answerVisit
}

// runtimeScenario runs the visits and the first-agent-answer visits
// (clients alternating, the order rotating) and the tab runs, cfg.rtRuns
// each after a warm-up.
func runtimeScenario(br *browser, srv *servers, cfg config, rep *report) error {
	res := &runtimeResult{visits: map[string][]rtVisit{}, answers: map[string][]answerVisit{}, tabs: map[string][]tabsRun{}, modes: map[string]string{},
		at: time.Now(), runs: cfg.rtRuns, cfg: cfg}
	res.load[0] = loadAvg()
	for r := 0; r <= cfg.rtRuns; r++ {
		logf("runtime modes: run %d/%d (0 = warm-up): load, connect, %d calls, %d concurrent, per mode and the TS SDK", r, cfg.rtRuns, cfg.calls, cfg.concCalls)
		for i := range rtClients {
			c := rtClients[(i+r)%len(rtClients)]
			v, err := br.runRuntimeVisit(srv.PageURL, srv.MCPURL, c, cfg)
			if err != nil {
				return fmt.Errorf("runtime %s: %v", c.label, err)
			}
			res.modes[c.key] = v.Mode
			if r > 0 {
				res.visits[c.key] = append(res.visits[c.key], v)
			}
		}
		logf("runtime modes: run %d/%d: navigation → first agent answer, first and repeat visit", r, cfg.rtRuns)
		for i := range answerClients {
			c := answerClients[(i+r)%len(answerClients)]
			a, err := br.runAnswerVisit(srv, c)
			if err != nil {
				return fmt.Errorf("first agent answer, %s: %v", c.label, err)
			}
			if r > 0 {
				res.answers[c.key] = append(res.answers[c.key], a)
			}
		}
	}
	// No warm-up here: the visits above warmed the servers and Chromium,
	// and every run is a new browser context.
	for r := 1; r <= cfg.rtRuns; r++ {
		logf("runtime modes: three tabs, run %d/%d", r, cfg.rtRuns)
		for i := range tabClients {
			c := tabClients[(i+r)%len(tabClients)]
			t, err := br.runTabs(srv, c)
			if err != nil {
				return fmt.Errorf("tabs %s: %v", c.label, err)
			}
			res.tabs[c.key] = append(res.tabs[c.key], t)
		}
	}
	res.load[1] = loadAvg()
	rep.runtime = res
	return nil
}

// runtimeCommand is the command line that measures the section.
func runtimeCommand(cfg config) string {
	flags := ""
	if cfg.rtRuns != defaultRtRuns {
		flags += fmt.Sprintf(" -rt-runs %d", cfg.rtRuns)
	}
	if f := flagArgs(cfg); len(f) > 0 {
		for _, s := range f {
			flags += " " + s
		}
	}
	if cfg.only == "runtime" {
		return "BENCH_ONLY=runtime make bench  # = go run ./cmd/bench -out BENCHMARKS.md -only runtime" + flags
	}
	return "go run ./cmd/bench -out BENCHMARKS.md" + flags
}
