package mcpclient

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestUIOf: a tool's view from _meta.ui or the deprecated flat key, its
// visibility (both by default, unknown values dropped, kept without a
// view), and views that are not ui:// resources refused.
func TestUIOf(t *testing.T) {
	for _, tt := range []struct {
		name    string
		meta    mcp.Meta
		uri     string
		vis     []string
		model   bool
		app     bool
		wantErr string
	}{
		{name: "no meta", model: true},
		{name: "other meta", meta: mcp.Meta{"x": 1}, model: true},
		{name: "view, default visibility", meta: mcp.Meta{"ui": map[string]any{"resourceUri": "ui://chart/view.html"}}, uri: "ui://chart/view.html", vis: []string{"model", "app"}, model: true, app: true},
		{name: "app only", meta: mcp.Meta{"ui": map[string]any{"resourceUri": "ui://c", "visibility": []any{"app"}}}, uri: "ui://c", vis: []string{"app"}, app: true},
		{name: "model only", meta: mcp.Meta{"ui": map[string]any{"resourceUri": "ui://c", "visibility": []any{"model", "model"}}}, uri: "ui://c", vis: []string{"model"}, model: true},
		{name: "unknown visibility", meta: mcp.Meta{"ui": map[string]any{"resourceUri": "ui://c", "visibility": []any{"everyone", 3}}}, uri: "ui://c", vis: []string{"model", "app"}, model: true, app: true},
		{name: "flat key", meta: mcp.Meta{"ui/resourceUri": "ui://old/view"}, uri: "ui://old/view", vis: []string{"model", "app"}, model: true, app: true},
		{name: "https uri", meta: mcp.Meta{"ui": map[string]any{"resourceUri": "https://evil.example/view"}}, model: true, wantErr: "not a ui:// resource"},
		{name: "empty ui uri", meta: mcp.Meta{"ui/resourceUri": "ui://"}, model: true, wantErr: "not a ui:// resource"},
		{name: "not a string", meta: mcp.Meta{"ui": map[string]any{"resourceUri": 42}}, model: true, wantErr: "not a ui:// resource"},
		{name: "too long", meta: mcp.Meta{"ui/resourceUri": "ui://" + strings.Repeat("a", 3000)}, model: true, wantErr: "..."},
		{name: "visibility without a view", meta: mcp.Meta{"ui": map[string]any{"visibility": []any{"app"}}}, vis: []string{"app"}, app: true},
		{name: "model only, bad view", meta: mcp.Meta{"ui": map[string]any{"resourceUri": "https://x.example/v", "visibility": []any{"model"}}}, vis: []string{"model"}, model: true, wantErr: "not a ui:// resource"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ui, err := UIOf(&mcp.Tool{Name: "t", Meta: tt.meta})
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("UIOf = %+v, %v; want an error with %q", ui, err, tt.wantErr)
				}
			} else if err != nil {
				t.Fatal(err)
			}
			if tt.vis == nil && ui != nil || tt.vis != nil && (ui == nil || ui.ResourceURI != tt.uri || !slices.Equal(ui.Visibility, tt.vis)) {
				t.Errorf("UIOf = %+v; want %q %v", ui, tt.uri, tt.vis)
			}
			if ui.ForModel() != tt.model || ui.ForApp() != tt.app {
				t.Errorf("for model %v, for app %v; want %v, %v", ui.ForModel(), ui.ForApp(), tt.model, tt.app)
			}
		})
	}
}

// TestAppsExtensionDeclared: a client made with Apps declares the MCP
// Apps extension in initialize (with the view type it renders), so a
// server that checks for it can offer its views; one without does not.
func TestAppsExtensionDeclared(t *testing.T) {
	for _, era := range []string{"/mcp", "/modern"} {
		s := mcp.NewServer(&mcp.Implementation{Name: "apps", Version: "1"}, nil)
		s.AddTool(&mcp.Tool{Name: "caps", InputSchema: map[string]any{"type": "object"}},
			func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				var got any
				if p := req.Session.InitializeParams(); p != nil && p.Capabilities != nil {
					got = p.Capabilities.Extensions[UIExtension]
				}
				b, _ := json.Marshal(got)
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(b)}}}, nil
			})
		mux := http.NewServeMux()
		mux.Handle("/mcp", mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil))
		mux.Handle("/modern", mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, &mcp.StreamableHTTPOptions{Stateless: true}))
		srv := httptest.NewServer(mux)
		t.Cleanup(srv.Close)
		for _, apps := range []bool{true, false} {
			c := newClient(t, srv.URL+era, Options{Apps: apps})
			ctx := ctxT(t)
			if err := c.Connect(ctx, ConnectOptions{}); err != nil {
				t.Fatal(err)
			}
			res, err := c.CallTool(ctx, "caps", nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			got := res.Content[0].(*mcp.TextContent).Text
			want := "null"
			if apps {
				want = `{"mimeTypes":["text/html;profile=mcp-app"]}`
			}
			if got != want {
				t.Errorf("%s, Apps %v: the server saw the extension %s; want %s", era, apps, got, want)
			}
		}
	}
}
