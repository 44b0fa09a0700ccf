package agent_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpwasm/mcpwasm/agent"
	"github.com/mcpwasm/mcpwasm/catalog"
	"github.com/mcpwasm/mcpwasm/demo"
	"github.com/mcpwasm/mcpwasm/demo/model"
	"github.com/mcpwasm/mcpwasm/mcpclient"
)

// TestRunElicitation: a tool that asks the user in the middle of a turn
// (the demo's ask_user over a real catalog) shows up as an elicitation
// event of that call, with the id the catalog's Elicit is asked under; the
// answer reaches the server and, through the tool's result, the model.
func TestRunElicitation(t *testing.T) {
	srv := httptest.NewServer(demo.Handler(demo.Options{}))
	t.Cleanup(srv.Close)
	var cat *catalog.Catalog
	var asked []catalog.ElicitationRequest
	cat, err := catalog.New(catalog.Config{
		Servers: map[string]catalog.ServerConfig{"demo": {URL: srv.URL + demo.StreamablePath}},
		Factory: func(id string, sc catalog.ServerConfig, events func(mcpclient.Event)) (catalog.Server, error) {
			c, err := mcpclient.New(sc.URL, mcpclient.Options{HTTPClient: &http.Client{Transport: http.DefaultTransport}, OnEvent: events})
			if err != nil {
				return nil, err
			}
			return catalog.FromClient(c, mcpclient.ConnectOptions{Elicitation: func(ctx context.Context, p *mcp.ElicitParams) (*mcp.ElicitResult, error) {
				return cat.Elicit(ctx, id, p)
			}}), nil
		},
		Elicit: func(_ context.Context, req catalog.ElicitationRequest) (*mcp.ElicitResult, error) {
			asked = append(asked, req)
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "Ada", "color": "green"}}, nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cat.Close() })
	e := newEnv(t, model.Options{}, nil, nil)
	rec := &recorder{}
	res, err := e.agent(t, func(c *agent.Config) { c.Tools = cat }).RunText(context.Background(), "ask me who I am", rec.on)
	if err != nil {
		t.Fatal(err)
	}
	if want := "Results: The user answered: color: green, name: Ada, subscribe: false"; res.Text != want {
		t.Errorf("text = %q; want %q", res.Text, want)
	}
	var evs []*agent.ElicitationEvent
	var call *agent.ToolCallEvent
	for _, ev := range rec.all() {
		switch d := ev.Data.(type) {
		case *agent.ElicitationEvent:
			evs = append(evs, d)
		case *agent.ToolCallEvent:
			call = d
		}
	}
	if len(evs) != 1 || len(asked) != 1 || call == nil {
		t.Fatalf("elicitation events %d, Elicit asked %d times, toolcall %v; want 1, 1 and a call", len(evs), len(asked), call)
	}
	ev := evs[0]
	if ev.ID != call.ID || ev.ElicitationID != asked[0].ElicitationID || ev.ServerID != "demo" || ev.Mode != "form" ||
		ev.Message != "who I am" || ev.RequestedSchema == nil || ev.URL != "" {
		t.Errorf("elicitation event = %+v; want the call %s's form request asked as %s", ev, call.ID, asked[0].ElicitationID)
	}
	types := rec.types()
	if i, j := index(types, agent.EventElicitation), index(types, agent.EventToolResult); i < 0 || j < i {
		t.Errorf("event order %v; want elicitation before toolresult", types)
	}
}

func index(s []string, v string) int {
	for i, x := range s {
		if x == v {
			return i
		}
	}
	return -1
}
