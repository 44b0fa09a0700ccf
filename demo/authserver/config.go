package authserver

import (
	"log/slog"
	"net/http"
	"time"

	"github.com/mcpwasm/mcpwasm/demo/cors"
)

// Scopes of the demo. [ScopeTools] is what a client needs to use the demo
// MCP server at all; [ScopeAdmin] is the extra scope a step-up test asks
// for (see demo.Protection.ToolScopes).
const (
	ScopeTools = "mcp:tools"
	ScopeAdmin = "mcp:admin"
)

// Token endpoint client authentication methods (RFC 7591 §2).
const (
	AuthNone              = "none"
	AuthClientSecretBasic = "client_secret_basic"
	AuthClientSecretPost  = "client_secret_post"
)

// Defaults of [Config].
const (
	DefaultAccessTokenTTL  = time.Hour
	DefaultRefreshTokenTTL = 30 * 24 * time.Hour
	DefaultCodeTTL         = 60 * time.Second
	DefaultConsentTTL      = 10 * time.Minute
	DefaultSubject         = "demo-user"
)

// Config configures [New]. Issuer and Resources are required; every other
// field has a usable zero value.
type Config struct {
	// Issuer is the server's own origin URL, for example
	// "http://127.0.0.1:8082": scheme and host (with port), no path, query
	// or fragment. It is the RFC 8414 issuer, the "iss" of authorization
	// responses (RFC 9207) and the base of every endpoint URL.
	Issuer string

	// Resources are the canonical URIs (RFC 8707) of the protected
	// resources the server issues tokens for, for example
	// "http://127.0.0.1:8081/mcp". An authorization request must name
	// exactly one of them in its resource parameter. Scheme and host are
	// compared case-insensitively, the rest exactly.
	Resources []string

	// Scopes are the scopes the server supports (scopes_supported). Zero
	// means [ScopeTools] and [ScopeAdmin]. A request for any other scope
	// fails with invalid_scope.
	Scopes []string

	// DefaultScopes are granted when an authorization request has no
	// scope parameter. Zero means [ScopeTools] (when supported).
	DefaultScopes []string

	// Clients are pre-registered clients, in addition to those registered
	// dynamically.
	Clients []Client

	// AccessTokenTTL is the access-token lifetime. Zero means
	// [DefaultAccessTokenTTL] (1 h).
	AccessTokenTTL time.Duration
	// RefreshTokenTTL is the lifetime of a refresh token (each rotation
	// starts a new one). Zero means [DefaultRefreshTokenTTL] (30 days).
	RefreshTokenTTL time.Duration
	// CodeTTL is the authorization-code lifetime. Zero means
	// [DefaultCodeTTL] (60 s).
	CodeTTL time.Duration
	// ConsentTTL is how long a consent page stays usable. Zero means
	// [DefaultConsentTTL] (10 min).
	ConsentTTL time.Duration

	// AutoApprove approves valid authorization requests at once, without a
	// consent page (for automated tests that do not click).
	AutoApprove bool

	// COOP makes the responses of /authorize and /consent (the consent
	// page, error pages and their redirects) send
	// Cross-Origin-Opener-Policy: same-origin, which severs window.opener
	// of a popup that reaches them. A test switch.
	COOP bool

	// NoMetadata serves no metadata at all (MetadataPath is 404 too), as
	// an authorization server behind some gateways: a client must be
	// given its endpoints by hand.
	NoMetadata bool

	// ServeOpenIDConfiguration also serves the metadata at
	// /.well-known/openid-configuration. By default that path is 404, as
	// on a plain OAuth server.
	ServeOpenIDConfiguration bool

	// ClientIDMetadataDocuments advertises and accepts client ID metadata
	// documents (draft-ietf-oauth-client-id-metadata-document): a client_id
	// that is an https URL (or an http loopback URL) is fetched and its
	// JSON document used as the client's registration. Off by default.
	ClientIDMetadataDocuments bool

	// DPoP makes the server issue DPoP-bound tokens only (RFC 9449): it
	// advertises dpop_signing_alg_values_supported ["ES256"], a token
	// request needs a DPoP proof carrying the server's nonce (else 400
	// invalid_dpop_proof, or use_dpop_nonce with DPoP-Nonce), the tokens
	// (token_type DPoP) are bound to the proof's key, and a refresh must
	// be signed by the same key. Off by default: Bearer tokens.
	DPoP bool
	// IdentityProviders are the enterprise identity providers whose
	// ID-JAGs the JWT bearer grant takes (enterprise-managed
	// authorization); none: that grant is unsupported.
	IdentityProviders []IdentityProvider

	// HTTPClient fetches client ID metadata documents. Nil means a client
	// with a 5 s timeout.
	HTTPClient *http.Client

	// Subject is the user every grant belongs to (TokenInfo.UserID). Empty
	// means [DefaultSubject].
	Subject string

	// CORS configures the CORS middleware of the metadata, registration,
	// token and revocation endpoints. The zero value allows any origin.
	CORS cors.Options

	// OnEvent, if set, is called for each event (see [Event]), from request
	// goroutines; it must be safe for concurrent use and must not call back
	// into the server's handlers. [Server.Count] and [Server.Events] work
	// without it.
	OnEvent func(Event)

	// Logger receives one line per request outcome, never a secret. Nil
	// discards.
	Logger *slog.Logger

	// Now is the clock; nil means time.Now. For tests.
	Now func() time.Time
}

// Client is a pre-registered client.
type Client struct {
	ID string
	// Secret is required for the client_secret_* methods and must be empty
	// for "none".
	Secret string
	// AuthMethod is the token endpoint authentication method; empty means
	// "none" (a public client).
	AuthMethod   string
	RedirectURIs []string
	Name         string
}

// Event kinds.
const (
	EventRegister      = "register"       // a POST /register (Err set when refused)
	EventAuthorize     = "authorize"      // a GET /authorize (Err set when refused)
	EventConsent       = "consent"        // a consent decision; Detail "approve" or "deny" (Err set when refused)
	EventTokenCode     = "token_code"     // a token request with grant_type=authorization_code
	EventTokenRefresh  = "token_refresh"  // a token request with grant_type=refresh_token
	EventTokenOther    = "token_other"    // any other token request (refused; see EventTokenIDJAG)
	EventCodeReuse     = "code_reuse"     // a used code came back: its grant was revoked
	EventRefreshReuse  = "refresh_reuse"  // a rotated refresh token came back: its grant was revoked
	EventRevoke        = "revoke"         // a POST /revoke; Detail "revoked" or "unknown"
	EventVerify        = "verify"         // a bearer token checked by a Verifier (Err set when refused)
	EventMetadata      = "metadata"       // a GET of the authorization-server metadata
	EventClientMetadoc = "client_metadoc" // a client ID metadata document fetched
)

// Event is one observable thing the server did, for tests. It never holds a
// secret (token, code, verifier, client secret).
type Event struct {
	Kind     string
	ClientID string
	// Err is the OAuth error code when the request was refused, else "".
	Err string
	// Detail is a short, non-secret explanation.
	Detail string
	Time   time.Time
}
