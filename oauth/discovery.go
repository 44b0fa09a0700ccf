package oauth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/netip"
	"net/url"
	"slices"
	"strings"

	"github.com/mcpwasm/mcpwasm/mcperr"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
)

// maxBody caps every response body this package reads.
const maxBody = 1 << 20

// discovery is the cached result of discovery for one resource.
type discovery struct {
	// Resource is the RFC 8707 resource indicator sent to the AS.
	Resource string `json:"resource"`
	// ScopesSupported is the PRM's scopes_supported.
	ScopesSupported []string `json:"scopes_supported,omitempty"`
	// AS is the validated authorization server metadata.
	AS *oauthex.AuthServerMeta `json:"as"`
	// Source says how the metadata was found, for diagnostics.
	Source string `json:"source"`
	// DPoPAlgs is the AS metadata's dpop_signing_alg_values_supported
	// (RFC 9449 §5.1), which oauthex.AuthServerMeta does not keep.
	DPoPAlgs []string `json:"dpop_algs,omitempty"`
}

// sourceDefaults is the Source of a discovery that found no metadata and
// uses the 2025-03-26 default endpoints.
const sourceDefaults = "2025-03-26 defaults"

// errNotFound marks a probe that found nothing there (non-200).
var errNotFound = errors.New("not found")

// getJSON GETs url and decodes a JSON object into v, reading at most maxBody
// bytes. A non-200 status returns an error wrapping errNotFound.
func getJSON(ctx context.Context, c *http.Client, u string, v any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := c.Do(req)
	if err != nil {
		if mcperr.CodeOf(err, "") == mcperr.Protocol {
			// Refused, not absent: a redirect to another origin (the
			// HTTP client keeps requests on their origin). Looking
			// elsewhere would hide an attack as a missing document.
			return redactURLError(err)
		}
		return fmt.Errorf("%w: %v", errNotFound, redactURLError(err))
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		io.Copy(io.Discard, io.LimitReader(resp.Body, maxBody))
		return fmt.Errorf("%w: status %d", errNotFound, resp.StatusCode)
	}
	if !jsonContentType(resp.Header.Get("Content-Type")) {
		return fmt.Errorf("content type %q is not application/json", sanitize(resp.Header.Get("Content-Type")))
	}
	return decodeCapped(resp.Body, v)
}

// jsonContentType reports whether a metadata document of this content type
// is read as JSON. RFC 8414 §3.2 and RFC 9728 §3.2 say application/json;
// metadata served as a static file often comes without an extension, and
// static hosts label it text/plain or application/octet-stream (or not at
// all). Those are read, and must still decode as a JSON object; a type
// that says the body is something else (an HTML page, a script) is not.
func jsonContentType(ct string) bool {
	if strings.TrimSpace(ct) == "" {
		return true
	}
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil {
		return false
	}
	switch mt {
	case "application/json", "text/json", "text/plain", "application/octet-stream", "binary/octet-stream":
		return true
	}
	return strings.HasPrefix(mt, "application/") && strings.HasSuffix(mt, "+json")
}

// decodeCapped decodes one JSON object of at most maxBody bytes.
func decodeCapped(r io.Reader, v any) error {
	body, err := io.ReadAll(io.LimitReader(r, maxBody+1))
	if err != nil {
		return fmt.Errorf("reading body: %v", err)
	}
	if len(body) > maxBody {
		return fmt.Errorf("response larger than %d bytes", maxBody)
	}
	if err := json.Unmarshal(body, v); err != nil {
		return errors.New("malformed JSON")
	}
	var doc any
	_ = json.Unmarshal(body, &doc)
	return checkShape(doc, "", 0)
}

// Bounds on a metadata document's shape. Real documents list a handful of
// scopes, methods and servers; a document past these is built to make the
// client send huge authorization URLs or loop over attacker-sized lists.
const (
	maxMetaList   = 256
	maxMetaString = 8 << 10
	maxMetaDepth  = 16
)

// checkShape refuses a document with a list longer than maxMetaList, a
// string longer than maxMetaString or nesting deeper than maxMetaDepth;
// the error names where (path, "" at the top).
func checkShape(v any, path string, depth int) error {
	where := "the document"
	if path != "" {
		where = path
	}
	if depth > maxMetaDepth {
		return fmt.Errorf("%s is nested deeper than %d levels", where, maxMetaDepth)
	}
	switch v := v.(type) {
	case string:
		if len(v) > maxMetaString {
			return fmt.Errorf("%s is a string longer than %d bytes", where, maxMetaString)
		}
	case []any:
		if len(v) > maxMetaList {
			return fmt.Errorf("%s has %d entries (at most %d are accepted)", where, len(v), maxMetaList)
		}
		for i, e := range v {
			if err := checkShape(e, fmt.Sprintf("%s[%d]", path, i), depth+1); err != nil {
				return err
			}
		}
	case map[string]any:
		if len(v) > maxMetaList {
			return fmt.Errorf("%s has %d members (at most %d are accepted)", where, len(v), maxMetaList)
		}
		for k, e := range v {
			if len(k) > maxMetaString {
				return fmt.Errorf("%s has a member name longer than %d bytes", where, maxMetaString)
			}
			name := sanitize(k)
			if path != "" {
				name = path + "." + name
			}
			if err := checkShape(e, name, depth+1); err != nil {
				return err
			}
		}
	}
	return nil
}

// redactURLError drops the URL from a *url.Error (it may carry query
// parameters) and keeps the cause.
func redactURLError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

func discoveryErr(msg string, cause error) *Error {
	return newErr(mcperr.DiscoveryFailed, msg, cause)
}

// isLoopback reports whether host (no port) is localhost or a loopback IP.
func isLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip, err := netip.ParseAddr(strings.Trim(host, "[]"))
	return err == nil && ip.IsLoopback()
}

// checkEndpoint validates a URL from metadata: absolute, https (or http on
// a loopback host), a host, no fragment, no user info. This rejects
// javascript:, data: and relative URLs.
func checkEndpoint(name, raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return fmt.Errorf("%s is not a valid URL", name)
	}
	switch {
	case !u.IsAbs() || u.Host == "" || u.Opaque != "":
		return fmt.Errorf("%s %q is not an absolute URL", name, sanitize(raw))
	case u.Scheme == "https":
	case u.Scheme == "http" && isLoopback(u.Hostname()):
	default:
		return fmt.Errorf("%s %q must use https (or http on a loopback host)", name, sanitize(raw))
	}
	if u.Fragment != "" || u.User != nil {
		return fmt.Errorf("%s %q must not have a fragment or user info", name, sanitize(raw))
	}
	return nil
}

// ValidateAuthServerMeta checks authorization server metadata (RFC 8414 §3.3
// and the MCP authorization spec) for a sign-in: the issuer is identical
// to expectedIssuer (see [sameIssuer] for the one equivalence allowed), the
// authorization and token endpoints are present, every endpoint is an
// absolute https (or loopback) URL, other URLs have no dangerous scheme,
// and PKCE S256 and response_type code are supported. The error is
// [ErrDiscoveryFailed]-coded.
func ValidateAuthServerMeta(asm *oauthex.AuthServerMeta, expectedIssuer string) error {
	if err := validateASM(asm, expectedIssuer); err != nil {
		return err
	}
	return checkCodeFlow(asm)
}

// validateASM is [ValidateAuthServerMeta] without what only the
// authorization code flow needs: what a non-interactive grant (client
// credentials, JWT bearer), which uses the token endpoint alone, requires.
func validateASM(asm *oauthex.AuthServerMeta, expectedIssuer string) error {
	if asm == nil {
		return discoveryErr("authorization server metadata missing", nil)
	}
	if !sameIssuer(asm.Issuer, expectedIssuer) {
		return discoveryErr(fmt.Sprintf("authorization server metadata issuer %q does not match %q", sanitize(asm.Issuer), sanitize(expectedIssuer)), nil)
	}
	if err := checkEndpoint("issuer", asm.Issuer); err != nil {
		return discoveryErr("invalid authorization server metadata", err)
	}
	if u, _ := url.Parse(asm.Issuer); u != nil && u.RawQuery != "" {
		return discoveryErr("issuer must not have a query", nil)
	}
	if asm.TokenEndpoint == "" {
		return discoveryErr("authorization server metadata has no token_endpoint", nil)
	}
	for _, e := range []struct{ name, v string }{
		{"authorization_endpoint", asm.AuthorizationEndpoint},
		{"token_endpoint", asm.TokenEndpoint},
		{"registration_endpoint", asm.RegistrationEndpoint},
		{"revocation_endpoint", asm.RevocationEndpoint},
		{"introspection_endpoint", asm.IntrospectionEndpoint},
		{"jwks_uri", asm.JWKSURI},
	} {
		if e.v == "" {
			continue
		}
		if err := checkEndpoint(e.name, e.v); err != nil {
			return discoveryErr("invalid authorization server metadata", err)
		}
	}
	for _, e := range []struct{ name, v string }{
		{"service_documentation", asm.ServiceDocumentation},
		{"op_policy_uri", asm.OpPolicyURI},
		{"op_tos_uri", asm.OpTOSURI},
	} {
		if e.v == "" {
			continue
		}
		if u, err := url.Parse(e.v); err != nil || (u.Scheme != "https" && u.Scheme != "http") {
			return discoveryErr(fmt.Sprintf("invalid authorization server metadata: %s is not an http(s) URL", e.name), nil)
		}
	}
	return nil
}

// checkCodeFlow checks that asm supports the authorization code flow with
// PKCE S256 (MCP authorization spec): checked at discovery for a sign-in,
// and before one starts.
func checkCodeFlow(asm *oauthex.AuthServerMeta) error {
	if asm.AuthorizationEndpoint == "" {
		return discoveryErr("authorization server metadata has no authorization_endpoint", nil)
	}
	if !slices.Contains(asm.CodeChallengeMethodsSupported, "S256") {
		return discoveryErr(fmt.Sprintf("authorization server %q does not support PKCE S256 (code_challenge_methods_supported=%q); refusing to authorize", sanitize(asm.Issuer), sanitizeList(asm.CodeChallengeMethodsSupported)), nil)
	}
	if len(asm.ResponseTypesSupported) > 0 && !slices.Contains(asm.ResponseTypesSupported, "code") {
		return discoveryErr("authorization server does not support response_type=code", nil)
	}
	return nil
}

// ValidateResourceMeta checks protected resource metadata (RFC 9728 §3.3)
// fetched for resourceURL: its resource must be resourceURL or, for
// metadata at the origin root (rootProbe), the origin; it must name at least
// one authorization server, each an absolute https (or loopback) URL.
func ValidateResourceMeta(prm *oauthex.ProtectedResourceMetadata, resourceURL string, rootProbe bool) error {
	if prm == nil {
		return discoveryErr("protected resource metadata missing", nil)
	}
	ok := sameResource(prm.Resource, resourceURL)
	if !ok && rootProbe {
		if u, err := url.Parse(resourceURL); err == nil {
			ok = sameResource(prm.Resource, u.Scheme+"://"+u.Host)
		}
	}
	if !ok {
		return discoveryErr(fmt.Sprintf("protected resource metadata names resource %q, not %q", sanitize(prm.Resource), sanitize(resourceURL)), nil)
	}
	if err := checkEndpoint("resource", prm.Resource); err != nil {
		return discoveryErr("invalid protected resource metadata", err)
	}
	if len(prm.AuthorizationServers) == 0 {
		return discoveryErr("protected resource metadata names no authorization server", nil)
	}
	for i, as := range prm.AuthorizationServers {
		if err := checkEndpoint(fmt.Sprintf("authorization_servers[%d]", i), as); err != nil {
			return discoveryErr("invalid protected resource metadata", err)
		}
	}
	return nil
}

func sanitizeList(l []string) string {
	var out []string
	for i, s := range l {
		if i == 8 {
			out = append(out, "…")
			break
		}
		out = append(out, sanitize(s))
	}
	return strings.Join(out, " ")
}

// prmCandidates lists where to look for protected resource metadata
// (RFC 9728 §3.1, MCP 2025-11-25): the challenge's resource_metadata URL,
// then path-inserted, then root. root marks the root probe.
func prmCandidates(headerURL, resourceURL string) (urls []string, root []bool) {
	if headerURL != "" {
		urls, root = append(urls, headerURL), append(root, false)
	}
	u, err := url.Parse(resourceURL)
	if err != nil {
		return urls, root
	}
	p := strings.Trim(u.Path, "/")
	base := u.Scheme + "://" + u.Host
	if p != "" {
		urls, root = append(urls, base+"/.well-known/oauth-protected-resource/"+p), append(root, false)
	}
	urls, root = append(urls, base+"/.well-known/oauth-protected-resource"), append(root, true)
	return urls, root
}

// asmCandidates lists where to look for the metadata of issuer: RFC 8414
// path-inserted (or root), OpenID path-inserted, OpenID path-appended.
func asmCandidates(issuer string) []string {
	u, err := url.Parse(issuer)
	if err != nil {
		return nil
	}
	base := u.Scheme + "://" + u.Host
	p := strings.Trim(u.Path, "/")
	if p == "" {
		return []string{
			base + "/.well-known/oauth-authorization-server",
			base + "/.well-known/openid-configuration",
		}
	}
	return []string{
		base + "/.well-known/oauth-authorization-server/" + p,
		base + "/.well-known/openid-configuration/" + p,
		base + "/" + p + "/.well-known/openid-configuration",
	}
}

// asmDoc is authorization server metadata with the members
// oauthex.AuthServerMeta does not have.
type asmDoc struct {
	oauthex.AuthServerMeta
	DPoPAlgs []string `json:"dpop_signing_alg_values_supported,omitempty"`
}

// fetchASM finds and validates the metadata of issuer, and returns its
// dpop_signing_alg_values_supported too. found is false when no candidate
// answered 200.
//
// legacy is the 2025-03-26 path, where the metadata comes from the MCP
// server's own origin rather than from an issuer the resource named: there
// the issuer may differ from the origin (e.g. origin + "/oauth") but must be
// on the same origin.
// codeFlow adds the checks of the authorization code flow
// ([ValidateAuthServerMeta]); without it, those of a non-interactive grant.
func fetchASM(ctx context.Context, c *http.Client, issuer string, legacy, codeFlow bool) (asm *oauthex.AuthServerMeta, dpopAlgs []string, found bool, err error) {
	for _, cand := range asmCandidates(issuer) {
		if err := checkEndpoint("metadata URL", cand); err != nil {
			return nil, nil, false, discoveryErr("invalid authorization server", err)
		}
		var doc asmDoc
		err := getJSON(ctx, c, cand, &doc)
		m := doc.AuthServerMeta
		if errors.Is(err, errNotFound) {
			if ctx.Err() != nil {
				return nil, nil, false, ctx.Err()
			}
			continue
		}
		if err != nil {
			return nil, nil, true, discoveryErr("authorization server metadata at "+cand, err)
		}
		want := issuer
		if legacy && sameOrigin(m.Issuer, issuer) {
			want = m.Issuer
		}
		validate := validateASM
		if codeFlow {
			validate = ValidateAuthServerMeta
		}
		if err := validate(&m, want); err != nil {
			return nil, nil, true, err
		}
		return &m, doc.DPoPAlgs, true, nil
	}
	return nil, nil, false, nil
}

// discover runs discovery, in the order that finds what real servers
// publish (the spec's path and the common one differ): PRM from the
// challenge, path-inserted
// and root well-known URLs; then the AS metadata; without PRM, AS metadata
// on the MCP origin; last the 2025-03-26 default endpoints.
func (h *Handler) discover(ctx context.Context, headerPRM string) (*discovery, error) {
	if d := h.cachedDiscovery(ctx); d != nil {
		return d, nil
	}
	d, err := h.discoverNetwork(ctx, headerPRM)
	if err != nil {
		return nil, err
	}
	if d.Source == sourceDefaults {
		// Guessed, not found: probing again costs a few requests and finds
		// the metadata a server publishes later (or that was unreadable).
		return d, nil
	}
	data, err := json.Marshal(d)
	if err == nil {
		if err := h.cfg.Store.PutMetadata(ctx, &CachedMetadata{Key: h.metaKey(), Data: data, Expiry: h.now().Add(h.cfg.MetadataTTL)}); err != nil {
			return nil, newErr(mcperr.Storage, "caching metadata", err)
		}
	}
	return d, nil
}

func (h *Handler) metaKey() string { return "resource:" + h.resource }

// codeFlow tells whether h signs in with the authorization code flow (no
// non-interactive grant configured).
func (h *Handler) codeFlow() bool { return h.cfg.grantKind() == "" }

func (h *Handler) cachedDiscovery(ctx context.Context) *discovery {
	m, err := h.cfg.Store.GetMetadata(ctx, h.metaKey())
	if err != nil || m == nil || !h.now().Before(m.Expiry) {
		return nil
	}
	var d discovery
	if json.Unmarshal(m.Data, &d) != nil || d.AS == nil || validateASM(d.AS, d.AS.Issuer) != nil || (h.codeFlow() && checkCodeFlow(d.AS) != nil) {
		return nil
	}
	return &d
}

func (h *Handler) discoverNetwork(ctx context.Context, headerPRM string) (*discovery, error) {
	if headerPRM != "" {
		if err := checkEndpoint("resource_metadata", headerPRM); err != nil {
			headerPRM = "" // unreadable: fall through to the well-known probes
		}
	}
	urls, roots := prmCandidates(headerPRM, h.resource)
	var prm *oauthex.ProtectedResourceMetadata
	var source string
	for i, cand := range urls {
		var m oauthex.ProtectedResourceMetadata
		err := getJSON(ctx, h.cfg.HTTPClient, cand, &m)
		if errors.Is(err, errNotFound) {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			continue
		}
		if err != nil {
			return nil, discoveryErr("protected resource metadata at "+cand, err)
		}
		if err := ValidateResourceMeta(&m, h.resource, roots[i]); err != nil {
			return nil, err
		}
		prm, source = &m, cand
		break
	}
	if prm != nil {
		issuer := prm.AuthorizationServers[0]
		asm, algs, found, err := fetchASM(ctx, h.cfg.HTTPClient, issuer, false, h.codeFlow())
		if err != nil {
			return nil, err
		}
		if !found {
			return nil, discoveryErr(fmt.Sprintf("no authorization server metadata found for issuer %q", sanitize(issuer)), nil)
		}
		res := h.resource
		if prm.Resource != "" {
			res = prm.Resource
		}
		return &discovery{Resource: res, ScopesSupported: prm.ScopesSupported, AS: asm, Source: source, DPoPAlgs: algs}, nil
	}
	// 2025-03-26: the MCP server's origin is the authorization server.
	u, _ := url.Parse(h.resource)
	origin := u.Scheme + "://" + u.Host
	asm, algs, found, err := fetchASM(ctx, h.cfg.HTTPClient, origin, true, h.codeFlow())
	if err != nil {
		return nil, err
	}
	if found {
		return &discovery{Resource: h.resource, AS: asm, Source: "2025-03-26 metadata", DPoPAlgs: algs}, nil
	}
	asm = &oauthex.AuthServerMeta{
		Issuer:                        origin,
		AuthorizationEndpoint:         origin + "/authorize",
		TokenEndpoint:                 origin + "/token",
		RegistrationEndpoint:          origin + "/register",
		CodeChallengeMethodsSupported: []string{"S256"}, // MCP 2025-03-26 requires PKCE
	}
	if err := ValidateAuthServerMeta(asm, origin); err != nil {
		return nil, err
	}
	return &discovery{Resource: h.resource, AS: asm, Source: sourceDefaults}, nil
}

// sameIssuer reports whether metadata naming issuer got answers for the
// issuer want: identical strings (RFC 8414 §3.3), or, for an issuer without
// a path, the same URL with and without the trailing "/" (RFC 3986 §6.2.3:
// an empty http(s) path is "/"). Deployed servers differ there: Auth0's
// issuer ends in "/", and protected resource metadata built with
// WHATWG URL serialisation ("new URL(issuer).href") adds one to any
// origin. Both spellings fetch the same metadata document; any other
// difference (a path, its trailing "/", case) is refused as RFC 8414
// requires.
func sameIssuer(got, want string) bool {
	if got == want {
		return true
	}
	if strings.TrimSuffix(got, "/") != strings.TrimSuffix(want, "/") {
		return false
	}
	u, err := url.Parse(strings.TrimSuffix(got, "/"))
	return err == nil && u.Path == "" && u.RawQuery == "" && !u.ForceQuery && u.Fragment == ""
}

// sameResource reports whether the resource a protected resource metadata
// document names is the URL the client asked about: the same up to a
// trailing "/" and the case of scheme and host (RFC 3986 §6.2.2.1; a
// resource server that names itself "https://MCP.example/mcp" means the
// same server).
func sameResource(named, asked string) bool {
	a, b := strings.TrimSuffix(named, "/"), strings.TrimSuffix(asked, "/")
	if a == b {
		return true
	}
	ua, err1 := url.Parse(a)
	ub, err2 := url.Parse(b)
	return err1 == nil && err2 == nil && ua.Host != "" && strings.EqualFold(ua.Scheme, ub.Scheme) && strings.EqualFold(ua.Host, ub.Host) &&
		ua.RawPath == ub.RawPath && ua.Path == ub.Path && ua.RawQuery == ub.RawQuery && ua.Fragment == ub.Fragment && ua.User == nil && ub.User == nil
}

func sameOrigin(a, b string) bool {
	ua, err1 := url.Parse(a)
	ub, err2 := url.Parse(b)
	return err1 == nil && err2 == nil && ua.Scheme == ub.Scheme && strings.EqualFold(ua.Host, ub.Host)
}
