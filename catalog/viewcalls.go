package catalog

import (
	"context"
	"encoding/json"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpwasm/mcpwasm/mcpclient"
	"github.com/mcpwasm/mcpwasm/mcperr"
)

// viewCallable reports whether a server's view may call t: its visibility
// lists "app", or it declares none.
func viewCallable(t *mcp.Tool) bool {
	ui, _ := mcpclient.UIOf(t)
	return ui == nil || ui.ForApp()
}

// ViewTools returns the tools of server id that its views (MCP Apps) may
// call, by name: its listed tools and those only views may call, after its
// allow and deny lists, whose visibility lists "app" or is not declared.
// It connects the server when needed. A server that cannot answer is an
// error coded as its state (auth_required, declined) or network, whose
// message says why.
func (c *Catalog) ViewTools(ctx context.Context, id string) ([]*mcp.Tool, error) {
	e, err := c.lookup(id)
	if err != nil {
		return nil, err
	}
	if text, err := c.gate(ctx, e, id, CallOptions{}); err != nil || text != "" {
		if err == nil {
			err = c.unavailable(e, text)
		}
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	out := []*mcp.Tool{}
	for _, t := range slices.Concat(e.tools, e.viewOnly) {
		if viewCallable(t) {
			out = append(out, t)
		}
	}
	slices.SortFunc(out, func(a, b *mcp.Tool) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

// unavailable is ViewTools' error for a server gate refused with text.
func (c *Catalog) unavailable(e *entry, text string) error {
	c.mu.Lock()
	state := e.state
	c.mu.Unlock()
	code := mcperr.Network
	switch state {
	case mcpclient.StateNeedsAuth, mcpclient.StateAuthorizing:
		code = mcperr.AuthRequired
	case mcpclient.StateDeclined:
		code = mcperr.Declined
	}
	return mcperr.New(code, "catalog: %s", text)
}

// ViewCall calls tool (the server's own name) of server id for one of that
// server's views (MCP Apps), with args (a JSON object; empty or null for
// none). The tool must be one of [Catalog.ViewTools]; the call then goes
// the way a model's does: the input schema is checked, the ApprovalPolicy
// and Approve decide (Approve is asked with Via [ViaView]; its "always"
// and "server" answers are kept in opts.Approvals, else in a scope of the
// views' calls for the catalog's life, apart from the page's and a
// model's, so that an answer given for one never lets the other call
// without asking), and the breaker and the call timeout apply. Every outcome is a result,
// as with [Catalog.CallTool]; the only errors are aborted, closed and
// invalid_argument (no server id, a tool the server's views may not call,
// a negative opts.Timeout).
func (c *Catalog) ViewCall(ctx context.Context, id, tool string, raw json.RawMessage, opts CallOptions) (*mcp.CallToolResult, error) {
	if err := c.checkCallOptions(opts); err != nil {
		return nil, err
	}
	e, err := c.lookup(id)
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, aborted(err)
	}
	if opts.Approvals == nil {
		opts.Approvals = &c.viewApprovals
	}
	o, err := c.viewCall(ctx, e, tool, raw, opts)
	if err != nil {
		return nil, err
	}
	if o.res != nil {
		return o.res, nil
	}
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: o.text}}, IsError: true}, nil
}

func (c *Catalog) viewCall(ctx context.Context, e *entry, tool string, raw json.RawMessage, opts CallOptions) (outcome, error) {
	o := outcome{name: tool, id: e.id, tool: tool}
	if text, err := c.gate(ctx, e, tool, opts); err != nil || text != "" {
		o.text = text
		return o, err
	}
	c.mu.Lock()
	var t *mcp.Tool
	for _, x := range slices.Concat(e.tools, e.viewOnly) {
		if x.Name == tool {
			t = x
		}
	}
	display, url := displayName(e.id, e.cfg), e.cfg.URL
	name, ok := c.exported[toolKey{e.id, tool}]
	if !ok {
		name = baseName(e.id, tool)
	}
	c.mu.Unlock()
	switch {
	case t == nil:
		return o, mcperr.New(mcperr.InvalidArgument, "catalog: "+textViewNoTool, display, tool)
	case !viewCallable(t):
		return o, mcperr.New(mcperr.InvalidArgument, "catalog: "+textViewModelOnly, display, tool)
	}
	return c.run(ctx, e, t, o, raw, ApprovalRequest{ID: e.id, Tool: t.Name, Name: name, Annotations: t.Annotations, Via: ViaView}, display, url, opts)
}
