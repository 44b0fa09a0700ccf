package mcpclient

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpwasm/mcpwasm/mcperr"
)

// front puts handler behind intercept, which answers a request itself
// (returning true) or lets it through; the body stays readable for both.
func front(t *testing.T, handler http.Handler, intercept func(w http.ResponseWriter, r *http.Request, msg map[string]any) bool) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		var msg map[string]any
		_ = json.Unmarshal(body, &msg)
		if intercept(w, r, msg) {
			return
		}
		handler.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// TestRefusedNotificationEndsNothing: a server that refuses every
// notification POST with a body that is not JSON-RPC (as the Python SDK
// v2 does) gets a warning, and the session goes on: the cancel of an
// aborted call does not end it.
func TestRefusedNotificationEndsNothing(t *testing.T) {
	t.Parallel() // it waits on clocks and servers of its own
	ts := startServer(t)
	for _, tc := range []struct {
		name, path string
		transport  Transport
	}{
		{"streamable 2025-11-25", "/mcp", TransportStreamable},
		{"sse", "/sse", TransportSSE},
	} {
		t.Run(tc.name, func(t *testing.T) {
			proxy := front(t, proxyTo(t, ts.URL), func(w http.ResponseWriter, r *http.Request, msg map[string]any) bool {
				if _, call := msg["id"]; msg["method"] != nil && !call {
					w.WriteHeader(http.StatusBadRequest)
					_, _ = io.WriteString(w, `{"code":-32600,"message":"Body must be a single JSON-RPC request object"}`)
					return true
				}
				return false
			})
			hints := &Hints{}
			hints.put(proxy+tc.path, hint{transport: tc.transport, version: "2025-11-25"})
			var mu sync.Mutex
			var warnings []string
			c := newClient(t, proxy+tc.path, Options{Hints: hints, OnEvent: func(e Event) {
				if e.Type == "warning" {
					mu.Lock()
					warnings = append(warnings, e.Data.(Warning).Message)
					mu.Unlock()
				}
			}})
			if err := c.Connect(ctxT(t), ConnectOptions{}); err != nil {
				t.Fatalf("connect: %v", err)
			}
			ctx, cancel := context.WithCancel(ctxT(t))
			var once sync.Once
			_, err := c.CallTool(ctx, "slow", json.RawMessage(`{"steps":100,"delayMs":50}`), func(*mcp.ProgressNotificationParams) { once.Do(cancel) })
			wantCode(t, err, mcperr.Aborted)
			for range 3 { // the cancel notification is sent in the background
				if _, err := c.CallTool(ctxT(t), "add", json.RawMessage(`{"a":1,"b":1}`), nil); err != nil {
					t.Fatalf("call after the refused notifications: %v (state %s)", err, c.State())
				}
			}
			mu.Lock()
			defer mu.Unlock()
			if len(warnings) == 0 || !strings.Contains(strings.Join(warnings, "\n"), "notifications/initialized") {
				t.Errorf("warnings = %q; want one naming the refused notifications/initialized", warnings)
			}
		})
	}
}

// proxyTo forwards requests to base, streaming the answer.
func proxyTo(t *testing.T, base string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		req, err := http.NewRequestWithContext(r.Context(), r.Method, base+r.URL.RequestURI(), r.Body)
		if err != nil {
			t.Error(err)
			return
		}
		req.Header = r.Header.Clone()
		resp, err := http.DefaultTransport.RoundTrip(req)
		if err != nil {
			w.WriteHeader(http.StatusBadGateway)
			return
		}
		defer resp.Body.Close()
		for k, vs := range resp.Header {
			w.Header()[k] = vs
		}
		w.WriteHeader(resp.StatusCode)
		buf := make([]byte, 4096)
		for {
			n, err := resp.Body.Read(buf)
			if n > 0 {
				_, _ = w.Write(buf[:n])
				w.(http.Flusher).Flush()
			}
			if err != nil {
				return
			}
		}
	})
}

// TestModernCancelClosesTheStreamOnly: on protocol 2026-07-28 an abort
// closes the call's response stream and sends no notifications/cancelled (that version has no
// client notifications over Streamable HTTP).
func TestModernCancelClosesTheStreamOnly(t *testing.T) {
	t.Parallel() // it waits on clocks and servers of its own
	ts := startServer(t)
	c := newClient(t, ts.URL+"/modern", Options{})
	if err := c.Connect(ctxT(t), ConnectOptions{}); err != nil {
		t.Fatal(err)
	}
	if v := c.InitializeResult().ProtocolVersion; v != protocol20260728 {
		t.Fatalf("negotiated %s; want %s", v, protocol20260728)
	}
	ctx, cancel := context.WithCancel(ctxT(t))
	var once sync.Once
	_, err := c.CallTool(ctx, "slow", json.RawMessage(`{"steps":100,"delayMs":50}`), func(*mcp.ProgressNotificationParams) { once.Do(cancel) })
	wantCode(t, err, mcperr.Aborted)
	// (That the server sees the request end is checked against the
	// TypeScript SDK v2 server in e2e's TestInterop: go-sdk's stateless
	// server does not tie a handler to its request's connection.)
	if err := c.Ping(ctxT(t)); err != nil { // also: ping on 2026-07-28 works
		t.Fatalf("ping after the abort: %v", err)
	}
	ts.mu.Lock()
	defer ts.mu.Unlock()
	for _, h := range ts.headers {
		if h.Get("Mcp-Method") == "notifications/cancelled" {
			t.Fatal("the client POSTed notifications/cancelled on a 2026-07-28 session")
		}
	}
}

// TestPingCarriesTheEnvelope: a 2026-07-28 server that refuses requests
// without the per-request _meta (as the TypeScript SDK v2 does) answers
// ping, and one that answers "method not found" (the version has no ping)
// still counts as answering.
func TestPingCarriesTheEnvelope(t *testing.T) {
	ts := startServer(t)
	var got map[string]any
	var mu sync.Mutex
	url := front(t, proxyTo(t, ts.URL), func(w http.ResponseWriter, r *http.Request, msg map[string]any) bool {
		if msg["method"] != "ping" {
			return false
		}
		mu.Lock()
		got, _ = msg["params"].(map[string]any)
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusNotFound)
		_ = json.NewEncoder(w).Encode(map[string]any{"jsonrpc": "2.0", "id": msg["id"], "error": map[string]any{"code": -32601, "message": "Method not found"}})
		return true
	})
	c := newClient(t, url+"/modern", Options{ClientName: "pinger", ClientVersion: "9"})
	if err := c.Connect(ctxT(t), ConnectOptions{Elicitation: func(context.Context, *mcp.ElicitParams) (*mcp.ElicitResult, error) { return nil, nil }}); err != nil {
		t.Fatal(err)
	}
	if err := c.Ping(ctxT(t)); err != nil {
		t.Fatalf("ping: %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	meta, _ := got["_meta"].(map[string]any)
	caps, _ := meta[mcp.MetaKeyClientCapabilities].(map[string]any)
	if meta[mcp.MetaKeyProtocolVersion] != protocol20260728 || caps["elicitation"] == nil {
		t.Errorf("ping params = %v; want the _meta envelope with protocolVersion %s and the elicitation capability", got, protocol20260728)
	}
}

// TestJSONRPCErrorIn400: a JSON-RPC error a server sends with HTTP 400 is
// the server's JSON-RPC error (its code and message), not an "http" error.
func TestJSONRPCErrorIn400(t *testing.T) {
	ts := startServer(t)
	url := front(t, proxyTo(t, ts.URL), func(w http.ResponseWriter, r *http.Request, msg map[string]any) bool {
		if msg["method"] != "resources/read" {
			return false
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		_ = json.NewEncoder(w).Encode(map[string]any{"jsonrpc": "2.0", "id": msg["id"], "error": map[string]any{"code": -32602, "message": "Resource not found: x://y"}})
		return true
	})
	c := newClient(t, url+"/mcp", Options{})
	if err := c.Connect(ctxT(t), ConnectOptions{}); err != nil {
		t.Fatal(err)
	}
	_, err := c.ReadResource(ctxT(t), "x://y")
	e := AsError(err)
	if e.Code != mcperr.InvalidArgument || e.RPCCode == nil || *e.RPCCode != -32602 || e.Status != 0 || !strings.Contains(e.Message, "Resource not found: x://y") {
		t.Errorf("error = %+v (rpcCode %v); want invalid_argument, rpcCode -32602, the server's message, no HTTP status", e, e.RPCCode)
	}
}

// TestRefusedProbeSessionIsDeleted: a 2025-11-25 server that makes a
// session for the refused server/discover probe (the Python SDK 1.x) gets
// it deleted; the connect then goes on with initialize.
func TestRefusedProbeSessionIsDeleted(t *testing.T) {
	ts := startServer(t)
	var mu sync.Mutex
	var deleted []string
	url := front(t, proxyTo(t, ts.URL), func(w http.ResponseWriter, r *http.Request, msg map[string]any) bool {
		switch {
		case msg["method"] == "server/discover":
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("Mcp-Session-Id", "orphan")
			w.WriteHeader(http.StatusBadRequest)
			_, _ = io.WriteString(w, `{"jsonrpc":"2.0","id":"server-error","error":{"code":-32600,"message":"Bad Request: Missing session ID"}}`)
			return true
		case r.Method == http.MethodDelete && r.Header.Get("Mcp-Session-Id") == "orphan":
			mu.Lock()
			deleted = append(deleted, r.Header.Get("Mcp-Protocol-Version"))
			mu.Unlock()
			return true
		}
		return false
	})
	c := newClient(t, url+"/mcp", Options{})
	if err := c.Connect(ctxT(t), ConnectOptions{}); err != nil {
		t.Fatal(err)
	}
	if v := c.InitializeResult().ProtocolVersion; v != "2025-11-25" {
		t.Errorf("negotiated %s; want 2025-11-25 after the refused probe", v)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(deleted) != 1 || deleted[0] != "" {
		t.Errorf("DELETEs of the probe's session (their MCP-Protocol-Version) = %q; want one, without a version header", deleted)
	}
}

// TestCapabilitiesAsDeclared: the session's capabilities are the object
// the server sent, with what go-sdk's types drop (false flags, empty
// objects, fields they do not know).
func TestCapabilitiesAsDeclared(t *testing.T) {
	const caps = `{"experimental":{},"resources":{"subscribe":false,"listChanged":true},"tools":{"listChanged":false},"future":{"x":1}}`
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var msg struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		_ = json.NewDecoder(r.Body).Decode(&msg)
		switch msg.Method {
		case "initialize":
			w.Header().Set("Content-Type", "application/json")
			_, _ = io.WriteString(w, `{"jsonrpc":"2.0","id":`+string(msg.ID)+`,"result":{"protocolVersion":"2025-11-25","capabilities":`+caps+`,"serverInfo":{"name":"raw","version":"1"}}}`)
		case "notifications/initialized":
			w.WriteHeader(http.StatusAccepted)
		default:
			w.WriteHeader(http.StatusBadRequest)
		}
	}))
	t.Cleanup(srv.Close)
	c := newClient(t, srv.URL, Options{Transport: TransportStreamable})
	if err := c.Connect(ctxT(t), ConnectOptions{}); err != nil {
		t.Fatal(err)
	}
	got, _ := json.Marshal(c.Session().Capabilities)
	if string(got) != caps {
		t.Errorf("capabilities = %s; want %s", got, caps)
	}
}

func TestResultJSONInventsNoCaching(t *testing.T) {
	for _, tc := range []struct {
		in   mcp.Cacheable
		want string
	}{
		{mcp.Cacheable{}, `{"contents":[]}`},
		{mcp.Cacheable{TTLMs: 500}, `{"contents":[],"ttlMs":500}`},
		{mcp.Cacheable{TTLMs: 0, CacheScope: "private"}, `{"cacheScope":"private","contents":[],"ttlMs":0}`},
	} {
		b, err := ResultJSON(&mcp.ReadResourceResult{Cacheable: tc.in, Contents: []*mcp.ResourceContents{}})
		if err != nil || string(b) != tc.want {
			t.Errorf("ResultJSON(%+v) = %s, %v; want %s", tc.in, b, err, tc.want)
		}
	}
}

// TestKnownServersAreNotProbed: no server/discover probe where the answer
// is known: a hint saying the server speaks 2025-11-25, or the legacy SSE
// transport (which no 2026-07-28 server serves).
func TestKnownServersAreNotProbed(t *testing.T) {
	for _, tc := range []struct {
		name, path string
		hint       hint
		opts       Options
	}{
		{name: "hinted 2025-11-25", path: "/mcp", hint: hint{transport: TransportStreamable, version: "2025-11-25"}},
		{name: "sse", path: "/sse", opts: Options{Transport: TransportSSE}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ts := startServer(t)
			var mu sync.Mutex
			var methods []string
			url := front(t, proxyTo(t, ts.URL), func(w http.ResponseWriter, r *http.Request, msg map[string]any) bool {
				if m, ok := msg["method"].(string); ok {
					mu.Lock()
					methods = append(methods, m)
					mu.Unlock()
				}
				return false
			})
			tc.opts.Hints = &Hints{}
			if tc.hint != (hint{}) {
				tc.opts.Hints.put(url+tc.path, tc.hint)
			}
			c := newClient(t, url+tc.path, tc.opts)
			if err := c.Connect(ctxT(t), ConnectOptions{}); err != nil {
				t.Fatal(err)
			}
			mu.Lock()
			defer mu.Unlock()
			if len(methods) == 0 || methods[0] != "initialize" {
				t.Errorf("requests = %v; want initialize first, no server/discover", methods)
			}
		})
	}
}

// TestAutoFallbackIsUndone: a Streamable HTTP server that answers the
// probe with a plain 404 (as a legacy SSE endpoint would) still connects
// with transport "auto": when the legacy transport fails too, the
// Streamable HTTP attempt the 404 cut short is made in full.
func TestAutoFallbackIsUndone(t *testing.T) {
	ts := startServer(t)
	url := front(t, proxyTo(t, ts.URL), func(w http.ResponseWriter, r *http.Request, msg map[string]any) bool {
		if msg["method"] == "server/discover" {
			http.NotFound(w, r)
			return true
		}
		return false
	})
	c := newClient(t, url+"/mcp", Options{})
	if err := c.Connect(ctxT(t), ConnectOptions{}); err != nil {
		t.Fatalf("connect: %v", err)
	}
	if _, err := c.CallTool(ctxT(t), "add", json.RawMessage(`{"a":1,"b":2}`), nil); err != nil {
		t.Fatal(err)
	}
}
