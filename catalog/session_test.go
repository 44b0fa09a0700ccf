package catalog

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpwasm/mcpwasm/mcpclient"
	"github.com/mcpwasm/mcpwasm/mcperr"
)

// A server restart ends the session (404 on its id): the call that meets it
// runs again on a fresh session (the server never ran it), and so do the
// calls after it.
func TestReconnectAfterRestart(t *testing.T) {
	d := startDemo(t)
	cat, _ := newCatalog(t, Config{Servers: servers("demo", d.URL), Factory: clientFactory(t)})
	ctx := ctxT(t)
	call := func(text string) ToolResult {
		t.Helper()
		r, err := cat.ModelCall(ctx, "demo_echo", `{"text":"`+text+`"}`, CallOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	if r := call("one"); r.Text != "one" {
		t.Fatalf("first call = %q", r.Text)
	}
	d.restart()
	if r := call("two"); r.IsError || r.Text != "two" {
		t.Errorf("call after restart = %q; want it run on a fresh session", r.Text)
	}
	if r := call("three"); r.IsError || r.Text != "three" {
		t.Errorf("next call = %q; want a reconnect and three", r.Text)
	}
	if got := d.count("initialize"); got != 1 {
		t.Errorf("initialize requests at the restarted server = %d; want 1", got)
	}
	if st, _ := cat.Status("demo"); st.State != string(mcpclient.StateConnected) || st.Breaker != BreakerClosed {
		t.Errorf("status = %+v; want connected, breaker closed", st)
	}
}

// A server's tools/list_changed refreshes its tools: toolschanged fires
// once per change and the new tool is listed and callable.
func TestServerToolsChanged(t *testing.T) {
	d := startDemo(t)
	cat, ev := newCatalog(t, Config{Servers: servers("demo", d.URL), Factory: clientFactory(t)})
	ctx := ctxT(t)
	if _, err := cat.Tools(ctx); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "first toolschanged", func() bool { return len(toolsChanged(ev)) == 1 })
	if r, _ := cat.ModelCall(ctx, "demo_add_tool", `{"name":"greet"}`, CallOptions{}); r.IsError {
		t.Fatalf("add_tool = %q", r.Text)
	}
	waitFor(t, "toolschanged after add_tool", func() bool { return len(toolsChanged(ev)) == 2 })
	tools, _ := cat.Tools(ctx)
	if !slicesContains(names(tools), "demo_greet") {
		t.Fatalf("tools = %v; want demo_greet", names(tools))
	}
	if r, _ := cat.ModelCall(ctx, "demo_greet", `{"who":"catalog"}`, CallOptions{}); r.Text != "Hello, catalog, from greet!" {
		t.Errorf("greet = %q", r.Text)
	}
	if diff := cmp.Diff([]ToolsChanged{{IDs: []string{"demo"}}, {IDs: []string{"demo"}}}, toolsChanged(ev)); diff != "" {
		t.Errorf("toolschanged (-want +got):\n%s", diff)
	}
	if n := ev.count(EventStatusChange); n < 2 {
		t.Errorf("statuschange events = %d; want the tool count changes", n)
	}
}

func slicesContains(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

func TestMetaTools(t *testing.T) {
	d := startDemo(t)
	off := false
	cat, _ := newCatalog(t, Config{ServerTools: true, Factory: clientFactory(t), Servers: map[string]ServerConfig{
		"demo":  {URL: d.URL, Title: "Demo", Description: "The demo server"},
		"spare": {URL: d.URL, Enabled: &off},
	}})
	ctx := ctxT(t)
	tools, err := cat.Tools(ctx)
	if err != nil {
		t.Fatal(err)
	}
	got := names(tools)
	if got[len(got)-2] != MetaEnableServer || got[len(got)-1] != MetaListServers || len(got) != 9 {
		t.Fatalf("tools = %v; want demo's 7 then the meta tools", got)
	}
	r, _ := cat.ModelCall(ctx, MetaListServers, "{}", CallOptions{})
	var infos []ServerInfo
	mustUnmarshal(t, []byte(r.Text), &infos)
	want := []ServerInfo{
		{ID: "demo", Title: "Demo", Description: "The demo server", Status: "connected", Tools: 7},
		{ID: "spare", Status: "disabled"},
	}
	if diff := cmp.Diff(want, infos); diff != "" {
		t.Errorf("list_servers (-want +got):\n%s", diff)
	}
	r, _ = cat.ModelCall(ctx, MetaEnableServer, `{"id":"spare"}`, CallOptions{})
	if want := "The spare server is turned on. If spare_* tools appear in your next turn's tool list, proceed; if not, the user did not sign in or the server is unavailable: say so."; r.Text != want || r.IsError {
		t.Errorf("enable_server = %q; want %q", r.Text, want)
	}
	tools, _ = cat.Tools(ctx)
	if len(tools) != 16 {
		t.Errorf("tools after enable = %d; want 16", len(tools))
	}
	r, _ = cat.ModelCall(ctx, MetaEnableServer, `{"id":"nope"}`, CallOptions{})
	if r.Text != say(textNoServer, "nope") || !r.IsError {
		t.Errorf("enable_server unknown = %q", r.Text)
	}
	r, _ = cat.ModelCall(ctx, MetaEnableServer, `{}`, CallOptions{})
	if r.Text != say(textSchema, "", MetaEnableServer, `required: missing properties: ["id"]`) {
		t.Errorf("enable_server without id = %q", r.Text)
	}
}

// The model cannot undo the user's decline through catalog_enable_server.
func TestMetaEnableKeepsDecline(t *testing.T) {
	f := &fakeServer{tools: []*mcp.Tool{tool("search", true)}, connectErr: declinedErr()}
	cat, _ := newCatalog(t, Config{ServerTools: true, Servers: servers("github", "https://gh.example.com/mcp"), Factory: fakes(map[string]*fakeServer{"github": f})})
	ctx := ctxT(t)
	cat.Tools(ctx)
	r, _ := cat.ModelCall(ctx, MetaEnableServer, `{"id":"github"}`, CallOptions{})
	if r.Text != say(textDeclined, "github", MetaEnableServer) {
		t.Errorf("enable_server of a declined server = %q", r.Text)
	}
	n := f.connects.Load()
	cat.Tools(ctx)
	if f.connects.Load() != n {
		t.Error("the latch was cleared by the model")
	}
}

// Cancelling the caller's context is the only error of a call (besides a
// closed catalog), and the call sent to the server is cancelled too.
func TestAborted(t *testing.T) {
	started := make(chan struct{})
	f := &fakeServer{tools: []*mcp.Tool{tool("wait", true)}, call: func(ctx context.Context, _ string, _ json.RawMessage) (*mcp.CallToolResult, error) {
		close(started)
		<-ctx.Done()
		return nil, mcperr.Wrap(mcperr.Aborted, ctx.Err(), "mcp: aborted")
	}}
	clock := newFakeClock()
	cat, _ := newCatalog(t, Config{Servers: servers("s", "https://s.example.com/mcp"), Factory: fakes(map[string]*fakeServer{"s": f}), Clock: clock})
	ctx, cancel := context.WithCancel(ctxT(t))
	go func() { <-started; cancel() }()
	_, err := cat.ModelCall(ctx, "s_wait", "{}", CallOptions{})
	wantCode(t, err, mcperr.Aborted)
	_, err = cat.CallTool(ctx, "s_wait", nil, CallOptions{})
	wantCode(t, err, mcperr.Aborted)
	_, err = cat.Tools(ctx)
	wantCode(t, err, mcperr.Aborted)
	if st, _ := cat.Status("s"); st.Breaker != BreakerClosed {
		t.Errorf("breaker after an abort = %s; want closed (aborts are not failures)", st.Breaker)
	}
	// A call waiting for a sign-in ends with the catalog.
	g := &fakeServer{connectErr: authRequiredErr()}
	cat2, _ := newCatalog(t, Config{Servers: servers("g", "https://g.example.com/mcp"), Factory: fakes(map[string]*fakeServer{"g": g})})
	go func() { time.Sleep(10 * time.Millisecond); cat2.Close() }()
	_, err = cat2.ModelCall(ctxT(t), "g_x", "{}", CallOptions{AuthWait: patience})
	wantCode(t, err, mcperr.Closed)
}

func TestRenderContent(t *testing.T) {
	size := int64(2048)
	png := []byte{0x89, 'P', 'N', 'G', 1, 2, 3}
	long := strings.Repeat("é", MaxResultText) // 2 bytes a rune
	tests := []struct {
		name   string
		res    *mcp.CallToolResult
		text   string
		blocks []Block
	}{{
		name: "text parts joined",
		res:  &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "a"}, &mcp.TextContent{Text: "b"}}},
		text: "a\nb", blocks: []Block{{Type: "text", Text: "a\nb"}},
	}, {
		name: "structured content without text",
		res:  &mcp.CallToolResult{Content: []mcp.Content{}, StructuredContent: map[string]any{"sum": 5}},
		text: `{"sum":5}`, blocks: []Block{{Type: "text", Text: `{"sum":5}`}},
	}, {
		name: "structured content beside text is not repeated",
		res:  &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "2 + 3 = 5"}}, StructuredContent: map[string]any{"sum": 5}},
		text: "2 + 3 = 5", blocks: []Block{{Type: "text", Text: "2 + 3 = 5"}},
	}, {
		name: "image, audio, links, embedded resources",
		res: &mcp.CallToolResult{Content: []mcp.Content{
			&mcp.TextContent{Text: "chart:"},
			&mcp.ImageContent{MIMEType: "image/png", Data: png},
			&mcp.AudioContent{MIMEType: "audio/wav", Data: []byte{1, 2}},
			&mcp.ResourceLink{URI: "file:///r.txt", Name: "r.txt", Size: &size},
			&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "demo://readme", MIMEType: "text/markdown", Text: "# Hi"}},
			&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "demo://blob", MIMEType: "application/pdf", Blob: []byte{1, 2, 3}}},
		}},
		text: "chart:\n[image: image/png, 7 bytes]\n[audio: audio/wav, 2 bytes]\n[resource: file:///r.txt (r.txt)]\n[resource: demo://readme]\n# Hi\n[resource: demo://blob (application/pdf, 3 bytes)]",
		blocks: []Block{
			{Type: "text", Text: "chart:"},
			{Type: "image", MIMEType: "image/png", Data: "iVBORwECAw=="},
			{Type: "text", Text: "[audio: audio/wav, 2 bytes]\n[resource: file:///r.txt (r.txt)]\n[resource: demo://readme]\n# Hi\n[resource: demo://blob (application/pdf, 3 bytes)]"},
		},
	}, {
		name: "no content",
		res:  &mcp.CallToolResult{},
		text: textNoContent, blocks: []Block{{Type: "text", Text: textNoContent}},
	}, {
		name:   "capped",
		res:    &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: long}, &mcp.TextContent{Text: "tail"}}},
		text:   strings.Repeat("é", MaxResultText/2) + "\n[truncated: 100005 more bytes]",
		blocks: []Block{{Type: "text", Text: strings.Repeat("é", MaxResultText/2) + "\n[truncated: 100005 more bytes]"}},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			text, blocks := renderContent(tt.res)
			if text != tt.text {
				t.Errorf("text = %.200q; want %.200q", text, tt.text)
			}
			if diff := cmp.Diff(tt.blocks, blocks); diff != "" {
				t.Errorf("blocks (-want +got):\n%.2000s", diff)
			}
		})
	}
	// Anthropic carries the image; the others its placeholder.
	tr := outcome{name: "s_chart", id: "s", tool: "chart", res: tests[3].res}.render()
	out, err := ResultMessages(FormatAnthropic, []ToolCall{{ID: "t1", Name: "s_chart"}}, []ToolResult{tr})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(out), `{"type":"image","source":{"type":"base64","media_type":"image/png","data":"iVBORwECAw=="}}`) {
		t.Errorf("anthropic result has no image block: %s", out)
	}
	out, _ = ResultMessages(FormatOpenAI, []ToolCall{{ID: "t1", Name: "s_chart"}}, []ToolResult{tr})
	if !strings.Contains(string(out), `[image: image/png, 7 bytes]`) || strings.Contains(string(out), "iVBOR") {
		t.Errorf("openai result should carry the placeholder only: %s", out)
	}
}
