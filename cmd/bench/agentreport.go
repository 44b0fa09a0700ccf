package main

import (
	"fmt"
	"strings"

	"github.com/mcpwasm/mcpwasm/devkit/webbuild"
)

// agentSectionTitle starts the scenario's section of the report; a run
// with -only agent replaces that section of the existing report.
const agentSectionTitle = "## Agent step overhead"

// agentScenario runs the agent scenario and keeps its figures in rep.
func agentScenario(br *browser, srv *servers, cfg config, rep *report) error {
	logf("agent step overhead: %d turns per loop after %d warm-up turns, %d tree(s)", cfg.agentTurns, cfg.agentWarm, 1+len(cfg.also))
	var also []agentTree
	for _, v := range cfg.also {
		also = append(also, agentTree{name: v.name, page: alsoPage(v.name)})
	}
	res, err := br.runAgentBench(srv, cfg.agentTurns, cfg.agentWarm, also)
	if err != nil {
		return err
	}
	rep.agent = res
	return nil
}

// agentMarkdown is the scenario's section ("" when it did not run).
func (r *report) agentMarkdown() string {
	a := r.agent
	if a == nil {
		return ""
	}
	var b strings.Builder
	w := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	w("%s\n\n", agentSectionTitle)
	w("What the agent loop adds per step: the time between the model's last byte and the next model request, minus the tool time in between. ")
	w("Timed at the servers, which run in the bench process (one clock): the arrival of each `POST %s` at the scripted stand-in model (`demo/model`, streaming, no pause between events) and the return of its handler (last byte written and flushed); the arrival and response of each `tools/call` at the demo MCP server. ", "/v1/chat/completions")
	w("Overhead of a step = (arrival of model request k+1 − end of model response k) − (tools/call time inside that gap).\n\n")
	w("Each turn is `echo turn <i>`: the stand-in calls `demo_echo`, then answers `Results: turn <i>` (both loops must give that text, or the bench fails); one gap per turn. ")
	w("Both loops run in one page on one catalog (`mcp.catalog({servers: {demo: {url}}})`), alternating turn by turn (the order flips every turn): ")
	w("(a) the Go agent, `cat.agent({model: mcp.models.openai({baseURL, model, apiKey})})`, `agent.run(text, {onEvent}).done`, every event delivered to the page's `onEvent` (the text, the stand-in's reasoning, the tool call's pieces as `toolcalldelta`, `usage`, …; the bench checks they arrived); ")
	w("(b) the same loop written directly in JS in the page (`cmd/bench/pages/agentloop.js`): `fetch` with `stream: true` and the tools of `cat.toolsFor(\"openai\")` (listed once, outside the timed part), the SSE deltas and tool calls parsed in JS (the reasoning deltas read and left aside), the calls run with `cat.handleToolCalls` (the same tool path), the results appended, the model asked again. ")
	w("%d measured turns per loop after %d warm-up turns; p50/p90 are nearest-rank over the %d measured steps of each loop; turn time is `performance.now()` around the turn in the page. The ratio is Go/JS within this run.\n\n", a.turns, a.warm, len(a.overhead["go"]))
	w("%s", r.measuredLine(a.at, a.load))
	w("- Command: `%s`\n\n", agentCommand(r.cfg))
	w("| loop | step overhead p50, ms | step overhead p90, ms | turn p50, ms | p50 of: model's last byte → tools/call arrives | p50 of: tool response → next model request arrives |\n| --- | ---: | ---: | ---: | ---: | ---: |\n")
	row := func(label, k string) {
		w("| %s | %s | %s | %s | %s | %s |\n", label, ms(percentile(a.overhead[k], 50)), ms(percentile(a.overhead[k], 90)), ms(percentile(a.turn[k], 50)),
			ms(percentile(a.before[k], 50)), ms(percentile(a.after[k], 50)))
	}
	row("(a) Go agent (`cat.agent`, `mcp.models.openai`)", "go")
	row("(b) the loop in JS (`fetch`, SSE parsed in JS, `cat.handleToolCalls`)", "js")
	q := func(m map[string][]float64, p float64) string { return ratio(a.ratio(m, p)) }
	w("| ratio a/b (Go/JS) | %s | %s | %s | %s | %s |\n\n", q(a.overhead, 50), q(a.overhead, 90), q(a.turn, 50), q(a.before, 50), q(a.after, 50))
	w("The last two columns split the overhead around the tool call (their p50s need not add up to the overhead's p50).\n\n")
	if len(a.also) > 0 {
		w("%s", a.alsoMarkdown())
	}
	return b.String()
}

// runAgentOnly is `-only agent`: the module build, the servers, Chromium
// and the agent scenario; the report file keeps its other sections.
func runAgentOnly(cfg config, rep *report, webDir string) error {
	also, err := buildAlso(cfg, webDir)
	if err != nil {
		return err
	}
	for _, a := range also {
		if _, err := webbuild.Stamp(a.dir); err != nil {
			return err
		}
	}
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
	if err := agentScenario(br, srv, cfg, rep); err != nil {
		return err
	}
	return writeSection(cfg, rep, rep.agentMarkdown(), "the agent section", sectionSplicer(agentSectionTitle))
}

// agentCommand is the command line that measures the section.
func agentCommand(cfg config) string {
	args := []string{"go run ./cmd/bench -out BENCHMARKS.md"}
	if cfg.only != "" {
		args = []string{"BENCH_ONLY=" + cfg.only + " make bench  # = " + args[0] + " -only " + cfg.only}
	}
	return strings.Join(append(args, agentFlags(cfg)...), " ")
}

// agentFlags are the scenario's flags that differ from their defaults,
// and its -also trees.
func agentFlags(cfg config) []string {
	var out []string
	for _, v := range cfg.also {
		out = append(out, "-also "+v.name+"=<"+v.described()+">")
	}
	if cfg.agentTurns != defaultAgentTurns {
		out = append(out, fmt.Sprintf("-agent-turns %d", cfg.agentTurns))
	}
	if cfg.agentWarm != defaultAgentWarm {
		out = append(out, fmt.Sprintf("-agent-warm %d", cfg.agentWarm))
	}
	return out
}

// alsoMarkdown is the before and after of the -also trees: each tree's
// agent and JS loop ran in their own page, turn by turn with this tree's.
func (a *agentResult) alsoMarkdown() string {
	var b strings.Builder
	w := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	w("### The same steps in other trees, in this run\n\n")
	w("Each tree's module (built with make build's flags) ran the same turns in its own page on the same servers, turn by turn with this tree's: the order of the trees and of the loops flips every turn. ")
	w("Each tree's JS loop is the baseline for its Go agent; the last column compares the Go agents directly.\n\n")
	w("| tree | Go step overhead p50, ms | JS step overhead p50, ms | ratio Go/JS | Go turn p50, ms | model's last byte → tools/call arrives (Go p50), ms | this tree's Go step p50 ÷ its Go step p50 |\n| --- | ---: | ---: | ---: | ---: | ---: | ---: |\n")
	trees := append([]agentTree{{agentFigures: a.agentFigures}}, a.also...)
	for _, t := range trees {
		w("| %s | %s | %s | %s | %s | %s | %s |\n", t.label(), ms(percentile(t.overhead["go"], 50)), ms(percentile(t.overhead["js"], 50)), ratio(t.ratio(t.overhead, 50)),
			ms(percentile(t.turn["go"], 50)), ms(percentile(t.before["go"], 50)), ratio(percentile(a.overhead["go"], 50)/percentile(t.overhead["go"], 50)))
	}
	w("\n")
	return b.String()
}
