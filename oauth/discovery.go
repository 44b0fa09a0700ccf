package oauth

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/mcpwasm/mcpwasm/mcperr"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
)

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

// discoveryErr is an [ErrDiscoveryFailed]-coded error.
func discoveryErr(msg string, cause error) *Error {
	return newErr(mcperr.DiscoveryFailed, msg, cause)
}

// discover runs discovery, in the order that finds what real servers
// publish (the spec's path and the common one differ): PRM from the
// challenge, path-inserted and root well-known URLs; then the AS metadata;
// without PRM, AS metadata on the MCP origin; last the 2025-03-26 default
// endpoints.
func (h *Handler) discover(ctx context.Context, headerPRM string) (*discovery, error) {
	if h.cfg.Endpoints != nil {
		return h.manualDiscovery()
	}
	if d := h.cachedDiscovery(ctx); d != nil {
		// Metadata cached by an earlier page may name an issuer this
		// page's policy does not trust.
		if err := h.trustIssuer(d.AS.Issuer); err != nil {
			return nil, err
		}
		return d, nil
	}
	d, err := h.discoverNetwork(ctx, headerPRM)
	if err != nil {
		return nil, err
	}
	if err := h.trustIssuer(d.AS.Issuer); err != nil {
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

// sourceManual is the Source of the endpoints Config.Endpoints gives.
const sourceManual = "Config.Endpoints"

// manualDiscovery is the discovery of Config.Endpoints: nothing fetched.
// The authorization endpoint's origin stands for the issuer (it keys the
// grant and the DPoP key); the policy is asked about every endpoint's
// origin, since each receives the client's requests.
func (h *Handler) manualDiscovery() (*discovery, error) {
	e := h.cfg.Endpoints
	origins := make([]string, 0, 3)
	for _, ep := range []string{e.Authorization, e.Token, e.Revocation} {
		if ep == "" {
			continue
		}
		u, _ := url.Parse(ep) // checked by Config.validate
		if o := u.Scheme + "://" + u.Host; !slices.Contains(origins, o) {
			origins = append(origins, o)
		}
	}
	for _, o := range origins {
		if err := h.trustIssuer(o); err != nil {
			return nil, err
		}
	}
	asm := &oauthex.AuthServerMeta{
		Issuer:                        origins[0],
		AuthorizationEndpoint:         e.Authorization,
		TokenEndpoint:                 e.Token,
		RevocationEndpoint:            e.Revocation,
		CodeChallengeMethodsSupported: []string{"S256"}, // OAuth 2.1 requires PKCE
	}
	return &discovery{Resource: h.resource, AS: asm, Source: sourceManual}, nil
}

// manualHint ends an error where a server's metadata is missing: what
// configures it by hand.
const manualHint = "; to configure the authorization server by hand, give its authorization and token endpoints with a pre-registered client ID (mcp.client options authorizationEndpoint, tokenEndpoint and clientId; Go: Config.Endpoints and Config.ClientID)"

// trustIssuer asks Config.TrustIssuer about issuer.
func (h *Handler) trustIssuer(issuer string) error {
	if h.cfg.TrustIssuer == nil {
		return nil
	}
	return h.cfg.TrustIssuer(issuer)
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
		// The first issuer the policy trusts, asked before anything is
		// sent to it; none trusted: the first one's refusal.
		issuer := ""
		var refused error
		for _, is := range prm.AuthorizationServers {
			if err := h.trustIssuer(is); err != nil {
				refused = cmp.Or(refused, err)
				continue
			}
			issuer = is
			break
		}
		if issuer == "" {
			return nil, cmp.Or(refused, error(discoveryErr("the protected resource metadata names no authorization server", nil)))
		}
		res, err := fetchASM(ctx, h.cfg.HTTPClient, asmRequest{issuer: issuer, codeFlow: h.codeFlow()})
		if err != nil {
			return nil, err
		}
		if !res.found {
			return nil, discoveryErr(fmt.Sprintf("no authorization server metadata found for issuer %q", sanitize(issuer))+manualHint, nil)
		}
		resource := h.resource
		if prm.Resource != "" {
			resource = prm.Resource
		}
		return &discovery{Resource: resource, ScopesSupported: prm.ScopesSupported, AS: res.meta, Source: source, DPoPAlgs: res.dpopAlgs}, nil
	}
	// 2025-03-26: the MCP server's origin is the authorization server.
	u, _ := url.Parse(h.resource)
	origin := u.Scheme + "://" + u.Host
	res, err := fetchASM(ctx, h.cfg.HTTPClient, asmRequest{issuer: origin, legacy: true, codeFlow: h.codeFlow()})
	if err != nil {
		return nil, err
	}
	if res.found {
		return &discovery{Resource: h.resource, AS: res.meta, Source: "2025-03-26 metadata", DPoPAlgs: res.dpopAlgs}, nil
	}
	asm := &oauthex.AuthServerMeta{
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

// asmRequest says whose authorization server metadata fetchASM fetches
// and how it checks it.
type asmRequest struct {
	// issuer is the authorization server whose metadata is fetched.
	issuer string
	// legacy marks the 2025-03-26 path, where the metadata comes from the
	// MCP server's own origin rather than from an issuer the resource
	// named: there the issuer may differ from the origin (e.g. origin +
	// "/oauth") but must be on the same origin.
	legacy bool
	// codeFlow adds the checks of the authorization code flow
	// ([ValidateAuthServerMeta]); without it, those of a non-interactive
	// grant.
	codeFlow bool
}

// asmResult is what fetchASM found.
type asmResult struct {
	// meta is the validated metadata.
	meta *oauthex.AuthServerMeta
	// dpopAlgs is its dpop_signing_alg_values_supported, which
	// oauthex.AuthServerMeta does not keep.
	dpopAlgs []string
	// found is false when no candidate answered 200.
	found bool
}

// fetchASM finds and validates the metadata of req.issuer.
func fetchASM(ctx context.Context, c *http.Client, req asmRequest) (asmResult, error) {
	for _, cand := range asmCandidates(req.issuer) {
		if err := checkEndpoint("metadata URL", cand); err != nil {
			return asmResult{}, discoveryErr("invalid authorization server", err)
		}
		var doc asmDoc
		err := getJSON(ctx, c, cand, &doc)
		m := doc.AuthServerMeta
		if errors.Is(err, errNotFound) {
			if ctx.Err() != nil {
				return asmResult{}, ctx.Err()
			}
			continue
		}
		if err != nil {
			return asmResult{found: true}, discoveryErr("authorization server metadata at "+cand, err)
		}
		want := req.issuer
		if req.legacy && sameOrigin(m.Issuer, req.issuer) {
			want = m.Issuer
		}
		validate := validateASM
		if req.codeFlow {
			validate = ValidateAuthServerMeta
		}
		if err := validate(&m, want); err != nil {
			return asmResult{found: true}, err
		}
		return asmResult{meta: &m, dpopAlgs: doc.DPoPAlgs, found: true}, nil
	}
	return asmResult{}, nil
}
