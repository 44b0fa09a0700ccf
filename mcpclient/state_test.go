package mcpclient

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpwasm/mcpwasm/devkit/authtest"
	"github.com/mcpwasm/mcpwasm/mcperr"
	"github.com/mcpwasm/mcpwasm/oauth"
)

// TestMain fails the package when any test fed the state machine an input
// it cannot take in the state it came in: a bug in this package.
func TestMain(m *testing.M) {
	var mu sync.Mutex
	var bad []string
	illegal = func(from State, in input) {
		mu.Lock()
		defer mu.Unlock()
		bad = append(bad, fmt.Sprintf("%q in state %s", in, from))
	}
	code := m.Run()
	if len(bad) > 0 {
		fmt.Fprintf(os.Stderr, "illegal state transitions: %v\n", bad)
		code = 1
	}
	os.Exit(code)
}

func TestStateMachine(t *testing.T) {
	authErr := mcperr.New(mcperr.AuthRequired, "sign in")
	declined := mcperr.New(mcperr.Declined, "no")
	for _, tc := range []struct {
		from State
		in   input
		f    facts
		want step
	}{
		{StateIdle, inConnect, facts{}, step{to: StateConnecting, ok: true}},
		{StateConnecting, inConnected, facts{session: true}, step{to: StateConnected, ok: true}},
		{StateConnecting, inConnectFailed, facts{err: authErr}, step{to: StateNeedsAuth, ok: true}},
		{StateConnecting, inConnectFailed, facts{err: declined}, step{to: StateDeclined, ok: true}},
		{StateConnecting, inAuthStarted, facts{connecting: true}, step{to: StateAuthorizing, ok: true}},
		{StateAuthorizing, inAuthGranted, facts{connecting: true}, step{to: StateConnecting, ok: true}},
		{StateConnected, inAuthStarted, facts{session: true}, step{to: StateAuthorizing, ok: true}},
		{StateAuthorizing, inAuthGranted, facts{session: true}, step{to: StateConnected, ok: true}},
		{StateNeedsAuth, inAuthGranted, facts{wanted: true}, step{to: StateConnecting, ok: true, reconnect: true}},
		{StateDeclined, inAuthGranted, facts{wanted: true}, step{to: StateConnecting, ok: true, reconnect: true}},
		{StateIdle, inAuthGranted, facts{}, step{to: StateIdle, ok: true}},
		{StateConnected, inAuthNeeded, facts{session: true}, step{to: StateNeedsAuth, ok: true, drop: true}},
		{StateConnecting, inAuthNeeded, facts{connecting: true}, step{to: StateConnecting, ok: true}},
		{StateConnected, inAuthDeclined, facts{session: true}, step{to: StateConnected, ok: true}},
		{StateAuthorizing, inAuthDeclined, facts{session: true}, step{to: StateConnected, ok: true}},
		{StateAuthorizing, inAuthFailed, facts{session: true}, step{to: StateConnected, ok: true}},
		{StateAuthorizing, inAuthFailed, facts{connecting: true}, step{to: StateAuthorizing, ok: true}},
		{StateNeedsAuth, inAuthDeclined, facts{}, step{to: StateDeclined, ok: true}},
		{StateConnected, inSessionLost, facts{}, step{to: StateFailed, ok: true, drop: true}},
		{StateConnected, inSessionLost, facts{wanted: true}, step{to: StateReconnecting, ok: true, drop: true}},
		{StateReconnecting, inConnect, facts{wanted: true}, step{to: StateReconnecting, ok: true}},
		{StateReconnecting, inConnectFailed, facts{wanted: true, err: mcperr.New(mcperr.Network, "down")}, step{to: StateReconnecting, ok: true}},
		{StateReconnecting, inConnectFailed, facts{wanted: true, err: authErr}, step{to: StateNeedsAuth, ok: true}},
		{StateReconnecting, inConnected, facts{wanted: true, session: true}, step{to: StateConnected, ok: true}},
		{StateReconnecting, inAuthGranted, facts{wanted: true}, step{to: StateReconnecting, ok: true}},
		{StateReconnecting, inDisconnect, facts{wanted: true}, step{to: StateIdle, ok: true, drop: true}},
		{StateConnected, inSignedOut, facts{session: true}, step{to: StateNeedsAuth, ok: true, drop: true}},
		{StateConnected, inDisconnect, facts{session: true}, step{to: StateIdle, ok: true, drop: true}},
		{StateClosed, inAuthGranted, facts{}, step{to: StateClosed, ok: true, drop: true}},
		// What cannot happen: a connect that succeeds without one
		// running, a second connect while one runs.
		{StateIdle, inConnected, facts{}, step{to: StateIdle}},
		{StateConnecting, inConnect, facts{connecting: true}, step{to: StateConnecting}},
		{StateConnecting, inConnect, facts{}, step{to: StateConnecting, ok: true}},
		{StateConnected, inConnectFailed, facts{session: true}, step{to: StateConnected}},
	} {
		if got := next(tc.from, tc.in, tc.f); got != tc.want {
			t.Errorf("%s + %q (%+v) = %+v; want %+v", tc.from, tc.in, tc.f, got, tc.want)
		}
	}
}

// stateLog records a client's states.
type stateLog struct {
	mu     sync.Mutex
	states []State
	info   *SessionInfo
}

func (l *stateLog) event(e Event) {
	sc, ok := e.Data.(StateChange)
	if !ok {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.states = append(l.states, sc.State)
	if sc.Session != nil {
		l.info = sc.Session
	}
}

// waitFor waits until the log holds an event of state st.
func (l *stateLog) waitFor(t *testing.T, st State) {
	t.Helper()
	ctx := ctxT(t)
	for {
		l.mu.Lock()
		seen := slices.Contains(l.states, st)
		l.mu.Unlock()
		if seen {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("no %s event", st)
		case <-time.After(5 * time.Millisecond):
		}
	}
}

func (l *stateLog) take() []State {
	l.mu.Lock()
	defer l.mu.Unlock()
	s := l.states
	l.states = nil
	return s
}

// TestSignInDrivesTheState, against the protected demo server: a connect
// without a grant needs a sign-in; Authorize signs in and connects; a
// grant another client of the page gets reconnects a client that waits for
// one, by itself; a sign-out elsewhere ends the session.
func TestSignInDrivesTheState(t *testing.T) {
	env := authtest.Start(t)
	store := oauth.NewMemoryStore()
	var la, lb stateLog
	a := newClient(t, env.URL, Options{Auth: env.Handler(t, store), OnEvent: la.event})
	b := newClient(t, env.URL, Options{Auth: env.Handler(t, store), OnEvent: lb.event})
	ctx := ctxT(t)

	wantCode(t, a.Connect(ctx, ConnectOptions{}), mcperr.AuthRequired)
	wantCode(t, b.Connect(ctx, ConnectOptions{}), mcperr.AuthRequired)
	if got := la.take(); !slices.Equal(got, []State{StateConnecting, StateNeedsAuth}) {
		t.Errorf("a's states on connect: %v", got)
	}
	lb.take()

	if err := a.Authorize(ctx, ConnectOptions{}); err != nil {
		t.Fatal(err)
	}
	if got := la.take(); !slices.Equal(got, []State{StateAuthorizing, StateConnecting, StateConnected}) {
		t.Errorf("a's states on authorize: %v", got)
	}
	if la.info == nil || la.info.ServerInfo == nil || la.info.ProtocolVersion == "" {
		t.Errorf("connected event without the session: %+v", la.info)
	}
	// b waited for a sign-in: a's grant reaches it, and it connects. The
	// state changes before its event is delivered: wait for the event.
	waitState(t, b, StateConnected)
	lb.waitFor(t, StateConnected)
	if got := lb.take(); !slices.Equal(got, []State{StateConnecting, StateConnected}) {
		t.Errorf("b's states after a's sign-in: %v", got)
	}
	if _, err := b.ListTools(ctx); err != nil {
		t.Errorf("b's session: %v", err)
	}
	if n := env.Opened.Load(); n != 1 {
		t.Errorf("sign-in pages shown = %d; want 1", n)
	}

	if err := a.Logout(ctx); err != nil {
		t.Fatal(err)
	}
	if a.State() != StateNeedsAuth || b.State() != StateNeedsAuth {
		t.Errorf("after the sign-out: a %s, b %s; want needs_auth", a.State(), b.State())
	}
	_, err := b.ListTools(ctx)
	wantCode(t, err, mcperr.AuthRequired) // not connected: a sign-in is needed
}

func waitState(t *testing.T, c *Client, want State) {
	t.Helper()
	ctx := ctxT(t)
	for c.State() != want {
		select {
		case <-ctx.Done():
			t.Fatalf("state %s; want %s", c.State(), want)
		default:
		}
		runtimeGosched()
	}
}

func runtimeGosched() { time.Sleep(5 * time.Millisecond) }

// TestConnectsStartingTogetherShareOneSession: a connect that arrives
// while another is starting (here: while the other's statechange to
// connecting is delivered) joins it. Two attempts would each make a
// session, the second to finish replacing the first without closing it,
// and the first's GET stream would outlive Close (TestNeedsAuthProtectedServer
// in ./catalog hung so: Authorize's connect raced the reconnect its grant
// started).
func TestConnectsStartingTogetherShareOneSession(t *testing.T) {
	s := mcp.NewServer(&mcp.Implementation{Name: "test", Version: "1"}, nil)
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil)
	var inits, streams atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		var msg struct{ Method string }
		if json.Unmarshal(body, &msg) == nil && msg.Method == "initialize" {
			inits.Add(1)
		}
		if r.Method == http.MethodGet {
			streams.Add(1)
			defer streams.Add(-1)
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)

	joinedCh := make(chan struct{})
	joined = func() { close(joinedCh) }
	t.Cleanup(func() { joined = nil })
	ctx := ctxT(t)
	second := make(chan error, 1)
	var once sync.Once
	var c *Client
	c = newClient(t, srv.URL, Options{OnEvent: func(e Event) {
		if sc, ok := e.Data.(StateChange); !ok || sc.State != StateConnecting {
			return
		}
		once.Do(func() {
			go func() { second <- c.Connect(ctx, ConnectOptions{}) }()
			// The first connect goes on once the second joined it, or
			// (without the fix) made a session of its own.
			select {
			case <-joinedCh:
			case err := <-second:
				second <- err
			}
		})
	}})
	if err := c.Connect(ctx, ConnectOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := <-second; err != nil {
		t.Fatal(err)
	}
	if n := inits.Load(); n != 1 {
		t.Errorf("sessions initialized = %d; want 1", n)
	}
	c.Close()
	deadline := time.After(10 * time.Second)
	for streams.Load() != 0 {
		select {
		case <-deadline:
			n := streams.Load()
			srv.CloseClientConnections() // or srv.Close would wait for them
			t.Fatalf("%d GET streams still open after Close", n)
		case <-time.After(5 * time.Millisecond):
		}
	}
}

// TestJoinedConnectSaysTheSameSentence: a connect that joined a running
// one that failed ends with the same error a person reads (its server
// named), not the bare error chain beneath it.
func TestJoinedConnectSaysTheSameSentence(t *testing.T) {
	joinedCh := make(chan struct{})
	joined = func() { close(joinedCh) }
	t.Cleanup(func() { joined = nil })
	got := make(chan struct{}, 8)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got <- struct{}{}
		<-joinedCh // the first connect fails only once the second joined it
		http.Error(w, "refused", http.StatusForbidden)
	}))
	t.Cleanup(srv.Close)
	ctx := ctxT(t)
	c := newClient(t, srv.URL, Options{})
	first, second := make(chan error, 1), make(chan error, 1)
	go func() { first <- c.Connect(ctx, ConnectOptions{}) }()
	<-got
	go func() { second <- c.Connect(ctx, ConnectOptions{}) }()
	e1, e2 := <-first, <-second
	if e1 == nil || e2 == nil {
		t.Fatalf("connects = %v, %v; want both to fail", e1, e2)
	}
	m1, _ := mcperr.Present(e1)
	m2, _ := mcperr.Present(e2)
	if m1 != m2 || !strings.Contains(m1, Host(srv.URL)) {
		t.Errorf("the joined connect says %q; the first says %q; want the same sentence, naming %s", m2, m1, Host(srv.URL))
	}
}

// TestJoinedConnectReturnsAfterItsEvent: a connect that joined a running
// one returns once the host has been told of the outcome, as the connect
// it joined does: an Authorize whose connect a grant's reconnect started
// first resolves with the connected event already delivered.
func TestJoinedConnectReturnsAfterItsEvent(t *testing.T) {
	joinedCh := make(chan struct{})
	joined = func() { close(joinedCh) }
	t.Cleanup(func() { joined = nil })
	s := mcp.NewServer(&mcp.Implementation{Name: "test", Version: "1"}, nil)
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil)
	got := make(chan struct{}, 1)
	var held sync.Once
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		held.Do(func() {
			got <- struct{}{}
			<-joinedCh // the first connect goes on once the second joined it
		})
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	var log stateLog
	c := newClient(t, srv.URL, Options{OnEvent: func(e Event) {
		if sc, ok := e.Data.(StateChange); ok && sc.State == StateConnected {
			time.Sleep(100 * time.Millisecond) // a host slow to take the event
		}
		log.event(e)
	}})
	ctx := ctxT(t)
	first, second := make(chan error, 1), make(chan error, 1)
	go func() { first <- c.Connect(ctx, ConnectOptions{}) }()
	<-got
	go func() { second <- c.Connect(ctx, ConnectOptions{}) }()
	if err := <-second; err != nil {
		t.Fatal(err)
	}
	if got := log.take(); !slices.Contains(got, StateConnected) {
		t.Errorf("states seen when the joined connect returned: %v; want connected among them", got)
	}
	if err := <-first; err != nil {
		t.Fatal(err)
	}
}

// A Disconnect (a catalog's disable) while the server is still answering
// initialize ends that connect: it fails with aborted, the client stays
// idle with no session, and a connect after it makes a fresh session.
func TestDisconnectEndsARunningConnect(t *testing.T) {
	s := mcp.NewServer(&mcp.Implementation{Name: "test", Version: "1"}, nil)
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil)
	var inits, streams atomic.Int32
	held := make(chan struct{}, 1)
	release := make(chan struct{})
	var releaseOnce sync.Once
	free := func() { releaseOnce.Do(func() { close(release) }) }
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		var msg struct{ Method string }
		if json.Unmarshal(body, &msg) == nil && msg.Method == "initialize" {
			if inits.Add(1) == 1 {
				held <- struct{}{}
				<-release // the first initialize answers only after the Disconnect
			}
		}
		if r.Method == http.MethodGet {
			streams.Add(1)
			defer streams.Add(-1)
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(free)

	ctx := ctxT(t)
	c := newClient(t, srv.URL, Options{})
	first := make(chan error, 1)
	go func() { first <- c.Connect(ctx, ConnectOptions{}) }()
	<-held
	c.Disconnect()
	// A connect asked for after the Disconnect starts while the ended one
	// may still be finishing.
	again := make(chan error, 1)
	go func() { again <- c.Connect(ctx, ConnectOptions{}) }()
	free()

	err := <-first
	if code := mcperr.CodeOf(err, ""); code != mcperr.Aborted {
		t.Fatalf("connect during a disconnect = %v (code %q); want code %q", err, code, mcperr.Aborted)
	}
	if err := <-again; err != nil {
		t.Fatalf("connect after the disconnect: %v", err)
	}
	if st := c.State(); st != StateConnected {
		t.Errorf("state after the second connect = %s; want connected", st)
	}
	c.Close()
	deadline := time.After(10 * time.Second)
	for streams.Load() != 0 {
		select {
		case <-deadline:
			n := streams.Load()
			srv.CloseClientConnections()
			t.Fatalf("%d GET streams still open after Close: the disconnected connect's session outlived it", n)
		case <-time.After(5 * time.Millisecond):
		}
	}
}

// TestCallWithoutSessionSaysTheState: a call without a session rejects
// with the cause of the client's state, never protocol "not connected"
// while a sign-in runs or after one failed.
func TestCallWithoutSessionSaysTheState(t *testing.T) {
	c := newClient(t, "http://127.0.0.1:9/mcp", Options{})
	popup := mcperr.New(mcperr.PopupBlocked, "oauth: popup blocked")
	for _, tc := range []struct {
		state State
		err   error
		want  mcperr.Code
	}{
		{StateAuthorizing, nil, mcperr.AuthRequired},
		{StateNeedsAuth, nil, mcperr.AuthRequired},
		{StateNeedsAuth, popup, mcperr.PopupBlocked},
		{StateDeclined, nil, mcperr.Declined},
		{StateFailed, &mcperr.UnhandledRedirect{URL: "http://127.0.0.1:9/cb"}, mcperr.RedirectUnhandled},
		{StateIdle, nil, mcperr.Protocol},
	} {
		c.mu.Lock()
		c.state, c.stateErr = tc.state, tc.err
		c.mu.Unlock()
		_, err := c.ListTools(ctxT(t))
		if got := mcperr.CodeOf(err, ""); got != tc.want {
			t.Errorf("a call in %s (cause %v): %v; want %s", tc.state, tc.err, err, tc.want)
		}
		if msg, _ := mcperr.Present(err); tc.want != mcperr.Protocol && !strings.Contains(msg, "127.0.0.1:9") {
			t.Errorf("a call in %s: message %q does not name the server", tc.state, msg)
		}
	}
}
