package mcpclient

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpwasm/mcpwasm/devkit/authtest"
)

// wireLog records, in the order the server answers them, the requests a
// server sees: "POST server/discover (bare) 400 -32020", where "bare"
// says the request came without Mcp-Method (else "(Mcp-Method)"), and an
// error answer's JSON-RPC code follows its status.
type wireLog struct {
	mu      sync.Mutex
	entries []string
	seen    []http.Header // the requests' headers, in the same order
}

func (l *wireLog) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		line := r.Method
		if r.Method == http.MethodPost {
			body, _ := io.ReadAll(r.Body)
			r.Body = io.NopCloser(strings.NewReader(string(body)))
			var m struct {
				Method string `json:"method"`
			}
			_ = json.Unmarshal(body, &m)
			mark := "(bare)"
			if r.Header.Get("Mcp-Method") != "" {
				mark = "(Mcp-Method)"
			}
			line += " " + m.Method + " " + mark
		}
		lw := &logWriter{ResponseWriter: w, log: l, line: line, header: r.Header.Clone(), at: -1}
		h.ServeHTTP(lw, r)
		lw.note(http.StatusOK)
		lw.finish()
	})
}

// all returns the entries so far.
func (l *wireLog) all() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.entries...)
}

// posts returns the entries of POSTs so far.
func (l *wireLog) posts() []string {
	var out []string
	for _, e := range l.all() {
		if strings.HasPrefix(e, "POST ") {
			out = append(out, e)
		}
	}
	return out
}

// logWriter notes its request with the status when the answer's status
// is written (before the client can see it), and an error answer's
// JSON-RPC code when the handler is done.
type logWriter struct {
	http.ResponseWriter
	log    *wireLog
	line   string
	header http.Header
	at     int // index of the entry, -1 before the status
	status int
	body   []byte // the start of an error answer
}

func (w *logWriter) note(code int) {
	if w.at >= 0 {
		return
	}
	w.status = code
	w.log.mu.Lock()
	w.at = len(w.log.entries)
	w.log.entries = append(w.log.entries, fmt.Sprintf("%s %d", w.line, code))
	w.log.seen = append(w.log.seen, w.header)
	w.log.mu.Unlock()
}

func (w *logWriter) finish() {
	if w.status < 400 {
		return
	}
	var m struct {
		Error *struct {
			Code int `json:"code"`
		} `json:"error"`
	}
	if json.Unmarshal(w.body, &m) == nil && m.Error != nil {
		w.log.mu.Lock()
		w.log.entries[w.at] += fmt.Sprintf(" %d", m.Error.Code)
		w.log.mu.Unlock()
	}
}

func (w *logWriter) WriteHeader(code int) {
	w.note(code)
	w.ResponseWriter.WriteHeader(code)
}

func (w *logWriter) Write(b []byte) (int, error) {
	w.note(http.StatusOK)
	if w.status >= 400 && len(w.body) < 4096 {
		w.body = append(w.body, b...)
	}
	return w.ResponseWriter.Write(b)
}

func (w *logWriter) Flush() {
	w.note(http.StatusOK)
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// serveLogged serves h on loopback through a wireLog.
func serveLogged(t *testing.T, h http.Handler) (string, *wireLog) {
	t.Helper()
	l := &wireLog{}
	srv := httptest.NewServer(l.wrap(h))
	t.Cleanup(srv.Close)
	return srv.URL, l
}

// TestBareProbeModernServer: against go-sdk's 2026-07-28 server, which
// requires the standard headers, a connect that knows nothing of the
// server sends the server/discover probe without them, meets the header
// mismatch, and sends it again at once with them (and a fresh token); the
// connect negotiates 2026-07-28. A later connect to the same URL, or to
// another URL of the origin, sends the headers at once.
func TestBareProbeModernServer(t *testing.T) {
	ts := startServer(t)
	base, log := serveLogged(t, proxyTo(t, ts.URL))
	var tokens atomic.Int32
	hints := &Hints{}
	opts := Options{Hints: hints, AccessToken: func(context.Context) (string, error) {
		return fmt.Sprintf("tok-%d", tokens.Add(1)), nil
	}}
	connect := func(url string) []string {
		t.Helper()
		before := len(log.posts())
		c := newClient(t, url, opts)
		if err := c.Connect(ctxT(t), ConnectOptions{}); err != nil {
			t.Fatalf("connect to %s: %v (requests %q)", url, err, log.all())
		}
		if v := c.InitializeResult().ProtocolVersion; v != protocol20260728 {
			t.Errorf("%s: negotiated %s; want %s", url, v, protocol20260728)
		}
		if s := c.State(); s != StateConnected {
			t.Errorf("%s: state %s; want connected", url, s)
		}
		c.Close()
		return log.posts()[before:]
	}

	got := connect(base + "/modern")
	want := []string{
		"POST server/discover (bare) 400 -32020",
		"POST server/discover (Mcp-Method) 200",
		"POST subscriptions/listen (Mcp-Method) 200",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("first connect: requests (-want +got):\n%s", diff)
	}
	log.mu.Lock()
	if a, b := log.seen[0].Get("Authorization"), log.seen[1].Get("Authorization"); a == b || b == "" {
		t.Errorf("the probe sent again carried Authorization %q after %q; want a fresh token", b, a)
	}
	if v := log.seen[0].Get("Mcp-Protocol-Version"); v != protocol20260728 {
		t.Errorf("the bare probe's MCP-Protocol-Version = %q; want %s", v, protocol20260728)
	}
	log.mu.Unlock()

	want = []string{
		"POST server/discover (Mcp-Method) 200",
		"POST subscriptions/listen (Mcp-Method) 200",
	}
	for _, url := range []string{base + "/modern", base + "/modern?other=1"} {
		if diff := cmp.Diff(want, connect(url)); diff != "" {
			t.Errorf("connect to %s of a known 2026-07-28 origin: requests (-want +got):\n%s", url, diff)
		}
	}
}

// startTSv1 runs the TypeScript SDK v1 server (e2e/node/interop-v1.mjs,
// protocol 2025-11-25 and older) and returns its base URL.
func startTSv1(t *testing.T) string {
	t.Helper()
	dir := filepath.Join("..", "e2e", "node")
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "@modelcontextprotocol", "sdk")); err != nil {
		t.Fatalf("the pinned MCP servers are not installed in %s: run scripts/install-deps.sh (make deps)", dir)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, "node", "interop-v1.mjs")
	cmd.Dir = dir
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting node: %v", err)
	}
	t.Cleanup(func() { cancel(); _ = cmd.Wait() })
	port := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if p, ok := strings.CutPrefix(sc.Text(), "LISTENING "); ok {
				port <- p
				break
			}
		}
		_, _ = io.Copy(io.Discard, out)
	}()
	select {
	case p := <-port:
		return "http://127.0.0.1:" + p
	case <-time.After(30 * time.Second):
		t.Fatal("node interop-v1.mjs did not start within 30s")
	}
	return ""
}

// cors2025 stands for a browser in front of a deployed 2025-11-25 server
// whose CORS allows only that version's request headers: a request
// carrying another header fails its preflight and never reaches the
// server (here: the connection is dropped, as fetch rejects).
func cors2025(h http.Handler, refused *atomic.Int32) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		for k := range r.Header {
			if k == "Mcp-Method" || k == "Mcp-Name" || strings.HasPrefix(k, "Mcp-Param-") {
				refused.Add(1)
				panic(http.ErrAbortHandler)
			}
		}
		h.ServeHTTP(w, r)
	})
}

// TestBareProbeLegacyServer: a connect that knows nothing of a 2025-11-25
// server (the TypeScript SDK v1) behind CORS that allows only the 2025
// headers sends no request its preflight would fail: the bare probe is
// refused, and initialize follows.
func TestBareProbeLegacyServer(t *testing.T) {
	t.Parallel() // it waits on clocks and servers of its own
	var refused atomic.Int32
	base, log := serveLogged(t, cors2025(proxyTo(t, startTSv1(t)), &refused))
	c := newClient(t, base+"/mcp", Options{Hints: &Hints{}})
	if err := c.Connect(ctxT(t), ConnectOptions{}); err != nil {
		t.Fatalf("connect: %v (requests %q)", err, log.all())
	}
	if v := c.InitializeResult().ProtocolVersion; v != latestLegacyVersion {
		t.Errorf("negotiated %s; want %s", v, latestLegacyVersion)
	}
	if _, err := c.CallTool(ctxT(t), "add", json.RawMessage(`{"a":1,"b":2}`), nil); err != nil {
		t.Fatalf("call: %v", err)
	}
	want := []string{
		"POST server/discover (bare) 400 -32000",
		"POST initialize (bare) 200",
		"POST notifications/initialized (bare) 202",
		"POST tools/call (bare) 200",
	}
	if diff := cmp.Diff(want, log.posts()); diff != "" {
		t.Errorf("requests (-want +got):\n%s", diff)
	}
	if n := refused.Load(); n != 0 {
		t.Errorf("%d requests carried a header the 2025 CORS refuses (all: %q)", n, log.all())
	}
}

// TestBareProbeResentOnlyOnHeaderMismatch: the bare probe is sent again
// with its headers only when the server answers HTTP 400 with the
// JSON-RPC error -32020; any other refusal is the server's answer to the
// probe, and the connect goes on with initialize.
func TestBareProbeResentOnlyOnHeaderMismatch(t *testing.T) {
	for _, tc := range []struct {
		name        string
		status      int
		contentType string
		body        string
		want        []string
	}{{
		name: "400 header mismatch", status: http.StatusBadRequest, contentType: "application/json",
		body: `{"jsonrpc":"2.0","id":1,"error":{"code":-32020,"message":"missing required Mcp-Method header"}}`,
		want: []string{"POST server/discover (bare) 400 -32020", "POST server/discover (Mcp-Method) 200"},
	}, {
		name: "400 another JSON-RPC error", status: http.StatusBadRequest, contentType: "application/json",
		body: `{"jsonrpc":"2.0","id":null,"error":{"code":-32000,"message":"Bad Request: No valid session ID provided"}}`,
		want: []string{"POST server/discover (bare) 400 -32000", "POST initialize (bare) 200"},
	}, {
		name: "400 not JSON-RPC", status: http.StatusBadRequest, contentType: "text/plain",
		body: `-32020: missing required Mcp-Method header`,
		want: []string{"POST server/discover (bare) 400", "POST initialize (bare) 200"},
	}, {
		name: "400 -32020 without jsonrpc", status: http.StatusBadRequest, contentType: "application/json",
		body: `{"error":{"code":-32020,"message":"x"}}`,
		want: []string{"POST server/discover (bare) 400 -32020", "POST initialize (bare) 200"},
	}, {
		name: "403 header mismatch", status: http.StatusForbidden, contentType: "application/json",
		body: `{"jsonrpc":"2.0","id":1,"error":{"code":-32020,"message":"missing required Mcp-Method header"}}`,
		want: []string{"POST server/discover (bare) 403 -32020", "POST initialize (bare) 200"},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			ts := startServer(t)
			proxy := proxyTo(t, ts.URL)
			base, log := serveLogged(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.Header.Get("Mcp-Method") == "" && strings.Contains(readBody(r), `"server/discover"`) {
					w.Header().Set("Content-Type", tc.contentType)
					w.WriteHeader(tc.status)
					_, _ = io.WriteString(w, tc.body)
					return
				}
				proxy.ServeHTTP(w, r)
			}))
			c := newClient(t, base+"/mcp", Options{})
			if err := c.Connect(ctxT(t), ConnectOptions{}); err != nil {
				t.Fatalf("connect: %v (requests %q)", err, log.all())
			}
			got := log.posts()
			if len(got) > len(tc.want) {
				got = got[:len(tc.want)]
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("requests (-want +got):\n%s", diff)
			}
		})
	}
}

// readBody reads r's body and leaves it readable again.
func readBody(r *http.Request) string {
	b, _ := io.ReadAll(r.Body)
	r.Body = io.NopCloser(strings.NewReader(string(b)))
	return string(b)
}

// TestBareProbeDPoP: with a DPoP-bound sign-in, the probe sent again
// after the header mismatch carries a proof of its own (the server
// refuses a replayed one) and is accepted.
func TestBareProbeDPoP(t *testing.T) {
	log := &wireLog{}
	e := authtest.StartWith(t, authtest.Options{DPoP: true, Wrap: log.wrap})
	c := newClient(t, e.URL, Options{Auth: e.Handler(t, nil), Transport: TransportStreamable})
	if err := c.Authorize(ctxT(t), ConnectOptions{}); err != nil {
		t.Fatalf("Authorize: %v (requests %q)", err, log.all())
	}
	log.mu.Lock()
	defer log.mu.Unlock()
	resent := false
	for i := 1; i < len(log.entries); i++ {
		if log.entries[i-1] == "POST server/discover (bare) 400 -32020" && log.entries[i] == "POST server/discover (Mcp-Method) 200" {
			resent = true
			if a, b := log.seen[i-1].Get("DPoP"), log.seen[i].Get("DPoP"); a == "" || b == "" || a == b {
				t.Errorf("DPoP proofs of the bare probe and the one sent again: %q, %q; want two different proofs", a, b)
			}
		}
	}
	if !resent {
		t.Errorf("requests %q; want the bare probe's header mismatch, then the probe with its headers accepted", log.entries)
	}
}
