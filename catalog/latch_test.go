package catalog

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpwasm/mcpwasm/demo"
	"github.com/mcpwasm/mcpwasm/mcpclient"
	"github.com/mcpwasm/mcpwasm/mcperr"
)

func toolsChanged(ev *events) []ToolsChanged {
	var out []ToolsChanged
	for _, e := range ev.of(EventToolsChanged) {
		out = append(out, e.Data.(ToolsChanged))
	}
	return out
}

// A declined sign-in drops the server from the list (one toolschanged) and
// latches: neither Tools nor calls connect or sign in to it again until the
// host calls Authorize or Enable.
func TestDeclineLatch(t *testing.T) {
	gh := &fakeServer{tools: []*mcp.Tool{tool("search", true)}}
	other := &fakeServer{tools: []*mcp.Tool{tool("ping", true)}}
	cat, ev := newCatalog(t, Config{Servers: servers("github", "https://gh.example.com/mcp", "other", "https://o.example.com/mcp"),
		Factory: fakes(map[string]*fakeServer{"github": gh, "other": other})})
	ctx := ctxT(t)
	tools, err := cat.Tools(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"github_search", "other_ping"}, names(tools)); diff != "" {
		t.Fatalf("tools (-want +got):\n%s", diff)
	}
	waitFor(t, "toolschanged for both servers", func() bool {
		ids := map[string]bool{}
		for _, tc := range toolsChanged(ev) {
			for _, id := range tc.IDs {
				ids[id] = true
			}
		}
		return ids["github"] && ids["other"]
	})
	ev.reset()

	// The session ends; reconnecting meets a declined sign-in.
	gh.mu.Lock()
	gh.connectErr = declinedErr()
	gh.mu.Unlock()
	gh.set(mcpclient.StateFailed, mcperr.New(mcperr.Closed, "mcp: the server ended the session"))
	tools, err = cat.Tools(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"other_ping"}, names(tools)); diff != "" {
		t.Fatalf("tools after decline (-want +got):\n%s", diff)
	}
	connects := gh.connects.Load()
	declined := say(textDeclined, "github", "github_search")
	waitFor(t, "toolschanged for the decline", func() bool { return len(toolsChanged(ev)) > 0 })
	if diff := cmp.Diff([]ToolsChanged{{IDs: []string{"github"}}}, toolsChanged(ev)); diff != "" {
		t.Errorf("toolschanged events (-want +got):\n%s", diff)
	}
	ev.reset()
	// Each call says the user can still sign in, and asks the host to
	// offer it, once per call, without waiting or signing in by itself.
	for i := range 3 {
		if _, err := cat.Tools(ctx); err != nil {
			t.Fatal(err)
		}
		var asked []AuthRequired
		start := time.Now()
		r, err := cat.ModelCall(ctx, "github_search", "{}", CallOptions{AuthWait: patience, OnAuthRequired: func(ar AuthRequired) { asked = append(asked, ar) }})
		if err != nil {
			t.Fatal(err)
		}
		if r.Text != declined || !r.IsError {
			t.Errorf("call = %q; want %q", r.Text, declined)
		}
		if waited := time.Since(start); waited >= patience/2 {
			t.Errorf("the call to a declined server took %v; want no wait", waited)
		}
		if diff := cmp.Diff([]AuthRequired{{ID: "github", Declined: true}}, asked); diff != "" {
			t.Errorf("OnAuthRequired of call %d (-want +got):\n%s", i, diff)
		}
		waitFor(t, "the catalog's authrequired", func() bool { return ev.count(EventAuthRequired) == i+1 })
	}
	for _, e := range ev.of(EventAuthRequired) {
		if e.Data != (AuthRequired{ID: "github", Declined: true}) {
			t.Errorf("authrequired event %+v; want github, declined", e.Data)
		}
	}
	if got := gh.connects.Load(); got != connects {
		t.Errorf("Connect calls while latched = %d; want 0", got-connects)
	}
	if gh.authorizes.Load() != 0 {
		t.Error("Authorize was called while latched")
	}
	if st, _ := cat.Status("github"); st.State != string(mcpclient.StateDeclined) || st.Tools != 0 {
		t.Errorf("status = %+v; want declined, 0 tools", st)
	}
	if tc := toolsChanged(ev); len(tc) != 0 {
		t.Errorf("toolschanged events while latched: %+v; want none", tc)
	}

	// The host's Authorize (a click) signs in: the tools return, once.
	ev.reset()
	if err := cat.Authorize(ctx, "github"); err != nil {
		t.Fatal(err)
	}
	tools, _ = cat.Tools(ctx)
	if diff := cmp.Diff([]string{"github_search", "other_ping"}, names(tools)); diff != "" {
		t.Errorf("tools after Authorize (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]ToolsChanged{{IDs: []string{"github"}}}, toolsChanged(ev)); diff != "" {
		t.Errorf("toolschanged after Authorize (-want +got):\n%s", diff)
	}

	// Declined again; Enable (a user action) clears the latch too.
	gh.mu.Lock()
	gh.connectErr = declinedErr()
	gh.mu.Unlock()
	gh.set(mcpclient.StateDeclined, declinedErr())
	connects = gh.connects.Load()
	cat.Tools(ctx)
	if gh.connects.Load() != connects {
		t.Fatal("Tools connected a declined server")
	}
	if err := cat.Enable("github"); err != nil {
		t.Fatal(err)
	}
	cat.Tools(ctx)
	if gh.connects.Load() != connects+1 {
		t.Errorf("connects after Enable = %d; want 1", gh.connects.Load()-connects)
	}
}

// Disable drops a server's session and tools and keeps the entry; Enable
// brings it back; Remove forgets it.
func TestDisableEnableRemove(t *testing.T) {
	d := startDemo(t)
	cat, ev := newCatalog(t, Config{Servers: servers("demo", d.URL), Factory: clientFactory(t)})
	ctx := ctxT(t)
	if tools, _ := cat.Tools(ctx); len(tools) != 7 {
		t.Fatalf("tools = %d; want 7", len(tools))
	}
	srv, _ := cat.Server("demo")
	client, ok := ClientOf(srv)
	if !ok {
		t.Fatal("ClientOf: not a FromClient server")
	}
	if err := cat.Disable("demo"); err != nil {
		t.Fatal(err)
	}
	if st, _ := cat.Status("demo"); st.State != StateDisabled || st.Tools != 0 {
		t.Errorf("status after Disable = %+v", st)
	}
	if client.State() == mcpclient.StateConnected {
		t.Error("Disable left the session connected")
	}
	if tools, _ := cat.Tools(ctx); len(tools) != 0 {
		t.Errorf("tools after Disable = %v", names(tools))
	}
	r, _ := cat.ModelCall(ctx, "demo_echo", `{"text":"x"}`, CallOptions{})
	if r.Text != say(textDisabled, "demo", "demo_echo") {
		t.Errorf("call while disabled = %q", r.Text)
	}
	if err := cat.Enable("demo"); err != nil {
		t.Fatal(err)
	}
	if srv2, _ := cat.Server("demo"); srv2 != srv {
		t.Error("Enable replaced a FromClient server; the same client should stay")
	}
	r, _ = cat.ModelCall(ctx, "demo_echo", `{"text":"back"}`, CallOptions{})
	if r.Text != "back" {
		t.Errorf("call after Enable = %q", r.Text)
	}
	if err := cat.Remove("demo"); err != nil {
		t.Fatal(err)
	}
	if _, ok := cat.Status("demo"); ok {
		t.Error("Status of a removed server")
	}
	r, _ = cat.ModelCall(ctx, "demo_echo", `{}`, CallOptions{})
	if r.Text != say(textUnknownTool, "demo_echo") {
		t.Errorf("call after Remove = %q", r.Text)
	}
	if client.State() != mcpclient.StateClosed {
		t.Errorf("client state after Remove = %s; want closed", client.State())
	}
	waitFor(t, "toolschanged on remove", func() bool {
		tc := toolsChanged(ev)
		return len(tc) > 0 && cmp.Equal(tc[len(tc)-1], ToolsChanged{IDs: []string{"demo"}})
	})
	if err := cat.Add("demo", ServerConfig{URL: d.URL}); err != nil {
		t.Fatal(err)
	}
	r, _ = cat.ModelCall(ctx, "demo_echo", `{"text":"again"}`, CallOptions{})
	if r.Text != "again" {
		t.Errorf("call after Add = %q", r.Text)
	}
}

// Approval is asked before every call of a tool not annotated readOnlyHint,
// with what the call would do; a refusal is the table's text.
func TestApproval(t *testing.T) {
	d := startDemo(t)
	var asked []ApprovalRequest
	cat, _ := newCatalog(t, Config{Servers: servers("demo", d.URL), Factory: clientFactory(t), ServerTools: true,
		Approve: func(_ context.Context, r ApprovalRequest) (Answer, error) {
			asked = append(asked, r)
			if r.Tool == "add_tool" {
				return AllowOnce, nil
			}
			return Refuse, nil
		}})
	ctx := ctxT(t)
	var reported []ApprovalDecision
	opts := CallOptions{OnApproval: func(_ ApprovalRequest, d ApprovalDecision) { reported = append(reported, d) }}
	if r, _ := cat.ModelCall(ctx, "demo_echo", `{"text":"ro"}`, opts); r.Text != "ro" {
		t.Errorf("echo (read-only) = %q", r.Text)
	}
	if r, _ := cat.ModelCall(ctx, "demo_ask_user", `{"message":"hi"}`, opts); r.Text != say(textRefused, "demo", "demo_ask_user") {
		t.Errorf("ask_user refused = %q", r.Text)
	}
	if r, _ := cat.ModelCall(ctx, "demo_add_tool", `{"name":"greet"}`, opts); r.Text != `Added tool "greet".` {
		t.Errorf("add_tool approved = %q", r.Text)
	}
	if r, _ := cat.ModelCall(ctx, MetaListServers, ``, opts); r.IsError {
		t.Errorf("list_servers = %q", r.Text)
	}
	want := []ApprovalRequest{
		{ID: "demo", Tool: "ask_user", Name: "demo_ask_user", Args: json.RawMessage(`{"message":"hi"}`)},
		{ID: "demo", Tool: "add_tool", Name: "demo_add_tool", Args: json.RawMessage(`{"name":"greet"}`), Annotations: &mcp.ToolAnnotations{IdempotentHint: true}},
	}
	if diff := cmp.Diff(want, asked); diff != "" {
		t.Errorf("approval requests (-want +got):\n%s", diff)
	}
	host := func(ok bool) ApprovalDecision { return ApprovalDecision{Approved: ok, DecidedBy: DecidedByHost} }
	readOnly := ApprovalDecision{Approved: true, DecidedBy: DecidedByPolicy, Policy: PolicyReadOnly}
	if diff := cmp.Diff([]ApprovalDecision{readOnly, host(false), host(true), readOnly}, reported); diff != "" {
		t.Errorf("OnApproval (-want +got):\n%s", diff)
	}
}

// A server disabled while a call is connecting it does not run that call:
// the connect ends with the Disable, the call says the server is off, and
// the client is left idle.
func TestDisableDuringConnectStopsTheCall(t *testing.T) {
	held := make(chan struct{})
	release := make(chan struct{})
	var once sync.Once
	free := func() { once.Do(func() { close(release) }) }
	t.Cleanup(free)
	var inits, calls atomic.Int32
	h := demo.Handler(demo.Options{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		var msg struct{ Method string }
		_ = json.Unmarshal(body, &msg)
		switch msg.Method {
		case "initialize":
			if inits.Add(1) == 1 {
				close(held)
				<-release // answered only after the Disable
			}
		case "tools/call":
			calls.Add(1)
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	cat, _ := newCatalog(t, Config{Servers: servers("demo", srv.URL+demo.StreamablePath), Factory: clientFactory(t)})
	ctx := ctxT(t)
	res := make(chan ToolResult, 1)
	go func() {
		r, _ := cat.ModelCall(ctx, "demo_echo", `{"text":"x"}`, CallOptions{})
		res <- r
	}()
	<-held
	if err := cat.Disable("demo"); err != nil {
		t.Fatal(err)
	}
	free()
	r := <-res
	if r.Text != say(textDisabled, "demo", "demo_echo") {
		t.Errorf("call disabled while it connected = %q; want the disabled text", r.Text)
	}
	if n := calls.Load(); n != 0 {
		t.Errorf("tools/call reached the disabled server %d times", n)
	}
	s, _ := cat.Server("demo")
	if client, ok := ClientOf(s); ok && client.State() != mcpclient.StateIdle {
		t.Errorf("client state after the disable = %s; want idle", client.State())
	}
}

// An Enable that remakes a closed server while the catalog closes leaves
// nothing behind: the server it made is closed, and Enable says the
// catalog is closed.
func TestEnableRacingCloseClosesTheNewServer(t *testing.T) {
	first := &fakeServer{tools: []*mcp.Tool{tool("ping", true)}}
	second := &fakeServer{tools: []*mcp.Tool{tool("ping", true)}}
	making := make(chan struct{})
	release := make(chan struct{})
	made := 0
	factory := func(id string, _ ServerConfig, events func(mcpclient.Event)) (Server, error) {
		made++
		f := first
		if made > 1 {
			f = second
			close(making)
			<-release // the catalog closes while the Factory runs
		}
		f.mu.Lock()
		f.events = events
		f.mu.Unlock()
		return f, nil
	}
	cat, _ := newCatalog(t, Config{Servers: servers("s", "https://s.example.com/mcp"), Factory: factory})
	if err := cat.Disable("s"); err != nil {
		t.Fatal(err)
	}
	enabled := make(chan error, 1)
	go func() { enabled <- cat.Enable("s") }()
	<-making
	if err := cat.Close(); err != nil {
		t.Fatal(err)
	}
	close(release)
	wantCode(t, <-enabled, mcperr.Closed)
	if st := second.State(); st != mcpclient.StateClosed {
		t.Errorf("server made by an Enable racing Close: state %s; want closed", st)
	}
}
