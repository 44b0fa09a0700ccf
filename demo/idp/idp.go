// Package idp is the demo enterprise identity provider of enterprise-managed
// authorization (SEP-990): it issues OpenID Connect ID tokens for the demo
// user (standing in for single sign-on) and exchanges them (RFC 8693 token
// exchange) for identity assertion JWT authorization grants (ID-JAGs) that
// the demo authorization server takes in the JWT bearer grant.
//
//   - GET /.well-known/openid-configuration: issuer, token_endpoint,
//     jwks_uri, grant_types_supported (the token exchange).
//   - GET /jwks: its ES256 public key.
//   - POST /sso: an ID token of the demo user for the client_id in the form
//     (a stand-in for a real sign-in; the demo has one user).
//   - POST /token: grant_type token-exchange, requested_token_type
//     id-jag, subject_token_type id_token, a subject_token it issued for
//     this client and not expired, audience and resource present; client
//     authentication by client_secret_basic for a client with a secret,
//     else client_id in the body. Answers an ID-JAG (typ
//     oauth-id-jag+jwt; iss, sub, aud, resource, client_id, scope, jti,
//     iat, exp), token_type N_A.
//
// Its signing key is made at start (ECDSA P-256); [IdP.PublicKey] gives it
// to the demo authorization server. Tokens and secrets never appear in
// events.
package idp

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"mime"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/mcpwasm/mcpwasm/demo/cors"
	"github.com/mcpwasm/mcpwasm/internal/jws"
)

// Token types and grant types of the exchange.
const (
	GrantTokenExchange = "urn:ietf:params:oauth:grant-type:token-exchange"
	TokenTypeIDToken   = "urn:ietf:params:oauth:token-type:id_token"
	TokenTypeIDJAG     = "urn:ietf:params:oauth:token-type:id-jag"
	// TypIDJAG is the JOSE typ of an ID-JAG.
	TypIDJAG = "oauth-id-jag+jwt"
)

// Lifetimes of what the IdP issues.
const (
	IDTokenTTL = time.Hour
	IDJAGTTL   = 5 * time.Minute
)

// Client is an application registered at the IdP.
type Client struct {
	// ID is its client ID at the IdP: the audience of its ID tokens.
	ID string
	// Secret, when set, must be presented by client_secret_basic.
	Secret string
	// MCPClientID is its client ID at the MCP authorization server: the
	// client_id claim of the ID-JAGs it gets.
	MCPClientID string
}

// Config configures [New].
type Config struct {
	// Issuer is the IdP's origin URL (no path). Required.
	Issuer string
	// Subject is the demo user; default "demo-user".
	Subject string
	// Clients are the registered applications. At least one.
	Clients []Client
	// CORS configures the CORS middleware of every endpoint.
	CORS cors.Options
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// IdP is the demo identity provider.
type IdP struct {
	cfg     Config
	key     *ecdsa.PrivateKey
	clients map[string]Client
	handler http.Handler

	mu     sync.Mutex
	counts map[string]int // "sso", "exchange", "exchange_refused"
}

// New makes an IdP with a fresh signing key.
func New(cfg Config) (*IdP, error) {
	u, err := url.Parse(cfg.Issuer)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || strings.Trim(u.Path, "/") != "" {
		return nil, fmt.Errorf("idp: Issuer %q must be an http(s) origin URL", cfg.Issuer)
	}
	cfg.Issuer = strings.TrimSuffix(cfg.Issuer, "/")
	if len(cfg.Clients) == 0 {
		return nil, errors.New("idp: Config.Clients is empty")
	}
	if cfg.Subject == "" {
		cfg.Subject = "demo-user"
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	p := &IdP{cfg: cfg, key: key, clients: map[string]Client{}, counts: map[string]int{}}
	for _, c := range cfg.Clients {
		if c.ID == "" || c.MCPClientID == "" {
			return nil, fmt.Errorf("idp: client %q: ID and MCPClientID are required", c.ID)
		}
		p.clients[c.ID] = c
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /.well-known/openid-configuration", p.serveMetadata)
	mux.HandleFunc("GET /jwks", p.serveJWKS)
	mux.HandleFunc("POST /sso", p.serveSSO)
	mux.HandleFunc("POST /token", p.serveToken)
	p.handler = cors.Wrap(mux, cfg.CORS)
	return p, nil
}

// Issuer returns the IdP's issuer URL.
func (p *IdP) Issuer() string { return p.cfg.Issuer }

// TokenEndpoint returns the URL of the token exchange.
func (p *IdP) TokenEndpoint() string { return p.cfg.Issuer + "/token" }

// Handler returns the IdP's HTTP handler.
func (p *IdP) Handler() http.Handler { return p.handler }

// PublicKey returns the key that verifies its ID tokens and ID-JAGs.
func (p *IdP) PublicKey() *ecdsa.PublicKey { return &p.key.PublicKey }

// Count returns how many requests of kind ("sso", "exchange",
// "exchange_refused") it answered.
func (p *IdP) Count(kind string) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.counts[kind]
}

func (p *IdP) count(kind string) {
	p.mu.Lock()
	p.counts[kind]++
	p.mu.Unlock()
}

// IDToken issues an ID token of the demo user for the application
// clientID (the stand-in for a single sign-on).
func (p *IdP) IDToken(clientID string) (string, error) {
	if _, ok := p.clients[clientID]; !ok {
		return "", fmt.Errorf("idp: unknown client %q", clientID)
	}
	now := p.cfg.Now()
	return Sign(p.key, map[string]string{"alg": "ES256", "typ": "JWT"}, map[string]any{
		"iss": p.cfg.Issuer, "sub": p.cfg.Subject, "aud": clientID, "email": p.cfg.Subject + "@example.com",
		"iat": now.Unix(), "exp": now.Add(IDTokenTTL).Unix(), "jti": rand.Text(),
	})
}

func (p *IdP) serveMetadata(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, map[string]any{
		"issuer":                                p.cfg.Issuer,
		"token_endpoint":                        p.TokenEndpoint(),
		"jwks_uri":                              p.cfg.Issuer + "/jwks",
		"grant_types_supported":                 []string{GrantTokenExchange},
		"token_endpoint_auth_methods_supported": []string{"none", "client_secret_basic"},
		"id_token_signing_alg_values_supported": []string{"ES256"},
		"subject_types_supported":               []string{"public"},
		"response_types_supported":              []string{"id_token"},
	})
}

func (p *IdP) serveJWKS(w http.ResponseWriter, _ *http.Request) {
	x, y, _ := jws.PublicJWK(p.PublicKey()) // a P-256 key of its own
	writeJSON(w, http.StatusOK, map[string]any{"keys": []map[string]string{{"kty": "EC", "crv": "P-256", "alg": "ES256", "use": "sig", "x": x, "y": y}}})
}

func (p *IdP) serveSSO(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, 1<<16)
	if err := r.ParseForm(); err != nil {
		oauthError(w, http.StatusBadRequest, "invalid_request", "malformed form body")
		return
	}
	tok, err := p.IDToken(r.PostForm.Get("client_id"))
	if err != nil {
		oauthError(w, http.StatusBadRequest, "invalid_client", "unknown client_id")
		return
	}
	p.count("sso")
	w.Header().Set("Cache-Control", "no-store")
	writeJSON(w, http.StatusOK, map[string]string{"id_token": tok})
}

func (p *IdP) serveToken(w http.ResponseWriter, r *http.Request) {
	refuse := func(status int, code, desc string) {
		p.count("exchange_refused")
		oauthError(w, status, code, desc)
	}
	r.Body = http.MaxBytesReader(w, r.Body, 1<<16)
	if mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); mt != "application/x-www-form-urlencoded" || r.ParseForm() != nil {
		refuse(http.StatusBadRequest, "invalid_request", "a form body is required")
		return
	}
	f := r.PostForm
	c, ok := p.authenticate(r, f)
	if !ok {
		refuse(http.StatusUnauthorized, "invalid_client", "client authentication failed")
		return
	}
	switch {
	case f.Get("grant_type") != GrantTokenExchange:
		refuse(http.StatusBadRequest, "unsupported_grant_type", "only the token exchange (RFC 8693) is supported")
		return
	case f.Get("requested_token_type") != TokenTypeIDJAG:
		refuse(http.StatusBadRequest, "invalid_request", "requested_token_type must be "+TokenTypeIDJAG)
		return
	case f.Get("subject_token_type") != TokenTypeIDToken:
		refuse(http.StatusBadRequest, "invalid_request", "subject_token_type must be "+TokenTypeIDToken)
		return
	case f.Get("audience") == "" || f.Get("resource") == "":
		refuse(http.StatusBadRequest, "invalid_request", "audience and resource are required")
		return
	}
	now := p.cfg.Now()
	_, claims, err := Verify(f.Get("subject_token"), p.PublicKey(), now)
	if err != nil || claims["iss"] != p.cfg.Issuer || claims["aud"] != c.ID {
		refuse(http.StatusBadRequest, "invalid_grant", "the subject token is not a valid ID token of this IdP for this client")
		return
	}
	sub, _ := claims["sub"].(string)
	jc := map[string]any{
		"iss": p.cfg.Issuer, "sub": sub, "aud": f.Get("audience"), "resource": f.Get("resource"),
		"client_id": c.MCPClientID, "jti": rand.Text(), "iat": now.Unix(), "exp": now.Add(IDJAGTTL).Unix(),
	}
	if s := f.Get("scope"); s != "" {
		jc["scope"] = s
	}
	jag, err := Sign(p.key, map[string]string{"alg": "ES256", "typ": TypIDJAG}, jc)
	if err != nil {
		refuse(http.StatusInternalServerError, "server_error", "signing failed")
		return
	}
	p.count("exchange")
	w.Header().Set("Cache-Control", "no-store")
	writeJSON(w, http.StatusOK, map[string]any{
		"access_token": jag, "issued_token_type": TokenTypeIDJAG, "token_type": "N_A", "expires_in": int(IDJAGTTL / time.Second),
	})
}

// authenticate identifies the client: client_secret_basic for one with a
// secret, client_id in the body otherwise.
func (p *IdP) authenticate(r *http.Request, f url.Values) (Client, bool) {
	if user, pass, basic := r.BasicAuth(); basic {
		id, err1 := url.QueryUnescape(user)
		secret, err2 := url.QueryUnescape(pass)
		c, ok := p.clients[id]
		if err1 != nil || err2 != nil || !ok || c.Secret == "" || f.Has("client_secret") {
			return Client{}, false
		}
		a, b := sha256.Sum256([]byte(secret)), sha256.Sum256([]byte(c.Secret))
		return c, subtle.ConstantTimeCompare(a[:], b[:]) == 1
	}
	c, ok := p.clients[f.Get("client_id")]
	return c, ok && c.Secret == ""
}

// maxJWS bounds a JWS it verifies: the size of a form body.
const maxJWS = 1 << 16

// Sign returns the compact ES256 JWS of claims under hdr.
func Sign(key *ecdsa.PrivateKey, hdr map[string]string, claims map[string]any) (string, error) {
	return jws.Sign(hdr, claims, jws.Signer(key))
}

// Verify checks an ES256 compact JWS against key, and its exp (and iat)
// against now with 30 s of leeway; it returns the header and claims.
func Verify(token string, key crypto.PublicKey, now time.Time) (hdr map[string]any, claims map[string]any, err error) {
	pub, ok := key.(*ecdsa.PublicKey)
	if !ok {
		return nil, nil, errors.New("not an ECDSA key")
	}
	tok, err := jws.Parse(token, maxJWS)
	if err != nil {
		return nil, nil, err
	}
	if err := tok.Verify(pub); err != nil {
		return nil, nil, err
	}
	if tok.DecodeHeader(&hdr) != nil || tok.DecodeClaims(&claims) != nil {
		return nil, nil, errors.New("malformed JWS")
	}
	exp, ok1 := claims["exp"].(float64)
	iat, ok2 := claims["iat"].(float64)
	leeway := float64(30)
	t := float64(now.Unix())
	if !ok1 || !ok2 || exp+leeway < t || iat-leeway > t {
		return nil, nil, errors.New("expired or not yet valid")
	}
	return hdr, claims, nil
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

func oauthError(w http.ResponseWriter, status int, code, desc string) {
	writeJSON(w, status, map[string]string{"error": code, "error_description": desc})
}
