package agent_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpwasm/mcpwasm/agent"
	"github.com/mcpwasm/mcpwasm/agent/openai"
	"github.com/mcpwasm/mcpwasm/catalog"
	"github.com/mcpwasm/mcpwasm/demo/model"
	"github.com/mcpwasm/mcpwasm/mcperr"
)

func TestRunParallelToolCalls(t *testing.T) {
	r := newRendezvous(2)
	e := newEnv(t, model.Options{}, newFakeTools(together(r, addTool()), together(r, echoTool())), nil)
	rec := &recorder{}
	res, err := e.agent(t, func(c *agent.Config) { c.System = "You are a test." }).RunText(context.Background(), "add 2 and 40 and echo hi", rec.on)
	if err != nil {
		t.Fatal(err)
	}
	const want = "Results: 2 + 40 = 42; hi"
	if res.Text != want || res.FinishReason != agent.FinishStop || res.Steps != 2 {
		t.Errorf("result = %q %s %d; want %q stop 2", res.Text, res.FinishReason, res.Steps, want)
	}
	text, deltas := rec.text()
	if text != want || deltas < 5 {
		t.Errorf("streamed %d deltas %q; want %q in small pieces", deltas, text, want)
	}
	// Both calls in one step; results in call order. (The stand-in's call
	// ids count the messages it was sent, the system prompt included.)
	wantTypes := []string{"reasoning", "toolcalldelta", "usage", "step", "toolcall", "toolcall", "toolresult", "toolresult",
		"reasoning", "text", "usage", "step", "done"}
	if diff := cmp.Diff(wantTypes, rec.types()); diff != "" {
		t.Errorf("event types (-want +got):\n%s", diff)
	}
	var calls []agent.ToolCallEvent
	var results []string
	for _, ev := range rec.all() {
		switch d := ev.Data.(type) {
		case *agent.ToolCallEvent:
			calls = append(calls, *d)
		case *agent.ToolResultEvent:
			if d.IsError {
				t.Errorf("tool result %+v is an error", d)
			}
			results = append(results, d.Text)
		}
	}
	wantCalls := []agent.ToolCallEvent{
		{ID: "call_2_0", Name: "calc_add", ServerID: "calc", Arguments: `{"a":2,"b":40}`},
		{ID: "call_2_1", Name: "text_echo", ServerID: "text", Arguments: `{"text":"hi"}`},
	}
	if diff := cmp.Diff(wantCalls, calls); diff != "" {
		t.Errorf("toolcall events (-want +got):\n%s", diff)
	}
	// Results arrive as the concurrent calls finish: any order.
	slices.Sort(results)
	if diff := cmp.Diff([]string{"2 + 40 = 42", "hi"}, results); diff != "" {
		t.Errorf("toolresult texts (-want +got):\n%s", diff)
	}
	wantMsgs := []agent.Message{
		{Role: "user", Content: "add 2 and 40 and echo hi"},
		{Role: "assistant", FinishReason: "tool_calls", Model: model.ModelID, ToolCalls: []agent.ToolCall{
			{ID: "call_2_0", Type: "function", Function: agent.FunctionCall{Name: "calc_add", Arguments: `{"a":2,"b":40}`}},
			{ID: "call_2_1", Type: "function", Function: agent.FunctionCall{Name: "text_echo", Arguments: `{"text":"hi"}`}},
		}},
		{Role: "tool", ToolCallID: "call_2_0", Content: "2 + 40 = 42"},
		{Role: "tool", ToolCallID: "call_2_1", Content: "hi"},
		{Role: "assistant", Content: want, FinishReason: "stop", Model: model.ModelID},
	}
	if diff := cmp.Diff(wantMsgs, res.Messages); diff != "" {
		t.Errorf("messages (-want +got):\n%s", diff)
	}
	// The system prompt went to the model, first; it is not in the result.
	var sent struct {
		Messages []agent.Message `json:"messages"`
	}
	json.Unmarshal(e.model.LastRequest(), &sent)
	if len(sent.Messages) != 5 || sent.Messages[0].Role != "system" || sent.Messages[0].Content != "You are a test." {
		t.Errorf("last request messages = %+v", sent.Messages)
	}
}

// TestRunFeedsErrorsBack: bad model output becomes an error result the
// model reads, and the run goes on.
func TestRunFeedsErrorsBack(t *testing.T) {
	tests := []struct {
		input, wantText string
	}{
		{"call an unknown tool", `Results: There is no tool "no_such_tool". The tools are: calc_add, text_echo.`},
		{"send bad json please", "Results: The arguments of text_echo are not valid JSON (unexpected end of JSON input); send a JSON object."},
	}
	for _, tt := range tests {
		t.Run(tt.input, func(t *testing.T) {
			e := newEnv(t, model.Options{}, newFakeTools(addTool(), echoTool()), nil)
			rec := &recorder{}
			res, err := e.agent(t, nil).RunText(context.Background(), tt.input, rec.on)
			if err != nil {
				t.Fatal(err)
			}
			if res.Text != tt.wantText {
				t.Errorf("text = %q; want %q", res.Text, tt.wantText)
			}
			if tr, ok := rec.last(agent.EventToolResult).(*agent.ToolResultEvent); !ok || !tr.IsError {
				t.Errorf("toolresult = %+v; want an error result", tr)
			}
		})
	}
}

func TestRunRetriesAfterRateLimit(t *testing.T) {
	e := newEnv(t, model.Options{}, newFakeTools(addTool()), nil)
	e.model.FailNext(model.RateLimited)
	start := time.Now()
	res, err := e.agent(t, nil).RunText(context.Background(), "hello", nil)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(res.Text, "I am mcpwasm-standin") {
		t.Errorf("text = %q", res.Text)
	}
	if d := time.Since(start); d < time.Second {
		t.Errorf("retried after %v; Retry-After asked for 1s", d)
	}
	if n := e.model.Requests(); n != 2 {
		t.Errorf("requests = %d; want 2", n)
	}
}

// TestRunModelFailures: each failure of the model's side is one visible,
// coded error event, and Run returns promptly.
func TestRunModelFailures(t *testing.T) {
	tests := []struct {
		name     string
		fail     []model.Failure
		mopts    model.Options
		wantCode mcperr.Code
		wantIn   string
		requests int
	}{
		{name: "rate limit longer than the cap", fail: []model.Failure{model.RateLimited}, mopts: model.Options{RetryAfter: time.Minute},
			wantCode: mcperr.HTTP, wantIn: "asked to wait 1m0s", requests: 1},
		{name: "rate limit after retries", fail: []model.Failure{model.RateLimited, model.RateLimited}, mopts: model.Options{RetryAfter: time.Millisecond},
			wantCode: mcperr.HTTP, wantIn: "(after 1 retries)", requests: 2},
		{name: "stream cut mid-event", fail: []model.Failure{model.CutStream},
			wantCode: mcperr.Network, wantIn: "openai: the stream broke off", requests: 1},
		{name: "provider error body", fail: []model.Failure{model.ErrorBody},
			wantCode: mcperr.HTTP, wantIn: "openai: HTTP 400 (invalid_request_error/invalid_value): Invalid value for 'messages': [31ma scripted failure [0m.", requests: 1},
		{name: "error inside the stream", fail: []model.Failure{model.MidStreamError},
			wantCode: mcperr.HTTP, wantIn: "The upstream provider failed mid-stream", requests: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, tt.mopts, newFakeTools(addTool()), func(c *openai.Config) { c.MaxRetries = 1 })
			e.model.FailNext(tt.fail...)
			rec := &recorder{}
			_, err := e.agent(t, nil).RunText(context.Background(), "add 1 and 2", rec.on)
			if got := mcperr.CodeOf(err, ""); got != tt.wantCode {
				t.Fatalf("err = %v (%s); want code %s", err, got, tt.wantCode)
			}
			ev, ok := rec.last(agent.EventError).(*agent.ErrorEvent)
			if !ok || ev.Code != string(tt.wantCode) || !strings.Contains(ev.Message, tt.wantIn) {
				t.Errorf("error event = %+v; want code %s containing %q", ev, tt.wantCode, tt.wantIn)
			}
			if types := rec.types(); types[len(types)-1] != agent.EventError {
				t.Errorf("events %v do not end with the error", types)
			}
			if strings.ContainsAny(ev.Message, "\x00\x1b\n") {
				t.Errorf("error event message %q has control characters", ev.Message)
			}
			if n := e.model.Requests(); n != tt.requests {
				t.Errorf("requests = %d; want %d", n, tt.requests)
			}
		})
	}
}

func TestRunMaxSteps(t *testing.T) {
	e := newEnv(t, model.Options{}, newFakeTools(echoTool()), nil)
	rec := &recorder{}
	res, err := e.agent(t, func(c *agent.Config) { c.MaxSteps = 3 }).RunText(context.Background(), "keep calling echo", rec.on)
	if err != nil {
		t.Fatal(err)
	}
	if res.FinishReason != agent.FinishMaxSteps || res.Steps != 3 || e.model.Requests() != 3 {
		t.Errorf("result %s after %d steps, %d requests; want max_steps after 3", res.FinishReason, res.Steps, e.model.Requests())
	}
	types := rec.types()
	if diff := cmp.Diff([]string{"error", "done"}, types[len(types)-2:]); diff != "" {
		t.Errorf("last events (-want +got):\n%s", diff)
	}
	if ev := rec.last(agent.EventError).(*agent.ErrorEvent); ev.Code != "max_steps" || !strings.Contains(ev.Message, "after 3 steps") {
		t.Errorf("error event = %+v", ev)
	}
	// The history stays valid: every tool call has its result.
	if last := res.Messages[len(res.Messages)-1]; last.Role != "tool" {
		t.Errorf("last message = %+v; want the last call's result", last)
	}
}

func TestRunEmptyAnswer(t *testing.T) {
	e := newEnv(t, model.Options{}, newFakeTools(echoTool()), nil)
	rec := &recorder{}
	res, err := e.agent(t, nil).RunText(context.Background(), "say nothing", rec.on)
	if err != nil {
		t.Fatal(err)
	}
	if res.FinishReason != agent.FinishEmpty || res.Text != "" {
		t.Errorf("result = %+v", res)
	}
	if diff := cmp.Diff([]string{"usage", "step", "error", "done"}, rec.types()); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
	if ev := rec.last(agent.EventError).(*agent.ErrorEvent); ev.Code != "empty_response" || !strings.Contains(ev.Message, "returned nothing") {
		t.Errorf("error event = %+v", ev)
	}
}

func TestRunAbortDuringModelStream(t *testing.T) {
	gone := make(chan struct{}, 1)
	e := newEnv(t, model.Options{OnClientGone: func() { gone <- struct{}{} }}, newFakeTools(echoTool()), nil)
	e.model.FailNext(model.Stall)
	ctx, cancel := context.WithCancel(context.Background())
	rec := &recorder{hook: func(ev agent.Event) {
		if ev.Type == agent.EventText {
			cancel() // abort once the answer is streaming
		}
	}}
	res, err := e.agent(t, nil).RunText(ctx, "hello", rec.on)
	if mcperr.CodeOf(err, "") != mcperr.Aborted {
		t.Fatalf("err = %v; want aborted", err)
	}
	if ev := rec.last(agent.EventError).(*agent.ErrorEvent); ev.Code != "aborted" {
		t.Errorf("error event = %+v", ev)
	}
	if len(res.Messages) != 1 {
		t.Errorf("messages = %+v; want the input only", res.Messages)
	}
	select {
	case <-gone:
	case <-time.After(wait):
		t.Fatal("the model server never saw the request cancelled")
	}
}

func TestRunAbortDuringToolCall(t *testing.T) {
	started := make(chan struct{}, 1)
	tools := newFakeTools(slowTool(started), addTool())
	e := newEnv(t, model.Options{}, tools, nil)
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		<-started
		cancel()
	}()
	res, err := e.agent(t, nil).RunText(ctx, "add 1 and 2 and slow", nil)
	if mcperr.CodeOf(err, "") != mcperr.Aborted {
		t.Fatalf("err = %v; want aborted", err)
	}
	select {
	case name := <-tools.cancelled:
		if name != "work_slow" {
			t.Errorf("cancelled %q", name)
		}
	case <-time.After(wait):
		t.Fatal("the slow tool never saw its context cancelled")
	}
	// The history answers every call: the finished one, and the aborted one.
	n := len(res.Messages)
	if n != 4 || res.Messages[2].Content != "1 + 2 = 3" || !strings.Contains(res.Messages[3].Content, "aborted") {
		t.Errorf("messages = %+v", res.Messages)
	}
}

func TestRunAuthAndApprovalEvents(t *testing.T) {
	gated := &fakeTool{server: "github", tool: "echo", run: func(ctx context.Context, a map[string]any, o catalog.CallOptions) (string, bool, error) {
		o.OnAuthRequired(catalog.AuthRequired{ID: "github", Declined: true})
		o.OnApproval(catalog.ApprovalRequest{ID: "github", Tool: "echo", Name: "github_echo"}, catalog.ApprovalDecision{DecidedBy: catalog.DecidedByPolicy, Policy: catalog.PolicyServer})
		o.OnProgress(nil) // ignored
		return "The user refused this call.", true, nil
	}}
	e := newEnv(t, model.Options{}, newFakeTools(gated), nil)
	rec := &recorder{}
	res, err := e.agent(t, func(c *agent.Config) { c.AuthWait = time.Second }).RunText(context.Background(), "echo hi", rec.on)
	if err != nil {
		t.Fatal(err)
	}
	if res.Text != "Results: The user refused this call." {
		t.Errorf("text = %q", res.Text)
	}
	if got := rec.last(agent.EventAuthRequired); !cmp.Equal(got, &agent.AuthRequiredEvent{ServerID: "github", ID: "call_1_0", Declined: true}) {
		t.Errorf("authrequired = %+v", got)
	}
	if got := rec.last(agent.EventApproval); !cmp.Equal(got, &agent.ApprovalEvent{ID: "call_1_0", ServerID: "github", Tool: "echo", Name: "github_echo", DecidedBy: "policy", Policy: "server"}) {
		t.Errorf("approval = %+v", got)
	}
}

func TestRunWithoutTools(t *testing.T) {
	calls := 0
	m := agent.ModelFunc(func(ctx context.Context, req agent.Request, onText func(string)) (agent.Message, error) {
		calls++
		if req.HasTools() {
			t.Errorf("tools offered: %s", req.Tools)
		}
		if calls == 1 { // a hallucinated call, and no id
			return agent.Message{ToolCalls: []agent.ToolCall{{Function: agent.FunctionCall{Name: "ghost", Arguments: "{}"}}}}, nil
		}
		return agent.Message{Content: req.Messages[len(req.Messages)-1].Content}, nil
	})
	a, err := agent.New(agent.Config{Model: m})
	if err != nil {
		t.Fatal(err)
	}
	res, err := a.RunText(context.Background(), "hi", nil)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(res.Text, `There is no tool "ghost"`) || res.Messages[1].ToolCalls[0].ID != "call_0_0" {
		t.Errorf("result = %+v", res)
	}
}

func TestRunValidatesInput(t *testing.T) {
	a, _ := agent.New(agent.Config{Model: agent.ModelFunc(func(context.Context, agent.Request, func(string)) (agent.Message, error) {
		t.Error("the model was asked")
		return agent.Message{}, nil
	})})
	for _, in := range [][]agent.Message{nil, {{Role: "robot", Content: "x"}}, {{Role: "tool", Content: "x"}}} {
		rec := &recorder{}
		if _, err := a.Run(context.Background(), in, rec.on); mcperr.CodeOf(err, "") != mcperr.InvalidArgument {
			t.Errorf("Run(%v) = %v; want invalid_argument", in, err)
		}
		if ev, _ := rec.last(agent.EventError).(*agent.ErrorEvent); ev == nil || ev.Code != "invalid_argument" {
			t.Errorf("error event = %+v", ev)
		}
	}
}

func TestNewValidates(t *testing.T) {
	if _, err := agent.New(agent.Config{}); mcperr.CodeOf(err, "") != mcperr.InvalidArgument || !strings.HasPrefix(err.Error(), "agent: ") {
		t.Errorf("no model: %v", err)
	}
	m := agent.ModelFunc(nil)
	if _, err := agent.New(agent.Config{Model: m, MaxSteps: -1}); err == nil {
		t.Error("negative MaxSteps accepted")
	}
}

// TestKeyRedacted: a provider that echoes the key never gets it into an
// error, an event, a log line or a printed value.
func TestKeyRedacted(t *testing.T) {
	e := newEnv(t, model.Options{}, newFakeTools(addTool()), nil)
	e.model.FailNext(model.EchoKey)
	var logs bytes.Buffer
	logger := slog.New(slog.NewJSONHandler(&logs, nil))
	rec := &recorder{}
	_, err := e.agent(t, nil).RunText(context.Background(), "hello", rec.on)
	if mcperr.StatusOf(err) != 401 {
		t.Fatalf("err = %v; want the 401", err)
	}
	evs, _ := json.Marshal(rec.all())
	cfg := openai.Config{APIKey: agent.NewSecret(testKey), Model: "m"}
	logger.Info("run failed", "err", err, "cfg", cfg, "key", cfg.APIKey)
	slog.New(slog.NewTextHandler(&logs, nil)).Info("again", "err", err, "cfg", cfg)
	outputs := map[string]string{
		"err":       err.Error(),
		"err %+v":   fmt.Sprintf("%+v", err),
		"events":    string(evs),
		"logs":      logs.String(),
		"cfg %v":    fmt.Sprintf("%v", cfg),
		"cfg %+v":   fmt.Sprintf("%+v", cfg),
		"cfg %#v":   fmt.Sprintf("%#v", cfg),
		"model %+v": fmt.Sprintf("%+v", e.llm),
	}
	for name, out := range outputs {
		for _, leak := range []string{testKey, testKey[:12], testKey[10:22]} {
			if strings.Contains(out, leak) {
				t.Errorf("%s leaks the key: %s", name, out)
			}
		}
	}
	if !strings.Contains(err.Error(), "Incorrect API key provided: [redacted]. The key prefix [redacted] is unknown") {
		t.Errorf("err = %v", err)
	}
}

func TestRunReturnsPartialOnModelError(t *testing.T) {
	boom := errors.New("boom")
	step := 0
	m := agent.ModelFunc(func(ctx context.Context, req agent.Request, onText func(string)) (agent.Message, error) {
		if step++; step == 2 {
			return agent.Message{}, boom
		}
		return agent.Message{ToolCalls: []agent.ToolCall{{ID: "c", Function: agent.FunctionCall{Name: "calc_add", Arguments: `{"a":1,"b":1}`}}}}, nil
	})
	a, _ := agent.New(agent.Config{Model: m, Tools: newFakeTools(addTool())})
	rec := &recorder{}
	res, err := a.RunText(context.Background(), "x", rec.on)
	if ev := rec.last(agent.EventError).(*agent.ErrorEvent); ev.Code != "protocol" {
		t.Errorf("error event = %+v; want an uncoded model error reported as protocol", ev)
	}
	if !errors.Is(err, boom) || !strings.HasPrefix(err.Error(), "agent: step 1: ") {
		t.Errorf("err = %v", err)
	}
	if len(res.Messages) != 3 {
		t.Errorf("messages = %+v; want input, call, result", res.Messages)
	}
}

// An agent's runs are one conversation: every call of every run carries
// the agent's one approval scope, so the host's "always" and "server"
// answers hold across its turns; another agent has its own.
func TestApprovalScopeIsTheAgent(t *testing.T) {
	echo, scopesOf := scopeTool()
	e := newEnv(t, model.Options{}, newFakeTools(echo), nil)
	first := e.agent(t, nil)
	for range 2 {
		if _, err := first.RunText(context.Background(), "echo hi", nil); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := e.agent(t, nil).RunText(context.Background(), "echo hi", nil); err != nil {
		t.Fatal(err)
	}
	scopes := scopesOf()
	if len(scopes) != 3 || scopes[0] == nil || scopes[0] != scopes[1] || scopes[2] == nil || scopes[2] == scopes[0] {
		t.Errorf("approval scopes of two runs of one agent, then another agent's = %p; want one scope, then another", scopes)
	}
}

// TestToolViewKnownAsTheCallIsWritten: a tool with a view (MCP Apps) is
// named with it in the first toolcalldelta of its call and in its
// toolcall, so a page can show the view while the model writes the
// arguments; a tool without a view carries none.
func TestToolViewKnownAsTheCallIsWritten(t *testing.T) {
	echo := echoTool()
	echo.view = "ui://text/echo.html"
	e := newEnv(t, model.Options{}, newFakeTools(addTool(), echo), nil)
	rec := &recorder{}
	if _, err := e.agent(t, nil).RunText(context.Background(), "add 2 and 40 and echo hi", rec.on); err != nil {
		t.Fatal(err)
	}
	want := &agent.ToolApp{ServerID: "text", Tool: "echo", ResourceURI: "ui://text/echo.html"}
	apps := map[string][]*agent.ToolApp{} // per exported name: the app of each delta
	calls := map[string]*agent.ToolApp{}
	for _, ev := range rec.all() {
		switch d := ev.Data.(type) {
		case *agent.ToolCallDeltaEvent:
			apps[d.Name] = append(apps[d.Name], d.App)
		case *agent.ToolCallEvent:
			calls[d.Name] = d.App
		}
	}
	if got := apps["text_echo"]; len(got) == 0 || !reflect.DeepEqual(got[0], want) || slices.ContainsFunc(got[1:], func(a *agent.ToolApp) bool { return a != nil }) {
		t.Errorf("text_echo's deltas carry apps %v; want %+v on the first only", got, want)
	}
	if got := apps["calc_add"]; len(got) == 0 || slices.ContainsFunc(got, func(a *agent.ToolApp) bool { return a != nil }) {
		t.Errorf("calc_add's deltas carry apps %v; want none (it has no view)", got)
	}
	if !reflect.DeepEqual(calls["text_echo"], want) || calls["calc_add"] != nil {
		t.Errorf("toolcall apps: echo %+v, add %+v; want %+v and none", calls["text_echo"], calls["calc_add"], want)
	}
}
