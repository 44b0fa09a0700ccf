package xengine

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpwasm/mcpwasm/devkit/devserver"
	"github.com/mcpwasm/mcpwasm/devkit/hostile"
)

// first returns a function that reports true once.
func first() func() bool {
	var done atomic.Bool
	return func() bool { return done.CompareAndSwap(false, true) }
}

// Scripts of the cases.
const (
	connectCallCall = `await step(() => c.connect()); await step(() => c.callTool("echo", {})); await step(() => c.callTool("echo", {}));`
	connectOnly     = `await step(() => c.connect());`
	connectList     = `await step(() => c.connect()); await step(() => c.listTools());`
)

// answerFirstCall scripts the first tools/call of a hostile.MCP server.
func answerFirstCall(answer func(h *hostileWorld, w http.ResponseWriter, r *http.Request, m hostile.Message)) func(*hostileWorld) http.Handler {
	return func(h *hostileWorld) http.Handler {
		once := first()
		return &hostile.MCP{Answer: func(w http.ResponseWriter, r *http.Request, m hostile.Message) bool {
			if m.Method != "tools/call" || !once() {
				return false
			}
			answer(h, w, r, m)
			return true
		}}
	}
}

// answerHangCalls answers, with answer, every tool call whose arguments
// have "hang": a call the client gave up on before it reached the server
// cannot turn the next call into the one held open.
func answerHangCalls(answer func(h *hostileWorld, w http.ResponseWriter, r *http.Request, m hostile.Message)) func(*hostileWorld) http.Handler {
	return func(h *hostileWorld) http.Handler {
		return &hostile.MCP{Answer: func(w http.ResponseWriter, r *http.Request, m hostile.Message) bool {
			var p struct {
				Arguments map[string]any `json:"arguments"`
			}
			if m.Method != "tools/call" || json.Unmarshal(m.Params, &p) != nil || p.Arguments["hang"] == nil {
				return false
			}
			answer(h, w, r, m)
			return true
		}}
	}
}

// neverEnding begins an event stream and holds it open until the client
// lets go, which closes h.released. A call with a progress token first
// gets one progress notification: the page's sign that the server holds
// the call (its onProgress aborts it then).
func neverEnding(h *hostileWorld, w http.ResponseWriter, r *http.Request, m hostile.Message) {
	hostile.StartSSE(w)
	var p struct {
		Meta struct {
			ProgressToken json.RawMessage `json:"progressToken"`
		} `json:"_meta"`
	}
	if json.Unmarshal(m.Params, &p) == nil && len(p.Meta.ProgressToken) > 0 {
		fmt.Fprintf(w, "event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progressToken\":%s,\"progress\":0}}\n\n", p.Meta.ProgressToken)
		if f, ok := w.(http.Flusher); ok {
			f.Flush()
		}
	}
	hostile.Hang(r, nil)
	close(h.released)
}

// letGo fails unless the request held open is released by the client
// within a few seconds of the call's end: an abandoned call must not keep
// its connection (a browser has six per origin).
func letGo(t *testing.T, h *hostileWorld, _ *hostile.Server, _ []step) {
	t.Helper()
	select {
	case <-h.released:
	case <-time.After(5 * time.Second):
		t.Errorf("the abandoned call's response stream is still open 5 s after the call ended; the client keeps the connection")
	}
}

// abortKeepsStream is where an AbortSignal's abort of a call whose event
// stream has begun leaves that stream open, and what is known of why.
var abortKeepsStream = map[string]string{
	"firefox": "the call rejects aborted at once and the next call works, but the server still holds the aborted call's request 5 s later, while a timeoutMs that ends the same call releases it; not yet known whether Firefox's fetch abort or the runtime's abort path keeps it",
}

// letGoAborted is letGo where the engine releases an aborted call's
// stream; elsewhere it checks the stream is still held, as written down
// in abortKeepsStream, so that a fix is noticed.
func letGoAborted(t *testing.T, h *hostileWorld, srv *hostile.Server, got []step) {
	t.Helper()
	why, ok := abortKeepsStream[browser.Name()]
	if !ok {
		letGo(t, h, srv, got)
		return
	}
	select {
	case <-h.released:
		t.Errorf("%s now releases an aborted call's stream: remove it from abortKeepsStream (it said: %s)", browser.Name(), why)
	case <-time.After(5 * time.Second):
		t.Logf("EXPECTED in %s: the aborted call's stream is still open 5 s later (%s)", browser.Name(), why)
	}
}

// TestHostileMCP: the MCP server itself is hostile. The page has an API
// key header and an accessToken(): neither may reach any other origin; the
// failure is the documented code, the session (or at least the runtime)
// survives.
func TestHostileMCP(t *testing.T) {
	goCoreOnly(t)
	sseHello := func(w http.ResponseWriter, endpoint string) {
		hostile.StartSSE(w)
		fmt.Fprintf(w, "event: endpoint\ndata: %s\n\n", endpoint)
		w.(http.Flusher).Flush()
	}
	for _, c := range []struct {
		name   string
		server func(h *hostileWorld) http.Handler
		path   string // default /mcp
		extra  string // client options besides the credentials
		script string
		want   []string // codes of the steps
		msg    string   // part of the first failing step's message
		status int      // of the first failing step, if any
		check  func(t *testing.T, h *hostileWorld, srv *hostile.Server, got []step)
	}{
		{name: "a tool call answered with the wrong id → protocol at once, the next call works",
			server: answerFirstCall(func(_ *hostileWorld, w http.ResponseWriter, _ *http.Request, _ hostile.Message) {
				hostile.Result(w, json.RawMessage("987654"), map[string]any{"content": []any{}})
			}),
			script: connectCallCall, want: []string{"ok", "protocol", "ok"}, msg: "987654",
			check: func(t *testing.T, _ *hostileWorld, _ *hostile.Server, got []step) {
				if len(got) > 1 && got[1].MS > 5000 {
					t.Errorf("the call took %.0f ms to fail; want it at once, not at a timeout", got[1].MS)
				}
			}},
		{name: "initialize result with a bogus protocolVersion → connect rejects protocol",
			server: func(*hostileWorld) http.Handler {
				return &hostile.MCP{Answer: func(w http.ResponseWriter, _ *http.Request, m hostile.Message) bool {
					if m.Method != "initialize" {
						return false
					}
					hostile.Result(w, m.ID, map[string]any{"protocolVersion": "1999-01-01",
						"capabilities": map[string]any{"tools": map[string]any{}}, "serverInfo": map[string]any{"name": "bogus", "version": "1"}})
					return true
				}}
			},
			script: connectOnly, want: []string{"protocol"}, msg: "1999-01-01"},
		{name: "never-ending SSE answer to a tool call with timeoutMs → timeout, the client closes that stream, the next call works",
			server: answerHangCalls(neverEnding),
			script: `await step(() => c.connect()); await step(() => c.callTool("echo", { hang: 1 }, { timeoutMs: 1500 })); await step(() => c.callTool("echo", {}));`,
			want:   []string{"ok", "timeout", "ok"}, check: letGo},
		{name: "never-ending SSE answer to a tool call with an AbortSignal → aborted, the client closes that stream, the next call works",
			server: answerHangCalls(neverEnding),
			script: `await step(() => c.connect());
				const ac = new AbortController();
				await step(() => c.callTool("echo", { hang: 1 }, { signal: ac.signal, onProgress: () => ac.abort() })); await step(() => c.callTool("echo", {}));`,
			want: []string{"ok", "aborted", "ok"}, check: letGoAborted},
		{name: "tool result of 20 MiB → protocol, the next call works",
			server: answerFirstCall(func(_ *hostileWorld, w http.ResponseWriter, _ *http.Request, m hostile.Message) {
				hostile.Result(w, m.ID, map[string]any{"content": []any{map[string]any{"type": "text", "text": strings.Repeat("x", 20<<20)}}})
			}),
			script: connectCallCall, want: []string{"ok", "protocol", "ok"}, msg: "larger"},
		{name: "a JSON array (batch) answer → protocol, the next call works",
			server: answerFirstCall(func(_ *hostileWorld, w http.ResponseWriter, _ *http.Request, m hostile.Message) {
				hostile.Raw(w, fmt.Sprintf(`[{"jsonrpc":"2.0","id":%s,"result":{"content":[]}}]`, m.ID))
			}),
			script: connectCallCall, want: []string{"ok", "protocol", "ok"}, msg: "array"},
		{name: `a message without "jsonrpc" → protocol, the next call works`,
			server: answerFirstCall(func(_ *hostileWorld, w http.ResponseWriter, _ *http.Request, m hostile.Message) {
				hostile.Raw(w, fmt.Sprintf(`{"id":%s,"result":{"content":[]}}`, m.ID))
			}),
			script: connectCallCall, want: []string{"ok", "protocol", "ok"}, msg: "jsonrpc"},
		{name: "an HTML page with 200 answering a call → protocol, the next call works",
			server: answerFirstCall(func(_ *hostileWorld, w http.ResponseWriter, _ *http.Request, _ hostile.Message) {
				w.Header().Set("Content-Type", "text/html")
				fmt.Fprint(w, `<!doctype html><img src=x onerror="window.__pwned=1"><script>window.__pwned=1</script>`)
			}),
			script: connectCallCall, want: []string{"ok", "protocol", "ok"}, msg: "content type"},
		{name: "listTools pages that never end → protocol after a bounded number of requests",
			server: func(*hostileWorld) http.Handler {
				var n atomic.Int32
				return &hostile.MCP{Answer: func(w http.ResponseWriter, _ *http.Request, m hostile.Message) bool {
					if m.Method != "tools/list" {
						return false
					}
					hostile.Result(w, m.ID, map[string]any{"tools": []any{hostile.EchoTool}, "nextCursor": fmt.Sprint("p", n.Add(1))})
					return true
				}}
			},
			script: connectList, want: []string{"ok", "protocol"}, msg: "pages",
			check: func(t *testing.T, _ *hostileWorld, srv *hostile.Server, _ []step) {
				if n := srv.Count(func(q hostile.Request) bool { return q.RPC == "tools/list" }); n > 101 {
					t.Errorf("%d tools/list requests; want at most 101", n)
				}
			}},
		{name: "listTools pages repeating their cursor → protocol after 2 requests",
			server: func(*hostileWorld) http.Handler {
				return &hostile.MCP{Answer: func(w http.ResponseWriter, _ *http.Request, m hostile.Message) bool {
					if m.Method != "tools/list" {
						return false
					}
					hostile.Result(w, m.ID, map[string]any{"tools": []any{hostile.EchoTool}, "nextCursor": "again"})
					return true
				}}
			},
			script: connectList, want: []string{"ok", "protocol"}, msg: "cursor",
			check: func(t *testing.T, _ *hostileWorld, srv *hostile.Server, _ []step) {
				if n := srv.Count(func(q hostile.Request) bool { return q.RPC == "tools/list" }); n > 2 {
					t.Errorf("%d tools/list requests; want at most 2", n)
				}
			}},
		{name: "legacy SSE endpoint event on another origin → protocol, the attacker gets no request",
			server: func(h *hostileWorld) http.Handler {
				return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					sseHello(w, h.Attacker.URL+"/message")
					hostile.Hang(r, nil)
				})
			},
			path: "/sse", extra: `{ transport: "sse" }`, script: connectOnly, want: []string{"protocol"}, msg: "another origin",
			check: func(t *testing.T, h *hostileWorld, _ *hostile.Server, _ []step) {
				if n := len(h.Attacker.Requests()); n != 0 {
					t.Errorf("the attacker origin got %d request(s); want none", n)
				}
			}},
		{name: "307 on the POST to another origin → protocol, no credential follows",
			server: func(h *hostileWorld) http.Handler {
				return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					http.Redirect(w, r, h.Attacker.URL+"/mcp", http.StatusTemporaryRedirect)
				})
			},
			extra: `{ transport: "streamable" }`, script: connectOnly, want: []string{"protocol"}, msg: "redirect"},
		{name: "302 on the legacy SSE GET to another origin → protocol, no credential follows",
			server: func(h *hostileWorld) http.Handler {
				return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					http.Redirect(w, r, h.Attacker.URL+"/sse", http.StatusFound)
				})
			},
			path: "/sse", extra: `{ transport: "sse" }`, script: connectOnly, want: []string{"protocol"}, msg: "redirect"},
		{name: "307 within the same origin → followed with the key, works",
			server: func(*hostileWorld) http.Handler {
				m := &hostile.MCP{}
				return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					if r.URL.Path == "/old" {
						http.Redirect(w, r, "/mcp", http.StatusTemporaryRedirect)
						return
					}
					if r.Method != http.MethodOptions && (r.Header.Get("X-Api-Key") != hostileKey || r.Header.Get("Authorization") != "Bearer "+hostileToken) {
						http.Error(w, "no credentials", http.StatusUnauthorized)
						return
					}
					m.ServeHTTP(w, r)
				})
			},
			path: "/old", extra: `{ transport: "streamable" }`, script: `await step(() => c.connect()); await step(() => c.callTool("echo", {}));`,
			want: []string{"ok", "ok"}},
		{name: "500 on initialize → http status 500",
			server: func(*hostileWorld) http.Handler {
				return &hostile.MCP{Answer: func(w http.ResponseWriter, _ *http.Request, m hostile.Message) bool {
					if m.Method != "initialize" {
						return false
					}
					http.Error(w, "internal error", http.StatusInternalServerError)
					return true
				}}
			},
			script: connectOnly, want: []string{"http"}, status: 500},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			h := newHostileWorld(t, devserver.AuthConfig{}, authTamper{})
			srv := hostile.Start(t, c.server(h))
			path := c.path
			if path == "" {
				path = "/mcp"
			}
			extra := c.extra
			if extra == "" {
				extra = "{}"
			}
			got := h.runSteps(srv.URL+path, extra, c.script)
			var codes []string
			for _, s := range got {
				codes = append(codes, s.Code)
			}
			if strings.Join(codes, " ") != strings.Join(c.want, " ") {
				t.Errorf("outcomes %v; want %v (all: %+v)", codes, c.want, got)
			}
			for _, s := range got {
				if s.Code == "ok" {
					continue
				}
				if c.msg != "" && !strings.Contains(strings.ToLower(s.Message), strings.ToLower(c.msg)) {
					t.Errorf("the %s message %q does not say %q", s.Code, s.Message, c.msg)
				}
				if c.status != 0 && s.Status != c.status {
					t.Errorf("the %s error has status %d; want %d", s.Code, s.Status, c.status)
				}
				sanitised(t, s.Message)
				break
			}
			if c.check != nil {
				c.check(t, h, srv, got)
			}
			secretsOnlyAt(t, []string{hostileKey, hostileToken}, map[string]*hostile.Recorder{
				"attacker": h.Attacker.Recorder, "page": h.Page,
			})
			h.noScript()
			h.eval(`c.close()`, nil)
			h.stillUsable()
		})
	}
}
