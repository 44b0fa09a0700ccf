package oauth

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/mcpwasm/mcpwasm/mcperr"
)

// Config configures a [Handler]. Only ResourceURL, HTTPClient and
// RedirectURL are required (RedirectURL not with a non-interactive grant).
type Config struct {
	// ResourceURL is the MCP endpoint (canonical server URI, RFC 8707); it
	// keys the stored grant. Required; https, or http on a loopback host.
	ResourceURL string
	// HTTPClient performs every request (discovery, registration, token,
	// revocation). Required; http.DefaultClient is never used. Under
	// GOOS=js its transport must not set DialContext so that fetch is used.
	HTTPClient *http.Client
	// RedirectURL is the callback URL registered with the authorization
	// server and sent as redirect_uri. Required, except with a
	// non-interactive grant (ClientCredentials, WorkloadIdentity,
	// EnterpriseAuth), which has no redirect.
	RedirectURL string
	// ClientName is the client_name for dynamic registration.
	ClientName string
	// ApplicationType is the application_type of a dynamic registration
	// (SEP-837, OpenID Connect Registration §2). Empty: "native" with an
	// http loopback or private-use-scheme redirect URI (a page served from
	// http loopback during development: §2 names such redirects for native
	// clients, and some servers, Better Auth among them, take them from no
	// other kind), else "web" (a page on https).
	ApplicationType string
	// Scopes, when set, replaces the scopes discovered from the challenge
	// and the resource metadata.
	Scopes []string
	// ClientID and ClientSecret describe a pre-registered client. The
	// secret is optional (public client); it is not secret in a browser.
	ClientID     string
	ClientSecret string
	// Endpoints gives the authorization server's endpoints by hand, for a
	// server whose metadata cannot be discovered (it publishes no RFC 9728,
	// RFC 8414 or OpenID metadata, as behind some gateways). With it no
	// metadata is fetched: the handler signs in at these endpoints as the
	// pre-registered client ClientID, with the scopes of Scopes or the
	// server's challenge. Endpoints and ClientID go together, as a set; it
	// is for the authorization code flow only.
	Endpoints *Endpoints
	// ClientMetadataURL is this client's ID metadata document URL (used
	// as client_id when the AS advertises client_id_metadata_document_supported).
	// Must be an https URL with a path. There is no fallback: when such an
	// AS then rejects the document at the authorize or token step (e.g. it
	// cannot fetch it), the flow fails; ClientID or dynamic registration
	// are used only when the AS does not advertise the support.
	ClientMetadataURL string
	// ClientCredentials, WorkloadIdentity and EnterpriseAuth (at most one)
	// select a non-interactive grant, used instead of the authorization
	// code flow whenever the handler needs a token (a 401, Login, a token
	// expiring without a refresh token); no Courier is involved, and
	// Interactive does not apply. The grant obtained is stored like any
	// other.
	ClientCredentials *ClientCredentials
	WorkloadIdentity  *WorkloadIdentity
	EnterpriseAuth    *EnterpriseAuth
	// DPoP selects DPoP-bound tokens (RFC 9449). Default [DPoPAuto].
	DPoP DPoPMode
	// DPoPKeys keeps the proof keys, one per client registration.
	// Default: keys in memory.
	DPoPKeys DPoPKeys
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
	// RefreshMargin refreshes that long before expiry, or at half the
	// token's lifetime when that is later (short-lived tokens). Default 60 s.
	RefreshMargin time.Duration
	// MetadataTTL is how long discovery results are cached. Default 1 h.
	MetadataTTL time.Duration
	// TrustIssuer, when set, is asked about every authorization server
	// before the handler sends it anything: an issuer named by protected
	// resource metadata before its metadata is fetched, an issuer found on
	// the MCP origin or in the cache before its endpoints are used, and a
	// stored grant's issuer before its tokens are used. An error ends the
	// sign-in or refresh with it (hostpolicy's refusal keeps its code): no
	// redirect, popup, registration or token request follows; a stored
	// grant it refuses is taken for none.
	TrustIssuer func(issuer string) error
	// OnEvent, when set, receives state changes and refreshes. It is
	// called synchronously and must not block or call back into the
	// Handler. Events carry no secrets.
	OnEvent func(Event)
}

// Endpoints are an authorization server's endpoints given by hand
// ([Config.Endpoints]), each https or http on a loopback host.
type Endpoints struct {
	// Authorization and Token are required.
	Authorization string
	Token         string
	// Revocation is optional: without it, a sign-out forgets the tokens
	// without revoking them.
	Revocation string
}

// ManualSetMessage is the refusal of a partial manual configuration: the
// client ID and the authorization and token endpoints go together.
const ManualSetMessage = "Config.ClientID, Config.Endpoints.Authorization and Config.Endpoints.Token configure the authorization server by hand and go together: set all three, or leave Config.Endpoints unset to discover the server"

// CheckResourceURL reports whether an MCP server URL can be a protected
// resource this package signs in to: absolute https (or http on loopback),
// without query or fragment (RFC 8707 section 2). A client may still talk to
// other URLs, without OAuth.
func CheckResourceURL(raw string) error {
	ru, err := url.Parse(raw)
	if err != nil || checkEndpoint("ResourceURL", raw) != nil {
		return badConfig("the MCP server URL must be https (or http on loopback) to sign in to it")
	}
	if ru.RawQuery != "" || ru.Fragment != "" {
		return badConfig("the MCP server URL must have no query or fragment to sign in to it (RFC 8707)")
	}
	return nil
}

// New validates cfg and returns a Handler.
func New(cfg Config) (*Handler, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	cfg.setDefaults()
	cfg.Scopes = slices.Clone(cfg.Scopes)
	// Canonical form: lower-case scheme and host, no fragment.
	ru, _ := url.Parse(cfg.ResourceURL) // checked by validate
	ru.Scheme = strings.ToLower(ru.Scheme)
	ru.Host = strings.ToLower(ru.Host)
	ru.Fragment = ""
	h := &Handler{cfg: cfg, resource: ru.String(), attempts: map[string]int{}, state: StateNeedsAuth}
	cfg.Registry.register(h)
	return h, nil
}

// badConfig is the error for a configuration New refuses: invalid_argument,
// with msg naming the field at fault.
func badConfig(msg string) error { return newErr(mcperr.InvalidArgument, msg, nil) }

// validate reports the first field of c that New refuses (missing,
// malformed, or contradicting another field), checking in a fixed order so
// that a config with several problems always gets the same error; the
// non-interactive grant's fields come last, from validateGrant.
func (c *Config) validate() error {
	if c.HTTPClient == nil {
		return badConfig("Config.HTTPClient is required")
	}
	if err := CheckResourceURL(c.ResourceURL); err != nil {
		return err
	}
	if c.RedirectURL != "" || c.grantKind() == "" {
		if u, err := url.Parse(c.RedirectURL); err != nil || !u.IsAbs() || u.Fragment != "" {
			return badConfig("Config.RedirectURL must be an absolute URL without fragment")
		}
	}
	switch c.ApplicationType {
	case "", "web", "native":
	default:
		return badConfig(fmt.Sprintf("Config.ApplicationType %q must be \"web\", \"native\" or empty", sanitize(c.ApplicationType)))
	}
	switch c.DPoP {
	case "", DPoPAuto, DPoPOn, DPoPOff:
	default:
		return badConfig(fmt.Sprintf("Config.DPoP %q must be %q, %q or %q", sanitize(string(c.DPoP)), DPoPAuto, DPoPOn, DPoPOff))
	}
	if c.ClientSecret != "" && c.ClientID == "" {
		return badConfig("Config.ClientSecret needs Config.ClientID")
	}
	if c.ClientMetadataURL != "" {
		u, err := url.Parse(c.ClientMetadataURL)
		if err != nil || u.Scheme != "https" || u.Host == "" || strings.Trim(u.Path, "/") == "" {
			return badConfig("Config.ClientMetadataURL must be an https URL with a path")
		}
	}
	if err := c.validateEndpoints(); err != nil {
		return err
	}
	return c.validateGrant()
}

// validateEndpoints checks a manual configuration: the whole set, each
// endpoint a URL a token may be sent to, and nothing that needs metadata.
func (c *Config) validateEndpoints() error {
	e := c.Endpoints
	if e == nil {
		return nil
	}
	if c.ClientID == "" || e.Authorization == "" || e.Token == "" {
		return badConfig(ManualSetMessage)
	}
	for _, f := range []struct{ name, v string }{
		{"Config.Endpoints.Authorization", e.Authorization},
		{"Config.Endpoints.Token", e.Token},
		{"Config.Endpoints.Revocation", e.Revocation},
	} {
		if f.v == "" {
			continue
		}
		if err := checkEndpoint(f.name, f.v); err != nil {
			return badConfig(err.Error())
		}
	}
	if c.ClientMetadataURL != "" {
		return badConfig("Config.ClientMetadataURL needs the authorization server's metadata, which Config.Endpoints stands in for: leave one of them empty")
	}
	if kind := c.grantKind(); kind != "" {
		return badConfig("Config.Endpoints is for the authorization code flow; leave it empty with Config." + kind)
	}
	return nil
}

// setDefaults fills the optional fields left unset (zero or negative) with
// the defaults the Config fields document.
func (c *Config) setDefaults() {
	if c.Store == nil {
		c.Store = NewMemoryStore()
	}
	if c.Registry == nil {
		c.Registry = NewRegistry()
	}
	if c.Locker == nil {
		c.Locker = NewMutexLocker()
	}
	if c.Clock == nil {
		c.Clock = realClock{}
	}
	if c.AuthTimeout <= 0 {
		c.AuthTimeout = 5 * time.Minute
	}
	if c.RefreshMargin <= 0 {
		c.RefreshMargin = time.Minute
	}
	if c.MetadataTTL <= 0 {
		c.MetadataTTL = time.Hour
	}
}
