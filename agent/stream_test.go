package agent_test

import (
	"context"
	"encoding/json"
	"math"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/mcpwasm/mcpwasm/agent"
	"github.com/mcpwasm/mcpwasm/agent/openai"
	"github.com/mcpwasm/mcpwasm/demo/model"
	"github.com/mcpwasm/mcpwasm/mcperr"
)

// TestRunShowsTheModelsWork: over the stand-in model (which streams
// reasoning, tool calls in pieces and usage), a run reports each
// response's usage, the sum on done and in the result, the reasoning, and
// each call's pieces before its toolcall event, under the same id.
func TestRunShowsTheModelsWork(t *testing.T) {
	var err error
	var (
		mu   sync.Mutex
		sent []agent.Usage // what the stand-in sent, read off the wire
	)
	e := newEnv(t, model.Options{}, newFakeTools(addTool(), echoTool()), nil)
	e.srv.Close()
	e.srv = httptest.NewServer(tee(e.model, func(data string) {
		if u, ok := usageIn(t, data); ok {
			mu.Lock()
			sent = append(sent, u)
			mu.Unlock()
		}
	}))
	t.Cleanup(e.srv.Close)
	if e.llm, err = openai.New(openai.Config{BaseURL: e.srv.URL + "/v1", Model: model.ModelID, HTTPClient: e.srv.Client()}); err != nil {
		t.Fatal(err)
	}
	rec := &recorder{}
	cachedPrice := 0.5
	res, err := e.agent(t, func(c *agent.Config) {
		c.ContextLimit = 128000
		c.Prices = &agent.Prices{Input: 2, Output: 8, CachedInput: &cachedPrice}
	}).RunText(context.Background(), "add 2 and 40 and echo hi", rec.on)
	if err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	var (
		usages    []agent.Usage
		reasoning strings.Builder
		pieces    = map[string]string{} // call id → joined arguments pieces
		names     = map[string]string{}
		calls     []agent.ToolCallEvent
		done      *agent.DoneEvent
	)
	for _, ev := range rec.all() {
		switch d := ev.Data.(type) {
		case *agent.UsageEvent:
			usages = append(usages, d.Usage)
		case *agent.ReasoningEvent:
			reasoning.WriteString(d.Delta)
		case *agent.ToolCallDeltaEvent:
			if _, called := names["called "+d.ID]; called {
				t.Errorf("a piece of %s came after its toolcall event", d.ID)
			}
			pieces[d.ID] += d.ArgumentsDelta
			names[d.ID] = d.Name
		case *agent.ToolCallEvent:
			names["called "+d.ID] = d.Name
			calls = append(calls, *d)
		case *agent.DoneEvent:
			done = d
		}
	}
	if len(sent) != 2 {
		t.Fatalf("the stand-in sent %d usage chunks; want 2 (a tool call, then the answer)", len(sent))
	}
	// Each response's usage is the provider's, with how full the context
	// is, the limit configured and the price.
	want := make([]agent.Usage, len(sent))
	var costs float64
	for i, u := range sent {
		cost := (float64(u.InputTokens-u.CachedInputTokens)*2 + float64(u.CachedInputTokens)*0.5 + float64(u.OutputTokens)*8) / 1e6
		costs += cost
		u.ContextTokens, u.ContextLimit, u.Cost = u.InputTokens+u.OutputTokens, 128000, &cost
		want[i] = u
	}
	approx := cmpopts.EquateApprox(0, 1e-12)
	if diff := cmp.Diff(want, usages, approx); diff != "" {
		t.Errorf("usage events (-want +got):\n%s", diff)
	}
	total := agent.Usage{
		InputTokens:       sent[0].InputTokens + sent[1].InputTokens,
		OutputTokens:      sent[0].OutputTokens + sent[1].OutputTokens,
		CachedInputTokens: sent[0].CachedInputTokens + sent[1].CachedInputTokens,
		ReasoningTokens:   sent[0].ReasoningTokens + sent[1].ReasoningTokens,
		ContextTokens:     want[1].ContextTokens, // the last response's
		ContextLimit:      128000,
		Cost:              &costs,
	}
	if done == nil || done.Usage == nil {
		t.Errorf("done = %+v; want usage %+v", done, total)
	} else if diff := cmp.Diff(total, *done.Usage, approx); diff != "" {
		t.Errorf("done's usage (-want +got):\n%s", diff)
	}
	if res.Usage == nil {
		t.Errorf("result usage = nil; want %+v", total)
	} else if diff := cmp.Diff(total, *res.Usage, approx); diff != "" {
		t.Errorf("result usage (-want +got):\n%s", diff)
	}
	const think = "The message matches my script for calc_add and text_echo, so I call it with the arguments it names." +
		"The tools answered, so I pass their results on verbatim."
	if reasoning.String() != think {
		t.Errorf("reasoning = %q; want %q", reasoning.String(), think)
	}
	if len(calls) != 2 {
		t.Fatalf("toolcall events = %+v", calls)
	}
	for _, c := range calls {
		if pieces[c.ID] != c.Arguments || names[c.ID] != c.Name {
			t.Errorf("call %s: pieces %q of %q; toolcall %q of %q", c.ID, pieces[c.ID], names[c.ID], c.Arguments, c.Name)
		}
	}
	// Reasoning never goes back to the model.
	if strings.Contains(string(e.model.LastRequest()), "my script") {
		t.Errorf("the reasoning was sent back: %s", e.model.LastRequest())
	}
}

// TestRunWithAModelThatStreamsNothingMore: a plain Model (a page's model
// function) reports no usage: done carries none.
func TestRunWithAModelThatStreamsNothingMore(t *testing.T) {
	m := agent.ModelFunc(func(ctx context.Context, req agent.Request, onText func(string)) (agent.Message, error) {
		onText("hi")
		return agent.Message{Role: "assistant", Content: "hi"}, nil
	})
	a, err := agent.New(agent.Config{Model: m})
	if err != nil {
		t.Fatal(err)
	}
	rec := &recorder{}
	res, err := a.RunText(context.Background(), "x", rec.on)
	if err != nil {
		t.Fatal(err)
	}
	if res.Usage != nil || rec.last(agent.EventDone).(*agent.DoneEvent).Usage != nil {
		t.Errorf("usage = %+v; want none", res.Usage)
	}
	b, _ := json.Marshal(agent.Event{Type: agent.EventDone, Data: rec.last(agent.EventDone)})
	if strings.Contains(string(b), "usage") {
		t.Errorf("done event JSON %s has usage", b)
	}
}

// scripted is a StreamingModel that plays back deltas: tool calls
// without ids, and a usage with counts no provider could mean.
type scripted struct{}

func (scripted) Generate(ctx context.Context, req agent.Request, onText func(string)) (agent.Message, error) {
	return scripted{}.Stream(ctx, req, agent.Stream{Text: onText})
}

func (scripted) Stream(ctx context.Context, req agent.Request, s agent.Stream) (agent.Message, error) {
	if len(req.Messages) > 1 {
		s.Usage(agent.Usage{InputTokens: 5, OutputTokens: 1})
		return agent.Message{Role: "assistant", Content: "done"}, nil
	}
	// Two calls without ids, one whose id repeats the first's.
	s.ToolCall(agent.ToolCallDelta{Index: 0, Name: "calc_add"})
	s.ToolCall(agent.ToolCallDelta{Index: 0, Name: "calc_add", ArgumentsDelta: `{"a":1,`})
	s.ToolCall(agent.ToolCallDelta{Index: 1, ID: "x", Name: "text_echo", ArgumentsDelta: `{"text":"a"}`})
	s.ToolCall(agent.ToolCallDelta{Index: 2, ID: "x", Name: "text_echo", ArgumentsDelta: `{"text":"b"}`})
	s.ToolCall(agent.ToolCallDelta{Index: 0, Name: "calc_add", ArgumentsDelta: `"b":2}`})
	s.Usage(agent.Usage{InputTokens: -4, OutputTokens: agent.MaxTokenCount + 1, CachedInputTokens: 3, ReasoningTokens: 2})
	return agent.Message{Role: "assistant", ToolCalls: []agent.ToolCall{
		{Function: agent.FunctionCall{Name: "calc_add", Arguments: `{"a":1,"b":2}`}},
		{ID: "x", Function: agent.FunctionCall{Name: "text_echo", Arguments: `{"text":"a"}`}},
		{ID: "x", Function: agent.FunctionCall{Name: "text_echo", Arguments: `{"text":"b"}`}},
	}}, nil
}

// TestRunNamesPiecesAsItsCalls: pieces of calls the model gave no id, or
// an id an earlier call took, carry the id their toolcall event gets; a
// usage with impossible counts is reported with those counts dropped.
func TestRunNamesPiecesAsItsCalls(t *testing.T) {
	a, err := agent.New(agent.Config{Model: scripted{}, Tools: newFakeTools(addTool(), echoTool())})
	if err != nil {
		t.Fatal(err)
	}
	rec := &recorder{}
	res, err := a.RunText(context.Background(), "x", rec.on)
	if err != nil {
		t.Fatal(err)
	}
	pieces := map[string]string{}
	var ids []string
	var usages []agent.Usage
	for _, ev := range rec.all() {
		switch d := ev.Data.(type) {
		case *agent.ToolCallDeltaEvent:
			pieces[d.ID] += d.ArgumentsDelta
		case *agent.ToolCallEvent:
			ids = append(ids, d.ID)
			if pieces[d.ID] != d.Arguments {
				t.Errorf("call %s: pieces %q; arguments %q", d.ID, pieces[d.ID], d.Arguments)
			}
		case *agent.UsageEvent:
			usages = append(usages, d.Usage)
		}
	}
	if diff := cmp.Diff([]string{"call_0_0", "x", "call_0_2"}, ids); diff != "" {
		t.Errorf("toolcall ids (-want +got):\n%s", diff)
	}
	want := []agent.Usage{{}, {InputTokens: 5, OutputTokens: 1, ContextTokens: 6}}
	if diff := cmp.Diff(want, usages); diff != "" {
		t.Errorf("usage events (-want +got):\n%s", diff)
	}
	if res.Usage == nil || *res.Usage != (agent.Usage{InputTokens: 5, OutputTokens: 1, ContextTokens: 6}) {
		t.Errorf("total = %+v", res.Usage)
	}
}

// TestUsageFiguresChecked: a context limit or prices that are not numbers
// of tokens or money are refused by New, naming the field.
func TestUsageFiguresChecked(t *testing.T) {
	m := agent.ModelFunc(func(context.Context, agent.Request, func(string)) (agent.Message, error) {
		return agent.Message{Role: "assistant"}, nil
	})
	neg, nan := -1.0, math.NaN()
	for _, c := range []struct {
		cfg  agent.Config
		want string
	}{
		{agent.Config{Model: m, ContextLimit: 200000, Prices: &agent.Prices{Input: 3, Output: 15}}, ""},
		{agent.Config{Model: m, ContextLimit: -1}, "Config.ContextLimit"},
		{agent.Config{Model: m, ContextLimit: agent.MaxTokenCount + 1}, "Config.ContextLimit"},
		{agent.Config{Model: m, Prices: &agent.Prices{Input: -1}}, "Config.Prices"},
		{agent.Config{Model: m, Prices: &agent.Prices{Input: 1, Output: math.Inf(1)}}, "Config.Prices"},
		{agent.Config{Model: m, Prices: &agent.Prices{Input: 1, CachedInput: &neg}}, "Config.Prices"},
		{agent.Config{Model: m, Prices: &agent.Prices{Input: 1, CachedInput: &nan}}, "Config.Prices"},
	} {
		_, err := agent.New(c.cfg)
		if (err == nil) != (c.want == "") || err != nil && (!strings.Contains(err.Error(), c.want) || mcperr.CodeOf(err, "") != mcperr.InvalidArgument) {
			t.Errorf("New(%+v) = %v; want an invalid_argument naming %q (none when empty)", c.cfg, err, c.want)
		}
	}
}
