package hashname

import (
	"crypto/sha256"
	"regexp"
	"testing"
)

func TestNameMatches(t *testing.T) {
	b := []byte("\x00asm module")
	sum := sha256.Sum256(b)
	name := Name("mcp", ".wasm", b)
	if len(name) != len("mcp-.wasm")+HashLen {
		t.Fatalf("Name = %q; want %d hex digits", name, HashLen)
	}
	if !Matches(name, sum[:]) {
		t.Errorf("Matches(%q, its own digest) = false", name)
	}
	other := sha256.Sum256([]byte("other"))
	for _, tc := range []struct {
		base string
		sum  []byte
		want bool
	}{
		{name, other[:], false},
		{"mcp.wasm", sum[:], false},
		{"mcp-0123.wasm", sum[:], false}, // too few digits
		{name + ".br", sum[:], false},
		{ManifestName(name), sum[:], false},
	} {
		if got := Matches(tc.base, tc.sum); got != tc.want {
			t.Errorf("Matches(%q) = %v; want %v", tc.base, got, tc.want)
		}
	}
	re := regexp.MustCompile(Pattern)
	for base, want := range map[string]bool{
		name: true, "mcp-0123456789abcdef-B3x_9.wasm": true, "mcp.wasm": false,
		"mcp-0123456789abcde.wasm": false, name + ".br": false, "x" + name: false,
	} {
		if got := re.MatchString(base); got != want {
			t.Errorf("Pattern matches %q: %v; want %v", base, got, want)
		}
	}
}

func TestManifest(t *testing.T) {
	a, b := sha256.Sum256([]byte("a")), sha256.Sum256([]byte("b"))
	m := Manifest([]string{"x.wasm", "x.wasm.br"}, [][]byte{a[:], b[:]})
	got := ParseManifest(append(m, "junk line\nzz  y\n"...))
	if len(got) != 2 || got["x.wasm.br"] == "" || got["x.wasm"] == got["x.wasm.br"] {
		t.Errorf("ParseManifest(%q) = %v; want the two entries", m, got)
	}
	if got := ParseManifest(make([]byte, MaxManifest+1)); len(got) != 0 {
		t.Errorf("ParseManifest of an oversized text = %v; want nothing", got)
	}
}
