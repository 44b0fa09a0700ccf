//go:build js && wasm && !mcpwasm_client

package main

import (
	"context"
	"encoding/json"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpwasm/mcpwasm/catalog"
	"github.com/mcpwasm/mcpwasm/jsapi"
	"github.com/mcpwasm/mcpwasm/jsbridge"
	"github.com/mcpwasm/mcpwasm/mcpclient"
	"github.com/mcpwasm/mcpwasm/mcperr"
)

// maxWebMCPJSON caps what the page hands over for a webmcp server (a tool
// list, a result): the page's tools are code of the page, but an iframe's
// or a library's tool may answer anything.
const maxWebMCPJSON = 4 << 20

// webmcpServer is a catalog server made of the page's own WebMCP tools
// (document.modelContext). Go may run in a worker while modelContext
// lives in the page, so it reaches them through the host callbacks
// webmcpTools and webmcpCall, routed to the catalog's tab like
// catalogElicit; the catalog around it (names, allow/deny, schema check,
// approval, breaker, timeouts) is the same as for a remote server.
//
// The own tools of an MCP Apps view the page offered to the catalog
// (render()'s offerTools) are such a server too, reached through the host
// callbacks viewTools and viewCall with the server's id (view).
type webmcpServer struct {
	host   host
	target string // catalog:<id>
	view   string // the server's id when it is a view's tools; "" for the page's WebMCP tools
	events func(mcpclient.Event)

	mu    sync.Mutex
	state mcpclient.State
}

var _ catalog.Server = (*webmcpServer)(nil)

func (s *webmcpServer) State() mcpclient.State {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.state
}

// Connect has nothing to reach: the page is there. Without the API the
// server is connected with no tools (the page said so with a warning).
func (s *webmcpServer) Connect(context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.state == mcpclient.StateClosed {
		return mcperr.New(mcperr.Closed, "mcp: the server of %s is closed", s.what())
	}
	s.state = mcpclient.StateConnected
	return nil
}

// Authorize is Connect: the page's tools need no sign-in.
func (s *webmcpServer) Authorize(ctx context.Context) error { return s.Connect(ctx) }

func (s *webmcpServer) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.state = mcpclient.StateClosed
	return nil
}

// what names the tools the server is made of, for messages.
func (s *webmcpServer) what() string {
	if s.view != "" {
		return "the view's own tools"
	}
	return "the page's WebMCP tools"
}

// changed tells the catalog that the page's tools changed (toolchange), or
// the view's (tools/list_changed).
func (s *webmcpServer) changed() {
	if s.State() == mcpclient.StateConnected {
		s.events(mcpclient.Event{Type: "toolschanged"})
	}
}

// webmcpTool is one tool as the page lists it (ModelContext.getTools()).
type webmcpTool struct {
	Name        string          `json:"name"`
	Title       string          `json:"title,omitempty"`
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"inputSchema,omitempty"`
	Annotations *struct {
		ReadOnlyHint bool `json:"readOnlyHint"`
	} `json:"annotations,omitempty"`
}

func (s *webmcpServer) ListTools(ctx context.Context) ([]*mcp.Tool, error) {
	raw, err := s.askPage(ctx, "tool list", "Tools")
	if err != nil {
		return nil, err
	}
	var list []webmcpTool
	if err := json.Unmarshal(raw, &list); err != nil {
		return nil, mcperr.New(mcperr.Protocol, "mcp: the list of %s is not a list of tools: %v", s.what(), err)
	}
	tools := make([]*mcp.Tool, 0, len(list))
	for _, wt := range list {
		t := &mcp.Tool{Name: wt.Name, Title: wt.Title, Description: wt.Description}
		// WebMCP lets a tool take no input; MCP wants an object schema.
		var schema map[string]any
		if len(wt.InputSchema) > 0 && json.Unmarshal(wt.InputSchema, &schema) == nil && schema != nil {
			t.InputSchema = schema
		} else {
			t.InputSchema = map[string]any{"type": "object"}
		}
		if wt.Annotations != nil && wt.Annotations.ReadOnlyHint {
			t.Annotations = &mcp.ToolAnnotations{ReadOnlyHint: true}
		}
		tools = append(tools, t)
	}
	return tools, nil
}

// webmcpOutcome is what the page's webmcpCall resolves: the tool's answer
// as executeTool gives it (a string, usually the JSON of what the tool's
// execute returned; absent for undefined), or the error it failed with.
type webmcpOutcome struct {
	Result *string `json:"result,omitempty"`
	Error  string  `json:"error,omitempty"`
}

func (s *webmcpServer) CallTool(ctx context.Context, name string, args json.RawMessage, _ func(*mcp.ProgressNotificationParams)) (*mcp.CallToolResult, error) {
	if len(args) == 0 {
		args = json.RawMessage("{}")
	}
	raw, err := s.askPage(ctx, "tool answer", "Call", name, string(args))
	if err != nil {
		return nil, err
	}
	var out webmcpOutcome
	if err := json.Unmarshal(raw, &out); err != nil {
		return nil, mcperr.New(mcperr.Protocol, "mcp: a call of %s answered a value of the wrong shape: %v", s.what(), err)
	}
	if out.Error != "" {
		// The tool ran and failed: a tool error the model may read and
		// act on, not a fault of the server.
		who := "the page's tool "
		if s.view != "" {
			who = "the view's tool "
		}
		return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: who + name + " failed: " + out.Error}}}, nil
	}
	return webmcpResult(out.Result), nil
}

// webmcpResult reads a WebMCP tool's answer: a CallToolResult's JSON (what
// WebMCP tools return by convention) is taken as one, anything else is
// the tool's text.
func webmcpResult(s *string) *mcp.CallToolResult {
	if s == nil {
		return &mcp.CallToolResult{Content: []mcp.Content{}}
	}
	var probe struct {
		Content json.RawMessage `json:"content"`
	}
	if json.Unmarshal([]byte(*s), &probe) == nil && len(probe.Content) > 0 && probe.Content[0] == '[' {
		var r mcp.CallToolResult
		if err := json.Unmarshal([]byte(*s), &r); err == nil {
			if r.Content == nil {
				r.Content = []mcp.Content{}
			}
			return &r
		}
	}
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: *s}}}
}

// askPage asks the page for this server's "Tools" or "Call" (op): the host
// callback webmcp<op>, or view<op> with the view's server id.
func (s *webmcpServer) askPage(ctx context.Context, what, op string, args ...any) (json.RawMessage, error) {
	if s.view != "" {
		return s.ask(ctx, "the view's "+what, "view"+op, append([]any{s.target, s.view}, args...)...)
	}
	return s.ask(ctx, "the page's WebMCP "+what, "webmcp"+op, append([]any{s.target}, args...)...)
}

// ask calls host callback name and returns its answer, a JSON string of
// at most maxWebMCPJSON bytes.
func (s *webmcpServer) ask(ctx context.Context, what, name string, args ...any) (json.RawMessage, error) {
	v, err := s.host.await(ctx, name, args...)
	if err != nil {
		return nil, err
	}
	str, err := jsbridge.String(v, what)
	if err != nil {
		return nil, err
	}
	if len(str) > maxWebMCPJSON {
		return nil, mcperr.New(mcperr.Protocol, "mcp: %s is larger than %d bytes", what, maxWebMCPJSON)
	}
	return json.RawMessage(str), nil
}

// opCatalogWebMCPChanged makes the catalog's webmcp servers list the
// page's tools again.
func (a *app) opCatalogWebMCPChanged(_ context.Context, args jsapi.CatalogRef, _ jsCall) (any, error) {
	ce, err := a.catalogEntry(args.ID)
	if err != nil {
		return nil, err
	}
	ce.mu.Lock()
	servers := make([]*webmcpServer, 0, len(ce.webmcp))
	for _, s := range ce.webmcp {
		if s.view == "" {
			servers = append(servers, s)
		}
	}
	ce.mu.Unlock()
	for _, s := range servers {
		s.changed()
	}
	return nil, nil
}

// opCatalogAddView offers the own tools of a view on the page as server
// args.Server of the catalog: a server served by the page, like a webmcp
// one, under the catalog's rules (names, schema check, approval, breaker).
func (a *app) opCatalogAddView(_ context.Context, args jsapi.CatalogAddView, _ jsCall) (any, error) {
	return a.withCatalog(args.ID, func(ce *catalogEntry) (any, error) {
		return nil, ce.cat.Add(args.Server, catalog.ServerConfig{View: true, Title: args.Title})
	})
}

// opCatalogViewChanged makes a view's server list the view's tools again.
func (a *app) opCatalogViewChanged(_ context.Context, args jsapi.CatalogServer, _ jsCall) (any, error) {
	ce, err := a.catalogEntry(args.ID)
	if err != nil {
		return nil, err
	}
	ce.mu.Lock()
	s := ce.webmcp[args.Server]
	ce.mu.Unlock()
	if s == nil || s.view == "" {
		return nil, mcperr.New(mcperr.InvalidArgument, "catalog: server %q is not a view's tools", args.Server)
	}
	s.changed()
	return nil, nil
}
