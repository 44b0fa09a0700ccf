package main

import (
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/mcpwasm/mcpwasm/demo/model"
)

// The "agent step overhead" scenario (-only agent runs it alone): the time
// the agent loop adds between the model's last byte and the next model
// request, tool time excluded, for the Go agent (cat.agent) and for the
// same loop written directly in JS in the bench page, both against the
// scripted stand-in model and the demo MCP server. Timing is taken at the
// servers, which run in this process: one clock for both ends of every
// gap.

//go:embed pages/agentloop.js
var agentHarnessJS string

// span is one request as a server saw it: arrival, and the return of its
// handler (the response's last byte written and flushed).
type span struct {
	kind       string // "model", or the requestKind at the MCP server
	start, end time.Time
}

// timeline records the spans of the requests it is enabled for.
type timeline struct {
	on    atomic.Bool
	mu    sync.Mutex
	spans []span
}

// reset drops the spans recorded so far.
func (t *timeline) reset() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.spans = nil
}

func (t *timeline) snapshot() []span {
	t.mu.Lock()
	defer t.mu.Unlock()
	return append([]span(nil), t.spans...)
}

// wrap times h's requests for which match is true, while the timeline is
// on; otherwise it only costs an atomic load.
// kind names the span of a request ("" : not recorded).
func (t *timeline) wrap(kind func(*http.Request) string, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !t.on.Load() {
			h.ServeHTTP(w, r)
			return
		}
		s := span{start: time.Now()}
		if s.kind = kind(r); s.kind == "" {
			h.ServeHTTP(w, r)
			return
		}
		h.ServeHTTP(w, r)
		s.end = time.Now()
		t.mu.Lock()
		t.spans = append(t.spans, s)
		t.mu.Unlock()
	})
}

func modelKind(r *http.Request) string {
	if r.Method == http.MethodPost && r.URL.Path == model.ChatPath {
		return "model"
	}
	return ""
}

// toolKind is the span kind of a tools/call at the MCP server; the other
// MCP requests are recorded under their requestKind too, and ignored by
// stepOverheads.
const toolKind = "MCP tools/call"

// stepOverheads returns, for each pair of consecutive model requests, the
// gap between the end of the first and the arrival of the next minus the
// tool time inside that gap (the union of the tools/call spans clipped to
// the gap), in ms.
func stepOverheads(spans []span) []float64 {
	models := ofKind(spans, "model")
	tools := ofKind(spans, toolKind)
	var out []float64
	for k := 0; k+1 < len(models); k++ {
		from, to := models[k].end, models[k+1].start
		out = append(out, ms64(to.Sub(from)-covered(tools, from, to)))
	}
	return out
}

// stepHalves splits each step's gap around its tool calls: from the end of
// model response k to the first tools/call's arrival (the model's answer
// read, the calls sent), and from the last tools/call's response to the
// arrival of model request k+1 (the results read, the next request sent),
// in ms. Steps without a tool call are left out.
func stepHalves(spans []span) (before, after []float64) {
	models := ofKind(spans, "model")
	tools := ofKind(spans, toolKind)
	for k := 0; k+1 < len(models); k++ {
		from, to := models[k].end, models[k+1].start
		first, last := to, from
		for _, t := range tools {
			if t.start.Before(from) || t.end.After(to) {
				continue
			}
			first, last = earlier(first, t.start), later(last, t.end)
		}
		if first.Before(last) {
			before = append(before, ms64(first.Sub(from)))
			after = append(after, ms64(to.Sub(last)))
		}
	}
	return before, after
}

// ofKind returns the spans of kind, by arrival.
func ofKind(spans []span, kind string) []span {
	var out []span
	for _, s := range spans {
		if s.kind == kind {
			out = append(out, s)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].start.Before(out[j].start) })
	return out
}

// covered is the length of the union of spans clipped to [from, to].
func covered(spans []span, from, to time.Time) time.Duration {
	var iv [][2]time.Time
	for _, s := range spans {
		a, b := later(s.start, from), earlier(s.end, to)
		if a.Before(b) {
			iv = append(iv, [2]time.Time{a, b})
		}
	}
	sort.Slice(iv, func(i, j int) bool { return iv[i][0].Before(iv[j][0]) })
	var total time.Duration
	var end time.Time
	for _, x := range iv {
		if x[0].Before(end) {
			x[0] = end
		}
		if x[0].Before(x[1]) {
			total += x[1].Sub(x[0])
			end = x[1]
		}
	}
	return total
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

func earlier(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}

// agentPrompt is the user message of turn i: one echo tool call, then an
// answer built from its result ("Results: turn i").
func agentPrompt(i int) string { return fmt.Sprintf("echo turn %d", i) }

// agentTurn is what the page reports for one turn.
type agentTurn struct {
	Ms     float64        `json:"ms"`
	Text   string         `json:"text"`
	Steps  int            `json:"steps"`
	Events map[string]int `json:"events"` // the Go agent's events by type
}

// checkEvents says whether the Go agent's turn delivered the events of
// the model's work to the page: they are part of what is measured.
func (t agentTurn) checkEvents() error {
	for typ, least := range map[string]int{"usage": 2, "reasoning": 2, "toolcalldelta": 2, "text": 2, "done": 1} {
		if t.Events[typ] < least {
			return fmt.Errorf("the page heard %d %s events of the Go agent's turn (%v); want at least %d", t.Events[typ], typ, t.Events, least)
		}
	}
	return nil
}

// agentLoops are the two clients of the scenario: the Go agent and the JS
// baseline, by their harness function.
var agentLoops = []struct{ key, fn string }{{"go", "AB.goTurn"}, {"js", "AB.jsTurn"}}

// agentFigures are one tree's figures: per loop ("go", "js"), the step
// overheads and turn times (ms) of the measured turns.
type agentFigures struct {
	overhead, turn map[string][]float64
	before, after  map[string][]float64 // the overhead's halves (stepHalves)
}

func newAgentFigures() *agentFigures {
	return &agentFigures{overhead: map[string][]float64{}, turn: map[string][]float64{}, before: map[string][]float64{}, after: map[string][]float64{}}
}

// add keeps one measured turn of loop key.
func (f *agentFigures) add(key string, t agentTurn, spans []span) {
	f.turn[key] = append(f.turn[key], t.Ms)
	f.overhead[key] = append(f.overhead[key], stepOverheads(spans)...)
	before, after := stepHalves(spans)
	f.before[key] = append(f.before[key], before...)
	f.after[key] = append(f.after[key], after...)
}

// ratio is the Go loop's p-th percentile of m over the JS loop's.
func (f *agentFigures) ratio(m map[string][]float64, p float64) float64 {
	return percentile(m["go"], p) / percentile(m["js"], p)
}

// agentTree is a tree whose agent the scenario runs: this one (name "")
// or a -also variant, each in its own page.
type agentTree struct {
	name, page string
	*agentFigures
}

// agentResult is the scenario's figures: this tree's, then each -also
// tree's, measured turn by turn in the same run.
type agentResult struct {
	*agentFigures // this tree
	also          []agentTree
	turns, warm   int
	load          [2]string // 1-minute load average at the start and the end
	at            time.Time // when the scenario started
}

// loadAvg is the 1-minute load average ("?" where /proc/loadavg is absent).
func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if f := strings.Fields(string(b)); err == nil && len(f) > 0 {
		return f[0]
	}
	return "?"
}

// runAgentBench opens a bench page per tree (this one, then each of also),
// sets up in each one catalog over the demo server, the Go agent and the
// JS loop, and runs warm + n turns with each loop of each tree,
// alternating: the order of the trees and of the loops flips every turn.
func (b *browser) runAgentBench(srv *servers, n, warm int, also []agentTree) (*agentResult, error) {
	res := &agentResult{agentFigures: newAgentFigures(), turns: n, warm: warm}
	trees := []agentTree{{page: "/wasm.html", agentFigures: res.agentFigures}}
	for _, t := range also {
		t.agentFigures = newAgentFigures()
		res.also = append(res.also, t)
		trees = append(trees, t)
	}
	tabs := make([]context.Context, len(trees))
	for i, t := range trees {
		ctx, closeTab := b.tab(chromedp.WithNewBrowserContext())
		defer closeTab()
		if err := openAgentPage(ctx, srv, t.page); err != nil {
			return nil, fmt.Errorf("agent scenario, %s: %v", t.label(), err)
		}
		tabs[i] = ctx
	}
	srv.Timeline.on.Store(true)
	defer srv.Timeline.on.Store(false)
	res.load[0], res.at = loadAvg(), time.Now()
	defer func() { res.load[1] = loadAvg() }()
	for i := 0; i < warm+n; i++ {
		for j := range trees {
			k := (i + j) % len(trees)
			if err := trees[k].turnPair(tabs[k], srv, i, i >= warm); err != nil {
				return nil, fmt.Errorf("%s: %v", trees[k].label(), err)
			}
		}
	}
	return res, nil
}

// label names the tree in errors and in the report.
func (t agentTree) label() string {
	if t.name == "" {
		return "this tree"
	}
	return "-also " + t.name
}

// openAgentPage loads a tree's bench page and the scenario's harness.
func openAgentPage(ctx context.Context, srv *servers, page string) error {
	if err := chromedp.Do(ctx, chromedp.Navigate(srv.PageURL+page)); err != nil {
		return err
	}
	if _, err := eval[float64](ctx, waitReady); err != nil {
		return err
	}
	if _, err := eval[bool](ctx, agentHarnessJS); err != nil {
		return err
	}
	setup, _ := json.Marshal(map[string]string{"mcpURL": srv.MCPURL, "baseURL": srv.ModelURL, "model": model.ModelID})
	_, err := eval[bool](ctx, "AB.setup("+string(setup)+")")
	return err
}

// turnPair runs turn i with both loops, the order flipping every turn,
// checks that they answered alike and keeps the figures when measured.
func (f *agentFigures) turnPair(ctx context.Context, srv *servers, i int, measured bool) error {
	texts := map[string]string{}
	for j := range agentLoops {
		l := agentLoops[(i+j)%len(agentLoops)]
		t, spans, err := agentOneTurn(ctx, srv, l.fn, i)
		if err != nil {
			return fmt.Errorf("agent scenario, %s loop, turn %d: %v", l.key, i, err)
		}
		texts[l.key] = t.Text
		if measured {
			f.add(l.key, t, spans)
		}
	}
	if want := "Results: turn " + fmt.Sprint(i); texts["go"] != want || texts["js"] != want {
		return fmt.Errorf("agent scenario, turn %d: the answers differ: Go %q, JS %q; want %q", i, texts["go"], texts["js"], want)
	}
	return nil
}

// agentOneTurn runs one turn with the harness function fn and returns the
// page's figures and the spans the servers saw.
func agentOneTurn(ctx context.Context, srv *servers, fn string, i int) (agentTurn, []span, error) {
	srv.Timeline.reset()
	p, _ := json.Marshal(agentPrompt(i))
	t, err := eval[agentTurn](ctx, fn+"("+string(p)+")")
	if err != nil {
		return t, nil, err
	}
	if t.Steps != 2 {
		return t, nil, fmt.Errorf("%d model steps; want 2 (one tool call, then the answer)", t.Steps)
	}
	if fn == "AB.goTurn" {
		if err := t.checkEvents(); err != nil {
			return t, nil, err
		}
	}
	spans, err := waitSpans(srv.Timeline, 2)
	if err != nil {
		return t, nil, err
	}
	if os.Getenv("BENCH_AGENT_TRACE") != "" {
		traceSpans(fn, spans)
	}
	if n := countKind(spans, toolKind); n != 1 {
		return t, nil, fmt.Errorf("the MCP server saw %d tools/call requests; want 1", n)
	}
	return t, spans, nil
}

// waitSpans waits (briefly) until the timeline holds the model requests
// of the turn with their ends: a handler may return a moment after the
// page has read the last event.
func waitSpans(t *timeline, models int) ([]span, error) {
	deadline := time.Now().Add(2 * time.Second)
	for {
		spans := t.snapshot()
		n := countKind(spans, "model")
		if n == models {
			return spans, nil
		}
		if n > models || time.Now().After(deadline) {
			return nil, fmt.Errorf("the model server saw %d requests; want %d", n, models)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func countKind(spans []span, kind string) int {
	n := 0
	for _, s := range spans {
		if s.kind == kind {
			n++
		}
	}
	return n
}

// traceSpans logs a turn's requests, relative to its first
// (BENCH_AGENT_TRACE=1).
func traceSpans(name string, spans []span) {
	sort.Slice(spans, func(i, j int) bool { return spans[i].start.Before(spans[j].start) })
	for _, s := range spans {
		t0 := spans[0].start
		logf("  %s %-22s %8.2f → %8.2f ms", name, s.kind, ms64(s.start.Sub(t0)), ms64(s.end.Sub(t0)))
	}
}

func ms64(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
