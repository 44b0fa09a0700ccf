package model_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpwasm/mcpwasm/agent"
	"github.com/mcpwasm/mcpwasm/agent/openai"
	"github.com/mcpwasm/mcpwasm/demo/model"
	"github.com/mcpwasm/mcpwasm/mcperr"
)

func start(t *testing.T, opts model.Options) (*model.Server, *httptest.Server) {
	t.Helper()
	s := model.New(opts)
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	return s, srv
}

func client(t *testing.T, srv *httptest.Server, headers map[string]string) *openai.Model {
	t.Helper()
	m, err := openai.New(openai.Config{BaseURL: srv.URL + "/v1", Model: model.ModelID, HTTPClient: srv.Client(), Headers: headers, MaxRetries: -1})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

const tools = `[
	{"type":"function","function":{"name":"calc_add","parameters":{"type":"object"}}},
	{"type":"function","function":{"name":"text_echo","parameters":{"type":"object"}}},
	{"type":"function","function":{"name":"work_slow","parameters":{"type":"object"}}}]`

func call(id, name, args string) agent.ToolCall {
	return agent.ToolCall{ID: id, Type: "function", Function: agent.FunctionCall{Name: name, Arguments: args}}
}

// metaTools offers only a catalog's model-facing meta tools.
const metaTools = `[{"type":"function","function":{"name":"catalog_list_servers"}},{"type":"function","function":{"name":"catalog_enable_server"}}]`

func TestRules(t *testing.T) {
	user := func(s string) []agent.Message { return []agent.Message{{Role: "user", Content: s}} }
	tests := []struct {
		name      string
		msgs      []agent.Message
		tools     string
		wantText  string
		wantCalls []agent.ToolCall
	}{
		{name: "add", msgs: user("Please add 2 and 40"), tools: tools,
			wantCalls: []agent.ToolCall{call("call_1_0", "calc_add", `{"a":2,"b":40}`)}},
		{name: "echo", msgs: user("echo Grüße, world"), tools: tools,
			wantCalls: []agent.ToolCall{call("call_1_0", "text_echo", `{"text":"Grüße, world"}`)}},
		{name: "parallel", msgs: user("add 2 and 40 and echo hi"), tools: tools,
			wantCalls: []agent.ToolCall{call("call_1_0", "calc_add", `{"a":2,"b":40}`), call("call_1_1", "text_echo", `{"text":"hi"}`)}},
		{name: "slow", msgs: user("do something slow 3"), tools: tools,
			wantCalls: []agent.ToolCall{call("call_1_0", "work_slow", `{"delayMs":250,"steps":3}`)}},
		{name: "unknown tool", msgs: user("call an unknown tool"), tools: tools,
			wantCalls: []agent.ToolCall{call("call_1_0", "no_such_tool", `{}`)}},
		{name: "bad json", msgs: user("send bad json"), tools: tools,
			wantCalls: []agent.ToolCall{call("call_1_0", "text_echo", `{"text": "unterminated`)}},
		{name: "tool not offered", msgs: user("add 1 and 2"), tools: `[]`,
			wantText: "I would call a tool ending in _add, but none is offered to me, so I cannot do that. (Is its server connected and signed in?)"},
		{name: "say nothing", msgs: user("say nothing"), tools: tools},
		{name: "ask me", msgs: user("ask me who I am"), tools: `[{"type":"function","function":{"name":"demo_ask_user"}}]`,
			wantCalls: []agent.ToolCall{call("call_1_0", "demo_ask_user", `{"message":"who I am"}`)}},
		{name: "ask me, no message", msgs: user("please ask me"), tools: `[{"type":"function","function":{"name":"demo_ask_user"}}]`,
			wantCalls: []agent.ToolCall{call("call_1_0", "demo_ask_user", `{"message":"Tell us a little about yourself."}`)}},
		{name: "open link", msgs: user("open link https://example.com/a?b=c"), tools: `[{"type":"function","function":{"name":"demo_open_link"}}]`,
			wantCalls: []agent.ToolCall{call("call_1_0", "demo_open_link", `{"url":"https://example.com/a?b=c"}`)}},
		{name: "what time", msgs: user("What time is it?"), tools: `[{"type":"function","function":{"name":"clock_get-time"}}]`,
			wantCalls: []agent.ToolCall{call("call_1_0", "clock_get-time", `{}`)}},
		{name: "list notes", msgs: user("list notes"), tools: `[{"type":"function","function":{"name":"notes_note_add"}},{"type":"function","function":{"name":"notes_note_list"}}]`,
			wantCalls: []agent.ToolCall{call("call_1_0", "notes_note_list", `{}`)}},
		{name: "show my notes", msgs: user("Show my notes, please"), tools: `[{"type":"function","function":{"name":"notes_note_add"}},{"type":"function","function":{"name":"notes_note_list"}}]`,
			wantCalls: []agent.ToolCall{call("call_1_0", "notes_note_list", `{}`)}},
		{name: "summarize", msgs: user("Summarize in at most 3 words:\n\nThe quick brown fox jumps."),
			wantText: "Summary: The quick brown"},
		{name: "help", msgs: user("hello?"), tools: tools,
			wantText: `I am mcpwasm-standin, a scripted stand-in, not a real model. I only follow scripts: try "add 2 and 40", "echo hello", "slow", "reverse hello", "weather in Paris", "note buy milk", or "add 2 and 40 and reverse hello".`},
		{name: "two servers", msgs: user("add 2 and 40 and reverse hello"), tools: `[{"type":"function","function":{"name":"demo_add"}},{"type":"function","function":{"name":"notes_reverse"}}]`,
			wantCalls: []agent.ToolCall{call("call_1_0", "demo_add", `{"a":2,"b":40}`), call("call_1_1", "notes_reverse", `{"text":"hello"}`)}},
		{name: "add is not note_add", msgs: user("add 2 and 40"), tools: `[{"type":"function","function":{"name":"catalog_list_servers"}},{"type":"function","function":{"name":"notes_note_add"}}]`,
			wantCalls: []agent.ToolCall{call("call_1_0", "catalog_list_servers", `{}`)}},
		{name: "missing tool: list the servers", msgs: user("add 2 and 40"), tools: metaTools,
			wantCalls: []agent.ToolCall{call("call_1_0", "catalog_list_servers", `{}`)}},
		{name: "a server needs a sign-in: enable it", tools: metaTools, msgs: []agent.Message{
			{Role: "user", Content: "add 2 and 40"},
			{Role: "assistant", ToolCalls: []agent.ToolCall{call("l", "catalog_list_servers", "{}")}},
			{Role: "tool", ToolCallID: "l", Content: `[{"id":"secure","status":"needs_auth","tools":0},{"id":"notes","status":"connected","tools":8}]`},
		}, wantCalls: []agent.ToolCall{call("call_3_0", "catalog_enable_server", `{"id":"secure"}`)}},
		{name: "enabled: its tools are there now", tools: `[{"type":"function","function":{"name":"catalog_enable_server"}},{"type":"function","function":{"name":"secure_add"}}]`, msgs: []agent.Message{
			{Role: "user", Content: "add 2 and 40"},
			{Role: "assistant", ToolCalls: []agent.ToolCall{call("e", "catalog_enable_server", `{"id":"secure"}`)}},
			{Role: "tool", ToolCallID: "e", Content: "The secure server is turned on. If secure_* tools appear…"},
		}, wantCalls: []agent.ToolCall{call("call_3_0", "secure_add", `{"a":2,"b":40}`)}},
		{name: "not signed in: pass the answer on", tools: metaTools, msgs: []agent.Message{
			{Role: "user", Content: "add 2 and 40"},
			{Role: "assistant", ToolCalls: []agent.ToolCall{call("e", "catalog_enable_server", `{"id":"secure"}`)}},
			{Role: "tool", ToolCallID: "e", Content: "The sign-in to secure was declined or cancelled."},
		}, wantText: "Results: The sign-in to secure was declined or cancelled."},
		{name: "weather and note", msgs: user("weather in New York and note buy milk"), tools: `[{"type":"function","function":{"name":"notes_weather"}},{"type":"function","function":{"name":"notes_note_add"}}]`,
			wantCalls: []agent.ToolCall{call("call_1_0", "notes_weather", `{"city":"New York"}`), call("call_1_1", "notes_note_add", `{"note":"buy milk"}`)}},
		{name: "results verbatim", tools: tools, msgs: []agent.Message{
			{Role: "user", Content: "add 2 and 40 and echo hi"},
			{Role: "assistant", ToolCalls: []agent.ToolCall{call("a", "calc_add", "{}"), call("b", "text_echo", "{}")}},
			{Role: "tool", ToolCallID: "a", Content: "2 + 40 = 42"},
			{Role: "tool", ToolCallID: "b", Content: "The sign-in was declined or cancelled."},
		}, wantText: "Results: 2 + 40 = 42; The sign-in was declined or cancelled."},
		{name: "keep calling", tools: tools, msgs: []agent.Message{
			{Role: "user", Content: "keep calling echo"},
			{Role: "assistant", ToolCalls: []agent.ToolCall{call("a", "text_echo", "{}")}},
			{Role: "tool", ToolCallID: "a", Content: "again"},
		}, wantCalls: []agent.ToolCall{call("call_3_0", "text_echo", `{"text":"again"}`)}},
	}
	s, srv := start(t, model.Options{})
	m := client(t, srv, nil)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var deltas []string
			msg, err := m.Generate(context.Background(), agent.Request{Messages: tt.msgs, Tools: json.RawMessage(tt.tools)},
				func(d string) { deltas = append(deltas, d) })
			if err != nil {
				t.Fatal(err)
			}
			if msg.Content != tt.wantText {
				t.Errorf("text = %q; want %q", msg.Content, tt.wantText)
			}
			if strings.Join(deltas, "") != tt.wantText || (len(tt.wantText) > 5 && len(deltas) < 3) {
				t.Errorf("deltas = %q; want the text in small pieces", deltas)
			}
			if diff := cmp.Diff(tt.wantCalls, msg.ToolCalls); diff != "" {
				t.Errorf("tool calls (-want +got):\n%s", diff)
			}
			if msg.Model != model.ModelID {
				t.Errorf("model = %q", msg.Model)
			}
		})
	}
	if s.Requests() != len(tests) {
		t.Errorf("Requests() = %d; want %d", s.Requests(), len(tests))
	}
	if !strings.Contains(string(s.LastRequest()), `"keep calling echo"`) {
		t.Errorf("LastRequest() = %s", s.LastRequest())
	}
}

func TestNonStreamed(t *testing.T) {
	_, srv := start(t, model.Options{})
	resp, err := srv.Client().Post(srv.URL+model.ChatPath, "application/json",
		strings.NewReader(`{"model":"x","messages":[{"role":"user","content":"add 2 and 3"}],"tools":`+tools+`}`))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var c struct {
		Object  string `json:"object"`
		Choices []struct {
			Message      agent.Message `json:"message"`
			FinishReason string        `json:"finish_reason"`
		} `json:"choices"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&c); err != nil {
		t.Fatal(err)
	}
	if c.Object != "chat.completion" || len(c.Choices) != 1 || c.Choices[0].FinishReason != "tool_calls" ||
		len(c.Choices[0].Message.ToolCalls) != 1 || c.Choices[0].Message.ToolCalls[0].Function.Arguments != `{"a":2,"b":3}` {
		t.Errorf("completion = %+v", c)
	}
}

func TestModelsSaysStandIn(t *testing.T) {
	_, srv := start(t, model.Options{})
	req, _ := http.NewRequest("GET", srv.URL+model.ModelsPath, nil)
	req.Header.Set("Origin", "http://127.0.0.1:9999")
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if got := resp.Header.Get("Access-Control-Allow-Origin"); got != "http://127.0.0.1:9999" {
		t.Errorf("Access-Control-Allow-Origin = %q", got)
	}
	var list struct {
		Data []struct {
			ID          string `json:"id"`
			Description string `json:"description"`
		} `json:"data"`
	}
	json.NewDecoder(resp.Body).Decode(&list)
	if len(list.Data) != 1 || list.Data[0].ID != model.ModelID || !strings.Contains(list.Data[0].Description, "not a real model") {
		t.Errorf("models = %+v", list)
	}
}

func TestPreflightAllowsFailHeader(t *testing.T) {
	_, srv := start(t, model.Options{})
	req, _ := http.NewRequest("OPTIONS", srv.URL+model.ChatPath, nil)
	req.Header.Set("Origin", "http://127.0.0.1:9999")
	req.Header.Set("Access-Control-Request-Method", "POST")
	req.Header.Set("Access-Control-Request-Headers", "authorization, content-type, x-mcpwasm-fail")
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if h := resp.Header.Get("Access-Control-Allow-Headers"); !strings.Contains(h, model.FailHeader) || !strings.Contains(h, "Authorization") {
		t.Errorf("Access-Control-Allow-Headers = %q", h)
	}
}

func TestFailures(t *testing.T) {
	tests := []struct {
		fail     model.Failure
		wantCode mcperr.Code
		status   int
	}{
		{model.RateLimited, mcperr.HTTP, 429},
		{model.ServerError, mcperr.HTTP, 500},
		{model.ErrorBody, mcperr.HTTP, 400},
		{model.EchoKey, mcperr.HTTP, 401},
		{model.CutStream, mcperr.Network, 0},
		{model.MidStreamError, mcperr.HTTP, 502},
		{"nonsense", mcperr.HTTP, 400},
	}
	for _, tt := range tests {
		t.Run(string(tt.fail), func(t *testing.T) {
			// Queued, and by header.
			s, srv := start(t, model.Options{})
			s.FailNext(tt.fail)
			for _, m := range []*openai.Model{client(t, srv, nil), client(t, srv, map[string]string{model.FailHeader: string(tt.fail)})} {
				_, err := m.Generate(context.Background(), agent.Request{Messages: []agent.Message{{Role: "user", Content: "hello"}}}, nil)
				if mcperr.CodeOf(err, "") != tt.wantCode || mcperr.StatusOf(err) != tt.status {
					t.Errorf("err = %v (status %d); want %s %d", err, mcperr.StatusOf(err), tt.wantCode, tt.status)
				}
			}
			// The queue is spent: the next request succeeds.
			if _, err := client(t, srv, nil).Generate(context.Background(), agent.Request{Messages: []agent.Message{{Role: "user", Content: "hello"}}}, nil); err != nil {
				t.Errorf("after the failure: %v", err)
			}
		})
	}
}

func TestBadRequests(t *testing.T) {
	_, srv := start(t, model.Options{})
	for _, body := range []string{`{`, `{"messages":[]}`} {
		resp, err := srv.Client().Post(srv.URL+model.ChatPath, "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 400 || !strings.Contains(string(b), `"invalid_request_error"`) {
			t.Errorf("%s: %d %s", body, resp.StatusCode, b)
		}
	}
}

// TestStreamsReasoningAndUsage: the stand-in streams a sentence of
// reasoning before its answer, in pieces, and ends with the usage the
// request asked for: its prompt in tokens (the part up to the last
// answer counted as cached), and its output with the reasoning's share.
func TestStreamsReasoningAndUsage(t *testing.T) {
	_, srv := start(t, model.Options{})
	m := client(t, srv, nil)
	var reasoning []string
	var usage []agent.Usage
	st := agent.Stream{
		Reasoning: func(d string) { reasoning = append(reasoning, d) },
		Usage:     func(u agent.Usage) { usage = append(usage, u) },
	}
	first := []agent.Message{{Role: "user", Content: "add 2 and 40"}}
	msg, err := m.Stream(context.Background(), agent.Request{Messages: first, Tools: json.RawMessage(tools)}, st)
	if err != nil {
		t.Fatal(err)
	}
	const think = "The message matches my script for calc_add, so I call it with the arguments it names."
	if got := strings.Join(reasoning, ""); got != think || len(reasoning) < 5 {
		t.Errorf("reasoning = %q; want %q in small pieces", reasoning, think)
	}
	if strings.Contains(msg.Content, "script") {
		t.Errorf("the reasoning leaked into the answer: %q", msg.Content)
	}
	if len(usage) != 1 {
		t.Fatalf("usage = %+v; want one", usage)
	}
	u := usage[0]
	if u.InputTokens <= 0 || u.CachedInputTokens != 0 || u.ReasoningTokens != (len(think)+3)/4 || u.OutputTokens <= u.ReasoningTokens {
		t.Errorf("first usage = %+v; want input > 0, nothing cached, the reasoning's tokens within the output", u)
	}

	// The next step: the conversation up to the answer is the cached part.
	reasoning, usage = nil, nil
	next := append(first, msg, agent.Message{Role: "tool", ToolCallID: msg.ToolCalls[0].ID, Content: "42"})
	if _, err := m.Stream(context.Background(), agent.Request{Messages: next, Tools: json.RawMessage(tools)}, st); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(reasoning, ""); got != "The tools answered, so I pass their results on verbatim." {
		t.Errorf("reasoning = %q", got)
	}
	if len(usage) != 1 || usage[0].CachedInputTokens <= u.InputTokens || usage[0].CachedInputTokens >= usage[0].InputTokens {
		t.Errorf("second usage = %+v; want the first request and the answer cached, the tool result not", usage)
	}
}

// TestUsageOnlyWhenAsked: without stream_options.include_usage the stream
// has no usage chunk, as OpenAI's.
func TestUsageOnlyWhenAsked(t *testing.T) {
	_, srv := start(t, model.Options{})
	for _, opts := range []string{``, `,"stream_options":{"include_usage":true}`} {
		resp, err := srv.Client().Post(srv.URL+model.ChatPath, "application/json",
			strings.NewReader(`{"model":"x","stream":true,"messages":[{"role":"user","content":"hello"}]`+opts+`}`))
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if got, want := strings.Contains(string(b), `"usage"`), opts != ""; got != want {
			t.Errorf("stream options %q: usage sent = %v; want %v", opts, got, want)
		}
		if !strings.Contains(string(b), `"reasoning_content"`) {
			t.Errorf("stream options %q: no reasoning_content deltas", opts)
		}
	}
}
