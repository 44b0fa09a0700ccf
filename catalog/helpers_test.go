package catalog

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpwasm/mcpwasm/demo"
	"github.com/mcpwasm/mcpwasm/mcpclient"
	"github.com/mcpwasm/mcpwasm/mcperr"
)

// patience bounds every wait for something that should happen.
const patience = 10 * time.Second

func ctxT(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*patience)
	t.Cleanup(cancel)
	return ctx
}

// fakeClock is a Clock the test moves.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func newFakeClock() *fakeClock {
	return &fakeClock{t: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// events records catalog events.
type events struct {
	mu  sync.Mutex
	all []Event
	ch  chan struct{}
}

func newEvents() *events { return &events{ch: make(chan struct{}, 1)} }

func (l *events) add(e Event) {
	l.mu.Lock()
	l.all = append(l.all, e)
	l.mu.Unlock()
	select {
	case l.ch <- struct{}{}:
	default:
	}
}

func (l *events) of(typ string) []Event {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []Event
	for _, e := range l.all {
		if e.Type == typ {
			out = append(out, e)
		}
	}
	return out
}

func (l *events) count(typ string) int { return len(l.of(typ)) }

func (l *events) reset() {
	l.mu.Lock()
	l.all = nil
	l.mu.Unlock()
}

// waitFor polls cond until it holds (events arrive from other goroutines).
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(patience)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// demoServer is the demo MCP server on a loopback httptest server; it
// counts requests, can answer 503 to everything (down), and can be
// restarted (a new server: every session is gone).
type demoServer struct {
	URL      string // the Streamable HTTP endpoint
	requests atomic.Int64
	open     atomic.Int64 // requests being answered now (a GET stream stays)
	down     atomic.Bool
	mu       sync.Mutex
	h        http.Handler
	methods  []string
}

func startDemo(t *testing.T) *demoServer {
	t.Helper()
	d := &demoServer{}
	d.restart()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		d.requests.Add(1)
		d.open.Add(1)
		defer d.open.Add(-1)
		if d.down.Load() {
			http.Error(w, "down for maintenance", http.StatusServiceUnavailable)
			return
		}
		d.mu.Lock()
		h := d.h
		d.mu.Unlock()
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	d.URL = srv.URL + demo.StreamablePath
	return d
}

// restart replaces the server: sessions of the old one are unknown to it.
func (d *demoServer) restart() {
	h := demo.Handler(demo.Options{OnRequest: func(m string) {
		d.mu.Lock()
		d.methods = append(d.methods, m)
		d.mu.Unlock()
	}})
	d.mu.Lock()
	d.h = h
	d.methods = nil // what the new server saw
	d.mu.Unlock()
}

func (d *demoServer) count(method string) int {
	d.mu.Lock()
	defer d.mu.Unlock()
	n := 0
	for _, m := range d.methods {
		if m == method {
			n++
		}
	}
	return n
}

// clientFactory makes mcpclient clients (with the transport and headers of
// the entry's client options), adapted by FromClient.
func clientFactory(t *testing.T) Factory {
	return func(id string, sc ServerConfig, events func(mcpclient.Event)) (Server, error) {
		var o struct {
			Transport string            `json:"transport"`
			Headers   map[string]string `json:"headers"`
		}
		if len(sc.Client) > 0 {
			if err := json.Unmarshal(sc.Client, &o); err != nil {
				return nil, err
			}
		}
		c, err := mcpclient.New(sc.URL, mcpclient.Options{
			Transport:  mcpclient.Transport(o.Transport),
			Headers:    o.Headers,
			HTTPClient: &http.Client{Transport: http.DefaultTransport},
			OnEvent:    events,
		})
		if err != nil {
			return nil, err
		}
		return FromClient(c, mcpclient.ConnectOptions{}), nil
	}
}

// newCatalog makes a catalog closed at cleanup, recording its events.
func newCatalog(t *testing.T, cfg Config) (*Catalog, *events) {
	t.Helper()
	ev := newEvents()
	if cfg.OnEvent == nil {
		cfg.OnEvent = ev.add
	}
	c, err := New(cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	return c, ev
}

func servers(kv ...string) map[string]ServerConfig {
	m := map[string]ServerConfig{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = ServerConfig{URL: kv[i+1]}
	}
	return m
}

func names(tools []Tool) []string {
	out := make([]string, len(tools))
	for i, t := range tools {
		out[i] = t.Name
	}
	return out
}

func resultText(r *mcp.CallToolResult) string {
	var parts []string
	for _, c := range r.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			parts = append(parts, tc.Text)
		}
	}
	return strings.Join(parts, "\n")
}

func wantCode(t *testing.T, err error, want mcperr.Code) {
	t.Helper()
	if got := mcperr.CodeOf(err, "none"); got != want {
		t.Fatalf("error code = %q (%v); want %q", got, err, want)
	}
}

// fakeServer is a Server whose behaviour the test scripts; it counts the
// calls the catalog makes.
type fakeServer struct {
	mu         sync.Mutex
	state      mcpclient.State
	tools      []*mcp.Tool
	connectErr error // Connect fails with it
	authErr    error // Authorize fails with it
	call       func(ctx context.Context, name string, args json.RawMessage) (*mcp.CallToolResult, error)
	events     func(mcpclient.Event)
	connects   atomic.Int32
	authorizes atomic.Int32
	calls      atomic.Int32
	lists      atomic.Int32
}

var _ Server = (*fakeServer)(nil)

func (f *fakeServer) State() mcpclient.State {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.state == "" {
		return mcpclient.StateIdle
	}
	return f.state
}

func (f *fakeServer) set(s mcpclient.State, err error) {
	f.mu.Lock()
	f.state = s
	ev := f.events
	f.mu.Unlock()
	if ev != nil {
		sc := mcpclient.StateChange{State: s}
		if err != nil {
			sc.Error = mcpclient.AsError(err)
		}
		ev(mcpclient.Event{Type: "statechange", Data: sc})
	}
}

func (f *fakeServer) Connect(ctx context.Context) error {
	f.connects.Add(1)
	f.mu.Lock()
	err := f.connectErr
	f.mu.Unlock()
	if err != nil {
		switch mcperr.CodeOf(err, "") {
		case mcperr.AuthRequired:
			f.set(mcpclient.StateNeedsAuth, err)
		case mcperr.Declined:
			f.set(mcpclient.StateDeclined, err)
		default:
			f.set(mcpclient.StateFailed, err)
		}
		return err
	}
	f.set(mcpclient.StateConnected, nil)
	return nil
}

func (f *fakeServer) Authorize(ctx context.Context) error {
	f.authorizes.Add(1)
	f.mu.Lock()
	err := f.authErr
	if err == nil {
		f.connectErr = nil
	}
	f.mu.Unlock()
	if err != nil {
		f.set(mcpclient.StateDeclined, err)
		return err
	}
	f.set(mcpclient.StateConnected, nil)
	return nil
}

func (f *fakeServer) ListTools(ctx context.Context) ([]*mcp.Tool, error) {
	f.lists.Add(1)
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.tools), nil
}

func (f *fakeServer) CallTool(ctx context.Context, name string, args json.RawMessage, _ func(*mcp.ProgressNotificationParams)) (*mcp.CallToolResult, error) {
	f.calls.Add(1)
	if f.call != nil {
		return f.call(ctx, name, args)
	}
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ran " + name}}}, nil
}

func (f *fakeServer) Close() error {
	f.set(mcpclient.StateClosed, nil)
	return nil
}

// fakes is a Factory over fake servers by id.
func fakes(m map[string]*fakeServer) Factory {
	return func(id string, _ ServerConfig, events func(mcpclient.Event)) (Server, error) {
		f := m[id]
		f.mu.Lock()
		f.events = events
		f.mu.Unlock()
		return f, nil
	}
}

func tool(name string, readOnly bool) *mcp.Tool {
	t := &mcp.Tool{Name: name, Description: "The " + name + " tool.", InputSchema: map[string]any{"type": "object", "properties": map[string]any{}}}
	if readOnly {
		t.Annotations = &mcp.ToolAnnotations{ReadOnlyHint: true}
	}
	return t
}

func declinedErr() error {
	return mcperr.New(mcperr.Declined, "oauth: the user declined the sign-in")
}

func authRequiredErr() error {
	return mcperr.New(mcperr.AuthRequired, "oauth: authorization required")
}

func mustUnmarshal(t *testing.T, b []byte, v any) {
	t.Helper()
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%v in %s", err, b)
	}
}
