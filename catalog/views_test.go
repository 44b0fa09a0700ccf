package catalog

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpwasm/mcpwasm/mcpclient"
	"github.com/mcpwasm/mcpwasm/mcperr"
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

// viewsServer is a real MCP server whose tools say who may call them
// (MCP Apps visibility): chart has a view and no visibility, refresh is
// for views only, secret for the model only, hidden for views only but on
// the catalog's deny list. It counts the calls each tool ran.
func viewsServer(t *testing.T) (string, func(tool string) int) {
	t.Helper()
	var mu sync.Mutex
	ran := map[string]int{}
	s := mcp.NewServer(&mcp.Implementation{Name: "views", Version: "1"}, nil)
	for name, meta := range map[string]mcp.Meta{
		"chart":   {"ui": map[string]any{"resourceUri": "ui://views/chart.html"}},
		"refresh": {"ui": map[string]any{"resourceUri": "ui://views/chart.html", "visibility": []any{"app"}}},
		"secret":  {"ui": map[string]any{"visibility": []any{"model"}}},
		"hidden":  {"ui": map[string]any{"visibility": []any{"app"}}},
	} {
		s.AddTool(&mcp.Tool{Name: name, Meta: meta, InputSchema: map[string]any{
			"type": "object", "properties": map[string]any{"n": map[string]any{"type": "integer"}},
		}}, func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			mu.Lock()
			ran[req.Params.Name]++
			mu.Unlock()
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ran " + req.Params.Name}}}, nil
		})
	}
	srv := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil))
	t.Cleanup(srv.Close)
	return srv.URL, func(tool string) int { mu.Lock(); defer mu.Unlock(); return ran[tool] }
}

// TestViewCallsGoThroughTheCatalog: a view's calls (MCP Apps) reach only
// the tools of its server that views may call, after the catalog's deny
// list, and are decided as a model's are: the host's approve is asked with
// via "app" and its "always" holds for the next call, the schema is
// checked, and the model's list never shows a view-only tool.
func TestViewCallsGoThroughTheCatalog(t *testing.T) {
	url, ran := viewsServer(t)
	var mu sync.Mutex
	var asked []ApprovalRequest
	cat, _ := newCatalog(t, Config{
		Servers: map[string]ServerConfig{"views": {URL: url, DenyTools: []string{"hidden"}}},
		Factory: clientFactory(t),
		Approve: func(_ context.Context, r ApprovalRequest) (Answer, error) {
			mu.Lock()
			asked = append(asked, r)
			mu.Unlock()
			return AllowAlways, nil
		},
	})
	ctx := ctxT(t)

	tools, err := cat.ViewTools(ctx, "views")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, tl := range tools {
		got = append(got, tl.Name)
	}
	if !slices.Equal(got, []string{"chart", "refresh"}) {
		t.Errorf("ViewTools = %v; want [chart refresh] (not the model's secret, not the denied hidden)", got)
	}
	model, err := cat.Tools(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if n := names(model); !slices.Equal(n, []string{"views_chart", "views_secret"}) {
		t.Errorf("the model's tools = %v; want [views_chart views_secret]", n)
	}

	for i := range 2 {
		res, err := cat.ViewCall(ctx, "views", "refresh", json.RawMessage(`{"n": 1}`), CallOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if res.IsError || resultText(res) != "ran refresh" {
			t.Errorf("call %d of refresh: %q (isError %v); want the server's result", i+1, resultText(res), res.IsError)
		}
	}
	if len(asked) != 1 || asked[0].Via != ViaView || asked[0].Tool != "refresh" || asked[0].ID != "views" || asked[0].Name != "views_refresh" {
		t.Errorf("approve was asked %+v; want once, about refresh, via %q (its \"always\" holds)", asked, ViaView)
	}
	if n := ran("refresh"); n != 2 {
		t.Errorf("the server ran refresh %d times; want 2", n)
	}

	for _, tc := range []struct{ tool, want string }{
		{"secret", "for the model only"},
		{"hidden", "no tool named"},
		{"nothing", "no tool named"},
	} {
		_, err := cat.ViewCall(ctx, "views", tc.tool, nil, CallOptions{})
		wantCode(t, err, mcperr.InvalidArgument)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("a view's call of %s: %v; want an error saying %q", tc.tool, err, tc.want)
		}
		if n := ran(tc.tool); n != 0 {
			t.Errorf("the server ran %s %d times; want never", tc.tool, n)
		}
	}
	for _, tc := range []struct{ tool, args, want string }{
		{"chart", `{"n": "one"}`, "n"},
		{"chart", `[1]`, "object"},
	} {
		res, err := cat.ViewCall(ctx, "views", tc.tool, json.RawMessage(tc.args), CallOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if !res.IsError || !strings.Contains(resultText(res), tc.want) {
			t.Errorf("a view's call of %s %s: %q (isError %v); want an error saying %q", tc.tool, tc.args, resultText(res), res.IsError, tc.want)
		}
		if n := ran(tc.tool); n != 0 {
			t.Errorf("the server ran %s %d times; want never", tc.tool, n)
		}
	}
	_, err = cat.ViewCall(ctx, "nobody", "chart", nil, CallOptions{})
	wantCode(t, err, mcperr.InvalidArgument)
}

// TestViewCallsFollowThePolicy: the host's approval policy decides a
// view's calls as it does a model's: a server set to "deny" runs none of
// them, and approve is not asked.
func TestViewCallsFollowThePolicy(t *testing.T) {
	url, ran := viewsServer(t)
	var asked int
	cat, _ := newCatalog(t, Config{
		Servers:        servers("views", url),
		Factory:        clientFactory(t),
		Approve:        func(context.Context, ApprovalRequest) (Answer, error) { asked++; return AllowOnce, nil },
		ApprovalPolicy: ApprovalPolicy{Servers: map[string]Level{"views": LevelDeny}},
	})
	res, err := cat.ViewCall(ctxT(t), "views", "refresh", nil, CallOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !res.IsError || !strings.Contains(resultText(res), "settings do not allow") {
		t.Errorf("a denied server's view call: %q; want the policy's refusal", resultText(res))
	}
	if asked != 0 || ran("refresh") != 0 {
		t.Errorf("approve asked %d times, refresh ran %d times; want neither", asked, ran("refresh"))
	}
}

// viewTool is a tool of visibility vis with one property n of type typ.
func viewTool(name, typ string, vis ...any) *mcp.Tool {
	return &mcp.Tool{Name: name, Meta: mcp.Meta{"ui": map[string]any{"visibility": vis}},
		InputSchema: map[string]any{"type": "object", "properties": map[string]any{"n": map[string]any{"type": typ}}}}
}

// TestViewToolsAndSchemasStayCurrent: a server with no tool a view may
// call lists none (an empty list, never null); when only a view-only
// tool changes its input schema, a view's next call is checked against
// the new one.
func TestViewToolsAndSchemasStayCurrent(t *testing.T) {
	f := &fakeServer{tools: []*mcp.Tool{viewTool("secret", "integer", "model")}}
	cat, _ := newCatalog(t, Config{Servers: servers("v", "http://v.example/mcp"), Factory: fakes(map[string]*fakeServer{"v": f})})
	ctx := ctxT(t)
	tools, err := cat.ViewTools(ctx, "v")
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := json.Marshal(tools); string(b) != "[]" {
		t.Errorf("ViewTools of a server with none = %s; want []", b)
	}

	f.mu.Lock()
	f.tools = append(f.tools, viewTool("refresh", "integer", "app"))
	f.mu.Unlock()
	f.events(mcpclient.Event{Type: "toolschanged"})
	if res, err := cat.ViewCall(ctx, "v", "refresh", json.RawMessage(`{"n": 1}`), CallOptions{}); err != nil || res.IsError {
		t.Fatalf("refresh with an integer: %v, %q", err, resultText(res))
	}
	f.mu.Lock()
	f.tools[1] = viewTool("refresh", "string", "app")
	f.mu.Unlock()
	f.events(mcpclient.Event{Type: "toolschanged"})
	res, err := cat.ViewCall(ctx, "v", "refresh", json.RawMessage(`{"n": "one"}`), CallOptions{})
	if err != nil || res.IsError {
		t.Errorf("refresh with a string after its schema changed to string: %v, %q; want it run", err, resultText(res))
	}
}

// TestViewAnswersAreTheViewsOwn: an "always" or "server" answer given for
// a view's call does not let the page's own calls of that server run
// without asking, nor the other way round.
func TestViewAnswersAreTheViewsOwn(t *testing.T) {
	f := &fakeServer{tools: []*mcp.Tool{viewTool("chart", "integer")}}
	var asked []string
	cat, _ := newCatalog(t, Config{
		Servers: servers("v", "http://v.example/mcp"),
		Factory: fakes(map[string]*fakeServer{"v": f}),
		Approve: func(_ context.Context, r ApprovalRequest) (Answer, error) {
			asked = append(asked, r.Via+":"+r.Tool)
			return AllowServer, nil
		},
	})
	ctx := ctxT(t)
	for range 2 {
		if _, err := cat.ViewCall(ctx, "v", "chart", nil, CallOptions{}); err != nil {
			t.Fatal(err)
		}
		if _, err := cat.CallTool(ctx, "v_chart", nil, CallOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if want := []string{"app:chart", ":chart"}; !slices.Equal(asked, want) {
		t.Errorf("approve was asked %v; want %v (once for the views, once for the page, each answer kept apart)", asked, want)
	}
	if n := f.calls.Load(); n != 4 {
		t.Errorf("the server ran %d calls; want 4", n)
	}
}
