package main

import (
	"fmt"
	"math"
	"sort"
	"strings"
)

// runtimeSectionTitle starts the scenario's section of the report; a run
// with -only runtime replaces that section of the existing report.
const runtimeSectionTitle = "## Runtime modes: long tasks, the message hop, a second tab"

// rtPhases are the windows long tasks are counted in, by their start, ms
// since navigation.
var rtPhases = []struct{ key, label, from, to string }{
	{"load", "`load()` (navigation → ready)", "", "ready"},
	{"connect", "first connect (`connect()` called → resolved)", "connectStart", "connectEnd"},
	{"calls", "the first call and the sequential calls", "connectEnd", "callsEnd"},
}

// phaseTasks are a visit's long tasks that started in the phase.
func phaseTasks(v rtVisit, from, to string) []longtask {
	lo := 0.0
	if from != "" {
		lo = v.Marks[from]
	}
	hi := v.Marks[to]
	var out []longtask
	for _, t := range v.Longtasks {
		if t.Start >= lo && t.Start < hi {
			out = append(out, t)
		}
	}
	return out
}

// longestSum are the longest and the sum of tasks, ms.
func longestSum(ts []longtask) (longest, sum float64) {
	for _, t := range ts {
		longest = math.Max(longest, t.Ms)
		sum += t.Ms
	}
	return
}

// visitSeries is one figure of every visit of a client.
func (p *runtimeResult) visitSeries(key string, f func(rtVisit) float64) []float64 {
	return series(p.visits[key], f)
}

// answerSeries is one figure of every first-agent-answer visit of a
// client (none for a client not in answerClients).
func (p *runtimeResult) answerSeries(key string, f func(answerVisit) float64) []float64 {
	return series(p.answers[key], f)
}

// answerRatio is a first-agent-answer figure of client a over client b,
// run by run.
func (p *runtimeResult) answerRatio(a, b string, f func(answerVisit) float64) []float64 {
	return runRatios(p.answers[a], p.answers[b], f)
}

// answerLabels names the answerClients.
func answerLabels() string {
	var l []string
	for _, c := range answerClients {
		l = append(l, c.label)
	}
	return strings.Join(l, ", ")
}

// visitRatio is a figure of client a over client b, run by run.
func (p *runtimeResult) visitRatio(a, b string, f func(rtVisit) float64) []float64 {
	return runRatios(p.visits[a], p.visits[b], f)
}

// series is figure f of every visit in vs.
func series[T any](vs []T, f func(T) float64) []float64 {
	var out []float64
	for _, v := range vs {
		out = append(out, f(v))
	}
	return out
}

// runRatios is figure f of va over vb, run by run (a run whose vb figure
// is 0 left out).
func runRatios[T any](va, vb []T, f func(T) float64) []float64 {
	var out []float64
	for i := range min(len(va), len(vb)) {
		if d := f(vb[i]); d != 0 {
			out = append(out, f(va[i])/d)
		}
	}
	return out
}

func maxOf(xs []float64) float64 {
	m := math.Inf(-1)
	for _, x := range xs {
		m = math.Max(m, x)
	}
	return m
}

func (p *runtimeResult) tput(v rtVisit) float64 { return float64(p.cfg.concCalls) / (v.ConcMs / 1000) }

// tabSeries is one figure of one tab (0, 1, 2) of every run of a client.
func (p *runtimeResult) tabSeries(key string, tab int, f func(tabFig) float64) []float64 {
	var out []float64
	for _, r := range p.tabs[key] {
		if tab < len(r.Tabs) {
			out = append(out, f(r.Tabs[tab]))
		}
	}
	return out
}

// memSeries is one memory figure with one or three tabs open.
func (p *runtimeResult) memSeries(key string, three bool, f func(tabMem) float64) []float64 {
	var out []float64
	for _, r := range p.tabs[key] {
		m := r.One
		if three {
			m = r.Three
		}
		out = append(out, f(m))
	}
	return out
}

// requestTotal is the number of requests in counts.
func requestTotal(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

// shortCounts renders counts as "N (kind n, …)" without the "MCP " prefix.
func shortCounts(m map[string]int) string {
	var kinds []string
	for _, k := range sortedKeys(m) {
		kinds = append(kinds, fmt.Sprintf("%s %d", strings.TrimPrefix(k, "MCP "), m[k]))
	}
	return fmt.Sprintf("%d (%s)", requestTotal(m), strings.Join(kinds, ", "))
}

// runtimeMarkdown is the scenario's section ("" when it did not run).
func (r *report) runtimeMarkdown() string {
	p := r.runtime
	if p == nil {
		return ""
	}
	var b strings.Builder
	w := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	w("%s\n\n", runtimeSectionTitle)
	w("%s", r.measuredLine(p.at, p.load))
	w("- Command: `%s`\n", runtimeCommand(p.cfg))
	var chosen []string
	for _, c := range rtClients[:3] {
		chosen = append(chosen, fmt.Sprintf("%s → `%s`", c.label, p.modes[c.key]))
	}
	w("- The runtime each `load()` reported (`mcp.runtime`): %s\n\n", strings.Join(chosen, ", "))
	w("`cmd/bench/pages/runtime.html` loads mcp.js with `load({ runtime })` (or the TS SDK bundle), then, as an app's first view would, connects to the demo server and calls `echo` once; the bench then runs %d sequential calls with a 10 ms `setTimeout` chain beside them and %d calls shared by %d concurrent callers. ", p.cfg.calls, p.cfg.concCalls, p.cfg.workers)
	w("Each visit is a new browser context (no HTTP cache, no wasm code cache, no SharedWorker running: a first visit); after the calls the tab is closed and, once no SharedWorker of it runs, the page opens again in a new tab of the same browser context (a repeat visit: the HTTP cache, the module's copy in the Cache API (`load()` makes it two seconds after the first compile; the first visit's calls outlast that) and the stored hints of the first visit, no runtime running), timed to its first tool result again; the four clients alternate, the order rotating, %d runs after a warm-up run; a cell is median (min–max) over the runs, a ratio is taken within each run. ", p.runs)
	w("Long tasks are the page's main-thread tasks over 50 ms (PerformanceObserver `longtask`, observed from before any module runs), counted in the phase in which they start; in the worker modes compile, instantiate and the Go runtime run in the worker, whose tasks the page does not see and need not wait for.\n\n")

	cols := rtClients
	w("### Main-thread long tasks and a 10 ms timer\n\n| phase | figure |")
	for _, c := range cols {
		w(" %s |", c.label)
	}
	w("\n| --- | --- |%s\n", strings.Repeat(" ---: |", len(cols)))
	for _, ph := range rtPhases {
		for _, fig := range []struct {
			label string
			f     func([]longtask) float64
		}{
			{"longest task, ms", func(ts []longtask) float64 { l, _ := longestSum(ts); return l }},
			{"sum of the tasks, ms", func(ts []longtask) float64 { _, s := longestSum(ts); return s }},
			{"tasks", func(ts []longtask) float64 { return float64(len(ts)) }},
		} {
			w("| %s | %s |", ph.label, fig.label)
			for _, c := range cols {
				f := func(v rtVisit) float64 { return fig.f(phaseTasks(v, ph.from, ph.to)) }
				w(" %s |", cell(p.visitSeries(c.key, f), ms))
			}
			w("\n")
		}
	}
	w("| the sequential calls | worst delay of the 10 ms timer, ms |")
	for _, c := range cols {
		w(" %s |", cell(p.visitSeries(c.key, func(v rtVisit) float64 { return v.TimerWorst }), ms))
	}
	w("\n| navigation → ready | ms |")
	for _, c := range cols {
		w(" %s |", cell(p.visitSeries(c.key, func(v rtVisit) float64 { return v.Marks["ready"] }), ms))
	}
	w("\n| navigation → first tool result | ms |")
	for _, c := range cols {
		w(" %s |", cell(p.visitSeries(c.key, func(v rtVisit) float64 { return v.Marks["firstResult"] }), ms))
	}
	w("\n| navigation → first tool result, repeat visit | ms |")
	for _, c := range cols {
		w(" %s |", cell(p.visitSeries(c.key, func(v rtVisit) float64 { return v.Repeat }), ms))
	}
	for _, row := range []struct {
		label string
		f     func(answerVisit) float64
	}{
		{"navigation → first agent answer", func(a answerVisit) float64 { return a.First.At }},
		{"navigation → first agent answer, repeat visit", func(a answerVisit) float64 { return a.Repeat.At }},
		{"of the first agent answer (first visit), ready → answer: the turn", func(a answerVisit) float64 { return a.First.At - a.First.Ready }},
	} {
		w("\n| %s | ms |", row.label)
		for _, c := range cols {
			w(" %s |", cell(p.answerSeries(c.key, row.f), ms))
		}
	}
	w("\n\n")
	w("Navigation → first agent answer is timed for %s (not for `worker`, to keep the scenario short) in visits of its own, first and repeat as above, of the same page given the stand-in model's URL (`cmd/bench/pages/answer.js`): the page loads its client and asks %q; mcpwasm makes a catalog of the demo server and runs `cat.agent` with `mcp.models.openai` (connect and tool listing happen inside the turn); the TS SDK's client connects and lists the tools, and a small JS loop asks the model (`stream: true`, the SSE parsed in the page), makes the tool call with `callTool` and asks again. The model calls `echo`, then answers %q, which both pages and the bench check; the time is taken when that text is complete. The stand-in answers at once (no pause between its events): the figure is the client's part of a first answer, not a model's.\n\n",
		answerLabels(), answerAsk, answerWant)
	if len(p.visits["main"]) > 0 && p.visits["main"][0].NoLongtask != "" {
		w("(The browser reports no long tasks: %s.)\n\n", p.visits["main"][0].NoLongtask)
	}

	w("### Per call through the message hop\n\nThe same visits' sequential calls (the timer running beside them, for every client alike) and concurrent calls.\n\n| figure |")
	for _, c := range cols {
		w(" %s |", c.label)
	}
	w(" `worker`/`main` | `auto`/`main` | `main`/TS |\n| --- |%s ---: | ---: | ---: |\n", strings.Repeat(" ---: |", len(cols)))
	figs := []struct {
		label string
		f     func(rtVisit) float64
		fmt   func(float64) string
	}{
		{fmt.Sprintf("callTool p50, ms (%d sequential)", p.cfg.calls), func(v rtVisit) float64 { return percentile(v.Calls, 50) }, ms},
		{fmt.Sprintf("callTool p95, ms (%d sequential)", p.cfg.calls), func(v rtVisit) float64 { return percentile(v.Calls, 95) }, ms},
		{fmt.Sprintf("throughput, calls/s (%d concurrent callers)", p.cfg.workers), p.tput, num},
	}
	for _, fg := range figs {
		w("| %s |", fg.label)
		for _, c := range cols {
			w(" %s |", cell(p.visitSeries(c.key, fg.f), fg.fmt))
		}
		w(" %s | %s | %s |\n", cell(p.visitRatio("worker", "main", fg.f), ratio), cell(p.visitRatio("shared", "main", fg.f), ratio), cell(p.visitRatio("main", "ts", fg.f), ratio))
	}
	w("\n")

	w("### A second and a third tab\n\nOne new browser context per client and run (HTTP cache cleared): the first tab loads, connects and calls once and stays open; then a second and a third tab of the same page open in the same context, one after the other, each connecting and calling once. With `auto` the second tab finds the SharedWorker running (the Go runtime warm, the module compiled); with `main` every tab loads its own runtime (from the HTTP cache and the wasm code cache). The requests are the demo server's count for each tab's connect and first call (last run): the second tab's connect has the hint store of the first (the server's protocol era known), and the CORS preflight is cached.\n\n| figure |")
	tcols := tabClients
	for _, c := range tcols {
		w(" %s |", c.label)
	}
	w("\n| --- |%s\n", strings.Repeat(" ---: |", len(tcols)))
	names := []string{"first", "second", "third"}
	for i, name := range names {
		for _, fg := range []struct {
			label string
			f     func(tabFig) float64
		}{
			{"navigation → ready, ms", func(t tabFig) float64 { return t.Ready }},
			{"navigation → the page's module script runs, ms", func(t tabFig) float64 { return t.Module }},
			{"the page's module script runs → ready (mcp.js and `load()`), ms", func(t tabFig) float64 { return t.Ready - t.Module }},
			{"navigation → first tool result, ms", func(t tabFig) float64 { return t.First }},
			{"its first connect, ms", func(t tabFig) float64 { return t.Connect }},
		} {
			w("| %s tab: %s |", name, fg.label)
			for _, c := range tcols {
				w(" %s |", cell(p.tabSeries(c.key, i, fg.f), ms))
			}
			w("\n")
		}
	}
	for i, name := range names[:2] {
		w("| %s tab: requests for its connect and first call |", name)
		for _, c := range tcols {
			runs := p.tabs[c.key]
			if len(runs) == 0 || len(runs[len(runs)-1].Tabs) <= i {
				w(" — |")
				continue
			}
			w(" %s |", shortCounts(runs[len(runs)-1].Tabs[i].Requests))
		}
		w("\n")
	}
	w("\n")

	w("### Memory with three tabs open against one\n\nRead through CDP in the same runs, after `gc()` in each target: a target's JS heap is V8's used heap size (`Runtime.getHeapUsage`); its wasm memory is the byte length of every `WebAssembly.Memory` in it (found with `Runtime.queryObjects`, so neither the page nor the worker exposes its Go instance). Tabs are summed; the shared worker is read on its own CDP target (`shared_worker`) in the tabs' browser context. `main`: each tab holds its own Go runtime and wasm memory; `auto`: the worker holds one runtime for all tabs and each tab only its JS side. A wasm memory grows and never shrinks: it is the Go heap's high-water mark.\n\n")
	w("| client | tabs open | tabs' JS heap | tabs' wasm memory | shared worker's JS heap | shared worker's wasm memory | total | total / one tab's total |\n| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n")
	for _, c := range tcols {
		one := p.memSeries(c.key, false, tabMem.total)
		for _, three := range []bool{false, true} {
			n := "1"
			if three {
				n = "3"
			}
			tot := p.memSeries(c.key, three, tabMem.total)
			var rel []float64
			for i := range min(len(tot), len(one)) {
				if one[i] > 0 {
					rel = append(rel, tot[i]/one[i])
				}
			}
			w("| %s | %s | %s | %s | %s | %s | %s | %s |\n", c.label, n,
				cell(p.memSeries(c.key, three, func(m tabMem) float64 { return m.Pages.Heap }), mb),
				cell(p.memSeries(c.key, three, func(m tabMem) float64 { return m.Pages.Wasm }), mb),
				cell(p.memSeries(c.key, three, func(m tabMem) float64 { return m.Worker.Heap }), mb),
				cell(p.memSeries(c.key, three, func(m tabMem) float64 { return m.Worker.Wasm }), mb),
				cell(tot, mb), cell(rel, ratio))
		}
	}
	w("\n")
	w("%s", r.runtimeGoals())
	return b.String()
}

// runtimeGoals is the runtime modes' goals table, computed from this
// scenario's figures.
func (r *report) runtimeGoals() string {
	p := r.runtime
	var b strings.Builder
	w := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	met := func(ok bool) string {
		if ok {
			return "**met**"
		}
		return "missed"
	}
	w("### The runtime modes' goals in this run\n\n| goal | client | measured | status |\n| --- | --- | --- | --- |\n")
	for _, c := range rtClients {
		var worst float64
		var where string
		for _, ph := range rtPhases {
			l := maxOf(p.visitSeries(c.key, func(v rtVisit) float64 { l, _ := longestSum(phaseTasks(v, ph.from, ph.to)); return l }))
			if l > worst {
				worst, where = l, ph.label
			}
		}
		m := "none over 50 ms in any run"
		if worst > 0 {
			m = fmt.Sprintf("the longest in %d runs: %s ms, in %s", p.runs, ms(worst), where)
		}
		w("| no main-thread long task over 50 ms during load, first connect and the calls | %s | %s | %s |\n", c.label, m, met(worst <= 50))
	}
	ts := median(p.visitSeries("ts", func(v rtVisit) float64 { return v.TimerWorst }))
	for _, c := range rtClients[:3] {
		d := median(p.visitSeries(c.key, func(v rtVisit) float64 { return v.TimerWorst }))
		w("| the 10 ms timer's worst delay during the calls no worse than the TS SDK's | %s | %s ms against %s ms (medians) | %s |\n", c.label, ms(d), ms(ts), met(d <= ts))
	}
	ready := median(p.tabSeries("shared", 1, func(t tabFig) float64 { return t.Ready }))
	own := median(p.tabSeries("shared", 1, func(t tabFig) float64 { return t.Ready - t.Module }))
	tsReady := median(p.tabSeries("ts", 1, func(t tabFig) float64 { return t.Ready }))
	w("| second tab, runtime warm: navigation → ready ≤ 50 ms | %s | %s ms (first tab %s ms); of it, the page's module script runs → ready: %s ms; the TS SDK's second tab: %s ms to ready | %s |\n", tabClients[0].label, ms(ready),
		ms(median(p.tabSeries("shared", 0, func(t tabFig) float64 { return t.Ready }))), ms(own), ms(tsReady), met(ready <= 50))
	p50 := func(v rtVisit) float64 { return percentile(v.Calls, 50) }
	for _, c := range rtClients[1:3] {
		rt := median(p.visitRatio(c.key, "main", p50))
		w("| the message hop costs ≤ 10%% per call (callTool p50 against `main`) | %s | %s | %s |\n", c.label, ratio(rt), met(rt <= 1.10))
	}
	w("\n")
	return b.String()
}

// runRuntimeOnly is `-only runtime`: the module build, the TS SDK bundle,
// the servers, Chromium and the runtime scenario; the report keeps its
// other sections.
func runRuntimeOnly(cfg config, rep *report, webDir string) error {
	srv, err := startServers(webDir, cfg.jsonResponse)
	if err != nil {
		return err
	}
	defer srv.Close()
	br, err := startBrowser()
	if err != nil {
		return err
	}
	defer br.Close()
	rep.chromium = br.Version
	if err := runtimeScenario(br, srv, cfg, rep); err != nil {
		return err
	}
	return writeSection(cfg, rep, rep.runtimeMarkdown(), "the runtime section", sectionSplicer(runtimeSectionTitle))
}

// sortedKeys are m's keys in order.
func sortedKeys(m map[string]int) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
