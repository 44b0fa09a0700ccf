package main

import (
	"errors"
	"fmt"
	"math"
	"sort"
	"strings"
	"time"
)

// soakSectionTitle starts the soak's section of the report; a run with
// -only soak replaces that section of the existing report.
const soakSectionTitle = "## Soak"

// soakScenario runs the soak in a full run unless -soak-duration is 0.
func soakScenario(br *browser, cfg config, rep *report, webDir string) error {
	if cfg.soakDuration <= 0 {
		return nil
	}
	res, err := br.runSoak(webDir, cfg)
	if err != nil {
		return err
	}
	rep.soak = res
	return nil
}

// soakVerdict fails the run when the soak lost a call or repeated a
// refresh, saying which; nil when it did not run.
func (r *report) soakVerdict() error {
	if r.soak == nil || len(r.soak.problems) == 0 {
		return nil
	}
	return errors.New("soak: " + strings.Join(r.soak.problems, "; "))
}

// runSoakOnly is `-only soak`: the module build, the servers, Chromium
// and the soak; the report keeps its other sections. The section is
// written before the verdict, so a failed soak leaves its figures.
func runSoakOnly(cfg config, rep *report, webDir string) error {
	br, err := startBrowser()
	if err != nil {
		return err
	}
	defer br.Close()
	rep.chromium = br.Version
	if err := soakScenario(br, cfg, rep, webDir); err != nil {
		return err
	}
	if err := writeSection(cfg, rep, rep.soakMarkdown(), "the soak section", sectionSplicer(soakSectionTitle)); err != nil {
		return err
	}
	return rep.soakVerdict()
}

// soakCommand is the command line that measures the section.
func soakCommand(cfg config) string {
	flags := ""
	if cfg.soakDuration != defaultSoakDuration {
		flags = " -soak-duration " + cfg.soakDuration.String()
	}
	if cfg.only == "soak" {
		return "BENCH_ONLY=soak make bench  # = go run ./cmd/bench -out BENCHMARKS.md -only soak" + flags
	}
	return "go run ./cmd/bench -out BENCHMARKS.md" + flags
}

// soakMarkdown is the scenario's section ("" when it did not run).
func (r *report) soakMarkdown() string {
	s := r.soak
	if s == nil {
		return r.keptSoak
	}
	var b strings.Builder
	w := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	w("%s\n\n", soakSectionTitle)
	w("Faults a page lives through, for %s: three tabs of one page (`load()` runtime `auto`: one SharedWorker in Chromium), each with `mcp.catalog` over five demo MCP servers (each offering one tool) and a Go agent (`cat.agent`, `mcp.models.openai` against the scripted stand-in) that runs a turn every %s (±25%%): `%s`, one call per server, run in parallel; the stand-in answers with every result's text. ", s.duration, soakInterval, soakPrompt)
	w("Servers: alpha and beta behind sign-in (each its own demo authorization server; access tokens live %s and are refreshed after half of that; tab 1 signs in, tabs 2 and 3 use the stored grants), gamma (demo server), delta and epsilon (second demo servers); each behind a Toxiproxy proxy (`devkit/faultrig`). ", soakTokenTTL)
	w("Catalog: `callTimeoutMs` %d, breaker after 3 failures for %s; the agent waits %d ms for a sign-in nobody gives (`authWaitMs`). ", soakCallTimeout.Milliseconds(), soakCooldown, soakCallTimeout.Milliseconds())
	w("Every 2–6 s a fault at a random server for 2–5 s: the network down (proxy stopped), connections reset (`reset_peer`), 300–1500 ms latency, answers cut after 500–4500 bytes (`limit_data`), 1–3 answers 429 or 503 (Retry-After 0, 1 s or none) at the MCP endpoint or at the token endpoint, a restart (sessions forgotten).\n\n")
	w("A call is *lost* when its turn did not settle within %s, when no tool result came for it, or when the model's answer does not quote its result: must be 0. *Failed honestly* is an error result the model read, by the catalog's kind. *Refresh requests per expiry* are from the authorization servers' own logs: refreshes plus refused refresh requests, per access token refreshed: must be 1 (a refresh less than half a lifetime after the previous tokens counts as repeated). Memory is read through CDP after `gc()`: V8's used heap and the bytes of every `WebAssembly.Memory`, per tab and in the shared worker, after the first turn and after the last.\n\n", soakTurnBound)
	w("%s", r.measuredLine(s.at, s.load))
	w("- Command: `%s`\n", soakCommand(r.cfg))
	if len(s.problems) == 0 {
		w("- Verdict: no call lost, one refresh per expiry\n\n")
	} else {
		w("- Verdict: FAILED: %s\n\n", strings.Join(s.problems, "; "))
	}

	w("| tab | turns | calls | ok | failed honestly | lost | absent from a turn's tools | rejected turns | JS heap start → end | wasm memory start → end |\n| --- | ---: | ---: | ---: | ---: | ---: | ---: | --- | --- | --- |\n")
	var all soakTally
	for i, t := range s.tallies {
		tab := s.tabs[i]
		w("| %s | %d | %d | %d | %d | %d | %d | %s | %s → %s | %s → %s |\n", tab.name, t.Turns, t.Calls, t.OK, t.Failed, len(t.Lost), t.Absent, counts(t.TurnErrors),
			mb(tab.start.Heap), mb(tab.end.Heap), mb(tab.start.Wasm), mb(tab.end.Wasm))
		all.Turns += t.Turns
		all.Calls += t.Calls
		all.OK += t.OK
		all.Failed += t.Failed
		all.Lost = append(all.Lost, t.Lost...)
		all.Absent += t.Absent
	}
	w("| shared worker (%d) | | | | | | | | %s → %s | %s → %s |\n", s.workers, mb(s.worker[0].Heap), mb(s.worker[1].Heap), mb(s.worker[0].Wasm), mb(s.worker[1].Wasm))
	w("| **all** | %d | %d | %d | %d | **%d** | %d | | | |\n\n", all.Turns, all.Calls, all.OK, all.Failed, len(all.Lost), all.Absent)
	failed := map[string]int{}
	for _, t := range s.tallies {
		for k, v := range t.FailedBy {
			failed[k] += v
		}
	}
	w("Failed honestly, by kind: %s.\n\n", counts(failed))
	w("After the faults (the servers well again, %s later) one more turn per tab: %s.\n\n", soakCooldown+time.Second, strings.Join(s.final, "; "))

	w("| server | sign-in | faults | of which end connections | reconnects (3 tabs) | reconnects per such fault per tab | sign-ins | refreshes | refused refresh requests | repeated | refresh requests per expiry | token requests answered busy |\n| --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n")
	for _, sv := range s.servers {
		kinds := map[string]int{}
		nf := 0
		for _, f := range s.faults {
			if f.Server == sv.ID {
				kinds[f.Kind]++
				if netFaults[f.Kind] {
					nf++
				}
			}
		}
		rec := 0
		for _, st := range s.states {
			rec += st[sv.ID].Reconnected
		}
		per := "—"
		if nf > 0 {
			per = fmt.Sprintf("%.2f", float64(rec)/float64(nf*len(s.tabs)))
		}
		if sv.as == nil {
			w("| %s | no | %s | %d | %d | %s | | | | | | |\n", sv.ID, counts(kinds), nf, rec, per)
			continue
		}
		f := s.refresh[sv.ID]
		pe := "—"
		if v := f.perExpiry(); !math.IsNaN(v) {
			pe = fmt.Sprintf("%.2f", v)
		}
		w("| %s | yes | %s | %d | %d | %s | %d | %d | %d | %d | %s | %d |\n", sv.ID, counts(kinds), nf, rec, per, f.SignIns, f.Refreshes, f.RefreshFailed, f.Early, pe, s.tokenBusy[sv.ID])
	}
	w("\nA reconnect is a server's catalog status going from `reconnecting` to `connected` in a tab; clients connect lazily, so a tab that did not call a server during its fault need not reconnect, and more than one reconnect per fault per tab would be a storm.\n\n")
	return b.String()
}

// counts renders m as "k n, …" by key ("none" when empty).
func counts(m map[string]int) string {
	if len(m) == 0 {
		return "none"
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s %d", k, m[k])
	}
	return strings.Join(parts, ", ")
}
