package openai

import (
	"encoding/json"
	"net/http"
	"reflect"
	"testing"

	"github.com/mcpwasm/mcpwasm/agent"
)

// chatRequest is the request body as one struct: what body must write.
type chatRequest struct {
	Model               string          `json:"model"`
	Messages            []agent.Message `json:"messages"`
	Tools               json.RawMessage `json:"tools,omitempty"`
	ToolChoice          string          `json:"tool_choice,omitempty"`
	Stream              bool            `json:"stream"`
	StreamOptions       *streamOptions  `json:"stream_options,omitempty"`
	MaxTokens           int             `json:"max_tokens,omitempty"`
	MaxCompletionTokens int             `json:"max_completion_tokens,omitempty"`
	Temperature         *float64        `json:"temperature,omitempty"`
	Stop                []string        `json:"stop,omitempty"`
}

// TestBodyIsChatRequest checks the body put together from its parts
// against json.Marshal of the whole request: the same bytes (the same
// value where the tools hold characters json.Marshal escapes for HTML).
func TestBodyIsChatRequest(t *testing.T) {
	temp := 0.5
	conv := []agent.Message{
		{Role: agent.RoleSystem, Content: "be brief"},
		{Role: agent.RoleUser, Content: "echo turn 1"},
		{Role: agent.RoleAssistant, ToolCalls: []agent.ToolCall{{ID: "call_1", Type: "function", Function: agent.FunctionCall{Name: "demo_echo", Arguments: `{"text":"turn 1"}`}}}},
		{Role: agent.RoleTool, ToolCallID: "call_1", Content: "turn 1"},
	}
	tools := json.RawMessage(` [{"type":"function","function":{"name":"demo_echo","description":"Echo","parameters":{"type":"object","properties":{"text":{"type":"string"}}}}}] `)
	cases := []struct {
		name  string
		param string
		req   agent.Request
		same  bool // byte for byte
	}{
		{"tools", "max_tokens", agent.Request{Messages: conv, Tools: tools}, false},
		{"no tools", "max_tokens", agent.Request{Messages: conv[:2], Tools: json.RawMessage(`[]`), MaxTokens: 10, Temperature: &temp, Stop: []string{"x"}}, true},
		{"max_completion_tokens", "max_completion_tokens", agent.Request{Messages: conv, MaxTokens: 7}, true},
		{"html in tools", "max_tokens", agent.Request{Messages: conv, Tools: json.RawMessage(`[{"type":"function","function":{"name":"a","description":"<b> & </b>"}}]`)}, false},
		{"no messages", "max_tokens", agent.Request{}, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m, err := New(Config{Model: "m<1>", HTTPClient: &http.Client{}, MaxTokensParam: c.param})
			if err != nil {
				t.Fatal(err)
			}
			got, err := m.body(c.req)
			if err != nil {
				t.Fatal(err)
			}
			cr := chatRequest{Model: "m<1>", Messages: c.req.Messages, Stream: true, StreamOptions: &streamOptions{IncludeUsage: true},
				Temperature: c.req.Temperature, Stop: c.req.Stop}
			if c.req.HasTools() {
				cr.Tools, cr.ToolChoice = c.req.Tools, "auto"
			}
			if c.param == "max_completion_tokens" {
				cr.MaxCompletionTokens = c.req.MaxTokens
			} else {
				cr.MaxTokens = c.req.MaxTokens
			}
			want, err := json.Marshal(cr)
			if err != nil {
				t.Fatal(err)
			}
			if c.same && string(got) != string(want) {
				t.Errorf("body = %s\nwant %s", got, want)
			}
			var g, w any
			if err := json.Unmarshal(got, &g); err != nil {
				t.Fatalf("body is not JSON: %v\n%s", err, got)
			}
			_ = json.Unmarshal(want, &w)
			if !reflect.DeepEqual(g, w) {
				t.Errorf("body = %s\nwant the value of %s", got, want)
			}
		})
	}
}

// TestBodyRefusesInvalidTools: tools that are not JSON fail the request
// instead of going out.
func TestBodyRefusesInvalidTools(t *testing.T) {
	m, err := New(Config{Model: "m", HTTPClient: &http.Client{}})
	if err != nil {
		t.Fatal(err)
	}
	if b, err := m.body(agent.Request{Messages: []agent.Message{{Role: agent.RoleUser, Content: "x"}}, Tools: json.RawMessage(`[{"type":`)}); err == nil {
		t.Errorf("body = %s; want an error for tools that are not JSON", b)
	}
}
