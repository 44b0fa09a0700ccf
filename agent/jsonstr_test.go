package agent

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestAppendJSONStringIsEncodingJSON checks the hand-written encoder
// against encoding/json, byte for byte.
func TestAppendJSONStringIsEncodingJSON(t *testing.T) {
	cases := []string{"", "plain", `quote " and \ backslash`, "<script>&</script>", "line\nbreak\r\ttab\b\f\x00\x1f\x7f",
		"é ü 漢字 🎉", "\u2028\u2029", "bad \xff utf-8 \xc3", "\xe2\x80", `{"text":"turn 1"}`}
	for c := 0; c < 256; c++ {
		cases = append(cases, string([]byte{byte(c)}), "a"+string([]byte{byte(c)})+"z")
	}
	for _, s := range cases {
		want, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		if got := appendJSONString(nil, s); string(got) != string(want) {
			t.Errorf("appendJSONString(%q) = %s; want %s", s, got, want)
		}
	}
}

// TestMessageMarshalIsWireShape checks Message.MarshalJSON against
// json.Marshal of the wire struct it stands for.
func TestMessageMarshalIsWireShape(t *testing.T) {
	msgs := []Message{
		{Role: RoleUser, Content: "echo <turn> 1"},
		{Role: RoleAssistant, ToolCalls: []ToolCall{{ID: "c1", Function: FunctionCall{Name: "demo_echo", Arguments: `{"text":"a\u2028"}`}}, {ID: "c2", Type: "function", Function: FunctionCall{Name: "x"}}}},
		{Role: RoleAssistant, Content: "both", ToolCalls: []ToolCall{{ID: "c", Function: FunctionCall{Name: "n", Arguments: "{}"}}}},
		{Role: RoleTool, ToolCallID: "c1", Content: "result\n\"quoted\""},
		{Role: RoleAssistant},
		{},
	}
	for _, m := range msgs {
		w := wireMessage{Role: m.Role, ToolCallID: m.ToolCallID}
		if m.Content == "" && len(m.ToolCalls) > 0 {
			w.Content = jsonNull
		} else {
			w.Content, _ = json.Marshal(m.Content)
		}
		for _, tc := range m.ToolCalls {
			if tc.Type == "" {
				tc.Type = "function"
			}
			w.ToolCalls = append(w.ToolCalls, tc)
		}
		want, err := json.Marshal(w)
		if err != nil {
			t.Fatal(err)
		}
		got, err := m.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != string(want) {
			t.Errorf("MarshalJSON(%+v) = %s; want %s", m, got, want)
		}
	}
}

// TestDeltaEventsJSON checks the direct encoding of the streamed events
// against the reflective one.
func TestDeltaEventsJSON(t *testing.T) {
	for _, ev := range []Event{
		{Type: EventText, Data: &TextEvent{Delta: "Hel<lo> \"x\"\n"}},
		{Type: EventReasoning, Data: &ReasoningEvent{Delta: "think \u2028 \xff"}},
		{Type: EventToolCallDelta, Data: &ToolCallDeltaEvent{ID: "call_1", Name: "demo_echo", ArgumentsDelta: `{"te`}},
		{Type: EventToolCallDelta, Data: &ToolCallDeltaEvent{}},
		{Type: EventText, Data: &TextEvent{}},
	} {
		got, ok := ev.deltaJSON()
		if !ok {
			t.Fatalf("deltaJSON(%+v) not taken", ev)
		}
		typ, _ := json.Marshal(ev.Type)
		data, _ := json.Marshal(ev.Data)
		want := `{"type":` + string(typ) + `,` + string(data[1:])
		if string(got) != want {
			t.Errorf("deltaJSON = %s; want %s", got, want)
		}
	}
	if _, ok := (Event{Type: EventStep, Data: &StepEvent{}}).deltaJSON(); ok {
		t.Error("deltaJSON took a step event; want it left to the reflective path")
	}
	withView := Event{Type: EventToolCallDelta, Data: &ToolCallDeltaEvent{ID: "call_1", Name: "clock_get-time", App: &ToolApp{ServerID: "clock", Tool: "get-time", ResourceURI: "ui://clock/view.html"}}}
	if got, err := withView.MarshalJSON(); err != nil || !strings.Contains(string(got), `"app":{"serverId":"clock","tool":"get-time","resourceUri":"ui://clock/view.html"}`) {
		t.Errorf("a toolcalldelta naming its view marshals as %s (%v); want its app", got, err)
	}
}
