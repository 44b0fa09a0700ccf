package mcpclient

import (
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Who may call a tool with a view (MCP Apps, io.modelcontextprotocol/ui):
// the model, the view (app), or both.
const (
	VisibilityModel = "model"
	VisibilityApp   = "app"
)

// maxResourceURI bounds the ui:// URI of a tool's view.
const maxResourceURI = 2048

// ToolUI is a tool's view (MCP Apps): the ui:// resource its server
// renders for it, and who may call the tool.
type ToolUI struct {
	ResourceURI string   `json:"resourceUri"`
	Visibility  []string `json:"visibility"`
}

// ForModel reports whether a model may call the tool (true without a view).
func (u *ToolUI) ForModel() bool { return u == nil || contains(u.Visibility, VisibilityModel) }

// ForApp reports whether a view may call the tool.
func (u *ToolUI) ForApp() bool { return u != nil && contains(u.Visibility, VisibilityApp) }

func contains(list []string, v string) bool {
	for _, s := range list {
		if s == v {
			return true
		}
	}
	return false
}

// UIOf reads the view of t from its _meta.ui ({resourceUri, visibility}),
// or the deprecated flat _meta["ui/resourceUri"]. It returns nil when t
// has none, and an error (the view is then ignored) when its resourceUri
// is not a ui:// URI. Visibility keeps "model" and "app" (others are
// ignored) and is both when it names neither.
func UIOf(t *mcp.Tool) (*ToolUI, error) {
	if t == nil || t.Meta == nil {
		return nil, nil
	}
	var uri any
	var vis any
	if m, ok := t.Meta["ui"].(map[string]any); ok {
		uri, vis = m["resourceUri"], m["visibility"]
	}
	if uri == nil {
		uri = t.Meta["ui/resourceUri"]
	}
	if uri == nil {
		return nil, nil
	}
	s, ok := uri.(string)
	if !ok || !strings.HasPrefix(s, "ui://") || len(s) <= len("ui://") || len(s) > maxResourceURI {
		shown := fmt.Sprint(uri)
		if len(shown) > 80 {
			shown = shown[:77] + "..."
		}
		return nil, fmt.Errorf("tool %q names a view %q that is not a ui:// resource; the view is ignored", t.Name, shown)
	}
	u := &ToolUI{ResourceURI: s}
	if list, ok := vis.([]any); ok {
		for _, v := range list {
			if v == VisibilityModel || v == VisibilityApp {
				if !contains(u.Visibility, v.(string)) {
					u.Visibility = append(u.Visibility, v.(string))
				}
			}
		}
	}
	if len(u.Visibility) == 0 {
		u.Visibility = []string{VisibilityModel, VisibilityApp}
	}
	return u, nil
}

// ToolWithUI is a tool as a page lists it: the server's description and,
// when it has one, its view.
type ToolWithUI struct {
	*mcp.Tool
	UI *ToolUI `json:"ui,omitempty"`
}

// WithUI pairs each tool with its view; a view that is refused is left out
// and reported as a warning event.
func (c *Client) WithUI(tools []*mcp.Tool) []ToolWithUI {
	out := make([]ToolWithUI, len(tools))
	for i, t := range tools {
		ui, err := UIOf(t)
		if err != nil {
			c.emit("warning", Warning{Message: "mcp: " + err.Error()})
		}
		out[i] = ToolWithUI{Tool: t, UI: ui}
	}
	return out
}
