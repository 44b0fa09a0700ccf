// Package cors is the Cross-Origin Resource Sharing middleware of the demo
// servers: it lets a page on one loopback origin call an MCP server (and
// the demo authorization server) on another, as the Fetch standard's CORS
// protocol requires (https://fetch.spec.whatwg.org/#http-cors-protocol).
//
// A preflight (an OPTIONS request carrying Origin and
// Access-Control-Request-Method) is answered by the middleware itself with
// 204 No Content and never reaches the wrapped handler. Every other request
// goes to the wrapped handler, with Access-Control-Allow-Origin and
// Access-Control-Expose-Headers added when its Origin is allowed.
//
// Credentials (cookies) are never allowed: the MCP client sends bearer
// tokens in the Authorization header, which CORS treats as an ordinary
// request header.
package cors

import (
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
)

// DefaultAllowHeaders are the request headers an MCP client over Streamable
// HTTP (and its resumption, and bearer or DPoP authorization) needs; DPoP
// carries the RFC 9449 proof. Mcp-Method and
// Mcp-Name are the standard request headers of protocol version 2026-07-28,
// which go-sdk's client sends. The same version's Mcp-Param-{name} headers
// cannot be listed in advance: a preflight asking for any header with that
// prefix is granted it.
var DefaultAllowHeaders = []string{
	"Authorization",
	"Content-Type",
	"Mcp-Session-Id",
	"Mcp-Protocol-Version",
	"Last-Event-ID",
	"Mcp-Method",
	"Mcp-Name",
	"DPoP",
}

// paramHeaderPrefix is the lower-cased prefix of the Mcp-Param-{name}
// headers (2026-07-28).
const paramHeaderPrefix = "mcp-param-"

// DefaultExposeHeaders are the response headers a browser MCP client needs
// to read. WWW-Authenticate carries the RFC 9728 resource_metadata URL of a
// 401 (see [Options.HideWWWAuthenticate]); DPoP-Nonce the server's RFC 9449
// nonce; Retry-After how long a busy server (429, 503) asks to be left
// alone.
var DefaultExposeHeaders = []string{
	"Mcp-Session-Id",
	"Mcp-Protocol-Version",
	"WWW-Authenticate",
	"DPoP-Nonce",
	"Retry-After",
}

// DefaultAllowMethods are the methods Streamable HTTP and the legacy
// HTTP+SSE transport use.
var DefaultAllowMethods = []string{"GET", "POST", "DELETE", "OPTIONS"}

// Options configures [New]. The zero value allows every origin with the
// default headers and methods.
type Options struct {
	// AllowedOrigins lists the origins ("http://127.0.0.1:8080") allowed to
	// make requests; they are compared case-insensitively. An empty list, or
	// one containing "*", allows any origin. The request's Origin is echoed
	// back either way, never "*", with Vary: Origin.
	AllowedOrigins []string

	// AllowHeaders are request headers allowed in addition to
	// [DefaultAllowHeaders] (for example an API-key header).
	AllowHeaders []string

	// ExposeHeaders are response headers exposed in addition to
	// [DefaultExposeHeaders].
	ExposeHeaders []string

	// HideWWWAuthenticate leaves WWW-Authenticate out of
	// Access-Control-Expose-Headers, as most real servers do, so that a
	// browser client cannot read a 401's challenge and must fall back to
	// well-known discovery. It exists as a test switch.
	HideWWWAuthenticate bool

	// Disabled sends no CORS headers at all and answers no preflight, as a
	// server that never expected a browser does; every request goes to the
	// wrapped handler. It exists as a test switch (the relay's tests).
	Disabled bool

	// MaxAge is how long a browser may cache a preflight answer. Zero means
	// 10 minutes; negative means the header is not sent.
	MaxAge time.Duration
}

// New returns middleware that applies opts to the handler it wraps.
func New(opts Options) func(http.Handler) http.Handler {
	if opts.Disabled {
		return func(next http.Handler) http.Handler { return next }
	}
	c := compile(opts)
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			c.serve(next, w, r)
		})
	}
}

// Wrap is shorthand for New(opts)(h).
func Wrap(h http.Handler, opts Options) http.Handler { return New(opts)(h) }

type config struct {
	anyOrigin bool
	origins   map[string]bool // lower-cased
	methods   string
	headers   string
	expose    string
	maxAge    string
}

func compile(opts Options) *config {
	c := &config{
		anyOrigin: len(opts.AllowedOrigins) == 0,
		origins:   make(map[string]bool),
		methods:   strings.Join(DefaultAllowMethods, ", "),
		headers:   joinUnique(DefaultAllowHeaders, opts.AllowHeaders),
	}
	for _, o := range opts.AllowedOrigins {
		o = strings.ToLower(strings.TrimSuffix(strings.TrimSpace(o), "/"))
		if o == "*" {
			c.anyOrigin = true
		}
		c.origins[o] = true
	}
	expose := append(slices.Clone(DefaultExposeHeaders), opts.ExposeHeaders...)
	if opts.HideWWWAuthenticate {
		expose = slices.DeleteFunc(expose, func(h string) bool {
			return strings.EqualFold(strings.TrimSpace(h), "WWW-Authenticate")
		})
	}
	c.expose = joinUnique(expose)
	switch {
	case opts.MaxAge == 0:
		c.maxAge = "600"
	case opts.MaxAge > 0:
		c.maxAge = strconv.Itoa(int(opts.MaxAge / time.Second))
	}
	return c
}

// joinUnique joins header names, dropping case-insensitive duplicates.
func joinUnique(lists ...[]string) string {
	var out []string
	seen := make(map[string]bool)
	for _, l := range lists {
		for _, h := range l {
			h = strings.TrimSpace(h)
			k := strings.ToLower(h)
			if h == "" || seen[k] {
				continue
			}
			seen[k] = true
			out = append(out, h)
		}
	}
	return strings.Join(out, ", ")
}

func (c *config) allowed(origin string) bool {
	return origin != "" && (c.anyOrigin || c.origins[strings.ToLower(origin)])
}

// allowHeaders returns the configured headers plus any requested
// Mcp-Param-* headers.
func (c *config) allowHeaders(requested []string) string {
	var extra []string
	for _, v := range requested {
		for name := range strings.SplitSeq(v, ",") {
			name = strings.TrimSpace(name)
			if len(name) > len(paramHeaderPrefix) && strings.HasPrefix(strings.ToLower(name), paramHeaderPrefix) && validToken(name) {
				extra = append(extra, name)
			}
		}
	}
	if len(extra) == 0 {
		return c.headers
	}
	return c.headers + ", " + joinUnique(extra)
}

// validToken reports whether s is an RFC 9110 token, so that nothing but a
// header name is echoed.
func validToken(s string) bool {
	for _, r := range s {
		if r > 0x7e || r <= ' ' || strings.ContainsRune(`"(),/:;<=>?@[\]{}`, r) {
			return false
		}
	}
	return s != ""
}

func (c *config) serve(next http.Handler, w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	origin := r.Header.Get("Origin")
	preflight := r.Method == http.MethodOptions && origin != "" &&
		r.Header.Get("Access-Control-Request-Method") != ""

	if preflight {
		h.Add("Vary", "Origin")
		h.Add("Vary", "Access-Control-Request-Method")
		h.Add("Vary", "Access-Control-Request-Headers")
		if c.allowed(origin) {
			h.Set("Access-Control-Allow-Origin", origin)
			h.Set("Access-Control-Allow-Methods", c.methods)
			h.Set("Access-Control-Allow-Headers", c.allowHeaders(r.Header.Values("Access-Control-Request-Headers")))
			if c.maxAge != "" {
				h.Set("Access-Control-Max-Age", c.maxAge)
			}
		}
		// A disallowed origin gets no CORS headers, so the browser fails
		// the preflight; the status does not matter to it.
		w.WriteHeader(http.StatusNoContent)
		return
	}

	h.Add("Vary", "Origin")
	if c.allowed(origin) {
		h.Set("Access-Control-Allow-Origin", origin)
		if c.expose != "" {
			h.Set("Access-Control-Expose-Headers", c.expose)
		}
	}
	next.ServeHTTP(w, r)
}
