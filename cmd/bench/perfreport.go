package main

import (
	"fmt"
	"math"
	"os"
	"strings"
	"time"
)

// perfSectionTitle starts the scenario's section of the report; a run with
// -only perf replaces that section of the existing report.
const perfSectionTitle = "## Start-up breakdown, memory and payload"

// perfMarkdown is the scenario's section ("" when it did not run).
func (r *report) perfMarkdown() string {
	p := r.perf
	if p == nil {
		return ""
	}
	var b strings.Builder
	w := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	w("%s\n\n", perfSectionTitle)
	w("%s", r.measuredLine(p.at, p.load))
	w("- Command: `%s`\n\n", perfCommand(r.cfg))

	w("### Start-up, phase by phase\n\n")
	w("`cmd/bench/pages/startup.html` loads mcp.js as `wasm.html` does and marks each phase from outside mcp.js: the Resource Timing entry of `mcp.wasm` (request, first byte, last byte), wrappers around `WebAssembly.compileStreaming` and `WebAssembly.instantiate` (compile + instantiate), `Go.prototype.run` (the runtime starts), the first read of `globalThis.__mcpwasmBoot` (the first statement of `main.main`: the Go runtime and every package's `init` have run), the call of its `ready` (the API is built) and `load()` resolving. ")
	w("Each run is a new browser context: a cold load (HTTP cache cleared) and then a reload (the HTTP cache, and the module's copy in the Cache API once `load()` made it, two seconds after the compile). %d runs after a warm-up; a cell is median (min–max) in ms since navigation start. ", p.runs)
	w("Phases overlap where the browser overlaps them (compile runs while the body downloads), so they do not add up to the total.\n\n")
	w("| phase | cold, ms | reload, ms |\n| --- | ---: | ---: |\n")
	for _, ph := range startupPhases {
		w("| %s | %s | %s |\n", ph.label, cell(phase(p.cold, ph.from, ph.to), ms), cell(phase(p.warm, ph.from, ph.to), ms))
	}
	cn, cl := longtaskCells(p.cold)
	wn, wl := longtaskCells(p.warm)
	w("| main-thread long tasks (PerformanceObserver `longtask`, > 50 ms) during the load, count | %s | %s |\n", cn, wn)
	w("| the longest of them, ms | %s | %s |\n\n", cl, wl)
	if len(p.cold) > 0 {
		w("Long tasks of the last run, longest first: cold load %s; reload %s.", sortedLongtasks(p.cold[len(p.cold)-1]), sortedLongtasks(p.warm[len(p.warm)-1]))
		if s := p.cold[len(p.cold)-1].NoLongtask; s != "" {
			w(" (The browser reports no long tasks: %s.)", s)
		}
		w("\n\n")
	}
	w("%s\n", p.startupFigures())
	w("%s\n", startupNotes)
	w("%s", p.preloadMarkdown())
	w("%s", p.compileMarkdown())

	w("### Memory\n\n")
	w("One page (`wasm.html`, a new browser context) against an echo server (go-sdk) served without sessions and without list-changed notifications on its own loopback origin: its clients hold no long-lived request, whereas the demo server's (a 2025-11-25 standalone GET stream, or the 2026-07-28 `subscriptions/listen` stream a client opens for a server that announces list changes) would use up the browser's 6 connections per HTTP/1.1 origin at the seventh client, and further requests would wait (servers on HTTP/2 multiplex and have no such limit); `gc()` (`--expose-gc`) before each reading. Wasm memory is the Go heap's linear memory, which grows and never shrinks (it is the high-water mark); the JS heap is `performance.memory.usedJSHeapSize` (`--enable-precise-memory-info`). Clients connect 10 at a time, each to its own URL (`?c=i`), and stay connected until the row that closes them; the calls are `callTool(\"echo\")` in sequence on one client; the catalog has 10 servers (`?s=i`, the same echo server) and lists their tools with `cat.tools()`.\n\n")
	if p.memErr != "" {
		w("**The memory run did not finish in this run** (%s), so the table is empty: the readings come back only when the page script ends. To reproduce: `BENCH_ONLY=perf make bench`.\n\n", p.memErr)
	}
	w("| after | wasm memory | JS heap |\n| --- | ---: | ---: |\n")
	for _, m := range p.mem {
		w("| %s | %s | %s |\n", m.Label, mb(m.Wasm), mb(m.Heap))
	}
	w("\n%s%s\n", p.memoryFigures(), memoryNotes)
	w("%s\n", r.payloadNotes())
	return b.String()
}

// startupNotes explains the breakdown; the figures it names were measured
// as its text says.
const startupNotes = `What is whose: the page's own scripts and the download are the network's; compile and instantiate are V8's (Liftoff compiles while the body streams in); the Go runtime phase is the runtime's start (heap, scheduler) and the init of every linked package — ours keep theirs to what the first connect needs (regexps are compiled on first use, a generator-only sentence is a function; the operation table and the option rules are built at start-up because the first call uses them), and the rest is the standard library's and the dependencies', e.g. jsonschema-go compiles a regexp and go-sdk's internal/json formats an error at init; ` + "`main.main`" + ` is our start-up (it reads the boot object, builds the operation table, hands the API over).

What is left to overlap: mcp.js's ` + "`preload()`" + ` starts the fetch and compile of mcp.wasm (or the worker that does them) as the page imports mcp.js, and ` + "`load()`" + ` joins it, so the request goes out while the page's own code still runs; the first table row is what that overlap can win at most on a first visit (this page calls ` + "`load()`" + ` at once, so it measures the plain path). Compile already overlaps the download (` + "`compileStreaming`" + `); the "last byte → instantiated" row is the compile left after the last byte, which a faster download cannot shorten. The main-thread long tasks are the synchronous part of instantiate and the Go runtime's start (one task until ` + "`main.main`" + ` yields): this page pins ` + "`load({ runtime: \"main\" })`" + ` to show them; the runtime section below measures the same load with the runtime in a worker, the default.
`

// memoryNotes reads the memory table.
const memoryNotes = `Per call nothing should grow: the Go heap is reused, so the wasm memory after N and 2N more calls is the same unless calls leak, and the JS heap differs only by garbage the next gc() takes. Per client the cost is a session's Go objects (go-sdk's client session, our state machine, the transport). The linear memory never shrinks, so the rows after closing cannot show the Go heap going back down; what they show is that the later work (the calls, a catalog of 10 servers) fits in what the 100 clients left.
`

// largePackages say what each large package is there for (see the table
// of linked packages below) and which are ours to remove; pkgs are the
// package table's names whose code each row sums.
var largePackages = []struct {
	pkgs                   []string
	name, by, what, remove string
}{
	{[]string{"crypto_tls", "crypto_x509", "crypto_rsa", "crypto_dsa", "crypto_internal_fips140", "math_big"},
		"crypto/tls, crypto/x509, crypto/rsa, crypto/dsa, most of crypto/internal/fips140 and math/big",
		"`net/http`'s client `Transport` (js/wasm still links the native dialer and TLS stack next to its fetch path); also golang.org/x/oauth2/internal (x509 key parsing for JWT configs we do not use)",
		"nothing at run time in a browser: every request goes through fetch",
		"not while go-sdk's `mcp` package builds on `http.Client` and `http.Request`: our requests already go through our own fetch transport (`jsbridge/jsfetch`), but the linker keeps `net/http`'s `Transport` for go-sdk's default client; a build without it measured 2.41 MB brotli against 2.59 MB with it (once, outside this bench)"},
	{[]string{"net_http", "net", "vendor_golang.org_x_net"},
		"net/http (+ http2, internal) and net",
		"go-sdk's Streamable HTTP and SSE transports, golang.org/x/oauth2, our own OAuth and transport code",
		"the request and response types, header handling, the js/wasm fetch RoundTripper",
		"no: the request/response types are the interface to go-sdk"},
	{[]string{"encoding_gob"},
		"encoding/gob",
		"go-sdk's `mcp` package (server.go: the server's pagination cursor)",
		"nothing in a client; linked because client and server share one package",
		"no (go-sdk's); an upstream split of the cursor code would drop it"},
	{[]string{"reflect", "internal_reflectlite", "encoding_json", "github.com_segmentio"},
		"reflect, encoding/json, github.com/segmentio/encoding/json",
		"go-sdk (segmentio for its JSON), our wire checks and the JS bridge",
		"JSON on the wire and to the page",
		"no"},
	{[]string{"github.com_google_jsonschema_go", "regexp"},
		"github.com/google/jsonschema-go (+ regexp)",
		"go-sdk: tool input/output schemas",
		"validating and inferring schemas",
		"no (go-sdk's)"},
	{[]string{"github.com_yosida95_uritemplate"},
		"github.com/yosida95/uritemplate (+ regexp)",
		"go-sdk: resource templates",
		"matching resource template URIs",
		"no (go-sdk's)"},
	{[]string{"log_slog"},
		"log/slog",
		"go-sdk, jsonschema-go, our redaction of secrets in logs (oauth, agent)",
		"structured logging",
		"no: small, and go-sdk needs it anyway"},
	{[]string{"crypto_ecdsa", "crypto_elliptic", "crypto_sha256"},
		"crypto/ecdsa, crypto/elliptic (P-256), crypto/sha256",
		"our DPoP proofs and JWT assertions (oauth)",
		"DPoP key pairs and signatures",
		"no: DPoP is a feature"},
	{[]string{"github.com_mcpwasm_mcpwasm"},
		"mcpwasm (ours)",
		"—",
		"the client, catalog, agent, OAuth, the JS API",
		"nothing large left to drop"},
}

// payloadNotes is the table of largePackages with this run's code bytes
// (when the package table was measured: not in -only perf).
func (r *report) payloadNotes() string {
	var b strings.Builder
	b.WriteString("### What the large packages are there for\n\n")
	if r.size != nil {
		b.WriteString("Code is the function code of the packages in this run's unstripped build (the table of linked packages below), before compression.\n\n| package(s) | code | brought in by | what for | ours to remove? |\n| --- | ---: | --- | --- | --- |\n")
	} else {
		b.WriteString("| package(s) | brought in by | what for | ours to remove? |\n| --- | --- | --- | --- |\n")
	}
	for _, p := range largePackages {
		if r.size != nil {
			n := float64(r.pkgCode(p.pkgs...))
			fmt.Fprintf(&b, "| %s | %s (%.1f%%) | %s | %s | %s |\n", p.name, kb(n), 100*n/float64(r.size.fullCode), p.by, p.what, p.remove)
		} else {
			fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", p.name, p.by, p.what, p.remove)
		}
	}
	return b.String()
}

// spliceSection replaces the section of the report file out that starts
// with title (up to the next "## " heading) with section, or appends it,
// and writes the file.
func spliceSection(out, title, section string) error {
	old, err := os.ReadFile(out)
	if err != nil && !os.IsNotExist(err) {
		return err
	}
	s := string(old)
	i := strings.Index(s, title)
	if i < 0 {
		if s != "" && !strings.HasSuffix(s, "\n\n") {
			s += "\n"
		}
		return os.WriteFile(out, []byte(s+section), 0o644)
	}
	rest := s[i+len(title):]
	end := len(s)
	if j := strings.Index(rest, "\n## "); j >= 0 {
		end = i + len(title) + j + 1
	}
	return os.WriteFile(out, []byte(s[:i]+section+s[end:]), 0o644)
}

// existingSection is the section of the report file out that starts with
// title, up to the next section ("" when there is none).
func existingSection(out, title string) string {
	b, err := os.ReadFile(out)
	if err != nil {
		return ""
	}
	s := string(b)
	i := strings.Index(s, "\n"+title+"\n")
	if i < 0 {
		return ""
	}
	s = s[i+1:]
	if j := strings.Index(s[len(title):], "\n## "); j >= 0 {
		s = s[:len(title)+j+1]
	}
	return s
}

// writeSection ends an -only run: it prints the section md and, unless
// cfg.out is empty, puts it into the report file with splice, keeping the
// report's other sections.
func writeSection(cfg config, rep *report, md, what string, splice func(out, md string) error) error {
	rep.elapsed = time.Since(rep.start)
	fmt.Print(md)
	if cfg.out == "" {
		return nil
	}
	out := reportPath(cfg)
	if err := splice(out, md); err != nil {
		return err
	}
	logf("wrote %s of %s in %s", what, out, rep.elapsed.Round(time.Second))
	return nil
}

// sectionSplicer is spliceSection for the section that starts with title.
func sectionSplicer(title string) func(out, md string) error {
	return func(out, md string) error { return spliceSection(out, title, md) }
}

// runPerfOnly is `-only perf`: the module build, the servers, Chromium and
// the start-up and memory scenario; the report keeps its other sections.
func runPerfOnly(cfg config, rep *report, webDir string) error {
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
	if err := perfScenario(br, srv, cfg, rep); err != nil {
		return err
	}
	return writeSection(cfg, rep, rep.perfMarkdown(), "the start-up, memory and payload section", sectionSplicer(perfSectionTitle))
}

// perfCommand is the command line that measures the section.
func perfCommand(cfg config) string {
	flags := runsFlag(cfg)
	if f := flagArgs(cfg); len(f) > 0 {
		flags += " " + strings.Join(f, " ")
	}
	if cfg.only == "perf" {
		return "BENCH_ONLY=perf make bench  # = go run ./cmd/bench -out BENCHMARKS.md -only perf" + flags
	}
	return "go run ./cmd/bench -out BENCHMARKS.md" + flags
}

func runsFlag(cfg config) string {
	if cfg.runs != 5 {
		return fmt.Sprintf(" -runs %d", cfg.runs)
	}
	return ""
}

// phaseMedian is the median of a start-up phase over runs, ms.
func phaseMedian(runs []startupRun, key string) float64 {
	for _, ph := range startupPhases {
		if ph.key == key {
			return median(phase(runs, ph.from, ph.to))
		}
	}
	return math.NaN()
}

// startupFigures reads this run's breakdown: what the Go side and our
// main.main cost cold and warm.
func (p *perfResult) startupFigures() string {
	return fmt.Sprintf("In this run (medians), go.run → main.main took %s ms on the cold load and %s ms on the reload, and our own main.main %s ms and %s ms. The reload differs from the cold load by what the browser kept, and neither phase contains the download, so what the cold load adds there is compiling the functions start-up runs for the first time (V8 compiles wasm lazily, on the calling thread), not the work they do: most likely the reload, in the same renderer process, reuses the code V8 compiled for the same module bytes, since Chromium's code cache for wasm holds nothing after a visit this short (its histogram `SiteIsolatedCodeCache.WASM.Behaviour` counted no entry written, by hand on 2026-12-01).\n",
		ms(phaseMedian(p.cold, "runtime")), ms(phaseMedian(p.warm, "runtime")), ms(phaseMedian(p.cold, "main")), ms(phaseMedian(p.warm, "main")))
}

// memRowNamed is the first memory row whose label starts with prefix.
func (p *perfResult) memRowNamed(prefix string) (memRow, bool) {
	for _, m := range p.mem {
		if strings.HasPrefix(m.Label, prefix) {
			return m, true
		}
	}
	return memRow{}, false
}

// memoryFigures reads this run's memory table: growth per call and per
// client.
func (p *perfResult) memoryFigures() string {
	var b strings.Builder
	n, ok1 := p.memRowNamed("1 client, 500 more")
	n2, ok2 := p.memRowNamed("1 client, 1,000 more")
	if ok1 && ok2 {
		fmt.Fprintf(&b, "In this run, from N to 2N calls the wasm memory changed by %s and the JS heap by %s. ", signedKB(n2.Wasm-n.Wasm), signedKB(n2.Heap-n.Heap))
	}
	c10, ok1 := p.memRowNamed("10 clients")
	c100, ok2 := p.memRowNamed("100 clients")
	if ok1 && ok2 {
		fmt.Fprintf(&b, "From 10 to 100 connected clients the wasm memory grew by %s (%s a client) and the JS heap by %s. ", signedKB(c100.Wasm-c10.Wasm), kb((c100.Wasm-c10.Wasm)/90), signedKB(c100.Heap-c10.Heap))
	}
	return b.String()
}

func signedKB(v float64) string {
	if v < 0 {
		return "−" + kb(-v)
	}
	return "+" + kb(v)
}

// compileFigures are the rows of the compile experiment's table.
var compileFigures = []struct {
	label string
	f     func(compileVisit) float64
}{
	{"navigation → ready, ms", func(v compileVisit) float64 { return v.Ready }},
	{"first connect, ms", func(v compileVisit) float64 { return v.Connect }},
	{"a second connect in the same page, ms", func(v compileVisit) float64 { return v.Reconnect }},
	{"navigation → first tool result, ms", func(v compileVisit) float64 { return v.First }},
}

// compileSeries is f of each visit.
func compileSeries(vs []compileVisit, f func(compileVisit) float64) []float64 { return seriesOf(vs, f) }

// seriesOf is f of each of vs, in order.
func seriesOf[T any](vs []T, f func(T) float64) []float64 {
	out := make([]float64, len(vs))
	for i, v := range vs {
		out[i] = f(v)
	}
	return out
}

// compileRatio is eager/lazy of f, run by run.
func (p *perfResult) compileRatio(f func(compileVisit) float64) []float64 {
	var out []float64
	for i := range min(len(p.lazy), len(p.eager)) {
		if l := f(p.lazy[i]); l > 0 {
			out = append(out, f(p.eager[i])/l)
		}
	}
	return out
}

// compileMarkdown is the compile experiment's subsection.
func (p *perfResult) compileMarkdown() string {
	var b strings.Builder
	w := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	w("### Lazy and eager compilation: what the cold paths cost\n\n")
	w("A first visit costs more than the same work done again: the first connect (side by side) takes several times a second connect in the same page. To measure how much of that is V8 compiling each wasm function on its first call (lazy compilation, Chromium's default), the same first visit runs in a second Chromium started with `--js-flags=%s`, which compiles every function when the module is compiled. Each visit is `runtime.html` with `load({ runtime: \"main\" })` in a new browser context: it loads, connects to the demo server and calls `echo` once, then connects a second client in the same page. The two browsers alternate, %d runs after a warm-up each; a cell is median (min–max), a ratio is taken within each run.\n\n", eagerJSFlags, p.runs)
	if p.compileErr != "" {
		w("**The experiment did not finish in this run** (%s). To reproduce: `BENCH_ONLY=perf make bench`.\n\n", p.compileErr)
		return b.String()
	}
	w("| figure | lazy (Chromium's default) | eager (`--no-wasm-lazy-compilation`) | eager/lazy |\n| --- | ---: | ---: | ---: |\n")
	for _, fg := range compileFigures {
		w("| %s | %s | %s | %s |\n", fg.label, cell(compileSeries(p.lazy, fg.f), ms), cell(compileSeries(p.eager, fg.f), ms), cell(p.compileRatio(fg.f), ratio))
	}
	w("\n%s\n", p.compileFiguresText())
	return b.String()
}

// compileFiguresText reads the experiment: the share of the first
// connect's cold cost that lazy compilation explains.
func (p *perfResult) compileFiguresText() string {
	if len(p.lazy) == 0 || len(p.eager) == 0 {
		return ""
	}
	conn := func(v compileVisit) float64 { return v.Connect }
	re := func(v compileVisit) float64 { return v.Reconnect }
	ready := func(v compileVisit) float64 { return v.Ready }
	lc, ec := median(compileSeries(p.lazy, conn)), median(compileSeries(p.eager, conn))
	lr := median(compileSeries(p.lazy, re))
	gap := lc - lr
	share := ""
	if gap > 0 {
		share = fmt.Sprintf(" (%.0f%% of the %s ms by which the first connect exceeds the second)", 100*(lc-ec)/gap, ms(gap))
	}
	return fmt.Sprintf("In this run (medians), compiling eagerly took %s ms off the first connect%s and moved %s ms into navigation → ready: that much of the first connect's cost is compiling code on its first run, the rest is the first run itself (caches filled on first use, the probe of an unknown server, tier-up). A page cannot choose eager compilation (it is a V8 flag); what it can do is start the runtime early (`preload()`) and keep it off its own thread (`auto`).\n",
		ms(lc-ec), share, ms(median(compileSeries(p.eager, ready))-median(compileSeries(p.lazy, ready))))
}

// preloadMarkdown is the preload scenario's subsection: preload()'s
// before/after.
func (p *perfResult) preloadMarkdown() string {
	var b strings.Builder
	w := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	w("### `preload()`: loading while the page starts\n\n")
	w("`cmd/bench/pages/preload.html` imports mcp.js, then does %d ms of its own start-up work (script in 15 ms slices with a macrotask between them, as a framework renders) and only then calls `load()`; with `preload()` it calls that first, as the page imports mcp.js, so the download and compile (or the worker that does them) start before the page's work. Each visit is a new browser context (a first visit: no HTTP cache, no code cache, no worker running); the variants alternate, the order rotating, %d runs after a warm-up; a cell is median (min–max) in ms since navigation start.\n\n", preloadWork, p.runs)
	if p.preloadErr != "" {
		w("**The scenario did not finish in this run** (%s). To reproduce: `BENCH_ONLY=perf make bench`.\n\n", p.preloadErr)
		return b.String()
	}
	mark := func(k string) func(preloadVisit) float64 { return func(v preloadVisit) float64 { return v.Marks[k] } }
	series := func(key string, f func(preloadVisit) float64) []float64 { return seriesOf(p.preload[key], f) }
	w("| variant | the page's work done, ms | navigation → ready, ms | `load()` called → ready, ms |\n| --- | ---: | ---: | ---: |\n")
	for _, v := range preloadVariants {
		w("| %s | %s | %s | %s |\n", v.label, cell(series(v.key, mark("workEnd")), ms), cell(series(v.key, mark("ready")), ms),
			cell(series(v.key, func(v preloadVisit) float64 { return v.Marks["ready"] - v.Marks["workEnd"] }), ms))
	}
	var modes []string
	for _, v := range preloadVariants {
		if vs := p.preload[v.key]; len(vs) > 0 {
			modes = append(modes, fmt.Sprintf("%s → `%s`", v.label, vs[len(vs)-1].Mode))
		}
	}
	w("\nThe runtime each variant's `load()` reported (`mcp.runtime`, last run): %s.\n", strings.Join(modes, "; "))
	ready, work := mark("ready"), mark("workEnd")
	saved := func(rt string) string {
		d := median(series(rt, ready)) - median(series(rt+"+pre", ready))
		if d < 0 {
			return fmt.Sprintf("added %s ms to navigation → ready with `%s`", ms(-d), rt)
		}
		return fmt.Sprintf("took %s ms off navigation → ready with `%s`", ms(d), rt)
	}
	w("\nIn this run (medians), `preload()` %s and %s: the page's %d ms of work overlap the load instead of preceding it. With `main` the download and compile of mcp.wasm pass through the page's thread between its slices (a preload that only fetched the bytes and compiled them at `load()` delayed the work as much, in a trial) and its work was done at %s ms instead of %s; with `auto` the worker takes them (%s against %s ms).\n\n",
		saved("auto"), saved("main"), preloadWork,
		ms(median(series("main+pre", work))), ms(median(series("main", work))), ms(median(series("auto+pre", work))), ms(median(series("auto", work))))
	return b.String()
}
