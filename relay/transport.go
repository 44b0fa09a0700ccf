package relay

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"sync"

	"github.com/mcpwasm/mcpwasm/mcperr"
)

// Mode says when a [Transport] sends a request through the relay.
type Mode string

const (
	// Fallback sends directly first; an origin whose direct request fails
	// without an answer (a CORS refusal, or a network error: fetch tells
	// them apart from neither) goes through the relay from then on.
	Fallback Mode = "fallback"
	// Always sends every request through the relay.
	Always Mode = "always"
)

// maxReplayBytes bounds a request body kept to be sent again through the
// relay after a failed direct attempt.
const maxReplayBytes = 4 << 20

// Transport is the page's side of the relay: an http.RoundTripper that
// sends a request for a server to the relay at Relay instead, in the
// format of the package doc, when Mode says so. The request it is given
// keeps the server's URL, and so does the Response.Request it returns.
// It is safe for concurrent use.
type Transport struct {
	// Base sends the requests (to the server or to the relay).
	Base http.RoundTripper
	// Relay is the relay's URL ("https://app.example/mcp-relay").
	Relay string
	// Mode is [Fallback] (also when empty) or [Always].
	Mode Mode
	// Routes is what Fallback has learnt (see [Routes]); share one
	// between the transports of a page. Nil: this transport's own.
	Routes *Routes

	once sync.Once
	own  *Routes
}

// Routes is what fallback has learnt, for the life of the page (of the
// runtime): the origins that go through the relay, and the URLs a probe
// found answering the page directly. A direct answer is not remembered
// per origin: one path of a server may allow the page (go-sdk's
// protected resource metadata sends Access-Control-Allow-Origin: *) while
// its MCP endpoint does not. It is safe for concurrent use.
type Routes struct {
	mu      sync.Mutex
	relayed map[string]bool // origin
	direct  map[string]bool // URL without query, answered a probe
}

func (r *Routes) setRelayed(origin string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.relayed == nil {
		r.relayed = map[string]bool{}
	}
	r.relayed[origin] = true
}

func (r *Routes) setDirect(u string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.direct == nil {
		r.direct = map[string]bool{}
	}
	r.direct[u] = true
}

func (r *Routes) isDirect(u string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.direct[u]
}

// Relayed reports whether requests for origin go through the relay.
func (r *Routes) Relayed(origin string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.relayed[origin]
}

var _ http.RoundTripper = (*Transport)(nil)

// CheckURL returns an error unless s can be a relay's URL: absolute https
// (or http on a loopback host), without query, fragment or user info.
func CheckURL(s string) error {
	u, err := url.Parse(s)
	if err != nil || u.Host == "" || u.User != nil || strings.ContainsAny(s, "?#") ||
		!(u.Scheme == "https" || (u.Scheme == "http" && isLoopback(u.Hostname()))) {
		return fmt.Errorf("relay %q must be an absolute https URL (http only on a loopback host) without query, fragment or user info, such as \"https://app.example/mcp-relay\"", clip(s))
	}
	return nil
}

// isLoopback reports whether host (no port) is localhost or a loopback IP
// (not merely a name that starts like one, such as 127.0.0.1.example.com).
func isLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip, err := netip.ParseAddr(strings.Trim(host, "[]"))
	return err == nil && ip.IsLoopback()
}

func (t *Transport) routes() *Routes {
	if t.Routes != nil {
		return t.Routes
	}
	t.once.Do(func() { t.own = &Routes{} })
	return t.own
}

func (t *Transport) base() http.RoundTripper {
	if t.Base != nil {
		return t.Base
	}
	return http.DefaultTransport
}

// RoundTrip implements http.RoundTripper.
func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	if t.Mode == Always {
		return t.viaRelay(req)
	}
	origin := originOf(req.URL)
	routes := t.routes()
	if routes.Relayed(origin) {
		return t.viaRelay(req)
	}
	if !preflighted(req) && req.Method != http.MethodGet && req.Method != http.MethodHead {
		// A request without a preflight reaches a server without CORS
		// (which acts on it) before the browser refuses the answer: sending
		// it again through the relay could use a code or a refresh token
		// twice. A GET of the same URL, without body or headers, asks
		// first whether it answers this page.
		key := withoutQuery(req.URL)
		if !routes.isDirect(key) {
			if err := t.probe(req); err != nil {
				if req.Context().Err() != nil {
					return nil, req.Context().Err()
				}
				return t.fallBack(req, origin, err)
			}
			routes.setDirect(key)
		}
		return t.base().RoundTrip(req)
	}
	if err := replayable(req); err != nil {
		return nil, err
	}
	resp, err := t.base().RoundTrip(req)
	if err == nil || req.Context().Err() != nil {
		return resp, err
	}
	// Nothing reached the server: a preflighted request's preflight was
	// refused, or a GET, which changes nothing, was.
	return t.fallBack(req, origin, err)
}

// fallBack sends req through the relay after its direct attempt failed
// with direct. The origin goes through the relay from then on only when
// the relay reached the server: a server that was briefly away, or one
// the relay does not serve, is tried directly again next time (and a
// relay that does not list it says nothing about it: direct is the
// answer).
func (t *Transport) fallBack(req *http.Request, origin string, direct error) (*http.Response, error) {
	resp, err := t.viaRelay(req)
	var re *Error
	switch {
	case err == nil:
		t.routes().setRelayed(origin)
	case errors.As(err, &re) && re.Code == ErrTargetNotAllowed:
		return nil, direct
	}
	return resp, err
}

func withoutQuery(u *url.URL) string {
	c := *u
	c.RawQuery, c.Fragment = "", ""
	return c.String()
}

// probe sends a bare GET of req's URL, not following redirects.
func (t *Transport) probe(req *http.Request) error {
	p, err := http.NewRequestWithContext(req.Context(), http.MethodGet, req.URL.String(), nil)
	if err != nil {
		return err
	}
	if inBrowser {
		p.Header.Set("js.fetch:redirect", "manual")
		p.Header.Set("js.fetch:credentials", "omit")
	}
	resp, err := t.base().RoundTrip(p)
	if err != nil {
		return err
	}
	io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
	return nil
}

// viaRelay sends req to the relay, and turns the relay's own refusals into
// errors.
func (t *Transport) viaRelay(req *http.Request) (*http.Response, error) {
	ru, err := url.Parse(t.Relay)
	if err != nil || CheckURL(t.Relay) != nil {
		return nil, mcperr.New(mcperr.InvalidArgument, "mcp: %v", CheckURL(t.Relay))
	}
	q := url.Values{Param: {req.URL.String()}}
	ru.RawQuery = q.Encode()
	var body io.ReadCloser
	switch {
	case req.GetBody != nil:
		if body, err = req.GetBody(); err != nil {
			return nil, err
		}
	case req.Body != nil && req.Body != http.NoBody:
		body = req.Body
	}
	out, err := http.NewRequestWithContext(req.Context(), req.Method, ru.String(), body)
	if err != nil {
		return nil, err
	}
	out.ContentLength = req.ContentLength
	for k, vs := range req.Header {
		out.Header[k] = vs
	}
	// The relay's answer is never a redirect; no cookie of the relay's
	// origin goes with a request meant for a server.
	out.Header.Del("js.fetch:redirect")
	if inBrowser {
		out.Header.Set("js.fetch:credentials", "omit")
	}
	resp, err := t.base().RoundTrip(out)
	if err != nil {
		if req.Context().Err() != nil {
			return nil, req.Context().Err()
		}
		return nil, &Error{Relay: t.Relay, Target: originOf(req.URL), Code: "unreachable",
			Message: fmt.Sprintf("the relay %s could not be reached (%v); check the relay option and that the relay allows this page (Config.PageOrigins)", clip(t.Relay), err)}
	}
	if code := resp.Header.Get(ErrorHeader); code != "" {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 2<<10))
		resp.Body.Close()
		return nil, &Error{Relay: t.Relay, Target: originOf(req.URL), Code: clip(code), Status: resp.StatusCode, Message: cleanText(string(b))}
	}
	resp.Request = req
	return resp, nil
}

// Error is the relay's refusal of a request, or a relay that could not be
// reached. It is coded "network": the request did not reach the server.
type Error struct {
	Relay   string // the relay's URL
	Target  string // the server's origin
	Code    string // the relay's Mcp-Relay-Error code, or "unreachable"
	Status  int    // the relay's HTTP status, 0 when unreachable
	Message string // the relay's sentence
}

func (e *Error) Error() string {
	if e.Status == 0 {
		return "relay: " + e.Message
	}
	return fmt.Sprintf("relay: %s refused the request for %s (%d %s): %s", clip(e.Relay), e.Target, e.Status, e.Code, e.Message)
}

// MCPErrorCode implements [mcperr.Coder].
func (e *Error) MCPErrorCode() mcperr.Code { return mcperr.Network }

// cleanText keeps a relay's sentence printable and short.
func cleanText(s string) string {
	s = strings.Map(func(r rune) rune {
		if r < ' ' || r == 0x7f {
			return ' '
		}
		return r
	}, strings.TrimSpace(s))
	return clip(s)
}

// replayable makes req's body readable a second time (bounded).
func replayable(req *http.Request) error {
	if req.Body == nil || req.Body == http.NoBody || req.GetBody != nil {
		return nil
	}
	data, err := io.ReadAll(io.LimitReader(req.Body, maxReplayBytes+1))
	req.Body.Close()
	if err != nil {
		return err
	}
	if len(data) > maxReplayBytes {
		return mcperr.New(mcperr.InvalidArgument, "relay: a request body over %d bytes cannot be sent again through the relay", maxReplayBytes)
	}
	req.Body = io.NopCloser(bytes.NewReader(data))
	req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(data)), nil }
	return nil
}

// preflighted reports whether a browser sends a CORS preflight before req
// (Fetch standard, "CORS-safelisted method" and "request-header"): then a
// refusal means the request itself never left.
func preflighted(req *http.Request) bool {
	switch req.Method {
	case http.MethodGet, http.MethodHead, http.MethodPost:
	default:
		return true
	}
	for k, vs := range req.Header {
		if strings.HasPrefix(k, "js.fetch:") {
			continue
		}
		switch http.CanonicalHeaderKey(k) {
		case "Accept", "Accept-Language", "Content-Language":
		case "Content-Type":
			mt, _, _ := strings.Cut(strings.Join(vs, ","), ";")
			switch strings.ToLower(strings.TrimSpace(mt)) {
			case "application/x-www-form-urlencoded", "multipart/form-data", "text/plain":
			default:
				return true
			}
		default:
			return true
		}
	}
	return false
}
