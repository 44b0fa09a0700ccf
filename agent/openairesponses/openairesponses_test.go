package openairesponses

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpwasm/mcpwasm/agent"
	"github.com/mcpwasm/mcpwasm/mcperr"
)

const testKey = "sk-proj-test-key-0123456789abcdef"

type server struct {
	*httptest.Server
	mu      sync.Mutex
	bodies  [][]byte
	headers []http.Header
	paths   []string
}

func startServer(t *testing.T, h http.HandlerFunc) *server {
	t.Helper()
	s := &server{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		s.mu.Lock()
		s.bodies = append(s.bodies, b)
		s.headers = append(s.headers, r.Header.Clone())
		s.paths = append(s.paths, r.URL.Path)
		s.mu.Unlock()
		r.Body = io.NopCloser(bytes.NewReader(b))
		h(w, r)
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *server) body(t *testing.T, i int) map[string]any {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	var v map[string]any
	if err := json.Unmarshal(s.bodies[i], &v); err != nil {
		t.Fatal(err)
	}
	return v
}

// writeSSE writes body in slices of n bytes, flushing after each.
func writeSSE(w http.ResponseWriter, body string, n int) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	for len(body) > 0 {
		k := min(n, len(body))
		io.WriteString(w, body[:k])
		w.(http.Flusher).Flush()
		body = body[k:]
	}
}

func newModel(t *testing.T, s *server, mod func(*Config)) *Model {
	t.Helper()
	cfg := Config{BaseURL: s.URL + "/v1", APIKey: agent.NewSecret(testKey), Model: "gpt-5-mini", HTTPClient: s.Client(), MaxRetries: -1}
	if mod != nil {
		mod(&cfg)
	}
	m, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func recorded(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("testdata/stream_function_call.txt")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// streamed is what a Stream call passed on.
type streamed struct {
	text, reasoning []string
	calls           []agent.ToolCallDelta
	usage           []agent.Usage
}

func (s *streamed) stream() agent.Stream {
	return agent.Stream{
		Text:      func(d string) { s.text = append(s.text, d) },
		Reasoning: func(d string) { s.reasoning = append(s.reasoning, d) },
		ToolCall:  func(d agent.ToolCallDelta) { s.calls = append(s.calls, d) },
		Usage:     func(u agent.Usage) { s.usage = append(s.usage, u) },
	}
}

var weatherTools = json.RawMessage(`[{"type":"function","name":"get_weather","description":"The weather in a city.","parameters":{"type":"object","properties":{"location":{"type":"string"}},"required":["location"]},"strict":false}]`)

func TestStreamFunctionCall(t *testing.T) {
	body := recorded(t)
	for _, n := range []int{1, 9, 1 << 20} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			s := startServer(t, func(w http.ResponseWriter, r *http.Request) { writeSSE(w, body, n) })
			var got streamed
			msg, err := newModel(t, s, func(c *Config) { c.ReasoningSummary = "auto" }).Stream(context.Background(), agent.Request{
				Messages: []agent.Message{{Role: "system", Content: "Be brief."}, {Role: "user", Content: "Weather in Paris?"}},
				Tools:    weatherTools, MaxTokens: 500,
			}, got.stream())
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff([]string{"**Checking the weather**\n\nThe user asks about Paris", ", so I call get_weather."}, got.reasoning); diff != "" {
				t.Errorf("reasoning (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff([]string{"Checking ", "Paris."}, got.text); diff != "" {
				t.Errorf("text (-want +got):\n%s", diff)
			}
			id := "call_unLAR8MvFNptuiZK6K6HCy5k"
			wantCalls := []agent.ToolCallDelta{
				{Index: 0, ID: id, Name: "get_weather"},
				{Index: 0, ID: id, Name: "get_weather", ArgumentsDelta: `{"location":`},
				{Index: 0, ID: id, Name: "get_weather", ArgumentsDelta: `"Paris, France"}`},
			}
			if diff := cmp.Diff(wantCalls, got.calls); diff != "" {
				t.Errorf("tool call pieces (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff([]agent.Usage{{InputTokens: 310, OutputTokens: 96, CachedInputTokens: 128, ReasoningTokens: 64}}, got.usage); diff != "" {
				t.Errorf("usage (-want +got):\n%s", diff)
			}
			want := agent.Message{Role: "assistant", Content: "Checking Paris.", FinishReason: "tool_calls", Model: "gpt-5-mini-2025-08-07",
				ToolCalls: []agent.ToolCall{{ID: id, Type: "function", Function: agent.FunctionCall{Name: "get_weather", Arguments: `{"location":"Paris, France"}`}}}}
			state := msg.ProviderState
			msg.ProviderState = nil
			if diff := cmp.Diff(want, msg); diff != "" {
				t.Errorf("message (-want +got):\n%s", diff)
			}
			if !strings.Contains(string(state), `"openai-responses":[{"id":"rs_67c9fdcf37fc8190ba82116e","type":"reasoning"`) {
				t.Errorf("provider state = %s; want the reasoning item", state)
			}

			// The request: the API's shapes.
			if s.paths[0] != "/v1/responses" || s.headers[0].Get("Authorization") != "Bearer "+testKey {
				t.Errorf("request to %s with Authorization %q", s.paths[0], s.headers[0].Get("Authorization"))
			}
			req := s.body(t, 0)
			wantReq := map[string]any{
				"model": "gpt-5-mini", "instructions": "Be brief.", "stream": true, "max_output_tokens": float64(500),
				"input":       []any{map[string]any{"type": "message", "role": "user", "content": "Weather in Paris?"}},
				"tool_choice": "auto", "reasoning": map[string]any{"summary": "auto"},
			}
			var tools any
			json.Unmarshal(weatherTools, &tools)
			wantReq["tools"] = tools
			if diff := cmp.Diff(wantReq, req); diff != "" {
				t.Errorf("request (-want +got):\n%s", diff)
			}
		})
	}
}

// TestConversationGoesBack: the answer's reasoning item, its function
// call and the tool's output go back as input items, in order; Chat
// Completions tools are flattened.
func TestConversationGoesBack(t *testing.T) {
	body := recorded(t)
	s := startServer(t, func(w http.ResponseWriter, r *http.Request) { writeSSE(w, body, 1<<20) })
	m := newModel(t, s, nil)
	conv := []agent.Message{{Role: "user", Content: "Weather in Paris?"}}
	msg, err := m.Generate(context.Background(), agent.Request{Messages: conv}, nil)
	if err != nil {
		t.Fatal(err)
	}
	conv = append(conv, msg, agent.Message{Role: "tool", ToolCallID: msg.ToolCalls[0].ID, Content: "Sunny, 21 °C"})
	chatTools := json.RawMessage(`[{"type":"function","function":{"name":"get_weather","description":"d","parameters":null}}]`)
	if _, err := m.Generate(context.Background(), agent.Request{Messages: conv, Tools: chatTools}, nil); err != nil {
		t.Fatal(err)
	}
	req := s.body(t, 1)
	want := []any{
		map[string]any{"type": "message", "role": "user", "content": "Weather in Paris?"},
		map[string]any{"id": "rs_67c9fdcf37fc8190ba82116e", "type": "reasoning", "summary": []any{map[string]any{"type": "summary_text", "text": "**Checking the weather**\n\nThe user asks about Paris, so I call get_weather."}}},
		map[string]any{"type": "message", "role": "assistant", "content": "Checking Paris."},
		map[string]any{"type": "function_call", "call_id": "call_unLAR8MvFNptuiZK6K6HCy5k", "name": "get_weather", "arguments": `{"location":"Paris, France"}`},
		map[string]any{"type": "function_call_output", "call_id": "call_unLAR8MvFNptuiZK6K6HCy5k", "output": "Sunny, 21 °C"},
	}
	if diff := cmp.Diff(want, req["input"]); diff != "" {
		t.Errorf("input (-want +got):\n%s", diff)
	}
	wantTools := []any{map[string]any{"type": "function", "name": "get_weather", "description": "d", "parameters": map[string]any{"type": "object", "properties": map[string]any{}}, "strict": false}}
	if diff := cmp.Diff(wantTools, req["tools"]); diff != "" {
		t.Errorf("tools (-want +got):\n%s", diff)
	}
}

func TestErrors(t *testing.T) {
	cut := recorded(t)
	cut = cut[:strings.Index(cut, "event: response.completed")]
	tests := []struct {
		name       string
		h          http.HandlerFunc
		code       mcperr.Code
		status     int
		errCode    string
		msgContain string
	}{
		{"401 echoing the key", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(401)
			fmt.Fprintf(w, `{"error":{"message":"Incorrect API key provided: %s.","type":"invalid_request_error","param":null,"code":"invalid_api_key"}}`, testKey)
		}, mcperr.HTTP, 401, "invalid_api_key", "Incorrect API key provided: [redacted]."},
		{"response.failed", func(w http.ResponseWriter, r *http.Request) {
			writeSSE(w, "event: response.created\ndata: {\"type\":\"response.created\",\"response\":{\"status\":\"in_progress\"}}\n\n"+
				"event: response.failed\ndata: {\"type\":\"response.failed\",\"response\":{\"status\":\"failed\",\"error\":{\"code\":\"server_error\",\"message\":\"The model failed.\"}}}\n\n", 1<<20)
		}, mcperr.HTTP, 500, "server_error", "The model failed."},
		{"error event", func(w http.ResponseWriter, r *http.Request) {
			writeSSE(w, "event: error\ndata: {\"type\":\"error\",\"code\":\"rate_limit_exceeded\",\"message\":\"Slow down.\",\"param\":null}\n\n", 1<<20)
		}, mcperr.HTTP, 429, "rate_limit_exceeded", "Slow down."},
		{"cut before response.completed", func(w http.ResponseWriter, r *http.Request) { writeSSE(w, cut, 64) },
			mcperr.Network, 0, "", "ended before response.completed"},
		{"not an event stream", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html")
			io.WriteString(w, "<html>")
		}, mcperr.Protocol, 0, "", "expected an event stream"},
		{"error event with an error object", func(w http.ResponseWriter, r *http.Request) {
			writeSSE(w, "event: error\ndata: {\"type\":\"error\",\"error\":{\"code\":\"rate_limit_exceeded\",\"message\":\"Slow down.\"}}\n\n", 1<<20)
		}, mcperr.HTTP, 429, "rate_limit_exceeded", "Slow down."},
		{"response.failed without an error", func(w http.ResponseWriter, r *http.Request) {
			writeSSE(w, "event: response.failed\ndata: {\"type\":\"response.failed\",\"response\":{\"status\":\"failed\"}}\n\n", 1<<20)
		}, mcperr.Protocol, 0, "", "response.failed without an error"},
		{"response.completed without its response", func(w http.ResponseWriter, r *http.Request) {
			writeSSE(w, "event: response.completed\ndata: {\"type\":\"response.completed\"}\n\n", 1<<20)
		}, mcperr.Protocol, 0, "", "response.completed without its response"},
		{"item added without its item", func(w http.ResponseWriter, r *http.Request) {
			writeSSE(w, "event: response.output_item.added\ndata: {\"type\":\"response.output_item.added\",\"output_index\":0}\n\n", 1<<20)
		}, mcperr.Protocol, 0, "", "without output_index or item"},
		{"bad item", func(w http.ResponseWriter, r *http.Request) {
			writeSSE(w, "event: response.function_call_arguments.delta\ndata: {\"type\":\"response.function_call_arguments.delta\",\"output_index\":3,\"delta\":\"{\"}\n\n", 1<<20)
		}, mcperr.Protocol, 0, "", "never started"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := startServer(t, tt.h)
			var got streamed
			_, err := newModel(t, s, nil).Stream(context.Background(), agent.Request{Messages: []agent.Message{{Role: "user", Content: "hi"}}}, got.stream())
			if err == nil {
				t.Fatal("no error")
			}
			if c := mcperr.CodeOf(err, ""); c != tt.code {
				t.Errorf("code %q; want %q (%v)", c, tt.code, err)
			}
			if !strings.Contains(err.Error(), tt.msgContain) || strings.Contains(err.Error(), testKey) {
				t.Errorf("err = %v; want it to say %q without the key", err, tt.msgContain)
			}
			var pe *agent.ProviderError
			if tt.status != 0 && (!errors.As(err, &pe) || pe.Status != tt.status || pe.Code != tt.errCode) {
				t.Errorf("err = %#v; want status %d code %q", err, tt.status, tt.errCode)
			}
			if len(got.usage) != 0 {
				t.Errorf("usage %v reported for a failed answer", got.usage)
			}
		})
	}
}

// TestArgumentsOnlyInDoneAndSummaryParts: a function call whose arguments
// come only in function_call_arguments.done gets them; a second reasoning
// summary part streams after a blank line.
func TestArgumentsOnlyInDoneAndSummaryParts(t *testing.T) {
	ev := func(data string) string {
		var e struct{ Type string }
		json.Unmarshal([]byte(data), &e)
		return "event: " + e.Type + "\ndata: " + data + "\n\n"
	}
	s := startServer(t, func(w http.ResponseWriter, r *http.Request) {
		writeSSE(w, ev(`{"type":"response.output_item.added","output_index":0,"item":{"type":"reasoning","id":"rs_1","summary":[]}}`)+
			ev(`{"type":"response.reasoning_summary_text.delta","output_index":0,"summary_index":0,"delta":"First."}`)+
			ev(`{"type":"response.reasoning_summary_text.delta","output_index":0,"summary_index":1,"delta":"Second."}`)+
			ev(`{"type":"response.output_item.added","output_index":1,"item":{"type":"function_call","id":"fc_1","call_id":"call_1","name":"add","arguments":""}}`)+
			ev(`{"type":"response.function_call_arguments.done","output_index":1,"arguments":"{\"a\":2}"}`)+
			ev(`{"type":"response.completed","response":{"status":"completed","model":"gpt-5-mini"}}`), 1<<20)
	})
	var got streamed
	msg, err := newModel(t, s, nil).Stream(context.Background(), agent.Request{Messages: []agent.Message{{Role: "user", Content: "add"}}}, got.stream())
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"First.", "\n\nSecond."}, got.reasoning); diff != "" {
		t.Errorf("reasoning (-want +got):\n%s", diff)
	}
	want := []agent.ToolCall{{ID: "call_1", Type: "function", Function: agent.FunctionCall{Name: "add", Arguments: `{"a":2}`}}}
	if diff := cmp.Diff(want, msg.ToolCalls); diff != "" || msg.FinishReason != "tool_calls" {
		t.Errorf("finish %q, tool calls (-want +got):\n%s", msg.FinishReason, diff)
	}
}

// TestIncompleteAndJSON: an answer cut by max_output_tokens finishes with
// "length"; a non-streamed Response is read too.
func TestIncompleteAndJSON(t *testing.T) {
	s := startServer(t, func(w http.ResponseWriter, r *http.Request) {
		writeSSE(w, "event: response.output_item.added\ndata: {\"type\":\"response.output_item.added\",\"output_index\":0,\"item\":{\"type\":\"message\",\"id\":\"msg_1\",\"content\":[]}}\n\n"+
			"event: response.output_text.delta\ndata: {\"type\":\"response.output_text.delta\",\"output_index\":0,\"delta\":\"Once upon\"}\n\n"+
			"event: response.incomplete\ndata: {\"type\":\"response.incomplete\",\"response\":{\"status\":\"incomplete\",\"incomplete_details\":{\"reason\":\"max_output_tokens\"},\"usage\":{\"input_tokens\":5,\"output_tokens\":2}}}\n\n", 7)
	})
	msg, err := newModel(t, s, nil).Generate(context.Background(), agent.Request{Messages: []agent.Message{{Role: "user", Content: "A story"}}}, nil)
	if err != nil || msg.Content != "Once upon" || msg.FinishReason != "length" {
		t.Errorf("got %+v, %v; want the text so far, finish length", msg, err)
	}

	j := startServer(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"id":"resp_1","object":"response","status":"completed","model":"gpt-5-mini","error":null,"output":[`+
			`{"type":"message","id":"msg_1","role":"assistant","content":[{"type":"output_text","text":"Let me add.","annotations":[]}]},`+
			`{"type":"function_call","id":"fc_1","call_id":"call_1","name":"add","arguments":"{\"a\":2,\"b\":40}"}],`+
			`"usage":{"input_tokens":20,"output_tokens":8,"input_tokens_details":{"cached_tokens":0},"output_tokens_details":{"reasoning_tokens":0}}}`)
	})
	var got streamed
	msg, err = newModel(t, j, nil).Stream(context.Background(), agent.Request{Messages: []agent.Message{{Role: "user", Content: "add 2 and 40"}}}, got.stream())
	if err != nil {
		t.Fatal(err)
	}
	want := agent.Message{Role: "assistant", Content: "Let me add.", FinishReason: "tool_calls", Model: "gpt-5-mini",
		ToolCalls: []agent.ToolCall{{ID: "call_1", Type: "function", Function: agent.FunctionCall{Name: "add", Arguments: `{"a":2,"b":40}`}}}}
	if diff := cmp.Diff(want, msg); diff != "" {
		t.Errorf("message (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]agent.Usage{{InputTokens: 20, OutputTokens: 8}}, got.usage); diff != "" {
		t.Errorf("usage (-want +got):\n%s", diff)
	}
}

func TestNewChecks(t *testing.T) {
	c := &http.Client{}
	tests := []struct {
		cfg  Config
		want string
	}{
		{Config{Model: "m", HTTPClient: c}, "APIKey is required"},
		{Config{BaseURL: "ftp://x", Model: "m", HTTPClient: c}, "not an http(s) URL"},
		{Config{BaseURL: "http://127.0.0.1/v1", HTTPClient: c}, "Model is required"},
		{Config{BaseURL: "http://127.0.0.1/v1", Model: "m"}, "HTTPClient is required"},
		{Config{BaseURL: "http://127.0.0.1/v1", Model: "m", HTTPClient: c, ReasoningSummary: "long"}, "ReasoningSummary must be"},
	}
	for _, tt := range tests {
		_, err := New(tt.cfg)
		if mcperr.CodeOf(err, "") != mcperr.InvalidArgument || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("New(%+v) = %v; want invalid_argument saying %q", tt.cfg, err, tt.want)
		}
	}
}
