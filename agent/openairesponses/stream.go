package openairesponses

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strings"

	"github.com/mcpwasm/mcpwasm/agent"
	"github.com/mcpwasm/mcpwasm/agent/internal/provider"
	"github.com/mcpwasm/mcpwasm/agent/internal/sse"
	"github.com/mcpwasm/mcpwasm/mcperr"
)

// item is an output item: as output_item.done and a non-streamed
// response carry it whole, and as output_item.added starts it.
type item struct {
	Type      string `json:"type"` // "message", "function_call", "reasoning", or another (ignored)
	ID        string `json:"id"`
	CallID    string `json:"call_id"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
	Content   []struct {
		Type    string `json:"type"` // "output_text", "refusal"
		Text    string `json:"text"`
		Refusal string `json:"refusal"`
	} `json:"content"`
	Summary []struct {
		Text string `json:"text"`
	} `json:"summary"`
}

// response is the Response object of response.created, .completed,
// .incomplete and .failed events, and a non-streamed answer.
type response struct {
	Model             string            `json:"model"`
	Status            string            `json:"status"`
	Output            []json.RawMessage `json:"output"`
	Usage             json.RawMessage   `json:"usage"`
	Error             *apiError         `json:"error"`
	IncompleteDetails *struct {
		Reason string `json:"reason"`
	} `json:"incomplete_details"`
}

// event is every streamed event's data; fields by type.
type event struct {
	Type         string          `json:"type"`
	OutputIndex  *int            `json:"output_index"`
	SummaryIndex int             `json:"summary_index"`
	Delta        string          `json:"delta"`
	Arguments    string          `json:"arguments"`
	Item         json.RawMessage `json:"item"`
	Response     *response       `json:"response"`
	// An error event's fields: its own, or an error object.
	Code    json.RawMessage `json:"code"`
	Message string          `json:"message"`
	Error   *apiError       `json:"error"`
}

// out is one output item as it streams in.
type out struct {
	kind     string
	call     int // a function call's position among the answer's calls
	callID   string
	name     string
	args     strings.Builder
	text     bool // text deltas came for this message
	summary  int  // the reasoning summary part being streamed
	streamed bool // reasoning deltas came for this item
}

type streamState struct {
	m         *Model
	st        agent.Stream
	items     map[int]*out
	calls     []agent.ToolCall
	reasoning []json.RawMessage // whole reasoning items, for ProviderState
	text      strings.Builder
	size      int
	model     string
	finish    string
	usage     json.RawMessage
}

func (s *streamState) grow(n int) error {
	if s.size += n; s.size > maxAnswer {
		return s.m.client.Protocol("the answer is larger than %d bytes", maxAnswer)
	}
	return nil
}

func (s *streamState) addText(t string) error {
	if t == "" {
		return nil
	}
	if err := s.grow(len(t)); err != nil {
		return err
	}
	s.text.WriteString(t)
	s.st.Text(t)
	return nil
}

func (s *streamState) addReasoning(t string) error {
	if t == "" {
		return nil
	}
	if err := s.grow(len(t)); err != nil {
		return err
	}
	s.st.Reasoning(t)
	return nil
}

// at returns the item of an event, started by output_item.added.
func (s *streamState) at(e *event) (*out, error) {
	if e.OutputIndex == nil {
		return nil, s.m.client.Protocol("%s without an output_index", e.Type)
	}
	o, ok := s.items[*e.OutputIndex]
	if !ok {
		return nil, s.m.client.Protocol("%s for output %d, which never started", e.Type, *e.OutputIndex)
	}
	return o, nil
}

// start begins the output item at index i.
func (s *streamState) start(i int, raw json.RawMessage) (*out, error) {
	if _, dup := s.items[i]; dup || i < 0 || len(s.items) >= maxItems {
		return nil, s.m.client.Protocol("response.output_item.added: bad or repeated output_index %d", i)
	}
	var it item
	if err := json.Unmarshal(raw, &it); err != nil {
		return nil, s.m.client.Protocol("an output item is not valid JSON: %v", err)
	}
	o := &out{kind: it.Type}
	s.items[i] = o
	if it.Type == "function_call" {
		if len(s.calls) >= maxToolCalls {
			return nil, s.m.client.Protocol("more than %d tool calls in one answer", maxToolCalls)
		}
		if err := s.grow(len(it.Name) + len(it.CallID)); err != nil {
			return nil, err
		}
		o.call, o.callID, o.name = len(s.calls), it.CallID, it.Name
		s.calls = append(s.calls, agent.ToolCall{ID: it.CallID, Type: "function", Function: agent.FunctionCall{Name: it.Name}})
		s.st.ToolCall(agent.ToolCallDelta{Index: o.call, ID: o.callID, Name: o.name})
		if err := s.addArgs(o, it.Arguments); err != nil {
			return nil, err
		}
	}
	return o, nil
}

func (s *streamState) addArgs(o *out, d string) error {
	if d == "" {
		return nil
	}
	if o.kind != "function_call" {
		return s.m.client.Protocol("function call arguments for a %s item", o.kind)
	}
	if err := s.grow(len(d)); err != nil {
		return err
	}
	o.args.WriteString(d)
	s.calls[o.call].Function.Arguments = o.args.String()
	s.st.ToolCall(agent.ToolCallDelta{Index: o.call, ID: o.callID, Name: o.name, ArgumentsDelta: d})
	return nil
}

// done takes a whole item: what its deltas did not bring (a server that
// sends items whole), and a reasoning item to keep.
func (s *streamState) done(o *out, raw json.RawMessage) error {
	var it item
	if err := json.Unmarshal(raw, &it); err != nil {
		return s.m.client.Protocol("an output item is not valid JSON: %v", err)
	}
	switch it.Type {
	case "function_call":
		if o.args.Len() == 0 {
			return s.addArgs(o, it.Arguments)
		}
	case "message":
		if !o.text {
			for _, c := range it.Content {
				if err := s.addText(c.Text + c.Refusal); err != nil {
					return err
				}
			}
		}
	case "reasoning":
		if !o.streamed {
			for i, p := range it.Summary {
				if i > 0 {
					p.Text = "\n\n" + p.Text
				}
				if err := s.addReasoning(p.Text); err != nil {
					return err
				}
			}
		}
		if it.ID != "" {
			if err := s.grow(len(raw)); err != nil {
				return err
			}
			s.reasoning = append(s.reasoning, bytes.Clone(raw))
		}
	}
	return nil
}

// handle applies one event; end reports response.completed or
// response.incomplete.
func (s *streamState) handle(e *event) (end bool, err error) {
	if apply, ok := itemEvents[e.Type]; ok {
		o, err := s.at(e)
		if err != nil {
			return false, err
		}
		return false, apply(s, o, e)
	}
	switch e.Type {
	case "response.created", "response.in_progress":
		if e.Response != nil && e.Response.Model != "" {
			s.model = e.Response.Model
		}
	case "response.output_item.added":
		if e.OutputIndex == nil || len(e.Item) == 0 {
			return false, s.m.client.Protocol("response.output_item.added without output_index or item")
		}
		_, err = s.start(*e.OutputIndex, e.Item)
	case "response.completed", "response.incomplete", "response.failed", "error":
		return s.ended(e)
	}
	// Other events (content parts, annotations, events added later) carry
	// nothing the agent shows.
	return false, err
}

// itemEvents apply the events about an output item that
// response.output_item.added started, by type.
var itemEvents = map[string]func(s *streamState, o *out, e *event) error{
	"response.output_text.delta": textDelta,
	"response.refusal.delta":     textDelta,
	"response.function_call_arguments.delta": func(s *streamState, o *out, e *event) error {
		return s.addArgs(o, e.Delta)
	},
	"response.function_call_arguments.done": func(s *streamState, o *out, e *event) error {
		if o.kind != "function_call" || o.args.Len() > 0 {
			return nil // the deltas brought them
		}
		return s.addArgs(o, e.Arguments)
	},
	"response.reasoning_summary_text.delta": reasoningDelta,
	"response.reasoning_text.delta":         reasoningDelta,
	"response.output_item.done": func(s *streamState, o *out, e *event) error {
		return s.done(o, e.Item)
	},
}

func textDelta(s *streamState, o *out, e *event) error {
	o.text = true
	return s.addText(e.Delta)
}

func reasoningDelta(s *streamState, o *out, e *event) error {
	d := e.Delta
	if e.Type == "response.reasoning_summary_text.delta" && e.SummaryIndex != o.summary && d != "" {
		o.summary, d = e.SummaryIndex, "\n\n"+d // a new summary part
	}
	o.streamed = o.streamed || d != ""
	return s.addReasoning(d)
}

// ended applies the event that ends the stream: the response, complete or
// incomplete (end), or its failure.
func (s *streamState) ended(e *event) (end bool, err error) {
	switch e.Type {
	case "response.failed":
		if e.Response == nil || e.Response.Error == nil {
			return false, s.m.client.Protocol("response.failed without an error")
		}
		return false, s.m.streamError(e.Response.Error)
	case "error":
		if e.Error != nil {
			return false, s.m.streamError(e.Error)
		}
		return false, s.m.streamError(&apiError{Message: e.Message, Code: e.Code})
	}
	if e.Response == nil {
		return false, s.m.client.Protocol("%s without its response", e.Type)
	}
	s.end(e.Response)
	return true, nil
}

// end takes the final response's model, usage and why it ended.
func (s *streamState) end(r *response) {
	if r.Model != "" {
		s.model = r.Model
	}
	s.usage = r.Usage
	switch {
	case r.Status == "incomplete" && r.IncompleteDetails != nil && r.IncompleteDetails.Reason == "max_output_tokens":
		s.finish = "length"
	case r.Status == "incomplete" && r.IncompleteDetails != nil && r.IncompleteDetails.Reason == "content_filter":
		s.finish = "content_filter"
	case r.Status == "incomplete":
		s.finish = "incomplete"
	case len(s.calls) > 0:
		s.finish = "tool_calls"
	default:
		s.finish = "stop"
	}
}

// wireUsage is the API's usage object, read leniently ([provider.Count]).
type wireUsage struct {
	InputTokens        json.RawMessage `json:"input_tokens"`
	OutputTokens       json.RawMessage `json:"output_tokens"`
	InputTokensDetails *struct {
		CachedTokens json.RawMessage `json:"cached_tokens"`
	} `json:"input_tokens_details"`
	OutputTokensDetails *struct {
		ReasoningTokens json.RawMessage `json:"reasoning_tokens"`
	} `json:"output_tokens_details"`
}

func usageOf(raw json.RawMessage) (agent.Usage, bool) {
	raw = bytes.TrimSpace(raw)
	var w wireUsage
	if len(raw) == 0 || raw[0] != '{' || json.Unmarshal(raw, &w) != nil {
		return agent.Usage{}, false
	}
	if !provider.Counted(w.InputTokens) && !provider.Counted(w.OutputTokens) {
		return agent.Usage{}, false
	}
	u := agent.Usage{InputTokens: provider.Count(w.InputTokens), OutputTokens: provider.Count(w.OutputTokens)}
	if d := w.InputTokensDetails; d != nil {
		u.CachedInputTokens = provider.Count(d.CachedTokens)
	}
	if d := w.OutputTokensDetails; d != nil {
		u.ReasoningTokens = provider.Count(d.ReasoningTokens)
	}
	return u.Checked(), true
}

func (s *streamState) message() agent.Message {
	model := s.model
	if model == "" {
		model = s.m.cfg.Model
	}
	if u, ok := usageOf(s.usage); ok {
		s.st.Usage(u)
	}
	msg := agent.Message{Role: agent.RoleAssistant, Content: s.text.String(), ToolCalls: s.calls, FinishReason: s.finish, Model: model}
	if len(s.reasoning) > 0 {
		if raw, err := json.Marshal(map[string][]json.RawMessage{stateKey: s.reasoning}); err == nil {
			msg.ProviderState = raw
		}
	}
	return msg
}

func (m *Model) readStream(ctx context.Context, resp *http.Response, st agent.Stream) (agent.Message, error) {
	s := &streamState{m: m, st: st, items: map[int]*out{}}
	end, err := provider.ReadEvents(ctx, m.client, sse.Scan(resp.Body, maxEvent), func(name string, e *event) (bool, error) {
		if e.Type == "" {
			e.Type = name
		}
		return s.handle(e)
	})
	if err != nil {
		return agent.Message{}, err
	}
	if !end {
		return agent.Message{}, mcperr.New(mcperr.Network, "openai-responses: the stream ended before response.completed; try again")
	}
	return s.message(), nil
}

// readJSON reads a non-streamed Response (a proxy that does not stream).
func (m *Model) readJSON(ctx context.Context, resp *http.Response, st agent.Stream) (agent.Message, error) {
	b, err := m.client.ReadJSONBody(ctx, resp.Body, maxJSONBody)
	if err != nil {
		return agent.Message{}, err
	}
	var r response
	if err := json.Unmarshal(b, &r); err != nil {
		return agent.Message{}, m.client.Protocol("the answer is not a response: %v", err)
	}
	if r.Error != nil && (r.Error.Message != "" || r.Status == "failed") {
		return agent.Message{}, m.streamError(r.Error)
	}
	if len(r.Output) > maxItems {
		return agent.Message{}, m.client.Protocol("more than %d output items", maxItems)
	}
	s := &streamState{m: m, st: st, items: map[int]*out{}}
	for i, raw := range r.Output {
		o, err := s.start(i, raw)
		if err != nil {
			return agent.Message{}, err
		}
		if err := s.done(o, raw); err != nil {
			return agent.Message{}, err
		}
	}
	s.end(&r)
	return s.message(), nil
}
