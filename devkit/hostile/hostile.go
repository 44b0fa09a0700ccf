// Package hostile provides misbehaving servers for tests: a minimal MCP
// server over Streamable HTTP whose every answer a test can script, a
// middleware that rewrites another handler's responses (to turn the demo
// authorization server into one that sends a bad token response or bad
// metadata), and a recorder of every request an origin receives (to prove
// that no credential reached it). Each server allows CORS from any origin,
// so the same servers serve native tests and tests in Chromium.
package hostile

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/mcpwasm/mcpwasm/demo/cors"
)

// Message is a JSON-RPC message as the scripted server receives it.
type Message struct {
	ID     json.RawMessage `json:"id,omitempty"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params,omitempty"`
}

// Request is what a [Recorder] saw of one request.
type Request struct {
	Method string
	Path   string
	Query  string
	RPC    string // JSON-RPC method of a POST body, if any
	Header http.Header
	Body   string // at most 64 KiB
}

// Recorder records the requests that reach the handler it wraps
// (preflights included). It is safe for concurrent use.
type Recorder struct {
	mu   sync.Mutex
	reqs []Request
}

// Wrap returns h recording into r.
func (r *Recorder) Wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(io.LimitReader(req.Body, 64<<10))
		req.Body = io.NopCloser(bytes.NewReader(body))
		var m Message
		_ = json.Unmarshal(body, &m)
		r.mu.Lock()
		r.reqs = append(r.reqs, Request{Method: req.Method, Path: req.URL.Path, Query: req.URL.RawQuery,
			RPC: m.Method, Header: req.Header.Clone(), Body: string(body)})
		r.mu.Unlock()
		h.ServeHTTP(w, req)
	})
}

// Requests returns what was recorded so far.
func (r *Recorder) Requests() []Request {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Request(nil), r.reqs...)
}

// Count returns how many recorded requests satisfy keep.
func (r *Recorder) Count(keep func(Request) bool) int {
	n := 0
	for _, q := range r.Requests() {
		if keep(q) {
			n++
		}
	}
	return n
}

// Contains reports whether any recorded request carries s anywhere: in a
// header value, the query or the body. Tests use it to prove a secret
// never reached an origin.
func (r *Recorder) Contains(s string) bool {
	for _, q := range r.Requests() {
		if strings.Contains(q.Query, s) || strings.Contains(q.Body, s) {
			return true
		}
		for _, vs := range q.Header {
			for _, v := range vs {
				if strings.Contains(v, s) {
					return true
				}
			}
		}
	}
	return false
}

// Server is a test server on its own loopback origin: h behind CORS and a
// [Recorder].
type Server struct {
	*Recorder
	URL string // origin, "http://127.0.0.1:port"
	srv *httptest.Server
}

// Start serves h on a new loopback origin until the test ends.
func Start(t testing.TB, h http.Handler) *Server {
	t.Helper()
	s := &Server{Recorder: &Recorder{}}
	s.srv = httptest.NewServer(s.Recorder.Wrap(cors.Wrap(h, cors.Options{AllowHeaders: []string{"X-Api-Key", "DPoP"}})))
	t.Cleanup(func() {
		// End the handlers still holding a request open (a server that
		// never answers), which Close would wait for.
		s.srv.CloseClientConnections()
		s.srv.Close()
	})
	s.URL = s.srv.URL
	return s
}

// Close stops the server early (a server that went away).
func (s *Server) Close() { s.srv.Close() }

// Answer scripts one answer of an [MCP] server: it returns false to let
// the default answer go out.
type Answer func(w http.ResponseWriter, r *http.Request, m Message) bool

// MCP is a minimal MCP server over Streamable HTTP at any path: it
// answers initialize (protocol 2025-11-25, tools capability), tools/list
// (one tool, "echo"), tools/call (text "ok"), ping and every other request
// with JSON; notifications with 202; server/discover with -32601 (a server
// that predates 2026-07-28); GET with 405. Answer, when set, is asked first.
type MCP struct {
	Answer Answer
}

func (m *MCP) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch r.Method {
	case http.MethodPost:
	case http.MethodDelete:
		w.WriteHeader(http.StatusOK)
		return
	default:
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	var msg Message
	if err := json.Unmarshal(body, &msg); err != nil {
		http.Error(w, "not JSON-RPC", http.StatusBadRequest)
		return
	}
	if m.Answer != nil && m.Answer(w, r, msg) {
		return
	}
	if len(msg.ID) == 0 {
		w.WriteHeader(http.StatusAccepted)
		return
	}
	switch msg.Method {
	case "server/discover":
		Error(w, msg.ID, -32601, "method not found")
	case "initialize":
		Result(w, msg.ID, map[string]any{
			"protocolVersion": "2025-11-25",
			"capabilities":    map[string]any{"tools": map[string]any{}},
			"serverInfo":      map[string]any{"name": "hostile", "version": "1"},
		})
	case "tools/list":
		Result(w, msg.ID, map[string]any{"tools": []any{EchoTool}})
	case "tools/call":
		Result(w, msg.ID, map[string]any{"content": []any{map[string]any{"type": "text", "text": "ok"}}})
	default:
		Result(w, msg.ID, map[string]any{})
	}
}

// EchoTool is the one tool an [MCP] server lists by default.
var EchoTool = map[string]any{"name": "echo", "description": "echoes", "inputSchema": map[string]any{"type": "object"}}

// Result writes a JSON-RPC result for id.
func Result(w http.ResponseWriter, id json.RawMessage, result any) {
	Raw(w, fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":%s}`, id, mustJSON(result)))
}

// Error writes a JSON-RPC error for id.
func Error(w http.ResponseWriter, id json.RawMessage, code int, message string) {
	Raw(w, fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"error":{"code":%d,"message":%s}}`, id, code, mustJSON(message)))
}

// Raw writes body as a 200 application/json response.
func Raw(w http.ResponseWriter, body string) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	_, _ = io.WriteString(w, body)
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// Tamper rewrites the responses of h whose path is path: edit gets the
// status, headers and body h wrote and returns what to send instead.
func Tamper(h http.Handler, path string, edit func(status int, header http.Header, body []byte) (int, []byte)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != path || r.Method == http.MethodOptions {
			h.ServeHTTP(w, r)
			return
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, r)
		status, body := edit(rec.Code, rec.Header(), rec.Body.Bytes())
		for k, vs := range rec.Header() {
			w.Header()[k] = vs
		}
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		w.WriteHeader(status)
		_, _ = w.Write(body)
	})
}

// EditJSON returns a [Tamper] edit that decodes a JSON object body,
// applies fn to it and encodes it again.
func EditJSON(fn func(m map[string]any)) func(int, http.Header, []byte) (int, []byte) {
	return func(status int, _ http.Header, body []byte) (int, []byte) {
		var m map[string]any
		if json.Unmarshal(body, &m) != nil {
			return status, body
		}
		fn(m)
		return status, []byte(mustJSON(m))
	}
}

// Redirect answers every request for path (preflights aside) with a
// redirect of the given status to to(r); other paths go to h.
func Redirect(h http.Handler, path string, status int, to func(r *http.Request) string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != path || r.Method == http.MethodOptions {
			h.ServeHTTP(w, r)
			return
		}
		// With CORS headers, as an attacker who wants a page to follow
		// would send them (without, a browser cannot read the redirect).
		if o := r.Header.Get("Origin"); o != "" {
			w.Header().Set("Access-Control-Allow-Origin", o)
		}
		http.Redirect(w, r, to(r), status)
	})
}

// Hang holds a request open without answering until the client goes away
// or done is closed (a server that never answers).
func Hang(r *http.Request, done <-chan struct{}) {
	select {
	case <-r.Context().Done():
	case <-done:
	}
}

// StartSSE answers 200 text/event-stream and flushes the headers: an
// event stream that has begun (and may never send an event).
func StartSSE(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
}

// JSON writes v as a JSON response with status.
func JSON(w http.ResponseWriter, status int, v any) {
	body := mustJSON(v)
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	_, _ = io.WriteString(w, body)
}
