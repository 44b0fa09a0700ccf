package mcpclient

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpwasm/mcpwasm/internal/httpguard"
	"github.com/mcpwasm/mcpwasm/mcperr"
)

// roundTripper records each request's outcome in the operation's [record]
// (found in the request context), checks JSON-RPC responses, and taps
// event-stream bodies for progress notifications. Credentials are added
// below it, by the credential guard (internal/httpguard), which keeps them
// on the server's origin; between the two, a DPoP-bound sign-in presents
// its token with the DPoP scheme and a proof (see [presenter]). Above
// those, a busy server's 429 or 503 is waited out and the request sent
// again (internal/busy), each time with fresh credentials and proof.
type roundTripper struct {
	guard http.RoundTripper // the busy retries over the credential guard, or over the presenter over it
	taps  *progressTaps
	hello *handshake
	warn  func(msg string) // tells the page something went wrong that ends nothing
	// ended hears how each DELETE that ends a session went: its status,
	// or the error that kept it from an answer.
	ended func(sessionID string, status int, err error)
	// listed hears each answer to tools/list, for what go-sdk's Tool
	// does not keep (execution.taskSupport).
	listed func(m *wireMessage)
	// keeps reports whether the session of that id must outlive the
	// client (see [roundTripper.sessionKept]).
	keeps func(ctx context.Context, sessionID string) bool
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

// protocol20260728 is the first protocol version without sessions, where
// closing a request's response stream cancels it.
const protocol20260728 = "2026-07-28"

func (t *roundTripper) RoundTrip(req *http.Request) (*http.Response, error) {
	if standaloneStream(req) {
		return t.detached(req)
	}
	return t.roundTrip(req)
}

// standaloneStream reports whether req opens a Streamable HTTP session's
// stream for server messages: a GET for an event stream, after the
// handshake (it carries Mcp-Protocol-Version, which a legacy SSE GET does
// not), that resumes nothing.
func standaloneStream(req *http.Request) bool {
	return req.Method == http.MethodGet && req.Header.Get("Accept") == "text/event-stream" &&
		req.Header.Get("Mcp-Protocol-Version") != "" && req.Header.Get("Last-Event-ID") == ""
}

// detachAfter is how long the request for a session's stream of server
// messages may hold the connect before it is detached.
const detachAfter = 2 * time.Second

// detached answers the request for a session's stream of server messages
// as the server does when it answers within detachAfter (the usual case:
// the server then knows the stream before connect() returns, so a
// notification it sends right after is not lost), else with an event
// stream fed by the real response when it comes. go-sdk opens that stream
// after initialize and sends notifications/initialized only once the
// request returns; a browser need not settle a fetch before the first
// bytes of the body (Firefox does not for this GET), so a server with
// nothing to say yet (the agents package's McpAgent on workerd) would
// hold the connect forever. Once detached, a refusal (405, another 4xx, a
// body that is not an event stream), which go-sdk takes as "this server
// offers no such stream", leaves the stream open and empty until the
// session ends; an error ends it, as go-sdk's own read would.
func (t *roundTripper) detached(req *http.Request) (*http.Response, error) {
	ctx := req.Context()
	type answer struct {
		resp *http.Response
		err  error
	}
	answered := make(chan answer, 1)
	go func() {
		resp, err := t.roundTrip(req)
		answered <- answer{resp, err}
	}()
	wait := time.NewTimer(detachAfter)
	defer wait.Stop()
	select {
	case a := <-answered:
		return a.resp, a.err
	case <-wait.C:
	case <-ctx.Done():
	}
	pr, pw := io.Pipe()
	go func() {
		a := <-answered
		if a.err != nil {
			pw.CloseWithError(a.err)
			return
		}
		resp := a.resp
		defer resp.Body.Close()
		if !ok(resp.StatusCode) || mediaType(resp) != "text/event-stream" {
			<-ctx.Done()
			pw.CloseWithError(ctx.Err())
			return
		}
		_, err := io.Copy(pw, resp.Body)
		pw.CloseWithError(err) // nil: EOF
	}()
	return &http.Response{
		Status: "200 OK", StatusCode: http.StatusOK,
		Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: http.Header{"Content-Type": {"text/event-stream"}}, Body: pr,
		ContentLength: -1, Request: req,
	}, nil
}

func (t *roundTripper) roundTrip(req *http.Request) (*http.Response, error) {
	ctx := req.Context()
	rec := recordFrom(ctx)
	out := peek(req)
	if rec.postsEnded() && req.Method == http.MethodPost {
		return nil, errLegacyEndpoint
	}
	raw := rawCallFrom(ctx)
	if raw != nil && out.method == "ping" {
		if err := raw.rewrite(req, out.id); err != nil {
			return nil, err
		}
		out.method = raw.method
	}
	if out.method == "notifications/cancelled" && req.Header.Get("Mcp-Protocol-Version") >= protocol20260728 {
		// Protocol 2026-07-28 cancels a request by closing its response
		// stream (which the abandoned call's context does, see the tap
		// below) and defines no client notifications over Streamable
		// HTTP: go-sdk's notifications/cancelled is not sent.
		return accepted(req), nil
	}
	// A Streamable HTTP POST of a call is answered by its response; a
	// legacy SSE POST by 202 (the response comes on the GET stream).
	call := json.RawMessage(nil)
	if strings.Contains(req.Header.Get("Accept"), "text/event-stream") {
		call = out.id
	}
	resp := adoptionFrom(ctx).answer(req, out)
	if resp == nil {
		resp = t.sessionKept(req)
	}
	var err error
	if resp == nil {
		resp, err = t.send(req, out)
	}
	if err != nil {
		return t.unsent(req, out, rec, err)
	}
	if t.refusedNotification(out, resp) {
		return accepted(req), nil
	}
	t.noteStatus(req, resp, out, rec)
	// Only the handshake's answer says what the server can do; parsing
	// every result for it would cost a pass over each megabyte answer.
	// A GET stream may carry it (the legacy SSE transport answers there).
	var hello *handshake
	if out.method == "initialize" || out.method == "server/discover" || req.Method == http.MethodGet {
		hello = t.hello
	}
	if err := t.handleBody(ctx, resp, call, hello, rec, t.listenerFor(ctx, out, raw)); err != nil {
		return nil, err
	}
	return resp, nil
}

// send sends req: a bare discovery probe by itself, everything else
// through the guard.
func (t *roundTripper) send(req *http.Request, out outgoing) (*http.Response, error) {
	var resp *http.Response
	var err error
	if out.method == "server/discover" && bareProbe(req.Context()) {
		resp, err = t.sendProbe(req)
	} else {
		resp, err = t.guard.RoundTrip(req)
	}
	t.reportEnd(req, resp, err)
	return resp, err
}

// refusedNotification reports whether resp refuses a notification (other
// than for authorization), closing it and warning the page: a refused
// notification answers nothing a caller waits for, and go-sdk would take
// the refusal as the end of the session.
func (t *roundTripper) refusedNotification(out outgoing, resp *http.Response) bool {
	if !out.notification() || ok(resp.StatusCode) || resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden {
		return false
	}
	resp.Body.Close()
	if t.warn != nil {
		t.warn(fmt.Sprintf("the server refused the %s notification (HTTP %d); the session goes on", cleanText(out.method), resp.StatusCode))
	}
	return true
}

// noteStatus records what resp's status says: a failed discovery probe,
// a scope the token lacks.
func (t *roundTripper) noteStatus(req *http.Request, resp *http.Response, out outgoing, rec *record) {
	rec.response(req.Method, resp.StatusCode)
	if out.method == "server/discover" && !ok(resp.StatusCode) {
		t.probeFailed(req, resp, rec)
	}
	if resp.StatusCode == http.StatusForbidden && strings.Contains(resp.Header.Get("WWW-Authenticate"), "insufficient_scope") {
		rec.insufficientScope()
	}
}

// listenerFor is who hears the answer to out, if anyone: a raw call's
// caller, the tool list's watcher, a raw resource read, a tool call that
// may be answered with a task handle.
func (t *roundTripper) listenerFor(ctx context.Context, out outgoing, raw *rawCall) listener {
	switch {
	case raw != nil:
		return raw.answered
	case out.method == "tools/list" && t.listed != nil:
		return func(m *wireMessage) []byte { t.listed(m); return nil }
	case out.method == "resources/read":
		if rr := rawReadFrom(ctx); rr != nil {
			return rr.answered(out.id)
		}
	case out.method == "tools/call":
		if th := taskHandleFrom(ctx); th != nil {
			return th.answered(out.id)
		}
	}
	return nil
}

// unsent answers a request that got no HTTP answer, or a busy one (err,
// recorded in rec): a notification a busy server never took answers
// nothing a caller waits for, so the host is warned and the session goes
// on, as for a notification the server refuses.
func (t *roundTripper) unsent(req *http.Request, out outgoing, rec *record, err error) (*http.Response, error) {
	if busy := (*mcperr.Busy)(nil); errors.As(err, &busy) {
		if out.notification() {
			if t.warn != nil {
				t.warn(fmt.Sprintf("the server was too busy for the %s notification (HTTP %d); the session goes on", cleanText(out.method), busy.Status))
			}
			return accepted(req), nil
		}
		rec.response(req.Method, busy.Status) // the server answered: no network failure
		return nil, err
	}
	if mcperr.CodeOf(err, "") == mcperr.Protocol {
		rec.violation(err) // the guard refused what the server asked for
	} else {
		rec.transportError(err)
	}
	return nil, err
}

// reportEnd tells t.ended how a DELETE, which ends a session, went: the
// status of its answer, or the error that kept it from one, for a Logout
// waiting to hear whether the server let the session go.
func (t *roundTripper) reportEnd(req *http.Request, resp *http.Response, err error) {
	if req.Method != http.MethodDelete || t.ended == nil {
		return
	}
	status := 0
	if err == nil {
		status = resp.StatusCode
	}
	t.ended(req.Header.Get("Mcp-Session-Id"), status, err)
}

// handleBody prepares resp's body for go-sdk by its media type: an event
// stream is tapped (each event checked, progress delivered) and closed
// when ctx ends; a JSON answer to call (its JSON-RPC id, nil for none) is
// checked; a call answered with anything else is refused, since go-sdk
// would end the session over it; other bodies are capped. hello, when
// set, hears the answer of a handshake. An error is a protocol
// violation, recorded in rec.
func (t *roundTripper) handleBody(ctx context.Context, resp *http.Response, call json.RawMessage, hello *handshake, rec *record, hear listener) error {
	switch mt := mediaType(resp); {
	case mt == "text/event-stream":
		tap := &sseTap{rc: resp.Body, taps: t.taps, hello: hello, call: call, rec: rec, hear: hear}
		// An abandoned request (aborted, timed out, its connection ended)
		// closes its stream: in the browser nothing else would, and the
		// fetch would hold one of the few connections per origin forever.
		// Closing the stream is also how protocol 2026-07-28 cancels.
		tap.stop = context.AfterFunc(ctx, func() { _ = tap.rc.Close() })
		resp.Body = tap
	case mt == "application/json" && call != nil && ok(resp.StatusCode):
		if err := checkJSONResponse(resp, call, hello, hear); err != nil {
			rec.violation(err)
			return err
		}
	case call != nil && ok(resp.StatusCode):
		// Only JSON or an event stream can answer a call; go-sdk would
		// end the whole session over anything else.
		resp.Body.Close()
		err := violation("the server answered a call with content type %q; only application/json and text/event-stream can carry a response", mt)
		rec.violation(err)
		return err
	default:
		resp.Body = cappedBody(resp.Body)
	}
	return nil
}

func ok(status int) bool { return status >= 200 && status < 300 }

// accepted is the answer a server gives a notification it takes.
func accepted(req *http.Request) *http.Response { return answered(req, http.StatusAccepted, nil, nil) }

// answered is a response the client gives req itself, as the server
// would: status, header (nil: none) and body.
func answered(req *http.Request, status int, header http.Header, body []byte) *http.Response {
	if header == nil {
		header = http.Header{}
	}
	resp := &http.Response{
		Status: fmt.Sprintf("%d %s", status, http.StatusText(status)), StatusCode: status,
		Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: header, Body: http.NoBody, Request: req,
	}
	if len(body) > 0 {
		resp.Body, resp.ContentLength = io.NopCloser(bytes.NewReader(body)), int64(len(body))
	}
	return resp
}

// probeFailed cleans up after a server/discover probe the server refused
// (it is a 2025-11-25 server; go-sdk goes on with initialize). A server
// that made a session for the probe anyway (the Python SDK 1.x answers
// "400 Missing session ID" with a fresh Mcp-Session-Id) would keep it
// forever: it is deleted, as a 2025-11-25 client ends a session. A 404 or
// 405 without a JSON-RPC error says the URL takes no MCP POSTs at all (a
// legacy HTTP+SSE endpoint): the connect moves to that transport at once.
func (t *roundTripper) probeFailed(req *http.Request, resp *http.Response, rec *record) {
	if id := resp.Header.Get("Mcp-Session-Id"); id != "" && httpguard.ValidHeaderValue(id) {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(req.Context()), probeCleanupTimeout)
		defer cancel()
		del, err := http.NewRequestWithContext(ctx, http.MethodDelete, req.URL.String(), nil)
		if err == nil {
			del.Header.Set("Mcp-Session-Id", id)
			if r, err := t.guard.RoundTrip(del); err == nil {
				r.Body.Close()
			}
		}
	}
	if resp.StatusCode == http.StatusNotFound || resp.StatusCode == http.StatusMethodNotAllowed {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
		resp.Body.Close()
		resp.Body = io.NopCloser(bytes.NewReader(body))
		var m struct {
			JSONRPC string          `json:"jsonrpc"`
			Error   json.RawMessage `json:"error"`
		}
		if json.Unmarshal(body, &m) != nil || m.JSONRPC != "2.0" || len(m.Error) == 0 {
			rec.notStreamable()
		}
	}
}

// probeCleanupTimeout bounds the DELETE of a session a refused probe made.
const probeCleanupTimeout = 5 * time.Second

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
	legacy    func() // called when the URL takes no MCP POSTs (see probeFailed)
	noPOST    bool   // the URL takes no MCP POSTs: send none more
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

// notStreamable reports that the server/discover probe showed the URL
// is no Streamable HTTP endpoint; with transport "auto" (a legacy hook
// set) no more POSTs go out in this attempt.
func (r *record) notStreamable() {
	if r == nil {
		return
	}
	r.mu.Lock()
	f := r.legacy
	r.noPOST = f != nil
	r.mu.Unlock()
	if f != nil {
		f()
	}
}

// postsEnded reports whether [record.notStreamable] was called.
func (r *record) postsEnded() bool {
	if r == nil {
		return false
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.noPOST
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

// handshake keeps the capabilities object of the server's answer to
// initialize or server/discover as the server sent it: go-sdk's types
// drop what they do not know and what is false or empty, and the page
// gets what the server declared.
type handshake struct {
	mu   sync.Mutex
	caps json.RawMessage
}

func (h *handshake) reset() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.caps = nil
}

func (h *handshake) capabilities() json.RawMessage {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.caps
}

// saw looks at a response from the server: the result of initialize has
// protocolVersion and capabilities, that of server/discover
// supportedVersions and capabilities.
func (h *handshake) saw(m *wireMessage) {
	if h == nil || m.Method != "" || len(m.Result) == 0 {
		return
	}
	var r struct {
		Capabilities      json.RawMessage `json:"capabilities"`
		ProtocolVersion   json.RawMessage `json:"protocolVersion"`
		SupportedVersions json.RawMessage `json:"supportedVersions"`
	}
	if json.Unmarshal(m.Result, &r) != nil || len(r.Capabilities) == 0 || r.Capabilities[0] != '{' ||
		(r.ProtocolVersion == nil && r.SupportedVersions == nil) {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.caps == nil {
		h.caps = r.Capabilities
	}
}
