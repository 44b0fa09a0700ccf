package oauth

import (
	"context"
	"sync"
	"time"

	"github.com/mcpwasm/mcpwasm/mcperr"
	"github.com/modelcontextprotocol/go-sdk/auth"
)

// Handler runs MCP authorization for one MCP server (resource). It
// implements go-sdk's auth.OAuthHandler: set it as
// mcp.StreamableClientTransport.OAuthHandler. It is safe for concurrent use.
type Handler struct {
	cfg      Config
	resource string

	mu       sync.Mutex
	grant    *Grant // nil when none
	loaded   bool   // grant was read from the Store
	latch    error  // non-nil after a decline/abort: returned until Login
	refused  error  // a workload identity grant the server refused: returned until Login
	fl       *flight
	attempts map[string]int // authorization flows per requested scope set
	stepUps  int            // step-up flows since the last Login
	lastHint challenge      // last 401/403 challenge seen
	fresh    string         // access token obtained by the last login
	freshAt  time.Time      // when
	strikes  int            // re-authorizations after a fresh token was rejected
	rescued  string         // access token of a refresh made because the server refused the one before
	bound    []boundToken   // DPoP-bound access tokens handed out, newest last
	state    State
	subs     map[int]func(Event)
	nextSub  int
	closed   bool // see Close
}

type flight struct {
	done chan struct{}
	err  error
}

var _ auth.OAuthHandler = (*Handler)(nil)

// Resource returns the canonical resource URI the handler serves.
func (h *Handler) Resource() string { return h.resource }

// State returns the current authorization state.
func (h *Handler) State() State {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.state
}

// now is the wall-clock time every expiry is compared with (see [wallNow]).
func (h *Handler) now() time.Time { return wallNow(h.cfg.Clock) }

// setState records s and emits an event. Call without h.mu held.
func (h *Handler) setState(s State, err error) {
	h.mu.Lock()
	h.state = s
	h.mu.Unlock()
	h.emit(Event{Kind: EventState, Resource: h.resource, State: s, Err: err})
}

func (h *Handler) emit(e Event) {
	if h.cfg.OnEvent != nil {
		h.cfg.OnEvent(e)
	}
	h.mu.Lock()
	subs := make([]func(Event), 0, len(h.subs))
	for i := 0; i < h.nextSub; i++ {
		if fn, ok := h.subs[i]; ok {
			subs = append(subs, fn)
		}
	}
	h.mu.Unlock()
	for _, fn := range subs {
		fn(e)
	}
}

// Subscribe registers fn for the handler's events, in addition to
// Config.OnEvent, until the returned function is called. fn is called
// synchronously, in order; it must not block or call back into the
// Handler.
func (h *Handler) Subscribe(fn func(Event)) (unsubscribe func()) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.subs == nil {
		h.subs = map[int]func(Event){}
	}
	id := h.nextSub
	h.nextSub++
	h.subs[id] = fn
	return func() {
		h.mu.Lock()
		defer h.mu.Unlock()
		delete(h.subs, id)
	}
}

// Close takes the handler out of its [Registry]: it hears of no more
// grant changes. A flow it runs is not affected. From then on its token
// source hands out the token it holds and never refreshes it: what is
// sent after Close (the DELETE that ends a session) is sent while the
// page may be going away, and a refresh cut short there spends a
// rotating refresh token whose successor is never stored: the next page
// would present the spent one, and the server would revoke the grant.
func (h *Handler) Close() {
	h.mu.Lock()
	h.closed = true
	h.mu.Unlock()
	h.cfg.Registry.unregister(h)
}

// storedGrant reads this resource's grant from the Store. A grant whose
// issuer the host does not trust (Config.TrustIssuer) is taken for none:
// stored before the host's policy, or by a tab of the origin without it
// (grants are shared), its token is never sent and its refresh token never
// used; a sign-in then meets the policy's refusal.
func (h *Handler) storedGrant(ctx context.Context) (*Grant, error) {
	g, err := h.cfg.Store.GetGrant(ctx, h.resource)
	if err != nil || g == nil {
		return g, err
	}
	if h.trustIssuer(g.Issuer) != nil {
		return nil, nil
	}
	return g, nil
}

// currentGrant returns the grant, reading the Store the first time.
func (h *Handler) currentGrant(ctx context.Context) (*Grant, error) {
	h.mu.Lock()
	if h.loaded {
		g := h.grant
		h.mu.Unlock()
		return g, nil
	}
	h.mu.Unlock()
	g, err := h.storedGrant(ctx)
	if err != nil {
		return nil, newErr(mcperr.Storage, "reading grant", err)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.loaded {
		h.grant, h.loaded = g, true
		if g != nil {
			h.state = StateAuthorized
		}
	}
	return h.grant, nil
}

// Login starts a fresh authorization attempt for a user gesture (JSAPI
// authorize()): it clears the decline latch and step-up counters and runs
// a flow (or joins the one running), even when a grant is held.
func (h *Handler) Login(ctx context.Context) error {
	h.mu.Lock()
	h.latch, h.refused = nil, nil
	clear(h.attempts)
	h.stepUps = 0
	h.strikes = 0
	ch := h.lastHint
	h.mu.Unlock()
	return h.run(ctx, ch, false, true)
}

// ReloadGrant re-reads the grant from the Store and returns it (nil when
// there is none), for when another page or tab changed it: after
// [CompletePending] stored a grant for this resource, or when a
// BroadcastChannel message reports a new grant or a logout. The state
// becomes authorized or needs_auth accordingly (an event is emitted when
// it changes). The decline latch is left alone. The transport's
// Authorize also re-reads the Store by itself on a 401 without a grant.
func (h *Handler) ReloadGrant(ctx context.Context) (*Grant, error) {
	g, err := h.storedGrant(ctx)
	if err != nil {
		return nil, newErr(mcperr.Storage, "reading grant", err)
	}
	h.mu.Lock()
	h.grant, h.loaded = g, true
	old := h.state
	h.mu.Unlock()
	switch {
	case g != nil && old != StateAuthorized:
		h.setState(StateAuthorized, nil)
	case g == nil && old == StateAuthorized:
		h.setState(StateNeedsAuth, nil)
	}
	return g, nil
}

// Decline latches the handler as if its own flow had been declined: the
// transport's Authorize returns [ErrDeclined] without a Courier call until
// [Handler.Login]. For a redirect-mode login of this resource that
// [CompletePending] reported declined (the page that started it is gone,
// and an interactive handler would otherwise navigate to the
// authorization server again at once). err is kept as the reason when it
// is declined-coded; otherwise it is wrapped in one.
func (h *Handler) Decline(err error) {
	if !isCode(err, mcperr.Declined) {
		err = &Error{Code: mcperr.Declined, Msg: "oauth: authorization declined", Err: err}
	}
	h.mu.Lock()
	h.latch = err
	h.mu.Unlock()
	h.setState(StateDeclined, err)
}

// Logout revokes the grant at the authorization server when it advertises
// a revocation_endpoint (RFC 7009; refresh token, then access token) and
// deletes it. Revocation errors are returned after the grant is deleted.
func (h *Handler) Logout(ctx context.Context) error {
	g, err := h.currentGrant(ctx)
	if err != nil {
		return err
	}
	var revErr error
	if g != nil && g.RevocationEndpoint != "" {
		if g.RefreshToken != "" {
			revErr = h.revoke(ctx, g, g.RefreshToken, "refresh_token")
		}
		if err := h.revoke(ctx, g, g.AccessToken, "access_token"); err != nil && revErr == nil {
			revErr = err
		}
	}
	if err := h.cfg.Store.DeleteGrant(ctx, h.resource); err != nil {
		return newErr(mcperr.Storage, "deleting grant", err)
	}
	h.forget()
	h.changed(ChangeRevoked, nil, nil)
	return revErr
}

// forget drops the grant held in memory (the Store is left as it is) and
// says a sign-in is needed.
func (h *Handler) forget() {
	h.mu.Lock()
	h.grant, h.loaded, h.fresh = nil, true, ""
	was := h.state
	h.mu.Unlock()
	if was != StateNeedsAuth {
		h.setState(StateNeedsAuth, nil)
	}
}

// adoptGrant takes g, which a handler of the same Store just stored, as
// its own.
func (h *Handler) adoptGrant(g *Grant) {
	h.mu.Lock()
	h.grant, h.loaded = g, true
	was := h.state
	h.mu.Unlock()
	if was != StateAuthorized {
		h.setState(StateAuthorized, nil)
	}
}

func (h *Handler) dropGrant(ctx context.Context, g *Grant) {
	h.mu.Lock()
	if h.grant == g || (h.grant != nil && h.grant.AccessToken == g.AccessToken) {
		h.grant = nil
	}
	h.mu.Unlock()
	_ = h.cfg.Store.DeleteGrant(ctx, h.resource)
}
