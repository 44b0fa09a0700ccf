package agent_test

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpwasm/mcpwasm/agent"
)

func TestMessageJSON(t *testing.T) {
	tests := []struct {
		msg  agent.Message
		want string
	}{
		{agent.Message{Role: "user", Content: "hi", FinishReason: "stop", Model: "m"}, `{"role":"user","content":"hi"}`},
		{agent.Message{Role: "assistant", ToolCalls: []agent.ToolCall{{ID: "c1", Function: agent.FunctionCall{Name: "f", Arguments: "{}"}}}},
			`{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"{}"}}]}`},
		{agent.Message{Role: "tool", ToolCallID: "c1", Content: ""}, `{"role":"tool","content":"","tool_call_id":"c1"}`},
	}
	for _, tt := range tests {
		b, err := json.Marshal(tt.msg)
		if err != nil || string(b) != tt.want {
			t.Errorf("Marshal(%+v) = %s, %v; want %s", tt.msg, b, err, tt.want)
		}
	}
	var got []agent.Message
	err := json.Unmarshal([]byte(`[
		{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"{\"a\":1}"}}]},
		{"role":"user","content":[{"type":"text","text":"Hel"},{"type":"image_url","image_url":{"url":"x"}},{"type":"text","text":"lo"}]},
		{"role":"tool","tool_call_id":"c1","content":"ok"}]`), &got)
	if err != nil {
		t.Fatal(err)
	}
	want := []agent.Message{
		{Role: "assistant", ToolCalls: []agent.ToolCall{{ID: "c1", Type: "function", Function: agent.FunctionCall{Name: "f", Arguments: `{"a":1}`}}}},
		{Role: "user", Content: "Hello"},
		{Role: "tool", ToolCallID: "c1", Content: "ok"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Unmarshal (-want +got):\n%s", diff)
	}
	if err := json.Unmarshal([]byte(`{"role":"user","content":42}`), new(agent.Message)); err == nil {
		t.Error("numeric content accepted")
	}
}

func TestHasTools(t *testing.T) {
	for raw, want := range map[string]bool{"": false, "null": false, "[]": false, " [ \n ] ": false, `[{"type":"function"}]`: true} {
		if got := (agent.Request{Tools: json.RawMessage(raw)}).HasTools(); got != want {
			t.Errorf("HasTools(%q) = %v; want %v", raw, got, want)
		}
	}
}

func TestEventJSON(t *testing.T) {
	tests := []struct {
		ev   agent.Event
		want string
	}{
		{agent.Event{Type: agent.EventText, Data: &agent.TextEvent{Delta: "Hel"}}, `{"type":"text","delta":"Hel"}`},
		{agent.Event{Type: agent.EventToolCall, Data: &agent.ToolCallEvent{ID: "c", Name: "gh_search", ServerID: "gh", Tool: "search", Arguments: "{}"}},
			`{"type":"toolcall","id":"c","name":"gh_search","serverId":"gh","tool":"search","arguments":"{}"}`},
		{agent.Event{Type: agent.EventToolResult, Data: &agent.ToolResultEvent{ID: "c", Name: "x", Text: "t"}},
			`{"type":"toolresult","id":"c","name":"x","isError":false,"text":"t"}`},
		{agent.Event{Type: agent.EventProgress, Data: &agent.ProgressEvent{ID: "c", Name: "x", Progress: 1, Total: 4}},
			`{"type":"progress","id":"c","name":"x","progress":1,"total":4}`},
		{agent.Event{Type: agent.EventAuthRequired, Data: &agent.AuthRequiredEvent{ServerID: "gh"}}, `{"type":"authrequired","serverId":"gh"}`},
		{agent.Event{Type: agent.EventApproval, Data: &agent.ApprovalEvent{ServerID: "gh", Tool: "t", Name: "gh_t"}},
			`{"type":"approval","serverId":"gh","tool":"t","name":"gh_t","approved":false}`},
		{agent.Event{Type: agent.EventStep, Data: &agent.StepEvent{Index: 0, FinishReason: "tool_calls"}}, `{"type":"step","index":0,"finishReason":"tool_calls"}`},
		{agent.Event{Type: agent.EventDone, Data: &agent.DoneEvent{Text: "hi", FinishReason: "stop", Steps: 1}}, `{"type":"done","text":"hi","finishReason":"stop","steps":1}`},
		{agent.Event{Type: agent.EventError, Data: &agent.ErrorEvent{Code: "aborted", Message: "agent: aborted"}}, `{"type":"error","code":"aborted","message":"agent: aborted"}`},
		{agent.Event{Type: "custom"}, `{"type":"custom"}`},
	}
	for _, tt := range tests {
		b, err := json.Marshal(tt.ev)
		if err != nil || string(b) != tt.want {
			t.Errorf("Marshal(%s) = %s, %v; want %s", tt.ev.Type, b, err, tt.want)
		}
	}
}

func TestSecret(t *testing.T) {
	const key = "sk-abcdefghijklmnopqrstuvwxyz"
	s := agent.NewSecret(key)
	type holder struct {
		Public agent.Secret
		hidden agent.Secret
	}
	h := holder{s, s}
	var b strings.Builder
	slog.New(slog.NewTextHandler(&b, nil)).Info("x", "key", s, "holder", h)
	slog.New(slog.NewJSONHandler(&b, nil)).Info("x", "key", s, "holder", h)
	js, _ := json.Marshal(h)
	outs := []string{
		fmt.Sprint(s), fmt.Sprintf("%s|%q|%x|%d|%v|%+v|%#v", s, s, s, s, s, s, s),
		fmt.Sprintf("%v|%+v|%#v", h, h, h), fmt.Sprintf("%+v", &h), b.String(), string(js), s.String(), s.GoString(),
	}
	for _, out := range outs {
		if strings.Contains(out, key) || strings.Contains(out, key[3:15]) {
			t.Errorf("output leaks the key: %s", out)
		}
	}
	if !strings.Contains(string(js), `"Public":"[redacted]"`) {
		t.Errorf("JSON = %s", js)
	}
	if s.Reveal() != key || s.IsZero() || !agent.NewSecret("").IsZero() || (agent.Secret{}).String() != "" {
		t.Error("Reveal/IsZero")
	}
	for in, want := range map[string]string{
		"bad key " + key + "!":                       "bad key [redacted]!",
		"prefix sk-abcdefgh… unknown":                "prefix [redacted]… unknown",
		"nothing here":                               "nothing here",
		"short abc is fine; so is sk-":               "short abc is fine; so is sk-",
		`{"error":"invalid key: ` + key[5:20] + `"}`: `{"error":"invalid key: [redacted]"}`,
	} {
		if got := s.Redact(in); got != want {
			t.Errorf("Redact(%q) = %q; want %q", in, got, want)
		}
	}
}
