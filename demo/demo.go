package demo

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpwasm/mcpwasm/demo/cors"
)

// Implementation name and version the demo server reports.
const (
	Name    = "mcpwasm-demo"
	Version = "0.1.0"
)

// Endpoint paths served by [Handler].
const (
	// StreamablePath is the Streamable HTTP endpoint (MCP 2025-03-26 and later).
	StreamablePath = "/mcp"
	// SSEPath is the legacy HTTP+SSE endpoint (MCP 2024-11-05); the client
	// GETs it for the event stream and POSTs to the endpoint it announces.
	SSEPath = "/sse"
	// StatelessPath is a Streamable HTTP endpoint without sessions, which
	// speaks protocol 2026-07-28 (and the older versions, sessionless);
	// served only without sign-in.
	StatelessPath = "/stateless/mcp"
)

// Options configures the demo server. The zero value is ready to use.
// The hooks exist for tests; they are called from request goroutines and
// must be safe for concurrent use.
type Options struct {
	// Logger receives the SDK's and the transports' logs. Nil discards them.
	Logger *slog.Logger

	// OnCancelled, if set, is called with the tool name when a tool call
	// stops early because its request was cancelled
	// (notifications/cancelled, or the HTTP request went away).
	OnCancelled func(tool string)

	// OnRequest, if set, is called with the JSON-RPC method of every request
	// and notification the server receives (for example "tools/call",
	// "notifications/cancelled"), before it is handled.
	OnRequest func(method string)

	// CORS configures the cross-origin middleware of [Handler].
	CORS cors.Options

	// SessionTimeout closes Streamable HTTP sessions idle for this long.
	// Zero keeps them until the client deletes them.
	SessionTimeout time.Duration

	// OpenLink adds the tool open_link (URL-mode elicitation), which
	// passes on any URL it is given: for tests of a client's checks.
	OpenLink bool
}

// NewServer returns the demo MCP server with its tools, resources and
// prompt. One server may serve many sessions at once; tools added with
// add_tool are visible to, and announced to, all of them.
func NewServer(opts Options) *mcp.Server { return newServer(opts, false) }

// extensions are the server's: Skills, and Tasks for the server of
// [StatelessPath] (taskMethods answers them, before go-sdk's handler).
func extensions(tasks bool) map[string]any {
	// A server that declares Skills serves skills/list and skills/get
	// (skillMethods, before go-sdk's handler).
	exts := map[string]any{SkillsExtension: map[string]any{}}
	if tasks {
		exts[TasksExtension] = map[string]any{}
	}
	return exts
}

// newServer is NewServer, with research when tasks (the server of
// [StatelessPath], where it runs as a task of the Tasks extension).
func newServer(opts Options, tasks bool) *mcp.Server {
	logger := opts.Logger
	if logger == nil {
		logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	s := mcp.NewServer(&mcp.Implementation{Name: Name, Title: "mcpwasm demo server", Version: Version, Icons: []mcp.Icon{Icon}}, &mcp.ServerOptions{
		Instructions: instructions,
		Logger:       logger,
		Capabilities: &mcp.ServerCapabilities{
			Tools:      &mcp.ToolCapabilities{ListChanged: true},
			Resources:  &mcp.ResourceCapabilities{ListChanged: true},
			Prompts:    &mcp.PromptCapabilities{ListChanged: true},
			Logging:    &mcp.LoggingCapabilities{},
			Extensions: extensions(tasks),
		},
		CompletionHandler: complete,
	})
	if opts.OnRequest != nil {
		s.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
			return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
				opts.OnRequest(method)
				return next(ctx, method, req)
			}
		})
	}
	d := &demo{server: s, opts: opts, dynamic: make(map[string]bool)}
	d.addTools()
	if tasks {
		d.addResearch()
	}
	d.addResources()
	d.addSkills()
	d.addPrompts()
	return s
}

// Handler returns an http.Handler serving a new demo server (see
// [NewServer]) over Streamable HTTP at [StreamablePath] and over the legacy
// HTTP+SSE transport at [SSEPath], wrapped in CORS middleware. Streamable
// HTTP sessions are stateful, which server-to-client requests
// (elicitation, sampling) and list_changed notifications need.
func Handler(opts Options) http.Handler {
	return cors.Wrap(mcpMux(opts, nil), opts.CORS)
}

const instructions = `This is the mcpwasm demo server. Try "add" for structured output, ` +
	`"slow" for progress and cancellation, "ask_user" for elicitation, ` +
	`"summarize" for sampling, and "add_tool"/"remove_tool" to change the tool list.`

// demo holds the state shared by the handlers of one server.
type demo struct {
	server *mcp.Server
	opts   Options

	mu      sync.Mutex
	dynamic map[string]bool // names of tools added by add_tool
	links   atomic.Int64    // open_link's elicitation ids
}

func (d *demo) cancelled(tool string) {
	if d.opts.OnCancelled != nil {
		d.opts.OnCancelled(tool)
	}
}
