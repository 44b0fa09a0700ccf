package xengine

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpwasm/mcpwasm/demo/cors"
	"github.com/mcpwasm/mcpwasm/devkit/devserver"
)

// viewsServer is an MCP server whose tools have views (MCP Apps): chart
// (for the model and its view), refresh (for its view only), admin (for
// the model only), legacy (the deprecated flat key), bad (a view that is
// not a ui:// resource) and plain (none).
func viewsServer(t *testing.T) string {
	t.Helper()
	s := mcp.NewServer(&mcp.Implementation{Name: "views", Version: "1"}, nil)
	add := func(name string, meta mcp.Meta) {
		s.AddTool(&mcp.Tool{Name: name, Description: "The " + name + " tool.", InputSchema: map[string]any{"type": "object"}, Meta: meta},
			func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: name + " ran"}}}, nil
			})
	}
	add("chart", mcp.Meta{"ui": map[string]any{"resourceUri": "ui://views/chart.html"}})
	add("refresh", mcp.Meta{"ui": map[string]any{"resourceUri": "ui://views/chart.html", "visibility": []any{"app"}}})
	add("admin", mcp.Meta{"ui": map[string]any{"resourceUri": "ui://views/admin.html", "visibility": []any{"model"}}})
	add("legacy", mcp.Meta{"ui/resourceUri": "ui://views/old.html"})
	add("bad", mcp.Meta{"ui": map[string]any{"resourceUri": "https://elsewhere.example/view.html"}})
	add("plain", nil)
	mux := http.NewServeMux()
	mux.Handle("/mcp", mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil))
	srv := serve(t, cors.Wrap(mux, cors.Options{}))
	return srv.URL + "/mcp"
}

// TestToolsKnowTheirView: a client's listTools() and a catalog's tools
// carry each tool's view (ui: {resourceUri, visibility}, from _meta.ui or
// the deprecated flat key, both callers by default); a tool only its view
// may call never reaches the model (not in the catalog's tools, its
// export, nor callable by the model); a view that is not a ui://
// resource is left out with a warning.
func TestToolsKnowTheirView(t *testing.T) {
	eitherRuntime(t)
	w := newWorld(t, devserver.AuthConfig{})
	url := viewsServer(t)
	type ui struct {
		ResourceURI string   `json:"resourceUri"`
		Visibility  []string `json:"visibility"`
	}
	var got struct {
		Client   map[string]*ui `json:"client"`
		Catalog  map[string]*ui `json:"catalog"`
		Exported []string       `json:"exported"`
		Refresh  string         `json:"refresh"`
		Warnings []string       `json:"warnings"`
		CatWarn  []string       `json:"catWarn"`
	}
	w.eval(fmt.Sprintf(`(async () => {
		const client = mcp.client(%[1]q);
		const warnings = [];
		client.addEventListener("warning", (e) => warnings.push(e.detail.message));
		await client.connect();
		const client_ = Object.fromEntries((await client.listTools()).map((t) => [t.name, t.ui ?? null]));
		await client.close();
		const cat = mcp.catalog({ servers: { views: { url: %[1]q } } });
		const catWarn = [];
		cat.addEventListener("warning", (e) => catWarn.push(e.detail.message));
		const catalog = Object.fromEntries((await cat.tools()).map((t) => [t.tool.name, t.ui ?? null]));
		const exported = (await cat.toolsFor("openai")).map((t) => t.function.name);
		const refresh = JSON.stringify(await cat.callTool("views_refresh", {}));
		await cat.close();
		return { client: client_, catalog, exported, refresh, warnings, catWarn };
	})()`, url), &got)

	both := []string{"model", "app"}
	wantClient := map[string]*ui{
		"chart":   {"ui://views/chart.html", both},
		"refresh": {"ui://views/chart.html", []string{"app"}},
		"admin":   {"ui://views/admin.html", []string{"model"}},
		"legacy":  {"ui://views/old.html", both},
		"bad":     nil,
		"plain":   nil,
	}
	same := func(a, b *ui) bool {
		return a == nil && b == nil || a != nil && b != nil && a.ResourceURI == b.ResourceURI && slices.Equal(a.Visibility, b.Visibility)
	}
	for name, want := range wantClient {
		if g, ok := got.Client[name]; !ok || !same(g, want) {
			t.Errorf("client listTools: %s has ui %+v; want %+v", name, g, want)
		}
	}
	if _, ok := got.Catalog["refresh"]; ok {
		t.Errorf("the catalog lists refresh, which only its view may call: %v", got.Catalog)
	}
	for _, name := range []string{"chart", "admin", "legacy", "plain", "bad"} {
		if g, ok := got.Catalog[name]; !ok || !same(g, wantClient[name]) {
			t.Errorf("catalog: %s has ui %+v (listed %v); want %+v", name, g, ok, wantClient[name])
		}
	}
	if slices.Contains(got.Exported, "views_refresh") || !slices.Contains(got.Exported, "views_chart") || len(got.Exported) != 5 {
		t.Errorf("exported to the model: %v; want the five tools other than refresh", got.Exported)
	}
	if !strings.Contains(got.Refresh, "There is no tool named") || !strings.Contains(got.Refresh, "views_refresh") || strings.Contains(got.Refresh, "refresh ran") {
		t.Errorf("calling refresh through the catalog answered %q; want that there is no such tool", got.Refresh)
	}
	for _, ws := range [][]string{got.Warnings, got.CatWarn} {
		if len(ws) != 1 || !strings.Contains(ws[0], `"bad"`) || !strings.Contains(ws[0], "not a ui:// resource") {
			t.Errorf("warnings %q; want one about bad's view", ws)
		}
	}
}
