package agent

import (
	"context"
	"errors"
	"fmt"
	"math"

	"github.com/mcpwasm/mcpwasm/catalog"
)

// Stream receives what a model streams besides the answer's text: its
// reasoning, the tool calls as their arguments are written, and the token
// usage of the response. Any field may be nil. The calls come from the
// goroutine that called [StreamingModel.Stream], one at a time.
type Stream struct {
	// Text receives the answer's text as it streams.
	Text func(delta string)
	// Reasoning receives the model's reasoning text (Anthropic's thinking,
	// the reasoning fields of OpenAI-compatible servers) as it streams.
	Reasoning func(delta string)
	// ToolCall receives each piece of a tool call as the model writes it:
	// first its name (and id, when the provider sends one), then its
	// arguments piece by piece.
	ToolCall func(ToolCallDelta)
	// Usage receives the response's token counts once, when the
	// provider reported them, before Stream returns.
	Usage func(Usage)
}

// Filled returns s with its nil callbacks replaced by ones that do
// nothing, so that an adapter calls them without checking.
func (s Stream) Filled() Stream {
	if s.Text == nil {
		s.Text = func(string) {}
	}
	if s.Reasoning == nil {
		s.Reasoning = func(string) {}
	}
	if s.ToolCall == nil {
		s.ToolCall = func(ToolCallDelta) {}
	}
	if s.Usage == nil {
		s.Usage = func(Usage) {}
	}
	return s
}

// ToolCallDelta is a piece of a tool call being written.
type ToolCallDelta struct {
	// Index is the call's position among the answer's tool calls.
	Index int
	// ID is the provider's call id, when known ("" until then).
	ID string
	// Name is the tool name, when known.
	Name string
	// ArgumentsDelta is the next piece of the arguments' JSON text.
	ArgumentsDelta string
}

// StreamingModel is a [Model] that also streams its reasoning, its tool
// calls as they are written, and reports token usage. The adapters
// (agent/openai, agent/anthropic, agent/openairesponses, agent/gemini)
// implement it; [Agent] uses Stream when its model has it, and Generate
// otherwise.
type StreamingModel interface {
	Model
	// Stream is Generate with every callback of s.
	Stream(ctx context.Context, req Request, s Stream) (Message, error)
}

// MaxTokenCount bounds a token count taken from a provider: larger ones
// (and negative ones) are not counts but garbage, and are ignored.
const MaxTokenCount = 1 << 30

// Usage is the token usage of one model response, or the sum of a run's.
// Its JSON names are those of the JavaScript API.
type Usage struct {
	// InputTokens counts every input token of the request, cached ones
	// included.
	InputTokens int `json:"inputTokens"`
	// OutputTokens counts the tokens generated, reasoning included.
	OutputTokens int `json:"outputTokens"`
	// CachedInputTokens is the part of InputTokens read from the
	// provider's prompt cache, when it said (omitted when 0).
	CachedInputTokens int `json:"cachedInputTokens,omitempty"`
	// ReasoningTokens is the part of OutputTokens spent reasoning, when
	// the provider said (omitted when 0).
	ReasoningTokens int `json:"reasoningTokens,omitempty"`

	// The agent's figures, not the provider's (the adapters leave them
	// 0): ContextTokens is how full the model's context is after the
	// response, its input and output tokens (of a run's sum: the last
	// response's); ContextLimit is [Config.ContextLimit], when set; Cost is
	// the price of the tokens at [Config.Prices] (of a run's sum: the
	// sum), nil without prices.
	ContextTokens int      `json:"contextTokens,omitempty"`
	ContextLimit  int      `json:"contextLimit,omitempty"`
	Cost          *float64 `json:"cost,omitempty"`
}

// Prices are a model's prices per million tokens, in the page's currency.
type Prices struct {
	Input  float64 `json:"input"`
	Output float64 `json:"output"`
	// CachedInput prices the input tokens read from the provider's prompt
	// cache; nil: Input's price.
	CachedInput *float64 `json:"cachedInput,omitempty"`
}

// Cost is the price of u's tokens.
func (p *Prices) Cost(u Usage) float64 {
	cached := p.Input
	if p.CachedInput != nil {
		cached = *p.CachedInput
	}
	return (float64(u.InputTokens-u.CachedInputTokens)*p.Input + float64(u.CachedInputTokens)*cached + float64(u.OutputTokens)*p.Output) / 1e6
}

// check reports a price that is not a number of money: negative, NaN or
// infinite.
func (p *Prices) check() error {
	for _, v := range []*float64{&p.Input, &p.Output, p.CachedInput} {
		if v != nil && !(*v >= 0 && *v <= math.MaxFloat64) {
			return errors.New("agent: Config.Prices must be numbers of 0 or more (prices per million tokens)")
		}
	}
	return nil
}

// Checked returns u with every count a provider could not mean dropped
// (set to 0): negative ones, ones over [MaxTokenCount], cached input
// beyond the input, reasoning beyond the output.
func (u Usage) Checked() Usage {
	ok := func(n int) int {
		if n < 0 || n > MaxTokenCount {
			return 0
		}
		return n
	}
	u.InputTokens, u.OutputTokens = ok(u.InputTokens), ok(u.OutputTokens)
	if u.CachedInputTokens = ok(u.CachedInputTokens); u.CachedInputTokens > u.InputTokens {
		u.CachedInputTokens = 0
	}
	if u.ReasoningTokens = ok(u.ReasoningTokens); u.ReasoningTokens > u.OutputTokens {
		u.ReasoningTokens = 0
	}
	return u
}

// add adds v, a later response's usage, to u: the counts and costs sum,
// and the context is v's.
func (u *Usage) add(v Usage) {
	u.InputTokens += v.InputTokens
	u.OutputTokens += v.OutputTokens
	u.CachedInputTokens += v.CachedInputTokens
	u.ReasoningTokens += v.ReasoningTokens
	u.ContextTokens, u.ContextLimit = v.ContextTokens, v.ContextLimit
	if v.Cost != nil {
		c := *v.Cost
		if u.Cost != nil {
			c += *u.Cost
		}
		u.Cost = &c
	}
}

// generate asks the model for step's answer, turning what it streams into
// events: text, reasoning, toolcalldelta and, when the response reported
// it, usage (also added to the run's total).
func (r *run) generate(ctx context.Context, step int, req Request) (Message, error) {
	s := Stream{Text: func(delta string) {
		if delta != "" {
			r.emit(EventText, &TextEvent{Delta: delta})
		}
	}}
	sm, ok := r.a.cfg.Model.(StreamingModel)
	if !ok {
		return r.a.cfg.Model.Generate(ctx, req, s.Text)
	}
	s.Reasoning = func(delta string) {
		if delta != "" {
			r.emit(EventReasoning, &ReasoningEvent{Delta: delta})
		}
	}
	calls := callIDs{step: step}
	var where map[string]catalog.Tool // looked up at the first call the model writes
	named := map[string]bool{}        // the calls whose first event went out
	s.ToolCall = func(d ToolCallDelta) {
		ev, ok := calls.event(d)
		if !ok {
			return
		}
		if ev.Name != "" && !named[ev.ID] {
			named[ev.ID] = true
			if where == nil {
				where = r.lookup(ctx)
			}
			if w, ok := where[ev.Name]; ok {
				ev.App = r.toolApp(w, ev.ID)
			}
		}
		r.emit(EventToolCallDelta, ev)
	}
	s.Usage = func(u Usage) {
		u = u.Checked()
		u.ContextTokens, u.ContextLimit, u.Cost = u.InputTokens+u.OutputTokens, r.a.cfg.ContextLimit, nil
		if p := r.a.cfg.Prices; p != nil {
			c := p.Cost(u)
			u.Cost = &c
		}
		if r.usage == nil {
			r.usage = &Usage{}
		}
		r.usage.add(u)
		r.stepContext = u.ContextTokens
		r.emit(EventUsage, &UsageEvent{Usage: u})
	}
	return sm.Stream(ctx, req, s)
}

// maxStreamedCalls bounds the calls of one answer that toolcalldelta
// events follow (the adapters bound the calls of an answer lower).
const maxStreamedCalls = 1024

// callIDs names the calls of one answer as they stream with the ids their
// toolcall events will carry: the provider's id, or, for a call without
// one or with an id an earlier call took, the id [normalize] gives it.
type callIDs struct {
	step  int
	ids   []string // by index
	names []string
	taken map[string]bool
}

func (c *callIDs) event(d ToolCallDelta) (*ToolCallDeltaEvent, bool) {
	if d.Index < 0 || d.Index >= maxStreamedCalls {
		return nil, false
	}
	for len(c.ids) <= d.Index {
		c.ids = append(c.ids, "")
		c.names = append(c.names, "")
	}
	if c.ids[d.Index] == "" && d.ID != "" {
		if c.taken == nil {
			c.taken = map[string]bool{}
		}
		if !c.taken[d.ID] {
			c.ids[d.Index] = d.ID
			c.taken[d.ID] = true
		}
	}
	if c.names[d.Index] == "" {
		c.names[d.Index] = d.Name
	}
	if d.ArgumentsDelta == "" && d.Name == "" {
		return nil, false
	}
	id := c.ids[d.Index]
	if id == "" {
		id = fmt.Sprintf("call_%d_%d", c.step, d.Index)
	}
	return &ToolCallDeltaEvent{ID: id, Name: c.names[d.Index], ArgumentsDelta: d.ArgumentsDelta}, true
}
