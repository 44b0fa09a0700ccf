package mcpclient

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/mcpwasm/mcpwasm/devkit/authtest"
	"github.com/mcpwasm/mcpwasm/mcperr"
)

// busyOnce answers the first tools/list POST 429 (Retry-After: 1) and
// passes the rest on, noting the jti of each tools/list request's DPoP
// proof.
type busyOnce struct {
	mu   sync.Mutex
	jtis []string
	sent bool
}

func (b *busyOnce) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		if r.Method != http.MethodPost || !strings.Contains(string(body), `"tools/list"`) {
			h.ServeHTTP(w, r)
			return
		}
		b.mu.Lock()
		b.jtis = append(b.jtis, proofJTI(r.Header.Get("DPoP")))
		first := !b.sent
		b.sent = true
		b.mu.Unlock()
		if first {
			w.Header().Set("Retry-After", "1")
			http.Error(w, "slow down", http.StatusTooManyRequests)
			return
		}
		h.ServeHTTP(w, r)
	})
}

// proofJTI reads the jti of a DPoP proof (unverified: the server behind
// verifies it), "" for none.
func proofJTI(proof string) string {
	parts := strings.Split(proof, ".")
	if len(parts) != 3 {
		return ""
	}
	raw, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		return ""
	}
	var c struct {
		JTI string `json:"jti"`
	}
	_ = json.Unmarshal(raw, &c)
	return c.JTI
}

// TestBusyRetryHasAFreshDPoPProof: a 429 to a request of a DPoP-bound
// session is answered by sending it again with a new proof (a proof is
// single-use, RFC 9449 §11.1: the server would refuse the same jti), which
// the server verifies; the call succeeds.
func TestBusyRetryHasAFreshDPoPProof(t *testing.T) {
	t.Parallel() // it waits on clocks and servers of its own
	b := &busyOnce{}
	e := authtest.StartWith(t, authtest.Options{DPoP: true, Wrap: b.wrap})
	c := newClient(t, e.URL, Options{Auth: e.Handler(t, nil), Transport: TransportStreamable})
	ctx := ctxT(t)
	if err := c.Authorize(ctx, ConnectOptions{}); err != nil {
		t.Fatalf("Authorize: %v", err)
	}
	b.mu.Lock()
	before := len(b.jtis)
	b.mu.Unlock()
	if _, err := c.ListTools(ctx); err != nil {
		t.Fatalf("ListTools through a 429: %v", err)
	}
	b.mu.Lock()
	jtis := append([]string(nil), b.jtis[before:]...)
	b.mu.Unlock()
	if before != 0 {
		// Authorize lists no tools; a list before the 429 would have
		// taken it.
		t.Fatalf("%d tools/list requests before ListTools", before)
	}
	if len(jtis) != 2 || jtis[0] == "" || jtis[0] == jtis[1] {
		t.Errorf("tools/list proofs' jti = %q; want two different ones (the busy attempt's and the retry's)", jtis)
	}
}

// TestBusyCallFailsSayingWhen: a call a server keeps turning away with
// 503 fails http with that status after the retries, and the message says
// the server is busy; the client stays connected.
func TestBusyCallFailsSayingWhen(t *testing.T) {
	t.Parallel() // it waits on clocks and servers of its own
	var mu sync.Mutex
	busy, seen := false, 0
	e := authtest.StartWith(t, authtest.Options{Wrap: func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			on := busy && r.Method == http.MethodPost
			if on {
				seen++
			}
			mu.Unlock()
			if on {
				w.Header().Set("Retry-After", "Thu, 01 Jan 1970 00:00:00 GMT") // past: read as none
				http.Error(w, "maintenance", http.StatusServiceUnavailable)
				return
			}
			h.ServeHTTP(w, r)
		})
	}})
	c := newClient(t, e.URL, Options{Auth: e.Handler(t, nil), Transport: TransportStreamable})
	ctx := ctxT(t)
	if err := c.Authorize(ctx, ConnectOptions{}); err != nil {
		t.Fatalf("Authorize: %v", err)
	}
	mu.Lock()
	busy = true
	mu.Unlock()
	_, err := c.ListTools(ctx)
	wantCode(t, err, mcperr.HTTP)
	if s := mcperr.StatusOf(err); s != 503 {
		t.Errorf("status %d; want 503", s)
	}
	if msg := AsError(err).Message; !strings.Contains(msg, "is busy (HTTP 503); try again later.") {
		t.Errorf("message %q; want it to say the server is busy", msg)
	}
	mu.Lock()
	n := seen
	mu.Unlock()
	if n != 4 {
		t.Errorf("the server saw %d attempts; want 4 (the first and 3 retries)", n)
	}
	if s := c.State(); s != StateConnected {
		t.Errorf("state %s; want connected", s)
	}
}

// TestBusyNotificationIsAWarning: a notification a server keeps turning
// away (503 after the retries) ends nothing: the connect succeeds and a
// warning says what was not delivered.
func TestBusyNotificationIsAWarning(t *testing.T) {
	t.Parallel() // it waits on clocks and servers of its own
	e := authtest.StartWith(t, authtest.Options{Wrap: func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			body, _ := io.ReadAll(r.Body)
			r.Body = io.NopCloser(bytes.NewReader(body))
			if strings.Contains(string(body), `"notifications/initialized"`) {
				http.Error(w, "busy", http.StatusServiceUnavailable)
				return
			}
			h.ServeHTTP(w, r)
		})
	}})
	var mu sync.Mutex
	var warnings []string
	c := newClient(t, e.URL, Options{Auth: e.Handler(t, nil), Transport: TransportStreamable, OnEvent: func(ev Event) {
		if w, ok := ev.Data.(Warning); ok && ev.Type == "warning" {
			mu.Lock()
			warnings = append(warnings, w.Message)
			mu.Unlock()
		}
	}})
	ctx := ctxT(t)
	if err := c.Authorize(ctx, ConnectOptions{}); err != nil {
		t.Fatalf("Authorize: %v", err)
	}
	if _, err := c.ListTools(ctx); err != nil {
		t.Fatalf("ListTools: %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	found := false
	for _, w := range warnings {
		found = found || strings.Contains(w, "too busy for the notifications/initialized notification (HTTP 503)")
	}
	if !found {
		t.Errorf("warnings %q; want one about notifications/initialized", warnings)
	}
}
