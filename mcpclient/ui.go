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
	// UIExtension is the MCP Apps extension's capability name, and
	// UIMimeType the type of the views a host renders.
	UIExtension = "io.modelcontextprotocol/ui"
	UIMimeType  = "text/html;profile=mcp-app"
)

// maxResourceURI bounds the ui:// URI of a tool's view.
const maxResourceURI = 2048

// ToolUI is a tool's view (MCP Apps): the ui:// resource its server
// renders for it ("" for a tool that only says who may call it), and who
// may call the tool.
type ToolUI struct {
	ResourceURI string   `json:"resourceUri,omitempty"`
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
// says neither. A resourceUri that is not a ui:// URI is an error and is
// left out; the visibility stands with or without a view (a tool may say
// who calls it and have none). Visibility keeps "model" and "app" (others
// are ignored) and is both when it names neither.
func UIOf(t *mcp.Tool) (*ToolUI, error) {
	if t == nil || t.Meta == nil {
		return nil, nil
	}
	var uri, vis any
	if m, ok := t.Meta["ui"].(map[string]any); ok {
		uri, vis = m["resourceUri"], m["visibility"]
	}
	if uri == nil {
		uri = t.Meta["ui/resourceUri"]
	}
	u := &ToolUI{}
	if list, ok := vis.([]any); ok {
		for _, v := range list {
			if s, ok := v.(string); ok && (s == VisibilityModel || s == VisibilityApp) && !contains(u.Visibility, s) {
				u.Visibility = append(u.Visibility, s)
			}
		}
	}
	declared := len(u.Visibility) > 0
	if !declared {
		u.Visibility = []string{VisibilityModel, VisibilityApp}
	}
	var err error
	if uri != nil {
		s, ok := uri.(string)
		if ok && strings.HasPrefix(s, "ui://") && len(s) > len("ui://") && len(s) <= maxResourceURI {
			u.ResourceURI = s
		} else {
			shown := fmt.Sprint(uri)
			if len(shown) > 80 {
				shown = shown[:77] + "..."
			}
			err = fmt.Errorf("tool %q names a view %q that is not a ui:// resource; the view is ignored", t.Name, shown)
		}
	}
	if u.ResourceURI == "" && !declared {
		return nil, err
	}
	return u, err
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
