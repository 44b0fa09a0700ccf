package authserver

import (
	"crypto/ecdsa"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/mcpwasm/mcpwasm/internal/jws"
)

// GrantJWTBearer is the RFC 7523 JWT bearer grant type: with an ID-JAG
// from a trusted identity provider (enterprise-managed authorization,
// SEP-990).
const GrantJWTBearer = "urn:ietf:params:oauth:grant-type:jwt-bearer"

// EventTokenIDJAG is a token request with the JWT bearer grant.
const EventTokenIDJAG = "token_idjag"

// typIDJAG is the JOSE typ an ID-JAG must carry.
const typIDJAG = "oauth-id-jag+jwt"

// IdentityProvider is an enterprise identity provider whose ID-JAGs the
// server takes in the JWT bearer grant.
type IdentityProvider struct {
	// Issuer is the iss of its ID-JAGs.
	Issuer string
	// Key verifies their ES256 signatures.
	Key *ecdsa.PublicKey
}

// jtiSeen remembers the jti of every ID-JAG taken until it expires, so a
// replayed one is refused.
type jtiSeen struct {
	mu sync.Mutex
	m  map[string]time.Time
}

func (j *jtiSeen) use(key string, exp, now time.Time) bool {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.m == nil {
		j.m = map[string]time.Time{}
	}
	for k, e := range j.m {
		if now.After(e) {
			delete(j.m, k)
		}
	}
	if _, dup := j.m[key]; dup {
		return false
	}
	j.m[key] = exp
	return true
}

// idjagLeeway is the clock skew tolerated on iat and exp.
const idjagLeeway = 30 * time.Second

// jwtBearerGrant serves the JWT bearer grant when identity providers are
// configured; otherwise it is an unsupported grant type.
func (s *Server) jwtBearerGrant(c *client, form url.Values, jkt string) (*tokenResponse, *oauthError) {
	if len(s.cfg.IdentityProviders) == 0 {
		return nil, errorf(http.StatusBadRequest, "unsupported_grant_type", "unsupported grant_type")
	}
	return s.idjagGrant(c, form, jkt)
}

// idjagGrant is the JWT bearer grant with an ID-JAG (RFC 7523 §2.1,
// SEP-990 §5): signed by a configured identity provider, typ
// oauth-id-jag+jwt, aud this issuer, client_id the authenticated client,
// resource one of Config.Resources, not expired, its jti not seen before;
// its scope (else the default scopes) must be supported.
func (s *Server) idjagGrant(c *client, form url.Values, jkt string) (*tokenResponse, *oauthError) {
	bad := func(format string, args ...any) (*tokenResponse, *oauthError) {
		return nil, errorf(http.StatusBadRequest, "invalid_grant", format, args...)
	}
	raw := form.Get("assertion")
	if raw == "" {
		return nil, errorf(http.StatusBadRequest, "invalid_request", "assertion is required")
	}
	tok, err := jws.Parse(raw, maxFormBody)
	var claims map[string]any
	if err == nil {
		err = tok.DecodeClaims(&claims)
	}
	if err != nil {
		return bad("the assertion is not a JWT: %v", err)
	}
	if tok.Typ != typIDJAG {
		return bad("the assertion is not an ID-JAG (typ must be %s)", typIDJAG)
	}
	iss, _ := claims["iss"].(string)
	i := slices.IndexFunc(s.cfg.IdentityProviders, func(p IdentityProvider) bool { return p.Issuer == iss })
	if i < 0 {
		return bad("the ID-JAG's issuer is not a trusted identity provider")
	}
	if err := tok.Verify(s.cfg.IdentityProviders[i].Key); err != nil {
		return bad("the ID-JAG's signature does not verify")
	}
	now := s.now()
	exp, ok1 := claims["exp"].(float64)
	iat, ok2 := claims["iat"].(float64)
	expT := time.Unix(int64(exp), 0)
	if !ok1 || !ok2 || now.After(expT.Add(idjagLeeway)) || time.Unix(int64(iat), 0).After(now.Add(idjagLeeway)) {
		return bad("the ID-JAG is expired or not yet valid")
	}
	if aud, _ := claims["aud"].(string); strings.TrimSuffix(aud, "/") != s.issuer {
		return bad("the ID-JAG is for another authorization server (aud)")
	}
	if cid, _ := claims["client_id"].(string); cid != c.id {
		return bad("the ID-JAG was issued to another client (client_id)")
	}
	res, _ := claims["resource"].(string)
	n, ok := normalizeResource(res)
	if _, known := s.resources[n]; !ok || !known {
		return nil, errorf(http.StatusBadRequest, "invalid_target", "the ID-JAG's resource is not a resource of this server")
	}
	jti, _ := claims["jti"].(string)
	if jti == "" || !s.idjagJTIs.use(iss+" "+jti, expT.Add(idjagLeeway), now) {
		return bad("the ID-JAG has no jti or was used before")
	}
	scopes := s.defScopes
	if sc, _ := claims["scope"].(string); sc != "" {
		scopes = strings.Fields(sc)
	}
	for _, sc := range scopes {
		if !slices.Contains(s.scopes, sc) {
			return nil, errorf(http.StatusBadRequest, "invalid_scope", "scope %q is not supported", sc)
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	g := &grant{id: randomToken("grant_"), clientID: c.id, resource: n, scopes: slices.Clone(scopes), jkt: jkt}
	s.grants[g.id] = g
	return s.issueLocked(g, now), nil
}

// grantTypes lists grant_types_supported: the JWT bearer grant only with
// identity providers.
func (s *Server) grantTypes() []string {
	g := []string{"authorization_code", "refresh_token"}
	if len(s.cfg.IdentityProviders) > 0 {
		g = append(g, GrantJWTBearer)
	}
	return g
}
