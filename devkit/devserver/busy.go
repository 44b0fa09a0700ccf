package devserver

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/mcpwasm/mcpwasm/demo"
	"github.com/mcpwasm/mcpwasm/demo/cors"
)

// BusyConfig holds the switches that make the demo servers answer as
// overloaded servers do (429 Too Many Requests, 503 Service Unavailable),
// for tests of clients that must wait and try again. A nil switch is off.
type BusyConfig struct {
	// MCP turns away POSTs to the demo MCP server's Streamable HTTP
	// endpoint.
	MCP *Busy
	// MCP2 does the same at the second demo MCP server, which needs no
	// sign-in.
	MCP2 *Busy
	// Token turns away requests to the demo authorization server's token
	// endpoint (code exchanges and refreshes).
	Token *Busy
}

// Busy is one switch: once [Busy.Set], the next requests it sees are
// answered with a busy status, with CORS headers as the server's own
// answers have, and every request it sees is noted ([Busy.Hits]). Its
// methods are safe for concurrent use.
type Busy struct {
	mu         sync.Mutex
	left       int
	status     int
	retryAfter int // seconds; < 0: no Retry-After
	hits       []BusyHit
}

// BusyHit is a request a [Busy] switch saw, as the server saw it.
type BusyHit struct {
	Time   time.Time // when it arrived
	Method string    // its JSON-RPC method ("tools/call"), "" for none
	Status int       // the busy status it was answered with; 0: passed on to the server
}

// Set makes the next n requests answer status (429 or 503) with
// Retry-After: retryAfter seconds, or without Retry-After when retryAfter
// is negative. Set(0, …) turns the switch off.
func (b *Busy) Set(n, status, retryAfter int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.left, b.status, b.retryAfter = n, status, retryAfter
}

// Hits returns the requests the switch saw, in order.
func (b *Busy) Hits() []BusyHit {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]BusyHit(nil), b.hits...)
}

// take notes a request and returns the busy answer it gets, if any.
func (b *Busy) take(method string) (status, retryAfter int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	hit := BusyHit{Time: time.Now(), Method: method}
	if b.left > 0 {
		b.left--
		hit.Status, status, retryAfter = b.status, b.status, b.retryAfter
	}
	b.hits = append(b.hits, hit)
	return status, retryAfter
}

// wrap puts b in front of next for the requests match selects; a busy
// answer carries the CORS headers of opts, so that a page can read it.
func (b *Busy) wrap(next http.Handler, opts cors.Options, match func(*http.Request) bool) http.Handler {
	if b == nil {
		return next
	}
	refuse := cors.Wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		a := r.Context().Value(busyKey{}).(busyAnswer)
		if a.after >= 0 {
			w.Header().Set("Retry-After", strconv.Itoa(a.after))
		}
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.WriteHeader(a.status)
		w.Write([]byte(http.StatusText(a.status) + "\n"))
	}), opts)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !match(r) {
			next.ServeHTTP(w, r)
			return
		}
		status, after := b.take(peekMethod(r))
		if status == 0 {
			next.ServeHTTP(w, r)
			return
		}
		refuse.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), busyKey{}, busyAnswer{status, after})))
	})
}

// peekMethod returns the JSON-RPC method of r's body (a form body has
// none), leaving the body to be read again.
func peekMethod(r *http.Request) string {
	if r.Body == nil {
		return ""
	}
	head, _ := io.ReadAll(io.LimitReader(r.Body, 64<<10))
	r.Body = struct {
		io.Reader
		io.Closer
	}{io.MultiReader(bytes.NewReader(head), r.Body), r.Body}
	var m struct {
		Method string `json:"method"`
	}
	_ = json.Unmarshal(head, &m)
	return m.Method
}

type busyKey struct{}

type busyAnswer struct{ status, after int }

// busyMCP and busyToken select what [BusyConfig]'s switches turn away.
func busyMCP(r *http.Request) bool {
	return r.Method == http.MethodPost && r.URL.Path == demo.StreamablePath
}

func busyToken(r *http.Request) bool {
	return r.Method == http.MethodPost && r.URL.Path == "/token"
}
