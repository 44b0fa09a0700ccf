package agent_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpwasm/mcpwasm/agent"
	"github.com/mcpwasm/mcpwasm/catalog"
	"github.com/mcpwasm/mcpwasm/demo"
	"github.com/mcpwasm/mcpwasm/demo/model"
	"github.com/mcpwasm/mcpwasm/mcperr"
)

// mcpTools is a one-server Tools over a real MCP session: the tools of
// server id are exported as id_name, as the catalog names them.
type mcpTools struct {
	id string
	cs *mcp.ClientSession
}

var _ agent.Tools = (*mcpTools)(nil)

func (m *mcpTools) ToolsFor(ctx context.Context, f catalog.Format) (json.RawMessage, error) {
	res, err := m.cs.ListTools(ctx, &mcp.ListToolsParams{})
	if err != nil {
		return nil, err
	}
	var out []map[string]any
	for _, t := range res.Tools {
		out = append(out, map[string]any{"type": "function", "function": map[string]any{
			"name": m.id + "_" + t.Name, "description": t.Description, "parameters": t.InputSchema,
		}})
	}
	return json.Marshal(out)
}

func (m *mcpTools) ModelCall(ctx context.Context, name, args string, opts catalog.CallOptions) (catalog.ToolResult, error) {
	res := catalog.ToolResult{Name: name, ServerID: m.id, Tool: strings.TrimPrefix(name, m.id+"_")}
	if !strings.HasPrefix(name, m.id+"_") {
		return catalog.ToolResult{Name: name, IsError: true, Text: fmt.Sprintf("There is no tool %q.", name)}, nil
	}
	var a map[string]any
	if err := json.Unmarshal([]byte(args), &a); err != nil {
		res.IsError, res.Text = true, "The arguments are not valid JSON: "+err.Error()
		return res, nil
	}
	r, err := m.cs.CallTool(ctx, &mcp.CallToolParams{Name: res.Tool, Arguments: a})
	if err != nil {
		if ctx.Err() != nil {
			return catalog.ToolResult{}, ctx.Err()
		}
		res.IsError, res.Text = true, "The call failed: "+err.Error()
		return res, nil
	}
	var texts []string
	for _, c := range r.Content {
		if t, ok := c.(*mcp.TextContent); ok {
			texts = append(texts, t.Text)
		}
	}
	res.Text, res.IsError, res.Result = strings.Join(texts, "\n"), r.IsError, r
	return res, nil
}

// methods records the JSON-RPC methods the demo server receives.
type methods struct {
	mu   sync.Mutex
	seen []string
	ch   chan string
}

func (m *methods) add(method string) {
	m.mu.Lock()
	m.seen = append(m.seen, method)
	m.mu.Unlock()
	select {
	case m.ch <- method:
	default:
	}
}

// realMCP starts the demo MCP server and a session to it whose sampling
// requests go to sample.
func realMCP(t *testing.T, opts demo.Options, sample func(context.Context, *mcp.CreateMessageParams) (*mcp.CreateMessageResult, error)) *mcpTools {
	t.Helper()
	srv := httptest.NewServer(demo.Handler(opts))
	t.Cleanup(srv.Close)
	c := mcp.NewClient(&mcp.Implementation{Name: "agent-test", Version: "0"}, &mcp.ClientOptions{
		CreateMessageHandler: func(ctx context.Context, r *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			return sample(ctx, r.Params)
		},
	})
	cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: srv.URL + demo.StreamablePath, HTTPClient: srv.Client()}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return &mcpTools{id: "demo", cs: cs}
}

func TestRunRealMCP(t *testing.T) {
	e := newEnv(t, model.Options{}, nil, nil)
	tools := realMCP(t, demo.Options{}, nil)
	rec := &recorder{}
	res, err := e.agent(t, func(c *agent.Config) { c.Tools = tools }).RunText(context.Background(), "add 2 and 40 and echo hi", rec.on)
	if err != nil {
		t.Fatal(err)
	}
	if want := "Results: 2 + 40 = 42; hi"; res.Text != want {
		t.Errorf("text = %q; want %q", res.Text, want)
	}
	if tr := rec.last(agent.EventToolResult).(*agent.ToolResultEvent); tr.ServerID != "demo" {
		t.Errorf("toolresult = %+v", tr)
	}
}

// TestRunAbortRealMCP: aborting a run during a slow MCP call reaches the
// server as notifications/cancelled, and the tool stops.
func TestRunAbortRealMCP(t *testing.T) {
	m := &methods{ch: make(chan string, 64)}
	cancelled := make(chan string, 1)
	e := newEnv(t, model.Options{}, nil, nil)
	tools := realMCP(t, demo.Options{OnRequest: m.add, OnCancelled: func(tool string) { cancelled <- tool }}, nil)
	ctx, cancel := context.WithCancel(context.Background())
	rec := &recorder{hook: func(ev agent.Event) {
		if ev.Type == agent.EventToolCall {
			go func() { // once the server runs the call
				for method := range m.ch {
					if method == "tools/call" {
						cancel()
						return
					}
				}
			}()
		}
	}}
	_, err := e.agent(t, func(c *agent.Config) { c.Tools = tools }).RunText(ctx, "slow 40", rec.on)
	if mcperr.CodeOf(err, "") != mcperr.Aborted {
		t.Fatalf("err = %v; want aborted", err)
	}
	select {
	case tool := <-cancelled:
		if tool != demo.ToolSlow {
			t.Errorf("cancelled %q", tool)
		}
	case <-time.After(wait):
		t.Fatal("the server's slow tool was never cancelled")
	}
	deadline := time.After(wait)
	for {
		m.mu.Lock()
		seen := strings.Join(m.seen, " ")
		m.mu.Unlock()
		if strings.Contains(seen, "notifications/cancelled") {
			break
		}
		select {
		case <-m.ch:
		case <-deadline:
			t.Fatalf("the server never received notifications/cancelled; it saw %s", seen)
		}
	}
}

// TestSamplingRealMCP: the demo's summarize tool asks the client's model
// (sampling/createMessage); the agent serves it when allowed and refuses
// with the MCP user-rejected error otherwise.
func TestSamplingRealMCP(t *testing.T) {
	e := newEnv(t, model.Options{}, nil, nil)
	a := e.agent(t, nil)
	var allowed bool
	var asked []*mcp.CreateMessageParams
	handler := a.SamplingHandler(func(ctx context.Context, p *mcp.CreateMessageParams) (bool, error) {
		asked = append(asked, p)
		return allowed, nil
	})
	tools := realMCP(t, demo.Options{}, handler)
	args := `{"text": "The Model Context Protocol lets applications provide context to language models in a standard way.", "maxWords": 4}`

	allowed = true
	res, err := tools.ModelCall(context.Background(), "demo_summarize", args, catalog.CallOptions{})
	if err != nil || res.IsError || res.Text != "Summary: The Model Context Protocol" {
		t.Errorf("allowed: %+v, %v", res, err)
	}
	if sc, _ := json.Marshal(res.Result.StructuredContent); !strings.Contains(string(sc), `"model":"`+model.ModelID+`"`) {
		t.Errorf("structured content = %s; want the model's name", sc)
	}
	if len(asked) != 1 || asked[0].SystemPrompt == "" {
		t.Errorf("allow asked %d times", len(asked))
	}

	allowed = false
	res, err = tools.ModelCall(context.Background(), "demo_summarize", args, catalog.CallOptions{})
	if err != nil || !res.IsError || !strings.Contains(res.Text, "User rejected sampling request") {
		t.Errorf("refused: %+v, %v", res, err)
	}
}

func TestSample(t *testing.T) {
	var got agent.Request
	a, _ := agent.New(agent.Config{Model: agent.ModelFunc(func(ctx context.Context, req agent.Request, onText func(string)) (agent.Message, error) {
		got = req
		return agent.Message{Content: "short", FinishReason: "length", Model: "m1"}, nil
	})})
	res, err := a.Sample(context.Background(), &mcp.CreateMessageParams{
		SystemPrompt: "Be brief.", MaxTokens: 10, Temperature: 0.2, StopSequences: []string{"END"},
		Messages: []*mcp.SamplingMessage{
			{Role: "user", Content: &mcp.TextContent{Text: "Look:"}},
			{Role: "user", Content: &mcp.ImageContent{MIMEType: "image/png", Data: []byte{1}}},
			{Role: "assistant", Content: &mcp.TextContent{Text: "Nice."}},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	if tc, ok := res.Content.(*mcp.TextContent); !ok || tc.Text != "short" || res.Model != "m1" || res.StopReason != "maxTokens" || res.Role != "assistant" {
		t.Errorf("result = %+v", res)
	}
	if len(got.Messages) != 4 || got.Messages[0].Role != "system" || !strings.Contains(got.Messages[2].Content, "image/png") ||
		got.MaxTokens != 10 || got.Temperature == nil || *got.Temperature != 0.2 || got.Stop[0] != "END" || got.HasTools() {
		t.Errorf("request = %+v", got)
	}

	for _, p := range []*mcp.CreateMessageParams{nil, {}, {Messages: []*mcp.SamplingMessage{{Role: "system", Content: &mcp.TextContent{Text: "x"}}}}} {
		if _, err := a.Sample(context.Background(), p); err == nil {
			t.Errorf("Sample(%+v) accepted", p)
		}
	}
	if _, err := a.SamplingHandler(nil)(context.Background(), &mcp.CreateMessageParams{}); !agent.IsSamplingRefused(err) {
		t.Errorf("nil allow: %v; want refused", err)
	}
	if !agent.IsSamplingRefused(fmt.Errorf("wrapped: %w", agent.ErrSamplingRefused)) || agent.IsSamplingRefused(fmt.Errorf("other")) {
		t.Error("IsSamplingRefused")
	}
}
