package catalog

import (
	"bytes"
	"strings"
	"testing"
)

// An agent asks for the tools before every step: an unchanged list is not
// encoded again, a changed one is, and a caller that writes into the
// export it got does not change the next one.
func TestToolsForReusesTheExport(t *testing.T) {
	d := startDemo(t)
	cat, ev := newCatalog(t, Config{Servers: servers("demo", d.URL), Factory: clientFactory(t)})
	ctx := ctxT(t)
	first, err := cat.ToolsForConversation(ctx, FormatOpenAI, []string{"demo_echo"})
	if err != nil {
		t.Fatal(err)
	}
	want := bytes.Clone(first)
	first[0] = 'X'
	again := func() []byte {
		t.Helper()
		b, err := cat.ToolsForConversation(ctx, FormatOpenAI, []string{"demo_echo"})
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	if got := again(); !bytes.Equal(got, want) {
		t.Fatalf("second export = %s\nwant the first, %s", got, want)
	}
	// Encoding the demo's tools allocates hundreds of times; a reused
	// export, a handful (the list's copy, the export's copy, the key).
	n := testing.AllocsPerRun(20, func() { again() })
	t.Logf("allocations of a reused export: %.0f", n)
	if n > 30 {
		t.Errorf("an unchanged export took %.0f allocations; want it reused (≤ 30)", n)
	}
	if r, _ := cat.ModelCall(ctx, "demo_add_tool", `{"name":"greet"}`, CallOptions{}); r.IsError {
		t.Fatalf("add_tool = %q", r.Text)
	}
	waitFor(t, "toolschanged after add_tool", func() bool { return len(toolsChanged(ev)) == 2 })
	if got := again(); !strings.Contains(string(got), `"demo_greet"`) {
		t.Errorf("export after add_tool = %s; want demo_greet in it", got)
	}
	if err := cat.Disable("demo"); err != nil {
		t.Fatal(err)
	}
	if got := again(); string(got) != "[]" {
		t.Errorf("export with the server disabled = %s; want []", got)
	}
}
