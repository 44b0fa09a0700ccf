package catalog

import (
	"context"
	"encoding/json"
	"maps"
	"slices"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpwasm/mcpwasm/mcpclient"
)

// The meta tools a model gets with Config.ServerTools.
const (
	MetaListServers  = "catalog_list_servers"
	MetaEnableServer = "catalog_enable_server"
)

func metaTools() map[string]*mcp.Tool {
	destructive := false
	return map[string]*mcp.Tool{
		MetaListServers: {
			Name:        MetaListServers,
			Description: descListServers,
			InputSchema: map[string]any{"type": "object", "properties": map[string]any{}},
			Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true},
		},
		MetaEnableServer: {
			Name:        MetaEnableServer,
			Description: descEnableServer,
			InputSchema: map[string]any{
				"type":       "object",
				"properties": map[string]any{"id": map[string]any{"type": "string", "description": descEnableServerID}},
				"required":   []any{"id"},
			},
			Annotations: &mcp.ToolAnnotations{IdempotentHint: true, DestructiveHint: &destructive},
		},
	}
}

// ServerInfo is one entry of catalog_list_servers' answer.
type ServerInfo struct {
	ID          string `json:"id"`
	Title       string `json:"title,omitempty"`
	Description string `json:"description,omitempty"`
	Status      string `json:"status"`
	Tools       int    `json:"tools"`
	Breaker     string `json:"breaker,omitempty"` // when not closed
	Error       string `json:"error,omitempty"`
}

func (c *Catalog) callMeta(ctx context.Context, t *mcp.Tool, raw []byte, opts CallOptions) (outcome, error) {
	o := outcome{name: t.Name, tool: t.Name}
	args, instance, text := parseArgs(t.Name, raw)
	if text != "" {
		o.text = text
		return o, nil
	}
	if problem := describeArgs(t, instance); problem != "" {
		o.text = say(textSchema, "", t.Name, problem)
		return o, nil
	}
	req := ApprovalRequest{Tool: t.Name, Name: t.Name, Args: args, Annotations: t.Annotations}
	d, err := c.approve(ctx, req, "", t, opts)
	if err != nil {
		return o, err
	}
	if !d.Approved {
		o.text = refusalText(d, "", t.Name)
		return o, nil
	}
	switch t.Name {
	case MetaListSkills, MetaLoadSkill, MetaReadSkillFile:
		return c.callSkills(ctx, o, instance, opts)
	case MetaListServers:
		c.mu.Lock()
		infos := make([]ServerInfo, 0, len(c.entries))
		for _, id := range slices.Sorted(maps.Keys(c.entries)) {
			e := c.entries[id]
			st := c.statusLocked(e)
			info := ServerInfo{ID: id, Title: e.cfg.Title, Description: e.cfg.Description, Status: st.State, Tools: st.Tools}
			if st.Breaker != BreakerClosed {
				info.Breaker = st.Breaker
			}
			if st.Error != nil {
				info.Error = detail(st.Error.Message)
			}
			infos = append(infos, info)
		}
		c.mu.Unlock()
		b, _ := json.Marshal(infos)
		o.res = &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(b)}}}
	case MetaEnableServer:
		id, _ := instance["id"].(string)
		c.mu.Lock()
		e := c.entries[id]
		c.mu.Unlock()
		if e == nil {
			o.text = say(textNoServer, id)
			return o, nil
		}
		// Not a user action: a decline stays in force, so the model cannot
		// undo the user's no.
		if err := c.enable(e, false); err != nil {
			o.text = say(textConnectFailed, displayName(id, e.cfg), t.Name, errText(err))
			return o, nil
		}
		c.mu.Lock()
		latched := e.latched || e.state == mcpclient.StateDeclined
		display := displayName(id, e.cfg)
		c.mu.Unlock()
		if latched {
			c.askAgain(id, opts)
			o.text = say(textDeclined, display, t.Name)
			return o, nil
		}
		// Bring it up now: with opts.AuthWait a server that needs a sign-in
		// asks the host (OnAuthRequired) and waits for it, so the model's
		// next turn sees its tools, or hears why not.
		text, err := c.gate(ctx, e, t.Name, opts)
		if err != nil {
			return o, err
		}
		if text != "" {
			o.text = text
			return o, nil
		}
		prefix := baseName(id, "")
		o.res = &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{
			Text: say(textEnabled, display, prefix[:len(prefix)-1])}}}
	}
	return o, nil
}

// describeArgs validates a meta tool's arguments.
func describeArgs(t *mcp.Tool, args map[string]any) string {
	rs := resolveSchema(t.InputSchema)
	if rs == nil {
		return ""
	}
	if err := rs.Validate(args); err != nil {
		return describeInvalid(err)
	}
	return ""
}
