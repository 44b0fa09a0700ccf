package main

import (
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcpwasm/mcpwasm/demo/authserver"
)

func TestTallyTurns(t *testing.T) {
	ok := func(s, text string) soakResult { return soakResult{ServerID: s, Text: text} }
	bad := func(s, text string) soakResult { return soakResult{ServerID: s, IsError: true, Text: text} }
	busy := "The beta server is busy (HTTP 429) and did not run beta_add. Call it again later if it is still needed, or tell the user; do not guess the result."
	turns := []soakTurn{
		// Two calls, one honest failure; the answer quotes both.
		{N: 0, Settled: true, Calls: map[string]string{"a": "alpha", "b": "beta"},
			Results: map[string]soakResult{"a": ok("alpha", "hi"), "b": bad("beta", busy)}, Text: "Results: hi; " + busy},
		// A call without a result.
		{N: 1, Settled: true, Calls: map[string]string{"a": "alpha", "b": "beta"},
			Results: map[string]soakResult{"a": ok("alpha", "hi")}, Text: "Results: hi"},
		// A turn that never settled.
		{N: 2, Calls: map[string]string{"a": "alpha"}},
		// An answer that does not quote a result.
		{N: 3, Settled: true, Calls: map[string]string{"a": "alpha"},
			Results: map[string]soakResult{"a": ok("alpha", "hi")}, Text: "Results: bye"},
		// A rejected turn: its results count, unquoted; one server absent.
		{N: 4, Settled: true, Error: "network: the model could not be reached", Calls: map[string]string{"a": "alpha"},
			Results: map[string]soakResult{"a": ok("alpha", "hi")}},
		// A turn that never settled before asking for anything.
		{N: 5},
	}
	got := tallyTurns("tab 1", turns, 2)
	if got.Turns != 6 || got.Calls != 7 || got.OK != 3 || got.Failed != 1 || got.FailedBy["busy"] != 1 {
		t.Errorf("tally = %+v; want 6 turns, 7 calls, 3 ok, 1 failed (busy)", got)
	}
	if got.Absent != 2 {
		t.Errorf("absent = %d; want 2", got.Absent)
	}
	if got.TurnErrors["network"] != 1 {
		t.Errorf("turn errors = %v; want network 1", got.TurnErrors)
	}
	want := []string{
		"tab 1 turn 1: no tool result for the call to beta",
		"tab 1 turn 2: the call to alpha never settled",
		`tab 1 turn 3: the model's answer does not quote the result of the call to alpha ("hi")`,
		"tab 1 turn 5: the turn never settled",
	}
	if !slices.Equal(got.Lost, want) {
		t.Errorf("lost = %q; want %q", got.Lost, want)
	}
	if clean := tallyTurns("tab 2", turns[:1], 2); len(clean.Lost) != 0 {
		t.Errorf("a clean turn: lost = %q", clean.Lost)
	}
}

func TestFailureKind(t *testing.T) {
	for text, want := range map[string]string{
		"The connection to the gamma server was lost while running gamma_slow (network); whether it had an effect is unknown.": "connection_lost",
		"The delta server could not run delta_reverse (network: fetch failed); whether it had an effect is unknown.":           "unreachable",
		"gamma_slow on the gamma server did not finish within 10s and was stopped; whether it had an effect is unknown.":       "timeout",
		"The alpha server failed 3 times in a row, so the app has paused calls to it; it will try again in about 5s.":          "breaker_open",
		"The app could not connect to the beta server (network) and will try again in about 2s, so beta_add was not run.":      "reconnect_wait",
		"an answer nobody wrote": "other",
	} {
		if got := failureKind(text); got != want {
			t.Errorf("failureKind(%.40q) = %s; want %s", text, got, want)
		}
	}
}

func TestCountRefreshes(t *testing.T) {
	t0 := time.Unix(1000, 0)
	ev := func(kind, err string, s float64) authserver.Event {
		return authserver.Event{Kind: kind, Err: err, Time: t0.Add(time.Duration(s * float64(time.Second)))}
	}
	const ttl = 20 * time.Second
	good := []authserver.Event{
		ev(authserver.EventRegister, "", 0),
		ev(authserver.EventTokenCode, "", 1),
		ev(authserver.EventTokenRefresh, "", 12), // half a lifetime later: fine
		ev(authserver.EventVerify, "", 13),
		ev(authserver.EventTokenRefresh, "", 40),
	}
	f := countRefreshes(good, ttl)
	if f != (refreshFigures{SignIns: 1, Refreshes: 2}) || f.perExpiry() != 1 {
		t.Errorf("good log: %+v, %v per expiry; want 1 sign-in, 2 refreshes, 1 per expiry", f, f.perExpiry())
	}
	if p := soakProblems(nil, map[string]refreshFigures{"alpha": f}); len(p) != 0 {
		t.Errorf("good log: problems %q", p)
	}
	bad := append(good,
		ev(authserver.EventTokenRefresh, "", 42), // a second tab refreshed the same expiry
		ev(authserver.EventRefreshReuse, "", 43),
		ev(authserver.EventTokenRefresh, "invalid_grant", 43))
	f = countRefreshes(bad, ttl)
	if f != (refreshFigures{SignIns: 1, Refreshes: 3, Early: 1, Reuse: 1, RefreshFailed: 1}) {
		t.Errorf("bad log: %+v", f)
	}
	if got := f.perExpiry(); got != 2 {
		t.Errorf("bad log: %v per expiry; want 2 (4 requests for 2 expiries)", got)
	}
	want := []string{
		"alpha: 1 refreshes repeated within one token lifetime",
		"alpha: 1 refresh requests refused (1 reused a rotated refresh token)",
		"beta: 2 sign-ins; want 1 (a grant lost or not shared between the tabs)",
	}
	if got := soakProblems(nil, map[string]refreshFigures{"alpha": f, "beta": {SignIns: 2}}); !slices.Equal(got, want) {
		t.Errorf("problems = %q; want %q", got, want)
	}
	if !math.IsNaN((refreshFigures{SignIns: 1}).perExpiry()) {
		t.Error("no refresh: want NaN per expiry")
	}
}

// TestSoakReport: the section names what was lost and the verdict fails
// the run, saying which; a clean soak passes.
func TestSoakReport(t *testing.T) {
	servers := []*soakServer{{ID: "alpha", as: &authserver.Server{}}, {ID: "gamma"}}
	res := &soakResultSet{duration: time.Minute, servers: servers,
		tabs:    []*soakTab{{name: "tab 1"}},
		tallies: []soakTally{{Turns: 2, Calls: 4, OK: 3, Failed: 1, FailedBy: map[string]int{"busy": 1}}},
		states:  map[string]map[string]soakState{"tab 1": {"gamma": {Reconnected: 1}}},
		faults:  []soakFault{{Server: "gamma", Kind: faultDown}, {Server: "gamma", Kind: faultLatency}},
		refresh: map[string]refreshFigures{"alpha": {SignIns: 1, Refreshes: 2}},
	}
	rep := &report{soak: res}
	if err := rep.soakVerdict(); err != nil {
		t.Errorf("clean soak: verdict %v", err)
	}
	md := rep.soakMarkdown()
	for _, want := range []string{soakSectionTitle + "\n", "- Verdict: no call lost, one refresh per expiry",
		"| gamma | no | down 1, latency 1 | 1 | 1 | 1.00 |", "| alpha | yes | none | 0 | 0 | — | 1 | 2 | 0 | 0 | 1.00 | 0 |",
		"Failed honestly, by kind: busy 1."} {
		if !strings.Contains(md, want) {
			t.Errorf("the section lacks %q:\n%s", want, md)
		}
	}
	res.tallies[0].Lost = []string{"tab 1 turn 1: no tool result for the call to gamma"}
	res.problems = soakProblems(res.tallies, res.refresh)
	if err := rep.soakVerdict(); err == nil || !strings.Contains(err.Error(), "no tool result for the call to gamma") {
		t.Errorf("a lost call: verdict %v", err)
	}
	if md := rep.soakMarkdown(); !strings.Contains(md, "- Verdict: FAILED: tab 1 turn 1: no tool result") {
		t.Errorf("a lost call: the section does not say so:\n%s", md)
	}
	if (&report{}).soakMarkdown() != "" || (&report{}).soakVerdict() != nil {
		t.Error("a run without the soak writes a soak section or fails")
	}
}
