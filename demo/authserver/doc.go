// Package authserver is the OAuth 2.1 authorization server of the demo: the
// dev server runs it on its own loopback origin in front of the demo MCP
// server (see demo.ProtectedHandler), and the tests log in against it.
// It is deliberately strict, like a good production server, so that client
// bugs show up in tests:
//
//   - RFC 8414 metadata at /.well-known/oauth-authorization-server (the
//     OpenID path only with Config.ServeOpenIDConfiguration).
//   - RFC 7591 dynamic registration at /register: redirect URIs https, or
//     http on a loopback host, no fragment; an omitted
//     token_endpoint_auth_method means "none" (public client, no secret).
//   - GET /authorize: response_type=code, a known client, an exact
//     redirect_uri match, PKCE S256 only, one resource (RFC 8707) among
//     Config.Resources, supported scopes, no repeated parameters. Errors
//     about the client or redirect URI render an HTML page; the others go
//     to the redirect URI with error, error_description, state and iss.
//     A valid request shows a consent page (buttons #approve and #deny)
//     whose form posts to /consent with a single-use, short-lived,
//     server-side consent ticket; Config.AutoApprove skips the page.
//     Success redirects with code, state and iss (RFC 9207).
//   - POST /token: authorization_code (single-use 60 s codes bound to
//     client, redirect_uri, PKCE verifier and resource; a replayed code
//     revokes the tokens it produced) and refresh_token (rotation on every
//     use; a replayed rotated refresh token revokes the whole grant).
//     Client authentication by exactly the registered method. A refresh
//     token is always issued. Access tokens are opaque, 256 random bits
//     after the prefix "mcpwasm_at_".
//   - Config.DPoP (RFC 9449): dpop_signing_alg_values_supported ["ES256"];
//     every token request needs a proof with the server's nonce (400
//     use_dpop_nonce + DPoP-Nonce first), tokens are token_type DPoP and
//     bound to the proof's key, and a refresh must be signed by that key.
//   - POST /token with the JWT bearer grant (RFC 7523) and an ID-JAG of one
//     of Config.IdentityProviders (enterprise-managed authorization,
//     SEP-990): typ oauth-id-jag+jwt, ES256 signature by that provider's
//     key, aud this issuer, client_id the authenticated client, resource
//     one of Config.Resources, not expired, jti never seen before.
//   - POST /revoke (RFC 7009): revoking an access or a refresh token
//     revokes its whole grant; unknown tokens answer 200.
//
// [Server.Verifier] checks access tokens for auth.RequireBearerToken.
// [Server.Count] and [Server.Events] (and Config.OnEvent) let tests assert
// what the server saw. State lives in memory; secrets (tokens, codes,
// consent tickets, client secrets) are kept only as SHA-256 hashes and
// never appear in events or logs.
package authserver
