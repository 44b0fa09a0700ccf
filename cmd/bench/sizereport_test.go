package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSizeChangeSinceTheLastReport: the figures a report keeps in its
// comment are read back by the next run, and each cell says the change.
func TestSizeChangeSinceTheLastReport(t *testing.T) {
	r := &sizeReport{
		full:     sizes{Raw: 19_000_000, Gzip: 4_400_000, Brotli: 3_100_000},
		client:   sizes{Raw: 17_000_000, Gzip: 4_000_000, Brotli: 2_900_000},
		floor:    sizes{Raw: 14_000_000, Gzip: 3_400_000, Brotli: 2_400_000},
		fullNM:   []pkgSize{{"runtime", 1_000_000}, {namePackage("catalog"), 400_000}},
		fullCode: 1_430_000,
	}
	out := filepath.Join(t.TempDir(), "BENCHMARKS.md")
	if err := os.WriteFile(out, []byte("# Benchmarks\n\n"+r.markdown("cmd")), 0o644); err != nil {
		t.Fatal(err)
	}
	prev := previousFigures(out)
	if prev["build full brotli"] != 3_100_000 || prev["feature catalog"] != 400_000 {
		t.Fatalf("figures read back: %v", prev)
	}
	next := *r
	next.prev = prev
	next.full.Brotli += 1500
	next.client.Brotli -= 2000
	next.fullNM = []pkgSize{{"runtime", 1_000_000}, {namePackage("catalog"), 400_000}, {namePackage("relay"), 30_000}}
	md := next.markdown("cmd")
	for _, want := range []string{
		"| full module (make build) | 19.00 MB | 4.40 MB | 3.10 MB | +1.5 kB |",
		"| client-only module (`-tags=mcpwasm_client`) | 17.00 MB | 4.00 MB | 2.90 MB | −2.0 kB |",
		"| floor: a go-sdk client over jsfetch, nothing else of ours | 14.00 MB | 3.40 MB | 2.40 MB | 0 |",
		"| relay client | the relay option | `relay` | 30.0 kB | +30.0 kB |",
		"| github.com_mcpwasm_mcpwasm_relay | 30.0 kB | 2.1% | new |",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("the next report has no line %q:\n%s", want, md)
		}
	}
	if previousFigures(filepath.Join(t.TempDir(), "none.md")) != nil {
		t.Error("a missing report gave figures")
	}
}
