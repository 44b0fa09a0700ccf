package main

import (
	"slices"
	"strings"
	"testing"
)

func TestNpmSection(t *testing.T) {
	res := &npmResult{ms: map[string][]float64{"demo": {100, 200, 0}, "app": {150, 100, 50}}, runs: 3}
	if got := res.ratios(); !slices.Equal(got, []float64{1.5, 0.5}) {
		t.Errorf("ratios = %v; want [1.5 0.5] (a run whose demo figure is 0 is left out)", got)
	}
	r := &report{npm: res}
	md := r.npmMarkdown()
	if !strings.HasPrefix(md, npmSectionTitle+"\n\n") || !strings.Contains(md, "| React example against the demo page | | 1.00× (0.50×–1.50×) |") {
		t.Errorf("section:\n%s", md)
	}
	res.err = "examples/react-vite has no node_modules"
	if md := r.npmMarkdown(); !strings.Contains(md, "**Not measured in this run** (examples/react-vite has no node_modules)") || strings.Contains(md, "| page |") {
		t.Errorf("section of a run that failed:\n%s", md)
	}
}
