package main

import (
	"strings"
	"testing"
)

// The "nothing slower" row flags a row only when its median is worse than
// base's by more than the runs' spread.
func TestSlowerThanBase(t *testing.T) {
	r := &report{data: map[string]map[string][]float64{
		"a":      {"p50": {8.6, 8.9, 9.8}, "reconnectMs": {65, 114, 122}, "tput": {100, 101, 102}},
		"a:base": {"p50": {7.8, 8.4, 8.8}, "reconnectMs": {91, 99, 104}, "tput": {150, 151, 152}},
	}}
	row := r.slowerThanBase()
	if !strings.Contains(row, "| missed | worse than base by more than the spread: throughput, calls/s |") {
		t.Fatalf("throughput 101 against 151 (spread 2) is slower, p50 and reconnect are within their spread; the row:\n%s", row)
	}
	r.data["a"]["tput"] = []float64{149, 150, 153}
	if row := r.slowerThanBase(); !strings.Contains(row, "| **met** |") {
		t.Fatalf("nothing is slower beyond its spread; the row:\n%s", row)
	}
	if (&report{data: map[string]map[string][]float64{}}).slowerThanBase() != "" {
		t.Fatal("a run without a base variant has no such row")
	}
}
