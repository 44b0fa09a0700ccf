// Package demo is the MCP server the dev server runs in demo mode and the
// end-to-end tests run against: a small [mcp.Server] (go-sdk) that exercises
// every feature the browser client supports.
//
// Tools:
//
//   - echo {text}: returns text.
//   - add {a, b}: returns a+b as text and as structuredContent {sum}, with an
//     output schema.
//   - slow {steps, delayMs}: waits delayMs per step, sending
//     notifications/progress after each step when the call carries a
//     progress token; returns promptly when cancelled and reports the
//     cancellation to [Options.OnCancelled].
//   - ask_user {message}: asks the client for a form elicitation and returns
//     the answers, or that the user declined or cancelled.
//   - open_link {url, message}, only with [Options.OpenLink]: asks the
//     client for a URL-mode elicitation of url, passed on as given (a
//     client must check it), and returns whether the user agreed, declined
//     or cancelled.
//   - summarize {text, maxWords}: asks the client's model for a summary
//     (sampling/createMessage) and returns its text.
//   - add_tool {name} / remove_tool {name}: add or remove a dynamic tool,
//     which makes the server send notifications/tools/list_changed.
//
// Resources: demo://readme (text/markdown) and the template
// demo://greeting/{name}. Prompt: explain {topic, audience}.
//
// ask_user, open_link and summarize use the multi round-trip pattern of go-sdk
// (SEP-2322): the tool returns an input request and is called again with the
// client's response. The SDK turns this into a server-to-client
// elicitation/create or sampling/createMessage request for clients on
// protocol versions before 2026-07-28, so both kinds of client work, over
// Streamable HTTP (stateful sessions) and over the legacy HTTP+SSE transport.
//
// [Handler] serves the server over HTTP: Streamable HTTP at /mcp and the
// 2024-11-05 HTTP+SSE transport at /sse, behind the CORS middleware of
// demo/cors. [ProtectedHandler] puts it behind OAuth (bearer tokens,
// or with [Protection.DPoP] DPoP-bound tokens with proofs and nonces).
package demo
