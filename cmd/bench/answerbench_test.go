package main

import (
	"strings"
	"testing"
)

func TestAnswerFigCheck(t *testing.T) {
	for _, c := range []struct {
		f  answerFig
		ok bool
	}{
		{answerFig{Text: answerWant, Steps: 2}, true},
		{answerFig{Text: "Results: something else", Steps: 2}, false},
		{answerFig{Text: answerWant, Steps: 1}, false}, // answered without the tool
		{answerFig{Text: "", Steps: 0}, false},
	} {
		if err := c.f.check(); (err == nil) != c.ok {
			t.Errorf("%+v: check() = %v; want ok %v", c.f, err, c.ok)
		}
	}
}

func TestAnswerRows(t *testing.T) {
	visit := func(first, repeat float64) []answerVisit {
		return []answerVisit{{First: answerFig{At: first, Ready: first - 100, Text: answerWant, Steps: 2}, Repeat: answerFig{At: repeat, Text: answerWant, Steps: 2}}}
	}
	r := &report{runtime: &runtimeResult{runs: 1, visits: map[string][]rtVisit{}, modes: map[string]string{},
		answers: map[string][]answerVisit{"main": visit(1200, 800), "shared": visit(1100, 700), "ts": visit(400, 300)}}}
	md := r.runtimeMarkdown()
	for _, want := range []string{
		// columns: main, worker (not run), auto, TS SDK
		"| navigation → first agent answer | ms | 1200 (1200–1200) | — | 1100 (1100–1100) | 400 (400–400) |\n",
		"| navigation → first agent answer, repeat visit | ms | 800 (800–800) | — | 700 (700–700) | 300 (300–300) |\n",
		"| of the first agent answer (first visit), ready → answer: the turn | ms | 100 (100–100) | — | 100 (100–100) | 100 (100–100) |\n",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("the runtime section lacks the row\n%s\nsection:\n%s", want, md)
		}
	}
	if got, want := median(r.runtime.answerRatio("shared", "ts", func(a answerVisit) float64 { return a.Repeat.At })), 700.0/300; got != want {
		t.Errorf("auto/TS repeat ratio = %v; want %v", got, want)
	}
}

func TestAnswerGoalRow(t *testing.T) {
	visit := func(first, repeat float64) []answerVisit {
		return []answerVisit{{First: answerFig{At: first, Ready: first / 2}, Repeat: answerFig{At: repeat}}}
	}
	r := &report{perf: &perfResult{}, data: map[string]map[string][]float64{"a": {"coldMs": {1}}, "b": {"coldMs": {1}}},
		runtime: &runtimeResult{runs: 1, visits: map[string][]rtVisit{}, answers: map[string][]answerVisit{
			"main": visit(1200, 900), "shared": visit(1000, 600), "ts": visit(500, 300)}}}
	md := r.goalsMarkdown()
	want := "the issue sets no goal figure for it | `auto`: 2.00× first (1000 ms against 500 ms), 2.00× repeat (600 ms against 300 ms); `main`: 2.40× first, 3.00× repeat | reported | of it, on the first visit, ready → answer (the turn: connect, tools listed, two model requests, one tool call): `auto` 500 ms, `main` 600 ms, TS SDK 250 ms;"
	if !strings.Contains(md, want) {
		t.Errorf("the goals table lacks\n%s\ntable:\n%s", want, md)
	}
}
