package model_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpwasm/mcpwasm/agent"
	"github.com/mcpwasm/mcpwasm/agent/gemini"
	"github.com/mcpwasm/mcpwasm/agent/openairesponses"
	"github.com/mcpwasm/mcpwasm/demo/model"
)

// TestOtherWireFormats: the stand-in speaks the Responses API and Gemini's
// streamGenerateContent as the adapters read them: a turn calls the add
// tool with the script's arguments, streaming reasoning (a summary, or
// thoughts) and usage, and answers the tool's result with "Results: …".
func TestOtherWireFormats(t *testing.T) {
	_, srv := start(t, model.Options{})
	responses, err := openairesponses.New(openairesponses.Config{BaseURL: srv.URL + "/v1", Model: model.ModelID, HTTPClient: srv.Client(),
		MaxRetries: -1, ReasoningSummary: "auto"})
	if err != nil {
		t.Fatal(err)
	}
	gem, err := gemini.New(gemini.Config{BaseURL: srv.URL + "/v1beta", Model: model.ModelID, HTTPClient: srv.Client(), MaxRetries: -1, IncludeThoughts: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name  string
		model agent.StreamingModel
		tools string
	}{
		{"responses", responses, `[{"type":"function","name":"calc_add","parameters":{"type":"object"}},{"type":"function","name":"text_echo","parameters":{"type":"object"}}]`},
		{"gemini", gem, `[{"functionDeclarations":[{"name":"calc_add"},{"name":"text_echo"}]}]`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var reasoning, text strings.Builder
			var usage []agent.Usage
			var pieces []agent.ToolCallDelta
			st := agent.Stream{Reasoning: func(d string) { reasoning.WriteString(d) }, Text: func(d string) { text.WriteString(d) },
				Usage: func(u agent.Usage) { usage = append(usage, u) }, ToolCall: func(d agent.ToolCallDelta) { pieces = append(pieces, d) }}
			conv := []agent.Message{{Role: "system", Content: "You add."}, {Role: "user", Content: "add 2 and 40"}}
			msg, err := tt.model.Stream(context.Background(), agent.Request{Messages: conv, Tools: json.RawMessage(tt.tools)}, st)
			if err != nil {
				t.Fatal(err)
			}
			if len(msg.ToolCalls) != 1 || msg.ToolCalls[0].Function.Name != "calc_add" || msg.ToolCalls[0].Function.Arguments != `{"a":2,"b":40}` || msg.FinishReason != "tool_calls" {
				t.Fatalf("answer %+v; want a call of calc_add", msg)
			}
			if want := "The message matches my script for calc_add, so I call it with the arguments it names."; reasoning.String() != want {
				t.Errorf("reasoning %q; want %q", reasoning.String(), want)
			}
			var args string
			for _, p := range pieces {
				args += p.ArgumentsDelta
			}
			if args != `{"a":2,"b":40}` || pieces[0].Name != "calc_add" {
				t.Errorf("tool call pieces %+v", pieces)
			}
			if len(usage) != 1 || usage[0].InputTokens == 0 || usage[0].ReasoningTokens == 0 || usage[0].OutputTokens <= usage[0].ReasoningTokens {
				t.Errorf("usage %+v", usage)
			}
			if msg.ToolCalls[0].ID == "" {
				msg.ToolCalls[0].ID = "call_2_0" // as the agent names a call without an id
			}
			conv = append(conv, msg, agent.Message{Role: "tool", ToolCallID: msg.ToolCalls[0].ID, Content: "2 + 40 = 42"})
			text.Reset()
			msg, err = tt.model.Stream(context.Background(), agent.Request{Messages: conv, Tools: json.RawMessage(tt.tools)}, st)
			if err != nil {
				t.Fatal(err)
			}
			if msg.Content != "Results: 2 + 40 = 42" || text.String() != msg.Content || msg.FinishReason != "stop" {
				t.Errorf("second answer %+v (streamed %q)", msg, text.String())
			}
		})
	}
}

// TestGeminiWantsItsSignatureBack: like Gemini's thinking models, the
// stand-in refuses a function call sent back without its thought
// signature.
func TestGeminiWantsItsSignatureBack(t *testing.T) {
	_, srv := start(t, model.Options{})
	post := func(parts string) (int, string) {
		body := `{"contents":[{"role":"user","parts":[{"text":"add 2 and 40"}]},{"role":"model","parts":[` + parts + `]},` +
			`{"role":"user","parts":[{"functionResponse":{"name":"calc_add","response":{"output":"42"}}}]}],"tools":[{"functionDeclarations":[{"name":"calc_add"}]}]}`
		resp, err := srv.Client().Post(srv.URL+model.GeminiPath+model.ModelID+":generateContent", "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	call := `{"functionCall":{"name":"calc_add","args":{"a":2,"b":40}}`
	if code, body := post(call + `}`); code != http.StatusBadRequest || !strings.Contains(body, "missing a thought_signature") {
		t.Errorf("without the signature: %d %s", code, body)
	}
	code, body := post(call + `,"thoughtSignature":"` + model.ThoughtSignature + `"}`)
	var got struct {
		Candidates []struct {
			Content struct {
				Parts []struct {
					Text string `json:"text"`
				} `json:"parts"`
			} `json:"content"`
			FinishReason string `json:"finishReason"`
		} `json:"candidates"`
	}
	json.Unmarshal([]byte(body), &got)
	want := `Results: 42`
	if code != http.StatusOK || len(got.Candidates) != 1 || len(got.Candidates[0].Content.Parts) != 1 {
		t.Fatalf("with the signature: %d %s", code, body)
	}
	if diff := cmp.Diff(want, got.Candidates[0].Content.Parts[0].Text); diff != "" {
		t.Errorf("answer (-want +got):\n%s", diff)
	}
}
