package main

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/mcpwasm/mcpwasm/devkit/webbuild"
)

// sizeSectionTitle starts the size section of BENCHMARKS.md.
const sizeSectionTitle = "## Size: what each part of the module costs"

// clientTag builds the client-only module: no catalog, agent or WebMCP
// (wasm/features_client.go). Full build − client-only build is what those
// features cost together, measured rather than estimated.
const clientTag = "mcpwasm_client"

// feature is a product feature whose cost is the function code of its own
// packages (linked only because the feature is).
type feature struct {
	name string
	what string
	pkgs []string // import paths below github.com/mcpwasm/mcpwasm/ ("" is the module's main package)
}

// features are the product's features by package, every package of ours
// in exactly one (sizeReport checks that none is left out).
var features = []feature{
	{"MCP client", "sessions, protocol eras, tasks, skills, the state table", []string{"mcpclient", "mcperr", "internal/busy"}},
	{"OAuth client", "discovery, registration, PKCE, tokens, DPoP, ID-JAG", []string{"oauth", "internal/jws", "internal/httpguard"}},
	{"storage", "IndexedDB, encrypted at rest", []string{"storage/indexeddb"}},
	{"JS API and bridge", "the operations table, the Go↔JS bridge, fetch", []string{"", "jsapi", "jsbridge", "jsbridge/jsfetch"}},
	{"host policy", "mcp.policy(), a catalog's policy", []string{"hostpolicy"}},
	{"relay client", "the relay option", []string{"relay"}},
	{"catalog", "many servers behind one tool list", []string{"catalog"}},
	{"agent loop", "turns, approvals, compaction, conversations", []string{"agent", "agent/internal/provider", "agent/internal/sse"}},
	{"adapter: OpenAI Chat Completions", "", []string{"agent/openai"}},
	{"adapter: OpenAI Responses", "", []string{"agent/openairesponses"}},
	{"adapter: Anthropic Messages", "", []string{"agent/anthropic"}},
	{"adapter: Gemini", "", []string{"agent/gemini"}},
}

// jsGroups name the page's JavaScript modules (web/, web/apps/) by the
// feature they serve; a file matched by none is listed as "other".
var jsGroups = []struct {
	name  string
	match func(file string) bool
}{
	{"MCP Apps view host (web/apps/)", func(f string) bool { return strings.HasPrefix(f, "apps/") }},
	{"React hooks and components", func(f string) bool { return strings.HasPrefix(f, "react") }},
	{"AI SDK adapter", func(f string) bool { return f == "ai.js" }},
	{"catalog, agent, WebMCP, models", func(f string) bool {
		return slices.Contains([]string{"catalog.js", "agent.js", "conversation.js", "models.js", "webmcp.js", "partialjson.js"}, f)
	}},
	{"loader, runtime, client API", func(f string) bool {
		return slices.Contains([]string{"mcp.js", "boot.js", "start.js", "modulecache.js", "remote.js", "worker.js", "host.js", "client.js", "auth.js", "errors.js", "options.js", "rules.js", "redirect.js", "jsapi.js", "testhooks.js", "wasmurl.js", "wasm_exec.js"}, f)
	}},
}

// shownPackages is how many of the largest packages the section lists.
const shownPackages = 30

// sizeReport is what the size section shows.
type sizeReport struct {
	at                time.Time
	full, client      sizes // stripped, make build flags
	floor             sizes
	fullNM, cliNM     []pkgSize // function code by package, unstripped builds
	fullCode, cliCode int64     // code sections of the unstripped builds
	fullData          int64
	js                []jsFile
	prev              map[string]int64 // the last report's figures, by key
}

type jsFile struct {
	name      string
	raw, gzip int64
}

// buildSizes builds what the size section needs that the payload table
// has not built: the client-only module, stripped and unstripped, and
// the unstripped full build when unstripped is "". comp compresses the
// stripped builds; the caller waits for it.
func buildSizes(root, tmp, unstripped string, comp *compressor) (r *sizeReport, client, floor string, err error) {
	r = &sizeReport{at: time.Now()}
	if unstripped == "" {
		unstripped = filepath.Join(tmp, "nm", "mcp.wasm")
		if err := webbuild.BuildWasm(root, unstripped); err != nil {
			return nil, "", "", err
		}
	}
	client = filepath.Join(tmp, "client", "mcp.wasm")
	if err := os.MkdirAll(filepath.Dir(client), 0o755); err != nil {
		return nil, "", "", err
	}
	if err := webbuild.BuildWasm(root, client, append([]string{"-tags", clientTag}, wasmFlags...)...); err != nil {
		return nil, "", "", err
	}
	cliNM := filepath.Join(tmp, "client-nm", "mcp.wasm")
	if err := os.MkdirAll(filepath.Dir(cliNM), 0o755); err != nil {
		return nil, "", "", err
	}
	if err := webbuild.BuildWasm(root, cliNM, "-tags", clientTag); err != nil {
		return nil, "", "", err
	}
	floor = filepath.Join(tmp, "floor", "floor.wasm")
	if _, err := os.Stat(floor); err != nil {
		if err := buildFloor(root, floor); err != nil {
			return nil, "", "", err
		}
		comp.start(floor)
	}
	comp.start(client)
	if r.fullNM, r.fullCode, r.fullData, err = wasmFuncSizes(unstripped); err != nil {
		return nil, "", "", err
	}
	if r.cliNM, r.cliCode, _, err = wasmFuncSizes(cliNM); err != nil {
		return nil, "", "", err
	}
	if r.js, err = jsSizes(filepath.Join(root, "web")); err != nil {
		return nil, "", "", err
	}
	return r, client, floor, nil
}

// jsSizes is each JavaScript module a page may load from dir (the
// library's, not the demo's or the callback page's), raw and gzip -9.
func jsSizes(dir string) ([]jsFile, error) {
	var out []jsFile
	for _, pat := range []string{"*.js", "apps/*.js"} {
		names, err := filepath.Glob(filepath.Join(dir, pat))
		if err != nil {
			return nil, err
		}
		for _, n := range names {
			b, err := os.ReadFile(n)
			if err != nil {
				return nil, err
			}
			var z bytes.Buffer
			w, _ := gzip.NewWriterLevel(&z, gzip.BestCompression)
			w.Write(b)
			w.Close()
			rel, _ := filepath.Rel(dir, n)
			out = append(out, jsFile{filepath.ToSlash(rel), int64(len(b)), int64(z.Len())})
		}
	}
	return out, nil
}

// namePackage is how the wasm name section spells a package of ours ("" is
// the main package): the import path with "/" and "-" as "_".
func namePackage(p string) string {
	if p == "" {
		return "main"
	}
	return strings.NewReplacer("/", "_", "-", "_").Replace("github.com/mcpwasm/mcpwasm/" + p)
}

func codeOf(nm []pkgSize, pkgs []string) int64 {
	var n int64
	for _, p := range pkgs {
		want := namePackage(p)
		for _, s := range nm {
			if s.Name == want {
				n += s.Bytes
			}
		}
	}
	return n
}

// unassigned lists the packages of ours in nm that no feature names.
func unassigned(nm []pkgSize) []string {
	known := map[string]bool{}
	for _, f := range features {
		for _, p := range f.pkgs {
			known[namePackage(p)] = true
		}
	}
	var out []string
	for _, s := range nm {
		if strings.HasPrefix(s.Name, "github.com_mcpwasm_mcpwasm_") && !known[s.Name] {
			out = append(out, s.Name)
		}
	}
	return out
}

// figures are the section's numbers by key, kept in the report (a
// comment) so that the next run shows what changed.
func (r *sizeReport) figures() map[string]int64 {
	m := map[string]int64{}
	put := func(k string, s sizes) {
		m[k+" raw"], m[k+" gzip"], m[k+" brotli"] = s.Raw, s.Gzip, s.Brotli
	}
	put("build full", r.full)
	put("build client", r.client)
	put("build floor", r.floor)
	m["code full"], m["code client"] = r.fullCode, r.cliCode
	for _, f := range features {
		m["feature "+f.name] = codeOf(r.fullNM, f.pkgs)
	}
	for _, g := range r.jsByGroup() {
		m["js "+g.name+" raw"], m["js "+g.name+" gzip"] = g.raw, g.gzip
	}
	for _, g := range groupNM(r.fullNM) {
		m["group "+g.Name] = g.Bytes
	}
	for i, p := range r.fullNM {
		if i < shownPackages {
			m["package "+p.Name] = p.Bytes
		}
	}
	return m
}

// jsGroupSize is one row of the JavaScript table: a group, its files
// and their sizes.
type jsGroupSize struct {
	name, files string
	raw, gzip   int64
}

// jsByGroup sums the JavaScript modules by jsGroups, files named.
func (r *sizeReport) jsByGroup() []jsGroupSize {
	rows := make([]jsGroupSize, len(jsGroups)+1)
	files := make([][]string, len(rows))
	for i, g := range jsGroups {
		rows[i].name = g.name
	}
	rows[len(jsGroups)].name = "other"
	for _, f := range r.js {
		i := len(jsGroups)
		for j, g := range jsGroups {
			if g.match(f.name) {
				i = j
				break
			}
		}
		rows[i].raw += f.raw
		rows[i].gzip += f.gzip
		files[i] = append(files[i], f.name)
	}
	var out []jsGroupSize
	for i, rw := range rows {
		if len(files[i]) == 0 {
			continue
		}
		rw.files = strings.Join(files[i], ", ")
		out = append(out, rw)
	}
	return out
}

func groupNM(nm []pkgSize) []pkgSize {
	groups := map[string]int64{}
	for _, p := range nm {
		groups[groupModule(p.Name)] += p.Bytes
	}
	var gl []pkgSize
	for k, v := range groups {
		gl = append(gl, pkgSize{k, v})
	}
	sort.Slice(gl, func(i, j int) bool { return gl[i].Bytes > gl[j].Bytes })
	return gl
}

// figuresComment holds the figures in the report, read back by the next run.
var figuresComment = regexp.MustCompile(`<!-- size figures: (\{.*\}) -->`)

// previousFigures reads the figures the last report kept ("" or none: nil).
func previousFigures(out string) map[string]int64 {
	b, err := os.ReadFile(out)
	if err != nil {
		return nil
	}
	m := figuresComment.FindSubmatch(b)
	if m == nil {
		return nil
	}
	var f map[string]int64
	if json.Unmarshal(m[1], &f) != nil {
		return nil
	}
	return f
}

// change is a figure's change since the last run: "+1.2 kB", "−3.0 kB",
// "0", or "new" when the last run had no such figure.
func (r *sizeReport) change(key string, now int64) string {
	if r.prev == nil {
		return "—"
	}
	was, ok := r.prev[key]
	if !ok {
		return "new"
	}
	switch d := now - was; {
	case d == 0:
		return "0"
	case d > 0:
		return "+" + kb(float64(d))
	default:
		return "−" + kb(float64(-d))
	}
}

// markdown is the size section.
func (r *sizeReport) markdown(cmdLine string) string {
	var b strings.Builder
	w := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	w("%s\n\n", sizeSectionTitle)
	w("- Measured: %s; Go: %s\n", r.at.UTC().Format("2006-01-02 15:04 UTC"), strings.TrimSpace(output("go", "version")))
	w("- Command: `%s`\n", cmdLine)
	if r.prev == nil {
		w("- Change: the last report kept no size figures, so this run has nothing to compare with.\n")
	} else {
		w("- Change: each figure against the one the last report kept (in a comment at the end of this section); \"new\" is a figure the last run did not have.\n")
	}
	w("\n### The module, whole and client-only\n\n")
	w("The client-only module is the same source built with `-tags=%s` (`wasm/features_client.go`): no catalog, agent, model adapters or WebMCP, whose operations answer that this module lacks them. The difference is what those features cost together, compression included.\n\n", clientTag)
	w("| build | raw | gzip -9 | brotli -q 11 | brotli, change |\n| --- | ---: | ---: | ---: | ---: |\n")
	row := func(label, key string, s sizes) {
		w("| %s | %s | %s | %s | %s |\n", label, kb(float64(s.Raw)), kb(float64(s.Gzip)), kb(float64(s.Brotli)), r.change(key+" brotli", s.Brotli))
	}
	row("full module (make build)", "build full", r.full)
	row("client-only module (`-tags="+clientTag+"`)", "build client", r.client)
	row("floor: a go-sdk client over jsfetch, nothing else of ours", "build floor", r.floor)
	w("| catalog, agent, adapters and WebMCP (full − client-only) | %s | %s | %s | |\n", kb(float64(r.full.Raw-r.client.Raw)), kb(float64(r.full.Gzip-r.client.Gzip)), kb(float64(r.full.Brotli-r.client.Brotli)))
	w("| the rest of ours and what it links (client-only − floor) | %s | %s | %s | |\n\n", kb(float64(r.client.Raw-r.floor.Raw)), kb(float64(r.client.Gzip-r.floor.Gzip)), kb(float64(r.client.Brotli-r.floor.Brotli)))

	w("### What each feature costs\n\n")
	w("Function code of each feature's own packages in the unstripped full build (the code section is %s of the module, the data section %s: pclntab, type descriptors and strings, which grow with the code but are not attributed here). The first rows are ours only; what a feature links from the standard library or a dependency shows in the builds above (full − client-only) and in the package table below.\n\n", kb(float64(r.fullCode)), kb(float64(r.fullData)))
	w("| feature | what | packages | function code | change |\n| --- | --- | --- | ---: | ---: |\n")
	for _, f := range features {
		var ps []string
		for _, p := range f.pkgs {
			if p == "" {
				p = "wasm (main)"
			}
			ps = append(ps, "`"+p+"`")
		}
		n := codeOf(r.fullNM, f.pkgs)
		w("| %s | %s | %s | %s | %s |\n", f.name, f.what, strings.Join(ps, ", "), kb(float64(n)), r.change("feature "+f.name, n))
	}
	w("| catalog, agent, adapters, WebMCP and what only they link | the full build's code section − the client-only build's | | %s | %s |\n", kb(float64(r.fullCode-r.cliCode)), r.change("code full", r.fullCode))
	if u := unassigned(r.fullNM); len(u) > 0 {
		w("\nPackages of ours in no feature above (add them to `features` in cmd/bench/sizereport.go): %s.\n", strings.Join(u, ", "))
	}

	w("\n### The JavaScript modules\n\n")
	w("What a page may load besides the module (web/, web/apps/; not the demo or the callback page), by feature; a page loads the groups it uses.\n\n")
	w("| group | files | raw | gzip -9 | gzip, change |\n| --- | --- | ---: | ---: | ---: |\n")
	var jr, jg int64
	for _, g := range r.jsByGroup() {
		w("| %s | %s | %s | %s | %s |\n", g.name, g.files, kb(float64(g.raw)), kb(float64(g.gzip)), r.change("js "+g.name+" gzip", g.gzip))
		jr += g.raw
		jg += g.gzip
	}
	w("| all | | %s | %s | |\n", kb(float64(jr)), kb(float64(jg)))

	w("\n### Function code by group and package (unstripped full build)\n\n")
	w("`go tool nm` does not read wasm modules, so the bench reads the module itself: each function's body size from the code section, named by the name section, summed by package.\n\n")
	w("| group | bytes | share | change |\n| --- | ---: | ---: | ---: |\n")
	for i, g := range groupNM(r.fullNM) {
		if i >= 15 {
			break
		}
		w("| %s | %s | %.1f%% | %s |\n", g.Name, kb(float64(g.Bytes)), 100*float64(g.Bytes)/float64(r.fullCode), r.change("group "+g.Name, g.Bytes))
	}
	w("\n| package | bytes | share | change |\n| --- | ---: | ---: | ---: |\n")
	for i, p := range r.fullNM {
		if i >= shownPackages {
			break
		}
		w("| %s | %s | %.1f%% | %s |\n", p.Name, kb(float64(p.Bytes)), 100*float64(p.Bytes)/float64(r.fullCode), r.change("package "+p.Name, p.Bytes))
	}
	fig, _ := json.Marshal(r.figures())
	w("\n<!-- size figures: %s -->\n\n", fig)
	return b.String()
}

// runSizeOnly is `-only size`: the builds and the size section, no browser.
func runSizeOnly(cfg config, rep *report, webDir, tmp string) error {
	comp := newCompressor()
	full := filepath.Join(webDir, "mcp.wasm")
	comp.start(full)
	r, client, floor, err := buildSizes(cfg.root, tmp, "", comp)
	if err != nil {
		return err
	}
	if err := comp.wait(); err != nil {
		return err
	}
	r.full, r.client, r.floor = sizesOf(full), sizesOf(client), sizesOf(floor)
	r.prev = previousFigures(reportPath(cfg))
	return writeSection(cfg, rep, r.markdown("BENCH_ONLY=size make bench  # = go run ./cmd/bench -out BENCHMARKS.md -only size"), "the size section", sectionSplicer(sizeSectionTitle))
}
