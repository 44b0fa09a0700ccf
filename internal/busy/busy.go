package busy

import (
	"context"
	"io"
	"math"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/mcpwasm/mcpwasm/mcperr"
)

// Defaults of [Policy].
const (
	DefaultRetries = 3
	DefaultMaxWait = 30 * time.Second
	DefaultBackoff = 250 * time.Millisecond
)

// maxDrain caps how much of a busy answer's body is read before it is
// closed (reading it lets the connection be reused).
const maxDrain = 64 << 10

// Policy says how long and how often to wait for a busy server. The zero
// value uses the defaults. A Policy is safe for concurrent use.
type Policy struct {
	// Retries is how many times a request is sent again after its
	// first answer; 0 means DefaultRetries, negative none.
	Retries int
	// MaxWait is the longest Retry-After waited out; a longer one ends
	// the request at once with its *mcperr.Busy. 0 means DefaultMaxWait.
	MaxWait time.Duration
	// Backoff is the wait before the first retry of an answer without
	// Retry-After; it doubles with each retry, with jitter. 0 means
	// DefaultBackoff.
	Backoff time.Duration
	// Sleep waits d or until ctx ends; nil uses a timer. Tests replace it.
	Sleep func(ctx context.Context, d time.Duration) error
	// Now is the clock for Retry-After dates; nil is time.Now.
	Now func() time.Time
}

// Busy reports whether status says the server is busy and did not act on
// the request: 429 or 503.
func Busy(status int) bool {
	return status == http.StatusTooManyRequests || status == http.StatusServiceUnavailable
}

// After reads h's Retry-After (delay-seconds or an HTTP date, RFC 9110
// §10.2.3) relative to now; 0 when absent, unreadable or in the past.
func After(h http.Header, now time.Time) time.Duration {
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0
	}
	if s, err := strconv.ParseFloat(v, 64); err == nil {
		if !(s > 0) || s > math.MaxInt32 {
			return 0
		}
		return time.Duration(s * float64(time.Second))
	}
	if t, err := http.ParseTime(v); err == nil {
		if d := t.Sub(now); d > 0 {
			return d
		}
	}
	return 0
}

// Pause decides, after the busy answer resp to a request that was already
// retried retries times, whether to send it again: it waits (until ctx
// ends) and returns nil to retry, or returns the error that ends the
// request: ctx's error, or an *mcperr.Busy when the retries are spent,
// Retry-After asks for more than MaxWait, or ctx would end before the
// wait does. It neither reads nor closes resp's body.
func (p Policy) Pause(ctx context.Context, resp *http.Response, retries int) error {
	wait := After(resp.Header, p.now())
	final := &mcperr.Busy{Status: resp.StatusCode, After: wait}
	if resp.Request != nil && resp.Request.URL != nil {
		final.Host = resp.Request.URL.Host
	}
	if retries >= p.retries() || wait > p.maxWait() {
		return final
	}
	if wait == 0 {
		wait = p.backoff(retries)
	}
	if dl, ok := ctx.Deadline(); ok && dl.Sub(p.now()) < wait {
		// The request would time out while waiting: say now when the
		// server asked to be tried again.
		return final
	}
	sleep := p.Sleep
	if sleep == nil {
		sleep = Sleep
	}
	return sleep(ctx, wait)
}

// backoff is the wait before retry n+1 of an answer without Retry-After:
// Backoff doubled n times, less up to half of it at random, so that many
// clients turned away together do not come back together.
func (p Policy) backoff(n int) time.Duration {
	d := p.Backoff
	if d <= 0 {
		d = DefaultBackoff
	}
	d <<= min(n, 16)
	return d - time.Duration(rand.Int64N(int64(d/2)+1))
}

func (p Policy) retries() int {
	switch {
	case p.Retries < 0:
		return 0
	case p.Retries == 0:
		return DefaultRetries
	}
	return p.Retries
}

func (p Policy) maxWait() time.Duration {
	if p.MaxWait <= 0 {
		return DefaultMaxWait
	}
	return p.MaxWait
}

func (p Policy) now() time.Time {
	if p.Now != nil {
		return p.Now()
	}
	return time.Now()
}

// Sleep waits d, or until ctx ends (then its error).
func Sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// Transport returns an http.RoundTripper that sends each request through
// next and sends it again, as [Policy.Pause] decides, while the answer is
// busy. A request with a body that cannot be sent again (no GetBody) is
// sent once and its busy answer returned as it is. Each attempt is a new
// request through next, so a layer below that signs requests (DPoP)
// signs each anew. The error that ends the retries is ctx's or an
// *mcperr.Busy; the busy answer's body is then closed.
func (p Policy) Transport(next http.RoundTripper) http.RoundTripper {
	return &transport{p: p, next: next}
}

type transport struct {
	p    Policy
	next http.RoundTripper
}

func (t *transport) RoundTrip(req *http.Request) (*http.Response, error) {
	replayable := req.Body == nil || req.Body == http.NoBody || req.GetBody != nil
	r := req
	for n := 0; ; n++ {
		resp, err := t.next.RoundTrip(r)
		if err != nil || !Busy(resp.StatusCode) || !replayable {
			return resp, err
		}
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxDrain))
		resp.Body.Close()
		if resp.Request == nil {
			resp.Request = r
		}
		if err := t.p.Pause(req.Context(), resp, n); err != nil {
			return nil, err
		}
		r = req.Clone(req.Context())
		if req.GetBody != nil {
			body, err := req.GetBody()
			if err != nil {
				return nil, err
			}
			r.Body = body
		}
	}
}
