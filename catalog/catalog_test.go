package catalog

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpwasm/mcpwasm/demo"
	"github.com/mcpwasm/mcpwasm/mcpclient"
	"github.com/mcpwasm/mcpwasm/mcperr"
)

// A server nothing needs is never contacted; one a call needs connects on
// that call; Tools connects the rest.
func TestLazyConnection(t *testing.T) {
	a, b := startDemo(t), startDemo(t)
	cat, _ := newCatalog(t, Config{Servers: servers("alpha", a.URL, "beta", b.URL), Factory: clientFactory(t)})
	ctx := ctxT(t)
	if got := a.requests.Load() + b.requests.Load(); got != 0 {
		t.Fatalf("requests after New = %d; want 0", got)
	}
	res, err := cat.CallTool(ctx, "alpha_echo", json.RawMessage(`{"text":"hi"}`), CallOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := resultText(res); got != "hi" || res.IsError {
		t.Fatalf("alpha_echo = %q (isError %v); want hi", got, res.IsError)
	}
	if got := b.requests.Load(); got != 0 {
		t.Errorf("beta requests after a call to alpha = %d; want 0", got)
	}
	tools, err := cat.Tools(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if b.requests.Load() == 0 {
		t.Error("Tools did not connect beta")
	}
	var want []string
	for _, id := range []string{"alpha", "beta"} {
		for _, n := range []string{demo.ToolEcho, demo.ToolAdd, demo.ToolSlow, demo.ToolAskUser, demo.ToolSummarize, demo.ToolAddTool, demo.ToolRemoveTool} {
			want = append(want, id+"_"+n)
		}
	}
	got := names(tools)
	slices.Sort(got)
	slices.Sort(want)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("tool names (-want +got):\n%s", diff)
	}
	st, _ := cat.Status("beta")
	if st.State != string(mcpclient.StateConnected) || st.Tools != 7 || st.Breaker != BreakerClosed {
		t.Errorf("status of beta = %+v; want connected, 7 tools, breaker closed", st)
	}
	if err := cat.Close(); err != nil {
		t.Fatal(err)
	}
	_, err = cat.Tools(ctx)
	wantCode(t, err, mcperr.Closed)
	_, err = cat.CallTool(ctx, "alpha_echo", nil, CallOptions{})
	wantCode(t, err, mcperr.Closed)
}

// gatedServer's Connect waits at a gate, counting how many wait at once.
type gatedServer struct {
	fakeServer
	gate    chan struct{}
	active  *atomic.Int32
	maxSeen *atomic.Int32
}

func (g *gatedServer) Connect(ctx context.Context) error {
	n := g.active.Add(1)
	for {
		m := g.maxSeen.Load()
		if n <= m || g.maxSeen.CompareAndSwap(m, n) {
			break
		}
	}
	select {
	case <-g.gate:
	case <-ctx.Done():
	}
	g.active.Add(-1)
	return g.fakeServer.Connect(ctx)
}

// Tools connects servers in parallel, at most four at a time, and
// concurrent connects of one server (from Tools and calls) share one
// attempt.
func TestToolsConnectsInParallelBounded(t *testing.T) {
	gate := make(chan struct{})
	var active, maxSeen atomic.Int32
	srvs := map[string]*gatedServer{}
	cfgs := map[string]ServerConfig{}
	for i := range 8 {
		id := fmt.Sprintf("s%d", i)
		srvs[id] = &gatedServer{fakeServer: fakeServer{tools: []*mcp.Tool{tool("t", true)}}, gate: gate, active: &active, maxSeen: &maxSeen}
		cfgs[id] = ServerConfig{URL: "https://" + id + ".example.com/mcp"}
	}
	factory := func(id string, _ ServerConfig, events func(mcpclient.Event)) (Server, error) {
		s := srvs[id]
		s.events = events
		return s, nil
	}
	cat, _ := newCatalog(t, Config{Servers: cfgs, Factory: factory})
	ctx := ctxT(t)
	var wg sync.WaitGroup
	results := make([][]Tool, 3)
	for i := range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i], _ = cat.Tools(ctx)
		}()
	}
	wg.Add(1)
	var call ToolResult
	go func() {
		defer wg.Done()
		call, _ = cat.ModelCall(ctx, "s0_t", "{}", CallOptions{})
	}()
	waitFor(t, "four connects at once", func() bool { return active.Load() == 4 })
	close(gate)
	wg.Wait()
	if got := maxSeen.Load(); got != 4 {
		t.Errorf("most connects at once = %d; want 4", got)
	}
	for id, s := range srvs {
		if n := s.connects.Load(); n != 1 {
			t.Errorf("%s: %d connects; want 1 (joined)", id, n)
		}
	}
	for i, r := range results {
		if len(r) != 8 {
			t.Errorf("Tools #%d = %v; want 8 tools", i, names(r))
		}
	}
	if call.Text != "ran t" {
		t.Errorf("call joined to the connect = %q", call.Text)
	}
}

// With no tool to offer (the one server needs a sign-in), Tools is an
// empty list, which JSON shows as [] rather than null.
func TestToolsEmptyIsAList(t *testing.T) {
	f := &fakeServer{connectErr: authRequiredErr()}
	cat, _ := newCatalog(t, Config{Servers: servers("secure", "https://s.example.com/mcp"), Factory: fakes(map[string]*fakeServer{"secure": f})})
	tools, err := cat.Tools(ctxT(t))
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := json.Marshal(tools); string(b) != "[]" {
		t.Errorf("Tools as JSON = %s; want []", b)
	}
}
