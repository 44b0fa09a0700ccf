package webbuild

import (
	"os"
	"regexp"
	"slices"
	"testing"
)

// The Makefile builds web/mcp.wasm, and the tests and the bench build
// through BuildWasm: both must link the same module.
func TestMakefileTags(t *testing.T) {
	b, err := os.ReadFile("../../Makefile")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^WASMTAGS\s*:=\s*(\S*)\s*$`).FindSubmatch(b)
	if m == nil {
		t.Fatal("the Makefile has no WASMTAGS line")
	}
	if string(m[1]) != Tags {
		t.Fatalf("Makefile WASMTAGS = %q, webbuild.Tags = %q: make them the same", m[1], Tags)
	}
	if !regexp.MustCompile(`(?m)^WASMFLAGS\s*:=.*-tags=\$\(WASMTAGS\)`).Match(b) {
		t.Fatal("the Makefile's WASMFLAGS do not pass -tags=$(WASMTAGS)")
	}
}

func TestWithTags(t *testing.T) {
	for _, c := range []struct{ in, want []string }{
		{nil, []string{"-tags=" + Tags}},
		{[]string{"-trimpath"}, []string{"-tags=" + Tags, "-trimpath"}},
		{[]string{"-tags", "nethttp_transport", "-trimpath"}, []string{"-tags=nethttp_transport," + Tags, "-trimpath"}},
		{[]string{"-trimpath", "-tags=a,b"}, []string{"-trimpath", "-tags=a,b," + Tags}},
		{[]string{"-tags="}, []string{"-tags=" + Tags}},
	} {
		if got := WithTags(c.in); !slices.Equal(got, c.want) {
			t.Errorf("WithTags(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}
