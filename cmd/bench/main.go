// Command bench measures what a page pays for mcpwasm, side by side with the
// official TypeScript SDK client in the same Chromium against the same demo
// MCP server, and a native go-sdk client as the floor: payload, start-up,
// connect, callTool latency and throughput, memory. Its other scenarios
// also run alone with -only: the agent loop's per-step overhead against
// the same loop written in JS (agentbench.go, -only agent); the start-up
// breakdown, memory and payload (perfbench.go, -only perf); load()'s
// runtime modes (runtimebench.go, -only runtime); where Go runs, per call,
// in Chromium, Firefox and WebKit (enginebench.go, -only engines); and the
// React example built from the npm package against the demo page
// (npmbench.go, -only npm); and a soak of three tabs running agent turns
// over five servers while faults are injected (soak.go, -only soak,
// -soak-duration). A full run also rates the performance goals on
// its own figures (goalsreport.go). It builds what it needs, serves it on
// loopback, drives headless Chromium with chromedp, prints a Markdown
// report and writes it to BENCHMARKS.md.
//
//	scripts/bench.sh            # installs the pinned npm packages, then:
//	go run ./cmd/bench -out BENCHMARKS.md
//
// Every figure is a median over -runs runs after a warm-up run, with min and
// max; the clients alternate within each run (the order rotates from run to
// run) and ratios are taken per run, then their median is reported.
package main

import (
	"embed"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/mcpwasm/mcpwasm/devkit/webbuild"
)

//go:embed pages
var pages embed.FS

type config struct {
	runs, calls, warmCalls, workers, concCalls int
	agentTurns, agentWarm                      int
	rtRuns                                     int
	soakDuration                               time.Duration
	out, root, only                            string
	also                                       []variant
	quick, jsonResponse                        bool
}

// variant is another source tree whose wasm module is benchmarked as one
// more client, for before/after comparisons in the same run.
type variant struct{ name, dir string }

// described names the tree for the report by its commit, so that the
// report does not point at a directory of the machine that wrote it: "a
// checkout of <commit>", with " and uncommitted changes" when it has
// them; the directory's base name when it is not a git checkout.
func (v variant) described() string {
	commit := strings.TrimSpace(output("git", "-C", v.dir, "rev-parse", "--short", "HEAD"))
	if commit == "" {
		return "the tree " + filepath.Base(v.dir)
	}
	d := "a checkout of " + commit
	if strings.TrimSpace(output("git", "-C", v.dir, "status", "--porcelain", "--untracked-files=no")) != "" {
		d += " and uncommitted changes"
	}
	return d
}

type alsoFlag []variant

func (a *alsoFlag) String() string { return "" }
func (a *alsoFlag) Set(s string) error {
	name, dir, ok := strings.Cut(s, "=")
	if !ok || name == "" || dir == "" {
		return fmt.Errorf("want NAME=DIR")
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	*a = append(*a, variant{name, abs})
	return nil
}

func main() {
	var cfg config
	var also alsoFlag
	flag.IntVar(&cfg.runs, "runs", 5, "measured runs (after one warm-up run)")
	flag.IntVar(&cfg.calls, "calls", 500, "sequential callTool calls per run")
	flag.IntVar(&cfg.warmCalls, "warm-calls", 50, "calls before the timed sequential calls")
	flag.IntVar(&cfg.workers, "workers", 8, "concurrent callers for the throughput figure")
	flag.IntVar(&cfg.concCalls, "conc-calls", 400, "calls shared by the concurrent callers")
	flag.StringVar(&cfg.out, "out", "BENCHMARKS.md", "report file (empty: print only)")
	flag.BoolVar(&cfg.quick, "quick", false, "skip the no-flags and wasm-opt builds")
	flag.BoolVar(&cfg.jsonResponse, "json-response", false, "serve the demo with application/json POST responses instead of SSE")
	flag.IntVar(&cfg.agentTurns, "agent-turns", defaultAgentTurns, "measured turns per loop in the agent step overhead scenario")
	flag.IntVar(&cfg.agentWarm, "agent-warm", defaultAgentWarm, "warm-up turns per loop before the measured agent turns")
	flag.IntVar(&cfg.rtRuns, "rt-runs", defaultRtRuns, "measured runs of the runtime-mode and engines scenarios, after one warm-up run")
	flag.StringVar(&cfg.only, "only", os.Getenv("BENCH_ONLY"), `"agent": run only the agent step overhead scenario, "perf": only the start-up breakdown and memory scenario, "runtime": only the runtime-mode scenario, "engines": only where Go runs in Chromium, Firefox and WebKit, "npm": only the React example from the npm package against the demo page, "soak": only the soak (faults for -soak-duration), "size": only the size section (builds, no browser); each replaces its section of the report (default $BENCH_ONLY)`)
	flag.DurationVar(&cfg.soakDuration, "soak-duration", envDuration("BENCH_SOAK_DURATION", defaultSoakDuration), "how long the soak injects faults while three tabs run agent turns (soak.go); 0 leaves the soak out of a full run (default $BENCH_SOAK_DURATION, else 10m)")
	flag.Var(&also, "also", "NAME=DIR: also benchmark the wasm module built from the source tree DIR (repeatable)")
	flag.Parse()
	cfg.also = also
	if cfg.only != "" && !slices.Contains(onlyScenarios, cfg.only) {
		fmt.Fprintf(os.Stderr, "bench: -only %q: the scenarios that run alone are %q\n", cfg.only, onlyScenarios)
		os.Exit(2)
	}
	_, file, _, _ := runtime.Caller(0)
	cfg.root = filepath.Dir(filepath.Dir(filepath.Dir(file))) // cmd/bench/main.go → the repository
	if err := run(cfg); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

// envDuration is the duration in the environment variable name, def when
// it is unset; a value that is not a duration stops the program.
func envDuration(name string, def time.Duration) time.Duration {
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	d, err := time.ParseDuration(v)
	if err != nil {
		fmt.Fprintf(os.Stderr, "bench: %s=%q: want a duration such as 2m: %v\n", name, v, err)
		os.Exit(2)
	}
	return d
}

// onlyScenarios are the values of -only.
var onlyScenarios = []string{"agent", "perf", "runtime", "engines", "npm", "soak", "size"}

// defaultRtRuns is the runtime-mode scenario's default number of runs.
const defaultRtRuns = 3

// The agent scenario's defaults: measured and warm-up turns per loop.
const defaultAgentTurns, defaultAgentWarm = 100, 3

func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "bench: "+format+"\n", args...)
}

// clientDef is one column of the table.
type clientDef struct {
	key, label string
	page       string // path on the page origin; "" for the native client
	asset      string // file whose download is measured
}

func run(cfg config) error {
	start := time.Now()
	rep := &report{cfg: cfg, start: start}
	tmp, err := os.MkdirTemp("", "bench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	webDir := filepath.Join(tmp, "web")
	benchDir := filepath.Join(cfg.root, "cmd", "bench")

	// Build: the module as `make build` does, the TS SDK bundle, variants.
	logf("building")
	if err := copyWeb(cfg.root, webDir); err != nil {
		return err
	}
	wasm := filepath.Join(webDir, "mcp.wasm")
	if err := webbuild.BuildWasm(cfg.root, wasm, wasmFlags...); err != nil {
		return err
	}
	// The pages load the module under its content-hashed name, as from
	// make build (stamped again once the compressed variants exist).
	hashed, err := webbuild.Stamp(webDir)
	if err != nil {
		return err
	}
	if cfg.only == "agent" {
		return runAgentOnly(cfg, rep, webDir)
	}
	if cfg.only == "perf" {
		return runPerfOnly(cfg, rep, webDir)
	}
	if cfg.only == "engines" {
		return runEnginesOnly(cfg, rep, webDir)
	}
	if cfg.only == "npm" {
		return runNpmOnly(cfg, rep, webDir, tmp)
	}
	if cfg.only == "soak" {
		return runSoakOnly(cfg, rep, webDir)
	}
	if cfg.only == "size" {
		return runSizeOnly(cfg, rep, webDir, tmp)
	}
	if err := esbuild(benchDir, filepath.Join(webDir, "ts-client.js")); err != nil {
		return err
	}
	if cfg.only == "runtime" {
		return runRuntimeOnly(cfg, rep, webDir)
	}
	comp := newCompressor()
	comp.start(wasm)
	comp.start(filepath.Join(webDir, "ts-client.js"))
	builds := []build{{label: "`-trimpath -tags=" + webbuild.Tags + " -ldflags=\"-s -w\"` (make build)", file: wasm}}
	// The same flags without make build's tags: what the tags save.
	if !cfg.quick && cfg.only == "" {
		untagged := filepath.Join(tmp, "untagged", "mcp.wasm")
		if err := buildUntagged(cfg.root, untagged); err != nil {
			return err
		}
		comp.start(untagged)
		builds = append(builds, build{label: "the same without `-tags=" + webbuild.Tags + "`", file: untagged})
		floor := filepath.Join(tmp, "floor", "floor.wasm")
		if err := buildFloor(cfg.root, floor); err != nil {
			return err
		}
		comp.start(floor)
		builds = append(builds, build{label: floorLabel, file: floor})
	}
	clients := []clientDef{{"a", "(a) mcpwasm", "/wasm.html", hashed}}
	// Each variant's page loads its own module under its own hashed name,
	// as from make build: stamped once its compressed siblings exist.
	variants := map[string]string{} // directory → label
	also, err := buildAlso(cfg, webDir)
	if err != nil {
		return err
	}
	for _, a := range also {
		comp.start(a.wasm)
		name := a.tree.name
		builds = append(builds, build{label: "variant " + name + " (" + a.tree.described() + ", make build flags)", file: a.wasm})
		clients = append(clients, clientDef{"a:" + name, "(a·" + name + ")", a.page, a.asset})
		variants[a.dir] = name
	}
	// The same tree built with the tag nethttp_transport, which sends through
	// net/http's own fetch path instead of jsfetch: what jsfetch saves per call.
	if cfg.only == "" {
		dir := filepath.Join(webDir, "v", "net-http")
		if err := copyWeb(cfg.root, dir); err != nil {
			return err
		}
		w := filepath.Join(dir, "mcp.wasm")
		flags := append([]string{"-tags", "nethttp_transport"}, wasmFlags...)
		if err := webbuild.BuildWasm(cfg.root, w, flags...); err != nil {
			return err
		}
		name, err := hashedNameOf(w)
		if err != nil {
			return err
		}
		clients = append(clients, clientDef{"a:net-http", "(a·net/http)", "/v/net-http/wasm.html", name})
		variants[dir] = "net-http"
	}
	clients = append(clients,
		clientDef{"b", "(b) TS SDK", "/ts.html", "ts-client.js"},
		clientDef{"c", "(c) go-sdk native", "", ""})
	unstripped := filepath.Join(tmp, "nm", "mcp.wasm")
	os.MkdirAll(filepath.Dir(unstripped), 0o755)
	if err := webbuild.BuildWasm(cfg.root, unstripped); err != nil {
		return err
	}
	var optDir string
	if !cfg.quick {
		comp.start(unstripped)
		builds = append([]build{{label: "`go build -tags=" + webbuild.Tags + "` (no other flags)", file: unstripped}}, builds...)
		if _, err := lookPath("wasm-opt"); err == nil {
			optDir = filepath.Join(webDir, "v", "wasmopt")
			if err := copyWeb(cfg.root, optDir); err != nil {
				return err
			}
			o := filepath.Join(optDir, "mcp.wasm")
			logf("wasm-opt -Oz (about 40 s)")
			if err := wasmOpt(wasm, o); err != nil {
				builds = append(builds, build{label: "+ `wasm-opt -Oz`", note: err.Error()})
				optDir = ""
			} else {
				comp.start(o)
				variants[optDir] = "wasmopt"
				builds = append(builds, build{label: "+ `wasm-opt -Oz` (binaryen " + strings.TrimSpace(strings.TrimPrefix(output("wasm-opt", "--version"), "wasm-opt version")) + ")", file: o})
			}
		} else {
			builds = append(builds, build{label: "+ `wasm-opt -Oz`", note: "not measured: wasm-opt (Debian binaryen) is not installed"})
		}
	}
	rep.builds = builds
	size, client, floor, err := buildSizes(cfg.root, tmp, unstripped, comp)
	if err != nil {
		return err
	}
	logf("compressing (brotli -q 11 is slow; results are cached by content hash)")
	if err := comp.wait(); err != nil {
		return err
	}
	size.full, size.client, size.floor = sizesOf(wasm), sizesOf(client), sizesOf(floor)
	size.prev = previousFigures(reportPath(cfg))
	rep.size = size
	if _, err := webbuild.Stamp(webDir); err != nil {
		return err
	}
	for dir, label := range variants {
		name, err := webbuild.Stamp(dir)
		if err != nil {
			return err
		}
		fi, err := os.Stat(filepath.Join(dir, name))
		if err != nil {
			return err
		}
		logf("variant %s: its page loads %s (%d bytes)", label, name, fi.Size())
	}
	rep.tsBundle = sizesOf(filepath.Join(webDir, "ts-client.js"))
	for i := range rep.builds {
		if rep.builds[i].file != "" {
			rep.builds[i].sizes = sizesOf(rep.builds[i].file)
		}
	}
	rep.buildDone = time.Since(start)

	srv, err := startServers(webDir, cfg.jsonResponse)
	if err != nil {
		return err
	}
	defer srv.Close()
	br, err := startBrowser() // $CHROMIUM or /usr/bin/chromium
	if err != nil {
		return err
	}
	defer br.Close()
	rep.chromium = br.Version
	rep.clients = clients
	rep.data = map[string]map[string][]float64{}
	rep.counts = map[string]map[string]map[string]int{}
	rep.assetHow = map[string]map[string]string{}

	if optDir != "" {
		name, err := hashedNameOf(filepath.Join(optDir, "mcp.wasm"))
		if err != nil {
			return err
		}
		rep.optCheck = verifyOpt(br, srv, cfg, name)
	}

	for r := 0; r <= cfg.runs; r++ {
		warm := r == 0
		if warm {
			logf("warm-up run")
		} else {
			logf("run %d/%d", r, cfg.runs)
		}
		order := rotate(clients, r)
		// Start-up and download: browser clients only.
		for _, c := range order {
			if c.page == "" {
				continue
			}
			cold, err := br.visitPage(srv.PageURL+c.page, c.asset, true)
			if err != nil {
				return fmt.Errorf("%s cold visit: %v", c.label, err)
			}
			rep.assetAdd(c.key, "cold", cold.AssetHow)
			again, err := br.visitPage(srv.PageURL+c.page, c.asset, false)
			if err != nil {
				return fmt.Errorf("%s repeat visit: %v", c.label, err)
			}
			rep.assetAdd(c.key, "warm", again.AssetHow)
			if !warm {
				rep.add(c.key, "coldMs", cold.ReadyMs)
				rep.add(c.key, "warmMs", again.ReadyMs)
				rep.add(c.key, "coldAsset", float64(cold.AssetBody))
				rep.add(c.key, "warmAsset", float64(again.AssetBody))
				rep.add(c.key, "coldTotal", float64(cold.TotalBytes))
				rep.add(c.key, "warmTotal", float64(again.TotalBytes))
			}
		}
		// Connect and calls.
		for _, c := range order {
			var s session
			var err error
			if c.page == "" {
				s, err = runNative(srv.MCPURL, srv, cfg)
			} else {
				s, err = br.runBrowserClient(srv.PageURL+c.page, srv.MCPURL, srv, cfg)
			}
			if err != nil {
				return fmt.Errorf("%s: %v", c.label, err)
			}
			if warm {
				continue
			}
			rep.add(c.key, "connectMs", s.ConnectMs)
			rep.add(c.key, "reconnectMs", s.ReconnectMs)
			rep.add(c.key, "p50", percentile(s.Calls, 50))
			rep.add(c.key, "p95", percentile(s.Calls, 95))
			rep.add(c.key, "tput", float64(cfg.concCalls)/(s.ConcMs/1000))
			if c.page != "" {
				rep.add(c.key, "wasmMem", s.WasmMem)
				rep.add(c.key, "heap", s.Heap)
			}
			rep.setCounts(c.key, "connect", s.ConnectN)
			rep.setCounts(c.key, "reconnect", s.ReconnectN)
		}
	}
	// OAuth: a sign-in through the popup, then a reload that connects with
	// the stored grant; its own servers, alternated with nothing else.
	asrv, err := startAuthServers(webDir)
	if err != nil {
		return err
	}
	defer asrv.Close()
	for r := 0; r <= cfg.runs; r++ {
		s, err := br.runStoredGrant(asrv)
		if err != nil {
			return fmt.Errorf("OAuth phase: %v", err)
		}
		if r == 0 {
			continue // warm-up
		}
		rep.add("a", "loginMs", s.LoginMs)
		rep.add("a", "storedMs", s.StoredMs)
		rep.setCounts("a", "login", s.LoginN)
		rep.setCounts("a", "stored", s.StoredN)
	}
	if err := agentScenario(br, srv, cfg, rep); err != nil {
		return err
	}
	if err := perfScenario(br, srv, cfg, rep); err != nil {
		return err
	}
	if err := runtimeScenario(br, srv, cfg, rep); err != nil {
		return err
	}
	if err := enginesScenario(srv, cfg, rep); err != nil {
		return err
	}
	if err := npmScenario(br, cfg, rep, webDir, tmp); err != nil {
		return err
	}
	if err := soakScenario(br, cfg, rep, webDir); err != nil {
		return err
	}
	rep.elapsed = time.Since(start)
	if cfg.out != "" && rep.soak == nil {
		// A run without the soak keeps the soak section the report had,
		// with the date and command it was measured with.
		rep.keptSoak = existingSection(reportPath(cfg), soakSectionTitle)
	}
	md := rep.markdown()
	fmt.Print(md)
	if cfg.out != "" {
		out := reportPath(cfg)
		if err := os.WriteFile(out, []byte(md), 0o644); err != nil {
			return err
		}
		logf("wrote %s in %s", out, rep.elapsed.Round(time.Second))

	}
	return rep.soakVerdict()
}

// reportPath is the report file, relative paths taken from the repository root.
func reportPath(cfg config) string {
	if filepath.IsAbs(cfg.out) {
		return cfg.out
	}
	return filepath.Join(cfg.root, cfg.out)
}

func rotate(cs []clientDef, r int) []clientDef {
	out := make([]clientDef, 0, len(cs))
	for i := range cs {
		out = append(out, cs[(i+r)%len(cs)])
	}
	return out
}

// verifyOpt checks that the wasm-opt module works in Chromium: it loads,
// connects and answers calls correctly (the harness checks the echo).
func verifyOpt(br *browser, srv *servers, cfg config, asset string) string {
	small := cfg
	small.calls, small.warmCalls, small.concCalls = 100, 10, 80
	v, err := br.visitPage(srv.PageURL+"/v/wasmopt/wasm.html", asset, true)
	if err != nil {
		return "FAILED to load: " + err.Error()
	}
	s, err := br.runBrowserClient(srv.PageURL+"/v/wasmopt/wasm.html", srv.MCPURL, srv, small)
	if err != nil {
		return "FAILED: " + err.Error()
	}
	return fmt.Sprintf("works in Chromium (loaded, connected, %d+%d echo calls checked; one run: cold start %.0f ms, callTool p50 %.2f ms)",
		small.calls, small.concCalls, v.ReadyMs, percentile(s.Calls, 50))
}

// alsoBuild is a -also tree's module, built into its own directory of the
// page origin with the bench pages beside it.
type alsoBuild struct {
	tree  variant
	dir   string // its directory in the web root
	wasm  string // dir/mcp.wasm
	page  string // its wasm.html on the page origin
	asset string // the module's name as its pages load it
}

// alsoPage is the bench page of the -also tree name on the page origin.
func alsoPage(name string) string { return "/v/" + name + "/wasm.html" }

// buildAlso builds each -also tree's module with make build's flags into
// webDir/v/NAME. A tree from before the hashed module name loads
// "mcp.wasm"; the caller stamps the directories (webbuild.Stamp) once any
// compressed siblings are there.
func buildAlso(cfg config, webDir string) ([]alsoBuild, error) {
	var out []alsoBuild
	for _, v := range cfg.also {
		a := alsoBuild{tree: v, dir: filepath.Join(webDir, "v", v.name), page: alsoPage(v.name)}
		if err := copyWeb(v.dir, a.dir); err != nil {
			return nil, err
		}
		a.wasm = filepath.Join(a.dir, "mcp.wasm")
		if err := webbuild.BuildWasm(v.dir, a.wasm, wasmFlags...); err != nil {
			return nil, fmt.Errorf("-also %s: %v", v.name, err)
		}
		name, err := hashedNameOf(a.wasm)
		if err != nil {
			return nil, err
		}
		if !loadsHashedName(a.dir) {
			name = "mcp.wasm"
		}
		a.asset = name
		out = append(out, a)
	}
	return out, nil
}

// hashedNameOf is the content-hashed name of the module file wasm.
func hashedNameOf(wasm string) (string, error) {
	b, err := os.ReadFile(wasm)
	if err != nil {
		return "", err
	}
	return webbuild.HashedName(b), nil
}
