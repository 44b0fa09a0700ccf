package mcpclient

import (
	"context"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Icons reach the page when they are https URLs or image data: URIs;
// others (script, files, plain http, oversized) are left out with a
// warning, and bad sizes and themes are dropped.
func TestIconsThatMayReachThePage(t *testing.T) {
	const png = "data:image/png;base64,iVBORw0KGgo="
	icons := []mcp.Icon{
		{Source: "https://example.com/i.png", MIMEType: "image/png", Sizes: []string{"48x48", "huge", "any"}, Theme: "dark"},
		{Source: "javascript:alert(1)"},
		{Source: "http://example.com/i.png"},
		{Source: "data:text/html,<script>alert(1)</script>"},
		{Source: "file:///etc/passwd"},
		{Source: png, MIMEType: "text/html", Theme: "neon"},
		{Source: "data:image/png;base64," + strings.Repeat("A", maxIconDataURI)},
	}
	s := mcp.NewServer(&mcp.Implementation{Name: "icons", Version: "1", Icons: icons}, nil)
	s.AddTool(&mcp.Tool{Name: "t", InputSchema: map[string]any{"type": "object"}, Icons: icons}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{}, nil
	})
	s.AddPrompt(&mcp.Prompt{Name: "p", Icons: icons}, func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		return &mcp.GetPromptResult{}, nil
	})
	srv := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil))
	t.Cleanup(srv.Close)
	var mu sync.Mutex
	var warnings []string
	c := newClient(t, srv.URL, Options{OnEvent: func(e Event) {
		if e.Type == "warning" {
			mu.Lock()
			warnings = append(warnings, e.Data.(Warning).Message)
			mu.Unlock()
		}
	}})
	ctx := ctxT(t)
	if err := c.Connect(ctx, ConnectOptions{}); err != nil {
		t.Fatal(err)
	}
	want := []mcp.Icon{
		{Source: "https://example.com/i.png", MIMEType: "image/png", Sizes: []string{"48x48", "any"}, Theme: "dark"},
		{Source: png},
	}
	if got := c.Session().ServerInfo.Icons; !reflect.DeepEqual(got, want) {
		t.Errorf("the server's icons = %+v; want %+v", got, want)
	}
	tools, err := c.ListTools(ctx)
	if err != nil || len(tools) != 1 || !reflect.DeepEqual(tools[0].Icons, want) {
		t.Errorf("the tool's icons = %+v, %v; want %+v", tools, err, want)
	}
	prompts, err := c.ListPrompts(ctx)
	if err != nil || len(prompts) != 1 || !reflect.DeepEqual(prompts[0].Icons, want) {
		t.Errorf("the prompt's icons = %+v, %v; want %+v", prompts, err, want)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(warnings) != 3*5 || !strings.Contains(strings.Join(warnings, "\n"), `icon 2 of tool "t" is left out: its src is not an https URL`) {
		t.Errorf("warnings = %q; want one per icon left out (5 each for the server, the tool and the prompt)", warnings)
	}
}
