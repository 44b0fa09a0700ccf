package openairesponses

import (
	"bytes"
	"encoding/json"
	"strings"

	"github.com/mcpwasm/mcpwasm/agent"
	"github.com/mcpwasm/mcpwasm/mcperr"
)

// request is the request body. Field names are the API's.
type request struct {
	Model           string            `json:"model"`
	Instructions    string            `json:"instructions,omitempty"`
	Input           []json.RawMessage `json:"input"`
	Tools           json.RawMessage   `json:"tools,omitempty"`
	ToolChoice      string            `json:"tool_choice,omitempty"`
	Stream          bool              `json:"stream"`
	MaxOutputTokens int               `json:"max_output_tokens,omitempty"`
	Temperature     *float64          `json:"temperature,omitempty"`
	Reasoning       *reasoning        `json:"reasoning,omitempty"`
}

type reasoning struct {
	Effort  string `json:"effort,omitempty"`
	Summary string `json:"summary,omitempty"`
}

// Input items.
type (
	messageItem struct {
		Type    string `json:"type"` // "message"
		Role    string `json:"role"`
		Content string `json:"content"`
	}
	functionCallItem struct {
		Type      string `json:"type"` // "function_call"
		CallID    string `json:"call_id"`
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	}
	functionCallOutputItem struct {
		Type   string `json:"type"` // "function_call_output"
		CallID string `json:"call_id"`
		Output string `json:"output"`
	}
)

// stateKey is this adapter's key in [agent.Message.ProviderState].
const stateKey = "openai-responses"

// body builds the request body of req. Stop sequences are not sent: the
// Responses API has none.
func (m *Model) body(req agent.Request) ([]byte, error) {
	instructions, input, err := convertMessages(req.Messages)
	if err != nil {
		return nil, err
	}
	r := request{
		Model:           m.cfg.Model,
		Instructions:    instructions,
		Input:           input,
		Stream:          true,
		MaxOutputTokens: req.MaxTokens,
		Temperature:     req.Temperature,
	}
	if req.HasTools() {
		tools, n, err := convertTools(req.Tools)
		if err != nil {
			return nil, err
		}
		if n > 0 {
			r.Tools, r.ToolChoice = tools, "auto"
		}
	}
	if m.cfg.ReasoningEffort != "" || m.cfg.ReasoningSummary != "" {
		r.Reasoning = &reasoning{Effort: m.cfg.ReasoningEffort, Summary: m.cfg.ReasoningSummary}
	}
	b, err := json.Marshal(r)
	if err != nil {
		return nil, mcperr.Wrap(mcperr.InvalidArgument, err, "openai-responses: encoding the request")
	}
	return b, nil
}

// convertMessages turns a Chat Completions conversation into the
// instructions and the input items.
func convertMessages(in []agent.Message) (string, []json.RawMessage, error) {
	var (
		system []string
		out    []json.RawMessage
	)
	add := func(v any) error {
		b, err := json.Marshal(v)
		if err != nil {
			return mcperr.Wrap(mcperr.InvalidArgument, err, "openai-responses: encoding the conversation")
		}
		out = append(out, b)
		return nil
	}
	for _, msg := range in {
		var err error
		switch msg.Role {
		case agent.RoleSystem:
			if msg.Content != "" {
				system = append(system, msg.Content)
			}
		case agent.RoleUser:
			err = add(messageItem{Type: "message", Role: "user", Content: msg.Content})
		case agent.RoleAssistant:
			// The answer's reasoning items come back first, unchanged.
			out = append(out, replayedReasoning(msg.ProviderState)...)
			if msg.Content != "" {
				err = add(messageItem{Type: "message", Role: "assistant", Content: msg.Content})
			}
			for _, tc := range msg.ToolCalls {
				if err == nil {
					err = add(functionCallItem{Type: "function_call", CallID: tc.ID, Name: tc.Function.Name, Arguments: tc.Function.Arguments})
				}
			}
		case agent.RoleTool:
			err = add(functionCallOutputItem{Type: "function_call_output", CallID: msg.ToolCallID, Output: msg.Content})
		}
		if err != nil {
			return "", nil, err
		}
	}
	return strings.Join(system, "\n\n"), out, nil
}

// replayedReasoning returns the reasoning items this adapter kept in a
// message's ProviderState: objects of type "reasoning" with an id; anything
// else (another adapter's state, a damaged one) sends none.
func replayedReasoning(state json.RawMessage) []json.RawMessage {
	if len(state) == 0 {
		return nil
	}
	var kept map[string][]json.RawMessage
	if json.Unmarshal(state, &kept) != nil {
		return nil
	}
	items := kept[stateKey]
	for _, it := range items {
		var head struct {
			Type string `json:"type"`
			ID   string `json:"id"`
		}
		if json.Unmarshal(it, &head) != nil || head.Type != "reasoning" || head.ID == "" {
			return nil
		}
	}
	return items
}

// flatTool is a Responses API function tool.
type flatTool struct {
	Type        string          `json:"type"`
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters"`
	Strict      bool            `json:"strict"`
}

// convertTools returns the tools as Responses API function tools: the
// catalog's "openai-responses" export as it is, and Chat Completions
// function tools ({"type": "function", "function": {…}}) flattened.
func convertTools(raw json.RawMessage) (json.RawMessage, int, error) {
	var in []struct {
		Type        string          `json:"type"`
		Name        string          `json:"name"`
		Description string          `json:"description"`
		Parameters  json.RawMessage `json:"parameters"`
		Strict      bool            `json:"strict"`
		Function    *struct {
			Name        string          `json:"name"`
			Description string          `json:"description"`
			Parameters  json.RawMessage `json:"parameters"`
		} `json:"function"`
	}
	if err := json.Unmarshal(raw, &in); err != nil {
		return nil, 0, mcperr.Wrap(mcperr.InvalidArgument, err, "openai-responses: the tools are not a list of function tools")
	}
	out := make([]flatTool, 0, len(in))
	for _, t := range in {
		if t.Type != "function" {
			continue
		}
		ft := flatTool{Type: "function", Name: t.Name, Description: t.Description, Parameters: t.Parameters, Strict: t.Strict}
		if f := t.Function; f != nil && t.Name == "" {
			ft = flatTool{Type: "function", Name: f.Name, Description: f.Description, Parameters: f.Parameters}
		}
		if ft.Name == "" {
			continue
		}
		if p := bytes.TrimSpace(ft.Parameters); len(p) == 0 || string(p) == "null" {
			ft.Parameters = json.RawMessage(`{"type":"object","properties":{}}`)
		}
		out = append(out, ft)
	}
	b, err := json.Marshal(out)
	if err != nil {
		return nil, 0, mcperr.Wrap(mcperr.InvalidArgument, err, "openai-responses: encoding the tools")
	}
	return b, len(out), nil
}
