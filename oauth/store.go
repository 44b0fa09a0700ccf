package oauth

import (
	"context"
	"slices"
	"strings"
	"sync"
	"time"
)

// Grant is the token set of one protected resource (MCP server), stored
// whole by [Store.PutGrant]. It holds secrets: never log or display it.
type Grant struct {
	Resource     string    // canonical MCP server URI (the key)
	Issuer       string    // authorization server issuer
	AccessToken  string    // secret
	TokenType    string    // "Bearer", or "DPoP" for a DPoP-bound token (never sent as Bearer)
	RefreshToken string    // secret; empty when none was issued
	Expiry       time.Time // zero: unknown (used until the server answers 401)
	IssuedAt     time.Time // when the access token was obtained; zero: unknown (grants stored before this field)
	Scopes       []string  // granted, or requested when the server did not say

	// What a refresh or revocation needs, so neither requires discovery.
	TokenEndpoint      string
	RevocationEndpoint string // empty when the server has none
	ClientID           string
	ClientSecret       string // secret; empty for public clients
	AuthMethod         string // "none", "client_secret_basic" or "client_secret_post"
	RedirectURI        string

	// ResourceIndicator is the RFC 8707 resource sent on the authorization
	// request, and so on every token and refresh request of this grant. It
	// can differ from Resource (e.g. protected resource metadata at the
	// origin root names the origin). Empty: Resource (grants stored before
	// this field existed).
	ResourceIndicator string

	// DPoPKeyID names the [DPoPKey] (in [Config.DPoPKeys]) whose proofs
	// went with this grant's token requests (RFC 9449): its refreshes are
	// signed by it, and a TokenType "DPoP" access token is presented with
	// its proofs. Empty: no DPoP (grants stored before DPoP existed).
	DPoPKeyID string
}

// dpopBound reports whether g's access token is DPoP-bound: presented
// with the DPoP scheme and a proof, never as Bearer.
func (g *Grant) dpopBound() bool { return strings.EqualFold(g.TokenType, "DPoP") }

// resourceIndicator returns the RFC 8707 resource for g's token requests.
func (g *Grant) resourceIndicator() string {
	if g.ResourceIndicator != "" {
		return g.ResourceIndicator
	}
	return g.Resource
}

// ClientRegistration is a client registered at an authorization server for
// a redirect URI (dynamic client registration, RFC 7591), cached so a login
// does not register again.
type ClientRegistration struct {
	Issuer       string
	RedirectURI  string
	ClientID     string
	ClientSecret string    // secret; empty for public clients
	AuthMethod   string    // token_endpoint_auth_method
	SecretExpiry time.Time // zero: never
	// Scopes are the scopes the registration asked for (RFC 7591 §2
	// "scope"), or the ones the sign-in needed when the server took none:
	// a sign-in that needs a scope outside them registers again, since an
	// authorization server may hold a client to the scopes it registered.
	// A record without them (from a build before they were kept) is
	// replaced by the first sign-in that asks for a scope.
	Scopes []string
}

// CachedMetadata is a discovery result cached until Expiry.
type CachedMetadata struct {
	Key    string    // "resource:" + resource URI
	Data   []byte    // JSON, opaque to the Store
	Expiry time.Time // after it the entry is ignored
}

// PendingFlow is an authorization request waiting for its callback, for
// the full-page redirect mode where the page that started the flow is gone
// when the callback arrives ([Config.PersistFlows], [CompletePending]). It
// holds everything the token exchange needs without discovery. Its only
// secret is the verifier: a client secret stays in the Store's
// [ClientRegistration] (looked up by Issuer and RedirectURI) or with the
// embedder ([PendingConfig.ClientSecret]).
type PendingFlow struct {
	State       string // the key; at least 128 random bits
	Verifier    string // PKCE code verifier, secret
	RedirectURI string // redirect_uri of the authorization request
	Resource    string // the handler's canonical MCP server URI: the grant's key
	Issuer      string // authorization server issuer (RFC 9207 iss check)
	ClientID    string
	Scopes      []string  // requested
	Expiry      time.Time // after it the callback is rejected

	// ResourceIndicator is the RFC 8707 resource sent on the authorization
	// request; the token request repeats it. Empty: Resource.
	ResourceIndicator  string
	TokenEndpoint      string
	RevocationEndpoint string // for the grant; empty when the AS has none
	// AuthMethod is the token endpoint auth method: "none",
	// "client_secret_basic" or "client_secret_post".
	AuthMethod string
	// RequireIss: the AS advertises
	// authorization_response_iss_parameter_supported (RFC 9207), so a
	// callback without iss is rejected.
	RequireIss bool
	// DPoPKeyID names the [DPoPKey] the token request is signed with
	// (its thumbprint went out as dpop_jkt); empty: no DPoP.
	DPoPKeyID string
	// DPoPRequired: DPoP was required ([DPoPOn]), so a Bearer token in
	// the answer fails the flow.
	DPoPRequired bool
}

func (p *PendingFlow) resourceIndicator() string {
	if p.ResourceIndicator != "" {
		return p.ResourceIndicator
	}
	return p.Resource
}

// GrantStore keeps grants, by resource. Get returns (nil, nil) when there
// is none; Put replaces the grant atomically (stored whole or not at all)
// and returns a failure, never swallows it.
type GrantStore interface {
	GetGrant(ctx context.Context, resource string) (*Grant, error)
	PutGrant(ctx context.Context, g *Grant) error
	DeleteGrant(ctx context.Context, resource string) error
}

// RegistrationStore keeps dynamic client registrations, by issuer and
// redirect URI, with the same contract as [GrantStore].
type RegistrationStore interface {
	GetClient(ctx context.Context, issuer, redirectURI string) (*ClientRegistration, error)
	PutClient(ctx context.Context, c *ClientRegistration) error
	DeleteClient(ctx context.Context, issuer, redirectURI string) error
}

// MetadataStore caches discovery results, by key, with the same contract
// as [GrantStore].
type MetadataStore interface {
	GetMetadata(ctx context.Context, key string) (*CachedMetadata, error)
	PutMetadata(ctx context.Context, m *CachedMetadata) error
	DeleteMetadata(ctx context.Context, key string) error
}

// PendingStore keeps flows waiting for their callback in the full-page
// redirect mode, by state, with the same contract as [GrantStore].
type PendingStore interface {
	GetPending(ctx context.Context, state string) (*PendingFlow, error)
	PutPending(ctx context.Context, p *PendingFlow) error
	DeletePending(ctx context.Context, state string) error
}

// Store persists what authorization needs, in its four roles.
// Implementations must be safe for concurrent use; values passed in and
// returned are not retained or shared by the caller (implementations
// should copy).
type Store interface {
	GrantStore
	RegistrationStore
	MetadataStore
	PendingStore
}

// MemoryStore is a [Store] in memory, for tests and as the browser's
// fallback when persistent storage is unavailable. The zero value is ready.
type MemoryStore struct {
	mu       sync.Mutex
	grants   map[string]Grant
	clients  map[[2]string]ClientRegistration
	metadata map[string]CachedMetadata
	pending  map[string]PendingFlow
}

var _ Store = (*MemoryStore)(nil)

// NewMemoryStore returns an empty [MemoryStore].
func NewMemoryStore() *MemoryStore { return &MemoryStore{} }

func (s *MemoryStore) init() {
	if s.grants == nil {
		s.grants = map[string]Grant{}
		s.clients = map[[2]string]ClientRegistration{}
		s.metadata = map[string]CachedMetadata{}
		s.pending = map[string]PendingFlow{}
	}
}

// Clear deletes everything the store holds.
func (s *MemoryStore) Clear() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.grants, s.clients, s.metadata, s.pending = nil, nil, nil, nil
}

// GetGrant implements [Store].
func (s *MemoryStore) GetGrant(_ context.Context, resource string) (*Grant, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.init()
	g, ok := s.grants[resource]
	if !ok {
		return nil, nil
	}
	g.Scopes = slices.Clone(g.Scopes)
	return &g, nil
}

// PutGrant implements [Store].
func (s *MemoryStore) PutGrant(_ context.Context, g *Grant) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.init()
	c := *g
	c.Scopes = slices.Clone(g.Scopes)
	s.grants[g.Resource] = c
	return nil
}

// DeleteGrant implements [Store].
func (s *MemoryStore) DeleteGrant(_ context.Context, resource string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.init()
	delete(s.grants, resource)
	return nil
}

// GetClient implements [Store].
func (s *MemoryStore) GetClient(_ context.Context, issuer, redirectURI string) (*ClientRegistration, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.init()
	c, ok := s.clients[[2]string{issuer, redirectURI}]
	if !ok {
		return nil, nil
	}
	return &c, nil
}

// PutClient implements [Store].
func (s *MemoryStore) PutClient(_ context.Context, c *ClientRegistration) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.init()
	s.clients[[2]string{c.Issuer, c.RedirectURI}] = *c
	return nil
}

// DeleteClient implements [Store].
func (s *MemoryStore) DeleteClient(_ context.Context, issuer, redirectURI string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.init()
	delete(s.clients, [2]string{issuer, redirectURI})
	return nil
}

// GetMetadata implements [Store].
func (s *MemoryStore) GetMetadata(_ context.Context, key string) (*CachedMetadata, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.init()
	m, ok := s.metadata[key]
	if !ok {
		return nil, nil
	}
	m.Data = slices.Clone(m.Data)
	return &m, nil
}

// PutMetadata implements [Store].
func (s *MemoryStore) PutMetadata(_ context.Context, m *CachedMetadata) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.init()
	c := *m
	c.Data = slices.Clone(m.Data)
	s.metadata[m.Key] = c
	return nil
}

// DeleteMetadata implements [Store].
func (s *MemoryStore) DeleteMetadata(_ context.Context, key string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.init()
	delete(s.metadata, key)
	return nil
}

// GetPending implements [Store].
func (s *MemoryStore) GetPending(_ context.Context, state string) (*PendingFlow, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.init()
	p, ok := s.pending[state]
	if !ok {
		return nil, nil
	}
	p.Scopes = slices.Clone(p.Scopes)
	return &p, nil
}

// PutPending implements [Store].
func (s *MemoryStore) PutPending(_ context.Context, p *PendingFlow) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.init()
	c := *p
	c.Scopes = slices.Clone(p.Scopes)
	s.pending[p.State] = c
	return nil
}

// DeletePending implements [Store].
func (s *MemoryStore) DeletePending(_ context.Context, state string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.init()
	delete(s.pending, state)
	return nil
}
