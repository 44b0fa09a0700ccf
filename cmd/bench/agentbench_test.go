package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestStepOverheads(t *testing.T) {
	t0 := time.Unix(0, 0)
	at := func(ms float64) time.Time { return t0.Add(time.Duration(ms * float64(time.Millisecond))) }
	sp := func(kind string, a, b float64) span { return span{kind: kind, start: at(a), end: at(b)} }
	spans := []span{
		sp("model", 20, 30),          // second model request (out of order)
		sp(toolKind, 3, 8),           // gap 1: 2→20, tools 3–8 and 6–10 overlap: 7 ms
		sp(toolKind, 6, 10),          //
		sp("MCP tools/list", 11, 19), // not tool time
		sp("model", 0, 2),
		sp(toolKind, 29, 33), // gap 2: 30→40, clipped to 30–33: 3 ms
		sp("model", 40, 41),
	}
	got := stepOverheads(spans)
	want := []float64{18 - 7, 10 - 3}
	if len(got) != len(want) {
		t.Fatalf("overheads = %v; want %v", got, want)
	}
	for i := range want {
		if d := got[i] - want[i]; d > 1e-9 || d < -1e-9 {
			t.Errorf("overheads = %v; want %v", got, want)
		}
	}
	// Halves: gap 1 has its tools inside (2→3 before, 10→20 after); gap
	// 2's tool started before the gap, so it has no halves.
	if before, after := stepHalves(spans); !slices.Equal(before, []float64{1}) || !slices.Equal(after, []float64{10}) {
		t.Errorf("stepHalves = %v, %v; want [1], [10]", before, after)
	}
	if n := countKind(spans, toolKind); n != 3 {
		t.Errorf("countKind = %d", n)
	}
	if got := stepOverheads(spans[:1]); len(got) != 0 {
		t.Errorf("one model request: %v; want no step", got)
	}
}

func TestSpliceAgentSection(t *testing.T) {
	out := filepath.Join(t.TempDir(), "B.md")
	sec := agentSectionTitle + "\n\nnew\n\n"
	cases := []struct{ old, want string }{
		{"", sec},
		{"# B\n\n## A\n\na\n", "# B\n\n## A\n\na\n\n" + sec},
		{"# B\n\n" + agentSectionTitle + "\n\nold\n\n## Z\n\nz\n", "# B\n\n" + sec + "## Z\n\nz\n"},
		{"# B\n\n" + agentSectionTitle + "\n\nold\n", "# B\n\n" + sec},
	}
	for _, c := range cases {
		os.Remove(out)
		if c.old != "" {
			os.WriteFile(out, []byte(c.old), 0o644)
		}
		if err := sectionSplicer(agentSectionTitle)(out, sec); err != nil {
			t.Fatal(err)
		}
		b, _ := os.ReadFile(out)
		if string(b) != c.want {
			t.Errorf("splice into %q = %q; want %q", c.old, b, c.want)
		}
	}
}

// TestAgentHarnessShape: the page harness defines the two loops the
// scenario calls.
func TestAgentHarnessShape(t *testing.T) {
	for _, l := range agentLoops {
		name := strings.TrimPrefix(l.fn, "AB.")
		if !strings.Contains(agentHarnessJS, "async "+name+"(") {
			t.Errorf("pages/agentloop.js has no %s", name)
		}
	}
	if !slices.ContainsFunc(agentLoops, func(l struct{ key, fn string }) bool { return l.key == "go" }) {
		t.Error("no Go loop")
	}
}
