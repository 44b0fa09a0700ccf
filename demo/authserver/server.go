package authserver

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/mcpwasm/mcpwasm/demo/cors"
	"github.com/mcpwasm/mcpwasm/demo/dpopcheck"
)

// Endpoint paths, relative to the issuer.
const (
	MetadataPath      = "/.well-known/oauth-authorization-server"
	OpenIDConfigPath  = "/.well-known/openid-configuration"
	AuthorizePath     = "/authorize"
	ConsentPath       = "/consent"
	TokenPath         = "/token"
	RegisterPath      = "/register"
	RevokePath        = "/revoke"
	StylesheetPath    = "/static/consent.css"
	maxFormBody       = 64 << 10
	maxJSONBody       = 64 << 10
	sweepEvery        = time.Minute
	usedCodeRetention = 10 * time.Minute
	maxEvents         = 10000 // Events keeps the newest; Count counts all
)

// Server is the demo authorization server. It keeps everything in memory.
// All its methods are safe for concurrent use.
type Server struct {
	cfg       Config
	issuer    string // normalized, no trailing slash
	resources map[string]string
	scopes    []string
	defScopes []string
	log       *slog.Logger
	now       func() time.Time
	handler   http.Handler
	httpc     *http.Client
	dpop      *dpopcheck.Checker // nil without Config.DPoP

	mu        sync.Mutex
	clients   map[string]*client
	consents  map[string]*pending // consent ticket hash -> request
	codes     map[string]*code    // code hash -> code
	access    map[string]*token   // access token hash -> token
	refresh   map[string]*token   // refresh token hash -> token
	grants    map[string]*grant
	events    []Event
	counts    map[string]int
	lastSweep time.Time
	idjagJTIs jtiSeen // the jti of every ID-JAG taken (idjag.go)
}

type client struct {
	id           string
	secretHash   []byte // sha256 of the secret, nil for public clients
	authMethod   string
	redirectURIs []string
	name         string
	grantTypes   []string
	issuedAt     time.Time
	metadoc      bool      // from a client ID metadata document
	expires      time.Time // metadoc cache expiry
}

// authzRequest is a validated authorization request.
type authzRequest struct {
	clientID    string
	clientName  string
	redirectURI string
	state       string
	challenge   string
	resource    string
	scopes      []string
}

type pending struct {
	req     authzRequest
	expires time.Time
}

type code struct {
	req     authzRequest
	expires time.Time
	used    bool
	grantID string // set once redeemed
}

// grant is what one approved authorization produced: a family of access and
// refresh tokens that is revoked as a whole.
type grant struct {
	id       string
	clientID string
	resource string
	scopes   []string
	revoked  bool
	tokens   []string // hashes of every token of the grant, access and refresh
	rotation int      // refreshes so far: the refresh token of rotation n presents n
	jkt      string   // thumbprint of the DPoP key the tokens are bound to; "" for Bearer
}

type token struct {
	grantID string
	expires time.Time
	rotated bool // a refresh token that was already used
}

// New returns a server for cfg.
func New(cfg Config) (*Server, error) {
	iss, err := url.Parse(cfg.Issuer)
	if err != nil || (iss.Scheme != "http" && iss.Scheme != "https") || iss.Host == "" ||
		(iss.Path != "" && iss.Path != "/") || iss.RawQuery != "" || iss.Fragment != "" || iss.User != nil {
		return nil, fmt.Errorf("authserver: Issuer %q must be an http(s) origin URL without path, query or fragment", cfg.Issuer)
	}
	if iss.Scheme == "http" && !isLoopback(iss.Hostname()) {
		return nil, fmt.Errorf("authserver: Issuer %q must be https or loopback http", cfg.Issuer)
	}
	if len(cfg.Resources) == 0 {
		return nil, errors.New("authserver: Config.Resources is empty")
	}
	s := &Server{
		cfg:       cfg,
		issuer:    strings.ToLower(iss.Scheme) + "://" + strings.ToLower(iss.Host),
		resources: make(map[string]string),
		log:       cfg.Logger,
		now:       cfg.Now,
		httpc:     cfg.HTTPClient,
		dpop:      newDPoP(cfg),
		clients:   make(map[string]*client),
		consents:  make(map[string]*pending),
		codes:     make(map[string]*code),
		access:    make(map[string]*token),
		refresh:   make(map[string]*token),
		grants:    make(map[string]*grant),
		counts:    make(map[string]int),
	}
	for _, r := range cfg.Resources {
		n, ok := normalizeResource(r)
		if !ok {
			return nil, fmt.Errorf("authserver: resource %q is not an absolute http(s) URI without fragment", r)
		}
		s.resources[n] = r
	}
	s.scopes = slices.Clone(cfg.Scopes)
	if len(s.scopes) == 0 {
		s.scopes = []string{ScopeTools, ScopeAdmin}
	}
	for _, sc := range s.scopes {
		if !validScopeToken(sc) {
			return nil, fmt.Errorf("authserver: invalid scope %q", sc)
		}
	}
	s.defScopes = slices.Clone(cfg.DefaultScopes)
	if len(s.defScopes) == 0 && slices.Contains(s.scopes, ScopeTools) {
		s.defScopes = []string{ScopeTools}
	}
	for _, sc := range s.defScopes {
		if !slices.Contains(s.scopes, sc) {
			return nil, fmt.Errorf("authserver: default scope %q is not in Scopes", sc)
		}
	}
	if s.cfg.AccessTokenTTL <= 0 {
		s.cfg.AccessTokenTTL = DefaultAccessTokenTTL
	}
	if s.cfg.RefreshTokenTTL <= 0 {
		s.cfg.RefreshTokenTTL = DefaultRefreshTokenTTL
	}
	if s.cfg.CodeTTL <= 0 {
		s.cfg.CodeTTL = DefaultCodeTTL
	}
	if s.cfg.ConsentTTL <= 0 {
		s.cfg.ConsentTTL = DefaultConsentTTL
	}
	if s.cfg.Subject == "" {
		s.cfg.Subject = DefaultSubject
	}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	if s.now == nil {
		s.now = time.Now
	}
	if s.httpc == nil {
		s.httpc = &http.Client{Timeout: 5 * time.Second}
	}
	for _, c := range cfg.Clients {
		method := c.AuthMethod
		if method == "" {
			method = AuthNone
		}
		if !slices.Contains([]string{AuthNone, AuthClientSecretBasic, AuthClientSecretPost}, method) {
			return nil, fmt.Errorf("authserver: client %q: unsupported auth method %q", c.ID, method)
		}
		if (method == AuthNone) != (c.Secret == "") {
			return nil, fmt.Errorf("authserver: client %q: a secret is required for %s and forbidden for none", c.ID, method)
		}
		if c.ID == "" || len(c.RedirectURIs) == 0 {
			return nil, fmt.Errorf("authserver: client %q: ID and RedirectURIs are required", c.ID)
		}
		for _, u := range c.RedirectURIs {
			if err := checkRedirectURI(u); err != nil {
				return nil, fmt.Errorf("authserver: client %q: %v", c.ID, err)
			}
		}
		cl := &client{
			id:           c.ID,
			authMethod:   method,
			redirectURIs: slices.Clone(c.RedirectURIs),
			name:         c.Name,
			grantTypes:   []string{"authorization_code", "refresh_token"},
			issuedAt:     s.now(),
		}
		if c.Secret != "" {
			cl.secretHash = hash(c.Secret)
		}
		s.clients[c.ID] = cl
	}
	s.handler = s.routes()
	return s, nil
}

// Issuer returns the issuer URL (normalized: lower-case scheme and host, no
// trailing slash).
func (s *Server) Issuer() string { return s.issuer }

// Handler returns the server's HTTP handler.
func (s *Server) Handler() http.Handler { return s.handler }

func (s *Server) routes() http.Handler {
	api := http.NewServeMux()
	if !s.cfg.NoMetadata {
		api.HandleFunc("GET "+MetadataPath, s.serveMetadata)
	}
	if s.cfg.ServeOpenIDConfiguration && !s.cfg.NoMetadata {
		api.HandleFunc("GET "+OpenIDConfigPath, s.serveMetadata)
	}
	api.HandleFunc("POST "+RegisterPath, s.serveRegister)
	api.HandleFunc("POST "+TokenPath, s.serveToken)
	api.HandleFunc("POST "+RevokePath, s.serveRevoke)
	withCORS := cors.Wrap(api, s.cfg.CORS)

	mux := http.NewServeMux()
	mux.Handle(MetadataPath, withCORS)
	if s.cfg.ServeOpenIDConfiguration {
		mux.Handle(OpenIDConfigPath, withCORS)
	}
	mux.Handle(RegisterPath, withCORS)
	mux.Handle(TokenPath, withCORS)
	mux.Handle(RevokePath, withCORS)
	mux.HandleFunc("GET "+AuthorizePath, s.serveAuthorize)
	mux.HandleFunc("POST "+ConsentPath, s.serveConsent)
	mux.HandleFunc("GET "+StylesheetPath, serveStylesheet)
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		io.WriteString(w, "mcpwasm demo authorization server\n\nMetadata: "+MetadataPath+"\n")
	})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Content-Type-Options", "nosniff")
		mux.ServeHTTP(w, r)
	})
}

// metadata is the RFC 8414 document. It is its own type (not
// oauthex.AuthServerMeta) so that absent fields are omitted, not "".
type metadata struct {
	Issuer                            string   `json:"issuer"`
	AuthorizationEndpoint             string   `json:"authorization_endpoint"`
	TokenEndpoint                     string   `json:"token_endpoint"`
	RegistrationEndpoint              string   `json:"registration_endpoint"`
	RevocationEndpoint                string   `json:"revocation_endpoint"`
	ScopesSupported                   []string `json:"scopes_supported"`
	ResponseTypesSupported            []string `json:"response_types_supported"`
	ResponseModesSupported            []string `json:"response_modes_supported"`
	GrantTypesSupported               []string `json:"grant_types_supported"`
	TokenEndpointAuthMethodsSupported []string `json:"token_endpoint_auth_methods_supported"`
	RevocationEndpointAuthMethods     []string `json:"revocation_endpoint_auth_methods_supported"`
	CodeChallengeMethodsSupported     []string `json:"code_challenge_methods_supported"`
	AuthorizationResponseIssSupported bool     `json:"authorization_response_iss_parameter_supported"`
	ClientIDMetadataDocumentSupported bool     `json:"client_id_metadata_document_supported"`
	ProtectedResourcesSupported       []string `json:"protected_resources,omitempty"`
	DPoPSigningAlgValuesSupported     []string `json:"dpop_signing_alg_values_supported,omitempty"`
}

var authMethods = []string{AuthNone, AuthClientSecretBasic, AuthClientSecretPost}

// Metadata returns the RFC 8414 metadata document the server serves.
func (s *Server) metadata() metadata {
	var dpopSupported []string
	if s.dpop != nil {
		dpopSupported = dpopAlgs
	}
	return metadata{
		DPoPSigningAlgValuesSupported:     dpopSupported,
		Issuer:                            s.issuer,
		AuthorizationEndpoint:             s.issuer + AuthorizePath,
		TokenEndpoint:                     s.issuer + TokenPath,
		RegistrationEndpoint:              s.issuer + RegisterPath,
		RevocationEndpoint:                s.issuer + RevokePath,
		ScopesSupported:                   s.scopes,
		ResponseTypesSupported:            []string{"code"},
		ResponseModesSupported:            []string{"query"},
		GrantTypesSupported:               s.grantTypes(),
		TokenEndpointAuthMethodsSupported: authMethods,
		RevocationEndpointAuthMethods:     authMethods,
		CodeChallengeMethodsSupported:     []string{"S256"},
		AuthorizationResponseIssSupported: true,
		ClientIDMetadataDocumentSupported: s.cfg.ClientIDMetadataDocuments,
		ProtectedResourcesSupported:       slices.Sorted(mapValues(s.resources)),
	}
}

func mapValues(m map[string]string) func(func(string) bool) {
	return func(yield func(string) bool) {
		for _, v := range m {
			if !yield(v) {
				return
			}
		}
	}
}

func (s *Server) serveMetadata(w http.ResponseWriter, r *http.Request) {
	s.event(Event{Kind: EventMetadata, Detail: r.URL.Path})
	w.Header().Set("Cache-Control", "public, max-age=60")
	writeJSON(w, http.StatusOK, s.metadata())
}

// Count returns how many events of kind the server recorded.
func (s *Server) Count(kind string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.counts[kind]
}

// Events returns a copy of the events recorded so far (the newest 10000),
// oldest first.
func (s *Server) Events() []Event {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.events)
}

// event records e (s.mu must not be held) and calls Config.OnEvent.
func (s *Server) event(e Event) {
	e.Time = s.now()
	s.mu.Lock()
	if len(s.events) >= maxEvents {
		s.events = slices.Delete(s.events, 0, len(s.events)-maxEvents+1)
	}
	s.events = append(s.events, e)
	s.counts[e.Kind]++
	s.mu.Unlock()
	s.log.Info("authserver", "kind", e.Kind, "client_id", e.ClientID, "err", e.Err, "detail", e.Detail)
	if s.cfg.OnEvent != nil {
		s.cfg.OnEvent(e)
	}
}

// sweepLocked drops expired state, at most once per sweepEvery.
func (s *Server) sweepLocked(now time.Time) {
	if now.Sub(s.lastSweep) < sweepEvery {
		return
	}
	s.lastSweep = now
	for k, p := range s.consents {
		if now.After(p.expires) {
			delete(s.consents, k)
		}
	}
	for k, c := range s.codes {
		if now.After(c.expires.Add(usedCodeRetention)) {
			delete(s.codes, k)
		}
	}
	for k, t := range s.access {
		if now.After(t.expires) {
			delete(s.access, k)
		}
	}
	for k, t := range s.refresh {
		if now.After(t.expires) {
			delete(s.refresh, k)
		}
	}
	for k, c := range s.clients {
		if c.metadoc && now.After(c.expires) {
			delete(s.clients, k)
		}
	}
}

// randomToken returns prefix + 256 random bits, base64url.
func randomToken(prefix string) string {
	b := make([]byte, 32)
	rand.Read(b) // never fails (crypto/rand)
	return prefix + base64.RawURLEncoding.EncodeToString(b)
}

// hash is the key under which a secret is stored, so that the server's
// memory does not hold bearer secrets in plaintext and lookups do not
// compare secrets byte by byte.
func hash(secret string) []byte {
	h := sha256.Sum256([]byte(secret))
	return h[:]
}

func hashKey(secret string) string { return string(hash(secret)) }

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

// oauthError is an RFC 6749 §5.2 error response body.
type oauthError struct {
	Code        string `json:"error"`
	Description string `json:"error_description,omitempty"`
	status      int
}

func (e *oauthError) Error() string { return e.Code + ": " + e.Description }

func errorf(status int, code, format string, args ...any) *oauthError {
	return &oauthError{Code: code, Description: fmt.Sprintf(format, args...), status: status}
}

func writeOAuthError(w http.ResponseWriter, r *http.Request, e *oauthError) {
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Pragma", "no-cache")
	// RFC 6749 §5.2: a challenge only when the client tried the header
	// (and no Basic prompt risk for other requests).
	if e.status == http.StatusUnauthorized && r.Header.Get("Authorization") != "" {
		w.Header().Set("WWW-Authenticate", `Basic realm="token"`)
	}
	writeJSON(w, e.status, e)
}

func isLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// checkRedirectURI accepts absolute https URIs and http URIs on a loopback
// host, without fragment or userinfo.
func checkRedirectURI(raw string) error {
	u, err := url.Parse(raw)
	if err != nil || !u.IsAbs() || u.Host == "" {
		return fmt.Errorf("redirect_uri %q is not an absolute URL", raw)
	}
	if u.Fragment != "" || strings.Contains(raw, "#") {
		return fmt.Errorf("redirect_uri %q has a fragment", raw)
	}
	if u.User != nil {
		return fmt.Errorf("redirect_uri %q has userinfo", raw)
	}
	switch u.Scheme {
	case "https":
	case "http":
		if !isLoopback(u.Hostname()) {
			return fmt.Errorf("redirect_uri %q: http is allowed on loopback hosts only", raw)
		}
	default:
		return fmt.Errorf("redirect_uri %q: scheme must be https, or http on loopback", raw)
	}
	return nil
}

// normalizeResource lower-cases scheme and host of an absolute http(s) URI
// without fragment.
func normalizeResource(raw string) (string, bool) {
	u, err := url.Parse(raw)
	if err != nil || !u.IsAbs() || u.Host == "" || u.Fragment != "" || strings.Contains(raw, "#") ||
		(u.Scheme != "http" && u.Scheme != "https" && u.Scheme != "HTTP" && u.Scheme != "HTTPS") {
		return "", false
	}
	u.Scheme = strings.ToLower(u.Scheme)
	u.Host = strings.ToLower(u.Host)
	return u.String(), true
}

// validScopeToken reports whether s is an RFC 6749 §3.3 scope-token.
func validScopeToken(s string) bool {
	for _, r := range s {
		if r < 0x21 || r > 0x7e || r == '"' || r == '\\' {
			return false
		}
	}
	return s != ""
}

// single returns the only value of key in v; ok is false when the key
// appears more than once (RFC 6749 §3.1: parameters must not repeat).
func single(v url.Values, key string) (string, bool) {
	vs := v[key]
	switch len(vs) {
	case 0:
		return "", true
	case 1:
		return vs[0], true
	}
	return "", false
}
