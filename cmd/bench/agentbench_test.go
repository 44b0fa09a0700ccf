package main

import (
	"os"
	"os/exec"
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

// TestAgentAlsoTrees: a -also tree's agent figures get their row in the
// agent section, its ratio to its own JS loop and this tree's Go step
// over its, and a mention in the goals row.
func TestAgentAlsoTrees(t *testing.T) {
	figs := func(goMs, jsMs float64) *agentFigures {
		f := newAgentFigures()
		for range 3 {
			f.overhead["go"] = append(f.overhead["go"], goMs)
			f.overhead["js"] = append(f.overhead["js"], jsMs)
		}
		return f
	}
	a := &agentResult{agentFigures: figs(22, 20), also: []agentTree{{name: "base", agentFigures: figs(44, 20)}}}
	got := a.alsoMarkdown()
	for _, want := range []string{
		"| this tree | 22.0 | 20.0 | 1.10× |",
		"| -also base | 44.0 | 20.0 | 2.20× |",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("alsoMarkdown lacks %q:\n%s", want, got)
		}
	}
	if !strings.Contains(got, "| 0.50× |\n") {
		t.Errorf("the base row does not give this tree's Go step over base's (0.50×):\n%s", got)
	}
}

// TestVariantDescribed: the report names a -also tree by its commit, not
// by its directory on the machine that ran the bench.
func TestVariantDescribed(t *testing.T) {
	dir := t.TempDir()
	git := func(args ...string) string {
		t.Helper()
		out, err := exec.Command("git", append([]string{"-C", dir, "-c", "user.name=b", "-c", "user.email=b@example.com"}, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	git("init", "-q")
	os.WriteFile(filepath.Join(dir, "f"), []byte("1"), 0o644)
	git("add", "f")
	git("commit", "-qm", "one")
	v := variant{name: "base", dir: dir}
	if got, want := v.described(), "a checkout of "+git("rev-parse", "--short", "HEAD"); got != want {
		t.Errorf("described() = %q; want %q", got, want)
	}
	os.WriteFile(filepath.Join(dir, "f"), []byte("2"), 0o644)
	if got := v.described(); !strings.HasSuffix(got, " and uncommitted changes") || strings.Contains(got, dir) {
		t.Errorf("described() of a changed checkout = %q", got)
	}
	if got := (variant{name: "x", dir: t.TempDir()}).described(); strings.Contains(got, "/") {
		t.Errorf("described() of a plain directory = %q; want its base name only", got)
	}
}
