package gemini

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"

	"github.com/mcpwasm/mcpwasm/agent"
	"github.com/mcpwasm/mcpwasm/catalog"
	"github.com/mcpwasm/mcpwasm/mcperr"
)

// request is the request body. Field names are the API's.
type request struct {
	Contents          []content         `json:"contents"`
	SystemInstruction *content          `json:"systemInstruction,omitempty"`
	Tools             json.RawMessage   `json:"tools,omitempty"`
	ToolConfig        *toolConfig       `json:"toolConfig,omitempty"`
	GenerationConfig  *generationConfig `json:"generationConfig,omitempty"`
}

type content struct {
	Role  string `json:"role,omitempty"`
	Parts []part `json:"parts"`
}

// part is a Part: one of text, functionCall, functionResponse.
type part struct {
	Text             *string           `json:"text,omitempty"`
	Thought          bool              `json:"thought,omitempty"`
	ThoughtSignature string            `json:"thoughtSignature,omitempty"`
	FunctionCall     *functionCall     `json:"functionCall,omitempty"`
	FunctionResponse *functionResponse `json:"functionResponse,omitempty"`
}

type functionCall struct {
	ID   string          `json:"id,omitempty"`
	Name string          `json:"name"`
	Args json.RawMessage `json:"args,omitempty"`
}

type functionResponse struct {
	ID       string          `json:"id,omitempty"`
	Name     string          `json:"name"`
	Response json.RawMessage `json:"response"`
}

type toolConfig struct {
	FunctionCallingConfig struct {
		Mode string `json:"mode"`
	} `json:"functionCallingConfig"`
}

type generationConfig struct {
	MaxOutputTokens int             `json:"maxOutputTokens,omitempty"`
	Temperature     *float64        `json:"temperature,omitempty"`
	StopSequences   []string        `json:"stopSequences,omitempty"`
	ThinkingConfig  *thinkingConfig `json:"thinkingConfig,omitempty"`
}

type thinkingConfig struct {
	IncludeThoughts bool `json:"includeThoughts"`
}

// stateKey is this adapter's key in [agent.Message.ProviderState].
const stateKey = "gemini"

// state is what an answer keeps for its way back: the thought signatures
// of its text and of its calls (by position), and the ids of the calls
// the API named itself (a call without one goes back without one).
type state struct {
	Text  string         `json:"text,omitempty"`
	Calls map[int]string `json:"calls,omitempty"`
	IDs   []string       `json:"ids,omitempty"`
}

func stateOf(raw json.RawMessage) state {
	var kept map[string]state
	if len(raw) == 0 || json.Unmarshal(raw, &kept) != nil {
		return state{}
	}
	return kept[stateKey]
}

func ptr(s string) *string { return &s }

func (m *Model) body(req agent.Request) ([]byte, error) {
	system, contents := convertMessages(req.Messages)
	r := request{Contents: contents}
	if system != "" {
		r.SystemInstruction = &content{Parts: []part{{Text: ptr(system)}}}
	}
	if req.HasTools() {
		tools, n, err := convertTools(req.Tools)
		if err != nil {
			return nil, err
		}
		if n > 0 {
			r.Tools = tools
			r.ToolConfig = &toolConfig{}
			r.ToolConfig.FunctionCallingConfig.Mode = "AUTO"
		}
	}
	g := generationConfig{MaxOutputTokens: req.MaxTokens, Temperature: req.Temperature, StopSequences: req.Stop}
	if m.cfg.IncludeThoughts {
		g.ThinkingConfig = &thinkingConfig{IncludeThoughts: true}
	}
	if g.MaxOutputTokens > 0 || g.Temperature != nil || len(g.StopSequences) > 0 || g.ThinkingConfig != nil {
		r.GenerationConfig = &g
	}
	b, err := json.Marshal(r)
	if err != nil {
		return nil, mcperr.Wrap(mcperr.InvalidArgument, err, "gemini: encoding the request")
	}
	return b, nil
}

// convertMessages turns a Chat Completions conversation into the system
// instruction and the contents; consecutive parts of one role share a
// content, as the API expects turns to alternate.
func convertMessages(in []agent.Message) (string, []content) {
	var (
		system []string
		out    []content
		calls  = map[string]*functionCall{} // by the agent's call id
	)
	push := func(role string, parts ...part) {
		if len(parts) == 0 {
			return
		}
		if n := len(out); n > 0 && out[n-1].Role == role {
			out[n-1].Parts = append(out[n-1].Parts, parts...)
			return
		}
		out = append(out, content{Role: role, Parts: parts})
	}
	for _, msg := range in {
		switch msg.Role {
		case agent.RoleSystem:
			if msg.Content != "" {
				system = append(system, msg.Content)
			}
		case agent.RoleUser:
			if msg.Content != "" {
				push("user", part{Text: ptr(msg.Content)})
			}
		case agent.RoleAssistant:
			st := stateOf(msg.ProviderState)
			var parts []part
			if msg.Content != "" || st.Text != "" {
				parts = append(parts, part{Text: ptr(msg.Content), ThoughtSignature: st.Text})
			}
			for i, tc := range msg.ToolCalls {
				fc := &functionCall{Name: tc.Function.Name, Args: argsObject(tc.Function.Arguments)}
				if slices.Contains(st.IDs, tc.ID) {
					fc.ID = tc.ID
				}
				calls[tc.ID] = fc
				parts = append(parts, part{FunctionCall: fc, ThoughtSignature: st.Calls[i]})
			}
			push("model", parts...)
		case agent.RoleTool:
			resp, _ := json.Marshal(map[string]string{"output": msg.Content})
			fr := &functionResponse{Response: resp}
			if fc, ok := calls[msg.ToolCallID]; ok {
				fr.ID, fr.Name = fc.ID, fc.Name
			}
			push("user", part{FunctionResponse: fr})
		}
	}
	return strings.Join(system, "\n\n"), out
}

// argsObject returns a call's arguments as the JSON object functionCall
// args needs; arguments that are not an object (the model wrote bad JSON,
// which its tool result told it) become {}.
func argsObject(args string) json.RawMessage {
	b := bytes.TrimSpace([]byte(args))
	if len(b) > 0 && b[0] == '{' && json.Valid(b) {
		return b
	}
	return json.RawMessage("{}")
}

// geminiTool is a Tool of function declarations.
type geminiTool struct {
	FunctionDeclarations []declaration `json:"functionDeclarations"`
}

type declaration struct {
	Name        string         `json:"name"`
	Description string         `json:"description,omitempty"`
	Parameters  map[string]any `json:"parameters,omitempty"`
}

// convertTools returns the tools as Gemini tools and how many functions
// they declare: the catalog's "gemini" export as it is; Chat Completions
// function tools with their schemas converted by [catalog.GeminiSchema]
// (what it drops is named in the description).
func convertTools(raw json.RawMessage) (json.RawMessage, int, error) {
	var in []struct {
		FunctionDeclarations []json.RawMessage `json:"functionDeclarations"`
		Type                 string            `json:"type"`
		Function             *struct {
			Name        string         `json:"name"`
			Description string         `json:"description"`
			Parameters  map[string]any `json:"parameters"`
		} `json:"function"`
	}
	if err := json.Unmarshal(raw, &in); err != nil {
		return nil, 0, mcperr.Wrap(mcperr.InvalidArgument, err, "gemini: the tools are not Gemini tools or Chat Completions function tools")
	}
	var native []json.RawMessage
	var decls []declaration
	n := 0
	for _, t := range in {
		switch {
		case len(t.FunctionDeclarations) > 0:
			b, err := json.Marshal(map[string]any{"functionDeclarations": t.FunctionDeclarations})
			if err != nil {
				return nil, 0, mcperr.Wrap(mcperr.InvalidArgument, err, "gemini: encoding the tools")
			}
			native = append(native, b)
			n += len(t.FunctionDeclarations)
		case t.Type == "function" && t.Function != nil && t.Function.Name != "":
			d := declaration{Name: t.Function.Name, Description: t.Function.Description}
			if t.Function.Parameters != nil {
				params, dropped := catalog.GeminiSchema(t.Function.Parameters)
				if props, _ := params["properties"].(map[string]any); len(props) > 0 {
					d.Parameters = params
				}
				if len(dropped) > 0 {
					d.Description = strings.TrimSpace(d.Description + "\n\n(Its schema was simplified for Gemini: " + strings.Join(dropped, ", ") + " dropped.)")
				}
			}
			decls = append(decls, d)
			n++
		}
	}
	var all []any
	for _, b := range native {
		all = append(all, b)
	}
	if len(decls) > 0 {
		all = append(all, geminiTool{FunctionDeclarations: decls})
	}
	b, err := json.Marshal(all)
	if err != nil {
		return nil, 0, mcperr.Wrap(mcperr.InvalidArgument, err, "gemini: encoding the tools")
	}
	return b, n, nil
}
