//go:build js && wasm

package httpguard

// In the browser, net/http's fetch transport would follow redirects itself
// (fetch's default), out of reach of CheckRedirect: requests carry this
// pseudo-header, which the fetch transport turns into redirect: "manual".
const (
	manualRedirects     = true
	fetchRedirectHeader = "js.fetch:redirect"
)
