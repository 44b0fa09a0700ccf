package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
)

// Roles of a [Message].
const (
	RoleSystem    = "system"
	RoleUser      = "user"
	RoleAssistant = "assistant"
	RoleTool      = "tool"
)

// Message is one message of a conversation in the shape of the OpenAI Chat
// Completions API, the lingua franca of model APIs. Its JSON is that API's:
// {"role", "content", "tool_calls", "tool_call_id"}; content is null on an
// assistant message that only calls tools.
type Message struct {
	Role       string     // RoleSystem, RoleUser, RoleAssistant or RoleTool
	Content    string     // the text
	ToolCalls  []ToolCall // an assistant's tool calls
	ToolCallID string     // a tool message: the call it answers

	// FinishReason is why the model stopped, in the Chat Completions
	// vocabulary ("stop", "tool_calls", "length", "content_filter", …), as
	// the adapter that produced the message reported it. It is not part of
	// the message's JSON and is never sent to a model.
	FinishReason string
	// Model names the model that produced the message, when its adapter
	// knows it. Not part of the message's JSON.
	Model string
	// ProviderState is what the adapter that produced the message needs
	// back, unchanged, when the conversation goes on: a JSON object with
	// one key per adapter (the Anthropic adapter keeps an answer's signed
	// thinking blocks under "anthropic", since the API refuses a tool
	// result whose tool_use comes back without them). Adapters read only
	// their own key. Not part of the message's JSON: it lasts while the
	// conversation stays in Go (a run), and is never shown as text.
	ProviderState json.RawMessage
}

// ToolCall is one tool call of an assistant message.
type ToolCall struct {
	ID       string       `json:"id"`
	Type     string       `json:"type"` // always "function"
	Function FunctionCall `json:"function"`
}

// FunctionCall names the tool and carries the model's arguments.
type FunctionCall struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"` // JSON text as the model wrote it; may be invalid
}

type wireMessage struct {
	Role       string          `json:"role"`
	Content    json.RawMessage `json:"content"`
	ToolCalls  []ToolCall      `json:"tool_calls,omitempty"`
	ToolCallID string          `json:"tool_call_id,omitempty"`
}

var jsonNull = json.RawMessage("null")

// MarshalJSON writes the Chat Completions shape: the bytes json.Marshal
// writes for a wireMessage, built directly since a conversation is
// encoded again for every model request.
func (m Message) MarshalJSON() ([]byte, error) {
	n := 64 + len(m.Content) + len(m.ToolCallID)
	for _, tc := range m.ToolCalls {
		n += 64 + len(tc.ID) + len(tc.Function.Name) + len(tc.Function.Arguments)
	}
	b := make([]byte, 0, n)
	b = append(b, `{"role":`...)
	b = appendJSONString(b, m.Role)
	b = append(b, `,"content":`...)
	if m.Content == "" && len(m.ToolCalls) > 0 {
		b = append(b, jsonNull...)
	} else {
		b = appendJSONString(b, m.Content)
	}
	if len(m.ToolCalls) > 0 {
		b = append(b, `,"tool_calls":[`...)
		for i, tc := range m.ToolCalls {
			if i > 0 {
				b = append(b, ',')
			}
			if tc.Type == "" {
				tc.Type = "function"
			}
			b = append(b, `{"id":`...)
			b = appendJSONString(b, tc.ID)
			b = append(b, `,"type":`...)
			b = appendJSONString(b, tc.Type)
			b = append(b, `,"function":{"name":`...)
			b = appendJSONString(b, tc.Function.Name)
			b = append(b, `,"arguments":`...)
			b = appendJSONString(b, tc.Function.Arguments)
			b = append(b, `}}`...)
		}
		b = append(b, ']')
	}
	if m.ToolCallID != "" {
		b = append(b, `,"tool_call_id":`...)
		b = appendJSONString(b, m.ToolCallID)
	}
	return append(b, '}'), nil
}

// UnmarshalJSON reads the Chat Completions shape. Content may be a string,
// null, or an array of content parts, whose "text" parts are joined.
func (m *Message) UnmarshalJSON(data []byte) error {
	var w wireMessage
	if err := json.Unmarshal(data, &w); err != nil {
		return err
	}
	text, err := contentText(w.Content)
	if err != nil {
		return err
	}
	*m = Message{Role: w.Role, Content: text, ToolCalls: w.ToolCalls, ToolCallID: w.ToolCallID}
	return nil
}

// contentText reads a Chat Completions content value.
func contentText(raw json.RawMessage) (string, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, jsonNull) {
		return "", nil
	}
	switch raw[0] {
	case '"':
		var s string
		err := json.Unmarshal(raw, &s)
		return s, err
	case '[':
		var parts []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		}
		if err := json.Unmarshal(raw, &parts); err != nil {
			return "", err
		}
		var b strings.Builder
		for _, p := range parts {
			if p.Type == "text" {
				b.WriteString(p.Text)
			}
		}
		return b.String(), nil
	}
	return "", errors.New("agent: message content must be a string, null or an array of content parts")
}

// Request is what a [Model] is asked.
// As JSON (what a custom model function in a page receives) it uses the
// Chat Completions request's names.
type Request struct {
	Messages []Message `json:"messages"`
	// Tools are function tools in the Chat Completions shape
	// ([{"type": "function", "function": {name, description, parameters}}],
	// the catalog's "openai" export), or in the format the model names
	// when it is a [ToolFormatter]; nil or an empty array offers none.
	Tools json.RawMessage `json:"tools,omitempty"`
	// MaxTokens bounds the answer when > 0; otherwise the adapter's default.
	MaxTokens int `json:"max_tokens,omitempty"`
	// Temperature, when set, is passed to the model.
	Temperature *float64 `json:"temperature,omitempty"`
	// Stop lists stop sequences.
	Stop []string `json:"stop,omitempty"`
}

// Model generates the next assistant message of a conversation.
//
// Generate streams the answer's text through onText (which may be nil) as
// it arrives and returns the whole assistant message, with its tool calls.
// It returns when ctx is done, with an error. Implementations must be safe
// for concurrent use: an [Agent] may run several conversations, and serve
// sampling requests, at once.
type Model interface {
	Generate(ctx context.Context, req Request, onText func(delta string)) (Message, error)
}

// ModelFunc adapts a function to [Model].
type ModelFunc func(ctx context.Context, req Request, onText func(delta string)) (Message, error)

// Generate calls f.
func (f ModelFunc) Generate(ctx context.Context, req Request, onText func(delta string)) (Message, error) {
	return f(ctx, req, onText)
}

// HasTools reports whether r offers any tool.
func (r Request) HasTools() bool {
	t := bytes.TrimSpace(r.Tools)
	if len(t) == 0 || bytes.Equal(t, jsonNull) {
		return false
	}
	if t[0] == '[' {
		return len(bytes.TrimSpace(t[1:len(t)-1])) > 0
	}
	return true
}
