package xengine

import (
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// The OAuth proxy stack (e2e/stacks/oauth-proxy): the TypeScript SDK's
// ProxyOAuthServerProvider and mcpAuthRouter in front of an upstream
// provider without dynamic registration (oidc-provider with one static
// public client), the MCP endpoint in the same app; the page signs in with
// that client's id.
func init() {
	stacks = append(stacks, stack{name: "oauth-proxy", start: startOAuthProxy})
}

// oauthProxyClientID is the upstream's one client, which the page is
// configured with.
const oauthProxyClientID = "mcpwasm-page"

func startOAuthProxy(t testing.TB, pageOrigin string) *stackServer {
	t.Helper()
	dir := stackDir(t, "oauth-proxy")
	ports := reservePorts(t, 2)
	p := startStackProc(t, "oauth-proxy", dir, []string{
		"PORT=" + strconv.Itoa(ports[0]),
		"UPSTREAM_PORT=" + strconv.Itoa(ports[1]),
		"PAGE_ORIGIN=" + pageOrigin,
		"CLIENT_ID=" + oauthProxyClientID,
		"USERNAME=" + stackUser,
		"PASSWORD=" + stackPassword,
		"ACCESS_TOKEN_TTL=" + strconv.Itoa(int(stackTokenTTL/time.Second)),
	}, "oauth-proxy listening", filepath.Join(dir, "node_modules", ".bin", "node"), "server.mjs")
	return &stackServer{
		MCPURL:          "http://127.0.0.1:" + strconv.Itoa(ports[0]) + "/mcp",
		ClientOpts:      `clientId: "` + oauthProxyClientID + `"`,
		Consent:         formConsent,
		TokenTTL:        stackTokenTTL,
		Requests:        asRequests(p, "oauth-proxy saw "),
		JWTAccessTokens: true,
		// The upstream redirects to the page itself, with its own issuer
		// as iss: the proxy's issuer is another.
		Refused: &refusal{Code: "state_mismatch", Says: "RFC 9207",
			Why: "the upstream's iss reaches the page, not the proxy's issuer, and RFC 9207 §2.4 has a client refuse an authorization response from another issuer than the one it asked (a mix-up attack looks the same)"},
		Facts: "no registration endpoint (a pre-registered client); the upstream's JWT access tokens; the TypeScript SDK 1.x server (2025-11-25)",
	}
}
