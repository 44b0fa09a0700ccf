package authserver

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"mime"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
)

// Token prefixes. Tokens are opaque: prefix + 256 random bits (base64url).
const (
	AccessTokenPrefix  = "mcpwasm_at_"
	RefreshTokenPrefix = "mcpwasm_rt_"
)

type tokenResponse struct {
	AccessToken  string `json:"access_token"`
	TokenType    string `json:"token_type"`
	ExpiresIn    int64  `json:"expires_in"`
	RefreshToken string `json:"refresh_token,omitempty"`
	Scope        string `json:"scope"`

	rotation int // for refreshes: which rotation of the grant this is
}

// readForm parses an application/x-www-form-urlencoded body of at most
// maxFormBody bytes. Query parameters are not accepted.
func readForm(w http.ResponseWriter, r *http.Request) (url.Values, *oauthError) {
	if mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); mt != "application/x-www-form-urlencoded" {
		return nil, errorf(http.StatusBadRequest, "invalid_request", "Content-Type must be application/x-www-form-urlencoded")
	}
	if r.URL.RawQuery != "" {
		return nil, errorf(http.StatusBadRequest, "invalid_request", "parameters must be sent in the body")
	}
	r.Body = http.MaxBytesReader(w, r.Body, maxFormBody)
	if err := r.ParseForm(); err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return nil, errorf(http.StatusRequestEntityTooLarge, "invalid_request", "request body too large")
		}
		return nil, errorf(http.StatusBadRequest, "invalid_request", "malformed form body")
	}
	for k, v := range r.PostForm {
		if len(v) > 1 {
			return nil, errorf(http.StatusBadRequest, "invalid_request", "parameter %s is repeated", k)
		}
	}
	return r.PostForm, nil
}

// authenticateClient identifies and authenticates the client of a token or
// revocation request with exactly the method it registered.
func (s *Server) authenticateClient(r *http.Request, form url.Values) (*client, *oauthError) {
	invalid := func(format string, args ...any) (*client, *oauthError) {
		return nil, errorf(http.StatusUnauthorized, "invalid_client", format, args...)
	}
	var id, secret, method string
	if hdr := r.Header.Get("Authorization"); hdr != "" {
		user, pass, ok := r.BasicAuth()
		if !ok {
			return invalid("malformed Authorization header")
		}
		// RFC 6749 §2.3.1: both are form-urlencoded before base64.
		var err1, err2 error
		id, err1 = url.QueryUnescape(user)
		secret, err2 = url.QueryUnescape(pass)
		if err1 != nil || err2 != nil {
			return invalid("malformed client credentials")
		}
		method = AuthClientSecretBasic
		if fid := form.Get("client_id"); fid != "" && fid != id {
			return invalid("client_id in the body differs from the Authorization header")
		}
		if form.Has("client_secret") {
			return invalid("client credentials sent by two methods")
		}
	} else {
		id = form.Get("client_id")
		if form.Has("client_secret") {
			secret = form.Get("client_secret")
			method = AuthClientSecretPost
		} else {
			method = AuthNone
		}
	}
	if id == "" {
		return invalid("client authentication failed: no client_id")
	}
	c := s.lookupClient(r, id)
	if c == nil {
		return invalid("client authentication failed")
	}
	if method != c.authMethod {
		return invalid("client authentication failed: the client must use %s", c.authMethod)
	}
	if c.authMethod != AuthNone {
		h := hash(secret)
		if secret == "" || subtle.ConstantTimeCompare(h, c.secretHash) != 1 {
			return invalid("client authentication failed")
		}
	}
	return c, nil
}

// serveToken is the token endpoint.
func (s *Server) serveToken(w http.ResponseWriter, r *http.Request) {
	kind := EventTokenOther
	form, oerr := readForm(w, r)
	var clientID string
	if oerr == nil {
		switch form.Get("grant_type") {
		case "authorization_code":
			kind = EventTokenCode
		case "refresh_token":
			kind = EventTokenRefresh
		case GrantJWTBearer:
			kind = EventTokenIDJAG
		}
		var c *client
		var jkt string
		jkt, oerr = s.tokenDPoP(w, r)
		if oerr == nil {
			c, oerr = s.authenticateClient(r, form)
		}
		if c != nil {
			clientID = c.id
		}
		if oerr == nil {
			var resp *tokenResponse
			switch kind {
			case EventTokenCode:
				resp, oerr = s.exchangeCode(c, form, jkt)
			case EventTokenRefresh:
				resp, oerr = s.refreshGrant(c, form, jkt)
			case EventTokenIDJAG:
				resp, oerr = s.jwtBearerGrant(c, form, jkt)
			default:
				if form.Get("grant_type") == "" {
					oerr = errorf(http.StatusBadRequest, "invalid_request", "grant_type is required")
				} else {
					oerr = errorf(http.StatusBadRequest, "unsupported_grant_type", "unsupported grant_type")
				}
			}
			if oerr == nil {
				detail := "scope=" + resp.Scope
				if kind == EventTokenRefresh {
					// Which refresh token of the grant came back: tests
					// check that the one a sign-in issued is used once.
					detail += fmt.Sprintf(" rotation=%d", resp.rotation)
				}
				s.event(Event{Kind: kind, ClientID: clientID, Detail: detail})
				w.Header().Set("Cache-Control", "no-store")
				w.Header().Set("Pragma", "no-cache")
				writeJSON(w, http.StatusOK, resp)
				return
			}
		}
	}
	s.event(Event{Kind: kind, ClientID: clientID, Err: oerr.Code, Detail: oerr.Description})
	writeOAuthError(w, r, oerr)
}

func s256(verifier string) string {
	h := sha256.Sum256([]byte(verifier))
	return base64.RawURLEncoding.EncodeToString(h[:])
}

// validVerifier checks the RFC 7636 §4.1 syntax.
func validVerifier(v string) bool {
	if len(v) < 43 || len(v) > 128 {
		return false
	}
	for _, r := range v {
		if !('a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9' || strings.ContainsRune("-._~", r)) {
			return false
		}
	}
	return true
}

func (s *Server) exchangeCode(c *client, form url.Values, jkt string) (*tokenResponse, *oauthError) {
	invalidGrant := func(format string, args ...any) (*tokenResponse, *oauthError) {
		return nil, errorf(http.StatusBadRequest, "invalid_grant", format, args...)
	}
	raw := form.Get("code")
	if raw == "" {
		return nil, errorf(http.StatusBadRequest, "invalid_request", "code is required")
	}
	redirectURI := form.Get("redirect_uri")
	if redirectURI == "" {
		return nil, errorf(http.StatusBadRequest, "invalid_request", "redirect_uri is required")
	}
	verifier := form.Get("code_verifier")
	if verifier == "" {
		return nil, errorf(http.StatusBadRequest, "invalid_request", "code_verifier is required (PKCE)")
	}
	resource := form.Get("resource")
	if resource == "" {
		return nil, errorf(http.StatusBadRequest, "invalid_target", "resource is required (RFC 8707)")
	}
	now := s.now()

	s.mu.Lock()
	defer s.mu.Unlock()
	s.sweepLocked(now)
	cd := s.codes[hashKey(raw)]
	if cd == nil || now.After(cd.expires) {
		return invalidGrant("unknown or expired authorization code")
	}
	if cd.req.clientID != c.id {
		return invalidGrant("the code was issued to another client")
	}
	if cd.used {
		// RFC 6749 §4.1.2: revoke what the code produced.
		s.revokeGrantLocked(cd.grantID)
		s.mu.Unlock()
		s.event(Event{Kind: EventCodeReuse, ClientID: c.id, Detail: "grant revoked"})
		s.mu.Lock()
		return invalidGrant("authorization code already used; its tokens are revoked")
	}
	// The code is spent by this attempt whatever its outcome, so a guess at
	// the verifier gets one try.
	cd.used = true
	if redirectURI != cd.req.redirectURI {
		return invalidGrant("redirect_uri does not match the authorization request")
	}
	if !validVerifier(verifier) || subtle.ConstantTimeCompare([]byte(s256(verifier)), []byte(cd.req.challenge)) != 1 {
		return invalidGrant("PKCE verification failed")
	}
	if n, ok := normalizeResource(resource); !ok || n != cd.req.resource {
		return nil, errorf(http.StatusBadRequest, "invalid_target", "resource does not match the authorization request")
	}
	g := &grant{id: randomToken("grant_"), clientID: c.id, resource: cd.req.resource, scopes: cd.req.scopes, jkt: jkt}
	s.grants[g.id] = g
	cd.grantID = g.id
	return s.issueLocked(g, now), nil
}

// issueLocked issues an access token and a refresh token for g. A refresh
// token is always issued (the browser client refreshes silently), whether
// or not offline_access was asked for.
func (s *Server) issueLocked(g *grant, now time.Time) *tokenResponse {
	at := randomToken(AccessTokenPrefix)
	rt := randomToken(RefreshTokenPrefix)
	s.access[hashKey(at)] = &token{grantID: g.id, expires: now.Add(s.cfg.AccessTokenTTL)}
	s.refresh[hashKey(rt)] = &token{grantID: g.id, expires: now.Add(s.cfg.RefreshTokenTTL)}
	g.tokens = append(g.tokens, hashKey(at), hashKey(rt))
	tokenType := "Bearer"
	if g.jkt != "" {
		tokenType = TokenTypeDPoP
	}
	return &tokenResponse{
		AccessToken:  at,
		TokenType:    tokenType,
		ExpiresIn:    int64(s.cfg.AccessTokenTTL / time.Second),
		RefreshToken: rt,
		Scope:        strings.Join(g.scopes, " "),
	}
}

func (s *Server) revokeGrantLocked(id string) {
	g := s.grants[id]
	if g == nil {
		return
	}
	g.revoked = true
	for _, h := range g.tokens {
		delete(s.access, h)
		// Keep refresh tokens, marked rotated, so that a later replay is
		// still recognized (and refused) as reuse.
		if t := s.refresh[h]; t != nil {
			t.rotated = true
		}
	}
}

func (s *Server) refreshGrant(c *client, form url.Values, jkt string) (*tokenResponse, *oauthError) {
	invalidGrant := func(format string, args ...any) (*tokenResponse, *oauthError) {
		return nil, errorf(http.StatusBadRequest, "invalid_grant", format, args...)
	}
	raw := form.Get("refresh_token")
	if raw == "" {
		return nil, errorf(http.StatusBadRequest, "invalid_request", "refresh_token is required")
	}
	now := s.now()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sweepLocked(now)
	t := s.refresh[hashKey(raw)]
	if t == nil || now.After(t.expires) {
		return invalidGrant("unknown or expired refresh token")
	}
	g := s.grants[t.grantID]
	if g == nil || g.clientID != c.id {
		return invalidGrant("the refresh token was issued to another client")
	}
	if g.revoked {
		return invalidGrant("the grant was revoked")
	}
	if oerr := checkBinding(g, jkt); oerr != nil {
		return nil, oerr
	}
	if t.rotated {
		s.revokeGrantLocked(g.id)
		s.mu.Unlock()
		s.event(Event{Kind: EventRefreshReuse, ClientID: c.id, Detail: "grant revoked"})
		s.mu.Lock()
		return invalidGrant("refresh token already used; the grant is revoked")
	}
	if res := form.Get("resource"); res != "" {
		if n, ok := normalizeResource(res); !ok || n != g.resource {
			return nil, errorf(http.StatusBadRequest, "invalid_target", "resource does not match the grant")
		}
	}
	if sc := form.Get("scope"); sc != "" {
		for x := range strings.FieldsSeq(sc) {
			if !slices.Contains(g.scopes, x) {
				return nil, errorf(http.StatusBadRequest, "invalid_scope", "scope %q exceeds the grant", x)
			}
		}
		// Narrowing on refresh is not supported: the new tokens keep the
		// grant's scopes, which the response says.
	}
	t.rotated = true
	g.rotation++
	resp := s.issueLocked(g, now)
	resp.rotation = g.rotation
	return resp, nil
}

// serveRevoke is RFC 7009 revocation. Revoking an access or a refresh
// token revokes its whole grant. Unknown tokens answer 200.
func (s *Server) serveRevoke(w http.ResponseWriter, r *http.Request) {
	form, oerr := readForm(w, r)
	var c *client
	if oerr == nil {
		c, oerr = s.authenticateClient(r, form)
	}
	if oerr == nil && form.Get("token") == "" {
		oerr = errorf(http.StatusBadRequest, "invalid_request", "token is required")
	}
	if oerr != nil {
		var id string
		if c != nil {
			id = c.id
		}
		s.event(Event{Kind: EventRevoke, ClientID: id, Err: oerr.Code, Detail: oerr.Description})
		writeOAuthError(w, r, oerr)
		return
	}
	key := hashKey(form.Get("token"))
	detail := "unknown"
	s.mu.Lock()
	t := s.access[key]
	if t == nil {
		t = s.refresh[key]
	}
	if t != nil {
		if g := s.grants[t.grantID]; g != nil && g.clientID == c.id {
			s.revokeGrantLocked(g.id)
			detail = "revoked"
		} else {
			detail = "other client"
		}
	}
	s.mu.Unlock()
	s.event(Event{Kind: EventRevoke, ClientID: c.id, Detail: detail})
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusOK)
}

// Verifier returns a token verifier for auth.RequireBearerToken that
// accepts live access tokens of this server issued for audience (a
// resource URI; scheme and host compare case-insensitively). Anything else
// fails with an error wrapping auth.ErrInvalidToken.
func (s *Server) Verifier(audience string) auth.TokenVerifier {
	aud, ok := normalizeResource(audience)
	return func(_ context.Context, raw string, _ *http.Request) (*auth.TokenInfo, error) {
		info, err := s.verify(raw, aud, ok)
		if err != nil {
			s.event(Event{Kind: EventVerify, Err: "invalid_token", Detail: err.Error()})
			return nil, fmt.Errorf("%w: %s", auth.ErrInvalidToken, err.Error())
		}
		s.event(Event{Kind: EventVerify, ClientID: info.Extra["client_id"].(string)})
		return info, nil
	}
}

func (s *Server) verify(raw, aud string, audOK bool) (*auth.TokenInfo, error) {
	if !audOK {
		return nil, errors.New("verifier has an invalid audience")
	}
	if !strings.HasPrefix(raw, AccessTokenPrefix) {
		return nil, errors.New("not an access token of this server")
	}
	now := s.now()
	s.mu.Lock()
	defer s.mu.Unlock()
	t := s.access[hashKey(raw)]
	if t == nil {
		return nil, errors.New("unknown or revoked token")
	}
	if !now.Before(t.expires) {
		return nil, errors.New("token expired")
	}
	g := s.grants[t.grantID]
	if g == nil || g.revoked {
		return nil, errors.New("grant revoked")
	}
	if g.resource != aud {
		return nil, errors.New("token was issued for another resource")
	}
	extra := map[string]any{"client_id": g.clientID, "resource": g.resource}
	if g.jkt != "" {
		extra[extraDPoPKey] = g.jkt
	}
	return &auth.TokenInfo{
		Scopes:     slices.Clone(g.scopes),
		Expiration: t.expires,
		UserID:     s.cfg.Subject,
		Extra:      extra,
	}, nil
}
