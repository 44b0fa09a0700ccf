package anthropic

import (
	"bytes"
	"context"
	"encoding/json"
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

func documentedStream(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("testdata/stream_tool_use_response.txt")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func newModel(t *testing.T, s *server, mod func(*Config)) *Model {
	t.Helper()
	cfg := Config{BaseURL: s.URL, APIKey: agent.NewSecret("sk-ant-test-key-0123456789"), Model: "claude-opus-4-6", MaxTokens: 1024, HTTPClient: s.Client()}
	if mod != nil {
		mod(&cfg)
	}
	m, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func readJSON(t *testing.T, path string) map[string]any {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var v map[string]any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return v
}

// openaiTools converts documented Anthropic tools to the "openai" export
// the agent hands to models.
func openaiTools(t *testing.T, tools any) json.RawMessage {
	t.Helper()
	var out []map[string]any
	for _, tl := range tools.([]any) {
		m := tl.(map[string]any)
		out = append(out, map[string]any{"type": "function", "function": map[string]any{
			"name": m["name"], "description": m["description"], "parameters": m["input_schema"],
		}})
	}
	b, err := json.Marshal(out)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestStreamingToolUseMatchesDocumentation(t *testing.T) {
	for _, n := range []int{1, 5, 64, 1 << 20} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			stream := documentedStream(t)
			s := startServer(t, func(w http.ResponseWriter, r *http.Request) { writeSSE(w, stream, n) })
			doc := readJSON(t, "testdata/stream_tool_use_request.json")
			var deltas []string
			msg, err := newModel(t, s, nil).Generate(context.Background(), agent.Request{
				Messages: []agent.Message{{Role: agent.RoleUser, Content: "What is the weather like in San Francisco?"}},
				Tools:    openaiTools(t, doc["tools"]),
			}, func(d string) { deltas = append(deltas, d) })
			if err != nil {
				t.Fatal(err)
			}

			// The request: the documented body, without its tool_choice
			// (the agent leaves the choice to the model).
			delete(doc, "tool_choice")
			var got map[string]any
			if err := json.Unmarshal(s.bodies[0], &got); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(doc, got); diff != "" {
				t.Errorf("request body (-documented +sent):\n%s", diff)
			}
			h := s.headers[0]
			for k, want := range map[string]string{
				"X-Api-Key":         "sk-ant-test-key-0123456789",
				"Anthropic-Version": "2023-06-01",
				"Anthropic-Dangerous-Direct-Browser-Access": "true",
				"Content-Type": "application/json",
			} {
				if got := h.Get(k); got != want {
					t.Errorf("header %s = %q; want %q", k, got, want)
				}
			}
			if s.paths[0] != "/v1/messages" {
				t.Errorf("path = %q", s.paths[0])
			}

			// The answer.
			want := agent.Message{
				Role:         "assistant",
				Content:      "Okay, let's check the weather for San Francisco, CA:",
				FinishReason: "tool_calls",
				Model:        "claude-opus-4-6",
				ToolCalls: []agent.ToolCall{{ID: "toolu_01T1x1fJ34qAmk2tNTrN7Up6", Type: "function", Function: agent.FunctionCall{
					Name: "get_weather", Arguments: `{"location": "San Francisco, CA", "unit": "fahrenheit"}`}}},
			}
			if diff := cmp.Diff(want, msg); diff != "" {
				t.Errorf("message (-want +got):\n%s", diff)
			}
			if len(deltas) != 13 || strings.Join(deltas, "") != want.Content {
				t.Errorf("deltas = %q; want the 13 documented text deltas", deltas)
			}
		})
	}
}

func TestToolResultRequestMatchesDocumentation(t *testing.T) {
	s := startServer(t, func(w http.ResponseWriter, r *http.Request) { writeSSE(w, documentedStream(t), 1<<20) })
	doc := readJSON(t, "testdata/tool_result_request.json")
	m := newModel(t, s, func(c *Config) { c.Model = "claude-sonnet-4-5" })
	_, err := m.Generate(context.Background(), agent.Request{
		Messages: []agent.Message{
			{Role: agent.RoleUser, Content: "What is the weather like in San Francisco?"},
			{Role: agent.RoleAssistant, Content: "I'll check the current weather in San Francisco for you.", ToolCalls: []agent.ToolCall{{
				ID: "toolu_01A09q90qw90lq917835lq9", Function: agent.FunctionCall{Name: "get_weather", Arguments: `{"location": "San Francisco, CA", "unit": "celsius"}`}}}},
			{Role: agent.RoleTool, ToolCallID: "toolu_01A09q90qw90lq917835lq9", Content: "15 degrees"},
		},
		Tools: openaiTools(t, doc["tools"]),
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	doc["stream"] = true
	var got map[string]any
	json.Unmarshal(s.bodies[0], &got)
	if diff := cmp.Diff(doc, got); diff != "" {
		t.Errorf("request body (-documented +sent):\n%s", diff)
	}
}

func TestConvertMessages(t *testing.T) {
	system, msgs := convertMessages([]agent.Message{
		{Role: agent.RoleSystem, Content: "Be brief."},
		{Role: agent.RoleUser, Content: "add 2 and 40 and echo hi"},
		{Role: agent.RoleAssistant, ToolCalls: []agent.ToolCall{
			{ID: "a", Function: agent.FunctionCall{Name: "calc_add", Arguments: `{"a":2,"b":40}`}},
			{ID: "b", Function: agent.FunctionCall{Name: "text_echo", Arguments: `{"text": "unterminated`}},
		}},
		{Role: agent.RoleTool, ToolCallID: "a", Content: "42"},
		{Role: agent.RoleTool, ToolCallID: "b", Content: "The arguments are not valid JSON."},
		{Role: agent.RoleUser, Content: "And now?"},
		{Role: agent.RoleSystem, Content: "Answer in French."},
		{Role: agent.RoleAssistant, Content: ""}, // an empty answer: dropped
	})
	if want := "Be brief.\n\nAnswer in French."; system != want {
		t.Errorf("system = %q; want %q", system, want)
	}
	got, _ := json.Marshal(msgs)
	var gotV, wantV any
	json.Unmarshal(got, &gotV)
	json.Unmarshal([]byte(`[
		{"role": "user", "content": "add 2 and 40 and echo hi"},
		{"role": "assistant", "content": [
			{"type": "tool_use", "id": "a", "name": "calc_add", "input": {"a": 2, "b": 40}},
			{"type": "tool_use", "id": "b", "name": "text_echo", "input": {}}]},
		{"role": "user", "content": [
			{"type": "tool_result", "tool_use_id": "a", "content": "42"},
			{"type": "tool_result", "tool_use_id": "b", "content": "The arguments are not valid JSON."},
			{"type": "text", "text": "And now?"}]}
	]`), &wantV)
	if diff := cmp.Diff(wantV, gotV); diff != "" {
		t.Errorf("messages (-want +got):\n%s", diff)
	}
}

func TestConvertToolsWithoutParameters(t *testing.T) {
	tools, err := convertTools(json.RawMessage(`[{"type":"function","function":{"name":"ping"}}]`))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(tools)
	if want := `[{"name":"ping","input_schema":{"type":"object","properties":{}}}]`; string(b) != want {
		t.Errorf("tools = %s; want %s", b, want)
	}
	if _, err := convertTools(json.RawMessage(`{"not":"an array"}`)); mcperr.CodeOf(err, "") != mcperr.InvalidArgument {
		t.Errorf("err = %v; want invalid_argument", err)
	}
}

func TestErrors(t *testing.T) {
	const key = "sk-ant-api03-abcdefghijklmnop"
	head := "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"model\":\"m\"}}\n\n" +
		"event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n"
	tests := []struct {
		name       string
		handler    http.HandlerFunc
		wantCode   mcperr.Code
		wantStatus int
		wantIn     string
	}{
		{
			name: "error status echoing the key",
			handler: func(w http.ResponseWriter, r *http.Request) {
				w.WriteHeader(401)
				fmt.Fprintf(w, `{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key %s"}}`, r.Header.Get("X-Api-Key"))
			},
			wantCode: mcperr.HTTP, wantStatus: 401, wantIn: "anthropic: HTTP 401 (authentication_error): invalid x-api-key [redacted]. Check the API key",
		},
		{
			name: "overloaded inside the stream",
			handler: func(w http.ResponseWriter, r *http.Request) {
				writeSSE(w, head+"event: error\ndata: {\"type\": \"error\", \"error\": {\"type\": \"overloaded_error\", \"message\": \"Overloaded\"}}\n\n", 3)
			},
			wantCode: mcperr.HTTP, wantStatus: 529, wantIn: "Overloaded",
		},
		{
			name: "stream ends before message_stop",
			handler: func(w http.ResponseWriter, r *http.Request) {
				writeSSE(w, head, 3)
			},
			wantCode: mcperr.Network, wantIn: "before message_stop",
		},
		{
			name: "stream cut mid-event",
			handler: func(w http.ResponseWriter, r *http.Request) {
				writeSSE(w, head+"event: content_block_delta\ndata: {\"type\":\"content_blo", 3)
			},
			wantCode: mcperr.Network, wantIn: "broke off",
		},
		{
			name: "delta for a block that never started",
			handler: func(w http.ResponseWriter, r *http.Request) {
				writeSSE(w, head+"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":5,\"delta\":{\"type\":\"text_delta\",\"text\":\"x\"}}\n\n", 64)
			},
			wantCode: mcperr.Protocol, wantIn: "never started",
		},
		{
			name: "a block started without its content_block",
			handler: func(w http.ResponseWriter, r *http.Request) {
				writeSSE(w, head+"event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":1}\n\n", 64)
			},
			wantCode: mcperr.Protocol, wantIn: "without index or content_block",
		},
		{
			name: "a block started twice",
			handler: func(w http.ResponseWriter, r *http.Request) {
				writeSSE(w, head+"event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n", 64)
			},
			wantCode: mcperr.Protocol, wantIn: "bad or repeated index 0",
		},
		{
			name: "a delta without its delta",
			handler: func(w http.ResponseWriter, r *http.Request) {
				writeSSE(w, head+"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0}\n\n", 64)
			},
			wantCode: mcperr.Protocol, wantIn: "without a delta",
		},
		{
			name: "a stop for a block that never started",
			handler: func(w http.ResponseWriter, r *http.Request) {
				writeSSE(w, head+"event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":3}\n\n", 64)
			},
			wantCode: mcperr.Protocol, wantIn: "never started",
		},
		{
			name: "an error event without its error",
			handler: func(w http.ResponseWriter, r *http.Request) {
				writeSSE(w, head+"event: error\ndata: {\"type\":\"error\"}\n\n", 64)
			},
			wantCode: mcperr.Protocol, wantIn: "an error event without an error",
		},
		{
			name: "input_json_delta for a text block",
			handler: func(w http.ResponseWriter, r *http.Request) {
				writeSSE(w, head+"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"{\"}}\n\n", 64)
			},
			wantCode: mcperr.Protocol, wantIn: "input_json_delta for a text block",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := startServer(t, tt.handler)
			m := newModel(t, s, func(c *Config) { c.APIKey = agent.NewSecret(key) })
			_, err := m.Generate(context.Background(), agent.Request{Messages: []agent.Message{{Role: "user", Content: "x"}}}, nil)
			if err == nil {
				t.Fatal("no error")
			}
			if got := mcperr.CodeOf(err, ""); got != tt.wantCode {
				t.Errorf("code = %q; want %q (%v)", got, tt.wantCode, err)
			}
			if got := mcperr.StatusOf(err); got != tt.wantStatus {
				t.Errorf("status = %d; want %d", got, tt.wantStatus)
			}
			if !strings.Contains(err.Error(), tt.wantIn) {
				t.Errorf("error %q does not contain %q", err, tt.wantIn)
			}
			if strings.Contains(fmt.Sprintf("%+v", err), key[10:]) {
				t.Errorf("error leaks the key: %v", err)
			}
		})
	}
}

func TestNonStreamedMessage(t *testing.T) {
	s := startServer(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"id":"msg_1","type":"message","role":"assistant","model":"claude-x","content":[
			{"type":"text","text":"I'll check."},
			{"type":"tool_use","id":"toolu_1","name":"get_weather","input":{"location":"Paris"}}],
			"stop_reason":"tool_use"}`)
	})
	msg, err := newModel(t, s, nil).Generate(context.Background(), agent.Request{Messages: []agent.Message{{Role: "user", Content: "x"}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := agent.Message{Role: "assistant", Content: "I'll check.", FinishReason: "tool_calls", Model: "claude-x",
		ToolCalls: []agent.ToolCall{{ID: "toolu_1", Type: "function", Function: agent.FunctionCall{Name: "get_weather", Arguments: `{"location":"Paris"}`}}}}
	if diff := cmp.Diff(want, msg); diff != "" {
		t.Errorf("message (-want +got):\n%s", diff)
	}
}

func TestNewValidates(t *testing.T) {
	tests := map[string]Config{
		"no model":        {HTTPClient: http.DefaultClient, APIKey: agent.NewSecret("k")},
		"no client":       {Model: "m", APIKey: agent.NewSecret("k")},
		"no key":          {Model: "m", HTTPClient: http.DefaultClient},
		"negative tokens": {Model: "m", HTTPClient: http.DefaultClient, APIKey: agent.NewSecret("k"), MaxTokens: -1},
	}
	for name, cfg := range tests {
		if _, err := New(cfg); mcperr.CodeOf(err, "") != mcperr.InvalidArgument || !strings.HasPrefix(err.Error(), "anthropic: ") {
			t.Errorf("%s: err = %v; want an anthropic: invalid_argument error", name, err)
		}
	}
	// A proxy may hold the key.
	if _, err := New(Config{Model: "m", HTTPClient: http.DefaultClient, BaseURL: "https://proxy.example"}); err != nil {
		t.Errorf("proxy without key: %v", err)
	}
}
