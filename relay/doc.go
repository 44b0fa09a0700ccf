// Package relay carries a page's MCP and OAuth requests to servers that do
// not allow the page's origin (no CORS headers, WWW-Authenticate not
// exposed, new request headers refused by a preflight).
//
// It has two halves that speak one request format:
//
//   - [Handler], built by [New], is an http.Handler a host mounts in its own
//     backend (say at https://app.example/mcp-relay). It is never an open
//     relay: [New] refuses a configuration without [Config.Targets], and
//     a request for any other origin is refused before anything is sent.
//   - [Transport] is the page's http.RoundTripper (the wasm build puts it
//     under the credential guard, below everything that decides where a
//     request goes): it rewrites a request for the real server into a
//     request to the relay, always or only after a direct attempt failed
//     ([Mode]). Discovery, issuers, the credential guard and stored grants
//     keep seeing the real URL: the relay is only where the bytes travel.
//
// # The request format
//
// The target is the whole URL of the real request, percent-encoded in the
// relay's query parameter "url" ([Param]):
//
//	POST https://app.example/mcp-relay?url=https%3A%2F%2Fmcp.example.com%2Fmcp
//
// The method, body and forwarded headers are the real request's. The
// relay answers with the server's status, body and passed-on headers, or
// with an error of its own that carries the header Mcp-Relay-Error
// ([ErrorHeader]: a code such as "target_not_allowed") and a plain-text
// sentence.
//
// # What the relay does
//
//   - Forwards GET, POST and DELETE only to origins of [Config.Targets];
//     answers CORS preflights itself for [Config.PageOrigins] and refuses a
//     request whose Origin header names any other origin.
//   - Forwards only the request headers MCP and OAuth need
//     ([ForwardHeaders], Mcp-Param-* and [Config.AllowHeaders]) and passes
//     back only the response headers a client reads ([PassHeaders]), all
//     exposed to the page. Cookies never cross, in either direction; nor
//     do the page's Origin, Referer or address.
//   - Follows a redirect only within the target's origin (at most 5); a
//     redirect elsewhere is answered with 502 "redirect_refused", never
//     followed.
//   - Bounds request and response bodies ([Config.MaxRequestBytes],
//     [Config.MaxResponseBytes]) and time ([Config.Timeout]; an event
//     stream instead by [Config.IdleTimeout] between chunks). Event streams
//     (text/event-stream) are passed on chunk by chunk, flushed as they
//     arrive.
//
// The relay sees everything in transit, tokens included (the Authorization
// and DPoP headers, the token endpoint's answers): run it only where the
// page's own backend already runs, and list only servers the host trusts.
// A target's host name is resolved by the relay's machine: an allowed name
// that resolves to an internal address reaches that address.
package relay
