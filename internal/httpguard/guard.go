// Package httpguard keeps credentials and requests on the origin they belong
// to. It is the one place where the MCP client attaches the page's
// credentials (a bearer token, API-key headers) to requests, and the one
// place that decides whether a redirect is followed.
//
// The rules, for every request that passes through a [Transport]:
//   - With [Transport.Origin] set, a request for any other origin is refused
//     before it leaves ([OffOriginError]): an MCP client only ever talks to
//     its server's origin, so a legacy SSE endpoint event or a redirect that
//     names another origin never receives the page's tokens, headers or
//     data. Credentials are added only to requests that pass this check.
//   - A redirect is followed only within the origin of the request it
//     answers. Natively the http.Client's CheckRedirect ([CheckRedirect])
//     enforces it; in the browser, where fetch would follow redirects
//     itself, every request is sent with fetch's manual redirect mode and a
//     redirect is resolved by [Transport] (see followRedirect).
//   - Every header value is checked before the request is sent: a value a
//     header cannot carry (a control character, non-ASCII) is an error, never
//     a JavaScript exception (fetch's Headers.append throws on them, which
//     syscall/js turns into a Go panic).
package httpguard

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/mcpwasm/mcpwasm/mcperr"
)

// maxRedirects bounds the redirects followed for one request.
const maxRedirects = 5

// credentialHeaders are never sent on a probe request (see followRedirect):
// besides the headers a [Transport] adds itself, these carry credentials.
var credentialHeaders = []string{"Authorization", "Dpop", "Mcp-Session-Id", "Cookie", "Proxy-Authorization"}

// Transport is an http.RoundTripper that enforces the rules of the package
// doc over Base. It is safe for concurrent use.
type Transport struct {
	// Base sends the requests: http.DefaultTransport (fetch under
	// GOOS=js) when nil.
	Base http.RoundTripper
	// Origin, when set ("scheme://host[:port]"), is the only origin
	// requests may go to.
	Origin string
	// Credentials, when set, adds credentials to a request that is about
	// to go to Origin (its Header is the request's own copy). An error
	// fails the request as it is.
	Credentials func(*http.Request) error
	// CredentialHeaders names the headers Credentials adds, so that a
	// probe sent to find where a redirect leads goes without them.
	CredentialHeaders []string
}

// OriginOf returns u's origin: "scheme://host[:port]", lower-case.
func OriginOf(u *url.URL) string {
	return strings.ToLower(u.Scheme) + "://" + strings.ToLower(u.Host)
}

// OffOriginError reports a request or a redirect that would have left the
// origin its credentials belong to. It is coded "protocol": the server
// pointed the client somewhere it must not go.
type OffOriginError struct {
	From string // the origin the request belongs to
	To   string // where it would have gone
	Why  string // "redirect" or "request"
}

func (e *OffOriginError) Error() string {
	if e.Why == "redirect" {
		return fmt.Sprintf("the server at %s redirected a request to %s; requests only follow redirects within their own origin, so it was not followed", e.From, e.To)
	}
	return fmt.Sprintf("the server at %s pointed the client at another origin (%s), for example in a legacy SSE endpoint event; requests with the page's credentials and data only go to the server's own origin, so it was refused", e.From, e.To)
}

// MCPErrorCode implements [mcperr.Coder].
func (e *OffOriginError) MCPErrorCode() mcperr.Code { return mcperr.Protocol }

// HeaderError reports a header value that a request cannot carry.
type HeaderError struct{ Name string }

func (e *HeaderError) Error() string {
	return fmt.Sprintf("the %s header has characters an HTTP header cannot carry (control characters or non-ASCII); the request was not sent", e.Name)
}

// MCPErrorCode implements [mcperr.Coder].
func (e *HeaderError) MCPErrorCode() mcperr.Code { return mcperr.Protocol }

// CheckRedirect is an http.Client CheckRedirect that follows a redirect
// only within the origin of the original request, at most maxRedirects
// times.
func CheckRedirect(req *http.Request, via []*http.Request) error {
	if len(via) == 0 {
		return nil
	}
	if from, to := OriginOf(via[0].URL), OriginOf(req.URL); from != to {
		return &OffOriginError{From: from, To: to, Why: "redirect"}
	}
	if len(via) >= maxRedirects {
		return mcperr.New(mcperr.Protocol, "the server redirected a request more than %d times", maxRedirects)
	}
	return nil
}

// NewClient returns an http.Client over a [Transport] with base and the
// origin-keeping [CheckRedirect].
func NewClient(t *Transport) *http.Client {
	return &http.Client{Transport: t, CheckRedirect: CheckRedirect}
}

// RoundTrip implements http.RoundTripper.
func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	if t.Origin != "" {
		if to := OriginOf(req.URL); to != t.Origin {
			closeBody(req)
			return nil, &OffOriginError{From: t.Origin, To: to, Why: "request"}
		}
	}
	req = req.Clone(req.Context())
	if t.Credentials != nil {
		if err := t.Credentials(req); err != nil {
			closeBody(req)
			return nil, err
		}
	}
	if err := checkHeaders(req.Header); err != nil {
		closeBody(req)
		return nil, err
	}
	if !manualRedirects {
		return t.send(req)
	}
	req.Header.Set(fetchRedirectHeader, "manual")
	resp, err := t.send(req)
	if err != nil || !isOpaqueRedirect(resp) {
		return resp, err
	}
	return t.followRedirect(req, resp)
}

func (t *Transport) base() http.RoundTripper {
	if t.Base != nil {
		return t.Base
	}
	return http.DefaultTransport
}

// send calls Base; a panic in it (a JavaScript exception thrown inside
// fetch that syscall/js re-raised) becomes an error.
func (t *Transport) send(req *http.Request) (resp *http.Response, err error) {
	defer func() {
		if r := recover(); r != nil {
			resp, err = nil, mcperr.New(mcperr.Network, "the browser refused the request: %v", r)
		}
	}()
	return t.base().RoundTrip(req)
}

// followRedirect resolves a redirect that fetch reported without saying
// where it leads (manual mode hides the Location): a probe of the same
// method and URL, without a body and without any credential header, is
// sent with fetch following redirects, which tells the final URL. Only
// when it is on the same origin is the real request, with its credentials
// and body, sent there. A probe that fails (another origin without CORS)
// or leads elsewhere ends the request with an error.
func (t *Transport) followRedirect(req *http.Request, resp *http.Response) (*http.Response, error) {
	for range maxRedirects {
		drain(resp)
		from := OriginOf(req.URL)
		probe, err := http.NewRequestWithContext(req.Context(), req.Method, req.URL.String(), nil)
		if err != nil {
			return nil, err
		}
		for k, vs := range req.Header {
			if k != fetchRedirectHeader && !t.isCredential(k) {
				probe.Header[k] = vs
			}
		}
		presp, err := t.send(probe)
		if err != nil {
			if req.Context().Err() != nil {
				return nil, req.Context().Err()
			}
			// Coded protocol, not network: the request was answered, with a
			// redirect this client refuses to follow blind.
			return nil, mcperr.Wrap(mcperr.Protocol, err, fmt.Sprintf("the server at %s redirected a request to a place this page cannot check (another origin, or a redirect without CORS headers); it was not followed", from))
		}
		drain(presp)
		final := req.URL
		if presp.Request != nil && presp.Request.URL != nil {
			final = presp.Request.URL
		}
		if to := OriginOf(final); to != from {
			return nil, &OffOriginError{From: from, To: to, Why: "redirect"}
		}
		if final.String() == req.URL.String() {
			return nil, mcperr.New(mcperr.Protocol, "the server at %s redirected a request but not a request without its body and credentials, so where it leads is unknown; it was not followed", from)
		}
		next := req.Clone(req.Context())
		next.URL = final
		next.Host = ""
		if req.Body != nil && req.Body != http.NoBody {
			if req.GetBody == nil {
				return nil, mcperr.New(mcperr.Protocol, "the server at %s redirected a request whose body cannot be sent again", from)
			}
			if next.Body, err = req.GetBody(); err != nil {
				return nil, err
			}
		}
		resp, err = t.send(next)
		if err != nil || !isOpaqueRedirect(resp) {
			return resp, err
		}
		req = next
	}
	drain(resp)
	return nil, mcperr.New(mcperr.Protocol, "the server redirected a request more than %d times", maxRedirects)
}

func (t *Transport) isCredential(name string) bool {
	for _, h := range credentialHeaders {
		if strings.EqualFold(h, name) {
			return true
		}
	}
	for _, h := range t.CredentialHeaders {
		if strings.EqualFold(h, name) {
			return true
		}
	}
	return false
}

// isOpaqueRedirect reports fetch's answer to a redirect in manual mode: a
// response with status 0.
func isOpaqueRedirect(resp *http.Response) bool { return resp.StatusCode == 0 }

// checkHeaders refuses header names and values a request cannot carry.
func checkHeaders(h http.Header) error {
	for k, vs := range h {
		if !ValidHeaderName(k) {
			return &HeaderError{Name: fmt.Sprintf("%q", k)}
		}
		for _, v := range vs {
			if !ValidHeaderValue(v) {
				return &HeaderError{Name: k}
			}
		}
	}
	return nil
}

// ValidHeaderName reports whether k is an HTTP token (RFC 9110 §5.6.2).
func ValidHeaderName(k string) bool {
	if k == "" {
		return false
	}
	for i := 0; i < len(k); i++ {
		c := k[i]
		if c <= ' ' || c >= 0x7f || strings.IndexByte(`"(),/:;<=>?@[\]{}`, c) >= 0 {
			return false
		}
	}
	return true
}

// ValidHeaderValue reports whether v can be sent as a header value by every
// HTTP stack, fetch included: visible ASCII, spaces and tabs only.
func ValidHeaderValue(v string) bool {
	for i := 0; i < len(v); i++ {
		c := v[i]
		if (c < ' ' && c != '\t') || c >= 0x7f {
			return false
		}
	}
	return true
}

func closeBody(req *http.Request) {
	if req.Body != nil {
		req.Body.Close()
	}
}

// drain reads what is left of a response body (bounded) and closes it.
func drain(resp *http.Response) {
	if resp == nil || resp.Body == nil {
		return
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
}

var _ http.RoundTripper = (*Transport)(nil)

// IsOffOrigin reports whether err is an [OffOriginError].
func IsOffOrigin(err error) bool {
	var e *OffOriginError
	return errors.As(err, &e)
}
