package openai

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpwasm/mcpwasm/agent"
)

// streamed is what a Stream call passed on, in order.
type streamed struct {
	text, reasoning []string
	calls           []agent.ToolCallDelta
	usage           []agent.Usage
	order           []string // "text", "reasoning", "toolcall", "usage"
}

func (s *streamed) stream() agent.Stream {
	return agent.Stream{
		Text:      func(d string) { s.text = append(s.text, d); s.note("text") },
		Reasoning: func(d string) { s.reasoning = append(s.reasoning, d); s.note("reasoning") },
		ToolCall:  func(d agent.ToolCallDelta) { s.calls = append(s.calls, d); s.note("toolcall") },
		Usage:     func(u agent.Usage) { s.usage = append(s.usage, u); s.note("usage") },
	}
}

func (s *streamed) note(kind string) {
	if n := len(s.order); n == 0 || s.order[n-1] != kind {
		s.order = append(s.order, kind)
	}
}

func fixture(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestStreamToolCallPiecesAndUsage(t *testing.T) {
	body := fixture(t, "usage_tool_stream.txt")
	for _, n := range []int{1, 7, 1 << 20} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			s := startServer(t, func(w http.ResponseWriter, r *http.Request) { writeSSE(w, body, n) })
			var got streamed
			msg, err := newModel(t, s, nil).Stream(context.Background(), agent.Request{Messages: []agent.Message{{Role: "user", Content: "Weather in Boston?"}}}, got.stream())
			if err != nil {
				t.Fatal(err)
			}
			const id = "call_DdmO9pD3xa9XTPNJ32zg2hcA"
			wantCalls := []agent.ToolCallDelta{
				{Index: 0, ID: id, Name: "get_current_weather"},
				{Index: 0, ID: id, Name: "get_current_weather", ArgumentsDelta: `{"`},
				{Index: 0, ID: id, Name: "get_current_weather", ArgumentsDelta: `location`},
				{Index: 0, ID: id, Name: "get_current_weather", ArgumentsDelta: `":"Boston, MA"}`},
			}
			if diff := cmp.Diff(wantCalls, got.calls); diff != "" {
				t.Errorf("tool call pieces (-want +got):\n%s", diff)
			}
			if len(msg.ToolCalls) != 1 || msg.ToolCalls[0].Function.Arguments != `{"location":"Boston, MA"}` {
				t.Errorf("tool calls = %+v", msg.ToolCalls)
			}
			want := []agent.Usage{{InputTokens: 2006, OutputTokens: 300, CachedInputTokens: 1920, ReasoningTokens: 192}}
			if diff := cmp.Diff(want, got.usage); diff != "" {
				t.Errorf("usage (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff([]string{"toolcall", "usage"}, got.order); diff != "" {
				t.Errorf("callback order (-want +got):\n%s", diff)
			}
		})
	}
}

func TestStreamReasoningContent(t *testing.T) {
	body := fixture(t, "reasoning_content_stream.txt")
	s := startServer(t, func(w http.ResponseWriter, r *http.Request) { writeSSE(w, body, 5) })
	var got streamed
	msg, err := newModel(t, s, nil).Stream(context.Background(), agent.Request{Messages: []agent.Message{{Role: "user", Content: "9.11 or 9.8?"}}}, got.stream())
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"9.11 and 9.8: ", "compare the tenths."}, got.reasoning); diff != "" {
		t.Errorf("reasoning (-want +got):\n%s", diff)
	}
	// Reasoning is shown, never part of the answer (nor sent back).
	if msg.Content != "9.8 is greater." || strings.Contains(msg.Content, "tenths") {
		t.Errorf("content = %q", msg.Content)
	}
	if diff := cmp.Diff([]agent.Usage{{InputTokens: 13, OutputTokens: 20, ReasoningTokens: 12}}, got.usage); diff != "" {
		t.Errorf("usage (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"reasoning", "text", "usage"}, got.order); diff != "" {
		t.Errorf("callback order (-want +got):\n%s", diff)
	}
}

// TestStreamReasoningFields: servers name the field reasoning_content or
// reasoning, some send both alike (passed on once), and a shape that is
// not a string is ignored rather than failing the answer.
func TestStreamReasoningFields(t *testing.T) {
	tests := map[string]struct {
		delta string
		want  []string
	}{
		"reasoning_content":   {`{"reasoning_content":"hmm"}`, []string{"hmm"}},
		"reasoning":           {`{"reasoning":"hmm"}`, []string{"hmm"}},
		"both, alike":         {`{"reasoning_content":"hmm","reasoning":"hmm"}`, []string{"hmm"}},
		"an object":           {`{"reasoning":{"effort":"low"}}`, nil},
		"null":                {`{"reasoning":null,"reasoning_content":null}`, nil},
		"a number (ignored)":  {`{"reasoning_content":7}`, nil},
		"empty string":        {`{"reasoning_content":""}`, nil},
		"with content beside": {`{"reasoning":"hmm","content":"Hi"}`, []string{"hmm"}},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			body := "data: {\"choices\":[{\"index\":0,\"delta\":" + tt.delta + "}]}\n\n" +
				"data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"ok\"},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n"
			s := startServer(t, func(w http.ResponseWriter, r *http.Request) { writeSSE(w, body, 64) })
			var got streamed
			if _, err := newModel(t, s, nil).Stream(context.Background(), agent.Request{Messages: []agent.Message{{Role: "user", Content: "x"}}}, got.stream()); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got.reasoning); diff != "" {
				t.Errorf("reasoning (-want +got):\n%s", diff)
			}
		})
	}
}

// TestUsageFromTheNetworkIsChecked: counts a provider cannot mean are
// dropped, a usage that is not an object is none, and neither fails the
// answer.
func TestUsageFromTheNetworkIsChecked(t *testing.T) {
	tests := map[string]struct {
		usage string
		want  []agent.Usage
	}{
		"plain":                 {`{"prompt_tokens":10,"completion_tokens":5,"total_tokens":15}`, []agent.Usage{{InputTokens: 10, OutputTokens: 5}}},
		"negative output":       {`{"prompt_tokens":10,"completion_tokens":-5}`, []agent.Usage{{InputTokens: 10}}},
		"absurd input":          {`{"prompt_tokens":1e15,"completion_tokens":5}`, []agent.Usage{{OutputTokens: 5}}},
		"fraction":              {`{"prompt_tokens":10.5,"completion_tokens":5}`, []agent.Usage{{OutputTokens: 5}}},
		"strings":               {`{"prompt_tokens":"10","completion_tokens":"5"}`, nil},
		"cached beyond input":   {`{"prompt_tokens":10,"completion_tokens":5,"prompt_tokens_details":{"cached_tokens":11}}`, []agent.Usage{{InputTokens: 10, OutputTokens: 5}}},
		"reasoning beyond out":  {`{"prompt_tokens":10,"completion_tokens":5,"completion_tokens_details":{"reasoning_tokens":6}}`, []agent.Usage{{InputTokens: 10, OutputTokens: 5}}},
		"details null":          {`{"prompt_tokens":10,"completion_tokens":5,"prompt_tokens_details":null,"completion_tokens_details":null}`, []agent.Usage{{InputTokens: 10, OutputTokens: 5}}},
		"not an object":         {`[1,2]`, nil},
		"null":                  {`null`, nil},
		"empty object":          {`{}`, nil},
		"details of wrong type": {`{"prompt_tokens":10,"completion_tokens":5,"prompt_tokens_details":{"cached_tokens":true}}`, []agent.Usage{{InputTokens: 10, OutputTokens: 5}}},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			body := "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"ok\"},\"finish_reason\":\"stop\"}]}\n\n" +
				"data: {\"choices\":[],\"usage\":" + tt.usage + "}\n\ndata: [DONE]\n\n"
			s := startServer(t, func(w http.ResponseWriter, r *http.Request) { writeSSE(w, body, 64) })
			var got streamed
			msg, err := newModel(t, s, nil).Stream(context.Background(), agent.Request{Messages: []agent.Message{{Role: "user", Content: "x"}}}, got.stream())
			if err != nil {
				t.Fatal(err)
			}
			if msg.Content != "ok" {
				t.Errorf("content = %q", msg.Content)
			}
			if diff := cmp.Diff(tt.want, got.usage); diff != "" {
				t.Errorf("usage (-want +got):\n%s", diff)
			}
		})
	}
}

// TestRunningUsageTakesTheLast: servers that send a running usage in
// every chunk (vLLM's continuous usage stats) are counted once, by the
// last.
func TestRunningUsageTakesTheLast(t *testing.T) {
	body := "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"a\"}}],\"usage\":{\"prompt_tokens\":7,\"completion_tokens\":1}}\n\n" +
		"data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"b\"},\"finish_reason\":\"stop\"}],\"usage\":{\"prompt_tokens\":7,\"completion_tokens\":2}}\n\ndata: [DONE]\n\n"
	s := startServer(t, func(w http.ResponseWriter, r *http.Request) { writeSSE(w, body, 64) })
	var got streamed
	if _, err := newModel(t, s, nil).Stream(context.Background(), agent.Request{Messages: []agent.Message{{Role: "user", Content: "x"}}}, got.stream()); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]agent.Usage{{InputTokens: 7, OutputTokens: 2}}, got.usage); diff != "" {
		t.Errorf("usage (-want +got):\n%s", diff)
	}
}

// TestToolCallPiecesRebuildTheArguments: over the interleaved stream of
// two calls, cut everywhere, each call's pieces join into its arguments.
func TestToolCallPiecesRebuildTheArguments(t *testing.T) {
	for _, withIndex := range []bool{true, false} {
		for cut := 0; cut <= 19; cut += 3 {
			t.Run(fmt.Sprintf("index=%v/cut=%d", withIndex, cut), func(t *testing.T) {
				body := toolStream(cut, withIndex)
				s := startServer(t, func(w http.ResponseWriter, r *http.Request) { writeSSE(w, body, 5) })
				var got streamed
				msg, err := newModel(t, s, nil).Stream(context.Background(), agent.Request{Messages: []agent.Message{{Role: "user", Content: "x"}}}, got.stream())
				if err != nil {
					t.Fatal(err)
				}
				joined := map[int]string{}
				for _, d := range got.calls {
					if want := fmt.Sprintf("t%d", d.Index); d.Name != want {
						t.Errorf("piece %+v names %q; want %q", d, d.Name, want)
					}
					joined[d.Index] += d.ArgumentsDelta
				}
				for i, tc := range msg.ToolCalls {
					if joined[i] != tc.Function.Arguments {
						t.Errorf("call %d: pieces join to %q; arguments %q", i, joined[i], tc.Function.Arguments)
					}
				}
				if diff := cmp.Diff([]agent.Usage{{InputTokens: 1, OutputTokens: 2}}, got.usage); diff != "" {
					t.Errorf("usage (-want +got):\n%s", diff)
				}
			})
		}
	}
}

func TestNonStreamedUsageAndReasoning(t *testing.T) {
	s := startServer(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"42","reasoning_content":"6 times 7"},"finish_reason":"stop"}],
			"usage":{"prompt_tokens":9,"completion_tokens":4,"completion_tokens_details":{"reasoning_tokens":3}}}`)
	})
	var got streamed
	msg, err := newModel(t, s, nil).Stream(context.Background(), agent.Request{Messages: []agent.Message{{Role: "user", Content: "x"}}}, got.stream())
	if err != nil {
		t.Fatal(err)
	}
	if msg.Content != "42" {
		t.Errorf("content = %q", msg.Content)
	}
	if diff := cmp.Diff([]string{"6 times 7"}, got.reasoning); diff != "" {
		t.Errorf("reasoning (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]agent.Usage{{InputTokens: 9, OutputTokens: 4, ReasoningTokens: 3}}, got.usage); diff != "" {
		t.Errorf("usage (-want +got):\n%s", diff)
	}
}
