package agent_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpwasm/mcpwasm/agent"
	"github.com/mcpwasm/mcpwasm/agent/openai"
	"github.com/mcpwasm/mcpwasm/catalog"
	"github.com/mcpwasm/mcpwasm/demo/model"
	"github.com/mcpwasm/mcpwasm/mcpclient"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// wait bounds every wait for something that should happen.
const wait = 5 * time.Second

// fakeTools is an in-memory Tools with the catalog's honesty rules.
type fakeTools struct {
	tools map[string]*fakeTool

	mu        sync.Mutex
	calls     []string
	cancelled chan string
}

type fakeTool struct {
	server, tool string
	view         string // the ui:// resource of its view, if any
	run          func(ctx context.Context, args map[string]any, opts catalog.CallOptions) (text string, isError bool, err error)
}

var (
	_ agent.Tools      = (*fakeTools)(nil)
	_ agent.ToolLister = (*fakeTools)(nil)
)

func newFakeTools(tools ...*fakeTool) *fakeTools {
	f := &fakeTools{tools: map[string]*fakeTool{}, cancelled: make(chan string, 16)}
	for _, t := range tools {
		f.tools[t.server+"_"+t.tool] = t
	}
	return f
}

func (f *fakeTools) names() []string {
	var n []string
	for name := range f.tools {
		n = append(n, name)
	}
	sort.Strings(n)
	return n
}

func (f *fakeTools) ToolsFor(ctx context.Context, format catalog.Format) (json.RawMessage, error) {
	if format != catalog.FormatOpenAI {
		return nil, fmt.Errorf("fake: format %q", format)
	}
	var out []map[string]any
	for _, name := range f.names() {
		out = append(out, map[string]any{"type": "function", "function": map[string]any{
			"name": name, "description": "fake " + name, "parameters": map[string]any{"type": "object"},
		}})
	}
	return json.Marshal(out)
}

func (f *fakeTools) Tools(ctx context.Context) ([]catalog.Tool, error) {
	var out []catalog.Tool
	for _, name := range f.names() {
		t := f.tools[name]
		ct := catalog.Tool{Name: name, ServerID: t.server}
		if t.view != "" {
			ct.Tool = &mcp.Tool{Name: t.tool}
			ct.UI = &mcpclient.ToolUI{ResourceURI: t.view, Visibility: []string{mcpclient.VisibilityModel}}
		}
		out = append(out, ct)
	}
	return out, nil
}

func (f *fakeTools) ModelCall(ctx context.Context, name, args string, opts catalog.CallOptions) (catalog.ToolResult, error) {
	f.mu.Lock()
	f.calls = append(f.calls, name)
	f.mu.Unlock()
	t, ok := f.tools[name]
	if !ok {
		return catalog.ToolResult{Name: name, IsError: true, Text: fmt.Sprintf(
			"There is no tool %q. The tools are: %s.", name, strings.Join(f.names(), ", "))}, nil
	}
	res := catalog.ToolResult{Name: name, ServerID: t.server, Tool: t.tool}
	var a map[string]any
	if err := json.Unmarshal([]byte(args), &a); err != nil {
		res.IsError, res.Text = true, fmt.Sprintf("The arguments of %s are not valid JSON (%v); send a JSON object.", name, err)
		return res, nil
	}
	text, isErr, err := t.run(ctx, a, opts)
	if err != nil {
		if ctx.Err() != nil {
			f.cancelled <- name
		}
		return catalog.ToolResult{}, err
	}
	res.Text, res.IsError = text, isErr
	if t.view != "" {
		// What a server with a view answers: the text, and what only the
		// view shows.
		res.UI = &mcpclient.ToolUI{ResourceURI: t.view}
		res.Result = &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}, StructuredContent: map[string]any{"shown": text}, IsError: isErr}
	}
	return res, nil
}

func addTool() *fakeTool {
	return &fakeTool{server: "calc", tool: "add", run: func(ctx context.Context, a map[string]any, _ catalog.CallOptions) (string, bool, error) {
		x, _ := a["a"].(float64)
		y, _ := a["b"].(float64)
		return fmt.Sprintf("%g + %g = %g", x, y, x+y), false, nil
	}}
}

func echoTool() *fakeTool {
	return &fakeTool{server: "text", tool: "echo", run: func(ctx context.Context, a map[string]any, _ catalog.CallOptions) (string, bool, error) {
		s, _ := a["text"].(string)
		return s, false, nil
	}}
}

// slowTool blocks until its call is cancelled; started receives a value
// when it starts.
func slowTool(started chan<- struct{}) *fakeTool {
	return &fakeTool{server: "work", tool: "slow", run: func(ctx context.Context, a map[string]any, _ catalog.CallOptions) (string, bool, error) {
		started <- struct{}{}
		<-ctx.Done()
		return "", false, ctx.Err()
	}}
}

// scopeTool is an echo tool that records the approval scope of each call.
func scopeTool() (*fakeTool, func() []*catalog.Approvals) {
	var mu sync.Mutex
	var scopes []*catalog.Approvals
	t := &fakeTool{server: "github", tool: "echo", run: func(ctx context.Context, a map[string]any, o catalog.CallOptions) (string, bool, error) {
		mu.Lock()
		scopes = append(scopes, o.Approvals)
		mu.Unlock()
		return "ok", false, nil
	}}
	return t, func() []*catalog.Approvals {
		mu.Lock()
		defer mu.Unlock()
		return append([]*catalog.Approvals(nil), scopes...)
	}
}

// rendezvous makes n calls wait for each other, proving they run at once.
type rendezvous struct {
	mu  sync.Mutex
	n   int
	all chan struct{}
}

func newRendezvous(n int) *rendezvous { return &rendezvous{n: n, all: make(chan struct{})} }

func (r *rendezvous) arrive() bool {
	r.mu.Lock()
	if r.n--; r.n == 0 {
		close(r.all)
	}
	r.mu.Unlock()
	select {
	case <-r.all:
		return true
	case <-time.After(wait):
		return false
	}
}

// together wraps a tool so that it runs only alongside the others.
func together(r *rendezvous, t *fakeTool) *fakeTool {
	run := t.run
	t.run = func(ctx context.Context, a map[string]any, o catalog.CallOptions) (string, bool, error) {
		if !r.arrive() {
			return "the calls of one step did not run concurrently", true, nil
		}
		return run(ctx, a, o)
	}
	return t
}

// env is the scripted model server, an OpenAI adapter on it, and tools.
type env struct {
	model *model.Server
	srv   *httptest.Server
	llm   *openai.Model
	tools *fakeTools
}

func newEnv(t *testing.T, mopts model.Options, tools *fakeTools, mod func(*openai.Config)) *env {
	t.Helper()
	e := &env{model: model.New(mopts), tools: tools}
	e.srv = httptest.NewServer(e.model)
	t.Cleanup(e.srv.Close)
	cfg := openai.Config{BaseURL: e.srv.URL + "/v1", Model: model.ModelID, HTTPClient: e.srv.Client(), APIKey: agent.NewSecret(testKey)}
	if mod != nil {
		mod(&cfg)
	}
	var err error
	if e.llm, err = openai.New(cfg); err != nil {
		t.Fatal(err)
	}
	return e
}

const testKey = "sk-test-Zq7Xv9Lm2Np4Rs6Tu8Wy"

func (e *env) agent(t *testing.T, mod func(*agent.Config)) *agent.Agent {
	t.Helper()
	cfg := agent.Config{Model: e.llm}
	if e.tools != nil {
		cfg.Tools = e.tools
	}
	if mod != nil {
		mod(&cfg)
	}
	a, err := agent.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// recorder collects events; callbacks are serialised by the agent, the
// mutex guards reads from the test goroutine.
type recorder struct {
	mu     sync.Mutex
	events []agent.Event
	hook   func(agent.Event)
}

func (r *recorder) on(ev agent.Event) {
	r.mu.Lock()
	r.events = append(r.events, ev)
	hook := r.hook
	r.mu.Unlock()
	if hook != nil {
		hook(ev)
	}
}

func (r *recorder) all() []agent.Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]agent.Event(nil), r.events...)
}

// types returns the event types in order, with runs of streamed pieces
// (text, reasoning, toolcalldelta) collapsed into one of their type.
func (r *recorder) types() []string {
	var out []string
	for _, ev := range r.all() {
		piece := ev.Type == agent.EventText || ev.Type == agent.EventReasoning || ev.Type == agent.EventToolCallDelta
		if piece && len(out) > 0 && out[len(out)-1] == ev.Type {
			continue
		}
		out = append(out, ev.Type)
	}
	return out
}

func (r *recorder) text() (string, int) {
	var b strings.Builder
	n := 0
	for _, ev := range r.all() {
		if ev.Type == agent.EventText {
			b.WriteString(ev.Data.(*agent.TextEvent).Delta)
			n++
		}
	}
	return b.String(), n
}

func (r *recorder) last(typ string) any {
	evs := r.all()
	for i := len(evs) - 1; i >= 0; i-- {
		if evs[i].Type == typ {
			return evs[i].Data
		}
	}
	return nil
}

// tee serves h and hands each event of a chat completion's stream to
// got before its last byte goes to the client.
func tee(h http.Handler, got func(data string)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != model.ChatPath {
			h.ServeHTTP(w, r)
			return
		}
		h.ServeHTTP(&teeWriter{ResponseWriter: w, got: got}, r)
	})
}

type teeWriter struct {
	http.ResponseWriter
	got func(data string)
	buf string
}

func (t *teeWriter) Write(b []byte) (int, error) {
	t.buf += string(b)
	for {
		ev, rest, ok := strings.Cut(t.buf, "\n\n")
		if !ok {
			break
		}
		t.buf = rest
		if data, ok := strings.CutPrefix(ev, "data: "); ok {
			t.got(data)
		}
	}
	return t.ResponseWriter.Write(b)
}

func (t *teeWriter) Flush() { t.ResponseWriter.(http.Flusher).Flush() }

// usageIn reads the usage of a Chat Completions stream event, in the
// agent's terms.
func usageIn(t *testing.T, data string) (agent.Usage, bool) {
	if data == "[DONE]" {
		return agent.Usage{}, false
	}
	var c struct {
		Usage *struct {
			Prompt     int `json:"prompt_tokens"`
			Completion int `json:"completion_tokens"`
			PromptD    struct {
				Cached int `json:"cached_tokens"`
			} `json:"prompt_tokens_details"`
			CompletionD struct {
				Reasoning int `json:"reasoning_tokens"`
			} `json:"completion_tokens_details"`
		} `json:"usage"`
	}
	if err := json.Unmarshal([]byte(data), &c); err != nil {
		t.Errorf("the stand-in sent %q: %v", data, err)
		return agent.Usage{}, false
	}
	u := c.Usage
	if u == nil {
		return agent.Usage{}, false
	}
	return agent.Usage{InputTokens: u.Prompt, OutputTokens: u.Completion, CachedInputTokens: u.PromptD.Cached, ReasoningTokens: u.CompletionD.Reasoning}, true
}
