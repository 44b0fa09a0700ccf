package mcpclient

import (
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
)

// TestOriginEraSkipsTheProbe: once a URL of an origin answered as a
// legacy (2025-11-25) server, a first connect to another URL of that
// origin sends initialize first, with no server/discover probe, also
// after a reload (the persisted hints); a guess that fails (a modern-only
// server there) is forgotten and the connect probes, and the origin is
// then known as modern.
func TestOriginEraSkipsTheProbe(t *testing.T) {
	ts := startServer(t)
	var mu sync.Mutex
	methods := map[string][]string{} // query → methods, in order
	url := front(t, proxyTo(t, ts.URL), func(w http.ResponseWriter, r *http.Request, msg map[string]any) bool {
		m, _ := msg["method"].(string)
		if m == "" {
			return false
		}
		q := r.URL.RawQuery
		mu.Lock()
		methods[q] = append(methods[q], m)
		mu.Unlock()
		if strings.Contains(q, "modern") && m == "initialize" {
			// Modern-only: no legacy handshake.
			w.WriteHeader(http.StatusBadRequest)
			_, _ = io.WriteString(w, "this server speaks 2026-07-28 only")
			return true
		}
		return false
	})
	first := func(q string) string {
		mu.Lock()
		defer mu.Unlock()
		if len(methods[q]) == 0 {
			return ""
		}
		return methods[q][0]
	}
	var saved []byte
	hints := &Hints{Persist: func(b []byte) { saved = b }}
	connect := func(h *Hints, q string) *Client {
		t.Helper()
		path := "/mcp?" // a 2025-11-25 server
		if strings.Contains(q, "modern") {
			path = "/modern?" // a 2026-07-28 server (stateless)
		}
		c := newClient(t, url+path+q, Options{Hints: h})
		if err := c.Connect(ctxT(t), ConnectOptions{}); err != nil {
			mu.Lock()
			defer mu.Unlock()
			t.Fatalf("connect to ?%s: %v (requests %v)", q, err, methods[q])
		}
		return c
	}

	connect(hints, "a=1")
	if got := first("a=1"); got != "server/discover" {
		t.Fatalf("the origin's first URL began with %q; want the server/discover probe", got)
	}
	connect(hints, "b=1")
	if got := first("b=1"); got != "initialize" {
		t.Errorf("another URL of a legacy origin began with %q; want initialize, no probe", got)
	}

	restored := &Hints{}
	restored.Load(saved)
	connect(restored, "c=1")
	if got := first("c=1"); got != "initialize" {
		t.Errorf("after a reload, a new URL of the legacy origin began with %q; want initialize", got)
	}

	c := connect(restored, "modern=1")
	mu.Lock()
	seq := strings.Join(methods["modern=1"], ",")
	mu.Unlock()
	if !strings.HasPrefix(seq, "initialize,server/discover") {
		t.Errorf("a modern-only URL of the origin got %s; want the legacy guess, then the probe", seq)
	}
	if v := c.InitializeResult().ProtocolVersion; v < protocol20260728 {
		t.Errorf("negotiated %s with the modern-only server; want 2026-07-28 or later", v)
	}
	if h := restored.get(url + "/mcp?d=1"); h != (hint{version: protocol20260728}) {
		t.Errorf("after the modern answer, a new URL of the origin gets hint %+v; want the origin's era (a probe with its headers)", h)
	}
}

// TestHintsLoadOlderData: hints saved before origins were kept still load.
func TestHintsLoadOlderData(t *testing.T) {
	h := &Hints{}
	h.Load([]byte(`{"https://a.example/mcp":{"transport":"streamable","version":"2025-11-25"},"https://b.example/sse":{"transport":"sse","version":"2025-11-25"}}`))
	if got := h.get("https://a.example/mcp"); got != (hint{transport: TransportStreamable, version: "2025-11-25"}) {
		t.Errorf("a.example hint = %+v", got)
	}
	if got := h.get("https://a.example/other"); got != (hint{}) {
		t.Errorf("older data named no origin era, yet another URL got %+v", got)
	}
}
