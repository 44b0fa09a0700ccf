package oauth

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"fmt"
	"net/url"
	"slices"
	"strings"

	"github.com/mcpwasm/mcpwasm/mcperr"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"golang.org/x/oauth2"
)

// ClientCredentials selects the client credentials grant (RFC 6749 §4.4;
// MCP extension io.modelcontextprotocol/oauth-client-credentials) for the
// pre-registered client Config.ClientID: no user, no authorization code
// flow. The client authenticates with client_secret_basic
// (Config.ClientSecret) or private_key_jwt (PrivateKey, RFC 7523 §2.2),
// whichever the authorization server lists in
// token_endpoint_auth_methods_supported (private_key_jwt first when both
// are possible). For servers, not pages: a secret or key in a page is
// public.
type ClientCredentials struct {
	// PrivateKey signs the private_key_jwt client assertions (ES256): an
	// *ecdsa.PrivateKey on P-256, or any crypto.Signer with such a public
	// key. Optional when Config.ClientSecret is set.
	PrivateKey crypto.Signer
	// KeyID, when set, is the kid of the assertions' header.
	KeyID string
}

// WorkloadIdentity selects the JWT bearer grant (RFC 7523 §2.1; MCP
// extension io.modelcontextprotocol/auth/wif) with a credential the
// workload's platform issued (audience: the authorization server).
// Config.ClientID, when set, is sent as client_id. Each sign-in makes
// exactly one token request: an error (invalid_grant, invalid_scope,
// unauthorized_client, …) is returned as it is, never retried and never
// followed by another grant; the server's refusal stands (without another
// request) until [Handler.Login].
type WorkloadIdentity struct {
	// Assertion returns the workload's JWT; called for each token request.
	// Required.
	Assertion func(ctx context.Context) (string, error)
}

// EnterpriseAuth selects enterprise-managed authorization (SEP-990): the
// user's identity assertion from single sign-on is exchanged at the
// enterprise identity provider for an identity assertion JWT authorization
// grant (ID-JAG; RFC 8693 token exchange), which the client presents to
// the MCP authorization server in the JWT bearer grant (RFC 7523 §2.1):
// signed in without a browser round trip. The client at the MCP
// authorization server is Config.ClientID (with Config.ClientSecret by
// client_secret_basic when set).
type EnterpriseAuth struct {
	// IdentityAssertion returns the user's identity assertion (by default
	// an OpenID Connect ID token whose audience is IdPClientID); called
	// for each sign-in. Required.
	IdentityAssertion func(ctx context.Context) (string, error)
	// IdPTokenEndpoint is the identity provider's token endpoint. Either
	// it or IdPIssuer is required.
	IdPTokenEndpoint string
	// IdPIssuer is the identity provider's issuer; its token endpoint is
	// discovered (OpenID Connect discovery, then RFC 8414) when
	// IdPTokenEndpoint is empty.
	IdPIssuer string
	// IdPClientID is this client's ID at the identity provider. Required.
	IdPClientID string
	// IdPClientSecret, when set, authenticates IdPClientID at the identity
	// provider (client_secret_basic).
	IdPClientSecret string
	// SubjectTokenType is the RFC 8693 type of the identity assertion.
	// Default urn:ietf:params:oauth:token-type:id_token.
	SubjectTokenType string
}

// The grant types and token types of the non-interactive grants.
const (
	grantClientCredentials = "client_credentials"
	grantJWTBearer         = "urn:ietf:params:oauth:grant-type:jwt-bearer"
	assertionTypeJWT       = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"
)

// grantKind names the configured non-interactive grant, "" for none.
func (c *Config) grantKind() string {
	switch {
	case c.ClientCredentials != nil:
		return "ClientCredentials"
	case c.WorkloadIdentity != nil:
		return "WorkloadIdentity"
	case c.EnterpriseAuth != nil:
		return "EnterpriseAuth"
	}
	return ""
}

// validateGrant checks the non-interactive grant fields of c; the errors
// name the field that is missing or wrong.
func (c *Config) validateGrant() error {
	n := 0
	for _, set := range []bool{c.ClientCredentials != nil, c.WorkloadIdentity != nil, c.EnterpriseAuth != nil} {
		if set {
			n++
		}
	}
	if n > 1 {
		return badConfig("set at most one of Config.ClientCredentials, Config.WorkloadIdentity and Config.EnterpriseAuth")
	}
	kind := c.grantKind()
	if kind == "" {
		return nil
	}
	if c.ClientMetadataURL != "" {
		return badConfig("Config.ClientMetadataURL is for the authorization code flow; leave it empty with Config." + kind)
	}
	switch {
	case c.ClientCredentials != nil:
		return c.validateClientCredentials()
	case c.WorkloadIdentity != nil:
		return c.validateWorkloadIdentity()
	case c.EnterpriseAuth != nil:
		return c.validateEnterpriseAuth()
	}
	return nil
}

// validateClientCredentials checks what the client credentials grant needs:
// the pre-registered client and a way for it to authenticate (a secret, or
// a key ES256 can sign with).
func (c *Config) validateClientCredentials() error {
	cc := c.ClientCredentials
	if c.ClientID == "" {
		return badConfig("Config.ClientCredentials needs Config.ClientID (the pre-registered client)")
	}
	if c.ClientSecret == "" && cc.PrivateKey == nil {
		return badConfig("Config.ClientCredentials needs Config.ClientSecret (client_secret_basic) or ClientCredentials.PrivateKey (private_key_jwt)")
	}
	if cc.PrivateKey != nil {
		if pub, ok := cc.PrivateKey.Public().(*ecdsa.PublicKey); !ok || pub.Curve != elliptic.P256() {
			return badConfig("ClientCredentials.PrivateKey must be an ECDSA P-256 key (ES256)")
		}
	}
	return nil
}

// validateWorkloadIdentity checks the workload identity grant: an assertion
// source, and no client secret (the assertion alone authenticates).
func (c *Config) validateWorkloadIdentity() error {
	if c.WorkloadIdentity.Assertion == nil {
		return badConfig("Config.WorkloadIdentity needs Assertion (the function returning the workload's JWT)")
	}
	if c.ClientSecret != "" {
		return badConfig("Config.WorkloadIdentity authenticates with its assertion alone; leave Config.ClientSecret empty")
	}
	return nil
}

// validateEnterpriseAuth checks enterprise-managed authorization: the
// identity assertion, the identity provider (reachable by an https URL) and
// the client IDs at both ends of the exchange.
func (c *Config) validateEnterpriseAuth() error {
	ea := c.EnterpriseAuth
	switch {
	case ea.IdentityAssertion == nil:
		return badConfig("Config.EnterpriseAuth needs IdentityAssertion (the function returning the user's ID token from single sign-on)")
	case ea.IdPTokenEndpoint == "" && ea.IdPIssuer == "":
		return badConfig("Config.EnterpriseAuth needs IdPTokenEndpoint or IdPIssuer (the identity provider that issues the ID-JAG)")
	case ea.IdPClientID == "":
		return badConfig("Config.EnterpriseAuth needs IdPClientID (this client's ID at the identity provider)")
	case c.ClientID == "":
		return badConfig("Config.EnterpriseAuth needs Config.ClientID (this client's ID at the MCP authorization server)")
	}
	if ea.IdPTokenEndpoint != "" {
		if err := checkEndpoint("EnterpriseAuth.IdPTokenEndpoint", ea.IdPTokenEndpoint); err != nil {
			return badConfig("Config.EnterpriseAuth.IdPTokenEndpoint must be an https URL (or http on loopback)")
		}
	}
	if ea.IdPIssuer != "" {
		if err := checkEndpoint("EnterpriseAuth.IdPIssuer", ea.IdPIssuer); err != nil {
			return badConfig("Config.EnterpriseAuth.IdPIssuer must be an https URL (or http on loopback)")
		}
	}
	return nil
}

// loginGrant obtains a grant by the configured non-interactive grant, in
// place of the authorization code flow: discovery (cached), the scopes as
// for a sign-in, the grant's token request(s), and the grant stored like
// any other.
//
// A workload identity grant makes one token request per [Handler.Login]:
// when the server refuses it, that error is returned without another
// request until the next Login (the workload's credential would be
// refused again; the extension forbids retries and fallbacks).
func (h *Handler) loginGrant(ctx context.Context, ch challenge, stepUp bool) error {
	h.mu.Lock()
	refused := h.refused
	h.mu.Unlock()
	if refused != nil {
		return refused
	}
	pctx, cancel := context.WithTimeout(ctx, h.cfg.AuthTimeout)
	defer cancel()
	g, err := h.obtainGrant(pctx, ch, stepUp)
	if err != nil {
		var re *oauth2.RetrieveError
		if h.cfg.WorkloadIdentity != nil && asRetrieve(err, &re) {
			h.mu.Lock()
			h.refused = err
			h.mu.Unlock()
		}
		return h.phaseErr(ctx, pctx, err, "the token request")
	}
	if err := h.cfg.Store.PutGrant(ctx, g); err != nil {
		return newErr(mcperr.Storage, "storing grant", err)
	}
	h.mu.Lock()
	h.grant, h.loaded = g, true
	h.fresh, h.freshAt = g.AccessToken, h.now()
	h.mu.Unlock()
	return nil
}

func (h *Handler) obtainGrant(ctx context.Context, ch challenge, stepUp bool) (*Grant, error) {
	d, err := h.discover(ctx, ch.prmURL)
	if err != nil {
		return nil, err
	}
	scopes, err := h.scopesFor(d, ch, stepUp)
	if err != nil {
		return nil, err
	}
	g := &Grant{
		Resource:           h.resource,
		Issuer:             d.AS.Issuer,
		Scopes:             scopes,
		TokenEndpoint:      d.AS.TokenEndpoint,
		RevocationEndpoint: d.AS.RevocationEndpoint,
		ResourceIndicator:  d.Resource,
	}
	form := url.Values{"resource": {d.Resource}}
	if len(scopes) > 0 {
		form.Set("scope", strings.Join(scopes, " "))
	}
	cl, err := h.grantParams(ctx, d, scopes, form)
	if err != nil {
		return nil, err
	}
	// DPoP as for a sign-in: the token is bound to the registration's key.
	dpop, err := useDPoP(h.cfg.DPoP, d.AS.Issuer, d.DPoPAlgs)
	if err != nil {
		return nil, err
	}
	var key DPoPKey
	if dpop {
		g.DPoPKeyID = dpopKeyID(d.AS.Issuer, cl.id)
		if key, err = storedDPoPKey(ctx, h.cfg.DPoPKeys, g.DPoPKeyID); err != nil {
			return nil, err
		}
	}
	tr, err := h.tokenRequest(ctx, d.AS.TokenEndpoint, cl, form, key)
	if err != nil {
		var re *oauth2.RetrieveError
		if asRetrieve(err, &re) && re.ErrorCode == "unsupported_grant_type" {
			return nil, &Error{Code: mcperr.TokenFailed, Msg: fmt.Sprintf("oauth: authorization server %q does not support the %s grant", sanitize(d.AS.Issuer), form.Get("grant_type")), Err: re}
		}
		return nil, err
	}
	if g.TokenType, err = grantTokenType(tr.TokenType, key != nil, h.cfg.DPoP == DPoPOn); err != nil {
		return nil, err
	}
	if g.TokenType != "DPoP" {
		g.DPoPKeyID = ""
	}
	g.AccessToken = tr.AccessToken
	g.Expiry, g.IssuedAt = tr.expiry, tr.issued
	g.ClientID, g.ClientSecret, g.AuthMethod = cl.id, cl.secret, cl.method
	// A refresh authenticates as the grant's client; a private_key_jwt
	// client would need a fresh assertion there, so it obtains a new
	// grant instead.
	if cl.method != "private_key_jwt" {
		g.RefreshToken = tr.RefreshToken
	}
	if tr.Scope != "" {
		g.Scopes = strings.Fields(tr.Scope)
	}
	return g, nil
}

// grantParams adds the configured grant's parameters (grant type,
// assertion, client assertion) to the token request form and returns the
// client that authenticates the request. Each grant is first checked
// against the authorization server's grant_types_supported, so that a
// grant it rules out fails with a clear error instead of a refusal.
func (h *Handler) grantParams(ctx context.Context, d *discovery, scopes []string, form url.Values) (clientCreds, error) {
	switch {
	case h.cfg.ClientCredentials != nil:
		if err := supportsGrant(d.AS, grantClientCredentials, "the client credentials grant"); err != nil {
			return clientCreds{}, err
		}
		form.Set("grant_type", grantClientCredentials)
		return h.clientCredentialsAuth(d.AS)
	case h.cfg.WorkloadIdentity != nil:
		if err := supportsGrant(d.AS, grantJWTBearer, "the JWT bearer grant (workload identity)"); err != nil {
			return clientCreds{}, err
		}
		a, err := h.cfg.WorkloadIdentity.Assertion(ctx)
		if err != nil {
			return clientCreds{}, newErr(mcperr.AuthRequired, "the workload identity assertion is not available", redactCallerError(err, a))
		}
		if a == "" {
			return clientCreds{}, newErr(mcperr.AuthRequired, "the workload identity assertion is empty", nil)
		}
		form.Set("grant_type", grantJWTBearer)
		form.Set("assertion", a)
		return clientCreds{id: h.cfg.ClientID, method: "none"}, nil
	case h.cfg.EnterpriseAuth != nil:
		if err := supportsGrant(d.AS, grantJWTBearer, "the JWT bearer grant (enterprise-managed authorization)"); err != nil {
			return clientCreds{}, err
		}
		jag, err := h.exchangeIDJAG(ctx, d, scopes)
		if err != nil {
			return clientCreds{}, err
		}
		form.Set("grant_type", grantJWTBearer)
		form.Set("assertion", jag)
		return h.preregistered(d.AS), nil
	}
	return clientCreds{}, newErr(mcperr.InvalidArgument, "no non-interactive grant configured", nil)
}

// supportsGrant checks that the authorization server does not rule out
// grantType (an empty grant_types_supported rules out nothing).
func supportsGrant(asm *oauthex.AuthServerMeta, grantType, what string) error {
	if len(asm.GrantTypesSupported) == 0 || slices.Contains(asm.GrantTypesSupported, grantType) {
		return nil
	}
	return newErr(mcperr.TokenFailed, fmt.Sprintf("authorization server %q does not support %s: its grant_types_supported (%s) lacks %s",
		sanitize(asm.Issuer), what, sanitizeList(asm.GrantTypesSupported), grantType), nil)
}

// clientCredentialsAuth picks the client authentication of the client
// credentials grant: private_key_jwt (adding the assertion to form) or
// client_secret_basic, from what the server lists and the config holds.
func (h *Handler) clientCredentialsAuth(asm *oauthex.AuthServerMeta) (clientCreds, error) {
	sup := asm.TokenEndpointAuthMethodsSupported
	// RFC 8414 §2: an absent list means client_secret_basic.
	listed := func(m string) bool { return slices.Contains(sup, m) || (len(sup) == 0 && m == "client_secret_basic") }
	key := h.cfg.ClientCredentials.PrivateKey
	switch {
	case key != nil && listed("private_key_jwt"):
		if algs := asm.TokenEndpointAuthSigningAlgValuesSupported; len(algs) > 0 && !slices.Contains(algs, "ES256") {
			return clientCreds{}, newErr(mcperr.TokenFailed, fmt.Sprintf("authorization server %q takes private_key_jwt but not ES256 (token_endpoint_auth_signing_alg_values_supported: %s)",
				sanitize(asm.Issuer), sanitizeList(algs)), nil)
		}
		kid, id, issuer := h.cfg.ClientCredentials.KeyID, h.cfg.ClientID, asm.Issuer
		assertion := func() (string, error) { return clientAssertion(key, kid, id, issuer, h.now()) }
		return clientCreds{id: id, method: "private_key_jwt", assertion: assertion}, nil
	case h.cfg.ClientSecret != "" && listed("client_secret_basic"):
		return clientCreds{id: h.cfg.ClientID, secret: h.cfg.ClientSecret, method: "client_secret_basic"}, nil
	}
	var have []string
	if key != nil {
		have = append(have, "private_key_jwt (ClientCredentials.PrivateKey)")
	}
	if h.cfg.ClientSecret != "" {
		have = append(have, "client_secret_basic (Config.ClientSecret)")
	}
	return clientCreds{}, newErr(mcperr.TokenFailed, fmt.Sprintf("authorization server %q takes none of the client authentication methods configured: it lists %s; this client has %s",
		sanitize(asm.Issuer), sanitizeList(sup), strings.Join(have, " and ")), nil)
}

// redactCallerError keeps an embedder's callback error but never a secret
// it might quote.
func redactCallerError(err error, secrets ...string) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("%s", sanitize(redactSecrets(err.Error(), secrets...)))
}
