package catalog

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpwasm/mcpwasm/mcperr"
)

// annotated is a tool with the given hints (nil destructive: unsaid).
func annotated(name string, readOnly bool, destructive *bool) *mcp.Tool {
	t := tool(name, false)
	t.Annotations = &mcp.ToolAnnotations{ReadOnlyHint: readOnly, DestructiveHint: destructive}
	return t
}

// The policy's precedence, call by call: what runs, what the host is
// asked, what the model reads and how the decision is reported.
func TestApprovalPolicy(t *testing.T) {
	no := false
	tools := []*mcp.Tool{
		annotated("read", true, nil),                              // read-only
		annotated("write", false, &no),                            // writes, says not destructive
		annotated("drop", false, nil),                             // destructive by MCP's default
		{Name: "bare", InputSchema: tool("x", false).InputSchema}, // no annotations: destructive
	}
	refusedByUser := func(name string) string { return say(textRefused, "gh", name) }
	type want struct {
		text  string // "" : it ran
		asked bool
		d     ApprovalDecision
	}
	ran := func(asked bool, d ApprovalDecision) want { return want{"", asked, d} }
	host := ApprovalDecision{Approved: true, DecidedBy: DecidedByHost}
	policy := func(ok bool, rule string) ApprovalDecision {
		return ApprovalDecision{Approved: ok, DecidedBy: DecidedByPolicy, Policy: rule}
	}
	tests := []struct {
		name    string
		policy  ApprovalPolicy
		approve bool // Approve set (answering AllowOnce, or Refuse with refuse)
		refuse  bool
		want    map[string]want // by tool
	}{
		{name: "default", approve: true, want: map[string]want{
			"read":  ran(false, policy(true, PolicyReadOnly)),
			"write": ran(true, host),
			"drop":  ran(true, host),
			"bare":  ran(true, host),
		}},
		{name: "default, the user refuses", approve: true, refuse: true, want: map[string]want{
			"read":  ran(false, policy(true, PolicyReadOnly)),
			"write": {refusedByUser("gh_write"), true, ApprovalDecision{DecidedBy: DecidedByHost}},
		}},
		{name: "read-only asked", approve: true, policy: ApprovalPolicy{ReadOnly: LevelAsk}, want: map[string]want{
			"read": ran(true, host),
		}},
		{name: "destructive denied", approve: true, policy: ApprovalPolicy{Destructive: LevelDeny}, want: map[string]want{
			"read":  ran(false, policy(true, PolicyReadOnly)),
			"write": ran(true, host), // says destructiveHint: false: asked, not denied
			"drop":  {say(textPolicyDenied, "gh", "gh_drop"), false, policy(false, PolicyDestructive)},
			"bare":  {say(textPolicyDenied, "gh", "gh_bare"), false, policy(false, PolicyDestructive)},
		}},
		{name: "destructive allowed", approve: true, policy: ApprovalPolicy{Destructive: LevelAllow}, want: map[string]want{
			"write": ran(false, policy(true, PolicyDestructive)),
			"drop":  ran(false, policy(true, PolicyDestructive)),
		}},
		{name: "server denied wins over everything", approve: true, policy: ApprovalPolicy{Destructive: LevelAllow, Servers: map[string]Level{"gh": LevelDeny}}, want: map[string]want{
			"read": {say(textPolicyServer, "gh", "gh_read"), false, policy(false, PolicyServer)},
			"drop": {say(textPolicyServer, "gh", "gh_drop"), false, policy(false, PolicyServer)},
		}},
		{name: "a server set to ask is asked about its read-only claims", approve: true, policy: ApprovalPolicy{Servers: map[string]Level{"gh": LevelAsk}}, want: map[string]want{
			"read": ran(true, host),
		}},
		{name: "a server set to allow runs unasked", approve: true, policy: ApprovalPolicy{Servers: map[string]Level{"gh": LevelAllow}}, want: map[string]want{
			"drop": ran(false, policy(true, PolicyServer)),
		}},
		{name: "destructive deny beats a server set to allow", approve: true, policy: ApprovalPolicy{Destructive: LevelDeny, Servers: map[string]Level{"gh": LevelAllow}}, want: map[string]want{
			"read": ran(false, policy(true, PolicyServer)),
			"drop": {say(textPolicyDenied, "gh", "gh_drop"), false, policy(false, PolicyDestructive)},
		}},
		{name: "another server's policy does not apply", approve: true, policy: ApprovalPolicy{Servers: map[string]Level{"other": LevelDeny}}, want: map[string]want{
			"read": ran(false, policy(true, PolicyReadOnly)),
			"drop": ran(true, host),
		}},
		{name: "a deny-only policy without approve", policy: ApprovalPolicy{Destructive: LevelDeny}, want: map[string]want{
			"write": ran(false, policy(true, PolicyDestructive)), // nobody to ask: runs, as without a policy
			"drop":  {say(textPolicyDenied, "gh", "gh_drop"), false, policy(false, PolicyDestructive)},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := &fakeServer{tools: tools}
			cfg := Config{Servers: servers("gh", "https://gh.example.com/mcp"), Factory: fakes(map[string]*fakeServer{"gh": f}), ApprovalPolicy: tt.policy}
			var asked []string
			var mu sync.Mutex
			if tt.approve {
				cfg.Approve = func(_ context.Context, r ApprovalRequest) (Answer, error) {
					mu.Lock()
					asked = append(asked, r.Tool)
					mu.Unlock()
					if tt.refuse {
						return Refuse, nil
					}
					return AllowOnce, nil
				}
			}
			cat, _ := newCatalog(t, cfg)
			for name, w := range tt.want {
				asked = nil
				var got []ApprovalDecision
				calls := f.calls.Load()
				r, err := cat.ModelCall(ctxT(t), "gh_"+name, "{}", CallOptions{OnApproval: func(_ ApprovalRequest, d ApprovalDecision) { got = append(got, d) }})
				if err != nil {
					t.Fatal(err)
				}
				ranNow := f.calls.Load() > calls
				if w.text == "" && (!ranNow || r.IsError) {
					t.Errorf("%s: did not run: %q", name, r.Text)
				}
				if w.text != "" && (ranNow || r.Text != w.text || !r.IsError) {
					t.Errorf("%s: ran %v, text %q; want not run, %q", name, ranNow, r.Text, w.text)
				}
				if (len(asked) > 0) != w.asked {
					t.Errorf("%s: host asked %v; want asked %v", name, asked, w.asked)
				}
				if diff := cmp.Diff([]ApprovalDecision{w.d}, got); diff != "" {
					t.Errorf("%s: OnApproval (-want +got):\n%s", name, diff)
				}
			}
		})
	}
}

// Without Approve and without a policy nothing is asked or reported.
func TestNoApprovalStage(t *testing.T) {
	f := &fakeServer{tools: []*mcp.Tool{tool("drop", false)}}
	cat, _ := newCatalog(t, Config{Servers: servers("gh", "https://gh.example.com/mcp"), Factory: fakes(map[string]*fakeServer{"gh": f})})
	r, err := cat.ModelCall(ctxT(t), "gh_drop", "{}", CallOptions{OnApproval: func(ApprovalRequest, ApprovalDecision) { t.Error("OnApproval without an approval stage") }})
	if err != nil || r.IsError {
		t.Fatalf("call = %+v, %v", r, err)
	}
}

// Bad policies are refused by New, each with its reason.
func TestApprovalPolicyValidation(t *testing.T) {
	yes := func(context.Context, ApprovalRequest) (Answer, error) { return AllowOnce, nil }
	tests := []struct {
		policy  ApprovalPolicy
		approve bool
		want    string
	}{
		{ApprovalPolicy{ReadOnly: "deny"}, true, `catalog: Config.ApprovalPolicy.ReadOnly must be "allow" or "ask", not "deny"`},
		{ApprovalPolicy{Destructive: "maybe"}, true, `catalog: Config.ApprovalPolicy.Destructive must be "ask", "allow" or "deny", not "maybe"`},
		{ApprovalPolicy{Servers: map[string]Level{"gh": "Allow"}}, true, `catalog: Config.ApprovalPolicy.Servers["gh"] must be "allow", "ask" or "deny", not "Allow"`},
		{ApprovalPolicy{Servers: map[string]Level{"gh": LevelAsk}}, false, `catalog: Config.ApprovalPolicy says "ask", but there is no Config.Approve to ask`},
		{ApprovalPolicy{ReadOnly: LevelAsk}, false, `catalog: Config.ApprovalPolicy says "ask", but there is no Config.Approve to ask`},
	}
	for _, tt := range tests {
		cfg := Config{Factory: fakes(nil), ApprovalPolicy: tt.policy}
		if tt.approve {
			cfg.Approve = yes
		}
		_, err := New(cfg)
		wantCode(t, err, mcperr.InvalidArgument)
		if err == nil || err.Error() != tt.want {
			t.Errorf("New(%+v) = %v; want %s", tt.policy, err, tt.want)
		}
	}
}

// answering is an Approve that counts its questions and answers each
// with ans once release is closed.
type answering struct {
	ans     Answer
	release chan struct{}
	asked   atomic.Int32
	started chan string // each question's tool, as it is asked
}

func newAnswering(ans Answer) *answering {
	return &answering{ans: ans, release: make(chan struct{}), started: make(chan string, 16)}
}

func (a *answering) approve(ctx context.Context, r ApprovalRequest) (Answer, error) {
	a.asked.Add(1)
	a.started <- r.Tool
	select {
	case <-a.release:
		return a.ans, nil
	case <-ctx.Done():
		return Refuse, ctx.Err()
	}
}

// parallel makes n calls of the names at once in one scope and returns
// their decisions once all ended; the host answers after the first
// question.
func parallel(t *testing.T, cat *Catalog, a *answering, scope *Approvals, names ...string) []ApprovalDecision {
	t.Helper()
	ds := make([]ApprovalDecision, len(names))
	var wg sync.WaitGroup
	for i, name := range names {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r, err := cat.ModelCall(ctxT(t), name, "{}", CallOptions{Approvals: scope, OnApproval: func(_ ApprovalRequest, d ApprovalDecision) { ds[i] = d }})
			if err != nil || r.IsError {
				t.Errorf("%s = %q, %v; want it to run", name, r.Text, err)
			}
		}()
	}
	select {
	case <-a.started:
	case <-time.After(patience):
		t.Fatal("nobody was asked")
	}
	// The others have had time to reach the open question.
	time.Sleep(50 * time.Millisecond)
	close(a.release)
	wg.Wait()
	return ds
}

// Two parallel calls of one tool answered "always" are asked once: the
// second waits for the first answer and runs on it; later calls in the
// scope are not asked; another scope asks again.
func TestAlwaysAskedOnceForParallelCalls(t *testing.T) {
	f := &fakeServer{tools: []*mcp.Tool{tool("drop", false), tool("other", false)}}
	a := newAnswering(AllowAlways)
	cat, _ := newCatalog(t, Config{Servers: servers("gh", "https://gh.example.com/mcp"), Factory: fakes(map[string]*fakeServer{"gh": f}), Approve: a.approve})
	conv := new(Approvals)
	ds := parallel(t, cat, a, conv, "gh_drop", "gh_drop")
	if n := a.asked.Load(); n != 1 {
		t.Errorf("asked %d times for two parallel calls answered always; want 1", n)
	}
	byHost := ApprovalDecision{Approved: true, DecidedBy: DecidedByHost, Scope: ScopeTool}
	remembered := ApprovalDecision{Approved: true, DecidedBy: DecidedByRemembered, Scope: ScopeTool}
	if !(cmp.Equal(ds[0], byHost) && cmp.Equal(ds[1], remembered) || cmp.Equal(ds[1], byHost) && cmp.Equal(ds[0], remembered)) {
		t.Errorf("decisions = %+v; want one by the host, one remembered", ds)
	}
	if f.calls.Load() != 2 {
		t.Errorf("server calls = %d; want 2", f.calls.Load())
	}

	// The same scope, later: not asked. Another tool: asked.
	a.release = make(chan struct{})
	close(a.release)
	call := func(name string, scope *Approvals) ApprovalDecision {
		var d ApprovalDecision
		if _, err := cat.ModelCall(ctxT(t), name, "{}", CallOptions{Approvals: scope, OnApproval: func(_ ApprovalRequest, x ApprovalDecision) { d = x }}); err != nil {
			t.Fatal(err)
		}
		return d
	}
	if d := call("gh_drop", conv); !cmp.Equal(d, remembered) || a.asked.Load() != 1 {
		t.Errorf("a later call in the scope: %+v, asked %d; want remembered, not asked", d, a.asked.Load())
	}
	if d := call("gh_other", conv); d.DecidedBy != DecidedByHost || a.asked.Load() != 2 {
		t.Errorf("another tool: %+v, asked %d; want asked", d, a.asked.Load())
	}
	// Another conversation, and the catalog's own scope: asked again.
	if d := call("gh_drop", new(Approvals)); d.DecidedBy != DecidedByHost || a.asked.Load() != 3 {
		t.Errorf("another scope: %+v, asked %d; want asked", d, a.asked.Load())
	}
	if d := call("gh_drop", nil); d.DecidedBy != DecidedByHost || a.asked.Load() != 4 {
		t.Errorf("the catalog's scope: %+v, asked %d; want asked", d, a.asked.Load())
	}
	if d := call("gh_drop", nil); !cmp.Equal(d, remembered) || a.asked.Load() != 4 {
		t.Errorf("the catalog's scope again: %+v, asked %d; want remembered", d, a.asked.Load())
	}
}

// "server" covers every tool of the server, parallel calls included; a
// plain yes covers only its own call, so a waiting call asks in turn.
func TestServerAnswerAndPlainYes(t *testing.T) {
	newCat := func(a *answering) *Catalog {
		f := &fakeServer{tools: []*mcp.Tool{tool("drop", false), tool("other", false)}}
		g := &fakeServer{tools: []*mcp.Tool{tool("drop", false)}}
		cat, _ := newCatalog(t, Config{Servers: servers("gh", "https://gh.example.com/mcp", "gl", "https://gl.example.com/mcp"),
			Factory: fakes(map[string]*fakeServer{"gh": f, "gl": g}), Approve: a.approve})
		return cat
	}
	a := newAnswering(AllowServer)
	cat := newCat(a)
	conv := new(Approvals)
	parallel(t, cat, a, conv, "gh_drop", "gh_other")
	if n := a.asked.Load(); n != 1 {
		t.Errorf("asked %d times for two tools of a server answered \"server\"; want 1", n)
	}
	if _, err := cat.ModelCall(ctxT(t), "gl_drop", "{}", CallOptions{Approvals: conv}); err != nil {
		t.Fatal(err)
	}
	if n := a.asked.Load(); n != 2 {
		t.Errorf("another server's tool: asked %d in all; want it asked (2)", n)
	}

	a = newAnswering(AllowOnce)
	cat = newCat(a)
	parallel(t, cat, a, new(Approvals), "gh_drop", "gh_drop")
	if n := a.asked.Load(); n != 2 {
		t.Errorf("asked %d times for two parallel calls answered true; want 2", n)
	}
}

// A call that waits for another call's question stops waiting when its
// own context ends; the question goes on.
func TestWaitingForAnAnswerAborts(t *testing.T) {
	f := &fakeServer{tools: []*mcp.Tool{tool("drop", false)}}
	a := newAnswering(AllowAlways)
	cat, _ := newCatalog(t, Config{Servers: servers("gh", "https://gh.example.com/mcp"), Factory: fakes(map[string]*fakeServer{"gh": f}), Approve: a.approve})
	conv := new(Approvals)
	first := make(chan error, 1)
	go func() {
		_, err := cat.ModelCall(ctxT(t), "gh_drop", "{}", CallOptions{Approvals: conv})
		first <- err
	}()
	<-a.started
	ctx, cancel := context.WithTimeout(ctxT(t), 50*time.Millisecond)
	defer cancel()
	_, err := cat.ModelCall(ctx, "gh_drop", "{}", CallOptions{Approvals: conv})
	wantCode(t, err, mcperr.Aborted)
	close(a.release)
	if err := <-first; err != nil {
		t.Fatal(err)
	}
	if n := a.asked.Load(); n != 1 {
		t.Errorf("asked %d times; want 1", n)
	}
}

// A server removed and added again under its id with another URL is
// asked anew: a "server" answer was about the old one.
func TestRememberedAnswerIsForTheServerURL(t *testing.T) {
	f := &fakeServer{tools: []*mcp.Tool{tool("drop", false)}}
	a := newAnswering(AllowServer)
	close(a.release)
	cat, _ := newCatalog(t, Config{Servers: servers("gh", "https://gh.example.com/mcp"), Factory: fakes(map[string]*fakeServer{"gh": f}), Approve: a.approve})
	call := func() {
		t.Helper()
		if r, err := cat.ModelCall(ctxT(t), "gh_drop", "{}", CallOptions{}); err != nil || r.IsError {
			t.Fatalf("call = %q, %v", r.Text, err)
		}
	}
	call()
	call()
	if n := a.asked.Load(); n != 1 {
		t.Fatalf("asked %d times; want 1", n)
	}
	if err := cat.Remove("gh"); err != nil {
		t.Fatal(err)
	}
	if err := cat.Add("gh", ServerConfig{URL: "https://evil.example.com/mcp"}); err != nil {
		t.Fatal(err)
	}
	call()
	if n := a.asked.Load(); n != 2 {
		t.Errorf("asked %d times after the server changed its URL; want 2", n)
	}
}
