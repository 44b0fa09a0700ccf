package xengine

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/mcpwasm/mcpwasm/demo/model"
	"github.com/mcpwasm/mcpwasm/devkit/devserver"
)

// modelRequest is one request the stand-in received: its path, the
// header that carries the API key, and its body.
type modelRequest struct {
	path, key string
	body      []byte
}

// TestAgentTurnThroughOtherAdapters: an agent turn through
// mcp.models.openaiResponses and mcp.models.gemini against the stand-in
// (which speaks both wire formats) calls the demo server's add tool and
// answers with its result; the page sees the model's reasoning (asked for
// as a summary, or as thoughts), the call being written and each
// response's usage; the API key goes in the provider's header and in no
// event; the tools go in each API's format, and Gemini's thought signature
// comes back with the call (the stand-in refuses the second step
// otherwise).
func TestAgentTurnThroughOtherAdapters(t *testing.T) {
	eitherRuntime(t)
	const key = "sk-e2e-adapter-key-0123456789"
	for _, c := range []struct {
		name, spec, path, keyHeader, keyValue, toolsMark string
	}{
		{"responses", `mcp.models.openaiResponses({ baseURL: %q, apiKey: %q, model: "mcpwasm-standin", reasoningSummary: "auto" })`,
			model.ResponsesPath, "Authorization", "Bearer " + key, `"tools":[{"type":"function","name":"demo_add"`},
		{"gemini", `mcp.models.gemini({ baseURL: %q, apiKey: %q, model: "mcpwasm-standin", includeThoughts: true })`,
			model.GeminiPath + model.ModelID + ":streamGenerateContent", "X-Goog-Api-Key", key, `"functionDeclarations":[`},
	} {
		t.Run(c.name, func(t *testing.T) {
			w := newWorld(t, devserver.AuthConfig{})
			var mu sync.Mutex
			var reqs []modelRequest
			stand := model.New(model.Options{})
			srv := serve(t, http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
				if r.Method == http.MethodPost {
					b, _ := io.ReadAll(r.Body)
					mu.Lock()
					reqs = append(reqs, modelRequest{path: r.URL.Path, key: r.Header.Get(c.keyHeader), body: b})
					mu.Unlock()
					r.Body = io.NopCloser(strings.NewReader(string(b)))
				}
				stand.ServeHTTP(rw, r)
			}))
			base := srv.URL + "/v1"
			if c.name == "gemini" {
				base = srv.URL + "/v1beta"
			}

			var got struct {
				Events  []json.RawMessage `json:"events"`
				Text    string            `json:"text"`
				Usage   *usage            `json:"usage"`
				Runtime string            `json:"runtime"`
			}
			w.eval(fmt.Sprintf(`(async () => {
				const cat = mcp.catalog({ servers: { demo: { url: %q } } });
				const events = [];
				const agent = cat.agent({ model: `+c.spec+` });
				const res = await agent.run("add 2 and 40", { onEvent: (ev) => events.push(ev) }).done;
				await cat.close();
				return { events, text: res.text, usage: res.usage ?? null, runtime: mcp.runtime };
			})()`, w.OpenURL, base, key), &got)

			type event struct {
				Type           string `json:"type"`
				Delta          string `json:"delta"`
				ID             string `json:"id"`
				Name           string `json:"name"`
				ServerID       string `json:"serverId"`
				Tool           string `json:"tool"`
				Arguments      string `json:"arguments"`
				ArgumentsDelta string `json:"argumentsDelta"`
				IsError        bool   `json:"isError"`
				Text           string `json:"text"`
				Usage          *usage `json:"usage"`
				usage
			}
			var (
				types             []string
				reasoning, pieces strings.Builder
				calls, results    []event
				usages            []usage
				done              *event
			)
			for _, raw := range got.Events {
				if strings.Contains(string(raw), key) {
					t.Errorf("an event carries the API key: %s", raw)
				}
				var ev event
				if err := json.Unmarshal(raw, &ev); err != nil {
					t.Fatalf("event %s: %v", raw, err)
				}
				types = append(types, ev.Type)
				switch ev.Type {
				case "reasoning":
					reasoning.WriteString(ev.Delta)
				case "toolcalldelta":
					pieces.WriteString(ev.ArgumentsDelta)
				case "toolcall":
					calls = append(calls, ev)
				case "toolresult":
					results = append(results, ev)
				case "usage":
					usages = append(usages, ev.usage)
				case "done":
					done = &ev
				}
			}
			t.Logf("runtime %s; events: %s", got.Runtime, runs(types))

			if got.Text != "Results: 2 + 40 = 42" {
				t.Errorf("the turn answered %q; want the tool's result", got.Text)
			}
			if len(calls) != 1 || calls[0].ServerID != "demo" || calls[0].Tool != "add" {
				t.Fatalf("toolcall events %+v; want one call of the demo server's add", calls)
			}
			if calls[0].Arguments != `{"a":2,"b":40}` || pieces.String() != calls[0].Arguments {
				t.Errorf("the call's arguments %q, written as %q; want {\"a\":2,\"b\":40}", calls[0].Arguments, pieces.String())
			}
			if len(results) != 1 || results[0].IsError || results[0].Text != "2 + 40 = 42" {
				t.Errorf("toolresult events %+v", results)
			}
			wantReasoning := "The message matches my script for demo_add, so I call it with the arguments it names." +
				"The tools answered, so I pass their results on verbatim."
			if reasoning.String() != wantReasoning {
				t.Errorf("reasoning %q; want the stand-in's %q", reasoning.String(), wantReasoning)
			}
			var sum usage
			for _, u := range usages {
				sum.InputTokens += u.InputTokens
				sum.OutputTokens += u.OutputTokens
				sum.CachedInputTokens += u.CachedInputTokens
				sum.ReasoningTokens += u.ReasoningTokens
			}
			if len(usages) != 2 || sum.ReasoningTokens == 0 || sum.CachedInputTokens == 0 {
				t.Errorf("usage events %+v; want two, with reasoning and cached tokens", usages)
			}
			if done == nil || done.Usage == nil || *done.Usage != sum || got.Usage == nil || *got.Usage != sum {
				t.Errorf("done %+v, run.done's usage %+v; want the sum %+v", done, got.Usage, sum)
			}

			mu.Lock()
			defer mu.Unlock()
			if len(reqs) != 2 {
				t.Fatalf("the stand-in got %d requests; want 2 (the call, the answer)", len(reqs))
			}
			for i, r := range reqs {
				if r.path != c.path || r.key != c.keyValue {
					t.Errorf("request %d to %s with %s %q; want %s with the key", i, r.path, c.keyHeader, r.key, c.path)
				}
				if !strings.Contains(string(r.body), c.toolsMark) {
					t.Errorf("request %d offers tools not in the API's format: %.300s", i, r.body)
				}
			}
			if c.name == "gemini" && !strings.Contains(string(reqs[1].body), model.ThoughtSignature) {
				t.Errorf("the second request does not send the thought signature back: %.500s", reqs[1].body)
			}
		})
	}
}
