package demo_test

import (
	"context"
	"encoding/json"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpwasm/mcpwasm/demo"
)

// wait bounds every wait for something the server or client should do.
const wait = 5 * time.Second

// transport is one way a client can reach the demo server.
type transport struct {
	name     string
	sse      bool   // legacy HTTP+SSE instead of Streamable HTTP
	protocol string // protocol version the client asks for; "" = latest
}

var transports = []transport{
	{name: "streamable"},
	{name: "streamable-2025-11-25", protocol: "2025-11-25"},
	{name: "sse", sse: true},
}

// recorder collects what the server's test hooks report.
type recorder struct {
	mu        sync.Mutex
	cancelled []string
	methods   []string
	cancelCh  chan string
}

func newRecorder() *recorder { return &recorder{cancelCh: make(chan string, 10)} }

func (r *recorder) options() demo.Options {
	return demo.Options{
		OnCancelled: func(tool string) {
			r.mu.Lock()
			r.cancelled = append(r.cancelled, tool)
			r.mu.Unlock()
			r.cancelCh <- tool
		},
		OnRequest: func(method string) {
			r.mu.Lock()
			r.methods = append(r.methods, method)
			r.mu.Unlock()
		},
	}
}

func (r *recorder) count(method string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, m := range r.methods {
		if m == method {
			n++
		}
	}
	return n
}

// startServer serves demo.Handler on loopback.
func startServer(t *testing.T, opts demo.Options) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(demo.Handler(opts))
	t.Cleanup(srv.Close)
	return srv
}

// connect connects a go-sdk client to srv over tr. The session is closed
// before the server (cleanups run last-in first-out).
func connect(t *testing.T, srv *httptest.Server, tr transport, opts *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	// Every request goes through browser-style CORS checks, as from a page.
	hc := &http.Client{Transport: &browserCORS{base: srv.Client().Transport, t: t}}
	var ct mcp.Transport
	if tr.sse {
		ct = &mcp.SSEClientTransport{Endpoint: srv.URL + demo.SSEPath, HTTPClient: hc}
	} else {
		ct = &mcp.StreamableClientTransport{Endpoint: srv.URL + demo.StreamablePath, HTTPClient: hc, MaxRetries: -1}
	}
	c := mcp.NewClient(&mcp.Implementation{Name: "demo-test", Version: "0"}, opts)
	// The SSE client transport ties its event stream to Connect's context:
	// that context must live as long as the session, not just the handshake.
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	cs, err := c.Connect(ctx, ct, &mcp.ClientSessionOptions{ProtocolVersion: tr.protocol})
	if err != nil {
		t.Fatalf("Connect: %v", err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

func ctxT(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*wait)
	t.Cleanup(cancel)
	return ctx
}

func call(t *testing.T, cs *mcp.ClientSession, name string, args any) *mcp.CallToolResult {
	t.Helper()
	res, err := cs.CallTool(ctxT(t), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("CallTool(%s): %v", name, err)
	}
	return res
}

func textOf(t *testing.T, res *mcp.CallToolResult) string {
	t.Helper()
	var parts []string
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			parts = append(parts, tc.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// structured decodes a result's structuredContent into a generic value.
func structured(t *testing.T, res *mcp.CallToolResult) map[string]any {
	t.Helper()
	b, err := json.Marshal(res.StructuredContent)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("structuredContent %s: %v", b, err)
	}
	return m
}

func forEachTransport(t *testing.T, f func(t *testing.T, tr transport)) {
	for _, tr := range transports {
		t.Run(tr.name, func(t *testing.T) {
			t.Parallel()
			f(t, tr)
		})
	}
}

func TestListTools(t *testing.T) {
	forEachTransport(t, func(t *testing.T, tr transport) {
		cs := connect(t, startServer(t, demo.Options{}), tr, nil)
		if got, want := cs.InitializeResult().ServerInfo.Name, demo.Name; got != want {
			t.Errorf("server name = %q; want %q", got, want)
		}
		var names []string
		for tool, err := range cs.Tools(ctxT(t), nil) {
			if err != nil {
				t.Fatal(err)
			}
			names = append(names, tool.Name)
			if tool.Description == "" || tool.Title == "" {
				t.Errorf("tool %s: title %q, description %q; want both", tool.Name, tool.Title, tool.Description)
			}
			if tool.InputSchema == nil {
				t.Errorf("tool %s has no input schema", tool.Name)
			}
		}
		slices.Sort(names)
		want := []string{"add", "add_tool", "ask_user", "echo", "remove_tool", "slow", "summarize"}
		if diff := cmp.Diff(want, names); diff != "" {
			t.Errorf("tools (-want +got):\n%s", diff)
		}
	})
}

func TestEchoAndAdd(t *testing.T) {
	forEachTransport(t, func(t *testing.T, tr transport) {
		rec := newRecorder()
		cs := connect(t, startServer(t, rec.options()), tr, nil)

		if got, want := textOf(t, call(t, cs, "echo", map[string]any{"text": "héllo"})), "héllo"; got != want {
			t.Errorf("echo = %q; want %q", got, want)
		}

		res := call(t, cs, "add", map[string]any{"a": 2.5, "b": 4})
		if res.IsError {
			t.Fatalf("add: error result %q", textOf(t, res))
		}
		if diff := cmp.Diff(map[string]any{"sum": 6.5}, structured(t, res)); diff != "" {
			t.Errorf("add structuredContent (-want +got):\n%s", diff)
		}
		if got, want := textOf(t, res), "2.5 + 4 = 6.5"; got != want {
			t.Errorf("add text = %q; want %q", got, want)
		}

		bad := call(t, cs, "add", map[string]any{"a": "two"})
		if !bad.IsError {
			t.Errorf("add with a string: IsError = false; want true (text %q)", textOf(t, bad))
		}
		if got := rec.count("tools/call"); got != 3 {
			t.Errorf("OnRequest saw %d tools/call; want 3", got)
		}
	})
}

func TestAddOutputSchema(t *testing.T) {
	cs := connect(t, startServer(t, demo.Options{}), transports[0], nil)
	res, err := cs.ListTools(ctxT(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range res.Tools {
		if tool.Name != "add" {
			continue
		}
		b, _ := json.Marshal(tool.OutputSchema)
		var s struct {
			Type       string
			Properties map[string]struct{ Type string }
		}
		if err := json.Unmarshal(b, &s); err != nil {
			t.Fatal(err)
		}
		if s.Type != "object" || s.Properties["sum"].Type != "number" {
			t.Errorf("add output schema = %s; want an object with a number property sum", b)
		}
		return
	}
	t.Fatal("no add tool")
}

func TestSlowProgress(t *testing.T) {
	forEachTransport(t, func(t *testing.T, tr transport) {
		var mu sync.Mutex
		var got []float64
		all := make(chan struct{})
		const steps = 4
		cs := connect(t, startServer(t, demo.Options{}), tr, &mcp.ClientOptions{
			ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
				mu.Lock()
				defer mu.Unlock()
				if req.Params.ProgressToken != "tok-1" || req.Params.Total != steps {
					t.Errorf("progress token %v, total %v; want tok-1, %d", req.Params.ProgressToken, req.Params.Total, steps)
				}
				got = append(got, req.Params.Progress)
				if len(got) == steps {
					close(all)
				}
			},
		})
		params := &mcp.CallToolParams{Name: "slow", Arguments: map[string]any{"steps": steps, "delayMs": 10}}
		params.SetProgressToken("tok-1")
		res, err := cs.CallTool(ctxT(t), params)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(map[string]any{"steps": float64(steps)}, structured(t, res),
			cmp.FilterPath(func(p cmp.Path) bool { return strings.Contains(p.GoString(), "elapsedMs") }, cmp.Ignore())); diff != "" {
			t.Errorf("slow structuredContent (-want +got):\n%s", diff)
		}
		// go-sdk may dispatch the last notification after CallTool returns.
		select {
		case <-all:
		case <-time.After(wait):
		}
		mu.Lock()
		defer mu.Unlock()
		if diff := cmp.Diff([]float64{1, 2, 3, 4}, got); diff != "" {
			t.Errorf("progress (-want +got):\n%s", diff)
		}
	})
}

func TestSlowCancellation(t *testing.T) {
	forEachTransport(t, func(t *testing.T, tr transport) {
		rec := newRecorder()
		first := make(chan struct{})
		var once sync.Once
		cs := connect(t, startServer(t, rec.options()), tr, &mcp.ClientOptions{
			ProgressNotificationHandler: func(context.Context, *mcp.ProgressNotificationClientRequest) {
				once.Do(func() { close(first) })
			},
		})
		ctx, cancel := context.WithCancel(ctxT(t))
		defer cancel()
		params := &mcp.CallToolParams{Name: "slow", Arguments: map[string]any{"steps": 100, "delayMs": 50}}
		params.SetProgressToken(7)
		errc := make(chan error, 1)
		start := time.Now()
		go func() {
			_, err := cs.CallTool(ctx, params)
			errc <- err
		}()
		select {
		case <-first:
		case <-time.After(wait):
			t.Fatal("no progress notification")
		}
		cancel()
		select {
		case err := <-errc:
			if err == nil {
				t.Error("CallTool after cancel: err = nil; want an error")
			}
		case <-time.After(wait):
			t.Fatal("CallTool did not return after cancel")
		}
		select {
		case tool := <-rec.cancelCh:
			if tool != "slow" {
				t.Errorf("OnCancelled(%q); want slow", tool)
			}
		case <-time.After(wait):
			t.Fatal("server did not observe the cancellation")
		}
		if elapsed := time.Since(start); elapsed > 3*time.Second {
			t.Errorf("cancellation took %v; want the 5 s task to stop early", elapsed)
		}
		// The session stays usable.
		if got := textOf(t, call(t, cs, "echo", map[string]any{"text": "still here"})); got != "still here" {
			t.Errorf("echo after cancel = %q", got)
		}
	})
}

func TestElicitation(t *testing.T) {
	tests := []struct {
		name       string
		answer     *mcp.ElicitResult
		wantAction string
		wantText   string
		wantAns    map[string]any
	}{
		{
			name:       "accept",
			answer:     &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "Ada", "color": "green", "age": 36, "subscribe": true}},
			wantAction: "accept",
			wantText:   "The user answered: age: 36, color: green, name: Ada, subscribe: true",
			wantAns:    map[string]any{"name": "Ada", "color": "green", "age": float64(36), "subscribe": true},
		},
		{name: "decline", answer: &mcp.ElicitResult{Action: "decline"}, wantAction: "decline", wantText: "The user declined to answer."},
		{name: "cancel", answer: &mcp.ElicitResult{Action: "cancel"}, wantAction: "cancel", wantText: "The user cancelled the request."},
	}
	forEachTransport(t, func(t *testing.T, tr transport) {
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				var asked *mcp.ElicitParams
				cs := connect(t, startServer(t, demo.Options{}), tr, &mcp.ClientOptions{
					ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
						asked = req.Params
						// A fresh result per call: go-sdk applies schema
						// defaults to it in place.
						answer := *tt.answer
						answer.Content = maps.Clone(tt.answer.Content)
						return &answer, nil
					},
				})
				res := call(t, cs, "ask_user", map[string]any{"message": "Who are you?"})
				if res.IsError {
					t.Fatalf("ask_user: error result %q", textOf(t, res))
				}
				if asked == nil {
					t.Fatal("elicitation handler not called")
				}
				if asked.Message != "Who are you?" {
					t.Errorf("elicitation message = %q; want %q", asked.Message, "Who are you?")
				}
				b, _ := json.Marshal(asked.RequestedSchema)
				for _, want := range []string{`"name"`, `"title":"Your name"`, `"enum":["red","green","blue","purple"]`, `"required":["name"]`} {
					if !strings.Contains(string(b), want) {
						t.Errorf("requested schema %s; want it to contain %s", b, want)
					}
				}
				if got := textOf(t, res); got != tt.wantText {
					t.Errorf("text = %q; want %q", got, tt.wantText)
				}
				want := map[string]any{"action": tt.wantAction}
				if tt.wantAns != nil {
					want["answers"] = tt.wantAns
				}
				if diff := cmp.Diff(want, structured(t, res)); diff != "" {
					t.Errorf("structuredContent (-want +got):\n%s", diff)
				}
			})
		}
	})
}

func TestSampling(t *testing.T) {
	forEachTransport(t, func(t *testing.T, tr transport) {
		var prompt string
		cs := connect(t, startServer(t, demo.Options{}), tr, &mcp.ClientOptions{
			CreateMessageHandler: func(_ context.Context, req *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
				if len(req.Params.Messages) == 1 {
					if tc, ok := req.Params.Messages[0].Content.(*mcp.TextContent); ok {
						prompt = tc.Text
					}
				}
				return &mcp.CreateMessageResult{
					Role: "assistant", Model: "test-model", StopReason: "endTurn",
					Content: &mcp.TextContent{Text: "Short."},
				}, nil
			},
		})
		res := call(t, cs, "summarize", map[string]any{"text": "A long text.", "maxWords": 5})
		if res.IsError {
			t.Fatalf("summarize: error result %q", textOf(t, res))
		}
		if want := "Summarize in at most 5 words:\n\nA long text."; prompt != want {
			t.Errorf("sampling prompt = %q; want %q", prompt, want)
		}
		if got, want := textOf(t, res), "Short."; got != want {
			t.Errorf("text = %q; want %q", got, want)
		}
		if diff := cmp.Diff(map[string]any{"summary": "Short.", "model": "test-model"}, structured(t, res)); diff != "" {
			t.Errorf("structuredContent (-want +got):\n%s", diff)
		}
	})
}

// TestNoClientHandlers checks that a client without elicitation or sampling
// handlers gets a tool error, not a hang.
func TestNoClientHandlers(t *testing.T) {
	forEachTransport(t, func(t *testing.T, tr transport) {
		cs := connect(t, startServer(t, demo.Options{}), tr, nil)
		for name, args := range map[string]map[string]any{"ask_user": {}, "summarize": {"text": "x"}} {
			res, err := cs.CallTool(ctxT(t), &mcp.CallToolParams{Name: name, Arguments: args})
			if err != nil || !res.IsError || !strings.Contains(textOf(t, res), "This client does not handle") {
				t.Errorf("%s without a client handler: %v, %+v; want an error result saying the client does not handle it", name, err, textOf(t, res))
			}
		}
	})
}

func TestToolListChanged(t *testing.T) {
	forEachTransport(t, func(t *testing.T, tr transport) {
		changed := make(chan struct{}, 10)
		cs := connect(t, startServer(t, demo.Options{}), tr, &mcp.ClientOptions{
			ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { changed <- struct{}{} },
		})
		awaitChange := func(what string) {
			t.Helper()
			select {
			case <-changed:
			case <-time.After(wait):
				t.Fatalf("no tools/list_changed after %s", what)
			}
		}
		hasTool := func(name string) bool {
			t.Helper()
			res, err := cs.ListTools(ctxT(t), nil)
			if err != nil {
				t.Fatal(err)
			}
			return slices.ContainsFunc(res.Tools, func(tool *mcp.Tool) bool { return tool.Name == name })
		}
		// Give the list_changed subscription time to be in place: a
		// ListTools round trip follows the session's setup.
		if hasTool("dyn_hello") {
			t.Fatal("dyn_hello exists before add_tool")
		}

		if res := call(t, cs, "add_tool", map[string]any{"name": "dyn_hello"}); res.IsError {
			t.Fatalf("add_tool: %s", textOf(t, res))
		}
		awaitChange("add_tool")
		if !hasTool("dyn_hello") {
			t.Error("dyn_hello missing after add_tool")
		}
		if got, want := textOf(t, call(t, cs, "dyn_hello", map[string]any{"who": "Ada"})), "Hello, Ada, from dyn_hello!"; got != want {
			t.Errorf("dyn_hello = %q; want %q", got, want)
		}

		for _, bad := range []string{"echo", "Bad-Name"} {
			if res := call(t, cs, "add_tool", map[string]any{"name": bad}); !res.IsError {
				t.Errorf("add_tool %q: %q; want an error", bad, textOf(t, res))
			}
		}
		if res := call(t, cs, "remove_tool", map[string]any{"name": "echo"}); !res.IsError {
			t.Errorf("remove_tool echo: %q; want an error", textOf(t, res))
		}

		if res := call(t, cs, "remove_tool", map[string]any{"name": "dyn_hello"}); res.IsError {
			t.Fatalf("remove_tool: %s", textOf(t, res))
		}
		awaitChange("remove_tool")
		if hasTool("dyn_hello") {
			t.Error("dyn_hello still listed after remove_tool")
		}
	})
}

func TestResourcesAndPrompts(t *testing.T) {
	forEachTransport(t, func(t *testing.T, tr transport) {
		cs := connect(t, startServer(t, demo.Options{}), tr, nil)
		ctx := ctxT(t)

		resources, err := cs.ListResources(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		var uris []string
		for _, r := range resources.Resources {
			uris = append(uris, r.URI)
		}
		slices.Sort(uris)
		if want := []string{demo.ReadmeURI, demo.SkillURI, demo.SkillFileURI}; !slices.Equal(uris, want) {
			t.Errorf("resources = %v; want %v (the readme and the skill's files)", uris, want)
		}
		templates, err := cs.ListResourceTemplates(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(templates.ResourceTemplates) != 1 || templates.ResourceTemplates[0].URITemplate != demo.GreetingTemplate {
			t.Errorf("templates = %+v; want just %s", templates.ResourceTemplates, demo.GreetingTemplate)
		}

		reads := []struct {
			uri, mime, contains string
		}{
			{demo.ReadmeURI, "text/markdown", "# mcpwasm demo server"},
			{"demo://greeting/Ada%20Lovelace", "text/plain", "Hello, Ada Lovelace!"},
		}
		for _, rd := range reads {
			res, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: rd.uri})
			if err != nil {
				t.Errorf("ReadResource(%s): %v", rd.uri, err)
				continue
			}
			if len(res.Contents) != 1 {
				t.Errorf("ReadResource(%s): %d contents; want 1", rd.uri, len(res.Contents))
				continue
			}
			c := res.Contents[0]
			if c.MIMEType != rd.mime || !strings.Contains(c.Text, rd.contains) {
				t.Errorf("ReadResource(%s) = %s %q; want %s containing %q", rd.uri, c.MIMEType, c.Text, rd.mime, rd.contains)
			}
		}
		if _, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "demo://nothing"}); err == nil {
			t.Error("ReadResource(demo://nothing): err = nil; want not found")
		}

		prompts, err := cs.ListPrompts(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(prompts.Prompts) != 1 || prompts.Prompts[0].Name != demo.PromptExplain || len(prompts.Prompts[0].Arguments) != 2 {
			t.Errorf("prompts = %+v; want explain with two arguments", prompts.Prompts)
		}
		p, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: demo.PromptExplain, Arguments: map[string]string{"topic": "WebAssembly"}})
		if err != nil {
			t.Fatal(err)
		}
		if len(p.Messages) != 1 {
			t.Fatalf("GetPrompt: %d messages; want 1", len(p.Messages))
		}
		if got, want := p.Messages[0].Content.(*mcp.TextContent).Text, "Explain WebAssembly to a curious beginner in three short paragraphs."; got != want {
			t.Errorf("prompt text = %q; want %q", got, want)
		}
		if _, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: demo.PromptExplain}); err == nil {
			t.Error("GetPrompt without topic: err = nil; want an error")
		}
	})
}

// TestCORS checks the middleware is in front of both endpoints.
func TestCORS(t *testing.T) {
	srv := startServer(t, demo.Options{})
	for _, path := range []string{demo.StreamablePath, demo.SSEPath} {
		req, _ := http.NewRequest("OPTIONS", srv.URL+path, nil)
		req.Header.Set("Origin", "http://127.0.0.1:8080")
		req.Header.Set("Access-Control-Request-Method", "POST")
		req.Header.Set("Access-Control-Request-Headers", "content-type,mcp-session-id,mcp-protocol-version")
		resp, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusNoContent || resp.Header.Get("Access-Control-Allow-Origin") != "http://127.0.0.1:8080" {
			t.Errorf("preflight %s: status %d, Allow-Origin %q; want 204 and the origin",
				path, resp.StatusCode, resp.Header.Get("Access-Control-Allow-Origin"))
		}
	}
}
