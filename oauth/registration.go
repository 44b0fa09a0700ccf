package oauth

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/oauthex"

	"github.com/mcpwasm/mcpwasm/mcperr"
)

// clientCreds is a resolved client.
type clientCreds struct {
	id, secret, method string
	// assertion signs a private_key_jwt client assertion: one per
	// request sent, a retry included, since a jti is single-use (RFC 7523
	// §3) and an authorization server may refuse one it has seen.
	assertion func() (string, error)
}

// resolveClient picks the client for a sign-in asking for scopes, in the
// order that avoids registering clients at the server needlessly: a
// client ID metadata document (when the authorization server supports
// them), a pre-registered client, a cached dynamic registration, and last
// a new one (RFC 7591). Registering again on every sign-in would leak
// clients at the server; a cached registration is replaced only when its
// secret expired or the sign-in needs a scope it did not register (an
// authorization server may hold a client to its registered scopes).
func (h *Handler) resolveClient(ctx context.Context, d *discovery, scopes []string) (clientCreds, error) {
	asm := d.AS
	if h.cfg.ClientMetadataURL != "" && asm.ClientIDMetadataDocumentSupported {
		return clientCreds{id: h.cfg.ClientMetadataURL, method: "none"}, nil
	}
	if h.cfg.ClientID != "" {
		return h.preregistered(asm), nil
	}
	if asm.RegistrationEndpoint == "" {
		return clientCreds{}, noRegistration(asm)
	}
	reg, err := h.cfg.Store.GetClient(ctx, asm.Issuer, h.cfg.RedirectURL)
	if err != nil {
		return clientCreds{}, newErr(mcperr.Storage, "reading client registration", err)
	}
	// A public client has no secret to expire: whatever
	// client_secret_expires_at said, it is reused.
	expired := reg != nil && reg.ClientSecret != "" && !reg.SecretExpiry.IsZero() && !h.now().Before(reg.SecretExpiry)
	narrow := reg != nil && widens(reg.Scopes, scopes)
	if reg == nil || expired || narrow {
		want := registrationScopes(d, scopes)
		if narrow {
			want = union(reg.Scopes, want)
		}
		if reg, err = h.register(ctx, asm, want); err != nil {
			return clientCreds{}, guessed(d, err)
		}
	}
	return clientCreds{id: reg.ClientID, secret: reg.ClientSecret, method: reg.AuthMethod}, nil
}

// guessed tells, in err, that the endpoint that failed was not discovered
// but guessed (the 2025-03-26 defaults), and what configures it by hand.
func guessed(d *discovery, err error) error {
	var e *Error
	if d.Source != sourceDefaults || !errors.As(err, &e) {
		return err
	}
	return newErr(e.Code, "the server publishes no OAuth metadata (RFC 9728, RFC 8414 or OpenID), and the 2025-03-26 default endpoints on its origin failed"+manualHint, err)
}

// registrationScopes are the scopes a new registration asks for: the
// sign-in's, and those of the resource's metadata it may ask for later
// (step-up) that the authorization server lists as supported (all of them
// when it lists none), so a server that holds a client to its registered
// scopes lets it ask for them.
func registrationScopes(d *discovery, scopes []string) []string {
	out := slices.Clone(scopes)
	for _, s := range d.ScopesSupported {
		if sup := d.AS.ScopesSupported; len(sup) == 0 || slices.Contains(sup, s) {
			out = union(out, []string{s})
		}
	}
	return out
}

// maxRegisteredScopes bounds the scopes a registration asks for, so
// that a resource naming new scopes does not grow it without end.
const maxRegisteredScopes = 32

// widens reports whether a sign-in asking for scopes needs a registration
// wider than one that asked for registered, while the registration stays
// within maxRegisteredScopes: an authorization server may not list the
// scopes it holds a client to (Hydra lists only its own), and a resource
// naming new scopes on every sign-in costs at most that many.
func widens(registered, scopes []string) bool {
	return !subset(scopes, registered) && len(union(registered, scopes)) <= maxRegisteredScopes
}

// subset reports whether every scope of a is in b.
func subset(a, b []string) bool {
	for _, s := range a {
		if !slices.Contains(b, s) {
			return false
		}
	}
	return true
}

// preregistered describes the configured client; a secret goes by
// client_secret_basic (RFC 8414's default) unless the server takes only
// client_secret_post.
func (h *Handler) preregistered(asm *oauthex.AuthServerMeta) clientCreds {
	if h.cfg.ClientSecret == "" {
		return clientCreds{id: h.cfg.ClientID, method: "none"}
	}
	method := "client_secret_basic"
	sup := asm.TokenEndpointAuthMethodsSupported
	if len(sup) > 0 && !slices.Contains(sup, "client_secret_basic") && slices.Contains(sup, "client_secret_post") {
		method = "client_secret_post"
	}
	return clientCreds{id: h.cfg.ClientID, secret: h.cfg.ClientSecret, method: method}
}

// noRegistration is the error for a server that offers no way this client
// can use; it names what the embedder can configure.
func noRegistration(asm *oauthex.AuthServerMeta) error {
	var has []string
	if asm.ClientIDMetadataDocumentSupported {
		has = append(has, "client ID metadata documents (configure ClientMetadataURL)")
	}
	has = append(has, "pre-registered clients (configure ClientID)")
	return newErr(mcperr.RegistrationFailed, fmt.Sprintf(
		"no client registration method available: %q offers no dynamic client registration; it supports %s", sanitize(asm.Issuer), strings.Join(has, " and ")), nil)
}

// register registers a new client (RFC 7591) asking for scopes, checks
// the answer and caches it. A server that refuses the client's metadata
// while it asked for scopes is asked once more without them (RFC 7591
// §2: a server may then register a default set), for servers that take
// no scope at registration.
func (h *Handler) register(ctx context.Context, asm *oauthex.AuthServerMeta, scopes []string) (*ClientRegistration, error) {
	meta := h.registrationMetadata(asm, scopes)
	asked := meta.Scope
	resp, err := registerClient(ctx, h.cfg.HTTPClient, asm.RegistrationEndpoint, meta)
	if err != nil && meta.Scope != "" && refusedMetadata(err) && ctx.Err() == nil {
		meta.Scope = ""
		resp, err = registerClient(ctx, h.cfg.HTTPClient, asm.RegistrationEndpoint, meta)
	}
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, refusalWithFix(err, meta, asked)
	}
	reg, err := acceptRegistration(resp, meta.TokenEndpointAuthMethod, asm.RegistrationEndpoint)
	if err != nil {
		return nil, err
	}
	reg.Issuer, reg.RedirectURI, reg.Scopes = asm.Issuer, h.cfg.RedirectURL, slices.Clone(scopes)
	if err := h.cfg.Store.PutClient(ctx, reg); err != nil {
		return nil, newErr(mcperr.Storage, "storing client registration", err)
	}
	return reg, nil
}

// refusedMetadata reports whether err is a registration endpoint's
// refusal that the scope asked for may have caused: the client's metadata
// as a whole (RFC 7591 §3.2.2 invalid_client_metadata), or invalid_scope,
// which servers answer too though §3.2.2 does not name it.
func refusedMetadata(err error) bool {
	var se *ServerError
	return errors.As(err, &se) && (se.ErrorCode == "invalid_client_metadata" || se.ErrorCode == "invalid_scope")
}

// refusalWithFix adds to a registration endpoint's refusal of meta which
// field of this client's metadata it concerns and what the embedder can
// change; asked is the scope the first request asked for (meta's is ""
// when the refusal came to the request sent again without it).
func refusalWithFix(err error, meta *oauthex.ClientRegistrationMetadata, asked string) error {
	var e *Error
	var se *ServerError
	if !errors.As(err, &e) || !errors.As(err, &se) {
		return err
	}
	redirect := sanitize(strings.Join(meta.RedirectURIs, " "))
	var fix string
	switch se.ErrorCode {
	case "invalid_redirect_uri":
		fix = fmt.Sprintf("it refused the redirect URI %s, sent with application_type %q: serve the page (and its callback page) from an origin this server accepts (https, or http on loopback for a \"native\" client), or register a client with the server and pass its clientId", redirect, meta.ApplicationType)
	case "invalid_client_metadata", "invalid_scope":
		scope := fmt.Sprintf("scope %q", sanitize(asked))
		if asked != meta.Scope {
			scope = fmt.Sprintf("scope %q, and again without a scope", sanitize(asked))
		}
		fix = fmt.Sprintf("it refused this client's metadata (application_type %q, redirect URI %s, token_endpoint_auth_method %q, grant_types %q, %s): register a client with the server and pass its clientId", meta.ApplicationType, redirect, meta.TokenEndpointAuthMethod, strings.Join(meta.GrantTypes, " "), scope)
	default:
		return err
	}
	return &Error{Code: e.Code, Msg: e.Msg, Err: &withFix{err: e.Err, fix: fix}}
}

// withFix is an error followed by what to do about it.
type withFix struct {
	err error
	fix string
}

func (e *withFix) Error() string { return e.err.Error() + "; " + e.fix }
func (e *withFix) Unwrap() error { return e.err }

// registrationMetadata is what this client asks to be registered as: a
// public client when the server allows it, with refresh tokens when
// wanted, of the application type its redirect URI makes it, asking for
// scopes (RFC 7591 §2; none when empty).
func (h *Handler) registrationMetadata(asm *oauthex.AuthServerMeta, scopes []string) *oauthex.ClientRegistrationMetadata {
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
	return &oauthex.ClientRegistrationMetadata{
		RedirectURIs:            []string{h.cfg.RedirectURL},
		TokenEndpointAuthMethod: want,
		GrantTypes:              grants,
		ResponseTypes:           []string{"code"},
		ClientName:              h.cfg.ClientName,
		ApplicationType:         h.applicationType(),
		Scope:                   strings.Join(scopes, " "),
	}
}

// applicationType is Config.ApplicationType, or "native" with an http
// loopback or a private-use-scheme redirect URI (RFC 8252 §7.1, §7.3;
// OpenID Connect Registration §2 names these for native clients) and
// "web" otherwise.
func (h *Handler) applicationType() string {
	if h.cfg.ApplicationType != "" {
		return h.cfg.ApplicationType
	}
	u, err := url.Parse(h.cfg.RedirectURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") {
		return "native"
	}
	if u.Scheme == "http" && isLoopback(u.Hostname()) {
		return "native"
	}
	return "web"
}

// regResponse is what this client reads of a registration response
// (RFC 7591 §3.2.1): the client ID, secret, authentication method and the
// secret's expiry.
type regResponse struct {
	ClientID, ClientSecret, TokenEndpointAuthMethod string
	ClientSecretExpiresAt                           time.Time // zero: never, or not said
}

// registerClient POSTs meta to the registration endpoint (RFC 7591 §3.1)
// and reads the answer (200 or 201; 400 is an error response, §3.2.2).
// Only the members this client uses are read, and their types checked;
// whatever else a server echoes or adds is ignored, whatever its shape:
// redirect_uris as one string (IBM Security Verify Access), jwks as an
// object (as §2 defines it), client_id_issued_at as a float or a string,
// registration_access_token, extensions. None of it is used, so none of it
// can fail a sign-in. Errors are [ErrRegistrationFailed]-coded and never
// quote the body (it can hold a client secret).
func registerClient(ctx context.Context, hc *http.Client, endpoint string, meta *oauthex.ClientRegistrationMetadata) (*regResponse, error) {
	fail := func(msg string) error {
		return newErr(mcperr.RegistrationFailed, "dynamic client registration failed at "+sanitize(endpoint)+": "+msg, nil)
	}
	payload, err := json.Marshal(meta)
	if err != nil {
		return nil, fail("the client metadata could not be encoded")
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, bytes.NewReader(payload))
	if err != nil {
		return nil, fail("invalid registration endpoint")
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	resp, err := hc.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, newErr(mcperr.RegistrationFailed, "dynamic client registration failed at "+sanitize(endpoint), redactURLError(err))
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxBody+1))
	if err != nil {
		return nil, fail("reading the response failed")
	}
	if len(body) > maxBody {
		return nil, fail(fmt.Sprintf("the response is larger than %d bytes", maxBody))
	}
	if resp.StatusCode == http.StatusBadRequest {
		var e struct {
			Error       string `json:"error"`
			Description string `json:"error_description"`
		}
		if json.Unmarshal(body, &e) != nil || e.Error == "" {
			return nil, fail("it answered HTTP 400 without an error code")
		}
		return nil, &Error{Code: mcperr.RegistrationFailed, Msg: "oauth: dynamic client registration refused",
			Err: &ServerError{Endpoint: "registration", Status: 400, ErrorCode: sanitize(e.Error), Description: sanitize(e.Description), code: mcperr.RegistrationFailed}}
	}
	if resp.StatusCode != http.StatusOK && resp.StatusCode != http.StatusCreated {
		return nil, fail(fmt.Sprintf("it answered HTTP %d", resp.StatusCode))
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var fields map[string]any
	if err := dec.Decode(&fields); err != nil || fields == nil {
		return nil, fail("the response is not a JSON object")
	}
	var r regResponse
	for _, f := range []struct {
		name string
		dst  *string
	}{{"client_id", &r.ClientID}, {"client_secret", &r.ClientSecret}, {"token_endpoint_auth_method", &r.TokenEndpointAuthMethod}} {
		switch v := fields[f.name].(type) {
		case nil:
		case string:
			*f.dst = v
		default:
			return nil, fail(fmt.Sprintf("the response's %s is a %s, not a string", f.name, jsonKind(v)))
		}
	}
	if r.ClientID == "" {
		return nil, fail("the response has no client_id")
	}
	r.ClientSecretExpiresAt = unixTime(fields["client_secret_expires_at"])
	return &r, nil
}

// unixTime reads a time in seconds since the epoch (RFC 7591 §3.2.1), a
// number or a numeric string, as a time; 0, a value it cannot read, or one
// outside years 1970-9999, reads as zero ("never", or not said): a secret
// that did expire is refused at the token endpoint, and registered again.
func unixTime(v any) time.Time {
	var s string
	switch v := v.(type) {
	case json.Number:
		s = v.String()
	case string:
		s = v
	default:
		return time.Time{}
	}
	f, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	if err != nil || !(f >= 1 && f < 253402300800) { // NaN fails too
		return time.Time{}
	}
	return time.Unix(int64(f), 0)
}

// acceptRegistration checks a registration response: the auth method is
// one this client speaks, a confidential client has a secret, a public one
// keeps none (a server that hands one out anyway does not get it stored or
// sent back), and the client ID and secret are printable and bounded.
func acceptRegistration(resp *regResponse, asked, endpoint string) (*ClientRegistration, error) {
	fail := func(format string, args ...any) (*ClientRegistration, error) {
		return nil, newErr(mcperr.RegistrationFailed, "dynamic client registration at "+sanitize(endpoint)+" "+fmt.Sprintf(format, args...), nil)
	}
	method, secret := resp.TokenEndpointAuthMethod, resp.ClientSecret
	if method == "" {
		method = asked
		if secret != "" && method == "none" {
			method = "client_secret_basic" // RFC 7591 §2: the default
		}
	}
	switch method {
	case "none":
		secret = ""
	case "client_secret_basic", "client_secret_post":
		if secret == "" {
			return fail("registered a confidential client (%s) without a client_secret", method)
		}
	default:
		return fail("answered with token_endpoint_auth_method %q, which this client does not support", sanitize(method))
	}
	if len(resp.ClientID) > 2048 || !isVSChars(resp.ClientID) {
		return fail("answered with a client_id that is not printable ASCII of at most 2048 bytes")
	}
	if len(secret) > maxTokenLen || !isVSChars(secret) {
		return fail("answered with a client_secret that is not printable ASCII of a sane length")
	}
	return &ClientRegistration{ClientID: resp.ClientID, ClientSecret: secret, AuthMethod: method, SecretExpiry: resp.ClientSecretExpiresAt}, nil
}
