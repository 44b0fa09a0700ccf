package main

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"time"

	"github.com/mcpwasm/mcpwasm/e2e/engine"
)

// The engines scenario (-only engines): where Go runs, in every engine the
// cross-engine suite drives (e2e/engine). WebKit's SharedWorker cannot
// store a CryptoKey, so there "auto" runs Go in a dedicated Worker; what
// that costs per request is the worker's call time against the
// SharedWorker's in the same engine and run (a server without sign-in,
// which a SharedWorker serves in WebKit too), and against the main thread.

// engRuntimes are the load() runtimes each engine runs, pinned (not
// "auto", which picks a different one per engine).
var engRuntimes = []string{"main", "worker", "shared-worker"}

const defaultEngineCalls = 300

// engVisit is one visit of runtime.html in one engine and runtime.
type engVisit struct {
	Mode  string    // the runtime load() reported
	First float64   // navigation → first tool result, ms (a first visit)
	Calls []float64 // ms per sequential call
}

// engineResult is the scenario's figures.
type engineResult struct {
	versions map[string]string                // engine → its version
	skipped  map[string]string                // engine → why it was not measured
	visits   map[string]map[string][]engVisit // engine → runtime → one per run
	load     [2]string
	at       time.Time
	runs     int
	calls    int
}

// enginesScenario visits runtime.html in every engine, the runtimes
// alternating with the order rotating, cfg.rtRuns runs after a warm-up;
// every visit is a window with storage of its own (no worker running, no
// HTTP cache shared with an earlier visit's context).
func enginesScenario(srv *servers, cfg config, rep *report) error {
	res := &engineResult{versions: map[string]string{}, skipped: map[string]string{},
		visits: map[string]map[string][]engVisit{}, at: time.Now(), runs: cfg.rtRuns, calls: defaultEngineCalls}
	if cfg.calls < res.calls {
		res.calls = cfg.calls
	}
	res.load[0] = loadAvg()
	for _, name := range engine.Names {
		if err := res.runEngine(name, srv); err != nil {
			return err
		}
	}
	res.load[1] = loadAvg()
	rep.engines = res
	return nil
}

// runEngine measures one engine; an engine that does not start is
// reported as not measured (with why), not as a failure of the bench.
func (res *engineResult) runEngine(name string, srv *servers) error {
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	b, err := engine.Start(ctx, name)
	if err != nil {
		logf("engines: %s not measured: %v", name, err)
		res.skipped[name] = err.Error()
		return nil
	}
	defer b.Close()
	res.visits[name] = map[string][]engVisit{}
	for r := 0; r <= res.runs; r++ {
		logf("engines: %s run %d/%d (0 = warm-up): load, connect, %d calls, per runtime", name, r, res.runs, res.calls)
		for i := range engRuntimes {
			rt := engRuntimes[(i+r)%len(engRuntimes)]
			v, err := res.visit(ctx, b, srv, rt)
			if err != nil {
				return fmt.Errorf("engines: %s, runtime %s: %v", name, rt, err)
			}
			if r > 0 {
				res.visits[name][rt] = append(res.visits[name][rt], v)
			}
		}
	}
	res.versions[name] = b.Version() // WebKit's is known once a window opened
	return nil
}

// visit opens runtime.html with runtime rt in a new window, waits for its
// first tool result, then times the sequential calls.
func (res *engineResult) visit(ctx context.Context, b engine.Browser, srv *servers, rt string) (engVisit, error) {
	var v engVisit
	w, err := b.NewWindow(ctx)
	if err != nil {
		return v, err
	}
	defer w.Close()
	page := rtPage(srv.PageURL, rtClient{runtime: rt}, srv.MCPURL)
	if b.Name() == "webkit" && rt == "shared-worker" {
		// WebKit's SharedWorker fails the key check, and load() would move
		// on to a Worker: skip the check to time the SharedWorker itself.
		page += "&trustKeys=shared-worker"
	}
	if err := w.Navigate(ctx, page); err != nil {
		return v, err
	}
	if err := w.Eval(ctx, waitFirst, &v.First); err != nil {
		return v, err
	}
	var got rtVisit
	if err := w.Eval(ctx, fmt.Sprintf("%s(%d, 1, 1)", rtCallsJS, res.calls), &got); err != nil {
		return v, err
	}
	v.Mode, v.Calls = got.Mode, got.Calls
	return v, nil
}

// series is one figure of each run of engine e, runtime rt.
func (res *engineResult) series(e, rt string, f func(engVisit) float64) []float64 {
	var out []float64
	for _, v := range res.visits[e][rt] {
		out = append(out, f(v))
	}
	return out
}

// ratios are f of runtime a over f of runtime b in engine e, within each run.
func (res *engineResult) ratios(e, a, b string, f func(engVisit) float64) []float64 {
	as, bs := res.series(e, a, f), res.series(e, b, f)
	var out []float64
	for i := range min(len(as), len(bs)) {
		out = append(out, as[i]/bs[i])
	}
	return out
}

func callP50(v engVisit) float64 { return percentile(v.Calls, 50) }
func callMean(v engVisit) float64 {
	sum := 0.0
	for _, c := range v.Calls {
		sum += c
	}
	return sum / float64(len(v.Calls))
}
func callP95(v engVisit) float64 { return percentile(v.Calls, 95) }

const enginesSectionTitle = "## Engines: where Go runs, per call, in Chromium, Firefox and WebKit"

func (r *report) enginesMarkdown() string {
	p := r.engines
	if p == nil {
		return ""
	}
	var b strings.Builder
	w := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	w("%s\n\n", enginesSectionTitle)
	var vs []string
	for _, e := range engine.Names {
		if v, ok := p.versions[e]; ok {
			vs = append(vs, v)
		}
	}
	w("- Measured: %s, %s, %s, %d cores; 1-minute load average %s at the start of the scenario, %s at its end\n", p.at.Format("2006-01-02 15:04 MST"), strings.Join(vs, ", "), cpuModel(), runtime.NumCPU(), p.load[0], p.load[1])
	w("- Command: `BENCH_ONLY=engines make bench  # = go run ./cmd/bench -out BENCHMARKS.md -only engines%s`\n", rtRunsFlag(p.runs))
	for _, e := range engine.Names {
		if why, ok := p.skipped[e]; ok {
			w("- %s: not measured (%s)\n", e, why)
		}
	}
	w("\n`cmd/bench/pages/runtime.html` in each engine that e2e/engine drives (Chromium over CDP, Firefox over WebDriver BiDi, WebKitGTK's MiniBrowser over WebDriver), with `load({ runtime })` pinned to each runtime: it loads, connects to the demo server (no sign-in) and calls `echo` once; then %d sequential calls. Each visit is a new window with storage of its own (a first visit: no worker running); the runtimes alternate, the order rotating, %d runs after a warm-up run; a cell is median (min–max) over the runs, a ratio is taken within each run against `main` in the same engine. ", p.calls, p.runs)
	w("In WebKit a `SharedWorker` cannot store a `CryptoKey` (so it cannot keep a sign-in), and `\"auto\"` runs Go in a dedicated `Worker` there: the `worker` row against the `shared-worker` row is what that choice costs per request, and the navigation → first result column what it costs at start (the worker's key check included; WebKit's `shared-worker` visit skips that check through mcp.js's test hook `__mcpwasmTrustKeys`, else `load()` would move on to a `Worker`). WebKit and Firefox round `performance.now()` to whole milliseconds, so their percentiles move in steps of 1 ms; the mean over the calls does not.\n\n")
	w("| engine | runtime | `mcp.runtime` | navigation → first tool result, ms | callTool mean, ms | callTool p50, ms | callTool p95, ms | mean against `main` |\n")
	w("| --- | --- | --- | ---: | ---: | ---: | ---: | ---: |\n")
	for _, e := range engine.Names {
		if _, ok := p.visits[e]; !ok {
			continue
		}
		for _, rt := range engRuntimes {
			vs := p.visits[e][rt]
			mode := ""
			if len(vs) > 0 {
				mode = vs[len(vs)-1].Mode
			}
			against := "1.00×"
			if rt != "main" {
				against = cell(p.ratios(e, rt, "main", callMean), ratio)
			}
			w("| %s | `%s` | `%s` | %s | %s | %s | %s | %s |\n", e, rt, mode,
				cell(p.series(e, rt, func(v engVisit) float64 { return v.First }), ms),
				cell(p.series(e, rt, callMean), ms), cell(p.series(e, rt, callP50), ms), cell(p.series(e, rt, callP95), ms), against)
		}
	}
	w("\n")
	if _, ok := p.visits["webkit"]; ok {
		w("WebKit's dedicated `Worker` against its `SharedWorker`, per call (mean, within each run): %s; navigation → first tool result: %s.\n\n",
			cell(p.ratios("webkit", "worker", "shared-worker", callMean), ratio),
			cell(p.ratios("webkit", "worker", "shared-worker", func(v engVisit) float64 { return v.First }), ratio))
	}
	return b.String()
}

// rtRunsFlag is the -rt-runs flag when runs is not its default.
func rtRunsFlag(runs int) string {
	if runs == defaultRtRuns {
		return ""
	}
	return fmt.Sprintf(" -rt-runs %d", runs)
}

// runEnginesOnly is `-only engines`: the module build, the servers and the
// engines scenario; the report keeps its other sections.
func runEnginesOnly(cfg config, rep *report, webDir string) error {
	srv, err := startServers(webDir, cfg.jsonResponse)
	if err != nil {
		return err
	}
	defer srv.Close()
	if err := enginesScenario(srv, cfg, rep); err != nil {
		return err
	}
	return writeSection(cfg, rep, rep.enginesMarkdown(), "the engines section", sectionSplicer(enginesSectionTitle))
}
