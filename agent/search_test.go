package agent_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpwasm/mcpwasm/agent"
	"github.com/mcpwasm/mcpwasm/agent/openai"
	"github.com/mcpwasm/mcpwasm/catalog"
	"github.com/mcpwasm/mcpwasm/demo"
	"github.com/mcpwasm/mcpwasm/demo/model"
	"github.com/mcpwasm/mcpwasm/mcpclient"
)

// bigCatalog is a catalog of n real in-process MCP servers (s00, s01, …)
// of 40 tools each; s07 has "reverse".
func bigCatalog(t *testing.T, n, budget int, approve func(context.Context, catalog.ApprovalRequest) (catalog.Answer, error)) *catalog.Catalog {
	t.Helper()
	servers := map[string]catalog.ServerConfig{}
	for i := range n {
		srv := httptest.NewServer(demo.ManyHandler(demo.ManyOptions{Index: i, Reverse: i == 7, Shuffle: true}))
		t.Cleanup(srv.Close)
		servers[fmt.Sprintf("s%02d", i)] = catalog.ServerConfig{URL: srv.URL + demo.StreamablePath}
	}
	c, err := catalog.New(catalog.Config{
		Servers: servers, ToolBudget: budget, Approve: approve,
		Factory: func(id string, sc catalog.ServerConfig, events func(mcpclient.Event)) (catalog.Server, error) {
			cl, err := mcpclient.New(sc.URL, mcpclient.Options{HTTPClient: &http.Client{Transport: http.DefaultTransport}, OnEvent: events})
			if err != nil {
				return nil, err
			}
			return catalog.FromClient(cl, mcpclient.ConnectOptions{}), nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// modelRequests is the stand-in model, recording each request's body.
type modelRequests struct {
	mu     sync.Mutex
	bodies [][]byte
}

func (m *modelRequests) start(t *testing.T) *openai.Model {
	t.Helper()
	h := model.New(model.Options{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		m.mu.Lock()
		m.bodies = append(m.bodies, b)
		m.mu.Unlock()
		r.Body = io.NopCloser(bytes.NewReader(b))
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	llm, err := openai.New(openai.Config{BaseURL: srv.URL + "/v1", Model: model.ModelID, HTTPClient: srv.Client(), APIKey: agent.NewSecret(testKey)})
	if err != nil {
		t.Fatal(err)
	}
	return llm
}

// toolNames reads the tool names of a recorded request.
func toolNames(t *testing.T, body []byte) []string {
	t.Helper()
	var req struct {
		Tools []struct {
			Function struct {
				Name string `json:"name"`
			} `json:"function"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, x := range req.Tools {
		out = append(out, x.Function.Name)
	}
	return out
}

// TestRunOverToolBudget: with 10 servers of 40 tools, the model gets the
// search tools, searches, calls the tool it found through
// catalog_call_tool (asked for approval as a direct call is), and then
// has that tool's full definition; the events name the real server and
// tool.
func TestRunOverToolBudget(t *testing.T) {
	var asked []catalog.ApprovalRequest
	var mu sync.Mutex
	cat := bigCatalog(t, 10, 0, func(_ context.Context, req catalog.ApprovalRequest) (catalog.Answer, error) {
		mu.Lock()
		defer mu.Unlock()
		asked = append(asked, req)
		return catalog.AllowOnce, nil
	})
	var reqs modelRequests
	a, err := agent.New(agent.Config{Model: reqs.start(t), Tools: cat})
	if err != nil {
		t.Fatal(err)
	}
	rec := &recorder{}
	res, err := a.RunText(context.Background(), "reverse hello", rec.on)
	if err != nil {
		t.Fatal(err)
	}
	if res.Text != "Results: olleh" {
		t.Errorf("text = %q; want the reversed text", res.Text)
	}
	meta := []string{catalog.MetaCallTool, catalog.MetaSearchTools}
	want := [][]string{meta, meta, append(slices.Clone(meta), "s07_reverse")}
	var got [][]string
	for i, b := range reqs.bodies {
		got = append(got, toolNames(t, b))
		t.Logf("model request %d: %d bytes", i, len(b))
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("tools of each request (-want +got):\n%s", diff)
	}
	var calls []string
	for _, ev := range rec.all() {
		switch d := ev.Data.(type) {
		case *agent.ToolCallEvent:
			calls = append(calls, fmt.Sprintf("toolcall %s %s %s", d.Name, d.ServerID, d.Tool))
		case *agent.ApprovalEvent:
			calls = append(calls, fmt.Sprintf("approval %s %s %s %v", d.Name, d.ServerID, d.Tool, d.Approved))
		case *agent.ToolResultEvent:
			calls = append(calls, fmt.Sprintf("toolresult %s %s %s %q", d.Name, d.ServerID, d.Tool, d.Text))
		}
	}
	wantCalls := []string{
		"toolcall catalog_search_tools  ",
		`toolresult catalog_search_tools  catalog_search_tools`, // text checked below
		"toolcall catalog_call_tool s07 reverse",
		"approval s07_reverse s07 reverse true",
		`toolresult catalog_call_tool s07 reverse "olleh"`,
	}
	if len(calls) == len(wantCalls) {
		calls[1] = calls[1][:len(wantCalls[1])]
	}
	if diff := cmp.Diff(wantCalls, calls); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(asked) != 1 || asked[0].ID != "s07" || asked[0].Tool != "reverse" || asked[0].Name != "s07_reverse" {
		t.Errorf("approval asked %+v; want once, for s07's reverse", asked)
	}
}

// TestRequestBytesBeforeAfter prints the size of the first model request
// of a run over 10 servers of 40 tools: with every tool (a budget none
// exceed) and with the default budget.
func TestRequestBytesBeforeAfter(t *testing.T) {
	sizes := map[string]int{}
	for _, tc := range []struct {
		name   string
		budget int
	}{{"every tool", 1 << 30}, {"default budget", 0}} {
		cat := bigCatalog(t, 10, tc.budget, nil)
		var reqs modelRequests
		a, err := agent.New(agent.Config{Model: reqs.start(t), Tools: cat})
		if err != nil {
			t.Fatal(err)
		}
		res, err := a.RunText(context.Background(), "reverse hello", nil)
		if err != nil || res.Text != "Results: olleh" {
			t.Fatalf("%s: %q, %v", tc.name, res.Text, err)
		}
		sizes[tc.name] = len(reqs.bodies[0])
		var total int
		for _, b := range reqs.bodies {
			total += len(b)
		}
		t.Logf("%-14s first model request %7d bytes; %d requests, %7d bytes in all", tc.name, len(reqs.bodies[0]), len(reqs.bodies), total)
	}
	if sizes["default budget"]*20 > sizes["every tool"] {
		t.Errorf("first request: %d bytes with the budget, %d with every tool; want far smaller", sizes["default budget"], sizes["every tool"])
	}
}
