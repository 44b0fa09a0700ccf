package mcpclient

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// roundTripper adds the configured static headers and host-supplied bearer
// token, records each request's outcome in the operation's [record] (found in
// the request context), and taps event-stream bodies for progress
// notifications.
type roundTripper struct {
	base    http.RoundTripper
	headers http.Header
	token   func(context.Context) (string, error)
	taps    *progressTaps
}

func (t *roundTripper) RoundTrip(req *http.Request) (*http.Response, error) {
	ctx := req.Context()
	rec := recordFrom(ctx)
	if len(t.headers) > 0 || t.token != nil {
		req = req.Clone(ctx)
		for k, vs := range t.headers {
			req.Header[k] = append([]string(nil), vs...)
		}
		if t.token != nil {
			tok, err := t.token(ctx)
			if err != nil {
				err = &tokenError{err: err}
				rec.transportError(err)
				return nil, err
			}
			if tok != "" {
				req.Header.Set("Authorization", "Bearer "+tok)
			}
		}
	}
	resp, err := t.base.RoundTrip(req)
	if err != nil {
		rec.transportError(err)
		return nil, err
	}
	rec.response(req.Method, resp.StatusCode)
	if resp.StatusCode == http.StatusForbidden && strings.Contains(resp.Header.Get("WWW-Authenticate"), "insufficient_scope") {
		rec.insufficientScope()
	}
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		resp.Body = &sseTap{rc: resp.Body, taps: t.taps}
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

func (r *record) insufficientScope() {
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.scope = true
}

func (r *record) snapshot() (status int, netErr error, firstPOST int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.postCodes) > 0 {
		firstPOST = r.postCodes[0]
	}
	return r.status, r.netErr, firstPOST
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

// maxTapLine bounds the bytes buffered for one SSE line; longer lines (large
// results) are skipped by the tap, never by go-sdk's own reader.
const maxTapLine = 64 << 10

// sseTap watches an event-stream body as go-sdk reads it and delivers
// progress notifications to their callers. Because it sees the bytes before
// go-sdk parses them, every notification that precedes a response on the
// wire is delivered before the caller learns the response.
type sseTap struct {
	rc       io.ReadCloser
	taps     *progressTaps
	line     []byte
	skipping bool // the current line is too long to be a progress notification
	data     []byte
	dataSkip bool // the current event is too long to be a progress notification
}

func (s *sseTap) Read(p []byte) (int, error) {
	n, err := s.rc.Read(p)
	if n > 0 {
		s.scan(p[:n])
	}
	return n, err
}

func (s *sseTap) Close() error { return s.rc.Close() }

func (s *sseTap) scan(b []byte) {
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			s.appendLine(b)
			return
		}
		s.appendLine(b[:i])
		s.endLine()
		b = b[i+1:]
	}
}

func (s *sseTap) appendLine(b []byte) {
	if s.skipping {
		return
	}
	if len(s.line)+len(b) > maxTapLine {
		s.skipping, s.line = true, s.line[:0]
		return
	}
	s.line = append(s.line, b...)
}

func (s *sseTap) endLine() {
	line := bytes.TrimSuffix(s.line, []byte("\r"))
	skipped := s.skipping
	s.line, s.skipping = s.line[:0], false
	switch {
	case skipped:
		s.dataSkip = true
	case len(line) == 0: // end of event
		if !s.dataSkip {
			s.dispatch()
		}
		s.data, s.dataSkip = s.data[:0], false
	case bytes.HasPrefix(line, []byte("data:")):
		v := bytes.TrimPrefix(bytes.TrimPrefix(line, []byte("data:")), []byte(" "))
		if len(s.data)+len(v) > maxTapLine {
			s.dataSkip, s.data = true, s.data[:0]
		}
		if s.dataSkip {
			return
		}
		if len(s.data) > 0 {
			s.data = append(s.data, '\n')
		}
		s.data = append(s.data, v...)
	}
}

func (s *sseTap) dispatch() {
	if !bytes.Contains(s.data, []byte(`notifications/progress`)) {
		return
	}
	var msg struct {
		Method string          `json:"method"`
		Params json.RawMessage `json:"params"`
	}
	if json.Unmarshal(s.data, &msg) != nil || msg.Method != "notifications/progress" {
		return
	}
	var tok struct {
		ProgressToken json.RawMessage `json:"progressToken"`
	}
	if json.Unmarshal(msg.Params, &tok) != nil {
		return
	}
	fn := s.taps.lookup(tok.ProgressToken)
	if fn == nil {
		return
	}
	var params mcp.ProgressNotificationParams
	if json.Unmarshal(msg.Params, &params) != nil {
		return
	}
	fn(&params)
}
