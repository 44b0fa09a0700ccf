//go:build !(js && wasm)

package httpguard

// Natively the http.Client follows redirects and asks CheckRedirect first.
const (
	manualRedirects     = false
	fetchRedirectHeader = ""
)
