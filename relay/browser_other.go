//go:build !(js && wasm)

package relay

// inBrowser is false natively, where "js.fetch:*" headers are not
// understood.
const inBrowser = false
