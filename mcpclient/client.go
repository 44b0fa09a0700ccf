package mcpclient

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpwasm/mcpwasm/internal/busy"
	"github.com/mcpwasm/mcpwasm/internal/httpguard"
	"github.com/mcpwasm/mcpwasm/mcperr"
)

// State is the connection state shown to the page (docs/JSAPI.md client.state).
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
	// StateReconnecting: the session was lost to the network (or the
	// server forgot it); the client reconnects by itself (reconnect.go).
	StateReconnecting State = "reconnecting"
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
	// "resourceupdated", "promptschanged", "log" or "warning".
	Type string
	// Data is the event's detail, JSON-marshalable.
	Data any
}

// StateChange is the Data of a "statechange" [Event]. Session is set when
// the state becomes connected.
type StateChange struct {
	State   State        `json:"state"`
	Error   *Error       `json:"error,omitempty"`
	Session *SessionInfo `json:"session,omitempty"`
}

// Warning is the Data of a "warning" [Event]: something failed that
// ends nothing (a notification the server refused).
type Warning struct {
	Message string `json:"message"`
}

// ElicitationComplete is the Data of an "elicitationcomplete" [Event]: the
// server says the user finished the URL-mode elicitation ElicitationID
// (notifications/elicitation/complete), so a host can take its link away.
type ElicitationComplete struct {
	ElicitationID string `json:"elicitationId"`
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
	// Apps says the host renders servers' views (MCP Apps): initialize
	// declares the io.modelcontextprotocol/ui extension ([UIExtension]),
	// so a server that checks for it offers its tools with views.
	Apps bool
	// AccessToken, when set, supplies a bearer token for every request.
	AccessToken func(context.Context) (string, error)
	// Auth, when set, is the server's sign-in (an *oauth.Handler): the
	// transport asks it for tokens and hands it 401s, Authorize and Logout
	// use it, and its progress drives the client's state.
	Auth Authorizer
	// NoSignIn is what Authorize and Logout fail with when Auth is nil
	// (why this client cannot sign in); nil gives a generic error.
	NoSignIn error
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
	// Tasks, when set, keeps the tasks the client starts beyond its life
	// (shared by the clients of a page, persisted by its Store); nil keeps
	// them for the client's life only.
	Tasks *TaskBook
}

// ConnectOptions are the handlers fixed for one session: the client
// advertises a capability only when its handler is set.
type ConnectOptions struct {
	// Elicitation answers elicitation/create requests, form and URL mode
	// (also those of a 2026-07-28 server's input_required results). A
	// URL-mode request with a URL that [CheckElicitationURL] refuses is
	// declined without calling it.
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
	hello  handshake
	nextID atomic.Int64

	// ctx lives as long as the client: Close cancels it, which ends
	// connects started by the client itself.
	ctx    context.Context
	cancel context.CancelCauseFunc
	unsub  func() // from the sign-in's events

	mu         sync.Mutex
	state      State
	session    *mcp.ClientSession
	connecting chan struct{}           // closed when the running connect ends
	endConnect context.CancelCauseFunc // ends the running connect (Disconnect)
	connErr    error                   // result of the last connect
	stateErr   error                   // why the client is needs_auth, declined or failed (nil otherwise)
	closing    bool
	wanted     bool                // the host asked for a session and has not ended it
	lastCO     ConnectOptions      // the handlers of the last Connect, for reconnects
	caps       map[string]any      // the capabilities the last connect advertised (2026-07-28 envelope)
	impl       *mcp.Implementation // the client info it sent
	rawCaps    json.RawMessage     // the server's capabilities as it sent them
	ending     *sessionEnd         // the DELETE that Logout waits to hear of

	elicitWaits urlWaits          // URL-mode elicitations a retried call waits on
	clocks      callClocks        // the timeouts of running calls, paused while the user answers
	subs        []string          // the resources the page subscribed to, in order, subscribed again on each new session
	skills      map[string]Skill  // the server's skill entries last listed or got, by SKILL.md URI
	taskTools   map[string]string // tools' execution.taskSupport as last listed, by tool name
	loaded      map[string]Skill  // the skills loaded, by SKILL.md URI: the entries their files are read against

	re reconnector // the reconnect loop of state reconnecting

	book       *TaskBook   // the tasks the client started and has not seen end
	leaving    atomic.Bool // Leave: sessions running kept tasks stay open
	lost       sync.Map    // ids of the sessions lostSession is closing: those running kept tasks stay open
	adoptTried bool        // a connect looked for a kept session to go on in
}

// New returns an idle client for the MCP endpoint at rawURL, which must be an
// absolute http or https URL.
func New(rawURL string, opts Options) (*Client, error) {
	u, err := url.Parse(rawURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, mcperr.New(mcperr.InvalidArgument, NewMessages.BadURL, rawURL)
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
			return nil, mcperr.New(mcperr.InvalidArgument, NewMessages.HeaderName, k)
		}
		if !httpguard.ValidHeaderValue(v) {
			return nil, mcperr.New(mcperr.InvalidArgument, NewMessages.HeaderValue, k)
		}
		if forbiddenHeader(k) {
			return nil, mcperr.New(mcperr.InvalidArgument, NewMessages.HeaderReserved, k)
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
	c := &Client{url: u.String(), opts: opts, state: StateIdle, book: opts.Tasks}
	if c.book == nil {
		c.book = &TaskBook{}
	}
	c.ctx, c.cancel = context.WithCancelCause(context.Background())
	c.follow()
	guard := &httpguard.Transport{
		Base:              base,
		Origin:            httpguard.OriginOf(u),
		Credentials:       credentials(hdr, opts.AccessToken),
		CredentialHeaders: names,
	}
	c.http = &http.Client{
		Transport: &roundTripper{guard: busy.Policy{}.Transport(present(opts.Auth, guard)), taps: &c.taps, hello: &c.hello,
			warn: func(msg string) { c.emit("warning", Warning{Message: msg}) }, ended: c.sawDelete, listed: c.toolsListed,
			keeps: func(ctx context.Context, id string) bool {
				_, lost := c.lost.Load(id)
				return (c.leaving.Load() || lost) && c.book.holds(ctx, c.url, id)
			}},
		Jar:           jar,
		CheckRedirect: httpguard.CheckRedirect,
	}
	return c, nil
}

// ReservedHeaders are the headers the client sets itself, which
// Options.Headers must not replace (DPoP: the proof of each request of a
// DPoP-bound sign-in); canonical form.
var ReservedHeaders = []string{"Mcp-Session-Id", "Mcp-Protocol-Version", "Content-Type", "Accept", "Last-Event-Id", "Dpop"}

// NewMessages are the formats (%q) of [New]'s refusals of its arguments;
// the page's mcp.js gives the same sentences from them (package jsapi
// carries them).
var NewMessages = struct {
	BadURL         string `json:"badUrl"`
	HeaderName     string `json:"headerName"`
	HeaderValue    string `json:"headerValue"`
	HeaderReserved string `json:"headerReserved"`
}{
	BadURL:         "mcp: server URL %q is not an absolute http(s) URL",
	HeaderName:     "mcp: header name %q is not a valid HTTP header name",
	HeaderValue:    "mcp: the value of header %q has characters a header cannot carry (control characters or non-ASCII)",
	HeaderReserved: "mcp: header %q is set by the MCP transport itself and cannot be replaced",
}

func forbiddenHeader(k string) bool {
	return slices.Contains(ReservedHeaders, http.CanonicalHeaderKey(k))
}

// URL returns the server URL.
func (c *Client) URL() string { return c.url }

// State returns the current state.
func (c *Client) State() State {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.state
}

func (c *Client) emit(typ string, data any) {
	if c.opts.OnEvent != nil {
		c.opts.OnEvent(Event{Type: typ, Data: data})
	}
}

// Close ends the session (best effort) and makes the client unusable.
func (c *Client) Close() error {
	c.mu.Lock()
	if c.closing {
		c.mu.Unlock()
		return nil
	}
	c.closing = true
	c.mu.Unlock()
	var cause error
	if c.leaving.Load() {
		cause = ErrOwnerGone // tasks followed after a hand-off are kept, not cancelled
	}
	c.cancel(cause)
	if c.opts.Auth != nil {
		// Before the session ends: its DELETE goes out with the token
		// held, never a refresh (see oauth.Handler.Close).
		c.opts.Auth.Close()
	}
	c.apply(inClose, nil)
	if c.unsub != nil {
		c.unsub()
	}
	return nil
}

// Disconnect ends the session (best effort) but keeps the client usable:
// it becomes idle, and a later Connect starts a new session. It never
// reconnects by itself after this, until the next Connect.
func (c *Client) Disconnect() { c.apply(inDisconnect, nil) }

// sessionOrErrLocked returns the live session or, without one, an error
// whose code says what the caller can do: closed; the cause of the state
// when the client waits for a sign-in or failed (auth_required while a
// sign-in runs, the decline, the connect's network error, …); protocol
// (not connected) for a client nobody asked to connect; errReconnecting
// in state reconnecting, which [Client.awaitSession] waits out. c.mu must
// be held.
func (c *Client) sessionOrErrLocked() (*mcp.ClientSession, error) {
	var err error
	switch {
	case c.closing:
		return nil, errClosed
	case c.session != nil:
		return c.session, nil
	case c.state == StateAuthorizing:
		err = mcperr.New(mcperr.AuthRequired, "mcp: not connected: a sign-in is in progress; wait for authorize() to finish")
	case c.stateErr != nil && (c.state == StateNeedsAuth || c.state == StateDeclined || c.state == StateFailed):
		err = fmt.Errorf("mcp: not connected: %w", c.stateErr)
	case c.state == StateNeedsAuth:
		err = mcperr.New(mcperr.AuthRequired, "mcp: not connected: a sign-in is needed; call authorize() from a click")
	case c.state == StateDeclined:
		err = mcperr.New(mcperr.Declined, "mcp: not connected: the sign-in was declined or cancelled; call authorize() from a click to ask again")
	case c.state == StateReconnecting:
		return nil, errReconnecting
	case c.state == StateConnecting:
		return nil, mcperr.New(mcperr.Protocol, "mcp: not connected yet; wait for connect() to finish")
	default:
		return nil, mcperr.New(mcperr.Protocol, "mcp: not connected; call connect() first")
	}
	return nil, mcperr.AtServer(err, Host(c.url))
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
