package mcpclient

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpwasm/mcpwasm/internal/httpguard"
	"github.com/mcpwasm/mcpwasm/mcperr"
)

// roundTripper records each request's outcome in the operation's [record]
// (found in the request context), checks JSON-RPC responses, and taps
// event-stream bodies for progress notifications. Credentials are added
// below it, by the credential guard (internal/httpguard), which keeps them
// on the server's origin.
type roundTripper struct {
	guard *httpguard.Transport
	taps  *progressTaps
}

// credentials returns the guard's hook adding the static headers and the
// host-supplied bearer token.
func credentials(headers http.Header, token func(context.Context) (string, error)) func(*http.Request) error {
	return func(req *http.Request) error {
		for k, vs := range headers {
			req.Header[k] = append([]string(nil), vs...)
		}
		if token == nil {
			return nil
		}
		tok, err := token(req.Context())
		if err != nil {
			return &tokenError{err: err}
		}
		if tok != "" {
			if !httpguard.ValidHeaderValue(tok) {
				return &tokenError{err: errors.New("the token has characters an Authorization header cannot carry")}
			}
			req.Header.Set("Authorization", "Bearer "+tok)
		}
		return nil
	}
}

func (t *roundTripper) RoundTrip(req *http.Request) (*http.Response, error) {
	ctx := req.Context()
	rec := recordFrom(ctx)
	// A Streamable HTTP POST of a call is answered by its response; a
	// legacy SSE POST by 202 (the response comes on the GET stream).
	call := json.RawMessage(nil)
	if strings.Contains(req.Header.Get("Accept"), "text/event-stream") {
		call = callID(req)
	}
	resp, err := t.guard.RoundTrip(req)
	if err != nil {
		if mcperr.CodeOf(err, "") == mcperr.Protocol {
			rec.violation(err) // the guard refused what the server asked for
		} else {
			rec.transportError(err)
		}
		return nil, err
	}
	rec.response(req.Method, resp.StatusCode)
	if resp.StatusCode == http.StatusForbidden && strings.Contains(resp.Header.Get("WWW-Authenticate"), "insufficient_scope") {
		rec.insufficientScope()
	}
	switch mt := mediaType(resp); {
	case mt == "text/event-stream":
		tap := &sseTap{rc: resp.Body, taps: t.taps, call: call, rec: rec}
		// An abandoned request (aborted, timed out, its connection ended)
		// closes its stream: in the browser nothing else would, and the
		// fetch would hold one of the few connections per origin forever.
		// Closing the stream is also how protocol 2026-07-28 cancels.
		tap.stop = context.AfterFunc(ctx, func() { _ = tap.rc.Close() })
		resp.Body = tap
	case mt == "application/json" && call != nil && resp.StatusCode >= 200 && resp.StatusCode < 300:
		if err := checkJSONResponse(resp, call); err != nil {
			rec.violation(err)
			return nil, err
		}
	case call != nil && resp.StatusCode >= 200 && resp.StatusCode < 300:
		// Only JSON or an event stream can answer a call; go-sdk would
		// end the whole session over anything else.
		resp.Body.Close()
		err := violation("the server answered a call with content type %q; only application/json and text/event-stream can carry a response", mt)
		rec.violation(err)
		return nil, err
	default:
		resp.Body = cappedBody(resp.Body)
	}
	return resp, nil
}

// tokenError reports that the host's accessToken function failed.
type tokenError struct{ err error }

func (e *tokenError) Error() string { return "accessToken() failed: " + e.err.Error() }
func (e *tokenError) Unwrap() error { return e.err }

// record collects what happened on the wire during one operation, so that
// errors go-sdk reports as text can be classified (HTTP status, network).
type record struct {
	mu        sync.Mutex
	status    int    // last non-2xx status
	method    string // method of that request
	netErr    error  // last transport error
	postCodes []int  // statuses of POST requests, in order
	scope     bool   // a 403 said error="insufficient_scope"
	broken    error  // the first protocol violation (see violation)
	auth      error  // why the last sign-in a 401 or 403 asked for did not happen
}

type recordKey struct{}

func withRecord(ctx context.Context) (context.Context, *record) {
	r := &record{}
	return context.WithValue(ctx, recordKey{}, r), r
}

// recordFrom returns the operation's record, or nil (whose methods no-op).
func recordFrom(ctx context.Context) *record {
	r, _ := ctx.Value(recordKey{}).(*record)
	return r
}

func (r *record) transportError(err error) {
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.netErr = err
}

func (r *record) response(method string, status int) {
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if method == http.MethodPost {
		r.postCodes = append(r.postCodes, status)
	}
	if status < 200 || status > 299 {
		r.status, r.method = status, method
	}
}

// violation records a protocol violation of the server's answer.
func (r *record) violation(err error) {
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.broken == nil {
		r.broken = err
	}
}

// authFailed records that the sign-in a 401 or 403 asked for failed with
// err (needs a user action, declined, failed).
func (r *record) authFailed(err error) {
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.auth = err
}

func (r *record) authError() error {
	if r == nil {
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.auth
}

func (r *record) violated() error {
	if r == nil {
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.broken
}

func (r *record) insufficientScope() {
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.scope = true
}

func (r *record) snapshot() (status, firstPOST int, netErr error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.postCodes) > 0 {
		firstPOST = r.postCodes[0]
	}
	return r.status, firstPOST, r.netErr
}

// progressTaps routes progress notifications to the call that asked for them,
// keyed by progress token (as raw JSON).
type progressTaps struct {
	mu sync.Mutex
	m  map[string]func(*mcp.ProgressNotificationParams)
}

func (p *progressTaps) add(token string, fn func(*mcp.ProgressNotificationParams)) (remove func()) {
	key, _ := json.Marshal(token)
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.m == nil {
		p.m = make(map[string]func(*mcp.ProgressNotificationParams))
	}
	p.m[string(key)] = fn
	return func() {
		p.mu.Lock()
		defer p.mu.Unlock()
		delete(p.m, string(key))
	}
}

func (p *progressTaps) lookup(token json.RawMessage) func(*mcp.ProgressNotificationParams) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.m[string(bytes.TrimSpace(token))]
}
