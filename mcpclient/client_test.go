package mcpclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/iotest"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"golang.org/x/oauth2"

	"github.com/mcpwasm/mcpwasm/mcperr"
	"github.com/mcpwasm/mcpwasm/oauth"
)

// testServer is a real go-sdk MCP server over Streamable HTTP (at /mcp;
// stateless, protocol 2026-07-28, at /modern) and legacy SSE (at /sse) on
// a loopback httptest server.
type testServer struct {
	URL       string
	cancelled atomic.Int32
	mu        sync.Mutex
	headers   []http.Header
}

func startServer(t *testing.T) *testServer {
	t.Helper()
	ts := &testServer{}
	s := mcp.NewServer(&mcp.Implementation{Name: "test", Version: "1"}, &mcp.ServerOptions{Instructions: "be nice"})
	type addArgs struct {
		A float64 `json:"a"`
		B float64 `json:"b"`
	}
	type sum struct {
		Sum float64 `json:"sum"`
	}
	mcp.AddTool(s, &mcp.Tool{Name: "add"}, func(ctx context.Context, r *mcp.CallToolRequest, a addArgs) (*mcp.CallToolResult, sum, error) {
		return nil, sum{a.A + a.B}, nil
	})
	type slowArgs struct {
		Steps int `json:"steps"`
		Delay int `json:"delayMs"`
	}
	mcp.AddTool(s, &mcp.Tool{Name: "slow"}, func(ctx context.Context, r *mcp.CallToolRequest, a slowArgs) (*mcp.CallToolResult, any, error) {
		for i := 1; i <= a.Steps; i++ {
			select {
			case <-ctx.Done():
				ts.cancelled.Add(1)
				return nil, nil, ctx.Err()
			case <-time.After(time.Duration(a.Delay) * time.Millisecond):
			}
			if tok := r.Params.GetProgressToken(); tok != nil {
				_ = r.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: tok, Progress: float64(i), Total: float64(a.Steps)})
			}
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "done"}}}, nil, nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: "ask"}, func(ctx context.Context, r *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
		res, err := r.Session.Elicit(ctx, &mcp.ElicitParams{Message: "name?", RequestedSchema: map[string]any{"type": "object", "properties": map[string]any{"name": map[string]any{"type": "string"}}}})
		if err != nil {
			return nil, nil, err
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: res.Action + ":" + fmt.Sprint(res.Content["name"])}}}, nil, nil
	})
	streamable := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil)
	sse := mcp.NewSSEHandler(func(*http.Request) *mcp.Server { return s }, nil)
	mux := http.NewServeMux()
	mux.Handle("/mcp", streamable)
	mux.Handle("/sse", sse)
	// Stateless: protocol 2026-07-28 (go-sdk serves it only without sessions).
	mux.Handle("/modern", mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, &mcp.StreamableHTTPOptions{Stateless: true}))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ts.mu.Lock()
		ts.headers = append(ts.headers, r.Header.Clone())
		ts.mu.Unlock()
		mux.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	ts.URL = srv.URL
	return ts
}

func newClient(t *testing.T, url string, opts Options) *Client {
	t.Helper()
	c, err := New(url, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func wantCode(t *testing.T, err error, want mcperr.Code) {
	t.Helper()
	if got := mcperr.CodeOf(err, "none"); got != want {
		t.Fatalf("error code = %q (%v); want %q", got, err, want)
	}
}

func TestConnectCallAndStates(t *testing.T) {
	ts := startServer(t)
	var mu sync.Mutex
	var states []State
	c := newClient(t, ts.URL+"/mcp", Options{OnEvent: func(e Event) {
		if e.Type == "statechange" {
			mu.Lock()
			states = append(states, e.Data.(StateChange).State)
			mu.Unlock()
		}
	}})
	ctx := ctxT(t)
	if err := c.Connect(ctx, ConnectOptions{}); err != nil {
		t.Fatal(err)
	}
	if ir := c.InitializeResult(); ir == nil || ir.ServerInfo.Name != "test" || ir.Instructions != "be nice" {
		t.Fatalf("InitializeResult = %+v", ir)
	}
	tools, err := c.ListTools(ctx)
	if err != nil || len(tools) != 3 {
		t.Fatalf("ListTools = %d tools, %v; want 3", len(tools), err)
	}
	res, err := c.CallTool(ctx, "add", json.RawMessage(`{"a":2,"b":3}`), nil)
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := json.Marshal(res.StructuredContent); string(got) != `{"sum":5}` {
		t.Errorf("structuredContent = %s; want {\"sum\":5}", got)
	}
	c.Close()
	_, err = c.ListTools(ctx)
	wantCode(t, err, mcperr.Closed)
	mu.Lock()
	defer mu.Unlock()
	want := []State{StateConnecting, StateConnected, StateClosed}
	if fmt.Sprint(states) != fmt.Sprint(want) {
		t.Errorf("states = %v; want %v", states, want)
	}
}

// TestProgressBeforeResult checks that every progress notification the
// server sent before its result reaches the caller before CallTool returns.
func TestProgressBeforeResult(t *testing.T) {
	ts := startServer(t)
	c := newClient(t, ts.URL+"/mcp", Options{})
	ctx := ctxT(t)
	if err := c.Connect(ctx, ConnectOptions{}); err != nil {
		t.Fatal(err)
	}
	for i := range 20 {
		var got []float64
		_, err := c.CallTool(ctx, "slow", json.RawMessage(`{"steps":5,"delayMs":0}`), func(p *mcp.ProgressNotificationParams) {
			got = append(got, p.Progress)
		})
		if err != nil {
			t.Fatal(err)
		}
		if fmt.Sprint(got) != "[1 2 3 4 5]" {
			t.Fatalf("run %d: progress before return = %v; want [1 2 3 4 5]", i, got)
		}
	}
}

func TestCancelReachesServer(t *testing.T) {
	ts := startServer(t)
	c := newClient(t, ts.URL+"/mcp", Options{})
	if err := c.Connect(ctxT(t), ConnectOptions{}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(ctxT(t))
	first := make(chan struct{})
	var once sync.Once
	go func() { <-first; cancel() }()
	_, err := c.CallTool(ctx, "slow", json.RawMessage(`{"steps":100,"delayMs":50}`), func(*mcp.ProgressNotificationParams) { once.Do(func() { close(first) }) })
	wantCode(t, err, mcperr.Aborted)
	deadline := time.Now().Add(5 * time.Second)
	for ts.cancelled.Load() == 0 {
		if time.Now().After(deadline) {
			t.Fatal("server never observed the cancellation")
		}
		time.Sleep(10 * time.Millisecond)
	}
	// The client stays usable.
	if _, err := c.CallTool(ctxT(t), "add", json.RawMessage(`{"a":1,"b":1}`), nil); err != nil {
		t.Fatalf("call after cancel: %v", err)
	}
}

func TestTransports(t *testing.T) {
	ts := startServer(t)
	for _, tc := range []struct {
		path      string
		transport Transport
		wantErr   mcperr.Code
	}{
		{"/mcp", TransportAuto, ""},
		{"/mcp", TransportStreamable, ""},
		{"/sse", TransportAuto, ""}, // falls back to legacy SSE
		{"/sse", TransportSSE, ""},
		{"/sse", TransportStreamable, mcperr.HTTP},
		{"/nowhere", TransportAuto, mcperr.HTTP},
	} {
		t.Run(tc.path+"/"+string(tc.transport), func(t *testing.T) {
			hints := &Hints{}
			c := newClient(t, ts.URL+tc.path, Options{Transport: tc.transport, Hints: hints})
			err := c.Connect(ctxT(t), ConnectOptions{})
			if tc.wantErr != "" {
				wantCode(t, err, tc.wantErr)
				if mcperr.StatusOf(err) == 0 {
					t.Errorf("error %v has no HTTP status", err)
				}
				if got := c.State(); got != StateFailed {
					t.Errorf("state = %q; want failed", got)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			res, err := c.CallTool(ctxT(t), "add", json.RawMessage(`{"a":1,"b":2}`), nil)
			if err != nil {
				t.Fatal(err)
			}
			if got, _ := json.Marshal(res.StructuredContent); string(got) != `{"sum":3}` {
				t.Errorf("structuredContent = %s", got)
			}
			if h := hints.get(ts.URL + tc.path); h.transport == "" || h.version == "" {
				t.Errorf("hints not recorded: %+v", h)
			}
		})
	}
}

func TestErrors(t *testing.T) {
	ts := startServer(t)
	ctx := ctxT(t)

	t.Run("network", func(t *testing.T) {
		dead := httptest.NewServer(http.NotFoundHandler())
		dead.Close()
		c := newClient(t, dead.URL+"/mcp", Options{})
		wantCode(t, c.Connect(ctx, ConnectOptions{}), mcperr.Network)
		// A call after the failed connect says why there is no session.
		_, err := c.ListTools(ctx)
		wantCode(t, err, mcperr.Network)
		if msg, _ := mcperr.Present(err); !strings.Contains(msg, "could not be reached") {
			t.Errorf("the call's message = %q; want the connect's cause", msg)
		}
	})
	t.Run("bad URL", func(t *testing.T) {
		_, err := New("ftp://x", Options{})
		wantCode(t, err, mcperr.InvalidArgument)
		_, err = New("http://x/mcp", Options{Transport: "carrier-pigeon"})
		wantCode(t, err, mcperr.InvalidArgument)
		_, err = New("http://x/mcp", Options{Headers: map[string]string{"Bad Header": "v"}})
		wantCode(t, err, mcperr.InvalidArgument)
	})
	c := newClient(t, ts.URL+"/mcp", Options{})
	t.Run("not connected", func(t *testing.T) {
		_, err := c.ListTools(ctx)
		wantCode(t, err, mcperr.Protocol)
	})
	if err := c.Connect(ctx, ConnectOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		tool string
		args string
	}{
		{"array arguments", "add", `[1,2]`},
		{"string arguments", "add", `"x"`},
		{"no name", "", `{}`},
		{"unknown tool", "nope", `{}`},
		{"wrong types", "add", `{"a":"x"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := c.CallTool(ctx, tc.tool, json.RawMessage(tc.args), nil)
			if err == nil && res.IsError {
				return // tool-level error: the server's choice, reported as a result
			}
			wantCode(t, err, mcperr.InvalidArgument)
		})
	}
	t.Run("timeout", func(t *testing.T) {
		tctx, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
		defer cancel()
		_, err := c.CallTool(tctx, "slow", json.RawMessage(`{"steps":10,"delayMs":100}`), nil)
		wantCode(t, err, mcperr.Timeout)
	})
}

func TestHeadersAndAccessToken(t *testing.T) {
	ts := startServer(t)
	calls := atomic.Int32{}
	c := newClient(t, ts.URL+"/mcp", Options{
		Headers: map[string]string{"X-Api-Key": "k1"},
		AccessToken: func(context.Context) (string, error) {
			calls.Add(1)
			return "tok-123", nil
		},
	})
	if err := c.Connect(ctxT(t), ConnectOptions{}); err != nil {
		t.Fatal(err)
	}
	ts.mu.Lock()
	defer ts.mu.Unlock()
	if len(ts.headers) == 0 {
		t.Fatal("server saw no request")
	}
	for _, h := range ts.headers {
		if h.Get("X-Api-Key") != "k1" || h.Get("Authorization") != "Bearer tok-123" {
			t.Fatalf("request headers = %v; want X-Api-Key and bearer", h)
		}
	}

	failing := newClient(t, ts.URL+"/mcp", Options{AccessToken: func(context.Context) (string, error) {
		return "", errors.New("host has no token")
	}})
	err := failing.Connect(ctxT(t), ConnectOptions{})
	wantCode(t, err, mcperr.AuthRequired)
	if !strings.Contains(err.Error(), "host has no token") {
		t.Errorf("error %q does not say why", err)
	}
}

func TestElicitationHandler(t *testing.T) {
	ts := startServer(t)
	c := newClient(t, ts.URL+"/mcp", Options{})
	err := c.Connect(ctxT(t), ConnectOptions{Elicitation: func(_ context.Context, p *mcp.ElicitParams) (*mcp.ElicitResult, error) {
		return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "Ada"}}, nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	res, err := c.CallTool(ctxT(t), "ask", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := res.Content[0].(*mcp.TextContent).Text; got != "accept:Ada" {
		t.Errorf("ask = %q; want accept:Ada", got)
	}
}

// TestSSETapPassesEventsThrough: the tap hands go-sdk exactly the bytes the
// server sent (a large result included), however small the reads, and
// delivers only the progress notifications of registered tokens.
func TestSSETapPassesEventsThrough(t *testing.T) {
	var got []float64
	taps := &progressTaps{}
	defer taps.add("t", func(p *mcp.ProgressNotificationParams) { got = append(got, p.Progress) })()
	body := "id: 1\nretry: 10\n\n" +
		"data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\n" +
		"data: \"params\":{\"progressToken\":\"t\",\"progress\":7}}\r\n\r\n" +
		"data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progressToken\":\"other\",\"progress\":8}}\n\n" +
		"event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{\"big\":\"" + strings.Repeat("x", 200<<10) + "\"}}\n\n"
	// The network's reads: 32 KiB at a time, or a byte at a time, which
	// splits every line and "\r\n" between reads.
	for _, rc := range []io.ReadCloser{nopCloser{strings.NewReader(body)}, io.NopCloser(iotest.OneByteReader(strings.NewReader(body)))} {
		got = nil
		tap := &sseTap{rc: rc, taps: taps, call: json.RawMessage("3")}
		out, err := io.ReadAll(iotest.OneByteReader(tap))
		if err != nil {
			t.Fatal(err)
		}
		if string(out) != body {
			t.Errorf("the tap changed the stream (%d bytes in, %d out)", len(body), len(out))
		}
		if fmt.Sprint(got) != "[7]" {
			t.Errorf("delivered %v; want [7]", got)
		}
	}
}

// BenchmarkSSETapLargeEvent: one event of 6 MB (a large view's resource),
// read from the network in 32 KiB pieces, through the tap.
func BenchmarkSSETapLargeEvent(b *testing.B) {
	body := "event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{\"text\":\"" + strings.Repeat("x<y>&z ", 6<<20/7) + "\"}}\n\n"
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		tap := &sseTap{rc: nopCloser{strings.NewReader(body)}, taps: &progressTaps{}, call: json.RawMessage("3")}
		if _, err := io.Copy(io.Discard, tap); err != nil {
			b.Fatal(err)
		}
	}
}

// TestSSETapStopsAtAViolation: an event that breaks the protocol never
// reaches go-sdk; the stream ends with the violation and the operation's
// record keeps it.
func TestSSETapStopsAtAViolation(t *testing.T) {
	for _, tc := range []struct{ name, event, want string }{
		{"wrong id", `{"jsonrpc":"2.0","id":9,"result":{}}`, "response for request 9"},
		{"batch", `[{"jsonrpc":"2.0","id":3,"result":{}}]`, "JSON array"},
		{"no jsonrpc", `{"id":3,"result":{}}`, `"jsonrpc": "2.0"`},
		{"not JSON", `hello`, "not a JSON object"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			first := "data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{}}\n\n"
			body := first + "data: " + tc.event + "\n\n"
			_, rec := withRecord(context.Background())
			tap := &sseTap{rc: nopCloser{strings.NewReader(body)}, taps: &progressTaps{}, call: json.RawMessage("3"), rec: rec}
			out, err := io.ReadAll(tap)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v; want one saying %q", err, tc.want)
			}
			wantCode(t, err, mcperr.Protocol)
			if string(out) != first {
				t.Errorf("go-sdk got %q; want only the first event", out)
			}
			if rec.violated() == nil {
				t.Error("the operation's record has no violation")
			}
		})
	}
}

type nopCloser struct{ *strings.Reader }

func (nopCloser) Close() error { return nil }

func TestInsufficientScopeIsReported(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("WWW-Authenticate", `Bearer error="insufficient_scope", scope="admin"`)
		http.Error(w, "forbidden", http.StatusForbidden)
	}))
	t.Cleanup(srv.Close)
	c := newClient(t, srv.URL+"/mcp", Options{Transport: TransportStreamable})
	err := c.Connect(ctxT(t), ConnectOptions{})
	wantCode(t, err, mcperr.InsufficientScope)
	if got := mcperr.StatusOf(err); got != http.StatusForbidden {
		t.Errorf("status = %d; want 403", got)
	}
}

// TestStaleHintIsForgotten: a server that moved from the legacy SSE
// transport to Streamable HTTP at the same URL is still reached, and the
// hint is rewritten, so a page's remembered hint never locks it out.
func TestStaleHintIsForgotten(t *testing.T) {
	s := mcp.NewServer(&mcp.Implementation{Name: "moving", Version: "1"}, nil)
	sse := mcp.NewSSEHandler(func(*http.Request) *mcp.Server { return s }, nil)
	streamable := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil)
	var moved atomic.Bool
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if moved.Load() {
			streamable.ServeHTTP(w, r)
		} else {
			sse.ServeHTTP(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	var saved []byte
	hints := &Hints{Persist: func(b []byte) { saved = b }}

	c1 := newClient(t, srv.URL, Options{Hints: hints})
	if err := c1.Connect(ctxT(t), ConnectOptions{}); err != nil {
		t.Fatal(err)
	}
	c1.Close()
	if h := hints.get(srv.URL); h.transport != TransportSSE {
		t.Fatalf("hint after the first connect = %+v; want sse", h)
	}

	moved.Store(true)
	c2 := newClient(t, srv.URL, Options{Hints: hints})
	if err := c2.Connect(ctxT(t), ConnectOptions{}); err != nil {
		t.Fatalf("connect after the server moved: %v", err)
	}
	if h := hints.get(srv.URL); h.transport != TransportStreamable {
		t.Errorf("hint after the move = %+v; want streamable", h)
	}

	// A reload restores the hints from what Persist saved.
	restored := &Hints{}
	restored.Load(saved)
	if h := restored.get(srv.URL); h.transport != TransportStreamable || h.version == "" {
		t.Errorf("restored hint = %+v from %s", h, saved)
	}
}

// refusingAuth is a sign-in that always needs a user action.
type refusingAuth struct{ calls atomic.Int32 }

func (a *refusingAuth) TokenSource(context.Context) (oauth2.TokenSource, error) { return nil, nil }
func (a *refusingAuth) Authorize(_ context.Context, _ *http.Request, resp *http.Response) error {
	a.calls.Add(1)
	resp.Body.Close()
	return oauth.ErrAuthorizationRequired
}
func (a *refusingAuth) Login(context.Context) error                { return nil }
func (a *refusingAuth) Logout(context.Context) error               { return nil }
func (a *refusingAuth) Subscribe(func(oauth.Event)) (unsub func()) { return func() {} }
func (a *refusingAuth) Close()                                     {}

// TestDiscover401ThenFallbackFailureNeedsSignIn: a 2026-07-28 server that
// answers server/discover 401 but lets initialize through unauthenticated,
// where it fails with 400 (no MCP-Protocol-Version header: conformance
// auth/authorization-server-migration). The connect fails auth_required,
// the client needs a sign-in, not an HTTP error.
func TestDiscover401ThenFallbackFailureNeedsSignIn(t *testing.T) {
	var methods []string
	var mu sync.Mutex
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var msg struct {
			Method string `json:"method"`
		}
		_ = json.NewDecoder(r.Body).Decode(&msg)
		mu.Lock()
		methods = append(methods, msg.Method)
		mu.Unlock()
		if msg.Method != "initialize" && !strings.HasPrefix(msg.Method, "notifications/") && r.Header.Get("Authorization") == "" {
			w.Header().Set("WWW-Authenticate", `Bearer scope="mcp:basic", resource_metadata="http://`+r.Host+`/.well-known/oauth-protected-resource/mcp"`)
			http.Error(w, `{"error":"invalid_token"}`, http.StatusUnauthorized)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		fmt.Fprint(w, `{"jsonrpc":"2.0","id":null,"error":{"code":-32020,"message":"Missing MCP-Protocol-Version header"}}`)
	}))
	t.Cleanup(srv.Close)
	a := &refusingAuth{}
	c := newClient(t, srv.URL+"/mcp", Options{Transport: TransportStreamable, Auth: a})
	err := c.Connect(ctxT(t), ConnectOptions{})
	mu.Lock()
	t.Logf("methods: %q", methods)
	mu.Unlock()
	if a.calls.Load() == 0 {
		t.Fatal("the 401 never reached the sign-in")
	}
	wantCode(t, err, mcperr.AuthRequired)
	if got := c.State(); got != StateNeedsAuth {
		t.Errorf("state = %q; want %q", got, StateNeedsAuth)
	}
}

// heldStream is a transport that holds every GET for an event stream
// until its request ends, as Firefox holds a fetch whose response has sent
// its headers but no body yet.
type heldStream struct{ held atomic.Int32 }

func (h *heldStream) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Method == http.MethodGet {
		h.held.Add(1)
		<-req.Context().Done()
		return nil, req.Context().Err()
	}
	return http.DefaultTransport.RoundTrip(req)
}

// TestHeldStandaloneStreamDoesNotHoldTheConnect: a session's stream for
// server messages whose response does not come (a server with nothing to
// say yet, in a browser that settles a fetch with the first bytes of the
// body) holds neither the handshake nor the calls after it.
func TestHeldStandaloneStreamDoesNotHoldTheConnect(t *testing.T) {
	t.Parallel() // it waits on clocks and servers of its own
	ts := startServer(t)
	held := &heldStream{}
	c := newClient(t, ts.URL+"/mcp", Options{Transport: TransportStreamable, HTTPClient: &http.Client{Transport: held}})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	// The held GET runs under the session's context, not the connect's:
	// without a watchdog a failure would be the test binary's timeout.
	done := make(chan error, 1)
	go func() { done <- c.Connect(ctx, ConnectOptions{}) }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Connect with the stream held: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Connect did not return in 10 s: the held stream holds the handshake")
	}
	r, err := c.CallTool(ctx, "add", json.RawMessage(`{"a":1,"b":2}`), nil)
	if err != nil {
		t.Fatalf("CallTool with the stream held: %v", err)
	}
	if got := fmt.Sprint(r.StructuredContent); !strings.Contains(got, "3") {
		t.Errorf("add(1, 2) = %s; want sum 3", got)
	}
	if held.held.Load() == 0 {
		t.Error("the client opened no stream for server messages: the test tests nothing")
	}
}
