package catalog

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpwasm/mcpwasm/mcperr"
)

// The texts malformed calls of echo come back with.
var (
	schemaText  = say(textSchema, "", "demo_echo", `property "text": type: 5 has type "integer", want "string"`)
	notJSONText = say(textNotJSON, "", "demo_echo", "invalid character 'n' looking for beginning of object key string")
)

// One model reply per format: a slow call first, then a fast one, an
// unknown name, malformed arguments, a call without id, schema-violating
// arguments. Results come back one per call, in call order, each saying
// what happened.
func TestHandleToolCalls(t *testing.T) {
	d := startDemo(t)
	cat, _ := newCatalog(t, Config{Servers: servers("demo", d.URL), Factory: clientFactory(t)})
	ctx := ctxT(t)
	slowText := "Finished 3 steps in"
	tests := []struct {
		f     Format
		calls string
		want  []string // each result's text (prefix for the slow call), in order
	}{{
		f: FormatOpenAI,
		calls: `{"role":"assistant","content":null,"tool_calls":[
			{"id":"c1","type":"function","function":{"name":"demo_slow","arguments":"{\"steps\":3,\"delayMs\":40}"}},
			{"id":"c2","type":"function","function":{"name":"demo_echo","arguments":"{\"text\":\"second\"}"}},
			{"id":"c3","type":"function","function":{"name":"demo_nope","arguments":"{}"}},
			{"id":"c4","type":"function","function":{"name":"demo_echo","arguments":"{not json"}},
			{"type":"function","function":{"name":"demo_echo","arguments":"{\"text\":\"x\"}"}},
			{"id":"c6","type":"function","function":{"name":"demo_echo","arguments":"{\"text\":5}"}}]}`,
		want: []string{slowText, "second", "Error: " + say(textUnknownTool, "demo_nope"), "Error: " + notJSONText, "Error: " + say(textMissingID, "demo_echo"), "Error: " + schemaText},
	}, {
		f: FormatOpenAIResponses,
		calls: `[{"type":"message","role":"assistant","content":[]},
			{"type":"function_call","call_id":"c1","name":"demo_slow","arguments":"{\"steps\":3,\"delayMs\":40}"},
			{"type":"function_call","call_id":"c2","name":"demo_echo","arguments":"{\"text\":\"second\"}"},
			{"type":"function_call","call_id":"c3","name":"demo_nope","arguments":"{}"},
			{"type":"function_call","call_id":"c4","name":"demo_echo","arguments":"{not json"},
			{"type":"function_call","name":"demo_echo","arguments":"{}"},
			{"type":"function_call","call_id":"c6","name":"demo_echo","arguments":"{\"text\":5}"}]`,
		want: []string{slowText, "second", "Error: " + say(textUnknownTool, "demo_nope"), "Error: " + notJSONText, "Error: " + say(textMissingID, "demo_echo"), "Error: " + schemaText},
	}, {
		f: FormatAnthropic,
		calls: `{"role":"assistant","content":[{"type":"text","text":"Let me run these."},
			{"type":"tool_use","id":"c1","name":"demo_slow","input":{"steps":3,"delayMs":40}},
			{"type":"tool_use","id":"c2","name":"demo_echo","input":{"text":"second"}},
			{"type":"tool_use","id":"c3","name":"demo_nope","input":{}},
			{"type":"tool_use","id":"c4","name":"demo_echo","input":[1]},
			{"type":"tool_use","name":"demo_echo","input":{}},
			{"type":"tool_use","id":"c6","name":"demo_echo","input":{"text":5}}]}`,
		want: []string{slowText, "second", say(textUnknownTool, "demo_nope"), say(textNotObject, "", "demo_echo"), say(textMissingID, "demo_echo"), schemaText},
	}, {
		f: FormatGemini,
		calls: `{"role":"model","parts":[{"text":"Running."},
			{"functionCall":{"id":"c1","name":"demo_slow","args":{"steps":3,"delayMs":40}}},
			{"functionCall":{"name":"demo_echo","args":{"text":"second"}}},
			{"functionCall":{"id":"c3","name":"demo_nope","args":{}}},
			{"functionCall":{"id":"c4","name":"demo_echo","args":"text"}},
			{"functionCall":{"id":"c5","args":{}}},
			{"functionCall":{"id":"c6","name":"demo_echo","args":{"text":5}}}]}`,
		want: []string{slowText, "second", say(textUnknownTool, "demo_nope"), say(textNotObject, "", "demo_echo"), textMissingName, schemaText},
	}}
	for _, tt := range tests {
		t.Run(string(tt.f), func(t *testing.T) {
			out, err := cat.HandleToolCalls(ctx, tt.f, json.RawMessage(tt.calls), CallOptions{})
			if err != nil {
				t.Fatal(err)
			}
			got, ids := resultTexts(t, tt.f, out)
			if len(got) != len(tt.want) {
				t.Fatalf("%d results; want %d: %s", len(got), len(tt.want), out)
			}
			for i := range got {
				if i == 0 && !strings.HasPrefix(got[0], tt.want[0]) || i > 0 && got[i] != tt.want[i] {
					t.Errorf("result %d = %q; want %q", i, got[i], tt.want[i])
				}
			}
			if ids[0] != "c1" {
				t.Errorf("first result's id = %q; want c1 (call order)", ids[0])
			}
		})
	}
}

// resultTexts reads each result's text and call id back from a format's
// messages.
func resultTexts(t *testing.T, f Format, out []byte) (texts, ids []string) {
	t.Helper()
	switch f {
	case FormatOpenAI:
		var msgs []struct {
			ToolCallID string `json:"tool_call_id"`
			Content    string
		}
		mustUnmarshal(t, out, &msgs)
		for _, m := range msgs {
			texts, ids = append(texts, m.Content), append(ids, m.ToolCallID)
		}
	case FormatOpenAIResponses:
		var items []struct {
			CallID string `json:"call_id"`
			Output string
		}
		mustUnmarshal(t, out, &items)
		for _, m := range items {
			texts, ids = append(texts, m.Output), append(ids, m.CallID)
		}
	case FormatAnthropic:
		var msgs []struct {
			Content []struct {
				ToolUseID string `json:"tool_use_id"`
				Content   []struct{ Text string }
				IsError   bool `json:"is_error"`
			}
		}
		mustUnmarshal(t, out, &msgs)
		for _, r := range msgs[0].Content {
			var parts []string
			for _, b := range r.Content {
				parts = append(parts, b.Text)
			}
			texts, ids = append(texts, strings.Join(parts, "\n")), append(ids, r.ToolUseID)
		}
	case FormatGemini:
		var msgs []struct {
			Parts []struct {
				FunctionResponse struct {
					ID       string
					Response struct{ Output, Error *string }
				}
			}
		}
		mustUnmarshal(t, out, &msgs)
		for _, p := range msgs[0].Parts {
			r := p.FunctionResponse.Response
			text := ""
			switch {
			case r.Output != nil:
				text = *r.Output
			case r.Error != nil:
				text = *r.Error
			}
			texts, ids = append(texts, text), append(ids, p.FunctionResponse.ID)
		}
	}
	return texts, ids
}

// The calls of one reply run at the same time: the first call waits until
// the last one has started (a sequential runner would never finish), and
// the results still come back in call order.
func TestHandleToolCallsConcurrent(t *testing.T) {
	const n = 5
	var started sync.WaitGroup
	started.Add(n)
	all := make(chan struct{})
	go func() { started.Wait(); close(all) }()
	f := &fakeServer{tools: []*mcp.Tool{tool("work", true)}}
	f.call = func(ctx context.Context, _ string, args json.RawMessage) (*mcp.CallToolResult, error) {
		started.Done()
		select {
		case <-all:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "done " + string(args)}}}, nil
	}
	cat, _ := newCatalog(t, Config{Servers: servers("s", "http://127.0.0.1:9/s"), Factory: fakes(map[string]*fakeServer{"s": f})})
	var calls []string
	var want []string
	for i := range n {
		calls = append(calls, fmt.Sprintf(`{"id":"c%d","type":"function","function":{"name":"s_work","arguments":"{\"i\":%d}"}}`, i, i))
		want = append(want, fmt.Sprintf(`done {"i":%d}`, i))
	}
	out, err := cat.HandleToolCalls(ctxT(t), FormatOpenAI, json.RawMessage("["+strings.Join(calls, ",")+"]"), CallOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got, _ := resultTexts(t, FormatOpenAI, out)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("results (-want +got):\n%s", diff)
	}
}

// Only a document that is not of the format at all is an error; a reply
// without calls has no results.
func TestHandleToolCallsDocuments(t *testing.T) {
	cat, _ := newCatalog(t, Config{Factory: clientFactory(t)})
	ctx := ctxT(t)
	for _, tt := range []struct {
		f   Format
		doc string
	}{
		{FormatOpenAI, `not json`},
		{FormatOpenAI, `"text"`},
		{FormatOpenAI, `{"foo":1}`},
		{FormatOpenAIResponses, `{"foo":1}`},
		{FormatAnthropic, `{"foo":1}`},
		{FormatGemini, `{"foo":1}`},
		{"mistral", `[]`},
	} {
		_, err := cat.HandleToolCalls(ctx, tt.f, json.RawMessage(tt.doc), CallOptions{})
		if err == nil {
			t.Errorf("%s %s: no error; want invalid_argument", tt.f, tt.doc)
			continue
		}
		wantCode(t, err, mcperr.InvalidArgument)
	}
	for _, tt := range []struct {
		f         Format
		doc, want string
	}{
		{FormatOpenAI, `{"role":"assistant","content":"Hi"}`, `[]`},
		{FormatOpenAIResponses, `[{"type":"message","role":"assistant","content":[]}]`, `[]`},
		{FormatAnthropic, `{"role":"assistant","content":"Hi"}`, `[]`},
		{FormatGemini, `{"content":{"role":"model","parts":[{"text":"Hi"}]}}`, `[]`},
	} {
		out, err := cat.HandleToolCalls(ctx, tt.f, json.RawMessage(tt.doc), CallOptions{})
		if err != nil || string(out) != tt.want {
			t.Errorf("%s %s = %s, %v; want %s", tt.f, tt.doc, out, err, tt.want)
		}
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	_, err := cat.HandleToolCalls(cancelled, FormatOpenAI, json.RawMessage(`[{"id":"a","function":{"name":"x_y","arguments":"{}"}}]`), CallOptions{})
	wantCode(t, err, mcperr.Aborted)
}

// ResultMessages refuses a format it does not know and results that do not
// match the calls; an Anthropic tool_result shows an image of a type the
// API does not take as a sentence, and a result without content says so.
func TestResultMessagesEdges(t *testing.T) {
	calls := []ToolCall{{ID: "c1", Name: "a"}, {ID: "c2", Name: "b"}}
	results := []ToolResult{
		{Blocks: []Block{{Type: "image", MIMEType: "image/svg+xml", Data: "AAAA"}, {Type: "image", MIMEType: "image/png", Data: "AAAA"}}},
		{IsError: true},
	}
	got, err := ResultMessages(FormatAnthropic, calls, results)
	if err != nil {
		t.Fatal(err)
	}
	want := `[{"role":"user","content":[` +
		`{"type":"tool_result","tool_use_id":"c1","content":[{"type":"text","text":"[image: image/svg+xml, 3 bytes]"},{"type":"image","source":{"type":"base64","media_type":"image/png","data":"AAAA"}}],"is_error":false},` +
		`{"type":"tool_result","tool_use_id":"c2","content":[{"type":"text","text":"The tool returned no content."}],"is_error":true}]}]`
	if string(got) != want {
		t.Errorf("anthropic results =\n%s\nwant\n%s", got, want)
	}
	for _, f := range []Format{FormatOpenAI, FormatOpenAIResponses, FormatAnthropic, FormatGemini} {
		if got, err := ResultMessages(f, nil, nil); err != nil || string(got) != "[]" {
			t.Errorf("%s without calls = %s, %v; want []", f, got, err)
		}
	}
	if _, err := ResultMessages("mistral", calls, results); mcperr.CodeOf(err, "") != mcperr.InvalidArgument {
		t.Errorf("unknown format: err %v; want invalid_argument", err)
	}
	if _, err := ResultMessages(FormatOpenAI, calls, results[:1]); mcperr.CodeOf(err, "") != mcperr.InvalidArgument || !strings.Contains(err.Error(), "2 calls but 1 results") {
		t.Errorf("one result for two calls: err %v; want invalid_argument naming both counts", err)
	}
}
