//go:build js && wasm && nethttp_transport

package main

// netHTTPTransport is true only in the benchmark's build with the tag
// nethttp_transport, which times net/http's own fetch path against jsfetch.
const netHTTPTransport = true
