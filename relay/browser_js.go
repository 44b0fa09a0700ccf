//go:build js && wasm

package relay

// inBrowser: requests go through fetch, whose options the "js.fetch:*"
// pseudo-headers set (credentials "omit", redirect "manual").
const inBrowser = true
