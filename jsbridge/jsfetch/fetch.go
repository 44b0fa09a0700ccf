//go:build js && wasm

// Package jsfetch is an http.RoundTripper over the browser's fetch for the
// wasm build: what net/http's own js/wasm transport does, with fewer
// JavaScript values per request. The constructors and functions it calls
// are looked up once; its Promises settle through one long-lived Go
// function, bound twice per request (net/http makes and releases two Go
// functions per Promise, each chunk of a body included);
// request headers go as one plain object; response headers come back as
// one string; a response body of known, bounded length that is not an
// event stream is read in one step (arrayBuffer, one copy), while an event
// stream (and any body of unknown length) is read chunk by chunk as it
// arrives.
//
// It keeps net/http's contract for the layers above (internal/httpguard,
// oauth, mcpclient): the "js.fetch:mode", "js.fetch:credentials" and
// "js.fetch:redirect" pseudo-headers set those fetch options (credentials
// default to "same-origin", redirects to "follow"); a followed redirect
// shows in Response.Request.URL; cancelling the request's context aborts
// the fetch and unblocks a body read; a fetch that fails is an error that
// says so, a cancelled one is the context's error.
package jsfetch

import (
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall/js"
	"unicode/utf8"
)

// maxOneStep is the largest body read in one step (the limit of oauth's
// readers); a larger one, or one of unknown length, is read chunk by chunk
// so that the limits of the readers above bound what is held in memory.
const maxOneStep = 1 << 20

const (
	hdrMode     = "js.fetch:mode"
	hdrCreds    = "js.fetch:credentials"
	hdrRedirect = "js.fetch:redirect"
)

var (
	global       = js.Global()
	jsFetch      = global.Get("fetch")
	jsObject     = global.Get("Object")
	jsUint8Array = global.Get("Uint8Array")
	jsAbort      = global.Get("AbortController")
	jsArrayFrom  = global.Get("Array").Get("from")
)

// Transport sends requests with the browser's fetch. The zero value is
// ready to use and safe for concurrent use.
type Transport struct{}

// Available reports whether fetch exists in this JavaScript environment.
func Available() bool { return jsFetch.Type() == js.TypeFunction }

// settlement is what a Promise of a request settled with.
type settlement struct {
	v  js.Value
	ok bool
}

// call is one request in flight: the two callbacks bound to it deliver
// the settlements of its Promises (the fetch, then the body reads), in
// order, one at a time.
type call struct {
	id      uint64
	ch      chan settlement
	onOK    js.Value
	onErr   js.Value
	abort   js.Value // the AbortController, or undefined
	aborted atomic.Bool
	mu      sync.Mutex // guards done
	done    bool
}

var (
	callsMu sync.Mutex
	calls   = map[uint64]*call{}
	nextID  uint64
)

// settle is the one Go function the Promises of every request settle
// through: this.bind(null, id, ok).
var settle = js.FuncOf(func(_ js.Value, args []js.Value) any {
	if len(args) < 3 {
		return nil
	}
	id := uint64(args[0].Int())
	callsMu.Lock()
	c := calls[id]
	callsMu.Unlock()
	if c != nil {
		// Never blocks: a call has at most one Promise pending at a time
		// and the channel holds one settlement.
		select {
		case c.ch <- settlement{v: args[2], ok: args[1].Bool()}:
		default:
		}
	}
	return nil
})

// ignore handles a Promise nobody waits for (the one stream.cancel()
// returns), so that its rejection is not reported as unhandled: no call
// has id 0.
var ignore = settle.Call("bind", js.Null(), 0, false)

func newCall(withAbort bool) *call {
	callsMu.Lock()
	nextID++
	c := &call{id: nextID, ch: make(chan settlement, 1)}
	calls[c.id] = c
	callsMu.Unlock()
	c.onOK = settle.Call("bind", js.Null(), float64(c.id), true)
	c.onErr = settle.Call("bind", js.Null(), float64(c.id), false)
	c.abort = js.Undefined()
	if withAbort && jsAbort.Type() == js.TypeFunction {
		c.abort = jsAbort.New()
	}
	return c
}

// then waits for p through the call's callbacks.
func (c *call) then(p js.Value) { p.Call("then", c.onOK, c.onErr) }

// end forgets the call: later settlements are dropped.
func (c *call) end() {
	c.mu.Lock()
	if c.done {
		c.mu.Unlock()
		return
	}
	c.done = true
	c.mu.Unlock()
	callsMu.Lock()
	delete(calls, c.id)
	callsMu.Unlock()
}

// cancel aborts the fetch (and so its body) if it can.
func (c *call) cancel() {
	if !c.abort.IsUndefined() && c.aborted.CompareAndSwap(false, true) {
		c.abort.Call("abort")
	}
}

// RoundTrip implements http.RoundTripper.
func (t *Transport) RoundTrip(req *http.Request) (resp *http.Response, err error) {
	var c *call
	defer func() {
		if r := recover(); r != nil {
			if c != nil {
				c.end()
			}
			resp, err = nil, fmt.Errorf("fetch() threw: %v", r)
		}
	}()
	ctx := req.Context()
	opt, err := fetchInit(req)
	if err != nil {
		return nil, err
	}
	c = newCall(ctx.Done() != nil)
	if !c.abort.IsUndefined() {
		opt.Set("signal", c.abort.Get("signal"))
	}
	c.then(jsFetch.Invoke(req.URL.String(), opt))
	s, err := c.waitResponse(ctx)
	if err != nil {
		return nil, err
	}
	if !s.ok {
		c.end()
		return nil, fmt.Errorf("fetch() failed: %s", errText(s.v))
	}
	return c.response(req, s.v)
}

// fetchInit is fetch()'s init object for req: its method and headers, the
// credentials, mode and redirect its private headers ask for, and its body.
func fetchInit(req *http.Request) (js.Value, error) {
	opt := jsObject.New()
	opt.Set("method", req.Method)
	creds := "same-origin"
	hdr := jsObject.New()
	for k, vs := range req.Header {
		switch k {
		case hdrCreds:
			if len(vs) > 0 && vs[0] != "" {
				creds = vs[0]
			}
			continue
		case hdrMode:
			if len(vs) > 0 && vs[0] != "" {
				opt.Set("mode", vs[0])
			}
			continue
		case hdrRedirect:
			if len(vs) > 0 && vs[0] != "" {
				opt.Set("redirect", vs[0])
			}
			continue
		}
		switch len(vs) {
		case 0:
		case 1:
			hdr.Set(k, vs[0])
		default:
			// What Headers.append does with a repeated name.
			hdr.Set(k, strings.Join(vs, ", "))
		}
	}
	opt.Set("credentials", creds)
	opt.Set("headers", hdr)
	if req.Body == nil {
		return opt, nil
	}
	if req.Body == http.NoBody {
		req.Body.Close()
		return opt, nil
	}
	data, err := io.ReadAll(req.Body)
	req.Body.Close()
	if err != nil {
		return js.Value{}, err
	}
	if len(data) > 0 {
		if req.Header.Get("Content-Type") != "" && utf8.Valid(data) {
			// A string crosses in one step; fetch encodes it as UTF-8,
			// the same bytes. (Without a Content-Type a string would
			// add text/plain.)
			opt.Set("body", string(data))
		} else {
			buf := jsUint8Array.New(len(data))
			js.CopyBytesToJS(buf, data)
			opt.Set("body", buf)
		}
	}
	return opt, nil
}

// waitResponse is the fetch's settlement, or ctx's error when ctx ends
// first: then the fetch is aborted and its rejection awaited, so that nothing is left
// pending (see go.dev/issue/57098), and a response that won the race is
// released.
func (c *call) waitResponse(ctx context.Context) (settlement, error) {
	select {
	case s := <-c.ch:
		return s, nil
	case <-ctx.Done():
	}
	if c.abort.IsUndefined() {
		c.end()
		return settlement{}, ctx.Err()
	}
	c.cancel()
	if s := <-c.ch; s.ok {
		if b := s.v.Get("body"); b.Type() == js.TypeObject {
			b.Call("cancel").Call("catch", ignore)
		}
	}
	c.end()
	return settlement{}, ctx.Err()
}

func (c *call) response(req *http.Request, r js.Value) (*http.Response, error) {
	header, err := headersOf(r.Get("headers"))
	if err != nil {
		c.end()
		return nil, err
	}
	length := int64(-1)
	if cl := header.Get("Content-Length"); cl != "" {
		n, err := strconv.ParseInt(cl, 10, 64)
		if err != nil || n < 0 {
			c.cancel()
			c.end()
			return nil, fmt.Errorf("the server sent an invalid Content-Length header %q", cl)
		}
		length = n
	}
	uncompressed := false
	if ce := header.Get("Content-Encoding"); ce != "" && !strings.EqualFold(ce, "identity") {
		// fetch has decoded the body; the headers still describe the
		// encoded one.
		header.Del("Content-Encoding")
		header.Del("Content-Length")
		length = -1
		uncompressed = true
	}
	if r.Get("redirected").Bool() {
		if u, err := url.Parse(r.Get("url").String()); err == nil {
			req = req.Clone(req.Context())
			req.URL = u
		}
	}
	code := r.Get("status").Int()
	resp := &http.Response{
		Status:        fmt.Sprintf("%d %s", code, http.StatusText(code)),
		StatusCode:    code,
		Proto:         "HTTP/1.1",
		ProtoMajor:    1,
		ProtoMinor:    1,
		Header:        header,
		ContentLength: length,
		Uncompressed:  uncompressed,
		Request:       req,
	}
	stream := r.Get("body")
	switch {
	case stream.Type() != js.TypeObject:
		// No body (a null body status, an opaque redirect) or a browser
		// without streams: arrayBuffer covers both.
		resp.Body = c.whole(req, r)
	case oneStep(header, length):
		resp.Body = c.whole(req, r)
	default:
		resp.Body = &body{c: c, ctx: req.Context(), reader: stream.Call("getReader")}
	}
	return resp, nil
}

// oneStep reports whether a body is read in one step: of known length
// within maxOneStep, and not an event stream (whose events must arrive as
// the server sends them).
func oneStep(h http.Header, length int64) bool {
	if length < 0 || length > maxOneStep {
		return false
	}
	mt, _, _ := mime.ParseMediaType(h.Get("Content-Type"))
	return mt != "text/event-stream"
}

// headersOf reads fetch's response headers in one step: the pairs of
// Array.from(headers), flattened and joined by newlines (which neither a
// name nor a value can hold), with names in lower case and repeated
// headers already joined by fetch.
func headersOf(h js.Value) (http.Header, error) {
	flat := jsArrayFrom.Invoke(h).Call("flat").Call("join", "\n").String()
	if flat == "" {
		return http.Header{}, nil
	}
	parts := strings.Split(flat, "\n")
	if len(parts)%2 != 0 {
		return nil, errors.New("reading the response headers: a header name or value held a line break")
	}
	header := make(http.Header, len(parts)/2)
	for i := 0; i < len(parts); i += 2 {
		k := http.CanonicalHeaderKey(parts[i])
		header[k] = append(header[k], parts[i+1])
	}
	return header, nil
}

// whole starts reading the body in one step.
func (c *call) whole(req *http.Request, r js.Value) io.ReadCloser {
	c.then(r.Call("arrayBuffer"))
	return &body{c: c, ctx: req.Context(), reader: js.Undefined()}
}

var errClosed = errors.New("read on a closed response body")

// body is a response body: read in one step (reader undefined, the
// arrayBuffer Promise already pending) or chunk by chunk from a
// ReadableStream reader.
type body struct {
	c      *call
	ctx    context.Context
	reader js.Value

	mu       sync.Mutex
	inflight bool  // a Read waits for a Promise
	closed   bool  // Close was called
	err      error // sticky: io.EOF, errClosed or a failure
	buf      []byte
	// scratch takes a stream's chunks: an event stream comes in many
	// small ones, each copied here without asking its length first.
	scratch []byte
}

// scratchSize is the first size of body.scratch; a larger chunk grows it.
const scratchSize = 16 << 10

func (b *body) Read(p []byte) (int, error) {
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return 0, errClosed
	}
	if len(b.buf) > 0 {
		// What is left of a chunk comes before a sticky EOF.
		n := copy(p, b.buf)
		b.buf = b.buf[n:]
		b.mu.Unlock()
		return n, nil
	}
	if b.err != nil {
		err := b.err
		b.mu.Unlock()
		return 0, err
	}
	b.inflight = true
	b.mu.Unlock()
	whole := b.reader.IsUndefined()
	var chunk []byte
	var err error
	for err == nil && len(chunk) == 0 {
		if !whole {
			b.c.then(b.reader.Call("read"))
		}
		var s settlement
		if s, err = b.c.wait(b.ctx); err != nil {
			break
		}
		v := s.v
		if !whole {
			// {done: true} is the only read without a value.
			if v = v.Get("value"); v.IsUndefined() {
				err = io.EOF
				break
			}
			chunk = b.copyChunk(v)
			continue
		}
		v = jsUint8Array.New(v)
		chunk = make([]byte, v.Get("byteLength").Int())
		js.CopyBytesToGo(chunk, v)
		if len(chunk) == 0 {
			err = io.EOF
		}
		break
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.inflight = false
	if whole && err == nil {
		// The rest of the body is chunk; after it, EOF.
		b.err = io.EOF
	}
	if err != nil {
		b.err = err
	}
	if b.err != nil {
		b.c.end()
	}
	n := copy(p, chunk)
	b.buf = chunk[n:]
	if n > 0 {
		return n, nil
	}
	return 0, err
}

// copyChunk copies a stream's chunk v into b.scratch and returns it; its
// length is asked only when it fills the scratch buffer.
func (b *body) copyChunk(v js.Value) []byte {
	if b.scratch == nil {
		b.scratch = make([]byte, scratchSize)
	}
	n := js.CopyBytesToGo(b.scratch, v)
	if n == len(b.scratch) {
		if l := v.Get("byteLength").Int(); l > n {
			b.scratch = make([]byte, l)
			n = js.CopyBytesToGo(b.scratch, v)
		}
	}
	return b.scratch[:n]
}

// Close stops the download of what was not read. A Read waiting at the
// same time returns what the cancelled read settles with.
func (b *body) Close() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return nil
	}
	b.closed = true
	b.buf = nil
	if b.err != nil {
		return nil // finished: the call has ended
	}
	if b.reader.IsUndefined() {
		b.c.cancel()
	} else {
		b.reader.Call("cancel").Call("catch", ignore)
	}
	if !b.inflight {
		b.c.end()
	}
	return nil
}

// wait waits for the settlement of the call's pending Promise, or for the
// context: then it aborts the fetch and waits for the rejection that
// follows. A rejection is an error.
func (c *call) wait(ctx context.Context) (settlement, error) {
	select {
	case s := <-c.ch:
		if !s.ok {
			if err := ctx.Err(); err != nil && c.aborted.Load() {
				return s, err
			}
			return s, fmt.Errorf("reading the response body failed: %s", errText(s.v))
		}
		return s, nil
	case <-ctx.Done():
		if !c.abort.IsUndefined() {
			c.cancel()
			<-c.ch // the rejection the abort causes
		}
		return settlement{}, ctx.Err()
	}
}

// errText is a JavaScript error as text, with its cause.
func errText(e js.Value) string {
	if e.Type() != js.TypeObject {
		return js.Global().Get("String").Invoke(e).String()
	}
	msg := e.Call("toString").String()
	if cause := e.Get("cause"); cause.Type() == js.TypeObject && cause.Get("toString").Type() == js.TypeFunction {
		msg += ": " + cause.Call("toString").String()
	} else if cause.Type() == js.TypeString {
		msg += ": " + cause.String()
	}
	return msg
}

var _ http.RoundTripper = (*Transport)(nil)
