package mcpclient

import (
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/mcpwasm/mcpwasm/devkit/authtest"
	"github.com/mcpwasm/mcpwasm/mcperr"
)

// seenRequest is what the protected server saw of one request, and how it
// answered.
type seenRequest struct {
	method, scheme string // HTTP method; Authorization scheme, lower case
	proof          bool   // a DPoP header came along
	status         int
}

// recorder records each request when its answer's status is written
// (before the client can see it).
type recorder struct {
	mu   sync.Mutex
	seen []seenRequest
}

type recordingWriter struct {
	http.ResponseWriter
	rec  *recorder
	req  seenRequest
	done bool
}

// note records the request with the status of its answer, once.
func (w *recordingWriter) note(code int) {
	if w.done {
		return
	}
	w.done = true
	w.req.status = code
	w.rec.mu.Lock()
	w.rec.seen = append(w.rec.seen, w.req)
	w.rec.mu.Unlock()
}

func (w *recordingWriter) WriteHeader(code int) {
	w.note(code)
	w.ResponseWriter.WriteHeader(code)
}

func (w *recordingWriter) Write(b []byte) (int, error) {
	w.note(http.StatusOK)
	return w.ResponseWriter.Write(b)
}

func (w *recordingWriter) Flush() {
	w.note(http.StatusOK)
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (r *recorder) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		scheme, _, _ := strings.Cut(req.Header.Get("Authorization"), " ")
		h.ServeHTTP(&recordingWriter{ResponseWriter: w, rec: r, req: seenRequest{
			method: req.Method, scheme: strings.ToLower(scheme), proof: req.Header.Get("DPoP") != "",
		}}, req)
	})
}

func (r *recorder) all() []seenRequest {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]seenRequest(nil), r.seen...)
}

// TestDPoPSession: against the demo authorization server and protected
// MCP server in DPoP mode (bound tokens only, nonces at both, every proof
// verified), a client signs in and every MCP request of its session —
// the POSTs, the GET stream, the DELETE that ends it — carries the token
// with the DPoP scheme and a proof; none goes out as Bearer.
func TestDPoPSession(t *testing.T) {
	rec := &recorder{}
	e := authtest.StartWith(t, authtest.Options{DPoP: true, Wrap: rec.wrap})
	h := e.Handler(t, nil)
	c := newClient(t, e.URL, Options{Auth: h, Transport: TransportStreamable})
	ctx := ctxT(t)
	if err := c.Authorize(ctx, ConnectOptions{}); err != nil {
		t.Fatalf("Authorize: %v", err)
	}
	if _, err := c.ListTools(ctx); err != nil {
		t.Fatalf("ListTools: %v", err)
	}
	c.Disconnect() // ends the session: DELETE
	has := func(method string) bool {
		for _, r := range rec.all() {
			if r.method == method && r.scheme == "dpop" && r.status < 300 {
				return true
			}
		}
		return false
	}
	for !has(http.MethodDelete) {
		select {
		case <-ctx.Done():
			t.Fatalf("no accepted DPoP DELETE; saw %+v", rec.all())
		default:
			runtimeGosched()
		}
	}
	if !has(http.MethodGet) || !has(http.MethodPost) {
		t.Errorf("want accepted DPoP POST and GET requests; saw %+v", rec.all())
	}
	unauthorized := 0
	for _, r := range rec.all() {
		switch {
		case r.scheme == "bearer":
			t.Errorf("%s sent with a Bearer token", r.method)
		case r.scheme == "dpop" && !r.proof:
			t.Errorf("%s with the DPoP scheme but no proof", r.method)
		case r.scheme == "dpop" && r.status == http.StatusUnauthorized:
			unauthorized++
		}
	}
	// The first proof has no nonce yet: one challenge, answered; later
	// proofs carry the nonce.
	if unauthorized > 1 {
		t.Errorf("%d DPoP requests refused; want at most the one nonce challenge (%+v)", unauthorized, rec.all())
	}
}

// TestStaticDPoPHeaderRefused: a page's static headers cannot replace the
// DPoP proof the sign-in adds to each request.
func TestStaticDPoPHeaderRefused(t *testing.T) {
	_, err := New("https://mcp.example/mcp", Options{Headers: map[string]string{"dpop": "x"}})
	wantCode(t, err, mcperr.InvalidArgument)
}
