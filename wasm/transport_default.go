//go:build js && wasm && !nethttp_transport

package main

// netHTTPTransport is false in the product: requests go through jsfetch.
const netHTTPTransport = false
