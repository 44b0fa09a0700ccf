// Package mcpclient is the browser-independent MCP client behind the
// JavaScript API: one [Client] per MCP server, over go-sdk's
// [mcp.StreamableClientTransport] with the backwards-compatible fallback to
// [mcp.SSEClientTransport] (MCP 2025-11-25, "Backwards Compatibility").
//
// It adds what a web page needs on top of go-sdk: a state machine with
// events, errors classified into the docs/JSAPI.md codes ([mcperr.Code]), static
// headers and a host-supplied bearer token, progress notifications delivered
// in wire order (every notification the server sent before a result reaches
// the caller before the call returns), and [Hints] that remember per server
// the transport and protocol version that worked, so a reconnect does not
// probe again.
//
// It does not import syscall/js: it builds and tests natively; the wasm
// bridge wraps it.
package mcpclient
