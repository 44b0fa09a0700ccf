package provider

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"mime"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/mcpwasm/mcpwasm/agent"
	"github.com/mcpwasm/mcpwasm/agent/internal/sse"
	"github.com/mcpwasm/mcpwasm/internal/busy"
	"github.com/mcpwasm/mcpwasm/mcperr"
)

// Defaults of [Client].
const (
	DefaultMaxRetries = 2
	DefaultMaxWait    = 30 * time.Second
	// MaxErrorBody caps how much of an error response is read.
	MaxErrorBody = 64 << 10
	// maxMessage caps a provider's message, in runes.
	maxMessage = 500
	// firstBackoff is the wait before the first retry when the provider
	// gave no Retry-After; it doubles with each retry.
	firstBackoff = 500 * time.Millisecond
)

// ErrorFields is what a provider's error body says.
type ErrorFields struct {
	Type, Code, Message string
}

// Client posts requests to one provider.
type Client struct {
	Name       string       // provider name, the prefix of errors: "openai"
	HTTP       *http.Client // required
	Key        agent.Secret // redacted from every error
	MaxRetries int          // retries after the first attempt; < 0 means none, 0 the default
	MaxWait    time.Duration
	// ParseError reads the provider's error body; ok false when it is not
	// the provider's shape.
	ParseError func(body []byte) (f ErrorFields, ok bool)
	// Sleep waits d or until ctx is done; nil uses a timer. Tests replace it.
	Sleep func(ctx context.Context, d time.Duration) error
}

func (c *Client) maxRetries() int {
	switch {
	case c.MaxRetries < 0:
		return 0
	case c.MaxRetries == 0:
		return DefaultMaxRetries
	}
	return c.MaxRetries
}

func (c *Client) maxWait() time.Duration {
	if c.MaxWait <= 0 {
		return DefaultMaxWait
	}
	return c.MaxWait
}

// Post sends body to endpoint and returns the first 2xx response; the
// caller reads and closes its body. Errors are coded: [mcperr.Aborted] or
// [mcperr.Timeout] when ctx ends, [mcperr.Network] when the provider
// cannot be reached, and *agent.ProviderError ([mcperr.HTTP]) for an
// error status.
func (c *Client) Post(ctx context.Context, endpoint string, header http.Header, body []byte) (*http.Response, error) {
	for attempt := 0; ; attempt++ {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, bytes.NewReader(body))
		if err != nil {
			return nil, mcperr.New(mcperr.InvalidArgument, "%s: bad endpoint %s: %s", c.Name, SafeURL(endpoint), c.Sanitize(err.Error()))
		}
		req.Header = header.Clone()
		resp, err := c.HTTP.Do(req)
		if err != nil {
			return nil, c.NetError(ctx, err, "could not reach "+SafeURL(endpoint)+"; check the base URL and the network (in a browser, also that the endpoint allows this page's origin, CORS)")
		}
		if resp.StatusCode >= 200 && resp.StatusCode < 300 {
			return resp, nil
		}
		perr := c.errorResponse(resp)
		perr.Retries = attempt
		if !retryable(resp.StatusCode) || attempt >= c.maxRetries() {
			return nil, perr
		}
		wait := perr.RetryAfter
		if wait <= 0 {
			wait = firstBackoff << attempt
		}
		if wait > c.maxWait() {
			return nil, perr // waiting that long is the host's call, not ours
		}
		sleep := c.Sleep
		if sleep == nil {
			sleep = busy.Sleep
		}
		if err := sleep(ctx, wait); err != nil {
			return nil, c.NetError(ctx, err, "")
		}
	}
}

// NetError codes an error met while talking to the provider: aborted or
// timeout when ctx ended, else network. The text is sanitised.
func (c *Client) NetError(ctx context.Context, err error, msg string) error {
	if ctx.Err() != nil {
		return mcperr.Wrap(mcperr.CodeOf(ctx.Err(), mcperr.Aborted), ctx.Err(), c.Name+": the request was aborted")
	}
	if msg == "" {
		msg = "the connection failed"
	}
	text := err
	var ue *url.Error
	if errors.As(err, &ue) && ue.Err != nil {
		text = ue.Err // its URL may carry credentials; the message names a safe one
	}
	return mcperr.Wrap(mcperr.Network, &sanitized{msg: c.Sanitize(text.Error()), err: err}, c.Name+": "+msg)
}

// sanitized carries an error whose text was cleaned for display.
type sanitized struct {
	msg string
	err error
}

func (s *sanitized) Error() string { return s.msg }

func (s *sanitized) Unwrap() error { return s.err }

func retryable(status int) bool {
	return status == http.StatusRequestTimeout || status == http.StatusConflict ||
		status == http.StatusTooManyRequests || status >= 500
}

// errorResponse reads an error response (size-capped) and closes it.
func (c *Client) errorResponse(resp *http.Response) *agent.ProviderError {
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, MaxErrorBody))
	e := &agent.ProviderError{Provider: c.Name, Status: resp.StatusCode, RetryAfter: RetryAfter(resp.Header)}
	if c.ParseError != nil {
		if f, ok := c.ParseError(body); ok {
			e.Type, e.Code, e.Message = c.Sanitize(f.Type), c.Sanitize(f.Code), c.Sanitize(f.Message)
			return e
		}
	}
	ct, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	switch {
	case len(bytes.TrimSpace(body)) == 0:
		e.Message = http.StatusText(resp.StatusCode)
	case ct == "text/html":
		e.Message = "the answer was an HTML page, not the provider's error (a proxy, or a wrong base URL?)"
	default:
		e.Message = c.Sanitize(string(body))
	}
	return e
}

// Sanitize makes provider text fit for an error: valid UTF-8, no control
// characters, whitespace collapsed, at most 500 runes, the key redacted.
func (c *Client) Sanitize(s string) string {
	s = c.Key.Redact(strings.ToValidUTF8(s, "\uFFFD"))
	var b strings.Builder
	space, n := false, 0
	for _, r := range s {
		if unicode.IsSpace(r) || unicode.IsControl(r) {
			space = b.Len() > 0
			continue
		}
		if space {
			b.WriteByte(' ')
			space = false
			n++
		}
		if n >= maxMessage {
			b.WriteString("…")
			break
		}
		b.WriteRune(r)
		n++
	}
	return b.String()
}

// RetryAfter reads retry-after-ms or Retry-After (seconds or an HTTP date).
func RetryAfter(h http.Header) time.Duration {
	if v := strings.TrimSpace(h.Get("Retry-After-Ms")); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil && ms > 0 && ms < math.MaxInt32 {
			return time.Duration(ms * float64(time.Millisecond))
		}
	}
	return busy.After(h, time.Now())
}

// SafeURL drops the query, fragment and user info of u, which may hold
// credentials, for display in errors.
func SafeURL(u string) string {
	p, err := url.Parse(u)
	if err != nil {
		return "(an unparsable URL)"
	}
	p.RawQuery, p.Fragment, p.User = "", "", nil
	return p.String()
}

// Endpoint joins a base URL and a path.
func Endpoint(base, path string) string {
	return strings.TrimRight(base, "/") + path
}

// CheckBaseURL validates a configured base URL.
func CheckBaseURL(name, base string) error {
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return mcperr.New(mcperr.InvalidArgument, "%s: BaseURL %q is not an http(s) URL", name, SafeURL(base))
	}
	return nil
}

// Exchange posts a request body asking for an event stream, with the
// page's headers, then the adapter's own (own: its key and version, which
// win), and returns the 2xx answer with how to read it ([Client.StreamKind]).
// The caller closes the answer's body.
func (c *Client) Exchange(ctx context.Context, endpoint string, page map[string]string, own http.Header, body []byte) (*http.Response, string, error) {
	h := http.Header{}
	for k, v := range page {
		h.Set(k, v)
	}
	h.Set("Content-Type", "application/json")
	h.Set("Accept", "text/event-stream")
	for k, vs := range own {
		h[http.CanonicalHeaderKey(k)] = vs
	}
	resp, err := c.Post(ctx, endpoint, h, body)
	if err != nil {
		return nil, "", err
	}
	kind, err := c.StreamKind(resp)
	if err != nil {
		resp.Body.Close()
		return nil, "", err
	}
	return resp, kind, nil
}

// StreamKind says how to read a 2xx response: "sse", "json", or an error
// for anything else.
func (c *Client) StreamKind(resp *http.Response) (string, error) {
	ct, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	switch ct {
	case "text/event-stream":
		return "sse", nil
	case "application/json":
		return "json", nil
	case "":
		return "sse", nil // some local servers send no type; the parser validates
	}
	return "", mcperr.New(mcperr.Protocol, "%s: expected an event stream, got %q; check the base URL", c.Name, c.Sanitize(ct))
}

// ReadJSONBody reads a non-streamed body, capped at max bytes.
func (c *Client) ReadJSONBody(ctx context.Context, r io.Reader, max int64) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(r, max+1))
	if err != nil {
		return nil, c.NetError(ctx, err, "reading the answer failed")
	}
	if int64(len(b)) > max {
		return nil, mcperr.New(mcperr.Protocol, "%s: the answer is larger than %d bytes", c.Name, max)
	}
	if !utf8.Valid(b) {
		return nil, mcperr.New(mcperr.Protocol, "%s: the answer is not valid UTF-8", c.Name)
	}
	return b, nil
}

// StreamError codes an error met while reading a stream.
func (c *Client) StreamError(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return c.NetError(ctx, err, "")
	}
	var coded mcperr.Coder
	if errors.As(err, &coded) {
		return err
	}
	if errors.Is(err, sse.ErrTooLarge) {
		return mcperr.Wrap(mcperr.Protocol, err, c.Name+": the stream is malformed")
	}
	return mcperr.Wrap(mcperr.Network, &sanitized{msg: c.Sanitize(err.Error()), err: err}, c.Name+": the stream broke off; try again")
}

// Protocol returns a protocol error prefixed by the provider's name.
func (c *Client) Protocol(format string, args ...any) error {
	return mcperr.New(mcperr.Protocol, "%s: %s", c.Name, c.Sanitize(fmt.Sprintf(format, args...)))
}
