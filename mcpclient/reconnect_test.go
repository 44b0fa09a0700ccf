package mcpclient

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpwasm/mcpwasm/demo"
	"github.com/mcpwasm/mcpwasm/devkit/faultrig"
	"github.com/mcpwasm/mcpwasm/mcperr"
)

// changeLog records a client's statechange events.
type changeLog struct {
	mu      sync.Mutex
	changes []StateChange
}

func (l *changeLog) on(ev Event) {
	if sc, ok := ev.Data.(StateChange); ok && ev.Type == "statechange" {
		l.mu.Lock()
		l.changes = append(l.changes, sc)
		l.mu.Unlock()
	}
}

func (l *changeLog) last() StateChange {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.changes) == 0 {
		return StateChange{}
	}
	return l.changes[len(l.changes)-1]
}

// faultyDemo is the demo MCP server behind a fault proxy; initialize
// counts its sessions.
func faultyDemo(t *testing.T) (url string, fp *faultrig.Proxy, initialize *atomic.Int32) {
	t.Helper()
	initialize = &atomic.Int32{}
	srv := httptest.NewServer(demo.Handler(demo.Options{OnRequest: func(m string) {
		if m == "initialize" {
			initialize.Add(1)
		}
	}}))
	t.Cleanup(srv.Close)
	fp = faultrig.Start(t, srv.Listener.Addr().String())
	return fp.Front(srv.URL + demo.StreamablePath), fp, initialize
}

// connected is a client of url, connected, closed when the test ends.
func connected(t *testing.T, url string) *Client {
	t.Helper()
	c, err := New(url, Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if err := c.Connect(t.Context(), ConnectOptions{}); err != nil {
		t.Fatal(err)
	}
	return c
}

func echo(t *testing.T, c *Client, ctx context.Context, text string) (string, error) {
	t.Helper()
	args, _ := json.Marshal(map[string]string{"text": text})
	r, err := c.CallTool(ctx, "echo", args, nil)
	if err != nil {
		return "", err
	}
	if len(r.Content) == 0 {
		return "", nil
	}
	tc, _ := r.Content[0].(*mcp.TextContent)
	if tc == nil {
		return "", nil
	}
	return tc.Text, nil
}

// The network goes (the proxy cuts the GET stream and refuses new
// connections): the client says reconnecting with a network reason, a
// call meanwhile fails network at its deadline instead of hanging, and
// once the network is back (Online) the client is connected again on a
// fresh session and calls work.
func TestReconnectAfterNetworkLoss(t *testing.T) {
	t.Parallel() // it waits on clocks and servers of its own
	url, fp, initialize := faultyDemo(t)
	var log changeLog
	c, err := New(url, Options{OnEvent: log.on})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	ctx := t.Context()
	if err := c.Connect(ctx, ConnectOptions{}); err != nil {
		t.Fatal(err)
	}
	if got, err := echo(t, c, ctx, "before"); err != nil || got != "before" {
		t.Fatalf("echo = %q, %v", got, err)
	}
	fp.Down()
	waitState(t, c, StateReconnecting)
	if sc := log.last(); sc.State != StateReconnecting || sc.Error == nil || sc.Error.Code != mcperr.Network {
		t.Errorf("statechange = %+v; want reconnecting with a network error", sc)
	}
	cctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	_, err = echo(t, c, cctx, "during")
	cancel()
	if code := mcperr.CodeOf(err, ""); code != mcperr.Network {
		t.Errorf("call during the outage: %v (code %q); want network", err, code)
	}
	fp.Up()
	c.Online()
	waitState(t, c, StateConnected)
	if got, err := echo(t, c, ctx, "after"); err != nil || got != "after" {
		t.Fatalf("echo after the outage = %q, %v", got, err)
	}
	if n := initialize.Load(); n != 2 {
		t.Errorf("initialize requests = %d; want 2 (a fresh session after the outage)", n)
	}
}

// Offline moves a connected client to reconnecting at once; a call made
// then waits for the reconnect Online starts, and succeeds.
func TestOfflineThenOnline(t *testing.T) {
	url, _, _ := faultyDemo(t)
	c := connected(t, url)
	ctx := t.Context()
	c.Offline()
	if s := c.State(); s != StateReconnecting {
		t.Fatalf("state after Offline = %s; want reconnecting", s)
	}
	done := make(chan error, 1)
	go func() {
		cctx, cancel := context.WithTimeout(ctx, 20*time.Second)
		defer cancel()
		_, err := echo(t, c, cctx, "waited")
		done <- err
	}()
	c.Online()
	if err := <-done; err != nil {
		t.Errorf("call made while reconnecting: %v; want it run after the reconnect", err)
	}
	if s := c.State(); s != StateConnected {
		t.Errorf("state = %s; want connected", s)
	}
}

// Disconnect ends the reconnecting: no probe reaches the server after it.
func TestDisconnectStopsReconnecting(t *testing.T) {
	t.Parallel() // it waits on clocks and servers of its own
	url, fp, initialize := faultyDemo(t)
	c := connected(t, url)
	fp.Down()
	c.Offline()
	c.Disconnect()
	if s := c.State(); s != StateIdle {
		t.Fatalf("state after Disconnect = %s; want idle", s)
	}
	fp.Up()
	c.Online()
	time.Sleep(2 * ReconnectBase) // a probe the loop would have made by now
	if n := initialize.Load(); n != 1 {
		t.Errorf("initialize requests = %d; want 1 (no reconnect after Disconnect)", n)
	}
	if s := c.State(); s != StateIdle {
		t.Errorf("state = %s; want idle", s)
	}
}

// A server that forgets the session (a restart: 404 on its id) gets a
// fresh one without the caller doing anything: the call that met the 404
// runs on it.
func TestCallAfterServerRestart(t *testing.T) {
	srv, restart := restartable(t, demo.Handler(demo.Options{}))
	c, err := New(srv.URL+demo.StreamablePath, Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	ctx := t.Context()
	if err := c.Connect(ctx, ConnectOptions{}); err != nil {
		t.Fatal(err)
	}
	restart(demo.Handler(demo.Options{}))
	if got, err := echo(t, c, ctx, "after restart"); err != nil || got != "after restart" {
		t.Fatalf("echo after the restart = %q, %v; want it run on a fresh session", got, err)
	}
}

// A probe answered 401 ends the reconnecting in needs_auth, once: no
// loop of probes against a server that wants a sign-in.
func TestReconnectMeetsSignIn(t *testing.T) {
	t.Parallel() // it waits on clocks and servers of its own
	var deny atomic.Bool
	var denied atomic.Int32
	h := demo.Handler(demo.Options{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if deny.Load() {
			denied.Add(1)
			w.Header().Set("WWW-Authenticate", `Bearer error="invalid_token"`)
			http.Error(w, "sign in again", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	c, err := New(srv.URL+demo.StreamablePath, Options{AccessToken: func(context.Context) (string, error) { return "a-token", nil }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if err := c.Connect(t.Context(), ConnectOptions{}); err != nil {
		t.Fatal(err)
	}
	deny.Store(true)
	c.Offline()
	c.Online()
	waitState(t, c, StateNeedsAuth)
	n := denied.Load()
	time.Sleep(3 * ReconnectBase) // probes a loop would have made by now
	if got := denied.Load(); got != n {
		t.Errorf("401 answers = %d, then %d: the client went on probing in needs_auth", n, got)
	}
	_, err = echo(t, c, t.Context(), "x")
	wantCode(t, err, mcperr.AuthRequired)
}

// An answer cut in the middle of its event stream fails the call with
// network and the cut as its cause (not protocol: the fragment is not the
// server's word), and the next call works on a fresh session.
func TestAnswerCutInsideItsEventStream(t *testing.T) {
	url, fp, _ := faultyDemo(t)
	c := connected(t, url)
	ctx := t.Context()
	long := strings.Repeat("x", 6000)
	remove := fp.LimitData(2500) // past the answer's head, inside its data line
	_, err := echo(t, c, ctx, long)
	remove()
	var cut *mcperr.Cut
	if code := mcperr.CodeOf(err, ""); code != mcperr.Network || !errors.As(err, &cut) {
		t.Fatalf("echo cut inside its event stream: %v (code %q); want network, caused by the cut", err, code)
	}
	if msg, _ := mcperr.Present(err); !strings.Contains(msg, "ended in the middle of its answer") {
		t.Errorf("message = %q; want it to say the answer was cut", msg)
	}
	cctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	if got, err := echo(t, c, cctx, long); err != nil || got != long {
		t.Errorf("echo after the cut: %d characters, %v; want %d", len(got), err, len(long))
	}
}

// restartable serves h on loopback until restart replaces it: a server
// that restarted and knows none of the sessions before.
func restartable(t *testing.T, h http.Handler) (*httptest.Server, func(http.Handler)) {
	var mu sync.Mutex
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		hh := h
		mu.Unlock()
		hh.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv, func(next http.Handler) {
		mu.Lock()
		h = next
		mu.Unlock()
	}
}
