//go:build js && wasm

// Package jsbridge is the one place that touches JavaScript (through
// github.com/hack-pad/safejs): Promises to and from Go, JSON values across
// the boundary, MCPError values, AbortSignals, and exported functions that
// never let a Go panic kill the module.
//
// Conventions: exported functions do their work in a goroutine and return a
// Promise ([Promise]); a panic becomes a rejection ([Func], [Promise]);
// JavaScript exceptions become Go errors ([JSError]).
package jsbridge
