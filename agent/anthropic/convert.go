package anthropic

import (
	"bytes"
	"encoding/json"
	"strings"

	"github.com/mcpwasm/mcpwasm/agent"
	"github.com/mcpwasm/mcpwasm/mcperr"
)

// messagesRequest is the request body. Field names are the API's.
type messagesRequest struct {
	Model         string    `json:"model"`
	MaxTokens     int       `json:"max_tokens"`
	Thinking      *thinking `json:"thinking,omitempty"`
	System        string    `json:"system,omitempty"`
	Messages      []message `json:"messages"`
	Tools         []tool    `json:"tools,omitempty"`
	Stream        bool      `json:"stream"`
	Temperature   *float64  `json:"temperature,omitempty"`
	StopSequences []string  `json:"stop_sequences,omitempty"`
}

// message is one API message; Content is a string or []contentBlock.
type message struct {
	Role    string `json:"role"`
	Content any    `json:"content"`
}

type contentBlock struct {
	Type      string          `json:"type"`
	Thinking  *string         `json:"thinking,omitempty"` // a thinking block's, even when ""
	Signature string          `json:"signature,omitempty"`
	Data      string          `json:"data,omitempty"`
	Text      string          `json:"text,omitempty"`
	ID        string          `json:"id,omitempty"`
	Name      string          `json:"name,omitempty"`
	Input     json.RawMessage `json:"input,omitempty"`
	ToolUseID string          `json:"tool_use_id,omitempty"`
	Content   string          `json:"content,omitempty"`
}

// thinking is the request's extended thinking configuration.
type thinking struct {
	Type         string `json:"type"` // "enabled"
	BudgetTokens int    `json:"budget_tokens"`
}

// stateKey is this adapter's key in [agent.Message.ProviderState].
const stateKey = "anthropic"

type tool struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	InputSchema json.RawMessage `json:"input_schema"`
}

func (m *Model) body(req agent.Request) ([]byte, error) {
	system, msgs := convertMessages(req.Messages)
	tools, err := convertTools(req.Tools)
	if err != nil {
		return nil, err
	}
	r := messagesRequest{
		Model:         m.cfg.Model,
		MaxTokens:     m.cfg.MaxTokens,
		System:        system,
		Messages:      msgs,
		Tools:         tools,
		Stream:        true,
		Temperature:   req.Temperature,
		StopSequences: req.Stop,
	}
	if req.MaxTokens > 0 {
		r.MaxTokens = req.MaxTokens
	}
	// Thinking needs room in the answer's bound (a sampling request may
	// ask for less), and the API refuses it with a temperature: a
	// request's temperature (a sampling server's preference) yields.
	// The API also refuses thinking when the last assistant answer with
	// tool_use comes without its thinking blocks, as one from a stored
	// conversation does (its signed blocks are not stored): that request
	// goes without thinking.
	if b := m.cfg.ThinkingBudget; b > 0 && b < r.MaxTokens && !toolUseWithoutThinking(msgs) {
		r.Thinking = &thinking{Type: "enabled", BudgetTokens: b}
		r.Temperature = nil
	}
	b, err := json.Marshal(r)
	if err != nil {
		return nil, mcperr.Wrap(mcperr.InvalidArgument, err, "anthropic: encoding the request")
	}
	return b, nil
}

// toolUseWithoutThinking reports whether the last assistant message
// calls tools without starting with a thinking block.
func toolUseWithoutThinking(msgs []message) bool {
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role != "assistant" {
			continue
		}
		blocks := asBlocks(msgs[i].Content)
		uses := false
		for _, b := range blocks {
			uses = uses || b.Type == "tool_use"
		}
		return uses && (len(blocks) == 0 || blocks[0].Type != "thinking" && blocks[0].Type != "redacted_thinking")
	}
	return false
}

// convertMessages turns a Chat Completions conversation into the
// top-level system text and Messages API messages.
func convertMessages(in []agent.Message) (string, []message) {
	var (
		system []string
		out    []message
	)
	push := func(role string, blocks []contentBlock, text string) {
		if n := len(out); n > 0 && out[n-1].Role == role {
			// Same role twice in a row (tool results, then a user's
			// text): one message with all the blocks.
			prev := asBlocks(out[n-1].Content)
			if blocks == nil {
				blocks = []contentBlock{{Type: "text", Text: text}}
			}
			out[n-1].Content = append(prev, blocks...)
			return
		}
		if blocks == nil {
			out = append(out, message{Role: role, Content: text})
			return
		}
		out = append(out, message{Role: role, Content: blocks})
	}
	for _, m := range in {
		switch m.Role {
		case agent.RoleSystem:
			if m.Content != "" {
				system = append(system, m.Content)
			}
		case agent.RoleUser:
			if m.Content != "" {
				push("user", nil, m.Content)
			}
		case agent.RoleAssistant:
			// The answer's thinking blocks come back first, unchanged, as
			// the API requires of an answer with tool_use.
			blocks := replayedThinking(m.ProviderState)
			if m.Content != "" {
				blocks = append(blocks, contentBlock{Type: "text", Text: m.Content})
			}
			for _, tc := range m.ToolCalls {
				blocks = append(blocks, contentBlock{Type: "tool_use", ID: tc.ID, Name: tc.Function.Name, Input: inputObject(tc.Function.Arguments)})
			}
			if len(blocks) > 0 {
				push("assistant", blocks, "")
			}
		case agent.RoleTool:
			push("user", []contentBlock{{Type: "tool_result", ToolUseID: m.ToolCallID, Content: m.Content}}, "")
		}
	}
	return strings.Join(system, "\n\n"), out
}

// replayedThinking returns the thinking blocks this adapter kept in a
// message's ProviderState. Only whole blocks go back: a thinking block
// with its signature, a redacted_thinking block with its data; anything
// else (another adapter's state, a damaged one) sends none.
func replayedThinking(state json.RawMessage) []contentBlock {
	if len(state) == 0 {
		return nil
	}
	var kept map[string][]contentBlock
	if json.Unmarshal(state, &kept) != nil {
		return nil
	}
	var out []contentBlock
	for _, b := range kept[stateKey] {
		switch {
		case b.Type == "thinking" && b.Signature != "":
			out = append(out, contentBlock{Type: "thinking", Thinking: ptr(deref(b.Thinking)), Signature: b.Signature})
		case b.Type == "redacted_thinking" && b.Data != "":
			out = append(out, contentBlock{Type: "redacted_thinking", Data: b.Data})
		default:
			return nil
		}
	}
	return out
}

func ptr(s string) *string { return &s }

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// asBlocks returns a message content as blocks.
func asBlocks(c any) []contentBlock {
	switch c := c.(type) {
	case string:
		return []contentBlock{{Type: "text", Text: c}}
	case []contentBlock:
		return c
	}
	return nil
}

// inputObject returns a tool call's arguments as the JSON object a
// tool_use block needs; arguments that are not an object (the model wrote
// bad JSON, which its tool result told it) become {}.
func inputObject(args string) json.RawMessage {
	b := bytes.TrimSpace([]byte(args))
	if len(b) > 0 && b[0] == '{' && json.Valid(b) {
		return b
	}
	return json.RawMessage("{}")
}

// convertTools turns the "openai" tool export into Messages API tools.
func convertTools(raw json.RawMessage) ([]tool, error) {
	if !(agent.Request{Tools: raw}).HasTools() {
		return nil, nil
	}
	var in []struct {
		Type     string `json:"type"`
		Function struct {
			Name        string          `json:"name"`
			Description string          `json:"description"`
			Parameters  json.RawMessage `json:"parameters"`
		} `json:"function"`
	}
	if err := json.Unmarshal(raw, &in); err != nil {
		return nil, mcperr.Wrap(mcperr.InvalidArgument, err, "anthropic: the tools are not Chat Completions function tools")
	}
	out := make([]tool, 0, len(in))
	for _, t := range in {
		if t.Type != "function" || t.Function.Name == "" {
			continue
		}
		schema := bytes.TrimSpace(t.Function.Parameters)
		if len(schema) == 0 || string(schema) == "null" {
			schema = []byte(`{"type":"object","properties":{}}`)
		}
		out = append(out, tool{Name: t.Function.Name, Description: t.Function.Description, InputSchema: schema})
	}
	return out, nil
}
