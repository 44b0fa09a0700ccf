package catalog

import (
	"context"
	"encoding/json"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpwasm/mcpwasm/mcpclient"
)

// Format names a model provider's tool format.
type Format string

// The formats of [Catalog.ToolsFor] and [Catalog.HandleToolCalls].
const (
	FormatOpenAI          Format = "openai"           // Chat Completions function tools
	FormatOpenAIResponses Format = "openai-responses" // Responses API function tools
	FormatAnthropic       Format = "anthropic"        // Messages API tools / tool_use
	FormatGemini          Format = "gemini"           // functionDeclarations
)

// Server is one MCP server as the catalog drives it. [FromClient] adapts an
// [mcpclient.Client]; tests may supply their own.
type Server interface {
	// State is the server's connection state.
	State() mcpclient.State
	// Connect connects without any user interaction: it never opens a
	// sign-in window. It fails coded auth_required when a sign-in is
	// needed and declined when the user declined one.
	Connect(ctx context.Context) error
	// Authorize signs in (from a user action) and then connects.
	Authorize(ctx context.Context) error
	// ListTools returns every tool of the server.
	ListTools(ctx context.Context) ([]*mcp.Tool, error)
	// CallTool calls a tool by its name on the server.
	CallTool(ctx context.Context, name string, args json.RawMessage, onProgress func(*mcp.ProgressNotificationParams)) (*mcp.CallToolResult, error)
	// Close ends the server's session for good.
	Close() error
}

// Factory makes the [Server] of one catalog entry. events receives the
// server's own events (statechange, toolschanged, …) for the catalog.
type Factory func(id string, cfg ServerConfig, events func(mcpclient.Event)) (Server, error)

// ServerConfig is one server entry of a catalog.
type ServerConfig struct {
	URL         string   `json:"url"`
	Title       string   `json:"title,omitempty"`
	Description string   `json:"description,omitempty"`
	Enabled     *bool    `json:"enabled,omitempty"` // nil: enabled
	AllowTools  []string `json:"allowTools,omitempty"`
	DenyTools   []string `json:"denyTools,omitempty"`
	// Client holds the remaining options of the entry (the client options
	// of mcp.client()), passed to the Factory as they came.
	Client json.RawMessage `json:"-"`
}

// BreakerConfig configures each server's circuit breaker.
type BreakerConfig struct {
	Failures int           // consecutive failures that open it; default 3
	Cooldown time.Duration // how long it stays open; default 30 s
}

// ApprovalRequest is what the approval hook is asked before a call.
type ApprovalRequest struct {
	ID          string               `json:"id"`   // server id
	Tool        string               `json:"tool"` // the server's tool name
	Name        string               `json:"name"` // the exported name
	Args        json.RawMessage      `json:"args"`
	Annotations *mcp.ToolAnnotations `json:"annotations,omitempty"`
}

// Clock tells the time (breaker cooldowns, backoff); tests fake it.
type Clock interface {
	Now() time.Time
}

// Config configures a [Catalog].
type Config struct {
	Servers           map[string]ServerConfig
	MaxServers        int           // default 32
	MaxToolsPerServer int           // default 128
	CallTimeout       time.Duration // default 60 s
	Breaker           BreakerConfig
	// Approve, when set, is asked before every call of a tool that is not
	// annotated readOnlyHint: true (the meta tool catalog_enable_server
	// included). false or an error refuses the call; the model is told the
	// user refused. Annotations are the server's hints: they spare asking
	// about the tool that carries them, nothing else.
	Approve func(ctx context.Context, req ApprovalRequest) (bool, error)
	// ServerTools exposes the model-facing meta tools
	// catalog_list_servers and catalog_enable_server.
	ServerTools bool
	// Factory makes each server. Required.
	Factory Factory
	// Clock times breaker cooldowns and reconnect backoff; default the
	// real clock.
	Clock Clock
	// OnEvent receives statuschange, toolschanged, authrequired and warning
	// events, one at a time and in order, outside the catalog's lock (it
	// may call the catalog). It must not block.
	OnEvent func(Event)
}

// Event is a catalog event; Data is JSON-marshalable.
type Event struct {
	Type string // "statuschange", "toolschanged", "authrequired", "warning"
	Data any
}

// Status is what [Catalog.Status] reports for one server.
type Status struct {
	State       string           `json:"state"`             // a client state or "disabled"
	Tools       int              `json:"tools"`             // tools it adds to the list now
	Breaker     string           `json:"breaker"`           // "closed", "open", "half_open"
	RetryAt     int64            `json:"retryAt,omitempty"` // open: ms since the epoch when a probe may go
	Error       *mcpclient.Error `json:"error,omitempty"`   // why it is not connected
	Title       string           `json:"title,omitempty"`
	Description string           `json:"description,omitempty"`
}

// Tool is one tool of the aggregated list.
type Tool struct {
	Name     string    `json:"name"`     // exported name
	ServerID string    `json:"serverId"` // catalog id of its server
	Tool     *mcp.Tool `json:"tool"`     // as the server described it
}

// CallOptions tune one call.
type CallOptions struct {
	Timeout    time.Duration // of the request to the server; default Config.CallTimeout
	OnProgress func(*mcp.ProgressNotificationParams)
	// AuthWait, when > 0, makes a call to a server that needs sign-in wait
	// this long (real time) for the host to sign in through
	// [Catalog.Authorize] (after OnAuthRequired(id) was called once)
	// instead of resolving at once with the needs-sign-in text. A decline
	// ends the wait with the declined text.
	AuthWait       time.Duration
	OnAuthRequired func(id string)
	// OnApproval reports the approval hook's decision for this call.
	OnApproval func(req ApprovalRequest, approved bool)
}

// Block is one part of a tool result as a model sees it.
type Block struct {
	Type     string `json:"type"` // "text" or "image"
	Text     string `json:"text,omitempty"`
	MIMEType string `json:"mimeType,omitempty"`
	Data     string `json:"data,omitempty"` // base64, for images
}

// ToolResult is the outcome of one model tool call, ready for the model:
// Text has every part as text (images as placeholder lines) and Blocks the
// same with images as image blocks, both capped at MaxResultText.
type ToolResult struct {
	Name     string              `json:"name"`
	ServerID string              `json:"serverId,omitempty"` // "" when the name is unknown
	Tool     string              `json:"tool,omitempty"`
	Text     string              `json:"text"` // what the model reads, capped
	Blocks   []Block             `json:"blocks,omitempty"`
	IsError  bool                `json:"isError"`
	Result   *mcp.CallToolResult `json:"result,omitempty"` // when the server answered
}
