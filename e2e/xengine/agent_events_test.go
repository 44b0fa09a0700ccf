package xengine

import (
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpwasm/mcpwasm/demo/model"
	"github.com/mcpwasm/mcpwasm/devkit/devserver"
)

// usage is a usage event's counts, as the page sees them.
type usage struct {
	InputTokens       int `json:"inputTokens"`
	OutputTokens      int `json:"outputTokens"`
	CachedInputTokens int `json:"cachedInputTokens"`
	ReasoningTokens   int `json:"reasoningTokens"`
}

// wireTap records what the stand-in model sends, read off the wire: the
// usage chunks and the reasoning_content deltas of its streams.
type wireTap struct {
	mu        sync.Mutex
	usages    []usage
	reasoning strings.Builder
}

// serve wraps h: each event of a chat completion's stream is read before
// its last byte goes to the page.
func (tap *wireTap) serve(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != model.ChatPath {
			h.ServeHTTP(w, r)
			return
		}
		h.ServeHTTP(&tapWriter{ResponseWriter: w, tap: tap}, r)
	})
}

func (tap *wireTap) event(data string) {
	var c struct {
		Choices []struct {
			Delta struct {
				ReasoningContent string `json:"reasoning_content"`
			} `json:"delta"`
		} `json:"choices"`
		Usage *struct {
			Prompt     int `json:"prompt_tokens"`
			Completion int `json:"completion_tokens"`
			PromptD    struct {
				Cached int `json:"cached_tokens"`
			} `json:"prompt_tokens_details"`
			CompletionD struct {
				Reasoning int `json:"reasoning_tokens"`
			} `json:"completion_tokens_details"`
		} `json:"usage"`
	}
	if json.Unmarshal([]byte(data), &c) != nil {
		return // [DONE]
	}
	tap.mu.Lock()
	defer tap.mu.Unlock()
	for _, ch := range c.Choices {
		tap.reasoning.WriteString(ch.Delta.ReasoningContent)
	}
	if u := c.Usage; u != nil {
		tap.usages = append(tap.usages, usage{u.Prompt, u.Completion, u.PromptD.Cached, u.CompletionD.Reasoning})
	}
}

type tapWriter struct {
	http.ResponseWriter
	tap *wireTap
	buf string
}

func (t *tapWriter) Write(b []byte) (int, error) {
	t.buf += string(b)
	for {
		ev, rest, ok := strings.Cut(t.buf, "\n\n")
		if !ok {
			break
		}
		t.buf = rest
		if data, ok := strings.CutPrefix(ev, "data: "); ok {
			t.tap.event(data)
		}
	}
	return t.ResponseWriter.Write(b)
}

func (t *tapWriter) Flush() { t.ResponseWriter.(http.Flusher).Flush() }

// figures are what the agent adds to a usage: how full the context is,
// the limit it was given and the price at the prices it was given.
type figures struct {
	ContextTokens int      `json:"contextTokens"`
	ContextLimit  int      `json:"contextLimit"`
	Cost          *float64 `json:"cost"`
}

// TestAgentTurnShowsTheModelsWork: an agent turn over the stand-in model
// (which streams reasoning, its tool call in pieces, and usage) shows the
// page each response's usage as the model sent it, with how full the
// context is against the limit given and the price at the prices given,
// and their sum on done and in the result, the reasoning as it streamed,
// and the tool call being written, piece by piece, before its toolcall
// event.
func TestAgentTurnShowsTheModelsWork(t *testing.T) {
	eitherRuntime(t)
	w := newWorld(t, devserver.AuthConfig{})
	tap := &wireTap{}
	srv := serve(t, tap.serve(model.New(model.Options{})))

	type event struct {
		Type           string `json:"type"`
		Delta          string `json:"delta"`
		ID             string `json:"id"`
		Name           string `json:"name"`
		ArgumentsDelta string `json:"argumentsDelta"`
		Arguments      string `json:"arguments"`
		Usage          *usage `json:"usage"`
		usage
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
		const agent = cat.agent({ model: mcp.models.openai({ baseURL: %q, model: "mcpwasm-standin" }),
			contextLimit: 128000, prices: { input: 2, output: 8, cachedInput: 0.5 } });
		const res = await agent.run("add 2 and 40", { onEvent: (ev) => events.push(ev) }).done;
		await cat.close();
		return { events, text: res.text, usage: res.usage ?? null, runtime: mcp.runtime };
	})()`, w.OpenURL, srv.URL+"/v1"), &got)

	tap.mu.Lock()
	sent, sentReasoning := tap.usages, tap.reasoning.String()
	tap.mu.Unlock()
	if got.Text != "Results: 2 + 40 = 42" {
		t.Errorf("the turn answered %q", got.Text)
	}
	var (
		usages                  []usage
		figs                    []figures
		doneFigs                struct{ Usage figures }
		reasoning               strings.Builder
		reasoningDeltas         int
		pieces                  = map[string][]event{}
		calls                   []event
		done                    *event
		typesInOrder            []string
		toolcallAt, firstPiece  = -1, -1
		stepsBeforeFirstUsage   int
		sawUsageBeforeFirstStep bool
	)
	for i, raw := range got.Events {
		var ev event
		if err := json.Unmarshal(raw, &ev); err != nil {
			t.Fatalf("event %s: %v", raw, err)
		}
		typesInOrder = append(typesInOrder, ev.Type)
		switch ev.Type {
		case "usage":
			usages = append(usages, ev.usage)
			var f figures
			_ = json.Unmarshal(raw, &f)
			figs = append(figs, f)
			if stepsBeforeFirstUsage == 0 && len(usages) == 1 {
				sawUsageBeforeFirstStep = true
			}
		case "step":
			stepsBeforeFirstUsage++
		case "reasoning":
			reasoning.WriteString(ev.Delta)
			reasoningDeltas++
		case "toolcalldelta":
			pieces[ev.ID] = append(pieces[ev.ID], ev)
			if firstPiece < 0 {
				firstPiece = i
			}
		case "toolcall":
			calls = append(calls, ev)
			if toolcallAt < 0 {
				toolcallAt = i
			}
		case "done":
			done = &ev
			_ = json.Unmarshal(raw, &doneFigs)
		}
	}
	t.Logf("runtime %s; events: %s", got.Runtime, runs(typesInOrder))

	// Usage: each response's, as the stand-in sent it; the sum on done
	// and in the result.
	if len(sent) != 2 {
		t.Fatalf("the stand-in sent %d usage chunks; want 2 (the tool call, then the answer)", len(sent))
	}
	if diff := cmp.Diff(sent, usages); diff != "" {
		t.Errorf("usage events (-sent by the model +seen by the page):\n%s", diff)
	}
	if !sawUsageBeforeFirstStep {
		t.Errorf("the first usage event did not come before the first step event")
	}
	var sum usage
	for _, u := range sent {
		sum.InputTokens += u.InputTokens
		sum.OutputTokens += u.OutputTokens
		sum.CachedInputTokens += u.CachedInputTokens
		sum.ReasoningTokens += u.ReasoningTokens
	}
	if sum.CachedInputTokens == 0 || sum.ReasoningTokens == 0 {
		t.Errorf("the stand-in sent no cached or reasoning tokens (%+v): the check below would prove less", sum)
	}
	if done == nil || done.Usage == nil || *done.Usage != sum {
		t.Errorf("done = %+v; want usage %+v", done, sum)
	}
	if got.Usage == nil || *got.Usage != sum {
		t.Errorf("run.done's usage = %+v; want %+v", got.Usage, sum)
	}
	// The agent's figures: the context after each response against the
	// limit given, and the price at the prices given (2, 8 and 0.5 per
	// million input, output and cached input tokens).
	price := func(u usage) float64 {
		return (float64(u.InputTokens-u.CachedInputTokens)*2 + float64(u.CachedInputTokens)*0.5 + float64(u.OutputTokens)*8) / 1e6
	}
	near := func(c *float64, want float64) bool { return c != nil && math.Abs(*c-want) < 1e-12 }
	var total float64
	for i, u := range sent {
		total += price(u)
		if i >= len(figs) {
			break
		}
		if f := figs[i]; f.ContextTokens != u.InputTokens+u.OutputTokens || f.ContextLimit != 128000 || !near(f.Cost, price(u)) {
			t.Errorf("usage event %d says context %d of %d, cost %v; want %d of 128000, cost %g", i, f.ContextTokens, f.ContextLimit, f.Cost, u.InputTokens+u.OutputTokens, price(u))
		}
	}
	if f := doneFigs.Usage; f.ContextTokens != sent[1].InputTokens+sent[1].OutputTokens || f.ContextLimit != 128000 || !near(f.Cost, total) {
		t.Errorf("done's usage says context %d of %d, cost %v; want the last response's %d of 128000, the total cost %g",
			f.ContextTokens, f.ContextLimit, f.Cost, sent[1].InputTokens+sent[1].OutputTokens, total)
	}

	// Reasoning: in pieces, as sent, and not in the answer.
	if sentReasoning == "" || reasoning.String() != sentReasoning || reasoningDeltas < 5 {
		t.Errorf("reasoning: %d deltas %q; want the stand-in's %q in pieces", reasoningDeltas, reasoning.String(), sentReasoning)
	}
	if strings.Contains(got.Text, "script") {
		t.Errorf("the reasoning leaked into the answer %q", got.Text)
	}

	// The tool call being written: its pieces, under its id and name,
	// before its toolcall event, join into its arguments.
	if len(calls) != 1 {
		t.Fatalf("toolcall events = %+v; want one", calls)
	}
	call := calls[0]
	ps := pieces[call.ID]
	var joined strings.Builder
	for _, p := range ps {
		joined.WriteString(p.ArgumentsDelta)
		if p.Name != call.Name {
			t.Errorf("a piece of %s names %q; want %q", call.ID, p.Name, call.Name)
		}
	}
	if len(ps) < 3 || joined.String() != call.Arguments {
		t.Errorf("call %s (%s): %d pieces joining to %q; want its arguments %q in pieces", call.ID, call.Name, len(ps), joined.String(), call.Arguments)
	}
	if firstPiece < 0 || firstPiece > toolcallAt {
		t.Errorf("the first toolcalldelta is event %d, the toolcall event %d; want the pieces first", firstPiece, toolcallAt)
	}
	for i, raw := range got.Events[toolcallAt:] {
		if strings.Contains(string(raw), `"toolcalldelta"`) {
			t.Errorf("a toolcalldelta came %d events after the toolcall: %s", i, raw)
		}
	}
}

// runs writes a list of event types with repeats counted: "text×3 step".
func runs(types []string) string {
	var b strings.Builder
	for i := 0; i < len(types); {
		j := i
		for j < len(types) && types[j] == types[i] {
			j++
		}
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(types[i])
		if j-i > 1 {
			fmt.Fprintf(&b, "×%d", j-i)
		}
		i = j
	}
	return b.String()
}
