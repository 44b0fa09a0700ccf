package oauth

import (
	"context"
	"crypto/subtle"
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"golang.org/x/oauth2"

	"github.com/mcpwasm/mcpwasm/mcperr"
)

// PendingConfig is what [CompletePending] needs: the Store the flow was
// persisted in and an HTTP client for the token request. No discovery,
// registration or Courier is involved.
type PendingConfig struct {
	// Store holds the [PendingFlow] (see [Config.PersistFlows]) and
	// receives the grant. Required.
	Store Store
	// HTTPClient performs the token request. Required; under GOOS=js its
	// transport must not set DialContext, as for [Config.HTTPClient].
	HTTPClient *http.Client
	// Clock tells the time (flow and token expiry). Default: the real clock.
	Clock Clock
	// Locker, when set, serialises the take of pending flows (lock name
	// "mcpwasm-oauth-pending"), so two tabs handling the same callback URL
	// cannot both exchange its code. With Web Locks it spans tabs. Stores
	// implementing [PendingTaker] are atomic without it.
	Locker Locker
	// ClientSecret returns the secret of a pre-registered confidential
	// client (Config.ClientID and Config.ClientSecret), which the Store does
	// not hold; nil or "" when there is none. A dynamically registered
	// client's secret is read from the Store's [ClientRegistration].
	ClientSecret func(issuer, clientID string) string
	// OnEvent, when set, receives the outcome as an [Event] for the flow's
	// resource (authorized, declined or failed). Synchronous; must not block.
	OnEvent func(Event)
	// DPoPKeys holds the key a DPoP flow's token request is signed with:
	// the same store as the handlers' [Config.DPoPKeys]. Default: the
	// process's keys in memory (the default of Config.DPoPKeys).
	DPoPKeys DPoPKeys
}

// PendingTaker is implemented by a [Store] that can read and delete a
// pending flow in one atomic step. [CompletePending] prefers it.
type PendingTaker interface {
	// TakePending returns the pending flow of state and deletes it, or
	// (nil, nil) when there is none.
	TakePending(ctx context.Context, state string) (*PendingFlow, error)
}

// TakePending implements [PendingTaker].
func (s *MemoryStore) TakePending(ctx context.Context, state string) (*PendingFlow, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.init()
	p, ok := s.pending[state]
	if !ok {
		return nil, nil
	}
	delete(s.pending, state)
	return &p, nil
}

// completeTimeout bounds CompletePending (store and token request).
const completeTimeout = time.Minute

// CompletePending finishes a flow persisted by a handler with
// [Config.PersistFlows] whose page is gone (full-page redirect mode): on
// return, mcp.handleCallback(location.href) calls it (through
// [Registry.HandleCallback], which first offers the URL to a live flow).
//
// It parses callbackURL ([ParseCallback]), takes the [PendingFlow] of its
// state from the Store (looked up by key, then compared in constant time)
// and deletes it before anything else (single use: a replayed URL fails
// with [ErrStateMismatch]). An unknown or expired state is
// [ErrStateMismatch]. An error= callback ends as [ErrDeclined]
// (access_denied) or [ErrTokenFailed], with the server's sanitised
// description in a [*ServerError]. Otherwise it checks iss (RFC 9207)
// against the stored issuer, exchanges the code at the stored token
// endpoint with the same redirect_uri and resource as the authorization
// request and the client's auth method, validates the token response as a
// live flow does, and stores the grant: a [Handler] for the resource picks
// it up without discovery, registration or a Courier (see
// [Handler.ReloadGrant]).
//
// resource is the flow's MCP server URI (the Handler's [Handler.Resource])
// whenever the pending flow was found, also on error, so the caller can
// tell that server's client (e.g. [Handler.Decline] after a decline); it is
// "" when the state matched no flow.
func CompletePending(ctx context.Context, cfg PendingConfig, callbackURL string) (resource string, err error) {
	if cfg.Store == nil || cfg.HTTPClient == nil {
		return "", newErr(mcperr.InvalidArgument, "PendingConfig.Store and PendingConfig.HTTPClient are required", nil)
	}
	if cfg.Clock == nil {
		cfg.Clock = realClock{}
	}
	cb, err := ParseCallback(callbackURL)
	if err != nil {
		return "", err
	}
	ctx, cancel := context.WithTimeout(ctx, completeTimeout)
	defer cancel()
	p, err := takePending(ctx, cfg, cb.State)
	if err != nil {
		return "", err
	}
	if p == nil {
		return "", &Error{Code: mcperr.StateMismatch, Msg: "oauth: no pending authorization flow has this state (unknown, expired or already used)"}
	}
	emit := func(s State, err error) {
		if cfg.OnEvent != nil {
			cfg.OnEvent(Event{Kind: EventState, Resource: p.Resource, State: s, Err: err})
		}
	}
	if p.Expiry.IsZero() || !wallNow(cfg.Clock).Before(p.Expiry) {
		err := &Error{Code: mcperr.StateMismatch, Msg: "oauth: the pending authorization flow has expired"}
		emit(StateFailed, err)
		return p.Resource, err
	}
	cl, err := pendingCreds(ctx, cfg, p)
	if err == nil {
		_, err = finishFlow(ctx, flowEnv{store: cfg.Store, hc: cfg.HTTPClient, clock: cfg.Clock, keys: cfg.DPoPKeys}, p, cl, cb)
	}
	switch {
	case err == nil:
		emit(StateAuthorized, nil)
	case isCode(err, mcperr.Declined):
		emit(StateDeclined, err)
	default:
		emit(StateFailed, err)
	}
	return p.Resource, err
}

// takePending reads and deletes the pending flow of state. A store hit
// whose state is not equal (constant time) is treated as a miss.
func takePending(ctx context.Context, cfg PendingConfig, state string) (*PendingFlow, error) {
	var p *PendingFlow
	var err error
	if t, ok := cfg.Store.(PendingTaker); ok {
		p, err = t.TakePending(ctx, state)
	} else {
		if cfg.Locker != nil {
			unlock, lerr := cfg.Locker.Lock(ctx, "mcpwasm-oauth-pending")
			if lerr != nil {
				return nil, lerr
			}
			defer unlock()
		}
		p, err = cfg.Store.GetPending(ctx, state)
		if err == nil && p != nil {
			if derr := cfg.Store.DeletePending(ctx, state); derr != nil {
				// Not deleted, not used: the code must not be exchanged
				// while a replay could exchange it again.
				return nil, newErr(mcperr.Storage, "deleting the pending flow", derr)
			}
		}
	}
	if err != nil {
		return nil, newErr(mcperr.Storage, "reading the pending flow", err)
	}
	if p == nil || subtle.ConstantTimeCompare([]byte(p.State), []byte(state)) != 1 {
		return nil, nil
	}
	return p, nil
}

// pendingCreds finds the client of p: public; the Store's registration for
// p's issuer and redirect URI when its client ID matches; else the
// embedder's pre-registered secret.
func pendingCreds(ctx context.Context, cfg PendingConfig, p *PendingFlow) (clientCreds, error) {
	cl := clientCreds{id: p.ClientID, method: p.AuthMethod}
	if p.AuthMethod == "" || p.AuthMethod == "none" {
		cl.method = "none"
		return cl, nil
	}
	reg, err := cfg.Store.GetClient(ctx, p.Issuer, p.RedirectURI)
	if err != nil {
		return clientCreds{}, newErr(mcperr.Storage, "reading client registration", err)
	}
	if reg != nil && reg.ClientID == p.ClientID && reg.ClientSecret != "" {
		cl.secret = reg.ClientSecret
		return cl, nil
	}
	if cfg.ClientSecret != nil {
		cl.secret = cfg.ClientSecret(p.Issuer, p.ClientID)
	}
	if cl.secret == "" {
		return clientCreds{}, newErr(mcperr.RegistrationFailed, "no client secret for client "+strconv.Quote(sanitize(p.ClientID))+
			" (auth method "+p.AuthMethod+"): not in the Store; set PendingConfig.ClientSecret for a pre-registered client", nil)
	}
	return cl, nil
}

// flowEnv is what finishing a flow needs besides the flow itself.
type flowEnv struct {
	store Store
	hc    *http.Client
	clock Clock
	keys  DPoPKeys // nil: the default keys
}

// finishFlow completes the authorization response cb of flow p, for a
// live flow ([Handler]) and for [CompletePending] alike: error callbacks
// become declined/failed errors, iss is checked (RFC 9207), the code is
// exchanged with the flow's redirect URI, resource and verifier, the
// token response is validated, and the grant is stored whole.
func finishFlow(ctx context.Context, env flowEnv, p *PendingFlow, cl clientCreds, cb *Callback) (*Grant, error) {
	if cb.Error != "" {
		forgetRejectedClient(ctx, env, p, cl, cb.Error)
		return nil, callbackError(cb)
	}
	if err := checkIss(cb.Iss, p.Issuer, p.RequireIss); err != nil {
		return nil, err
	}
	form := url.Values{
		"grant_type":    {"authorization_code"},
		"code":          {cb.Code},
		"redirect_uri":  {p.RedirectURI},
		"code_verifier": {p.Verifier},
		"resource":      {p.resourceIndicator()},
	}
	var key DPoPKey
	if p.DPoPKeyID != "" {
		k, err := storedDPoPKey(ctx, env.keys, p.DPoPKeyID)
		if err != nil {
			return nil, err
		}
		key = k
	}
	tr, err := postToken(ctx, env.hc, env.clock, p.TokenEndpoint, cl, form, key)
	if err != nil {
		var re *oauth2.RetrieveError
		if errors.As(err, &re) {
			forgetRejectedClient(ctx, env, p, cl, re.ErrorCode)
		}
		return nil, err
	}
	tt, err := grantTokenType(tr.TokenType, key != nil, p.DPoPRequired)
	if err != nil {
		return nil, err
	}
	g := &Grant{
		Resource:           p.Resource,
		Issuer:             p.Issuer,
		AccessToken:        tr.AccessToken,
		TokenType:          tt,
		DPoPKeyID:          p.DPoPKeyID,
		RefreshToken:       tr.RefreshToken,
		Expiry:             tr.expiry,
		IssuedAt:           tr.issued,
		Scopes:             p.Scopes,
		TokenEndpoint:      p.TokenEndpoint,
		RevocationEndpoint: p.RevocationEndpoint,
		ClientID:           cl.id,
		ClientSecret:       cl.secret,
		AuthMethod:         cl.method,
		RedirectURI:        p.RedirectURI,
		ResourceIndicator:  p.resourceIndicator(),
	}
	if tr.Scope != "" {
		g.Scopes = strings.Fields(tr.Scope)
	}
	if err := env.store.PutGrant(ctx, g); err != nil {
		return nil, newErr(mcperr.Storage, "storing grant", err)
	}
	return g, nil
}

// forgetRejectedClient drops the cached dynamic registration of cl when the
// server says it does not know the client any more (invalid_client,
// unauthorized_client): the next sign-in registers again instead of failing
// the same way forever. Pre-registered and metadata-document clients are
// not in the cache and are left alone. The registration's DPoP key goes
// with it.
func forgetRejectedClient(ctx context.Context, env flowEnv, p *PendingFlow, cl clientCreds, code string) {
	if code != "invalid_client" && code != "unauthorized_client" {
		return
	}
	reg, err := env.store.GetClient(ctx, p.Issuer, p.RedirectURI)
	if err == nil && reg != nil && reg.ClientID == cl.id {
		_ = env.store.DeleteClient(ctx, p.Issuer, p.RedirectURI)
		if p.DPoPKeyID != "" {
			_ = keysOr(env.keys).DeleteKey(ctx, p.DPoPKeyID)
		}
	}
}

// callbackError turns an error= authorization response into an error:
// access_denied is [ErrDeclined], anything else [ErrTokenFailed]; the
// server's sanitised description rides along in a [*ServerError].
func callbackError(cb *Callback) error {
	se := &ServerError{Endpoint: "authorization", ErrorCode: cb.Error, Description: cb.ErrorDescription, code: mcperr.TokenFailed}
	if cb.Error == "access_denied" {
		se.code = mcperr.Declined
		return &Error{Code: mcperr.Declined, Msg: "oauth: authorization declined", Err: se}
	}
	return &Error{Code: mcperr.TokenFailed, Msg: "oauth: authorization failed", Err: se}
}
