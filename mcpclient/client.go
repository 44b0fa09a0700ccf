package mcpclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpwasm/mcpwasm/internal/httpguard"
	"github.com/mcpwasm/mcpwasm/mcperr"
)

// State is the connection state shown to the page (JSAPI.md client.state).
type State string

// The states of a [Client].
const (
	StateIdle        State = "idle"
	StateConnecting  State = "connecting"
	StateNeedsAuth   State = "needs_auth"
	StateAuthorizing State = "authorizing"
	StateConnected   State = "connected"
	StateDeclined    State = "declined"
	StateFailed      State = "failed"
	StateClosed      State = "closed"
)

// Transport selects the MCP transport.
type Transport string

// The transports; [TransportAuto] tries Streamable HTTP and falls back to the
// legacy HTTP+SSE transport when the server rejects the initial POST with a
// 4xx status other than 401 and 403.
const (
	TransportAuto       Transport = "auto"
	TransportStreamable Transport = "streamable"
	TransportSSE        Transport = "sse"
)

// Event is something the page may want to know; the bridge forwards it as a
// DOM event of the same type. Data never holds secrets.
type Event struct {
	// Type is "statechange", "toolschanged", "resourceschanged",
	// "promptschanged" or "log".
	Type string
	// Data is the event's detail, JSON-marshalable.
	Data any
}

// StateChange is the Data of a "statechange" [Event].
type StateChange struct {
	State State  `json:"state"`
	Error *Error `json:"error,omitempty"`
}

// Options configures a [Client]. The zero value of every field is usable.
type Options struct {
	// ClientName and ClientVersion identify the client to the server.
	ClientName    string
	ClientVersion string
	// HTTPClient is the base client; its Transport is wrapped. Nil means a
	// client over http.DefaultTransport, which under GOOS=js is fetch.
	HTTPClient *http.Client
	// Headers are sent with every request (API-key servers).
	Headers map[string]string
	// AccessToken, when set, supplies a bearer token for every request.
	AccessToken func(context.Context) (string, error)
	// OAuthHandler, when set, runs the MCP authorization flow (go-sdk's hook).
	OAuthHandler auth.OAuthHandler
	// Transport selects the transport; empty means [TransportAuto].
	Transport Transport
	// Hints, when set, is shared by the clients of a page to remember per
	// server what a connect negotiated.
	Hints *Hints
	// ConnectTimeout bounds a connect, not counting time in a sign-in;
	// zero means [DefaultConnectTimeout].
	ConnectTimeout time.Duration
	// OnEvent receives events; it must not block for long.
	OnEvent func(Event)
}

// ConnectOptions are the handlers fixed for one session: the client
// advertises a capability only when its handler is set.
type ConnectOptions struct {
	// Elicitation answers elicitation/create requests.
	Elicitation func(context.Context, *mcp.ElicitParams) (*mcp.ElicitResult, error)
	// Sampling answers sampling/createMessage requests.
	Sampling func(context.Context, *mcp.CreateMessageParams) (*mcp.CreateMessageResult, error)
}

// Client is a connection to one MCP server. It is safe for concurrent use.
type Client struct {
	url    string
	opts   Options
	http   *http.Client
	taps   progressTaps
	nextID atomic.Int64

	mu         sync.Mutex
	state      State
	session    *mcp.ClientSession
	connecting chan struct{} // closed when the running connect ends
	connErr    error         // result of the last connect
	closing    bool
}

// New returns an idle client for the MCP endpoint at rawURL, which must be an
// absolute http or https URL.
func New(rawURL string, opts Options) (*Client, error) {
	u, err := url.Parse(rawURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, mcperr.New(mcperr.InvalidArgument, "mcp: server URL %q is not an absolute http(s) URL", rawURL)
	}
	switch opts.Transport {
	case "":
		opts.Transport = TransportAuto
	case TransportAuto, TransportStreamable, TransportSSE:
	default:
		return nil, mcperr.New(mcperr.InvalidArgument, `mcp: transport %q is not one of "auto", "streamable", "sse"`, opts.Transport)
	}
	hdr := make(http.Header, len(opts.Headers))
	names := make([]string, 0, len(opts.Headers))
	for k, v := range opts.Headers {
		if !httpguard.ValidHeaderName(k) {
			return nil, mcperr.New(mcperr.InvalidArgument, "mcp: header name %q is not a valid HTTP header name", k)
		}
		if !httpguard.ValidHeaderValue(v) {
			return nil, mcperr.New(mcperr.InvalidArgument, "mcp: the value of header %q has characters a header cannot carry (control characters or non-ASCII)", k)
		}
		if forbiddenHeader(k) {
			return nil, mcperr.New(mcperr.InvalidArgument, "mcp: header %q is set by the MCP transport itself and cannot be replaced", k)
		}
		hdr.Set(k, v)
		names = append(names, k)
	}
	var base http.RoundTripper = http.DefaultTransport
	var jar http.CookieJar
	if opts.HTTPClient != nil {
		if opts.HTTPClient.Transport != nil {
			base = opts.HTTPClient.Transport
		}
		jar = opts.HTTPClient.Jar
	}
	c := &Client{url: u.String(), opts: opts, state: StateIdle}
	guard := &httpguard.Transport{
		Base:              base,
		Origin:            httpguard.OriginOf(u),
		Credentials:       credentials(hdr, opts.AccessToken),
		CredentialHeaders: names,
	}
	c.http = &http.Client{
		Transport:     &roundTripper{guard: guard, taps: &c.taps},
		Jar:           jar,
		CheckRedirect: httpguard.CheckRedirect,
	}
	return c, nil
}

// forbiddenHeader reports the headers the client sets itself, which the
// page's static headers must not replace.
func forbiddenHeader(k string) bool {
	switch http.CanonicalHeaderKey(k) {
	case "Mcp-Session-Id", "Mcp-Protocol-Version", "Content-Type", "Accept", "Last-Event-Id":
		return true
	}
	return false
}

// URL returns the server URL.
func (c *Client) URL() string { return c.url }

// State returns the current state.
func (c *Client) State() State {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.state
}

// setState changes the state and emits "statechange" when it changed.
func (c *Client) setState(s State, err error) {
	c.mu.Lock()
	if c.state == s || (c.state == StateClosed && s != StateClosed) {
		c.mu.Unlock()
		return
	}
	c.state = s
	c.mu.Unlock()
	ev := StateChange{State: s}
	if err != nil {
		ev.Error = AsError(err)
	}
	c.emit("statechange", ev)
}

// SetState lets an auth layer report needs_auth, authorizing or declined.
func (c *Client) SetState(s State, err error) { c.setState(s, err) }

// AuthSettled tells the client that a sign-in ended well: it leaves
// needs_auth/authorizing for connected while a session is live, or for
// connecting while a connect runs.
func (c *Client) AuthSettled() {
	c.mu.Lock()
	var s State
	switch {
	case c.closing:
	case c.session != nil:
		s = StateConnected
	case c.connecting != nil:
		s = StateConnecting
	}
	c.mu.Unlock()
	if s != "" {
		c.setState(s, nil)
	}
}

func (c *Client) emit(typ string, data any) {
	if c.opts.OnEvent != nil {
		c.opts.OnEvent(Event{Type: typ, Data: data})
	}
}

// Connect connects and initializes the session, unless already connected.
// Concurrent calls share one attempt.
func (c *Client) Connect(ctx context.Context, co ConnectOptions) error {
	c.mu.Lock()
	switch {
	case c.closing:
		c.mu.Unlock()
		return errClosed
	case c.session != nil:
		c.mu.Unlock()
		return nil
	case c.connecting != nil:
		ch := c.connecting
		c.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return classify(ctx.Err(), nil)
		}
		c.mu.Lock()
		err := c.connErr
		c.mu.Unlock()
		return err
	}
	ch := make(chan struct{})
	c.connecting = ch
	c.mu.Unlock()

	c.setState(StateConnecting, nil)
	wctx, stop := c.connectWatchdog(ctx)
	cs, err := c.connect(wctx, co)
	if err != nil && errors.Is(context.Cause(wctx), errConnectTimeout) {
		err = &mcperr.Error{Code: mcperr.Timeout, Msg: fmt.Sprintf("mcp: the server did not finish connecting within %v", c.connectTimeout()), Err: err}
	}
	stop()

	c.mu.Lock()
	c.connecting = nil
	if err == nil && c.closing {
		c.mu.Unlock()
		_ = cs.Close()
		err = errClosed
		c.mu.Lock()
	}
	if err == nil {
		c.session = cs
	}
	c.connErr = err
	c.mu.Unlock()
	close(ch)

	if err != nil {
		if c.State() != StateClosed {
			c.setState(stateFor(err), err)
		}
		return err
	}
	c.setState(StateConnected, nil)
	go c.watch(cs)
	return nil
}

// DefaultConnectTimeout bounds a connect (initialize and the probes
// before it) when Options.ConnectTimeout is zero; DefaultRequestTimeout
// bounds each list, read, get and ping without a deadline of its own.
// callTool has no default bound: a tool may run long (pass a timeout).
const (
	DefaultConnectTimeout = 60 * time.Second
	DefaultRequestTimeout = 60 * time.Second
)

var errConnectTimeout = errors.New("connect timeout")

func (c *Client) connectTimeout() time.Duration {
	if c.opts.ConnectTimeout > 0 {
		return c.opts.ConnectTimeout
	}
	return DefaultConnectTimeout
}

// connectWatchdog ends a connect that makes no progress for the connect
// timeout. Time spent in a sign-in (state authorizing: the person is in
// the sign-in window, bounded by the sign-in's own timeout) does not
// count.
func (c *Client) connectWatchdog(ctx context.Context) (context.Context, func()) {
	wctx, cancel := context.WithCancelCause(ctx)
	d := c.connectTimeout()
	var t *time.Timer
	t = time.AfterFunc(d, func() {
		if c.State() == StateAuthorizing {
			t.Reset(d)
			return
		}
		cancel(errConnectTimeout)
	})
	return wctx, func() {
		t.Stop()
		cancel(nil)
	}
}

// stateFor is the state a failed connect leaves the client in.
func stateFor(err error) State {
	switch mcperr.CodeOf(err, "") {
	case mcperr.AuthRequired, mcperr.PopupBlocked:
		return StateNeedsAuth
	case mcperr.Declined:
		return StateDeclined
	case mcperr.Aborted:
		return StateIdle
	}
	return StateFailed
}

// watch notices a session that ends without Close.
func (c *Client) watch(cs *mcp.ClientSession) {
	err := cs.Wait()
	c.mu.Lock()
	if c.session != cs {
		c.mu.Unlock()
		return
	}
	c.session = nil
	closing := c.closing
	c.mu.Unlock()
	if !closing {
		if err == nil {
			err = mcp.ErrConnectionClosed
		}
		c.setState(StateFailed, mcperr.Wrap(mcperr.Closed, err, "mcp: the server ended the session"))
	}
}

func (c *Client) connect(ctx context.Context, co ConnectOptions) (*mcp.ClientSession, error) {
	h := c.opts.Hints.get(c.url)
	cs, err := c.connectHinted(ctx, h, co)
	if err != nil && h != (hint{}) && ctx.Err() == nil && stateFor(err) == StateFailed {
		// What worked before may not any more (the server moved to another
		// transport or version): forget it and probe once more.
		c.opts.Hints.forget(c.url)
		return c.connectHinted(ctx, hint{}, co)
	}
	return cs, err
}

func (c *Client) connectHinted(ctx context.Context, hint hint, co ConnectOptions) (*mcp.ClientSession, error) {
	kind := c.opts.Transport
	if kind == TransportAuto && hint.transport != "" {
		kind = hint.transport
	}
	if kind == TransportAuto {
		rctx, rec := withRecord(ctx)
		cs, err := c.connectWith(rctx, TransportStreamable, hint.version, co)
		if err == nil {
			return cs, nil
		}
		if _, _, first := rec.snapshot(); !fallbackStatus(first) || ctx.Err() != nil {
			return nil, classify(err, rec)
		}
		kind = TransportSSE
	}
	rctx, rec := withRecord(ctx)
	cs, err := c.connectWith(rctx, kind, hint.version, co)
	if err != nil {
		return nil, classify(err, rec)
	}
	return cs, nil
}

// fallbackStatus reports whether a status answering the initial POST means
// "this is a legacy HTTP+SSE server" (2025-11-25 transports, Backwards
// Compatibility: a 4xx such as 404 or 405).
func fallbackStatus(status int) bool {
	switch status {
	case http.StatusBadRequest, http.StatusNotFound, http.StatusMethodNotAllowed:
		return true
	}
	return false
}

func (c *Client) connectWith(ctx context.Context, kind Transport, version string, co ConnectOptions) (*mcp.ClientSession, error) {
	var t mcp.Transport
	switch kind {
	case TransportSSE:
		t = &mcp.SSEClientTransport{Endpoint: c.url, HTTPClient: c.http}
	default:
		t = &mcp.StreamableClientTransport{Endpoint: c.url, HTTPClient: c.http, OAuthHandler: c.opts.OAuthHandler, MaxRetries: 2}
	}
	name, ver := c.opts.ClientName, c.opts.ClientVersion
	if name == "" {
		name = "mcpwasm"
	}
	if ver == "" {
		ver = "0"
	}
	mo := &mcp.ClientOptions{
		Capabilities:               &mcp.ClientCapabilities{},
		ToolListChangedHandler:     func(context.Context, *mcp.ToolListChangedRequest) { c.emit("toolschanged", nil) },
		ResourceListChangedHandler: func(context.Context, *mcp.ResourceListChangedRequest) { c.emit("resourceschanged", nil) },
		PromptListChangedHandler:   func(context.Context, *mcp.PromptListChangedRequest) { c.emit("promptschanged", nil) },
		LoggingMessageHandler: func(_ context.Context, r *mcp.LoggingMessageRequest) {
			c.emit("log", r.Params)
		},
	}
	if co.Elicitation != nil {
		mo.ElicitationHandler = func(ctx context.Context, r *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return co.Elicitation(ctx, r.Params)
		}
	}
	if co.Sampling != nil {
		mo.CreateMessageHandler = func(ctx context.Context, r *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			return co.Sampling(ctx, r.Params)
		}
	}
	client := mcp.NewClient(&mcp.Implementation{Name: name, Version: ver}, mo)
	var so *mcp.ClientSessionOptions
	if version != "" {
		so = &mcp.ClientSessionOptions{ProtocolVersion: version}
	}
	// The legacy SSE transport keeps the stream it opens in Connect for
	// the whole session, under Connect's context: give it one that only
	// the connect's own end (abort, timeout) cancels while it runs, and
	// that the session's end cancels afterwards.
	sctx, endSession := context.WithCancel(context.WithoutCancel(ctx))
	detach := context.AfterFunc(ctx, endSession)
	cs, err := client.Connect(sctx, t, so)
	detach()
	if err != nil {
		endSession()
		return nil, err
	}
	go func() {
		_ = cs.Wait()
		endSession()
	}()
	if ir := cs.InitializeResult(); ir != nil {
		c.opts.Hints.put(c.url, hint{transport: kind, version: ir.ProtocolVersion})
	}
	return cs, nil
}

var errClosed = mcperr.New(mcperr.Closed, "mcp: the client is closed; create a new one with mcp.client()")

// Close ends the session (best effort) and makes the client unusable.
func (c *Client) Close() error {
	c.mu.Lock()
	if c.closing {
		c.mu.Unlock()
		return nil
	}
	c.closing = true
	cs := c.session
	c.session = nil
	c.mu.Unlock()
	c.setState(StateClosed, nil)
	if cs != nil {
		_ = cs.Close()
	}
	return nil
}

// Disconnect ends the session (best effort) but keeps the client usable: a
// later Connect starts a new session. The client moves to state (for
// example needs_auth after a logout).
func (c *Client) Disconnect(state State, err error) {
	c.mu.Lock()
	if c.closing {
		c.mu.Unlock()
		return
	}
	cs := c.session
	c.session = nil
	c.mu.Unlock()
	if cs != nil {
		_ = cs.Close()
	}
	c.setState(state, err)
}

// Session returns the live session or an error coded "closed" or
// "protocol" (not connected).
func (c *Client) sessionOrErr() (*mcp.ClientSession, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case c.closing:
		return nil, errClosed
	case c.session == nil:
		return nil, mcperr.New(mcperr.Protocol, "mcp: not connected; call connect() first")
	}
	return c.session, nil
}

// InitializeResult returns what the server said at initialization, or nil
// when not connected.
func (c *Client) InitializeResult() *mcp.InitializeResult {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.session == nil {
		return nil
	}
	return c.session.InitializeResult()
}

// do runs op on the session and classifies its error.
func do[T any](ctx context.Context, c *Client, op func(context.Context, *mcp.ClientSession) (T, error)) (T, error) {
	var zero T
	cs, err := c.sessionOrErr()
	if err != nil {
		return zero, err
	}
	return doOn(ctx, c, cs, op)
}

// doBounded is [do] with [DefaultRequestTimeout] when ctx has no deadline.
func doBounded[T any](ctx context.Context, c *Client, op func(context.Context, *mcp.ClientSession) (T, error)) (T, error) {
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, DefaultRequestTimeout)
		defer cancel()
	}
	return do(ctx, c, op)
}

func doOn[T any](ctx context.Context, c *Client, cs *mcp.ClientSession, op func(context.Context, *mcp.ClientSession) (T, error)) (T, error) {
	var zero T
	rctx, rec := withRecord(ctx)
	v, err := op(rctx, cs)
	if err != nil {
		if c.State() == StateClosed {
			return zero, errClosed
		}
		return zero, classify(err, rec)
	}
	return v, nil
}

// The bounds of one list operation (listTools and the others): a server
// that pages forever, repeats a cursor or returns an attacker-sized list
// fails the operation with a "protocol" error instead of flooding the
// server with requests or the page with items.
const (
	MaxListPages = 100
	MaxListItems = 10000
)

// listAll follows a list's pagination: page(cursor) returns one page's
// items and the next cursor ("" at the end).
func listAll[T any](ctx context.Context, what string, page func(ctx context.Context, cursor string) ([]T, string, error)) ([]T, error) {
	out := []T{}
	seen := map[string]bool{}
	cursor := ""
	for n := 1; ; n++ {
		items, next, err := page(ctx, cursor)
		if err != nil {
			return nil, err
		}
		out = append(out, items...)
		switch {
		case len(out) > MaxListItems:
			return nil, mcperr.New(mcperr.Protocol, "mcp: the server's %s list has more than %d items; refusing the rest", what, MaxListItems)
		case next == "":
			return out, nil
		case seen[next]:
			return nil, mcperr.New(mcperr.Protocol, "mcp: the server's %s list repeats a page cursor (a pagination loop); stopped after %d pages", what, n)
		case n >= MaxListPages:
			return nil, mcperr.New(mcperr.Protocol, "mcp: the server's %s list has more than %d pages; refusing the rest", what, MaxListPages)
		}
		seen[next] = true
		cursor = next
	}
}

// ListTools returns every tool, following pagination.
func (c *Client) ListTools(ctx context.Context) ([]*mcp.Tool, error) {
	return doBounded(ctx, c, func(ctx context.Context, cs *mcp.ClientSession) ([]*mcp.Tool, error) {
		return listAll(ctx, "tools", func(ctx context.Context, cur string) ([]*mcp.Tool, string, error) {
			r, err := cs.ListTools(ctx, &mcp.ListToolsParams{Cursor: cur})
			if err != nil {
				return nil, "", err
			}
			return r.Tools, r.NextCursor, nil
		})
	})
}

// ListResources returns every resource, following pagination.
func (c *Client) ListResources(ctx context.Context) ([]*mcp.Resource, error) {
	return doBounded(ctx, c, func(ctx context.Context, cs *mcp.ClientSession) ([]*mcp.Resource, error) {
		return listAll(ctx, "resources", func(ctx context.Context, cur string) ([]*mcp.Resource, string, error) {
			r, err := cs.ListResources(ctx, &mcp.ListResourcesParams{Cursor: cur})
			if err != nil {
				return nil, "", err
			}
			return r.Resources, r.NextCursor, nil
		})
	})
}

// ListResourceTemplates returns every resource template, following pagination.
func (c *Client) ListResourceTemplates(ctx context.Context) ([]*mcp.ResourceTemplate, error) {
	return doBounded(ctx, c, func(ctx context.Context, cs *mcp.ClientSession) ([]*mcp.ResourceTemplate, error) {
		return listAll(ctx, "resource templates", func(ctx context.Context, cur string) ([]*mcp.ResourceTemplate, string, error) {
			r, err := cs.ListResourceTemplates(ctx, &mcp.ListResourceTemplatesParams{Cursor: cur})
			if err != nil {
				return nil, "", err
			}
			return r.ResourceTemplates, r.NextCursor, nil
		})
	})
}

// ListPrompts returns every prompt, following pagination.
func (c *Client) ListPrompts(ctx context.Context) ([]*mcp.Prompt, error) {
	return doBounded(ctx, c, func(ctx context.Context, cs *mcp.ClientSession) ([]*mcp.Prompt, error) {
		return listAll(ctx, "prompts", func(ctx context.Context, cur string) ([]*mcp.Prompt, string, error) {
			r, err := cs.ListPrompts(ctx, &mcp.ListPromptsParams{Cursor: cur})
			if err != nil {
				return nil, "", err
			}
			return r.Prompts, r.NextCursor, nil
		})
	})
}

// ReadResource reads the resource at uri.
func (c *Client) ReadResource(ctx context.Context, uri string) (*mcp.ReadResourceResult, error) {
	if uri == "" {
		return nil, mcperr.New(mcperr.InvalidArgument, "mcp: readResource needs a non-empty URI")
	}
	return doBounded(ctx, c, func(ctx context.Context, cs *mcp.ClientSession) (*mcp.ReadResourceResult, error) {
		return cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
	})
}

// GetPrompt renders the named prompt with args.
func (c *Client) GetPrompt(ctx context.Context, name string, args map[string]string) (*mcp.GetPromptResult, error) {
	if name == "" {
		return nil, mcperr.New(mcperr.InvalidArgument, "mcp: getPrompt needs a prompt name")
	}
	return doBounded(ctx, c, func(ctx context.Context, cs *mcp.ClientSession) (*mcp.GetPromptResult, error) {
		return cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: name, Arguments: args})
	})
}

// Ping checks that the server answers.
func (c *Client) Ping(ctx context.Context) error {
	_, err := doBounded(ctx, c, func(ctx context.Context, cs *mcp.ClientSession) (struct{}, error) {
		return struct{}{}, cs.Ping(ctx, nil)
	})
	return err
}

// CallTool calls the named tool. args must be a JSON object (or empty for
// none). When onProgress is set, the server's progress notifications for
// this call reach it, in order, all before CallTool returns. Cancelling ctx
// sends notifications/cancelled to the server.
func (c *Client) CallTool(ctx context.Context, name string, args json.RawMessage, onProgress func(*mcp.ProgressNotificationParams)) (*mcp.CallToolResult, error) {
	if name == "" {
		return nil, mcperr.New(mcperr.InvalidArgument, "mcp: callTool needs a tool name")
	}
	var arguments any = map[string]any{}
	if len(args) > 0 && string(args) != "null" {
		var obj map[string]json.RawMessage
		if err := json.Unmarshal(args, &obj); err != nil || obj == nil {
			return nil, mcperr.New(mcperr.InvalidArgument, "mcp: callTool arguments must be a plain object, like {\"a\": 1}")
		}
		arguments = args
	}
	return do(ctx, c, func(ctx context.Context, cs *mcp.ClientSession) (*mcp.CallToolResult, error) {
		params := &mcp.CallToolParams{Name: name, Arguments: arguments}
		if onProgress != nil {
			token := "mcpwasm-" + strconv.FormatInt(c.nextID.Add(1), 10)
			defer c.taps.add(token, onProgress)()
			params.SetProgressToken(token)
		}
		return cs.CallTool(ctx, params)
	})
}

// Error is an error as the page sees it: a JSAPI.md code, an optional HTTP
// status and a message free of secrets.
type Error struct {
	Code    mcperr.Code `json:"code"`
	Status  int         `json:"status,omitempty"`
	Message string      `json:"message"`
}

func (e *Error) Error() string { return e.Message }

// AsError flattens err into an [Error] for the page.
func AsError(err error) *Error {
	return &Error{
		Code:    mcperr.CodeOf(err, mcperr.Protocol),
		Status:  mcperr.StatusOf(err),
		Message: err.Error(),
	}
}

// insufficient reports whether a 403 carried error="insufficient_scope"
// (readable only when the server exposes WWW-Authenticate to the page).
func (r *record) insufficient() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.scope
}

// classify turns an error from go-sdk into one with a JSAPI.md code, using
// what rec saw on the wire. Errors that already carry a code keep it.
func classify(err error, rec *record) error {
	var coder mcperr.Coder
	if errors.As(err, &coder) {
		return err
	}
	switch {
	case errors.Is(err, context.Canceled):
		return mcperr.Wrap(mcperr.Aborted, err, "mcp: aborted")
	case errors.Is(err, context.DeadlineExceeded):
		return mcperr.Wrap(mcperr.Timeout, err, "mcp: timed out")
	}
	var tokErr *tokenError
	if errors.As(err, &tokErr) {
		return &mcperr.Error{Code: mcperr.AuthRequired, Msg: "mcp: the page's accessToken() function failed", Err: tokErr.err}
	}
	if broken := rec.violated(); broken != nil {
		return broken
	}
	status, netErr := 0, error(nil)
	if rec != nil {
		status, netErr, _ = rec.snapshot()
	}
	if status != 0 {
		code := mcperr.HTTP
		switch {
		case status == http.StatusUnauthorized:
			code = mcperr.AuthRequired
		case status == http.StatusForbidden && rec.insufficient():
			code = mcperr.InsufficientScope
		}
		return &mcperr.Error{Code: code, Status: status, Msg: fmt.Sprintf("mcp: the server answered HTTP %d %s", status, http.StatusText(status)), Err: err}
	}
	if netErr != nil {
		return &mcperr.Error{Code: mcperr.Network, Msg: "mcp: the server could not be reached (network error, CORS refusal or server down)", Err: netErr}
	}
	if errors.Is(err, mcp.ErrConnectionClosed) {
		return mcperr.Wrap(mcperr.Closed, err, "mcp: the connection is closed")
	}
	var rpcErr *jsonrpc.Error
	if errors.As(err, &rpcErr) {
		code := mcperr.Protocol
		if rpcErr.Code == jsonrpc.CodeInvalidParams {
			code = mcperr.InvalidArgument
		}
		return &mcperr.Error{Code: code, Msg: "mcp: the server refused the request", Err: err}
	}
	return mcperr.Wrap(mcperr.Protocol, err, "mcp")
}
