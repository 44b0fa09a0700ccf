package catalog

import (
	"context"
	"encoding/json"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"golang.org/x/sync/singleflight"

	"github.com/mcpwasm/mcpwasm/mcpclient"
	"github.com/mcpwasm/mcpwasm/mcperr"
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
	URL         string `json:"url"`
	Title       string `json:"title,omitempty"`
	Description string `json:"description,omitempty"`
	Enabled     *bool  `json:"enabled,omitempty"` // nil: enabled
	// Required keeps the server on: [Catalog.Disable] refuses it, so a
	// person (or a generic servers panel) cannot turn it off. It cannot
	// go with Enabled false.
	Required   bool     `json:"required,omitempty"`
	AllowTools []string `json:"allowTools,omitempty"`
	DenyTools  []string `json:"denyTools,omitempty"`
	// WebMCP makes the server the page's own WebMCP tools
	// (document.modelContext) instead of a remote server: it has no URL,
	// and the Factory serves it from the page.
	WebMCP bool `json:"webmcp,omitempty"`
	// View makes the server the own tools of an MCP Apps view on the page,
	// which the page offers (never a configuration): it has no URL, and
	// the Factory serves it from the page.
	View bool `json:"-"`
	// Client holds the remaining options of the entry (the client options
	// of mcp.client()), passed to the Factory as they came.
	Client json.RawMessage `json:"-"`
}

// BreakerConfig configures each server's circuit breaker.
type BreakerConfig struct {
	Failures int           // consecutive failures that open it; default 3
	Cooldown time.Duration // how long it stays open; 0 means 30 s; not negative
}

// ApprovalRequest is what the approval hook is asked before a call.
type ApprovalRequest struct {
	ID          string               `json:"id"`   // server id
	Tool        string               `json:"tool"` // the server's tool name
	Name        string               `json:"name"` // the exported name
	Args        json.RawMessage      `json:"args"`
	Annotations *mcp.ToolAnnotations `json:"annotations,omitempty"`
	// Via is ViaView when a server's view (MCP Apps) made the call
	// ([Catalog.ViewCall]); "" when a model or the page did.
	Via string `json:"via,omitempty"`
}

// ViaView is [ApprovalRequest.Via] for a call a server's view made.
const ViaView = "app"

// Clock tells the time (breaker cooldowns, backoff); tests fake it.
type Clock interface {
	Now() time.Time
}

// Config configures a [Catalog].
type Config struct {
	Servers           map[string]ServerConfig
	MaxServers        int           // default 32
	MaxToolsPerServer int           // default 128
	CallTimeout       time.Duration // 0 means 60 s; not negative
	// TaskWait is how long a call waits for a tool the server runs as a
	// task before it hands back "running" (the task goes on, and its end
	// is a "taskresult" event); 0 means 30 s. A call's timeout, when it
	// is shorter, makes it half that: a task is handed off, not timed out.
	TaskWait time.Duration
	Breaker  BreakerConfig
	// Approve, when set, is asked before every call that ApprovalPolicy
	// says to ask about (by default, every tool not annotated readOnlyHint:
	// true, the meta tool catalog_enable_server included), unless an
	// earlier AllowAlways or AllowServer answer in the call's scope
	// (CallOptions.Approvals) covers it. Refuse or an error refuses the
	// call; the model is told the user refused. Annotations are the
	// server's hints: they only decide about the tools that carry them.
	Approve func(ctx context.Context, req ApprovalRequest) (Answer, error)
	// ApprovalPolicy decides which calls run without asking, are asked
	// about, or never run; its zero value is the default (see
	// [ApprovalPolicy]). A policy that says "ask" needs Approve.
	ApprovalPolicy ApprovalPolicy
	// Elicit, when set, answers the servers' elicitation requests (form
	// and URL mode) through [Catalog.Elicit]: the user's accept (with the
	// form's content), decline or cancel reach the server as they are.
	// Nil tells the servers elicitation is not supported (the Factory
	// sets no handler).
	Elicit func(ctx context.Context, req ElicitationRequest) (*mcp.ElicitResult, error)
	// ServerTools exposes the model-facing meta tools
	// catalog_list_servers and catalog_enable_server.
	ServerTools bool
	// Skills exposes the servers' skills (the Skills extension) to the
	// model through the meta tools catalog_list_skills,
	// catalog_load_skill and catalog_read_skill_file: names and
	// descriptions when listed, a skill's text only when loaded, verified
	// against the server's entry and framed as the server's words.
	Skills bool
	// ToolBudget is how much of a model's context the servers' tool
	// definitions may take, in tokens as [EstimateTokens] estimates them;
	// 0 means DefaultToolBudget, negative is invalid. Over it,
	// [Catalog.ToolsFor] offers catalog_search_tools and catalog_call_tool
	// (plus the tools the conversation already used, with
	// [Catalog.ToolsForConversation]) instead of every tool. A very large
	// value always offers every tool.
	ToolBudget int
	// Factory makes each server. Required.
	Factory Factory
	// IdleTimeout closes a server's session (and its GET stream) after
	// this long without a call; 0 means DefaultIdleTimeout, negative
	// never. The server's tools stay listed and its status says idle: the
	// next call connects it again with the grant it holds, without a
	// sign-in. A server holding resource subscriptions stays open.
	IdleTimeout time.Duration
	// Clock times breaker cooldowns, reconnect backoff and idleness;
	// default the real clock.
	Clock Clock
	// OnEvent receives statuschange, toolschanged, authrequired, warning
	// and elicitationcomplete events, one at a time and in order, outside the catalog's lock (it
	// may call the catalog). It must not block.
	OnEvent func(Event)
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
	Required    bool             `json:"required,omitempty"` // [ServerConfig.Required]: it cannot be disabled
	// Idle: its session was closed after Config.IdleTimeout unused; its
	// tools stay listed, and the next call connects it again.
	Idle bool `json:"idle,omitempty"`
	// PendingSignIn: a call (an agent's turn) waits for the host to sign
	// in to the server ([CallOptions.AuthWait]): show its Sign in.
	PendingSignIn bool `json:"pendingSignIn,omitempty"`
}

// Tool is one tool of the aggregated list.
type Tool struct {
	Name     string    `json:"name"`     // exported name
	ServerID string    `json:"serverId"` // catalog id of its server
	Tool     *mcp.Tool `json:"tool"`     // as the server described it
	// UI is the tool's view (MCP Apps), when it has a valid one.
	UI *mcpclient.ToolUI `json:"ui,omitempty"`
}

// CallOptions tune one call.
type CallOptions struct {
	Timeout    time.Duration // of the request to the server; 0 means Config.CallTimeout; not negative
	OnProgress func(*mcp.ProgressNotificationParams)
	// AuthWait, when > 0, makes a call to a server that needs sign-in wait
	// this long (real time) for the host to sign in through
	// [Catalog.Authorize] (after OnAuthRequired was called once)
	// instead of resolving at once with the needs-sign-in text. A decline
	// ends the wait with the declined text.
	AuthWait time.Duration
	// A call to a server whose sign-in the user declined calls it too,
	// with Declined set, and does not wait: only the user's action
	// (Authorize, Enable) asks again.
	OnAuthRequired func(AuthRequired)
	// OnApproval reports how the approval of this call was decided, when
	// the catalog has Approve or an ApprovalPolicy.
	OnApproval func(req ApprovalRequest, d ApprovalDecision)
	// Approvals is the scope of the host's "always" and "server" answers
	// (an agent's conversation); nil means the catalog's own, which lasts
	// as long as the catalog.
	Approvals *Approvals
	// OnElicitation hears of each elicitation request the call's server
	// makes while the call runs, before [Config.Elicit] is asked it (see
	// [Catalog.Elicit] for how a request is tied to a call). It must not
	// block.
	OnElicitation func(ElicitationRequest)
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
	// UI is the tool's view (MCP Apps: ResourceURI, Visibility) when it
	// names one or its callers, and the server answered.
	UI *mcpclient.ToolUI `json:"ui,omitempty"`
}

// Defaults of [Config].
const (
	DefaultMaxServers        = 32
	DefaultMaxToolsPerServer = 128
	DefaultCallTimeout       = 60 * time.Second
	DefaultTaskWait          = 30 * time.Second
	DefaultBreakerFailures   = 3
	DefaultBreakerCooldown   = 30 * time.Second
)

// Catalog is many MCP servers behind one tool list: it connects them lazily
// and in parallel, keeps each one's status and circuit breaker, names their
// tools uniquely for a model, and routes a model's tool calls back, turning
// every outcome into a result the model can read. It is safe for concurrent
// use.
type Catalog struct {
	cfg     Config
	life    context.Context // cancelled by Close
	stop    context.CancelFunc
	flights singleflight.Group

	mu        sync.Mutex
	closed    bool
	entries   map[string]*entry
	serial    int                  // instance counter for server events
	names     map[string]toolKey   // exported name → tool, for every known tool
	exported  map[toolKey]string   // the reverse
	listed    []Tool               // what Tools returns
	exports   exportCache          // ToolsForConversation's answers for listed
	published map[string]string    // id → signature of its part of listed
	pending   []Event              // events to deliver, in order
	draining  bool                 // a goroutine is delivering pending
	meta      map[string]*mcp.Tool // the meta tools, when enabled
	renamed   bool                 // a tool list changed: names must be assigned again

	approvals     Approvals             // the scope of answers to calls without CallOptions.Approvals
	viewApprovals Approvals             // the same for views' calls (ViewCall)
	running       map[string][]*running // server id → its calls in progress, oldest first
	elicitations  int                   // elicitation requests so far, for their ids
}

// entry is one server of the catalog. Its fields are guarded by Catalog.mu.
type entry struct {
	id      string
	cfg     ServerConfig
	srv     Server
	serial  int // events from another instance are stale
	gen     int // bumped by disable, enable and authorize: older results are stale
	enabled bool
	latched bool // the user declined: no Connect or Authorize until a user action

	state mcpclient.State
	err   *mcpclient.Error // why the last attempt failed, for Status
	cause error            // the same error, for texts

	tools      []*mcp.Tool // filtered and capped; nil until listed
	viewOnly   []*mcp.Tool // the tools only its views may call (ViewCall), filtered and capped
	toolsVer   int         // bumped when tools change
	stale      bool        // the server announced a tool change
	avail      bool        // the last connect or list succeeded
	refreshing bool
	again      bool // another refresh was asked for while one ran
	schemas    map[string]*jsonschema.Resolved

	notified  bool // authrequired was fired for the current sign-in need
	connFails int  // consecutive failed connection attempts
	nextTry   time.Time
	br        *breaker

	lastUsed time.Time // the last call, or the connect; for Config.IdleTimeout
	parked   bool      // its session was closed for idleness; the next use connects
	parking  bool      // that close is under way
	holds    int       // the host's direct uses running ([Catalog.Use])
	loading  int       // doLoad attempts contacting the server now

	signInWaits int // calls waiting for the host to sign in (CallOptions.AuthWait)

	wake chan struct{} // closed and replaced on every change
	last *Status       // the status last announced
}

// New validates cfg and returns a catalog. Nothing connects yet: each
// server connects on the first [Catalog.Tools], [Catalog.ToolsFor],
// [Catalog.CallTool] or [Catalog.ModelCall] that needs it. The Factory is
// called for every server now (it must not connect either).
func New(cfg Config) (*Catalog, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	ids := slices.Sorted(maps.Keys(cfg.Servers))
	for _, id := range ids {
		if err := validateServer(id, cfg.Servers[id]); err != nil {
			return nil, err
		}
	}
	c := &Catalog{
		cfg:       cfg,
		entries:   make(map[string]*entry, len(ids)),
		names:     map[string]toolKey{},
		published: map[string]string{},
	}
	c.cfg.Servers = nil // the entries hold them from now on
	c.life, c.stop = context.WithCancel(context.Background())
	if cfg.ServerTools {
		c.meta = metaTools()
	}
	if cfg.Skills {
		if c.meta == nil {
			c.meta = map[string]*mcp.Tool{}
		}
		maps.Copy(c.meta, skillTools())
	}
	for _, id := range ids {
		e, err := c.newEntry(id, cfg.Servers[id])
		if err != nil {
			c.Close()
			return nil, err
		}
		c.mu.Lock()
		c.entries[id] = e
		c.mu.Unlock()
	}
	c.update(func() {})
	if c.cfg.IdleTimeout > 0 {
		go c.idleLoop(idleCheckEvery(c.cfg.IdleTimeout))
	}
	return c, nil
}

// withDefaults checks cfg's own settings (not its servers') and fills in
// the defaults of those left zero.
func (cfg Config) withDefaults() (Config, error) {
	bad := func(format string, args ...any) error {
		return mcperr.New(mcperr.InvalidArgument, "catalog: "+format, args...)
	}
	if cfg.Factory == nil {
		return cfg, bad("Config.Factory is required")
	}
	if cfg.MaxServers <= 0 {
		cfg.MaxServers = DefaultMaxServers
	}
	if cfg.MaxToolsPerServer <= 0 {
		cfg.MaxToolsPerServer = DefaultMaxToolsPerServer
	}
	if cfg.CallTimeout < 0 {
		return cfg, bad("Config.CallTimeout must not be negative; use 0 for the default (%v)", DefaultCallTimeout)
	}
	if cfg.CallTimeout == 0 {
		cfg.CallTimeout = DefaultCallTimeout
	}
	if cfg.TaskWait < 0 {
		return cfg, bad("Config.TaskWait must not be negative; use 0 for the default (%v)", DefaultTaskWait)
	}
	if cfg.TaskWait == 0 {
		cfg.TaskWait = DefaultTaskWait
	}
	if cfg.Breaker.Failures <= 0 {
		cfg.Breaker.Failures = DefaultBreakerFailures
	}
	if cfg.Breaker.Cooldown < 0 {
		return cfg, bad("Config.Breaker.Cooldown must not be negative; use 0 for the default (%v)", DefaultBreakerCooldown)
	}
	if cfg.Breaker.Cooldown == 0 {
		cfg.Breaker.Cooldown = DefaultBreakerCooldown
	}
	if cfg.ToolBudget < 0 {
		return cfg, bad("Config.ToolBudget must not be negative; use 0 for the default (%d tokens)", DefaultToolBudget)
	}
	if cfg.ToolBudget == 0 {
		cfg.ToolBudget = DefaultToolBudget
	}
	if cfg.Clock == nil {
		cfg.Clock = realClock{}
	}
	if cfg.IdleTimeout == 0 {
		cfg.IdleTimeout = DefaultIdleTimeout
	}
	if err := cfg.ApprovalPolicy.validate(cfg.Approve != nil); err != nil {
		return cfg, err
	}
	cfg.ApprovalPolicy.Servers = maps.Clone(cfg.ApprovalPolicy.Servers)
	if len(cfg.Servers) > cfg.MaxServers {
		return cfg, bad("%d servers configured; at most %d (maxServers) are allowed", len(cfg.Servers), cfg.MaxServers)
	}
	return cfg, nil
}

type realClock struct{}

func (realClock) Now() time.Time { return time.Now() }

func (c *Catalog) now() time.Time { return c.cfg.Clock.Now() }

// newEntry makes the entry and its server; the caller adds it.
func (c *Catalog) newEntry(id string, sc ServerConfig) (*entry, error) {
	sc.AllowTools = slices.Clone(sc.AllowTools)
	sc.DenyTools = slices.Clone(sc.DenyTools)
	sc.Client = slices.Clone(sc.Client)
	e := &entry{
		id:      id,
		cfg:     sc,
		enabled: sc.Enabled == nil || *sc.Enabled,
		br:      newBreaker(c.cfg.Breaker),
		wake:    make(chan struct{}),
	}
	if err := c.makeServer(e, nil); err != nil {
		return nil, err
	}
	return e, nil
}

// makeServer calls the Factory for e; its events reach onServerEvent.
// With old (Enable remaking a closed server), the new server replaces old
// only while e is current and still holds old: one made for a catalog
// closed or an entry removed meanwhile, or beaten by a concurrent Enable,
// is closed at once instead of left behind.
func (c *Catalog) makeServer(e *entry, old Server) error {
	c.mu.Lock()
	c.serial++
	serial := c.serial
	c.mu.Unlock()
	srv, err := c.cfg.Factory(e.id, e.cfg, func(ev mcpclient.Event) { c.onServerEvent(e, serial, ev) })
	if err != nil {
		return mcperr.Wrap(mcperr.CodeOf(err, mcperr.InvalidArgument), err, "catalog: server "+quote(e.id))
	}
	if srv == nil {
		return mcperr.New(mcperr.InvalidArgument, "catalog: the Factory returned no server for %q", e.id)
	}
	st := srv.State()
	c.mu.Lock()
	if old != nil && (!c.current(e) || e.srv != old) {
		closed := c.closed
		c.mu.Unlock()
		_ = srv.Close()
		if closed {
			return errClosed
		}
		return nil
	}
	e.srv, e.serial, e.state = srv, serial, st
	c.mu.Unlock()
	return nil
}

func quote(s string) string { b, _ := json.Marshal(s); return string(b) }

// errClosed is what every method returns once the catalog is closed.
var errClosed = mcperr.New(mcperr.Closed, "catalog: the catalog is closed; create a new one")

// current reports whether e is still the catalog's entry for its id.
func (c *Catalog) current(e *entry) bool { return !c.closed && c.entries[e.id] == e }

// IDs returns the ids of the servers, sorted.
func (c *Catalog) IDs() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Sorted(maps.Keys(c.entries))
}

// Server returns the [Server] of id (for a server made by [FromClient],
// [ClientOf] gives its client).
func (c *Catalog) Server(id string) (Server, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries[id]
	if !ok {
		return nil, false
	}
	return e.srv, true
}

// Config returns the configuration of server id.
func (c *Catalog) Config(id string) (ServerConfig, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries[id]
	if !ok {
		return ServerConfig{}, false
	}
	return e.cfg, true
}

func (c *Catalog) lookup(id string) (*entry, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil, errClosed
	}
	e, ok := c.entries[id]
	if !ok {
		return nil, mcperr.New(mcperr.InvalidArgument, "catalog: there is no server %q", id)
	}
	return e, nil
}

// Close closes every server. Later calls fail with an error coded closed;
// calls waiting for a sign-in end with it too.
func (c *Catalog) Close() error { return c.close(false) }

// Leave is Close for a catalog whose page went away without abandoning
// its calls: a server that can (one made by [FromClient]) leaves its
// session open while a task kept for the next page runs in it.
func (c *Catalog) Leave() error { return c.close(true) }

func (c *Catalog) close(leave bool) error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil
	}
	c.closed = true
	var srvs []Server
	for _, e := range c.entries {
		if e.srv != nil {
			srvs = append(srvs, e.srv)
		}
		e.changedLocked()
	}
	c.mu.Unlock()
	if c.stop != nil {
		c.stop()
	}
	var first error
	for _, s := range srvs {
		end := s.Close
		if l, ok := s.(interface{ Leave() error }); ok && leave {
			end = l.Leave
		}
		if err := end(); err != nil && first == nil {
			first = err
		}
	}
	return first
}
