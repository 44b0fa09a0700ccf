package main

import (
	"fmt"
	"github.com/mcpwasm/mcpwasm/devkit/webbuild"
	"math"
	"os/exec"
	"runtime"
	"sort"
	"strings"
	"time"
)

// build is one wasm build whose size is reported.
type build struct {
	label string
	file  string
	note  string
	sizes sizes
}

type report struct {
	cfg       config
	start     time.Time
	elapsed   time.Duration
	buildDone time.Duration
	chromium  string
	builds    []build
	tsBundle  sizes
	size      *sizeReport // nil in a run that measures no sizes (-only)
	optCheck  string
	clients   []clientDef
	data      map[string]map[string][]float64      // client → metric → per-run values
	counts    map[string]map[string]map[string]int // client → phase → kind → n (last run)
	varied    map[string]bool                      // client/phase whose counts differed between runs
	assetHow  map[string]map[string]string         // client → cold/warm → how the asset came
	agent     *agentResult                         // the agent step overhead scenario
	perf      *perfResult                          // the start-up breakdown, memory and payload
	runtime   *runtimeResult                       // load()'s runtime modes
	engines   *engineResult                        // where Go runs, in each engine
	npm       *npmResult                           // the React example against the demo page
	soak      *soakResultSet                       // faults while tabs run agent turns
	keptSoak  string                               // the soak section of a report written before, for a run without the soak
}

func (r *report) add(client, metric string, v float64) {
	if r.data[client] == nil {
		r.data[client] = map[string][]float64{}
	}
	r.data[client][metric] = append(r.data[client][metric], v)
}

func (r *report) setCounts(client, phase string, m map[string]int) {
	if r.counts[client] == nil {
		r.counts[client] = map[string]map[string]int{}
	}
	if prev, ok := r.counts[client][phase]; ok && formatCounts(prev) != formatCounts(m) {
		if r.varied == nil {
			r.varied = map[string]bool{}
		}
		r.varied[client+"/"+phase] = true
	}
	r.counts[client][phase] = m
}

func (r *report) assetAdd(client, phase, how string) {
	if r.assetHow[client] == nil {
		r.assetHow[client] = map[string]string{}
	}
	r.assetHow[client][phase] = how
}

func lookPath(name string) (string, error) { return exec.LookPath(name) }

// percentile is the nearest-rank percentile of xs.
func percentile(xs []float64, p float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	k := int(math.Ceil(p/100*float64(len(s)))) - 1
	k = max(0, min(k, len(s)-1))
	return s[k]
}

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

func minmax(xs []float64) (float64, float64) {
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, x := range xs {
		lo, hi = math.Min(lo, x), math.Max(hi, x)
	}
	return lo, hi
}

// cell formats median (min–max) with format f for one value.
func cell(xs []float64, f func(float64) string) string {
	if len(xs) == 0 {
		return "—"
	}
	lo, hi := minmax(xs)
	return fmt.Sprintf("%s (%s–%s)", f(median(xs)), f(lo), f(hi))
}

func ms(v float64) string {
	switch {
	case v >= 100:
		return fmt.Sprintf("%.0f", v)
	case v >= 10:
		return fmt.Sprintf("%.1f", v)
	}
	return fmt.Sprintf("%.2f", v)
}
func ratio(v float64) string { return fmt.Sprintf("%.2f×", v) }
func mb(v float64) string    { return fmt.Sprintf("%.1f MB", v/1e6) }
func kb(v float64) string {
	if v >= 1e6 {
		return fmt.Sprintf("%.2f MB", v/1e6)
	}
	if v >= 1e3 {
		return fmt.Sprintf("%.1f kB", v/1e3)
	}
	return fmt.Sprintf("%.0f B", v)
}
func num(v float64) string { return fmt.Sprintf("%.0f", v) }

// perRun divides two clients' per-run values (same run, alternated).
func (r *report) perRun(a, b, metric string) []float64 {
	xa, xb := r.data[a][metric], r.data[b][metric]
	var out []float64
	for i := range min(len(xa), len(xb)) {
		if xb[i] != 0 {
			out = append(out, xa[i]/xb[i])
		}
	}
	return out
}

type row struct {
	label       string
	metric      string
	f           func(float64) string
	browserOnly bool
	ratio       bool // show a/b and a/c
}

func (r *report) markdown() string {
	var b strings.Builder
	w := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	cores := runtime.NumCPU()
	w("# Benchmarks\n\n")
	w("Written by `make bench` (`scripts/bench.sh`); re-run to refresh.\n\n")
	w("- Date: %s\n", r.start.Format("2006-01-02 15:04 MST"))
	w("- Machine: %s/%s, %d cores, %s\n", runtime.GOOS, runtime.GOARCH, cores, cpuModel())
	w("- Chromium: %s (headless, via chromedp)\n", r.chromium)
	w("- Go: %s; TypeScript SDK: @modelcontextprotocol/sdk %s bundled with esbuild %s\n", strings.TrimPrefix(strings.TrimSpace(output("go", "version")), "go version "), npmVersion(r.cfg.root, "@modelcontextprotocol/sdk"), npmVersion(r.cfg.root, "esbuild"))
	server := "the demo MCP server (`demo.Handler`, Streamable HTTP, stateful sessions, POST responses framed as SSE)"
	if r.cfg.jsonResponse {
		server = "the demo MCP server with `StreamableHTTPOptions.JSONResponse` (POST responses as application/json; stateful sessions)"
	}
	w("- Server: %s on its own loopback origin;", server)
	w(" the page on another (the dev server's `webserve` handler: precompressed br/gz, content-hash ETag, `Cache-Control: no-cache`)\n")
	w("- Run: %d measured runs after 1 warm-up run; %d sequential `callTool(\"echo\")` calls per run after %d warm-up calls; throughput: %d calls shared by %d concurrent callers. Clients alternate in every run, the order rotating; a cell is median (min–max) over the runs; a ratio is taken within each run, then its median (min–max) is shown.\n",
		r.cfg.runs, r.cfg.calls, r.cfg.warmCalls, r.cfg.concCalls, r.cfg.workers)
	w("- Took %s (builds and compression %s).\n\n", r.elapsed.Round(time.Second), r.buildDone.Round(time.Second))
	w("Commands:\n\n```sh\nmake bench    # = scripts/bench.sh: npm ci in cmd/bench/, then\ngo run ./cmd/bench -out BENCHMARKS.md %s\n# wasm builds: GOOS=js GOARCH=wasm go build -trimpath -tags=%s -ldflags=\"-s -w\" ./wasm; gzip -9; brotli -q 11; wasm-opt -Oz\n# TS client:   esbuild cmd/bench/pages/ts-entry.js --bundle --minify --format=esm --platform=browser --target=es2022\n```\n\n", strings.Join(flagArgs(r.cfg), " "), webbuild.Tags)

	// Payload.
	w("## Payload\n\n| build | raw | gzip -9 | brotli -q 11 |\n| --- | ---: | ---: | ---: |\n")
	for _, bd := range r.builds {
		if bd.file == "" {
			w("| %s | %s | | |\n", bd.label, bd.note)
			continue
		}
		w("| %s | %s | %s | %s |\n", bd.label, bytesCell(bd.sizes.Raw), bytesCell(bd.sizes.Gzip), bytesCell(bd.sizes.Brotli))
	}
	w("| TS SDK client bundle (esbuild --minify) | %s | %s | %s |\n\n", bytesCell(r.tsBundle.Raw), bytesCell(r.tsBundle.Gzip), bytesCell(r.tsBundle.Brotli))
	if r.optCheck != "" {
		w("wasm-opt module check: %s.\n\n", r.optCheck)
	}

	// The table.
	cols := r.clients
	var a, bb, c string = "a", "b", "c"
	w("## Side by side\n\n| metric |")
	for _, cl := range cols {
		w(" %s |", cl.label)
	}
	w(" a/b | a/c |")
	for _, cl := range cols {
		if strings.HasPrefix(cl.key, "a:") {
			w(" %s/a | %s/b |", strings.TrimPrefix(cl.label, "("), strings.TrimPrefix(cl.label, "("))
		}
	}
	w("\n| --- |")
	for range cols {
		w(" ---: |")
	}
	w(" ---: | ---: |")
	for _, cl := range cols {
		if strings.HasPrefix(cl.key, "a:") {
			w(" ---: | ---: |")
		}
	}
	w("\n")
	rows := []row{
		{"first visit: client asset bytes on the wire (mcp.wasm / ts-client.js body)", "coldAsset", kb, true, true},
		{"first visit: all bytes received (page, scripts, asset; headers included)", "coldTotal", kb, true, true},
		{"repeat visit: client asset body bytes", "warmAsset", kb, true, false},
		{"repeat visit: all bytes received", "warmTotal", kb, true, true},
		{"start-up cold: navigation → ready, ms (empty cache)", "coldMs", ms, true, true},
		{"start-up warm: navigation → ready, ms (repeat visit)", "warmMs", ms, true, true},
		{"connect + initialize, no auth, first in the page, ms", "connectMs", ms, false, true},
		{"reconnect (new client, same page), no auth, ms", "reconnectMs", ms, false, true},
		{fmt.Sprintf("callTool p50, ms (%d sequential)", r.cfg.calls), "p50", ms, false, true},
		{fmt.Sprintf("callTool p95, ms (%d sequential)", r.cfg.calls), "p95", ms, false, true},
		{fmt.Sprintf("throughput, calls/s (%d concurrent callers)", r.cfg.workers), "tput", num, false, true},
		{"wasm memory after the calls", "wasmMem", mb, true, false},
		{"JS heap after the calls (gc(), performance.memory)", "heap", mb, true, true},
	}
	for _, rw := range rows {
		w("| %s |", rw.label)
		for _, cl := range cols {
			if rw.browserOnly && cl.page == "" {
				w(" n/a |")
				continue
			}
			if rw.metric == "wasmMem" && cl.key == "b" {
				w(" n/a |")
				continue
			}
			w(" %s |", cell(r.data[cl.key][rw.metric], rw.f))
		}
		if rw.ratio {
			w(" %s |", cell(r.perRun(a, bb, rw.metric), ratio))
			if rw.browserOnly {
				w(" n/a |")
			} else {
				w(" %s |", cell(r.perRun(a, c, rw.metric), ratio))
			}
		} else {
			w(" | |")
		}
		for _, cl := range cols {
			if strings.HasPrefix(cl.key, "a:") {
				if rw.ratio || rw.metric == "wasmMem" {
					w(" %s | %s |", cell(r.perRun(cl.key, a, rw.metric), ratio), cell(r.perRun(cl.key, bb, rw.metric), ratio))
				} else {
					w(" | |")
				}
			}
		}
		w("\n")
		if rw.metric == "reconnectMs" && len(r.data["a"]["storedMs"]) > 0 {
			w("| sign-in through the popup (auto-approved consent), ms | %s | n/a | n/a | | |\n", cell(r.data["a"]["loginMs"], ms))
			w("| connect with a stored grant after a reload (no popup), ms | %s | n/a | n/a | | |\n", cell(r.data["a"]["storedMs"], ms))
		}
	}
	w("\nAsset on the wire, last run: ")
	var hows []string
	for _, cl := range cols {
		if h := r.assetHow[cl.key]; h != nil {
			hows = append(hows, fmt.Sprintf("%s first visit %s, repeat visit %s", cl.label, h["cold"], h["warm"]))
		}
	}
	w("%s.\n\n", strings.Join(hows, "; "))
	for _, cl := range cols {
		if cl.key == "a:net-http" {
			w("(a·net/http) is the same tree built with `-tags nethttp_transport`: its requests go through net/http's own fetch path instead of `jsbridge/jsfetch`, the module's transport; its ratio to (a) compares the two (above 1× for times, below 1× for throughput: jsfetch is faster).\n\n")
		}
	}

	w("### Requests per connect, by kind (server-side count, last run; includes requests sent within %s after connect resolved)\n\n", settle)
	w("| client | first connect in the page | reconnect (new client, same page) |\n| --- | --- | --- |\n")
	for _, cl := range cols {
		c1, c2 := r.counts[cl.key]["connect"], r.counts[cl.key]["reconnect"]
		note := ""
		if r.varied[cl.key+"/connect"] || r.varied[cl.key+"/reconnect"] {
			note = " (varied between runs)"
		}
		w("| %s | %s | %s%s |\n", cl.label, formatCounts(c1), formatCounts(c2), note)
	}
	if c := r.counts["a"]; c["login"] != nil {
		w("| (a) with OAuth (protected demo server + demo authorization server) | sign-in: %s | reload, connect with the stored grant: %s |\n", formatCounts(c["login"]), formatCounts(c["stored"]))
	}
	w("\n")

	w("%s", r.agentMarkdown())
	w("%s", r.perfMarkdown())
	w("%s", r.runtimeMarkdown())
	w("%s", r.enginesMarkdown())
	w("%s", r.npmMarkdown())
	w("%s", r.soakMarkdown())
	w("%s", r.goalsMarkdown())

	w("%s", r.size.markdown("go run ./cmd/bench -out BENCHMARKS.md"+strings.Join(append([]string{""}, flagArgs(r.cfg)...), " ")))
	return b.String()
}

func bytesCell(n int64) string {
	if n == 0 {
		return "—"
	}
	return fmt.Sprintf("%d (%s)", n, kb(float64(n)))
}

func flagArgs(cfg config) []string {
	var out []string
	if cfg.quick {
		out = append(out, "-quick")
	}
	if cfg.jsonResponse {
		out = append(out, "-json-response")
	}
	return append(out, agentFlags(cfg)...)
}

// measuredLine is a scenario's "Measured:" line: when it started, the
// browser and machine, and the 1-minute load average at its start and end.
func (r *report) measuredLine(at time.Time, load [2]string) string {
	return fmt.Sprintf("- Measured: %s, %s, %s, %d cores; 1-minute load average %s at the start of the scenario, %s at its end\n",
		at.Format("2006-01-02 15:04 MST"), r.chromium, cpuModel(), runtime.NumCPU(), load[0], load[1])
}

func cpuModel() string {
	b := output("sh", "-c", "grep -m1 'model name' /proc/cpuinfo | cut -d: -f2")
	return strings.TrimSpace(b)
}

func npmVersion(root, pkg string) string {
	out := output("node", "-p", "require('"+root+"/cmd/bench/node_modules/"+pkg+"/package.json').version")
	return strings.TrimSpace(out)
}
