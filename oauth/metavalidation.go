package oauth

import (
	"fmt"
	"net/url"
	"slices"

	"github.com/modelcontextprotocol/go-sdk/oauthex"
)

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
