package catalog

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestModelCallCarriesTheView: a model's call of a tool with a view
// (MCP Apps) says which view, so that an agent can have the page render it
// under the call; a tool without one, and a call the server never
// answered, say none.
func TestModelCallCarriesTheView(t *testing.T) {
	s := mcp.NewServer(&mcp.Implementation{Name: "views", Version: "1"}, nil)
	for name, meta := range map[string]mcp.Meta{
		"chart": {"ui": map[string]any{"resourceUri": "ui://views/chart.html"}},
		"plain": nil,
	} {
		s.AddTool(&mcp.Tool{Name: name, InputSchema: map[string]any{"type": "object"}, Meta: meta},
			func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ran"}}}, nil
			})
	}
	srv := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil))
	t.Cleanup(srv.Close)
	cat, _ := newCatalog(t, Config{Servers: servers("views", srv.URL), Factory: clientFactory(t)})
	ctx := context.Background()

	res, err := cat.ModelCall(ctx, "views_chart", "{}", CallOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if res.UI == nil || res.UI.ResourceURI != "ui://views/chart.html" || res.Result == nil || res.Text != "ran" {
		t.Errorf("chart: %+v (ui %+v); want its view and the server's result", res, res.UI)
	}
	res, err = cat.ModelCall(ctx, "views_plain", "{}", CallOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if res.UI != nil {
		t.Errorf("plain has a view: %+v", res.UI)
	}
	res, err = cat.ModelCall(ctx, "views_chart", "not json", CallOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if res.UI != nil || !res.IsError {
		t.Errorf("a call the server never answered: %+v (ui %+v); want an error without a view", res, res.UI)
	}
}
