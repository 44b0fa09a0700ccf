package catalog

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpwasm/mcpwasm/demo"
)

// startMany starts n in-process MCP servers of tools tools each (listing
// them in a shuffled order every time), the i-th answering its first
// request after delay(i); it returns their catalog entries, ids s00, s01….
// The server at reverseAt (if any) has a "reverse" tool.
func startMany(t *testing.T, n, tools, reverseAt int, delay func(i int) time.Duration) map[string]ServerConfig {
	t.Helper()
	out := map[string]ServerConfig{}
	for i := range n {
		h := demo.ManyHandler(demo.ManyOptions{Tools: tools, Index: i, Reverse: i == reverseAt, Shuffle: true})
		var once sync.Once
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			once.Do(func() { time.Sleep(delay(i)) })
			h.ServeHTTP(w, r)
		}))
		t.Cleanup(srv.Close)
		out[fmt.Sprintf("s%02d", i)] = ServerConfig{URL: srv.URL + demo.StreamablePath}
	}
	return out
}

func noDelay(int) time.Duration { return 0 }

// exportedNames reads the tool names of an export in format f.
func exportedNames(t *testing.T, f Format, b json.RawMessage) []string {
	t.Helper()
	var out []string
	switch f {
	case FormatOpenAI:
		var list []openAITool
		mustUnmarshal(t, b, &list)
		for _, x := range list {
			out = append(out, x.Function.Name)
		}
	case FormatOpenAIResponses:
		var list []responsesTool
		mustUnmarshal(t, b, &list)
		for _, x := range list {
			out = append(out, x.Name)
		}
	case FormatAnthropic:
		var list []anthropicTool
		mustUnmarshal(t, b, &list)
		for _, x := range list {
			out = append(out, x.Name)
		}
	case FormatGemini:
		var list []geminiTool
		mustUnmarshal(t, b, &list)
		for _, g := range list {
			for _, x := range g.FunctionDeclarations {
				out = append(out, x.Name)
			}
		}
	}
	return out
}

// TestToolsStableOrder: whatever order servers connect in and list their
// tools in, Tools and ToolsFor give them by server id, then tool name.
func TestToolsStableOrder(t *testing.T) {
	var lists [][]string
	var exports []string
	for _, delay := range []func(int) time.Duration{
		func(i int) time.Duration { return time.Duration(i) * 30 * time.Millisecond },   // s00 first
		func(i int) time.Duration { return time.Duration(5-i) * 30 * time.Millisecond }, // s04 first
		func(i int) time.Duration { return time.Duration(i%2) * 60 * time.Millisecond }, // evens first
	} {
		c, _ := newCatalog(t, Config{Servers: startMany(t, 5, 12, -1, delay), Factory: clientFactory(t), ToolBudget: 1 << 30})
		tools, err := c.Tools(ctxT(t))
		if err != nil {
			t.Fatal(err)
		}
		if len(tools) != 60 {
			t.Fatalf("%d tools; want 60", len(tools))
		}
		sorted := slices.IsSortedFunc(tools, func(a, b Tool) int {
			if c := strings.Compare(a.ServerID, b.ServerID); c != 0 {
				return c
			}
			return strings.Compare(a.Tool.Name, b.Tool.Name)
		})
		if !sorted {
			t.Errorf("tools not in (server id, tool name) order: %v", names(tools))
		}
		// The servers list again in another order: nothing changes.
		for _, id := range c.IDs() {
			e, _ := c.lookup(id)
			c.refreshTools(e)
		}
		b, err := c.ToolsFor(ctxT(t), FormatAnthropic)
		if err != nil {
			t.Fatal(err)
		}
		lists = append(lists, names(tools))
		exports = append(exports, string(b))
	}
	for i := 1; i < len(lists); i++ {
		if diff := cmp.Diff(lists[0], lists[i]); diff != "" {
			t.Errorf("order %d differs from order 0 (-0 +%d):\n%s", i, i, diff)
		}
		if exports[i] != exports[0] {
			t.Errorf("the export of order %d differs from that of order 0", i)
		}
	}
}

// TestToolBudget: under the budget the export is every tool, as before;
// over it, in every format, the two search meta tools (with the meta tools
// of ServerTools) and the tools the conversation used.
func TestToolBudget(t *testing.T) {
	srvs := startMany(t, 3, 10, -1, noDelay)
	under, _ := newCatalog(t, Config{Servers: srvs, Factory: clientFactory(t)})
	tools, err := under.Tools(ctxT(t))
	if err != nil {
		t.Fatal(err)
	}
	if est := EstimateTokens(tools); est > DefaultToolBudget {
		t.Fatalf("30 tools estimated at %d tokens; the test needs them under the default budget", est)
	}
	for _, f := range []Format{FormatOpenAI, FormatOpenAIResponses, FormatAnthropic, FormatGemini} {
		got, err := under.ToolsForConversation(ctxT(t), f, []string{"s00_get_invoice"})
		if err != nil {
			t.Fatal(err)
		}
		want, _ := Export(f, tools)
		if string(got) != string(want) {
			t.Errorf("%s under budget: the export is not the whole list", f)
		}
	}

	over, _ := newCatalog(t, Config{Servers: srvs, Factory: clientFactory(t), ToolBudget: 500, ServerTools: true})
	used := []string{"s02_list_payment", "s00_get_invoice", "no_such_tool"}
	want := []string{MetaCallTool, MetaEnableServer, MetaListServers, MetaSearchTools, "s00_get_invoice", "s02_list_payment"}
	for _, f := range []Format{FormatOpenAI, FormatOpenAIResponses, FormatAnthropic, FormatGemini} {
		b, err := over.ToolsForConversation(ctxT(t), f, used)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, exportedNames(t, f, b)); diff != "" {
			t.Errorf("%s over budget (-want +got):\n%s", f, diff)
		}
		b, _ = over.ToolsFor(ctxT(t), f)
		if diff := cmp.Diff(want[:4], exportedNames(t, f, b)); diff != "" {
			t.Errorf("%s over budget, nothing used (-want +got):\n%s", f, diff)
		}
	}
	// Gemini takes the arguments of catalog_call_tool as JSON text.
	b, _ := over.ToolsFor(ctxT(t), FormatGemini)
	var g []geminiTool
	mustUnmarshal(t, b, &g)
	args := g[0].FunctionDeclarations[0].Parameters["properties"].(map[string]any)["arguments"].(map[string]any)
	if args["type"] != "string" {
		t.Errorf("gemini catalog_call_tool arguments = %v; want a string parameter", args)
	}
	// Tools still lists every server tool.
	all, _ := over.Tools(ctxT(t))
	if len(all) != 32 {
		t.Errorf("Tools over budget: %d; want the 30 tools and 2 meta tools of ServerTools", len(all))
	}
}

func TestUsedTools(t *testing.T) {
	got := UsedTools(
		[]string{"a_x", MetaSearchTools, MetaCallTool, "a_x", MetaCallTool, MetaCallTool},
		[]string{"{}", `{"query":"y"}`, `{"name":"b_y","arguments":{}}`, "{}", `not json`, `{"name":"catalog_call_tool"}`})
	if diff := cmp.Diff([]string{"a_x", "b_y"}, got); diff != "" {
		t.Errorf("UsedTools (-want +got):\n%s", diff)
	}
}

// searchResult runs catalog_search_tools and reads its answer.
func searchResult(t *testing.T, c *Catalog, query string) searchAnswer {
	t.Helper()
	b, _ := json.Marshal(map[string]string{"query": query})
	r, err := c.ModelCall(ctxT(t), MetaSearchTools, string(b), CallOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if r.IsError {
		t.Fatalf("search %q: error %s", query, r.Text)
	}
	var a searchAnswer
	mustUnmarshal(t, []byte(r.Text), &a)
	return a
}

func TestSearchTools(t *testing.T) {
	c, _ := newCatalog(t, Config{Servers: startMany(t, 10, 40, 7, noDelay), Factory: clientFactory(t)})
	tests := []struct {
		query string
		first string // the best match
		all   []string
	}{
		{query: "reverse", first: "s07_reverse"},
		{query: "create ticket", first: "s00_create_ticket"},
		{query: "s03 archive", first: "s03_archive_alert"},
		// A word of the description only: "character".
		{query: "character by character", first: "s07_reverse", all: []string{"s07_reverse"}},
		{query: "s07_reverse", first: "s07_reverse"},
	}
	for _, tt := range tests {
		a := searchResult(t, c, tt.query)
		if len(a.Tools) == 0 || a.Tools[0].Name != tt.first {
			t.Errorf("search %q: %v; want %s first", tt.query, a.Tools, tt.first)
			continue
		}
		if len(a.Tools) > maxSearchResults {
			t.Errorf("search %q: %d results; want at most %d", tt.query, len(a.Tools), maxSearchResults)
		}
		if a.Tools[0].InputSchema["properties"] == nil || a.Tools[0].Description == "" || a.Tools[0].Server == "" {
			t.Errorf("search %q: first result %+v; want its server, description and schema", tt.query, a.Tools[0])
		}
		if tt.all != nil {
			var got []string
			for _, f := range a.Tools {
				got = append(got, f.Name)
			}
			if diff := cmp.Diff(tt.all, got); diff != "" {
				t.Errorf("search %q (-want +got):\n%s", tt.query, diff)
			}
		}
	}
	if a := searchResult(t, c, "ticket"); a.More == 0 || !strings.Contains(a.Note, "more") {
		t.Errorf("search ticket: more %d, note %q; want the matches left out counted", a.More, a.Note)
	}
	if a := searchResult(t, c, "zebra"); len(a.Tools) != 0 || !strings.Contains(a.Note, `No tool matches "zebra"`) {
		t.Errorf("search zebra: %+v; want none and a note saying so", a)
	}
}

// TestCallThrough: catalog_call_tool reaches the named tool's server and
// asks approval as a direct call does; what it cannot do it says.
func TestCallThrough(t *testing.T) {
	var mu sync.Mutex
	var asked []ApprovalRequest
	c, _ := newCatalog(t, Config{
		Servers: startMany(t, 10, 40, 7, noDelay), Factory: clientFactory(t), ToolBudget: 100,
		Approve: func(_ context.Context, req ApprovalRequest) (Answer, error) {
			mu.Lock()
			defer mu.Unlock()
			asked = append(asked, req)
			if req.Tool == "delete_file" {
				return Refuse, nil
			}
			return AllowOnce, nil
		},
	})
	var approvals []string
	opts := CallOptions{OnApproval: func(req ApprovalRequest, d ApprovalDecision) {
		mu.Lock()
		defer mu.Unlock()
		approvals = append(approvals, fmt.Sprintf("%s %s %s %v", req.ID, req.Tool, req.Name, d.Approved))
	}}
	direct, err := c.ModelCall(ctxT(t), "s07_reverse", `{"text":"hello"}`, opts)
	if err != nil {
		t.Fatal(err)
	}
	through, err := c.ModelCall(ctxT(t), MetaCallTool, `{"name":"s07_reverse","arguments":{"text":"hello"}}`, opts)
	if err != nil {
		t.Fatal(err)
	}
	want := ToolResult{Name: MetaCallTool, ServerID: "s07", Tool: "reverse", Text: "olleh"}
	if diff := cmp.Diff(want, ToolResult{Name: through.Name, ServerID: through.ServerID, Tool: through.Tool, Text: through.Text, IsError: through.IsError}); diff != "" {
		t.Errorf("through catalog_call_tool (-want +got):\n%s", diff)
	}
	if direct.Text != "olleh" {
		t.Errorf("direct call: %q", direct.Text)
	}
	mu.Lock()
	if len(asked) != 2 || string(asked[0].Args) != string(asked[1].Args) || asked[0].ID != asked[1].ID || asked[0].Name != asked[1].Name {
		t.Errorf("approval asked %+v; want the same request for the direct call and the call through", asked)
	}
	mu.Unlock()

	for _, tt := range []struct{ args, text string }{
		{`{"name":"s01_delete_file","arguments":{"id":"7"}}`, "The user refused to run s01_delete_file."},
		{`{"name":"s01_nope","arguments":{}}`, `There is no tool named "s01_nope". Call catalog_search_tools`},
		{`{"name":"nothing_here"}`, `There is no tool named "nothing_here". Call catalog_search_tools`},
		{`{"name":"s07_reverse","arguments":{"text":7}}`, "The arguments for s07_reverse do not match its input schema"},
		{`{"name":"s07_reverse","arguments":"{\"text\":\"ab\"}"}`, "ba"},
		{`{"name":"catalog_call_tool","arguments":{}}`, "catalog_call_tool is called directly"},
		{`{"arguments":{}}`, "name: a tool name is required"},
	} {
		r, err := c.ModelCall(ctxT(t), MetaCallTool, tt.args, opts)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(r.Text, tt.text) {
			t.Errorf("catalog_call_tool %s: %q; want it to say %q", tt.args, r.Text, tt.text)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	wantApprovals := []string{
		"s07 reverse s07_reverse true", "s07 reverse s07_reverse true",
		"s01 delete_file s01_delete_file false", "s07 reverse s07_reverse true",
	}
	if diff := cmp.Diff(wantApprovals, approvals); diff != "" {
		t.Errorf("approval events (-want +got):\n%s", diff)
	}
}

// TestRequestBytes measures the tools of a model request with 10 servers
// of 40 tools each: all of them, and over the default budget the search
// tools and one used tool.
func TestRequestBytes(t *testing.T) {
	c, _ := newCatalog(t, Config{Servers: startMany(t, 10, 40, 7, noDelay), Factory: clientFactory(t)})
	tools, err := c.Tools(ctxT(t))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []Format{FormatOpenAI, FormatOpenAIResponses, FormatAnthropic, FormatGemini} {
		all, _ := Export(f, tools)
		none, _ := c.ToolsFor(ctxT(t), f)
		one, _ := c.ToolsForConversation(ctxT(t), f, []string{"s07_reverse"})
		t.Logf("%-16s 400 tools: all %6d bytes (~%d tokens); over budget: %5d bytes, with one used tool %5d bytes",
			f, len(all), len(all)/4, len(none), len(one))
		if len(none) >= len(all)/20 {
			t.Errorf("%s: over budget the tools take %d bytes of %d", f, len(none), len(all))
		}
	}
}
