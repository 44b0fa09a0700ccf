// Package jsapi describes the JavaScript API as data: the MCPError codes,
// the client states, the options of mcp.client(), and the table of
// operations the wasm module exports to web/mcp.js and of the callbacks it
// calls back into (with their argument and result types, their targets
// and which wait for a reply, and the arguments that carry the page's
// ids). Options are validated here, in Go, once: mcp.js checks only what
// JSON cannot carry (functions, AbortSignals).
//
// web/jsapi.js is generated from this package (go generate ./jsapi),
// with what the page says that Go owns: the host policy's checks and
// sentences (hostpolicy), how an error's message becomes a sentence
// (mcperr.Sentences), handleCallback()'s redirect_unhandled. A test fails
// when it is stale, when a module of web/ copies one of Go's sentences,
// when mcp.js calls an operation the table lacks or leaves one unused, and
// when web/mcp.d.ts declares other codes, states or options than these.
package jsapi

//go:generate go run ./gen -out ../web/jsapi.js
