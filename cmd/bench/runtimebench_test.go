package main

import (
	"os"
	"path/filepath"
	"testing"
)

func TestPhaseTasks(t *testing.T) {
	v := rtVisit{
		Marks: map[string]float64{"ready": 100, "connectStart": 100, "connectEnd": 150, "callsEnd": 400},
		Longtasks: []longtask{
			{Start: 10, Ms: 80}, {Start: 60, Ms: 55}, // load
			{Start: 120, Ms: 70},                       // connect
			{Start: 150, Ms: 51}, {Start: 390, Ms: 90}, // calls
			{Start: 450, Ms: 300}, // after the calls: no phase
		},
	}
	for _, c := range []struct {
		from, to     string
		n            int
		longest, sum float64
	}{
		{"", "ready", 2, 80, 135},
		{"connectStart", "connectEnd", 1, 70, 70},
		{"connectEnd", "callsEnd", 2, 90, 141},
	} {
		ts := phaseTasks(v, c.from, c.to)
		l, s := longestSum(ts)
		if len(ts) != c.n || l != c.longest || s != c.sum {
			t.Errorf("%s→%s: %d tasks, longest %v, sum %v; want %d, %v, %v", c.from, c.to, len(ts), l, s, c.n, c.longest, c.sum)
		}
	}
}

func TestSpliceSection(t *testing.T) {
	out := filepath.Join(t.TempDir(), "B.md")
	os.WriteFile(out, []byte("# B\n\n## One\n\nold one\n\n## Two\n\nold two\n"), 0o644)
	if err := spliceSection(out, "## One", "## One\n\nnew one\n\n"); err != nil {
		t.Fatal(err)
	}
	if err := spliceSection(out, "## Three", "## Three\n\nnew three\n"); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(out)
	want := "# B\n\n## One\n\nnew one\n\n## Two\n\nold two\n\n## Three\n\nnew three\n"
	if string(b) != want {
		t.Errorf("report =\n%s\nwant\n%s", b, want)
	}
}
