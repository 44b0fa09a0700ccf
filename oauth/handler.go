package oauth

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/mcpwasm/mcpwasm/mcperr"
	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"golang.org/x/oauth2"
)

// Config configures a [Handler]. Only ResourceURL, HTTPClient and
// RedirectURL are required.
type Config struct {
	// ResourceURL is the MCP endpoint (canonical server URI, RFC 8707); it
	// keys the stored grant. Required; https, or http on a loopback host.
	ResourceURL string
	// HTTPClient performs every request (discovery, registration, token,
	// revocation). Required; http.DefaultClient is never used. Under
	// GOOS=js its transport must not set DialContext so that fetch is used.
	HTTPClient *http.Client
	// RedirectURL is the callback URL registered with the authorization
	// server and sent as redirect_uri. Required.
	RedirectURL string
	// ClientName is the client_name for dynamic registration.
	ClientName string
	// Scopes, when set, replaces the scopes discovered from the challenge
	// and the resource metadata.
	Scopes []string
	// ClientID and ClientSecret describe a pre-registered client. The
	// secret is optional (public client); it is not secret in a browser.
	ClientID     string
	ClientSecret string
	// ClientMetadataURL is this client's ID metadata document URL (used
	// as client_id when the AS advertises client_id_metadata_document_supported).
	// Must be an https URL with a path. There is no fallback: when such an
	// AS then rejects the document at the authorize or token step (e.g. it
	// cannot fetch it), the flow fails; ClientID or dynamic registration
	// are used only when the AS does not advertise the support.
	ClientMetadataURL string
	// Store persists grants, registrations and metadata. Default: a new
	// [MemoryStore].
	Store Store
	// Registry routes callbacks to flows; share one among all handlers of
	// a page. Default: a new [Registry].
	Registry *Registry
	// Courier shows the authorization URL. Without it every flow fails
	// with [ErrAuthorizationRequired].
	Courier Courier
	// Locker makes refresh single-flight. Default: a new [MutexLocker].
	Locker Locker
	// Clock tells the time. Default: the real clock.
	Clock Clock
	// Interactive lets the transport's Authorize start a login by itself.
	// When false it returns [ErrAuthorizationRequired] and the embedder
	// calls [Handler.Login] from a user gesture.
	Interactive bool
	// RequestRefreshToken asks for a refresh token: offline_access is
	// added to the scopes when the AS lists it, and refresh_token to the
	// registered grant types.
	RequestRefreshToken bool
	// AuthTimeout bounds a login nobody finishes. Default 5 minutes. It
	// bounds each phase of a flow separately: discovery and registration,
	// the wait for the user (from Courier.Open), and the token exchange.
	// It is measured in real time (timers), not with Clock; Clock dates the
	// PendingFlow's Expiry (now + AuthTimeout).
	AuthTimeout time.Duration
	// PersistFlows stores each flow as a [PendingFlow] (Store.PutPending)
	// before Courier.Open, for the full-page redirect mode: the page that
	// navigates to the authorization server is gone when the callback
	// comes back, and [CompletePending] (or [Registry.HandleCallback])
	// finishes the flow from the Store alone. A live flow that receives its
	// callback in memory, ends, times out or is aborted deletes its entry.
	// In redirect mode the Courier navigates the page and returns nil; it
	// must not cancel the flow's context on unload (that deletes the entry).
	PersistFlows bool
	// RefreshMargin refreshes that long before expiry. Default 60 s.
	RefreshMargin time.Duration
	// MetadataTTL is how long discovery results are cached. Default 1 h.
	MetadataTTL time.Duration
	// OnEvent, when set, receives state changes and refreshes. It is
	// called synchronously and must not block or call back into the
	// Handler. Events carry no secrets.
	OnEvent func(Event)
}

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
	fl       *flight
	attempts map[string]int // authorization flows per requested scope set
	stepUps  int            // step-up flows since the last Login
	lastHint challenge      // last 401/403 challenge seen
	fresh    string         // access token obtained by the last login
	freshAt  time.Time      // when
	strikes  int            // re-authorizations after a fresh token was rejected
	state    State
}

type flight struct {
	done chan struct{}
	err  error
}

// challenge is what a 401/403 told us.
type challenge struct {
	prmURL string
	scopes []string
	err    string
}

var _ auth.OAuthHandler = (*Handler)(nil)

// CheckResourceURL reports whether an MCP server URL can be a protected
// resource this package signs in to: absolute https (or http on loopback),
// without query or fragment (RFC 8707 section 2). A client may still talk to
// other URLs, without OAuth.
func CheckResourceURL(raw string) error {
	bad := func(msg string) error { return newErr(mcperr.InvalidArgument, msg, nil) }
	ru, err := url.Parse(raw)
	if err != nil || checkEndpoint("ResourceURL", raw) != nil {
		return bad("the MCP server URL must be https (or http on loopback) to sign in to it")
	}
	if ru.RawQuery != "" || ru.Fragment != "" {
		return bad("the MCP server URL must have no query or fragment to sign in to it (RFC 8707)")
	}
	return nil
}

// New validates cfg and returns a Handler.
func New(cfg Config) (*Handler, error) {
	bad := func(msg string) error { return newErr(mcperr.InvalidArgument, msg, nil) }
	if cfg.HTTPClient == nil {
		return nil, bad("Config.HTTPClient is required")
	}
	if err := CheckResourceURL(cfg.ResourceURL); err != nil {
		return nil, err
	}
	if u, err := url.Parse(cfg.RedirectURL); err != nil || !u.IsAbs() || u.Fragment != "" {
		return nil, bad("Config.RedirectURL must be an absolute URL without fragment")
	}
	if cfg.ClientSecret != "" && cfg.ClientID == "" {
		return nil, bad("Config.ClientSecret needs Config.ClientID")
	}
	if cfg.ClientMetadataURL != "" {
		u, err := url.Parse(cfg.ClientMetadataURL)
		if err != nil || u.Scheme != "https" || u.Host == "" || strings.Trim(u.Path, "/") == "" {
			return nil, bad("Config.ClientMetadataURL must be an https URL with a path")
		}
	}
	if cfg.Store == nil {
		cfg.Store = NewMemoryStore()
	}
	if cfg.Registry == nil {
		cfg.Registry = NewRegistry()
	}
	if cfg.Locker == nil {
		cfg.Locker = NewMutexLocker()
	}
	if cfg.Clock == nil {
		cfg.Clock = realClock{}
	}
	if cfg.AuthTimeout <= 0 {
		cfg.AuthTimeout = 5 * time.Minute
	}
	if cfg.RefreshMargin <= 0 {
		cfg.RefreshMargin = time.Minute
	}
	if cfg.MetadataTTL <= 0 {
		cfg.MetadataTTL = time.Hour
	}
	cfg.Scopes = slices.Clone(cfg.Scopes)
	// Canonical form: lower-case scheme and host, no fragment.
	ru, _ := url.Parse(cfg.ResourceURL) // checked above
	ru.Scheme = strings.ToLower(ru.Scheme)
	ru.Host = strings.ToLower(ru.Host)
	ru.Fragment = ""
	return &Handler{cfg: cfg, resource: ru.String(), attempts: map[string]int{}, state: StateNeedsAuth}, nil
}

// Resource returns the canonical resource URI the handler serves.
func (h *Handler) Resource() string { return h.resource }

// State returns the current authorization state.
func (h *Handler) State() State {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.state
}

func (h *Handler) now() time.Time { return h.cfg.Clock.Now() }

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
	g, err := h.cfg.Store.GetGrant(ctx, h.resource)
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

// TokenSource implements auth.OAuthHandler. It returns nil when no grant
// is held (the request goes out without a token and a 401 follows). The
// returned source refreshes before expiry, single-flight through the Locker.
func (h *Handler) TokenSource(ctx context.Context) (oauth2.TokenSource, error) {
	g, err := h.currentGrant(ctx)
	if err != nil {
		return nil, err
	}
	if g == nil {
		return nil, nil
	}
	return &tokenSource{h: h, ctx: ctx}, nil
}

type tokenSource struct {
	h   *Handler
	ctx context.Context
}

// Token returns the current access token, refreshing it when it expires
// within RefreshMargin and a refresh token is held. When the grant is gone
// (invalid_grant) it returns an *oauth2.RetrieveError with ErrorCode
// "invalid_grant" inside an [ErrAuthorizationRequired]-coded error, which
// go-sdk's transport treats as "send without a token".
func (ts *tokenSource) Token() (*oauth2.Token, error) {
	h := ts.h
	ctx := context.WithoutCancel(ts.ctx)
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	g, err := h.currentGrant(ctx)
	if err != nil {
		return nil, err
	}
	if g == nil {
		return nil, errNoGrant()
	}
	if h.expiring(g) && g.RefreshToken != "" {
		ng, err := h.refresh(ctx, g)
		switch {
		case err == nil:
			g = ng
		case isCode(err, mcperr.AuthRequired):
			return nil, err
		default:
			// Network or server trouble: use the old token; a 401 follows.
		}
	}
	return &oauth2.Token{AccessToken: g.AccessToken, TokenType: "Bearer", Expiry: g.Expiry}, nil
}

func errNoGrant() error {
	return &Error{Code: mcperr.AuthRequired, Msg: "oauth: no grant; authorization required",
		Err: &oauth2.RetrieveError{Response: &http.Response{}, ErrorCode: "invalid_grant"}}
}

// expired reports whether g's access token is past its expiry.
func (h *Handler) expired(g *Grant) bool {
	return !g.Expiry.IsZero() && !h.now().Before(g.Expiry)
}

func (h *Handler) expiring(g *Grant) bool {
	return !g.Expiry.IsZero() && !h.now().Add(h.cfg.RefreshMargin).Before(g.Expiry)
}

// Authorize implements auth.OAuthHandler; the transport calls it after a
// 401 or 403. It refreshes a stale token, runs step-up authorization on
// 403 insufficient_scope (at most 3 flows per scope set, then
// [ErrInsufficientScope]), and otherwise starts a login, unless the handler
// is non-interactive ([ErrAuthorizationRequired]) or latched after a
// decline ([ErrDeclined]). Concurrent calls share one login.
func (h *Handler) Authorize(ctx context.Context, req *http.Request, resp *http.Response) error {
	if resp != nil && resp.Body != nil {
		defer resp.Body.Close()
		defer io.Copy(io.Discard, io.LimitReader(resp.Body, maxBody))
	}
	ch := parseChallenge(resp)
	status := 0
	if resp != nil {
		status = resp.StatusCode
	}
	if status == http.StatusForbidden && ch.err != "insufficient_scope" && !h.wantsMoreScope(ctx, ch) {
		return nil // not ours: let the retried request report the 403
	}
	h.mu.Lock()
	h.lastHint = ch
	h.mu.Unlock()

	bearer := ""
	if req != nil {
		if a := req.Header.Get("Authorization"); len(a) > 7 && strings.EqualFold(a[:7], "bearer ") {
			bearer = a[7:]
		}
	}
	g, err := h.currentGrant(ctx)
	if err != nil {
		return err
	}
	if status == http.StatusUnauthorized && g == nil {
		// Another page or tab may have stored a grant since we last looked
		// (a redirect-mode login finished by CompletePending, a login in
		// another tab): use it rather than prompting.
		if ng, err := h.cfg.Store.GetGrant(ctx, h.resource); err == nil && ng != nil && ng.AccessToken != bearer {
			h.mu.Lock()
			if h.grant == nil { // never replace one a concurrent login just set
				h.grant, h.loaded = ng, true
			}
			changed := h.state != StateAuthorized
			h.mu.Unlock()
			if changed {
				h.setState(StateAuthorized, nil)
			}
			return nil
		}
	}
	if status == http.StatusUnauthorized && g != nil {
		if bearer != g.AccessToken {
			return nil // a newer token exists: retry with it
		}
		h.mu.Lock()
		isFresh := bearer == h.fresh && bearer != "" && h.now().Sub(h.freshAt) < freshWindow
		already := h.strikes > 0
		if isFresh {
			h.strikes++
		} else {
			h.strikes = 0
		}
		h.mu.Unlock()
		if isFresh && already {
			err := newErr(mcperr.AuthRequired, "server rejected a freshly issued token", nil)
			h.setState(StateFailed, err)
			return err
		}
		if !isFresh && g.RefreshToken != "" {
			if _, err := h.refresh(ctx, g); err == nil {
				return nil
			}
		}
		h.dropGrant(ctx, g)
	}
	if status == http.StatusForbidden {
		return h.run(ctx, ch, true, false)
	}
	return h.run(ctx, ch, false, false)
}

// maxStepUps bounds step-up authorizations: per scope set, and in all
// between two explicit sign-ins (Login).
const maxStepUps = 3

// freshWindow: a token rejected this soon after a login counts as "fresh";
// a second such rejection in a row ends with an error instead of a loop.
const freshWindow = 30 * time.Second

// wantsMoreScope reports whether a 403's Bearer challenge names a scope the
// grant lacks (servers that omit error="insufficient_scope", such as
// go-sdk's auth.RequireBearerToken).
func (h *Handler) wantsMoreScope(ctx context.Context, ch challenge) bool {
	if len(ch.scopes) == 0 {
		return false
	}
	g, err := h.currentGrant(ctx)
	if err != nil || g == nil {
		return true
	}
	for _, s := range ch.scopes {
		if !slices.Contains(g.Scopes, s) {
			return true
		}
	}
	return false
}

// Login starts a fresh authorization attempt for a user gesture (JSAPI
// authorize()): it clears the decline latch and step-up counters and runs
// a flow (or joins the one running), even when a grant is held.
func (h *Handler) Login(ctx context.Context) error {
	h.mu.Lock()
	h.latch = nil
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
	g, err := h.cfg.Store.GetGrant(ctx, h.resource)
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
	h.mu.Lock()
	h.grant, h.loaded, h.fresh = nil, true, ""
	h.mu.Unlock()
	h.setState(StateNeedsAuth, nil)
	return revErr
}

func (h *Handler) dropGrant(ctx context.Context, g *Grant) {
	h.mu.Lock()
	if h.grant == g || (h.grant != nil && h.grant.AccessToken == g.AccessToken) {
		h.grant = nil
	}
	h.mu.Unlock()
	_ = h.cfg.Store.DeleteGrant(ctx, h.resource)
}

func parseChallenge(resp *http.Response) challenge {
	var ch challenge
	if resp == nil {
		return ch
	}
	cs, err := oauthex.ParseWWWAuthenticate(resp.Header.Values("WWW-Authenticate"))
	if err != nil {
		return ch // unreadable: discovery falls through to well-known URLs
	}
	for _, c := range cs {
		if c.Scheme != "bearer" {
			continue
		}
		if v := c.Params["resource_metadata"]; v != "" && ch.prmURL == "" {
			ch.prmURL = v
		}
		if v := c.Params["scope"]; v != "" && ch.scopes == nil {
			ch.scopes = strings.Fields(v)
		}
		if v := c.Params["error"]; v != "" && ch.err == "" {
			ch.err = v
		}
	}
	return ch
}

// run starts a login or joins the running one.
func (h *Handler) run(ctx context.Context, ch challenge, stepUp, explicit bool) error {
	h.mu.Lock()
	if h.latch != nil && !explicit {
		err := h.latch
		h.mu.Unlock()
		return err
	}
	if f := h.fl; f != nil {
		h.mu.Unlock()
		select {
		case <-f.done:
			if f.err != nil {
				return f.err
			}
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	if !h.cfg.Interactive && !explicit {
		h.mu.Unlock()
		h.setState(StateNeedsAuth, ErrAuthorizationRequired)
		return ErrAuthorizationRequired
	}
	f := &flight{done: make(chan struct{})}
	h.fl = f
	h.mu.Unlock()

	h.setState(StateAuthorizing, nil)
	err := h.login(ctx, ch, stepUp)

	h.mu.Lock()
	h.fl = nil
	switch {
	case err == nil:
	case isCode(err, mcperr.Declined):
		h.latch = err
	case ctx.Err() != nil:
		// Aborted: waiters see a decline; no new flow until Login.
		h.latch = &Error{Code: mcperr.Declined, Msg: "oauth: authorization aborted", Err: ctx.Err()}
	case errors.Is(err, errNobodyFinished):
		// The user never finished: like a dismissal. A slow server
		// (a timeout in discovery or the exchange) is a failure instead.
		h.latch = &Error{Code: mcperr.Declined, Msg: "oauth: authorization timed out", Err: err}
	}
	f.err = err
	if err != nil && h.latch != nil && ctx.Err() != nil {
		f.err = h.latch
	}
	latched := err != nil && h.latch != nil
	h.mu.Unlock()
	close(f.done)

	switch {
	case err == nil:
		h.setState(StateAuthorized, nil)
	case latched:
		// Declined, aborted or nobody finished: the state says what the
		// next Authorize will do (return ErrDeclined until Login).
		h.setState(StateDeclined, err)
	case isCode(err, mcperr.AuthRequired):
		h.setState(StateNeedsAuth, err)
	default:
		h.setState(StateFailed, err)
	}
	if ctx.Err() != nil {
		return fmt.Errorf("oauth: authorization aborted: %w", ctx.Err())
	}
	return err
}

// clientCreds is a resolved client.
type clientCreds struct {
	id, secret, method string
}

// errNobodyFinished marks a timeout while waiting for the user: it ends
// the attempt as declined (latched), unlike a slow server.
var errNobodyFinished = errors.New("nobody finished the login")

// phaseErr turns a failure in a phase bounded by pctx (a child of ctx)
// into the caller's abort (ctx's error) or a timeout.
func (h *Handler) phaseErr(ctx, pctx context.Context, err error, what string) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if errors.Is(pctx.Err(), context.DeadlineExceeded) {
		return newErr(mcperr.Timeout, what+" did not finish within "+h.cfg.AuthTimeout.String(), nil)
	}
	return err
}

func (h *Handler) login(ctx context.Context, ch challenge, stepUp bool) error {
	if h.cfg.Courier == nil {
		// Before discovery and registration: nothing is registered for a
		// flow that cannot be shown.
		return newErr(mcperr.AuthRequired, "no Courier configured to show the login", nil)
	}
	pctx, pcancel := context.WithTimeout(ctx, h.cfg.AuthTimeout)
	p, cl, authURL, err := h.prepare(pctx, ch, stepUp)
	pcancel()
	if err != nil {
		return h.phaseErr(ctx, pctx, err, "discovery and registration")
	}

	w := h.cfg.Registry.add(p.State, h.resource)
	defer h.cfg.Registry.remove(w)
	if h.cfg.PersistFlows {
		if err := h.cfg.Store.PutPending(ctx, p); err != nil {
			return newErr(mcperr.Storage, "storing the pending flow", err)
		}
		defer func() {
			// Idempotent; harmless when CompletePending took it. Expiry
			// covers a failure here.
			dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
			defer cancel()
			_ = h.cfg.Store.DeletePending(dctx, p.State)
		}()
	}
	fctx, cancel := context.WithTimeout(ctx, h.cfg.AuthTimeout)
	defer cancel()
	timedOut := func() error {
		return &Error{Code: mcperr.Timeout, Msg: "oauth: login not finished within " + h.cfg.AuthTimeout.String(), Err: errNobodyFinished}
	}
	if err := h.open(fctx, authURL); err != nil {
		switch {
		case ctx.Err() != nil:
			return ctx.Err()
		case fctx.Err() != nil:
			return timedOut()
		case isCode(err, mcperr.PopupBlocked):
			return err
		}
		return newErr(mcperr.AuthRequired, "courier could not show the login", redactURLError(err))
	}
	var cb *Callback
	select {
	case cb = <-w.ch:
	case <-fctx.Done():
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return timedOut()
	}
	if h.cfg.PersistFlows {
		// Single use before the exchange: a replay through CompletePending
		// must not find it.
		if err := h.cfg.Store.DeletePending(ctx, p.State); err != nil {
			return newErr(mcperr.Storage, "deleting the pending flow", err)
		}
	}
	ectx, ecancel := context.WithTimeout(ctx, h.cfg.AuthTimeout)
	defer ecancel()
	g, err := finishFlow(ectx, flowEnv{store: h.cfg.Store, hc: h.cfg.HTTPClient, clock: h.cfg.Clock}, p, cl, cb)
	if err != nil {
		return h.phaseErr(ctx, ectx, err, "token exchange")
	}
	h.mu.Lock()
	h.grant, h.loaded = g, true
	h.fresh, h.freshAt = g.AccessToken, h.now()
	h.mu.Unlock()
	return nil
}

// open calls Courier.Open, returning when it does or when ctx ends (a
// courier that ignores ctx must not hang the flow and its waiters).
func (h *Handler) open(ctx context.Context, authURL string) error {
	done := make(chan error, 1)
	go func() { done <- h.cfg.Courier.Open(ctx, authURL) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// prepare runs discovery and registration and builds the authorization
// request: the flow (verifier, state, everything the exchange needs), the
// client and the authorization URL.
func (h *Handler) prepare(ctx context.Context, ch challenge, stepUp bool) (*PendingFlow, clientCreds, string, error) {
	d, err := h.discover(ctx, ch.prmURL)
	if err != nil {
		return nil, clientCreds{}, "", err
	}
	cl, err := h.resolveClient(ctx, d.AS)
	if err != nil {
		return nil, clientCreds{}, "", err
	}
	scopes := h.cfg.Scopes
	if len(scopes) == 0 {
		scopes = ch.scopes
	}
	if len(scopes) == 0 {
		scopes = d.ScopesSupported
	}
	scopes = slices.Clone(scopes)
	if h.cfg.RequestRefreshToken && slices.Contains(d.AS.ScopesSupported, "offline_access") && !slices.Contains(scopes, "offline_access") {
		scopes = append(scopes, "offline_access")
	}
	if stepUp {
		h.mu.Lock()
		if h.grant != nil {
			scopes = union(h.grant.Scopes, scopes)
		}
		h.mu.Unlock()
	}
	key := strings.Join(sortedCopy(scopes), " ")
	h.mu.Lock()
	if stepUp && h.attempts[key] >= maxStepUps {
		h.mu.Unlock()
		return nil, clientCreds{}, "", newErr(mcperr.InsufficientScope, fmt.Sprintf("server still requires more scope after %d authorizations for %q", maxStepUps, sanitize(key)), nil)
	}
	if stepUp && h.stepUps >= maxStepUps {
		// A server that asks for another new scope on every 403 would
		// otherwise get a sign-in for each.
		h.mu.Unlock()
		return nil, clientCreds{}, "", newErr(mcperr.InsufficientScope, fmt.Sprintf("server asked for more scope %d times in a row (now %q); no more step-up sign-ins until the next authorize()", maxStepUps, sanitize(key)), nil)
	}
	h.attempts[key]++
	if stepUp {
		h.stepUps++
	}
	h.mu.Unlock()

	p := &PendingFlow{
		State:              rand.Text(), // 26 base32 characters: 130 random bits
		Verifier:           oauth2.GenerateVerifier(),
		RedirectURI:        h.cfg.RedirectURL,
		Resource:           h.resource,
		Issuer:             d.AS.Issuer,
		ClientID:           cl.id,
		Scopes:             scopes,
		Expiry:             h.now().Add(h.cfg.AuthTimeout),
		ResourceIndicator:  d.Resource,
		TokenEndpoint:      d.AS.TokenEndpoint,
		RevocationEndpoint: d.AS.RevocationEndpoint,
		AuthMethod:         cl.method,
		RequireIss:         d.AS.AuthorizationResponseIssParameterSupported,
	}
	oc := &oauth2.Config{
		ClientID:    cl.id,
		Endpoint:    oauth2.Endpoint{AuthURL: d.AS.AuthorizationEndpoint, TokenURL: d.AS.TokenEndpoint},
		RedirectURL: p.RedirectURI,
		Scopes:      scopes,
	}
	authURL := oc.AuthCodeURL(p.State, oauth2.S256ChallengeOption(p.Verifier), oauth2.SetAuthURLParam("resource", p.resourceIndicator()))
	return p, cl, authURL, nil
}

// checkIss checks the RFC 9207 iss parameter: required and equal to the
// issuer when the AS advertises it (required); when present otherwise, it
// must equal.
func checkIss(iss, issuer string, required bool) error {
	mismatch := func(msg string) error { return &Error{Code: mcperr.StateMismatch, Msg: "oauth: " + msg} }
	if iss == "" {
		if required {
			return mismatch("authorization response lacks the iss parameter the server advertises (RFC 9207)")
		}
		return nil
	}
	if !issuersEqual(iss, issuer) {
		return mismatch(fmt.Sprintf("authorization response issuer %q is not %q (RFC 9207)", sanitize(iss), sanitize(issuer)))
	}
	return nil
}

func union(a, b []string) []string {
	out := slices.Clone(a)
	for _, s := range b {
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}

func sortedCopy(s []string) []string {
	c := slices.Clone(s)
	sort.Strings(c)
	return c
}

// resolveClient picks the client (LESSONS 4): client ID metadata document,
// pre-registered client, cached or new dynamic registration.
func (h *Handler) resolveClient(ctx context.Context, asm *oauthex.AuthServerMeta) (clientCreds, error) {
	if h.cfg.ClientMetadataURL != "" && asm.ClientIDMetadataDocumentSupported {
		return clientCreds{id: h.cfg.ClientMetadataURL, method: "none"}, nil
	}
	if h.cfg.ClientID != "" {
		if h.cfg.ClientSecret == "" {
			return clientCreds{id: h.cfg.ClientID, method: "none"}, nil
		}
		method := "client_secret_basic" // RFC 8414 default
		sup := asm.TokenEndpointAuthMethodsSupported
		if len(sup) > 0 && !slices.Contains(sup, "client_secret_basic") && slices.Contains(sup, "client_secret_post") {
			method = "client_secret_post"
		}
		return clientCreds{id: h.cfg.ClientID, secret: h.cfg.ClientSecret, method: method}, nil
	}
	if asm.RegistrationEndpoint == "" {
		var has []string
		if asm.ClientIDMetadataDocumentSupported {
			has = append(has, "client ID metadata documents (configure ClientMetadataURL)")
		}
		has = append(has, "pre-registered clients (configure ClientID)")
		return clientCreds{}, newErr(mcperr.RegistrationFailed, fmt.Sprintf(
			"no client registration method available: %q offers no dynamic client registration; it supports %s", sanitize(asm.Issuer), strings.Join(has, " and ")), nil)
	}
	reg, err := h.cfg.Store.GetClient(ctx, asm.Issuer, h.cfg.RedirectURL)
	if err != nil {
		return clientCreds{}, newErr(mcperr.Storage, "reading client registration", err)
	}
	// A public client has no secret to expire: whatever
	// client_secret_expires_at said, reuse it (registering again on every
	// login leaks clients at the server, LESSONS 4).
	if reg != nil && (reg.ClientSecret == "" || reg.SecretExpiry.IsZero() || h.now().Before(reg.SecretExpiry)) {
		return clientCreds{id: reg.ClientID, secret: reg.ClientSecret, method: reg.AuthMethod}, nil
	}
	want := "none"
	if sup := asm.TokenEndpointAuthMethodsSupported; len(sup) > 0 && !slices.Contains(sup, "none") {
		if slices.Contains(sup, "client_secret_basic") {
			want = "client_secret_basic"
		} else if slices.Contains(sup, "client_secret_post") {
			want = "client_secret_post"
		}
	}
	grants := []string{"authorization_code"}
	if h.cfg.RequestRefreshToken || slices.Contains(asm.GrantTypesSupported, "refresh_token") {
		grants = append(grants, "refresh_token")
	}
	meta := &oauthex.ClientRegistrationMetadata{
		RedirectURIs:            []string{h.cfg.RedirectURL},
		TokenEndpointAuthMethod: want,
		GrantTypes:              grants,
		ResponseTypes:           []string{"code"},
		ClientName:              h.cfg.ClientName,
	}
	if u, err := url.Parse(h.cfg.RedirectURL); err == nil && (u.Scheme == "http" || u.Scheme == "https") {
		if isLoopback(u.Hostname()) {
			meta.ApplicationType = "native"
		} else {
			meta.ApplicationType = "web"
		}
	}
	resp, err := oauthex.RegisterClient(ctx, asm.RegistrationEndpoint, meta, h.cfg.HTTPClient)
	if err != nil {
		if ctx.Err() != nil {
			return clientCreds{}, ctx.Err()
		}
		var re *oauthex.ClientRegistrationError
		if errors.As(err, &re) {
			return clientCreds{}, &Error{Code: mcperr.RegistrationFailed, Msg: "oauth: dynamic client registration refused",
				Err: &ServerError{Endpoint: "registration", Status: 400, ErrorCode: sanitize(re.ErrorCode), Description: sanitize(re.ErrorDescription), code: mcperr.RegistrationFailed}}
		}
		// The cause may quote the response body (which can hold a
		// client secret): do not include it.
		return clientCreds{}, newErr(mcperr.RegistrationFailed, "dynamic client registration failed at "+sanitize(asm.RegistrationEndpoint), nil)
	}
	method := resp.TokenEndpointAuthMethod
	if method == "" {
		method = want
		if resp.ClientSecret != "" && method == "none" {
			method = "client_secret_basic" // RFC 7591 §2: the default
		}
	}
	secret := resp.ClientSecret
	switch method {
	case "none":
		// A public client has no use for a secret: a server that hands
		// one out anyway does not get it stored or sent back.
		secret = ""
	case "client_secret_basic", "client_secret_post":
		if secret == "" {
			return clientCreds{}, newErr(mcperr.RegistrationFailed, fmt.Sprintf("dynamic client registration at %s registered a confidential client (%s) without a client_secret", sanitize(asm.RegistrationEndpoint), method), nil)
		}
	default:
		return clientCreds{}, newErr(mcperr.RegistrationFailed, fmt.Sprintf("dynamic client registration at %s answered with token_endpoint_auth_method %q, which this client does not support", sanitize(asm.RegistrationEndpoint), sanitize(method)), nil)
	}
	if len(resp.ClientID) > 2048 || !isVSChars(resp.ClientID) {
		return clientCreds{}, newErr(mcperr.RegistrationFailed, "dynamic client registration answered with a client_id that is not printable ASCII of at most 2048 bytes", nil)
	}
	if len(secret) > maxTokenLen || !isVSChars(secret) {
		return clientCreds{}, newErr(mcperr.RegistrationFailed, "dynamic client registration answered with a client_secret that is not printable ASCII of a sane length", nil)
	}
	reg = &ClientRegistration{Issuer: asm.Issuer, RedirectURI: h.cfg.RedirectURL, ClientID: resp.ClientID,
		ClientSecret: secret, AuthMethod: method, SecretExpiry: resp.ClientSecretExpiresAt}
	if err := h.cfg.Store.PutClient(ctx, reg); err != nil {
		return clientCreds{}, newErr(mcperr.Storage, "storing client registration", err)
	}
	return clientCreds{id: reg.ClientID, secret: reg.ClientSecret, method: reg.AuthMethod}, nil
}
