package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpwasm/mcpwasm/catalog"
	"github.com/mcpwasm/mcpwasm/mcperr"
)

// Tools is where the agent finds and calls tools: the model-facing side of
// a [catalog.Catalog], which implements it. Implementations must be safe
// for concurrent use: the calls of one step run at once.
type Tools interface {
	// ToolsFor exports the tools in a provider's format. The agent asks
	// before every step, so tools that appear or vanish during a run (a
	// sign-in, a server enabled) are seen, for [catalog.FormatOpenAI] or
	// the format its model names ([ToolFormatter]).
	ToolsFor(ctx context.Context, f catalog.Format) (json.RawMessage, error)
	// ModelCall runs one tool call as the model wrote it. It returns an
	// error only when ctx is done. Every other failure (an unknown tool,
	// arguments that are not JSON or fail the schema, a server that needs
	// sign-in, a refused approval) is a ToolResult with IsError set and a
	// text the model can act on.
	ModelCall(ctx context.Context, name, args string, opts catalog.CallOptions) (catalog.ToolResult, error)
}

// ToolLister is implemented by [Tools] that can name the server and tool
// behind an exported name; the agent then fills in ServerID and Tool of a
// [ToolCallEvent] before the call runs.
type ToolLister interface {
	Tools(ctx context.Context) ([]catalog.Tool, error)
}

// ConversationTools is implemented by [Tools] whose export depends on the
// tools the conversation already called (a catalog over its tool budget
// offers those and its search tools); the agent then passes their names
// (see [catalog.UsedTools]) with every request for the tools.
type ConversationTools interface {
	ToolsForConversation(ctx context.Context, f catalog.Format, used []string) (json.RawMessage, error)
}

// ToolFormatter is implemented by a [Model] that takes its tools in
// another of the catalog's formats than Chat Completions' (the Gemini
// adapter: the catalog's "gemini" export already carries the schemas in
// Gemini's subset); the agent then asks its [Tools] for that format, and
// [Request.Tools] carries it.
type ToolFormatter interface {
	ToolFormat() catalog.Format
}

var (
	_ Tools             = (*catalog.Catalog)(nil)
	_ ToolLister        = (*catalog.Catalog)(nil)
	_ ConversationTools = (*catalog.Catalog)(nil)
)

// DefaultMaxSteps is the step limit when Config.MaxSteps is 0.
const DefaultMaxSteps = 8

// maxCallsPerStep bounds the tool calls run for one model answer; the
// calls past it are answered with an error result instead of running.
const maxCallsPerStep = 64

// Why a run ended, in [Result] and [DoneEvent].
const (
	FinishStop     = "stop"      // the model answered without calling tools
	FinishMaxSteps = "max_steps" // the model was still calling tools at the step limit
	FinishEmpty    = "empty"     // the model answered with nothing
)

// Config configures an [Agent].
type Config struct {
	// Model answers. Required.
	Model Model
	// Tools are offered to the model. Nil offers none.
	Tools Tools
	// System, when set, is sent as the first message of every run. It is
	// not part of [Result.Messages].
	System string
	// MaxSteps bounds the model answers of one run (each answer with tool
	// calls is one step, and so is the final answer). 0 means
	// DefaultMaxSteps.
	MaxSteps int
	// AuthWait, when > 0, makes a call to a server that needs sign-in wait
	// this long for the user to sign in (an [AuthRequiredEvent] tells the
	// host to offer it) instead of failing at once.
	AuthWait time.Duration
	// CallTimeout bounds each tool call; 0 leaves it to the tools.
	CallTimeout time.Duration
	// OnEvent, when set, receives the events of every run, before the
	// run's own onEvent. See [Agent.Run] for the calling contract.
	OnEvent func(Event)
	// Conversations stores conversations ([Agent.RunConversation]); nil
	// means none can be stored.
	Conversations ConversationStore
	// Locker, when set, makes the read-check-write of a stored
	// conversation exclusive across everything sharing the store.
	Locker Locker
	// Compact, when set, bounds stored conversations (see [Compact]).
	Compact *Compact
	// Secrets never enter a stored conversation: each is redacted from its
	// messages and summary (the model's API key, header values).
	Secrets []Secret
	// ContextLimit is the model's context window in tokens, reported with
	// every [Usage] beside how full the context is; 0 reports none.
	ContextLimit int
	// Prices, when set, price every [Usage] (its Cost).
	Prices *Prices
}

// Agent runs the tool-calling loop: it sends the conversation and the tools
// to the model, streams the answer, runs the tool calls the model asks for,
// feeds their results back, and repeats until the model answers without
// calling tools or the step limit is reached. An Agent is safe for
// concurrent use; each Run is independent, except that the host's
// "always" and "server" approval answers hold for every run of the Agent:
// use one Agent per conversation ([Agent.RunConversation] keeps them per
// stored conversation instead).
type Agent struct {
	cfg Config
	// approvals is the scope of the host's "always" and "server" answers:
	// the agent's conversation, all its runs.
	approvals *catalog.Approvals
	convs     conversations
}

// New validates cfg and returns an Agent.
func New(cfg Config) (*Agent, error) {
	if cfg.Model == nil {
		return nil, mcperr.New(mcperr.InvalidArgument, "agent: Config.Model is required")
	}
	if cfg.MaxSteps < 0 {
		return nil, mcperr.New(mcperr.InvalidArgument, "agent: Config.MaxSteps must not be negative (0 means %d)", DefaultMaxSteps)
	}
	if cfg.MaxSteps == 0 {
		cfg.MaxSteps = DefaultMaxSteps
	}
	if c := cfg.Compact; c != nil && (c.MaxTokens <= 0 || c.MaxTokens > MaxConversationBytes/4) {
		return nil, mcperr.New(mcperr.InvalidArgument, "agent: compact.maxTokens must be between 1 and %d (a stored conversation's limit of %d bytes / 4)", MaxConversationBytes/4, MaxConversationBytes)
	}
	if cfg.ContextLimit < 0 || cfg.ContextLimit > MaxTokenCount {
		return nil, mcperr.New(mcperr.InvalidArgument, "agent: Config.ContextLimit must be between 0 and %d tokens", MaxTokenCount)
	}
	if p := cfg.Prices; p != nil {
		if err := p.check(); err != nil {
			return nil, mcperr.New(mcperr.InvalidArgument, "%v", err)
		}
		c := *p
		cfg.Prices = &c
	}
	return &Agent{cfg: cfg, approvals: new(catalog.Approvals)}, nil
}

// Result is the outcome of a run.
type Result struct {
	// Messages is the conversation: the input followed by every assistant
	// and tool message of the run (without Config.System). Pass it back,
	// with a new user message appended, to continue the conversation.
	Messages []Message `json:"messages"`
	// Text is the model's final answer ("" when it gave none).
	Text string `json:"text"`
	// Steps counts the model answers.
	Steps int `json:"steps"`
	// FinishReason is FinishStop, FinishMaxSteps or FinishEmpty.
	FinishReason string `json:"finishReason"`
	// Usage sums the token usage the model reported over the run's
	// steps; nil when it reported none.
	Usage *Usage `json:"usage,omitempty"`
}

// RunText runs a conversation that starts with one user message.
func (a *Agent) RunText(ctx context.Context, text string, onEvent func(Event)) (Result, error) {
	return a.Run(ctx, []Message{{Role: RoleUser, Content: text}}, onEvent)
}

// Run runs the loop on a conversation (see [Agent]).
//
// Events go to Config.OnEvent and then onEvent (either may be nil), one at
// a time, never concurrently, in the order they happen: text deltas (with
// a [StreamingModel], reasoning and toolcalldelta events among them, and
// a usage event after them when the provider reported usage), a
// step event per model answer, toolcall events, then approval,
// authrequired, elicitation, progress and toolresult events as the calls of the step
// run, and so on. A run that ends without failing sends a done event last;
// one that fails sends an error event last and returns an error with the
// same [mcperr] code. The callbacks must return promptly.
//
// Cancelling ctx aborts the run: the model request and every running tool
// call are cancelled, and Run returns an error coded [mcperr.Aborted]
// ([mcperr.Timeout] for a deadline) with the conversation so far, each
// unfinished call answered as aborted. A model that keeps calling tools is
// stopped after Config.MaxSteps answers (FinishMaxSteps); a model that
// answers with nothing ends the run with FinishEmpty. Neither is an error.
func (a *Agent) Run(ctx context.Context, input []Message, onEvent func(Event)) (Result, error) {
	r := &run{a: a, onEvent: onEvent, approvals: a.approvals}
	res, err := r.loop(ctx, input)
	if err != nil {
		if ctx.Err() != nil {
			err = mcperr.Wrap(mcperr.CodeOf(ctx.Err(), mcperr.Aborted), context.Cause(ctx), "agent: the run was aborted")
		}
		r.emit(EventError, &ErrorEvent{Code: string(mcperr.CodeOf(err, mcperr.Protocol)), Message: err.Error()})
	}
	return res, err
}

// run is the state of one Run.
type run struct {
	a       *Agent
	onEvent func(Event)
	mu      sync.Mutex // serialises the callbacks
	usage   *Usage     // the sum of the usage events so far
	// afterStep, when set, gets the conversation after each step (a
	// stored conversation saves it); its error ends the run.
	afterStep func([]Message) error
	// approvals is the scope of "always" and "server" answers: the
	// Agent's, or a stored conversation's own.
	approvals *catalog.Approvals
	// saveErr is why a stored conversation's last save failed.
	saveErr error
	// checkedTools is the last tools export found valid: an unchanged
	// export is not scanned again at the next step.
	checkedTools []byte
	// stepContext is the context the model reported for the current
	// step's response (0: none); scale is the model's tokens per
	// [EstimateTokens] token that the last report showed (0: none yet).
	stepContext int
	scale       float64
	// conv is the stored conversation the run is a turn of ("" for none).
	conv string
	// views are this run's tool calls with a view, by call id, for a
	// stored conversation to keep (keepView).
	views   map[string]KeptView
	viewsMu sync.Mutex
}

func (r *run) stepDone(msgs []Message) error {
	if r.afterStep == nil {
		return nil
	}
	return r.afterStep(msgs)
}

func (r *run) emit(typ string, data any) {
	if r.a.cfg.OnEvent == nil && r.onEvent == nil {
		return
	}
	ev := Event{Type: typ, Data: data}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.a.cfg.OnEvent != nil {
		r.a.cfg.OnEvent(ev)
	}
	if r.onEvent != nil {
		r.onEvent(ev)
	}
}

func (r *run) loop(ctx context.Context, input []Message) (Result, error) {
	if err := validateInput(input); err != nil {
		return Result{Messages: input}, err
	}
	cfg := &r.a.cfg
	res := Result{Messages: append([]Message(nil), input...)}
	for step := 0; step < cfg.MaxSteps; step++ {
		if err := ctx.Err(); err != nil {
			return res, err
		}
		tools, err := r.toolsFor(ctx, res.Messages)
		if err != nil {
			return res, err
		}
		conv := res.Messages
		if cfg.System != "" {
			conv = append([]Message{{Role: RoleSystem, Content: cfg.System}}, res.Messages...)
		}
		r.stepContext = 0
		msg, err := r.generate(ctx, step, Request{Messages: conv, Tools: tools})
		res.Usage = r.usage
		if err != nil {
			return res, fmt.Errorf("agent: step %d: %w", step, err)
		}
		msg = normalize(msg, step)
		r.measure(conv, tools, msg)
		res.Messages = append(res.Messages, msg)
		res.Steps = step + 1
		r.emit(EventStep, &StepEvent{Index: step, FinishReason: msg.FinishReason})

		if len(msg.ToolCalls) == 0 {
			if err := r.stepDone(res.Messages); err != nil {
				return res, err
			}
			res.Text = msg.Content
			if strings.TrimSpace(msg.Content) == "" {
				res.FinishReason = FinishEmpty
				r.emit(EventError, &ErrorEvent{Code: string(CodeEmptyResponse), Message: fmt.Sprintf(
					"agent: the model returned nothing (no text and no tool call) at step %d; try again or check the model", step)})
			} else {
				res.FinishReason = FinishStop
			}
			r.emit(EventDone, &DoneEvent{Text: res.Text, FinishReason: res.FinishReason, Steps: res.Steps, Usage: res.Usage})
			return res, nil
		}

		res.Messages = append(res.Messages, r.callTools(ctx, msg.ToolCalls)...)
		if err := ctx.Err(); err != nil {
			return res, err
		}
		if err := r.stepDone(res.Messages); err != nil {
			return res, err
		}
		res.Text = msg.Content
	}
	res.FinishReason = FinishMaxSteps
	r.emit(EventError, &ErrorEvent{Code: string(CodeMaxSteps), Message: fmt.Sprintf(
		"agent: the model was still calling tools after %d steps, so the run stopped; raise MaxSteps or narrow the task", cfg.MaxSteps)})
	r.emit(EventDone, &DoneEvent{Text: res.Text, FinishReason: res.FinishReason, Steps: res.Steps, Usage: res.Usage})
	return res, nil
}

// toolsFor returns the tools of this step, for the conversation conv, in
// the Chat Completions shape or the one the model names.
func (r *run) toolsFor(ctx context.Context, conv []Message) (json.RawMessage, error) {
	if r.a.cfg.Tools == nil {
		return nil, nil
	}
	format := catalog.FormatOpenAI
	if tf, ok := r.a.cfg.Model.(ToolFormatter); ok {
		format = tf.ToolFormat()
	}
	var t json.RawMessage
	var err error
	if ct, ok := r.a.cfg.Tools.(ConversationTools); ok {
		var names, args []string
		for _, m := range conv {
			for _, tc := range m.ToolCalls {
				names, args = append(names, tc.Function.Name), append(args, tc.Function.Arguments)
			}
		}
		t, err = ct.ToolsForConversation(ctx, format, catalog.UsedTools(names, args))
	} else {
		t, err = r.a.cfg.Tools.ToolsFor(ctx, format)
	}
	if err != nil {
		return nil, fmt.Errorf("agent: listing the tools: %w", err)
	}
	if t = bytes.TrimSpace(t); len(t) > 0 && !bytes.Equal(t, r.checkedTools) {
		if t[0] != '[' || !json.Valid(t) {
			return nil, mcperr.New(mcperr.Protocol, "agent: the tools export is not a JSON array")
		}
		r.checkedTools = bytes.Clone(t) // a copy: the export may be reused by the Tools
	}
	return t, nil
}

// validateInput checks a run's input conversation.
func validateInput(msgs []Message) error {
	if len(msgs) == 0 {
		return mcperr.New(mcperr.InvalidArgument, "agent: a run needs at least one message")
	}
	for i, m := range msgs {
		switch m.Role {
		case RoleSystem, RoleUser, RoleAssistant:
		case RoleTool:
			if m.ToolCallID == "" {
				return mcperr.New(mcperr.InvalidArgument, "agent: message %d is a tool message without tool_call_id", i)
			}
		default:
			return mcperr.New(mcperr.InvalidArgument, "agent: message %d has role %q; want system, user, assistant or tool", i, m.Role)
		}
	}
	return nil
}

// normalize makes a model's answer a well-formed assistant message: role
// assistant, tool calls typed "function" with unique, non-empty ids (some
// local models send none), and a finish reason.
func normalize(m Message, step int) Message {
	m.Role = RoleAssistant
	m.ToolCallID = ""
	if len(m.ToolCalls) > 0 {
		calls := make([]ToolCall, len(m.ToolCalls))
		seen := make(map[string]bool, len(calls))
		for i, tc := range m.ToolCalls {
			tc.Type = "function"
			if tc.ID == "" || seen[tc.ID] {
				tc.ID = fmt.Sprintf("call_%d_%d", step, i)
			}
			seen[tc.ID] = true
			calls[i] = tc
		}
		m.ToolCalls = calls
	}
	if m.FinishReason == "" {
		if len(m.ToolCalls) > 0 {
			m.FinishReason = "tool_calls"
		} else {
			m.FinishReason = "stop"
		}
	}
	return m
}

// callTools runs the calls of one step at once and returns their tool
// messages in call order.
func (r *run) callTools(ctx context.Context, calls []ToolCall) []Message {
	cfg := &r.a.cfg
	where := r.lookup(ctx)
	for _, tc := range calls {
		ev := &ToolCallEvent{ID: tc.ID, Name: tc.Function.Name, Arguments: tc.Function.Arguments}
		// A call through catalog_call_tool names the tool it calls.
		if w, ok := where[calledName(tc)]; ok {
			ev.ServerID = w.ServerID
			if w.Tool != nil {
				ev.Tool = w.Tool.Name
			}
			ev.App = r.toolApp(w, tc.ID)
		}
		r.emit(EventToolCall, ev)
	}
	results := make([]catalog.ToolResult, len(calls))
	var wg sync.WaitGroup
	for i, tc := range calls {
		name := tc.Function.Name
		if i >= maxCallsPerStep {
			results[i] = catalog.ToolResult{Name: name, IsError: true, Text: fmt.Sprintf(
				"This call was not run: at most %d tool calls run per answer. Make fewer calls at once.", maxCallsPerStep)}
			r.emitResult(tc.ID, results[i])
			continue
		}
		if cfg.Tools == nil {
			results[i] = catalog.ToolResult{Name: name, IsError: true, Text: fmt.Sprintf(
				"There is no tool %q: no tools are available in this conversation. Answer without tools.", name)}
			r.emitResult(tc.ID, results[i])
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			opts := catalog.CallOptions{
				Timeout:  cfg.CallTimeout,
				AuthWait: cfg.AuthWait,
				OnAuthRequired: func(ar catalog.AuthRequired) {
					r.emit(EventAuthRequired, &AuthRequiredEvent{ServerID: ar.ID, ID: tc.ID, Declined: ar.Declined})
				},
				OnApproval: func(req catalog.ApprovalRequest, d catalog.ApprovalDecision) {
					r.emit(EventApproval, &ApprovalEvent{ID: tc.ID, ServerID: req.ID, Tool: req.Tool, Name: req.Name, Approved: d.Approved,
						DecidedBy: d.DecidedBy, Scope: d.Scope, Policy: d.Policy})
				},
				Approvals: r.approvals,
				OnElicitation: func(req catalog.ElicitationRequest) {
					ev := &ElicitationEvent{ID: tc.ID, ElicitationID: req.ElicitationID, ServerID: req.ServerID, Mode: req.Mode()}
					if p := req.Params; p != nil {
						ev.Message, ev.RequestedSchema, ev.URL = p.Message, p.RequestedSchema, p.URL
					}
					r.emit(EventElicitation, ev)
				},
				OnProgress: func(p *mcp.ProgressNotificationParams) {
					if p != nil {
						r.emit(EventProgress, &ProgressEvent{ID: tc.ID, Name: name, Progress: p.Progress, Total: p.Total, Message: p.Message})
					}
				},
			}
			res, err := cfg.Tools.ModelCall(ctx, name, tc.Function.Arguments, opts)
			switch {
			case err != nil && ctx.Err() != nil:
				res = catalog.ToolResult{Name: name, IsError: true, Text: "The call was aborted: the user stopped the run."}
			case err != nil:
				// ModelCall should not fail otherwise; tell the model anyway.
				res = catalog.ToolResult{Name: name, IsError: true, Text: "The tool call failed: " + err.Error()}
			}
			if res.Name == "" {
				res.Name = name
			}
			results[i] = res
			r.emitResult(tc.ID, res)
		}()
	}
	wg.Wait()
	msgs := make([]Message, len(calls))
	for i, tc := range calls {
		msgs[i] = Message{Role: RoleTool, ToolCallID: tc.ID, Content: results[i].Text}
	}
	return msgs
}

func (r *run) emitResult(id string, res catalog.ToolResult) {
	ev := &ToolResultEvent{ID: id, Name: res.Name, ServerID: res.ServerID, Tool: res.Tool, IsError: res.IsError, Text: res.Text}
	if res.UI != nil && res.UI.ResourceURI != "" && res.Result != nil {
		ev.App = &ToolApp{ServerID: res.ServerID, Tool: res.Tool, ResourceURI: res.UI.ResourceURI, StateKey: r.stateKey(id)}
		ev.Result = res.Result
		r.keepView(id, *ev.App, res.Result)
	}
	r.emit(EventToolResult, ev)
}

// lookup maps exported names to their servers when the tools can say.
func (r *run) lookup(ctx context.Context) map[string]catalog.Tool {
	l, ok := r.a.cfg.Tools.(ToolLister)
	if !ok {
		return nil
	}
	list, err := l.Tools(ctx)
	if err != nil {
		return nil // best effort: the result event names the server anyway
	}
	m := make(map[string]catalog.Tool, len(list))
	for _, t := range list {
		m[t.Name] = t
	}
	return m
}

// toolApp names the view of w for call callID, or is nil when it has none.
func (r *run) toolApp(w catalog.Tool, callID string) *ToolApp {
	if w.UI == nil || w.UI.ResourceURI == "" || w.Tool == nil {
		return nil
	}
	return &ToolApp{ServerID: w.ServerID, Tool: w.Tool.Name, ResourceURI: w.UI.ResourceURI, StateKey: r.stateKey(callID)}
}

// stateKey is the stateKey of the view of call callID: in a stored
// conversation's run only.
func (r *run) stateKey(callID string) string {
	if r.conv == "" {
		return ""
	}
	return ViewStateKey(r.conv, callID)
}

// calledName is the exported name of the tool tc calls: the one it names
// when it is a catalog_call_tool call, else its own.
func calledName(tc ToolCall) string {
	if tc.Function.Name != catalog.MetaCallTool {
		return tc.Function.Name
	}
	if used := catalog.UsedTools([]string{tc.Function.Name}, []string{tc.Function.Arguments}); len(used) == 1 {
		return used[0]
	}
	return tc.Function.Name
}
