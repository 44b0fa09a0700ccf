package catalog

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpwasm/mcpwasm/mcperr"
)

// Every outcome of a call resolves to a result whose text is the table's,
// never to an error.
func TestHonestTexts(t *testing.T) {
	ok := func(ctx context.Context, _ string, _ json.RawMessage) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "fine"}}}, nil
	}
	fails := func(err error) func(context.Context, string, json.RawMessage) (*mcp.CallToolResult, error) {
		return func(context.Context, string, json.RawMessage) (*mcp.CallToolResult, error) { return nil, err }
	}
	schemaTool := &mcp.Tool{Name: "create_issue", InputSchema: map[string]any{
		"type": "object", "required": []any{"title"},
		"properties": map[string]any{"title": map[string]any{"type": "string"}, "labels": map[string]any{"type": "array", "items": map[string]any{"type": "string"}}},
	}}
	tests := []struct {
		name    string
		title   string
		off     bool
		meta    bool
		server  *fakeServer
		approve func(context.Context, ApprovalRequest) (Answer, error)
		opts    CallOptions
		call    string
		args    string
		want    string
		isError bool
	}{
		{name: "needs sign-in", server: &fakeServer{connectErr: authRequiredErr()},
			want: "The github server needs the user to sign in before its tools can be used. Ask the user to sign in to github (the app shows a Sign in button); do not guess the result."},
		{name: "needs sign-in, titled", title: "GitHub", server: &fakeServer{connectErr: authRequiredErr()},
			want: "The GitHub server needs the user to sign in before its tools can be used. Ask the user to sign in to GitHub (the app shows a Sign in button); do not guess the result."},
		{name: "declined", server: &fakeServer{connectErr: declinedErr()},
			want: "The sign-in to github was declined or cancelled, so its tools cannot be used now. The user can still sign in to github from the app, and its tools will then work; tell the user that. Do not guess the result."},
		{name: "disabled", off: true,
			want: "The github server is turned off in this app, so github_search was not run. Tell the user; do not guess the result."},
		{name: "disabled, meta tools", off: true, meta: true,
			want: `The github server is turned off in this app, so github_search was not run. You may call catalog_enable_server with {"id": "github"} to turn it on, or tell the user; do not guess the result.`},
		{name: "refused", approve: func(context.Context, ApprovalRequest) (Answer, error) { return Refuse, nil }, call: "github_delete_repo",
			want: "The user refused to run github_delete_repo. Do not retry it; tell the user."},
		{name: "approval failed", approve: func(context.Context, ApprovalRequest) (Answer, error) { return AllowOnce, errors.New("dialog crashed") }, call: "github_delete_repo",
			want: "The user refused to run github_delete_repo. Do not retry it; tell the user."},
		{name: "read-only tools are not asked", approve: func(context.Context, ApprovalRequest) (Answer, error) { return Refuse, nil },
			server: &fakeServer{call: ok}, want: "fine", isError: false},
		{name: "timeout", opts: CallOptions{Timeout: 20 * time.Millisecond},
			server: &fakeServer{call: func(ctx context.Context, _ string, _ json.RawMessage) (*mcp.CallToolResult, error) {
				<-ctx.Done()
				return nil, mcperr.Wrap(mcperr.Timeout, ctx.Err(), "mcp: timed out")
			}},
			want: "github_search on the github server did not finish within 20 ms and was stopped; whether it had an effect is unknown. Tell the user; do not guess the result."},
		{name: "unknown tool", call: "github_nope",
			want: `There is no tool named "github_nope". Use only the tools in your tool list.`},
		{name: "unknown server", call: "gitlab_search",
			want: `There is no tool named "gitlab_search". Use only the tools in your tool list.`},
		{name: "not JSON", args: `{"q":`,
			want: "The arguments for github_search are not valid JSON (unexpected end of JSON input), so it was not run. Send the arguments as a JSON object and call it again."},
		{name: "not an object", args: `["q"]`,
			want: `The arguments for github_search must be a JSON object such as {"name": "value"}, so it was not run. Call it again with an object.`},
		{name: "schema: missing property", call: "github_create_issue", args: `{}`,
			want: `The arguments for github_create_issue do not match its input schema (required: missing properties: ["title"]), so it was not run. Fix the arguments and call it again.`},
		{name: "schema: nested property", call: "github_create_issue", args: `{"title":"t","labels":["a",2]}`,
			want: `The arguments for github_create_issue do not match its input schema (property "labels[]": type: 2 has type "integer", want "string"), so it was not run. Fix the arguments and call it again.`},
		{name: "server refused arguments", server: &fakeServer{call: fails(mcperr.New(mcperr.InvalidArgument, "mcp: the server refused the request: invalid params: q is too short"))},
			want: "The github server rejected the arguments for github_search (the server refused the request: invalid params: q is too short). Fix the arguments and call it again."},
		{name: "server protocol error", server: &fakeServer{call: fails(mcperr.New(mcperr.Protocol, "mcp: the server refused the request: internal error"))},
			want: "The github server failed to run github_search (the server refused the request: internal error). Tell the user; do not guess the result."},
		{name: "network", server: &fakeServer{call: fails(&mcperr.Error{Code: mcperr.Network, Msg: "mcp: the server could not be reached (network error, CORS refusal or server down)", Err: errors.New("dial tcp: refused")})},
			want: "The github server could not run github_search (the server could not be reached (network error, CORS refusal or server down)); whether it had an effect is unknown. Tell the user; do not guess the result."},
		{name: "connection lost", server: &fakeServer{call: fails(mcperr.Wrap(mcperr.Closed, mcp.ErrConnectionClosed, "mcp: the connection is closed"))},
			want: "The connection to the github server was lost while running github_search (the connection is closed); whether it had an effect is unknown. The app reconnects on the next call. Tell the user or call it again if repeating it is safe; do not guess the result."},
		{name: "answer cut", server: &fakeServer{call: fails(&mcperr.Error{Code: mcperr.Network, Msg: "mcp: the connection ended before the server's answer was complete", Err: &mcperr.Cut{Err: errors.New("TypeError: network error")}})},
			want: "The connection to the github server was lost while running github_search (the connection ended before the server's answer was complete); whether it had an effect is unknown. The app reconnects on the next call. Tell the user or call it again if repeating it is safe; do not guess the result."},
		{name: "insufficient scope", server: &fakeServer{call: fails(&mcperr.Error{Code: mcperr.InsufficientScope, Status: 403, Msg: "mcp: the server answered HTTP 403 Forbidden"})},
			want: "The github server refused github_search because the user's sign-in does not grant the permission it needs. Ask the user to sign in to github again and grant it; do not guess the result."},
		{name: "connect failed", server: &fakeServer{connectErr: &mcperr.Error{Code: mcperr.HTTP, Status: 502, Msg: "mcp: the server answered HTTP 502 Bad Gateway"}},
			want: "The app could not connect to the github server (the server answered HTTP 502 Bad Gateway), so github_search was not run. Tell the user; do not guess the result."},
		{name: "tool error keeps its text", server: &fakeServer{call: func(context.Context, string, json.RawMessage) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "rate limited by GitHub"}}, IsError: true}, nil
		}}, want: "rate limited by GitHub"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := tt.server
			if f == nil {
				f = &fakeServer{}
			}
			f.tools = []*mcp.Tool{tool("search", true), tool("delete_repo", false), schemaTool}
			sc := ServerConfig{URL: "https://api.example.com/mcp", Title: tt.title}
			if tt.off {
				sc.Enabled = boolp(false)
			}
			approved := 0
			approve := tt.approve
			if approve != nil {
				inner := approve
				approve = func(ctx context.Context, r ApprovalRequest) (Answer, error) { approved++; return inner(ctx, r) }
			}
			cat, _ := newCatalog(t, Config{Servers: map[string]ServerConfig{"github": sc}, Factory: fakes(map[string]*fakeServer{"github": f}), Approve: approve, ServerTools: tt.meta})
			call := tt.call
			if call == "" {
				call = "github_search"
			}
			r, err := cat.ModelCall(ctxT(t), call, tt.args, tt.opts)
			if err != nil {
				t.Fatalf("ModelCall: %v; want a result", err)
			}
			wantErr := tt.want != "fine"
			if r.Text != tt.want || r.IsError != wantErr {
				t.Errorf("text = %q (isError %v)\nwant   %q (isError %v)", r.Text, r.IsError, tt.want, wantErr)
			}
			if tt.name == "read-only tools are not asked" && approved != 0 {
				t.Errorf("approval asked %d times for a readOnlyHint tool; want 0", approved)
			}
			res, err := cat.CallTool(ctxT(t), call, json.RawMessage(tt.args), tt.opts)
			if err != nil {
				t.Fatalf("CallTool: %v; want a result", err)
			}
			if res.IsError != wantErr {
				t.Errorf("CallTool isError = %v; want %v", res.IsError, wantErr)
			}
		})
	}
}

// A failed connection backs off: the next call within the backoff sends
// nothing and says when the app tries again; later calls connect again.
func TestReconnectBackoff(t *testing.T) {
	clock := newFakeClock()
	down := &mcperr.Error{Code: mcperr.Network, Msg: "mcp: the server could not be reached (network error, CORS refusal or server down)"}
	f := &fakeServer{tools: []*mcp.Tool{tool("search", true)}, connectErr: down}
	cat, _ := newCatalog(t, Config{Servers: servers("github", "https://api.example.com/mcp"), Factory: fakes(map[string]*fakeServer{"github": f}), Clock: clock, Breaker: BreakerConfig{Failures: 10}})
	ctx := ctxT(t)
	call := func() string {
		r, err := cat.ModelCall(ctx, "github_search", "{}", CallOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return r.Text
	}
	reason := "the server could not be reached (network error, CORS refusal or server down)"
	if got, want := call(), say(textConnectFailed, "github", "github_search", reason); got != want {
		t.Fatalf("first call = %q; want %q", got, want)
	}
	for _, wait := range []time.Duration{time.Second, 2 * time.Second, 4 * time.Second} {
		n := f.connects.Load()
		if got, want := call(), say(textReconnectWait, "github", "github_search", reason, roughly(wait)); got != want {
			t.Fatalf("call within the backoff = %q; want %q", got, want)
		}
		if f.connects.Load() != n {
			t.Fatal("a call within the backoff connected")
		}
		clock.Add(wait)
		call()
		if f.connects.Load() != n+1 {
			t.Fatalf("connects after the backoff = %d; want %d", f.connects.Load(), n+1)
		}
	}
	f.mu.Lock()
	f.connectErr = nil
	f.mu.Unlock()
	clock.Add(time.Minute)
	if got := call(); got != "ran search" {
		t.Errorf("call after recovery = %q; want ran search", got)
	}
}
