package gemini

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

// chunk is one GenerateContentResponse, streamed or whole.
type chunk struct {
	Candidates []struct {
		Content *struct {
			Parts []wirePart `json:"parts"`
		} `json:"content"`
		FinishReason string `json:"finishReason"`
		Index        int    `json:"index"`
	} `json:"candidates"`
	UsageMetadata  json.RawMessage `json:"usageMetadata"`
	ModelVersion   string          `json:"modelVersion"`
	PromptFeedback *struct {
		BlockReason string `json:"blockReason"`
	} `json:"promptFeedback"`
	Error *apiError `json:"error"`
}

type wirePart struct {
	Text             *string `json:"text"`
	Thought          bool    `json:"thought"`
	ThoughtSignature string  `json:"thoughtSignature"`
	FunctionCall     *struct {
		ID   string          `json:"id"`
		Name string          `json:"name"`
		Args json.RawMessage `json:"args"`
	} `json:"functionCall"`
}

type streamState struct {
	m      *Model
	st     agent.Stream
	text   strings.Builder
	calls  []agent.ToolCall
	state  state
	size   int
	finish string
	model  string
	usage  json.RawMessage
}

func (s *streamState) grow(n int) error {
	if s.size += n; s.size > maxAnswer {
		return s.m.client.Protocol("the answer is larger than %d bytes", maxAnswer)
	}
	return nil
}

// add applies one chunk.
func (s *streamState) add(c *chunk) error {
	if c.Error != nil {
		return s.m.streamError(c.Error)
	}
	if c.ModelVersion != "" {
		s.model = c.ModelVersion
	}
	if u := bytes.TrimSpace(c.UsageMetadata); len(u) > 0 && u[0] == '{' {
		s.usage = c.UsageMetadata // running totals: the last one counts
	}
	if len(c.Candidates) == 0 {
		if f := c.PromptFeedback; f != nil && f.BlockReason != "" {
			return &agent.ProviderError{Provider: "gemini", Status: 400, Type: "prompt_blocked", Code: s.m.client.Sanitize(f.BlockReason),
				Message: "the prompt was blocked (" + s.m.client.Sanitize(f.BlockReason) + "); rephrase it or check the safety settings"}
		}
		return nil
	}
	for _, cand := range c.Candidates {
		if cand.Index != 0 {
			continue // only one candidate is asked for
		}
		if cand.Content != nil {
			for _, p := range cand.Content.Parts {
				if err := s.part(&p); err != nil {
					return err
				}
			}
		}
		if cand.FinishReason != "" {
			s.finish = cand.FinishReason
		}
	}
	return nil
}

// part applies one part: text, a thought, or a function call.
func (s *streamState) part(p *wirePart) error {
	if err := s.grow(len(p.ThoughtSignature)); err != nil {
		return err
	}
	switch {
	case p.FunctionCall != nil:
		fc := p.FunctionCall
		if len(s.calls) >= maxToolCalls {
			return s.m.client.Protocol("more than %d tool calls in one answer", maxToolCalls)
		}
		args := bytes.TrimSpace(fc.Args)
		if len(args) == 0 || string(args) == "null" {
			args = []byte("{}")
		}
		if err := s.grow(len(fc.Name) + len(fc.ID) + len(args)); err != nil {
			return err
		}
		i := len(s.calls)
		s.calls = append(s.calls, agent.ToolCall{ID: fc.ID, Type: "function", Function: agent.FunctionCall{Name: fc.Name, Arguments: string(args)}})
		if fc.ID != "" {
			s.state.IDs = append(s.state.IDs, fc.ID)
		}
		if p.ThoughtSignature != "" {
			if s.state.Calls == nil {
				s.state.Calls = map[int]string{}
			}
			s.state.Calls[i] = p.ThoughtSignature
		}
		s.st.ToolCall(agent.ToolCallDelta{Index: i, ID: fc.ID, Name: fc.Name, ArgumentsDelta: string(args)})
	case p.Text != nil && p.Thought:
		if err := s.grow(len(*p.Text)); err != nil {
			return err
		}
		if *p.Text != "" {
			s.st.Reasoning(*p.Text)
		}
	case p.Text != nil:
		if err := s.grow(len(*p.Text)); err != nil {
			return err
		}
		if s.state.Text == "" {
			s.state.Text = p.ThoughtSignature
		}
		s.text.WriteString(*p.Text)
		if *p.Text != "" {
			s.st.Text(*p.Text)
		}
	}
	// Other parts (inline data, executable code, …) are not asked for.
	return nil
}

// finishReason maps a finishReason to the Chat Completions vocabulary.
func (s *streamState) finishReason() string {
	switch s.finish {
	case "STOP":
		if len(s.calls) > 0 {
			return "tool_calls"
		}
		return "stop"
	case "MAX_TOKENS":
		return "length"
	case "SAFETY", "RECITATION", "BLOCKLIST", "PROHIBITED_CONTENT", "SPII", "IMAGE_SAFETY":
		return "content_filter"
	}
	return strings.ToLower(s.finish)
}

// wireUsage is usageMetadata, read leniently ([provider.Count]).
type wireUsage struct {
	PromptTokenCount        json.RawMessage `json:"promptTokenCount"`
	ToolUsePromptTokenCount json.RawMessage `json:"toolUsePromptTokenCount"`
	CandidatesTokenCount    json.RawMessage `json:"candidatesTokenCount"`
	ThoughtsTokenCount      json.RawMessage `json:"thoughtsTokenCount"`
	CachedContentTokenCount json.RawMessage `json:"cachedContentTokenCount"`
}

// usageOf is the agent's view: the output counts the thoughts, which
// Gemini counts apart from the candidates.
func usageOf(raw json.RawMessage) (agent.Usage, bool) {
	var w wireUsage
	if len(raw) == 0 || json.Unmarshal(raw, &w) != nil {
		return agent.Usage{}, false
	}
	if !provider.Counted(w.PromptTokenCount) && !provider.Counted(w.CandidatesTokenCount) {
		return agent.Usage{}, false
	}
	thoughts := provider.Count(w.ThoughtsTokenCount)
	return agent.Usage{
		InputTokens:       provider.Count(w.PromptTokenCount) + provider.Count(w.ToolUsePromptTokenCount),
		OutputTokens:      provider.Count(w.CandidatesTokenCount) + thoughts,
		CachedInputTokens: provider.Count(w.CachedContentTokenCount),
		ReasoningTokens:   thoughts,
	}.Checked(), true
}

func (s *streamState) message() agent.Message {
	model := s.model
	if model == "" {
		model = s.m.model
	}
	if u, ok := usageOf(s.usage); ok {
		s.st.Usage(u)
	}
	msg := agent.Message{Role: agent.RoleAssistant, Content: s.text.String(), ToolCalls: s.calls, FinishReason: s.finishReason(), Model: model}
	if s.state.Text != "" || len(s.state.Calls) > 0 || len(s.state.IDs) > 0 {
		if raw, err := json.Marshal(map[string]state{stateKey: s.state}); err == nil {
			msg.ProviderState = raw
		}
	}
	return msg
}

func (m *Model) readStream(ctx context.Context, resp *http.Response, st agent.Stream) (agent.Message, error) {
	s := &streamState{m: m, st: st}
	_, err := provider.ReadEvents(ctx, m.client, sse.Scan(resp.Body, maxEvent), func(_ string, c *chunk) (bool, error) {
		return false, s.add(c)
	})
	if err != nil {
		return agent.Message{}, err
	}
	if s.finish == "" {
		// The stream has no end marker but the finishReason: a clean end
		// without one is a server that stopped before the answer was
		// complete.
		return agent.Message{}, mcperr.New(mcperr.Network, "gemini: the stream ended before the answer was complete (no finishReason); try again")
	}
	return s.message(), nil
}

// readJSON reads a non-streamed answer: one GenerateContentResponse, or a
// list of them (streamGenerateContent without alt=sse).
func (m *Model) readJSON(ctx context.Context, resp *http.Response, st agent.Stream) (agent.Message, error) {
	b, err := m.client.ReadJSONBody(ctx, resp.Body, maxJSONBody)
	if err != nil {
		return agent.Message{}, err
	}
	var chunks []chunk
	if b = bytes.TrimSpace(b); len(b) > 0 && b[0] == '[' {
		err = json.Unmarshal(b, &chunks)
	} else {
		chunks = make([]chunk, 1)
		err = json.Unmarshal(b, &chunks[0])
	}
	if err != nil {
		return agent.Message{}, m.client.Protocol("the answer is not a GenerateContentResponse: %v", err)
	}
	s := &streamState{m: m, st: st}
	for i := range chunks {
		if err := s.add(&chunks[i]); err != nil {
			return agent.Message{}, err
		}
	}
	if s.finish == "" {
		return agent.Message{}, m.client.Protocol("the answer has no finishReason")
	}
	return s.message(), nil
}
