package mcpclient

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/mcpwasm/mcpwasm/mcperr"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Connect connects and initializes the session, unless already connected.
// Concurrent calls share one attempt. co's handlers are kept for the
// reconnects the client makes by itself (when a grant arrives for a client
// that waited for one).
func (c *Client) Connect(ctx context.Context, co ConnectOptions) error {
	c.mu.Lock()
	if !c.closing {
		c.wanted, c.lastCO = true, co
	}
	c.mu.Unlock()
	return c.connectOnce(ctx, co)
}

func (c *Client) connectOnce(ctx context.Context, co ConnectOptions) error {
	c.mu.Lock()
	switch {
	case c.closing:
		c.mu.Unlock()
		return errClosed
	case c.session != nil:
		c.mu.Unlock()
		return nil
	case c.connecting != nil:
		ch, ending := c.connecting, c.endConnect == nil
		c.mu.Unlock()
		if ending {
			// A Disconnect ended the running connect before this one
			// came: let it finish, then start afresh.
			select {
			case <-ch:
				return c.connectOnce(ctx, co)
			case <-ctx.Done():
				return classify(ctx.Err(), nil)
			}
		}
		if joined != nil {
			joined()
		}
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
	// The checks above and the registration of this connect are one step:
	// a connect let in between them (the reconnect a grant starts, racing
	// Authorize's own connect) would run as well, and the session of the
	// first to finish would be replaced without being closed, outliving
	// Close.
	after := c.applyLocked(inConnect, nil)
	ch := make(chan struct{})
	c.connecting = ch
	dctx, end := context.WithCancelCause(ctx)
	defer end(nil)
	c.endConnect = end
	c.mu.Unlock()
	after()

	wctx, stop := c.connectWatchdog(dctx)
	cs, err := c.connect(wctx, co)
	if err != nil && errors.Is(context.Cause(wctx), errConnectTimeout) {
		err = &mcperr.Error{Code: mcperr.Timeout, Msg: fmt.Sprintf("mcp: the server did not finish connecting within %v", c.connectTimeout()), Err: err}
	}
	stop()

	c.mu.Lock()
	c.connecting, c.endConnect = nil, nil
	// A Disconnect that came while this connect ran ended it (or comes
	// just as it succeeded): the session it made must not outlive it.
	disconnected := errors.Is(context.Cause(dctx), errDisconnected)
	if err == nil && (c.closing || disconnected) {
		c.mu.Unlock()
		_ = cs.Close()
		err = errClosed
		c.mu.Lock()
	}
	if disconnected && !c.closing {
		err = errDisconnected
	}
	if err == nil {
		c.session = cs
	}
	// The outcome reaches the state machine in the same step that ends
	// this connect: a connect started next sees it already applied. A
	// failure is named for its server before the connects that joined
	// this one read it (connErr), so that each says the same sentence.
	var applied func()
	if err != nil {
		err = mcperr.AtServer(err, Host(c.url))
		applied = c.applyLocked(inConnectFailed, err)
	} else {
		applied = c.applyLocked(inConnected, nil)
	}
	c.connErr = err
	c.mu.Unlock()
	// The host hears of the outcome before the connects that joined this
	// one return: each caller, like this one, returns with its event
	// delivered. No connect joins ch any more (c.connecting is nil), so an
	// event handler that connects again starts afresh.
	applied()
	close(ch)
	if err != nil {
		return err
	}
	go c.watch(cs)
	go c.resubscribe(cs)
	return nil
}

// errDisconnected is how a connect ends when the host disconnected the
// client (a catalog's disable) while it ran.
var errDisconnected = mcperr.New(mcperr.Aborted, "mcp: the connect was ended by a disconnect (the server was disabled); connect again to use it")

// joined, when set (by tests), is called when a connect joins the one
// running.
var joined func()

// DefaultConnectTimeout bounds a connect (initialize and the probes
// before it) when Options.ConnectTimeout is zero; DefaultRequestTimeout
// bounds each list, read, get and ping without a deadline of its own.
// callTool has no default bound: a tool may run long (pass a timeout).
const (
	DefaultConnectTimeout = 60 * time.Second
	DefaultRequestTimeout = 60 * time.Second
)

var (
	errConnectTimeout = errors.New("connect timeout")
	errLegacyEndpoint = errors.New("the URL is a legacy HTTP+SSE endpoint")
)

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
	c.lostSession(cs, err)
}

// lostSession ends cs, which the server or the network ended, unless it
// is no longer the client's session.
func (c *Client) lostSession(cs *mcp.ClientSession, err error) {
	c.mu.Lock()
	if c.session != cs || c.closing {
		c.mu.Unlock()
		return
	}
	c.session = nil
	c.mu.Unlock()
	// A failed request does not mean the server ended the session (a page
	// that unloads sees its fetches fail): a session a kept task runs in is
	// left open, as [Client.Leave] leaves it, for the task's result.
	id := cs.ID()
	c.lost.Store(id, true)
	_ = cs.Close()
	c.lost.Delete(id)
	if err == nil {
		err = mcp.ErrConnectionClosed
	}
	c.apply(inSessionLost, lostReason(err))
}

func (c *Client) connect(ctx context.Context, co ConnectOptions) (*mcp.ClientSession, error) {
	if a := c.adoption(ctx); a != nil {
		rctx, rec := withRecord(withAdoption(ctx, a))
		cs, err := c.connectWith(rctx, TransportStreamable, a.s.Version, co)
		if err == nil {
			return cs, nil
		}
		if cerr := classify(err, rec); ctx.Err() != nil || stateFor(cerr) != StateFailed {
			return nil, cerr
		}
		// A kept session that cannot be had: a session of its own.
	}
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

// adoption is the kept session the client's first connect goes on in: the
// session of the newest kept task of this server that no call of this
// runtime follows, so that [Client.ResumeTask] finds the task on servers
// that keep tasks per session; nil when there is none.
func (c *Client) adoption(ctx context.Context) *adoption {
	c.mu.Lock()
	tried := c.adoptTried
	c.adoptTried = true
	c.mu.Unlock()
	if tried || c.opts.Transport == TransportSSE {
		return nil
	}
	if s := c.book.adoptable(ctx, c.url); s != nil {
		return &adoption{s: s}
	}
	return nil
}

func (c *Client) connectHinted(ctx context.Context, hint hint, co ConnectOptions) (*mcp.ClientSession, error) {
	kind := c.opts.Transport
	if kind == TransportAuto && hint.transport != "" {
		kind = hint.transport
	}
	if kind == TransportAuto {
		// A probe answered as only a legacy HTTP+SSE endpoint answers
		// (404 or 405 without a JSON-RPC error) ends the Streamable HTTP
		// attempt at once: no initialize POST after it.
		sctx, legacy := context.WithCancelCause(ctx)
		rctx, rec := withRecord(sctx)
		rec.legacy = func() { legacy(errLegacyEndpoint) }
		cs, err := c.connectWith(rctx, TransportStreamable, hint.version, co)
		legacy(nil)
		if err == nil {
			return cs, nil
		}
		if _, first, _ := rec.snapshot(); !fallbackStatus(first) || ctx.Err() != nil {
			return nil, classify(err, rec)
		}
		cutShort := rec
		rctx, rec = withRecord(ctx)
		cs, err = c.connectWith(rctx, TransportSSE, hint.version, co)
		if err != nil && cutShort.postsEnded() && ctx.Err() == nil {
			// Not a legacy endpoint after all: what the early end of the
			// Streamable HTTP attempt skipped is tried before giving up.
			if cs, serr := c.connectWith(ctx, TransportStreamable, hint.version, co); serr == nil {
				return cs, nil
			}
		}
		if err != nil {
			return nil, classify(err, rec)
		}
		return cs, nil
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

// legacySSEVersion is the protocol version a connect over the legacy
// HTTP+SSE transport asks for.
const legacySSEVersion = latestLegacyVersion

func (c *Client) connectWith(ctx context.Context, kind Transport, version string, co ConnectOptions) (*mcp.ClientSession, error) {
	var t mcp.Transport
	switch kind {
	case TransportSSE:
		t = &mcp.SSEClientTransport{Endpoint: c.url, HTTPClient: c.http}
		if version == "" || version >= protocol20260728 {
			// The HTTP+SSE transport belongs to the 2024-11-05 protocol
			// and its successors up to 2025-11-25; no 2026-07-28 server
			// serves it, so no server/discover probe over it (a legacy
			// server answers it with errors and logs them).
			version = legacySSEVersion
		}
	default:
		t = &mcp.StreamableClientTransport{Endpoint: c.url, HTTPClient: c.http, OAuthHandler: c.oauthHandler(), MaxRetries: 2}
		if version == "" {
			// The server's era is unknown: go-sdk probes with
			// server/discover, which goes out bare (see sendProbe).
			ctx = withBareProbe(ctx)
		}
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
		ResourceUpdatedHandler:     c.resourceUpdated,
	}
	if c.opts.Apps {
		mo.Capabilities.AddExtension(UIExtension, map[string]any{"mimeTypes": []string{UIMimeType}})
	}
	// Every tool call can follow a task a server answers it with.
	mo.Capabilities.AddExtension(TasksExtension, map[string]any{})
	c.deprecatedHandlers(mo, co)
	if co.Elicitation != nil {
		mo.Capabilities.Elicitation = elicitationCaps()
		mo.ElicitationHandler = c.elicitationHandler(co.Elicitation)
		mo.ElicitationCompleteHandler = c.elicitationComplete
	}
	impl := &mcp.Implementation{Name: name, Version: ver}
	client := mcp.NewClient(impl, mo)
	if mo.ElicitationHandler != nil {
		client.AddSendingMiddleware(c.urlElicitationRetry(mo.ElicitationHandler))
	}
	c.hello.reset()
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
		if ir.ServerInfo != nil {
			ir.ServerInfo.Icons = c.safeIcons("the server", ir.ServerInfo.Icons)
		}
	}
	c.mu.Lock()
	c.caps, c.impl, c.rawCaps = advertised(mo), impl, c.hello.capabilities()
	c.mu.Unlock()
	return cs, nil
}

// advertised is the clientCapabilities object of the 2026-07-28 request
// envelope for a client made with mo, as go-sdk builds it for the other
// requests: a capability for each handler set.
func advertised(mo *mcp.ClientOptions) map[string]any {
	caps := map[string]any{}
	if mo.CreateMessageHandler != nil || mo.CreateMessageWithToolsHandler != nil {
		caps["sampling"] = map[string]any{}
	}
	if mo.ElicitationHandler != nil {
		caps["elicitation"] = map[string]any{"form": map[string]any{}, "url": map[string]any{}}
	}
	if mo.Capabilities != nil && len(mo.Capabilities.Extensions) > 0 {
		caps["extensions"] = mo.Capabilities.Extensions
	}
	return caps
}
