package relay

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

// Param is the relay's query parameter that carries the target URL.
const Param = "url"

// ErrorHeader marks an answer of the relay itself (not of the server): its
// value is one of the Err… codes, the body a sentence.
const ErrorHeader = "Mcp-Relay-Error"

// The codes of [ErrorHeader].
const (
	ErrBadTarget        = "bad_target"           // 400: no url, or not an absolute http(s) URL
	ErrTargetNotAllowed = "target_not_allowed"   // 403: the target's origin is not in Config.Targets
	ErrOriginNotAllowed = "origin_not_allowed"   // 403: the page's Origin is not in Config.PageOrigins
	ErrNotAFetch        = "not_a_fetch"          // 403: a navigation or a subresource, not a page's fetch
	ErrMethodNotAllowed = "method_not_allowed"   // 405: not GET, POST or DELETE
	ErrRequestTooLarge  = "request_too_large"    // 413: a body over Config.MaxRequestBytes
	ErrResponseTooLarge = "response_too_large"   // 502: a body over Config.MaxResponseBytes
	ErrRedirectRefused  = "redirect_refused"     // 502: a redirect off the target's origin, or too many
	ErrUpstreamFailed   = "upstream_unreachable" // 502: the server could not be reached
	ErrUpstreamTimeout  = "timeout"              // 504: the server did not answer within Config.Timeout
)

// ForwardHeaders are the request headers the relay forwards: what MCP over
// Streamable HTTP (and its resumption) and OAuth (bearer and DPoP) send.
// Mcp-Param-{name} headers (2026-07-28) are forwarded too.
var ForwardHeaders = []string{
	"Accept",
	"Authorization",
	"Content-Type",
	"DPoP",
	"Last-Event-ID",
	"Mcp-Method",
	"Mcp-Name",
	"Mcp-Protocol-Version",
	"Mcp-Session-Id",
}

// PassHeaders are the response headers the relay passes back, all exposed
// to the page: WWW-Authenticate carries RFC 9728's resource_metadata,
// DPoP-Nonce RFC 9449's nonce.
var PassHeaders = []string{
	"Cache-Control",
	"Content-Type",
	"DPoP-Nonce",
	"Mcp-Protocol-Version",
	"Mcp-Session-Id",
	"Retry-After",
	"WWW-Authenticate",
}

const paramPrefix = "mcp-param-"

// maxRedirects bounds the redirects followed within a target's origin.
const maxRedirects = 5

// Config configures [New]. Every field is optional but Targets.
type Config struct {
	// Targets are the origins the relay forwards to
	// ("https://mcp.example.com", "https://login.example.com"): the MCP
	// servers and their authorization servers. Required: a relay that
	// forwards anywhere would let anyone use the host's network.
	Targets []string

	// PageOrigins are the origins of the pages that may call the relay
	// ("https://app.example"); the relay answers their preflights and
	// adds CORS headers for them. A request with an Origin header not
	// listed is refused. List the page's own origin when the relay is on
	// it: browsers send Origin with a same-origin POST. Requests without
	// Origin (same-origin GETs, non-browser callers) are served, unless
	// Sec-Fetch-Site says another site's page sent them.
	PageOrigins []string

	// AllowHeaders are request headers forwarded in addition to
	// [ForwardHeaders] (for example an API-key header).
	AllowHeaders []string

	// Client sends the forwarded requests; nil means a client over
	// http.DefaultTransport. Its CheckRedirect and Jar are not used: the
	// relay follows redirects only within the target's origin and never
	// keeps cookies.
	Client *http.Client

	// MaxRequestBytes bounds a request body; zero means 4 MiB.
	MaxRequestBytes int64

	// MaxResponseBytes bounds a response body; an event stream is cut
	// there. Zero means 16 MiB.
	MaxResponseBytes int64

	// Timeout bounds a whole exchange, and for an event stream the wait
	// for its response headers. Zero means 60 seconds.
	Timeout time.Duration

	// IdleTimeout closes an event stream that sends nothing for this
	// long. Zero means 15 minutes.
	IdleTimeout time.Duration
}

// Handler is the relay; [New] makes one. It is safe for concurrent use.
type Handler struct {
	cfg     Config
	targets map[string]bool
	pages   map[string]bool
	forward map[string]bool // canonical header names
	client  *http.Client
	expose  string
}

var _ http.Handler = (*Handler)(nil)

// New returns a relay for cfg. It refuses a configuration without
// Targets, and a target or page origin that is not an http(s) origin.
func New(cfg Config) (*Handler, error) {
	if len(cfg.Targets) == 0 {
		return nil, errors.New("relay: Config.Targets is empty; list the origins of the MCP servers and authorization servers the relay may forward to (it is never an open relay)")
	}
	h := &Handler{cfg: cfg, targets: map[string]bool{}, pages: map[string]bool{}, forward: map[string]bool{}}
	for _, t := range cfg.Targets {
		o, err := NormalizeOrigin(t)
		if err != nil {
			return nil, fmt.Errorf("relay: Config.Targets: %w", err)
		}
		h.targets[o] = true
	}
	for _, p := range cfg.PageOrigins {
		o, err := NormalizeOrigin(p)
		if err != nil {
			return nil, fmt.Errorf("relay: Config.PageOrigins: %w", err)
		}
		h.pages[o] = true
	}
	for _, k := range append(append([]string{}, ForwardHeaders...), cfg.AllowHeaders...) {
		if !validToken(k) {
			return nil, fmt.Errorf("relay: Config.AllowHeaders: %q is not a header name", k)
		}
		h.forward[http.CanonicalHeaderKey(k)] = true
	}
	for _, k := range []string{"Cookie", "Origin", "Referer", "Host", "Proxy-Authorization"} {
		if h.forward[http.CanonicalHeaderKey(k)] {
			return nil, fmt.Errorf("relay: Config.AllowHeaders: %s is never forwarded", k)
		}
	}
	if h.cfg.MaxRequestBytes <= 0 {
		h.cfg.MaxRequestBytes = 4 << 20
	}
	if h.cfg.MaxResponseBytes <= 0 {
		h.cfg.MaxResponseBytes = 16 << 20
	}
	if h.cfg.Timeout <= 0 {
		h.cfg.Timeout = 60 * time.Second
	}
	if h.cfg.IdleTimeout <= 0 {
		h.cfg.IdleTimeout = 15 * time.Minute
	}
	base := http.DefaultClient
	if cfg.Client != nil {
		base = cfg.Client
	}
	h.client = &http.Client{Transport: base.Transport, CheckRedirect: checkRedirect}
	h.expose = strings.Join(append(append([]string{}, PassHeaders...), ErrorHeader), ", ")
	return h, nil
}

// NormalizeOrigin returns s as "scheme://host[:port]", lower-case and
// without a default port, or an error when s is not an http(s) origin.
func NormalizeOrigin(s string) (string, error) {
	u, err := url.Parse(strings.TrimSuffix(strings.TrimSpace(s), "/"))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil || u.Path != "" || u.RawQuery != "" || u.Fragment != "" {
		return "", fmt.Errorf("%q is not an origin (scheme://host[:port])", s)
	}
	return originOf(u), nil
}

// originOf is u's origin, lower-case, without the scheme's default port.
func originOf(u *url.URL) string {
	scheme, host := strings.ToLower(u.Scheme), strings.ToLower(u.Host)
	if (scheme == "https" && strings.HasSuffix(host, ":443")) || (scheme == "http" && strings.HasSuffix(host, ":80")) {
		host = host[:strings.LastIndexByte(host, ':')]
	}
	return scheme + "://" + host
}

// checkRedirect follows a redirect only within the first request's origin.
func checkRedirect(req *http.Request, via []*http.Request) error {
	if originOf(req.URL) != originOf(via[0].URL) || len(via) > maxRedirects {
		return http.ErrUseLastResponse
	}
	return nil
}

// ServeHTTP implements http.Handler.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	// The relay is mounted on the host's own origin: a server's answer must
	// never become a document (or a script, a style) of that origin, where
	// its markup would run beside the page's sign-ins.
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Set("Content-Security-Policy", "sandbox; default-src 'none'")
	w.Header().Set("Content-Disposition", "attachment")
	if mode, dest := r.Header.Get("Sec-Fetch-Mode"), r.Header.Get("Sec-Fetch-Dest"); mode == "navigate" || (dest != "" && dest != "empty") {
		h.fail(w, http.StatusForbidden, ErrNotAFetch, "relay: only a page's fetch is relayed, not a navigation or a %s", clip(dest))
		return
	}
	origin := r.Header.Get("Origin")
	if origin != "" {
		o, err := NormalizeOrigin(origin)
		if err != nil || !h.pages[o] {
			h.fail(w, http.StatusForbidden, ErrOriginNotAllowed, "relay: pages of %s may not use this relay; the host lists the pages that may (Config.PageOrigins)", clip(origin))
			return
		}
		w.Header().Set("Access-Control-Allow-Origin", origin)
		w.Header().Add("Vary", "Origin")
	}
	if site := r.Header.Get("Sec-Fetch-Site"); origin == "" && (site == "cross-site" || site == "same-site") {
		// A browser leaves Origin out of another site's no-cors GET (an
		// image, a link): such a request is no page of this host's.
		h.fail(w, http.StatusForbidden, ErrOriginNotAllowed, "relay: a request from another site without Origin is not relayed")
		return
	}
	if r.Method == http.MethodOptions && origin != "" && r.Header.Get("Access-Control-Request-Method") != "" {
		h.preflight(w, r)
		return
	}
	w.Header().Set("Access-Control-Expose-Headers", h.expose)
	switch r.Method {
	case http.MethodGet, http.MethodPost, http.MethodDelete:
	default:
		h.fail(w, http.StatusMethodNotAllowed, ErrMethodNotAllowed, "relay: method %s is not relayed (only GET, POST and DELETE)", clip(r.Method))
		return
	}
	target, err := h.target(r)
	if err != nil {
		var code string
		status := http.StatusBadRequest
		if errors.Is(err, errNotAllowed) {
			code, status = ErrTargetNotAllowed, http.StatusForbidden
		} else {
			code = ErrBadTarget
		}
		h.fail(w, status, code, "%v", err)
		return
	}
	var body []byte
	if r.Body != nil {
		body, err = io.ReadAll(http.MaxBytesReader(w, r.Body, h.cfg.MaxRequestBytes))
		if err != nil {
			var tooBig *http.MaxBytesError
			if errors.As(err, &tooBig) {
				h.fail(w, http.StatusRequestEntityTooLarge, ErrRequestTooLarge, "relay: the request body is over %d bytes", h.cfg.MaxRequestBytes)
				return
			}
			h.fail(w, http.StatusBadRequest, ErrBadTarget, "relay: reading the request body: %v", err)
			return
		}
	}
	h.relay(w, r, target, body)
}

// preflight answers a CORS preflight for an allowed page: the methods the
// relay serves, and of the requested headers those it forwards.
func (h *Handler) preflight(w http.ResponseWriter, r *http.Request) {
	w.Header().Add("Vary", "Access-Control-Request-Method")
	w.Header().Add("Vary", "Access-Control-Request-Headers")
	var allowed []string
	for _, v := range r.Header.Values("Access-Control-Request-Headers") {
		for name := range strings.SplitSeq(v, ",") {
			if name = strings.TrimSpace(name); h.forwarded(name) {
				allowed = append(allowed, name)
			}
		}
	}
	w.Header().Set("Access-Control-Allow-Methods", "GET, POST, DELETE")
	if len(allowed) > 0 {
		w.Header().Set("Access-Control-Allow-Headers", strings.Join(allowed, ", "))
	}
	w.Header().Set("Access-Control-Max-Age", "600")
	w.WriteHeader(http.StatusNoContent)
}

func (h *Handler) forwarded(name string) bool {
	if !validToken(name) {
		return false
	}
	if h.forward[http.CanonicalHeaderKey(name)] {
		return true
	}
	return len(name) > len(paramPrefix) && strings.HasPrefix(strings.ToLower(name), paramPrefix)
}

var errNotAllowed = errors.New("not allowed")

// target reads and checks the target URL.
func (h *Handler) target(r *http.Request) (*url.URL, error) {
	raw := r.URL.Query().Get(Param)
	if raw == "" {
		return nil, fmt.Errorf("relay: no target; put the server's URL in the query parameter %q", Param)
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil || u.Fragment != "" {
		return nil, fmt.Errorf("relay: the target %q is not an absolute http(s) URL without user info or fragment", clip(raw))
	}
	if !h.targets[originOf(u)] {
		return nil, fmt.Errorf("relay: %s is not a target of this relay; the host lists the servers it relays to (Config.Targets): %w", originOf(u), errNotAllowed)
	}
	return u, nil
}

func (h *Handler) relay(w http.ResponseWriter, r *http.Request, target *url.URL, body []byte) {
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	// One timer bounds the exchange; an event stream swaps it for an idle
	// timer that each chunk resets.
	var expired atomic.Bool
	deadline := time.AfterFunc(h.cfg.Timeout, func() { expired.Store(true); cancel() })
	defer deadline.Stop()

	out, err := h.upstream(ctx, r, target, body)
	if err != nil {
		h.fail(w, http.StatusBadRequest, ErrBadTarget, "relay: %v", err)
		return
	}
	resp, err := h.client.Do(out)
	if err != nil {
		if expired.Load() {
			h.timedOut(w, target)
			return
		}
		h.fail(w, http.StatusBadGateway, ErrUpstreamFailed, "relay: %s could not be reached", originOf(target))
		return
	}
	defer resp.Body.Close()
	if resp.StatusCode >= 300 && resp.StatusCode < 400 && resp.StatusCode != http.StatusNotModified {
		to := "another origin"
		if loc, err := resp.Location(); err == nil {
			to = originOf(loc)
		}
		h.fail(w, http.StatusBadGateway, ErrRedirectRefused, "relay: %s redirected to %s; the relay follows redirects only within a server's origin (at most %d)", originOf(target), to, maxRedirects)
		return
	}
	for _, k := range PassHeaders {
		if vs := resp.Header.Values(k); len(vs) > 0 {
			w.Header()[http.CanonicalHeaderKey(k)] = vs
		}
	}
	if isEventStream(resp.Header.Get("Content-Type")) {
		deadline.Stop()
		h.stream(w, resp, cancel)
		return
	}
	h.whole(w, resp, target, &expired)
}

// upstream is the request to target that relays r (its body read into
// body), with the headers the relay forwards.
func (h *Handler) upstream(ctx context.Context, r *http.Request, target *url.URL, body []byte) (*http.Request, error) {
	out, err := http.NewRequestWithContext(ctx, r.Method, target.String(), bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	if len(body) == 0 {
		out.Body, out.GetBody, out.ContentLength = http.NoBody, nil, 0
	}
	for k, vs := range r.Header {
		if h.forwarded(k) {
			out.Header[k] = vs
		}
	}
	return out, nil
}

// whole passes on an answer that is not an event stream, read whole up to
// MaxResponseBytes; expired says the exchange's timer ran out.
func (h *Handler) whole(w http.ResponseWriter, resp *http.Response, target *url.URL, expired *atomic.Bool) {
	if resp.ContentLength > h.cfg.MaxResponseBytes {
		h.tooLarge(w, target)
		return
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, h.cfg.MaxResponseBytes+1))
	switch {
	case int64(len(data)) > h.cfg.MaxResponseBytes:
		h.tooLarge(w, target)
		return
	case err != nil && expired.Load():
		h.timedOut(w, target)
		return
	case err != nil:
		h.fail(w, http.StatusBadGateway, ErrUpstreamFailed, "relay: the answer of %s broke off", originOf(target))
		return
	}
	if resp.StatusCode != http.StatusNoContent && resp.StatusCode != http.StatusNotModified {
		w.Header().Set("Content-Length", strconv.Itoa(len(data)))
	}
	w.WriteHeader(resp.StatusCode)
	w.Write(data)
}

func (h *Handler) timedOut(w http.ResponseWriter, target *url.URL) {
	h.fail(w, http.StatusGatewayTimeout, ErrUpstreamTimeout, "relay: %s did not answer within %v", originOf(target), h.cfg.Timeout)
}

func (h *Handler) tooLarge(w http.ResponseWriter, target *url.URL) {
	h.fail(w, http.StatusBadGateway, ErrResponseTooLarge, "relay: the answer of %s is over %d bytes", originOf(target), h.cfg.MaxResponseBytes)
}

// stream passes an event stream on chunk by chunk, flushing each, until
// it ends, goes idle for IdleTimeout or reaches MaxResponseBytes.
func (h *Handler) stream(w http.ResponseWriter, resp *http.Response, cancel context.CancelFunc) {
	idle := time.AfterFunc(h.cfg.IdleTimeout, cancel)
	defer idle.Stop()
	rc := http.NewResponseController(w)
	w.WriteHeader(resp.StatusCode)
	_ = rc.Flush()
	buf := make([]byte, 32<<10)
	left := h.cfg.MaxResponseBytes
	for left > 0 {
		n, err := resp.Body.Read(buf[:min(int64(len(buf)), left)])
		if n > 0 {
			idle.Reset(h.cfg.IdleTimeout)
			left -= int64(n)
			if _, werr := w.Write(buf[:n]); werr != nil {
				return
			}
			if rc.Flush() != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

func isEventStream(ct string) bool {
	mt, _, _ := strings.Cut(ct, ";")
	return strings.EqualFold(strings.TrimSpace(mt), "text/event-stream")
}

// fail answers with the relay's own error.
func (h *Handler) fail(w http.ResponseWriter, status int, code, format string, args ...any) {
	w.Header().Set(ErrorHeader, code)
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	fmt.Fprintf(w, format+"\n", args...)
}

// clip bounds what of a caller's input an error repeats.
func clip(s string) string {
	if len(s) > 200 {
		return s[:200] + "…"
	}
	return s
}

// validToken reports whether s is an RFC 9110 token (a header name).
func validToken(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c <= ' ' || c >= 0x7f || strings.IndexByte(`"(),/:;<=>?@[\]{}`, c) >= 0 {
			return false
		}
	}
	return s != ""
}
