// Package oauth implements MCP authorization (MCP spec 2025-11-25, with the
// 2025-06-18 and 2025-03-26 fallbacks) for an MCP client, in pure Go: it
// never imports syscall/js, so it builds and tests natively, and the browser
// plugs in through the small interfaces it declares ([Store], [Courier],
// [Locker], [Clock]).
//
// A [Handler], built by [New] from a [Config], serves one MCP server
// (resource) and implements go-sdk's auth.OAuthHandler: set it as
// mcp.StreamableClientTransport.OAuthHandler. It runs
//
//   - discovery (RFC 9728 protected resource metadata from the 401's
//     WWW-Authenticate, path-inserted, then root; RFC 8414 / OpenID
//     authorization server metadata; the 2025-03-26 metadata and default
//     endpoints), validated by [ValidateResourceMeta] and
//     [ValidateAuthServerMeta] and cached in the Store;
//   - registration: client ID metadata document, pre-registered client, or
//     RFC 7591 dynamic registration cached per issuer and redirect URI;
//   - the authorization code flow with PKCE S256 (RFC 7636), a 130-bit
//     state, the RFC 8707 resource indicator on authorize, token and
//     refresh requests, and the RFC 9207 iss check;
//   - token refresh before expiry, single-flight through the [Locker],
//     re-reading the Store under the lock; step-up on 403 insufficient_scope;
//     RFC 7009 revocation on [Handler.Logout];
//   - DPoP (RFC 9449), per [Config.DPoP]: by default when the authorization
//     server advertises ES256 in dpop_signing_alg_values_supported. A key
//     per client registration ([DPoPKeys]; natively in memory, in the
//     browser a non-extractable WebCrypto key) binds the code (dpop_jkt)
//     and signs a proof on the code exchange and every refresh; the grant
//     remembers it is DPoP-bound ([Grant.TokenType] "DPoP"). go-sdk writes
//     every token as Bearer, so the MCP transport's HTTP client must go
//     through [Handler.ResourceTransport], which presents a DPoP-bound
//     token with the DPoP scheme and a fresh proof (ath). Server nonces
//     (use_dpop_nonce at the token endpoint and from the MCP server) are
//     answered with one retry each and kept per origin in memory.
//   - instead of the authorization code flow, for hosts without a user at
//     hand, a non-interactive grant: client credentials
//     ([ClientCredentials]: client_secret_basic or private_key_jwt),
//     workload identity ([WorkloadIdentity]: the RFC 7523 JWT bearer
//     grant, one request, no retry) or enterprise-managed authorization
//     ([EnterpriseAuth]: the RFC 8693 exchange of the user's ID token for
//     an ID-JAG at the identity provider, then the JWT bearer grant).
//
// Results come back through a [Registry] shared by every handler of a page:
// [Registry.Deliver] takes a callback URL from any path (popup message,
// redirect return, pasted URL) and routes it to the flow waiting on its
// state (compared in constant time; unknown, expired and replayed states
// are rejected with [ErrStateMismatch]).
//
// Full-page redirect mode: with [Config.PersistFlows] each flow is stored
// as a [PendingFlow] before [Courier.Open]; when the page that navigated to
// the authorization server is gone, [CompletePending] finishes the flow
// from the Store alone (no discovery, registration or Courier), and a
// later [Handler] finds the grant. [Registry.HandleCallback] is the one
// entry point for any callback URL: a live flow of this page first, the
// Store otherwise. A flow is single use either way.
//
// Every wait ends: each phase of a flow (discovery and registration, the
// user, the token exchange) is bounded by Config.AuthTimeout (real time,
// not [Clock]), a refresh by one minute, and a caller's context ends all.
//
// Concurrent 401s on one server share one flow. When the user declines (or
// the flow is aborted or times out) every waiter fails with [ErrDeclined]
// and no new flow starts until [Handler.Login] (the user-gesture path).
// Without Config.Interactive, the transport's Authorize returns
// [ErrAuthorizationRequired] instead of starting a flow. Both sentinels
// survive go-sdk's wrapping (errors.Is).
//
// Every error implements [mcperr.Coder] with its docs/JSAPI.md code. Secrets
// (tokens, codes, verifiers, client secrets) never appear in errors or
// [Event]s, even when the server echoes them in an error_description; the
// types holding them ([Grant], [ClientRegistration], [PendingFlow],
// [Callback]) print redacted with fmt and log/slog.
package oauth
