package catalog

import (
	"encoding/json"
	"strings"

	"github.com/mcpwasm/mcpwasm/mcperr"
)

// formatOf checks a format name.
func formatOf(f Format) (Format, error) {
	switch f {
	case FormatOpenAI, FormatOpenAIResponses, FormatAnthropic, FormatGemini:
		return f, nil
	}
	return "", mcperr.New(mcperr.InvalidArgument,
		"catalog: format %q is not one of \"openai\", \"openai-responses\", \"anthropic\", \"gemini\"", string(f))
}

// The providers' function tool shapes, as their API references document
// them (catalog/testdata holds one example of each).
type (
	// openAITool is a Chat Completions tool:
	// {"type": "function", "function": {name, description, parameters}}.
	openAITool struct {
		Type     string         `json:"type"`
		Function openAIFunction `json:"function"`
	}
	openAIFunction struct {
		Name        string         `json:"name"`
		Description string         `json:"description"`
		Parameters  map[string]any `json:"parameters"`
	}
	// responsesTool is a Responses API function tool, flat.
	responsesTool struct {
		Type        string         `json:"type"`
		Name        string         `json:"name"`
		Description string         `json:"description"`
		Parameters  map[string]any `json:"parameters"`
		Strict      bool           `json:"strict"`
	}
	// anthropicTool is a Messages API tool.
	anthropicTool struct {
		Name        string         `json:"name"`
		Description string         `json:"description"`
		InputSchema map[string]any `json:"input_schema"`
	}
	// geminiTool is a Gemini Tool holding function declarations.
	geminiTool struct {
		FunctionDeclarations []geminiFunction `json:"functionDeclarations"`
	}
	geminiFunction struct {
		Name        string         `json:"name"`
		Description string         `json:"description"`
		Parameters  map[string]any `json:"parameters,omitempty"`
	}
)

// Export renders tools (from [Catalog.Tools]) in a provider's tool format:
//
//   - "openai" (Chat Completions): [{"type": "function", "function":
//     {"name", "description", "parameters"}}];
//   - "openai-responses" (Responses API): [{"type": "function", "name",
//     "description", "parameters", "strict": false}];
//   - "anthropic" (Messages API): [{"name", "description", "input_schema"}];
//   - "gemini": [{"functionDeclarations": [{"name", "description",
//     "parameters"}]}], the parameters converted to Gemini's OpenAPI 3.0
//     subset (see [GeminiSchema]); what the subset cannot carry is dropped
//     and named in the description. A tool without parameters has none.
//
// Parameters are the tool's input schema as an object schema, without
// $schema.
func Export(f Format, tools []Tool) (json.RawMessage, error) {
	if _, err := formatOf(f); err != nil {
		return nil, err
	}
	var out any
	switch f {
	case FormatOpenAI:
		list := make([]openAITool, 0, len(tools))
		for _, t := range tools {
			list = append(list, openAITool{Type: "function", Function: openAIFunction{Name: t.Name, Description: describe(t), Parameters: objectSchema(t)}})
		}
		out = list
	case FormatOpenAIResponses:
		list := make([]responsesTool, 0, len(tools))
		for _, t := range tools {
			list = append(list, responsesTool{Type: "function", Name: t.Name, Description: describe(t), Parameters: objectSchema(t)})
		}
		out = list
	case FormatAnthropic:
		list := make([]anthropicTool, 0, len(tools))
		for _, t := range tools {
			list = append(list, anthropicTool{Name: t.Name, Description: describe(t), InputSchema: objectSchema(t)})
		}
		out = list
	case FormatGemini:
		decls := make([]geminiFunction, 0, len(tools))
		for _, t := range tools {
			schema := objectSchema(t)
			if t.ServerID == "" && t.Name == MetaCallTool {
				// Gemini refuses an object parameter without
				// properties: the arguments go as JSON text there.
				props := schema["properties"].(map[string]any)
				props["arguments"] = map[string]any{"type": "string", "description": descCallToolArgsText}
			}
			params, dropped := GeminiSchema(schema)
			desc := describe(t)
			if len(dropped) > 0 {
				note := say(textSchemaSimplified, strings.Join(dropped, ", "))
				if desc == "" {
					desc = note
				} else {
					desc += "\n\n" + note
				}
			}
			if props, _ := params["properties"].(map[string]any); len(props) == 0 {
				params = nil
			}
			decls = append(decls, geminiFunction{Name: t.Name, Description: desc, Parameters: params})
		}
		if len(decls) == 0 {
			out = []geminiTool{}
		} else {
			out = []geminiTool{{FunctionDeclarations: decls}}
		}
	}
	b, err := json.Marshal(out)
	if err != nil {
		return nil, mcperr.Wrap(mcperr.InvalidArgument, err, "catalog: exporting tools")
	}
	return b, nil
}

// describe is a tool's description for a model: the server's description,
// else its title.
func describe(t Tool) string {
	if t.Tool == nil {
		return ""
	}
	switch {
	case t.Tool.Description != "":
		return t.Tool.Description
	case t.Tool.Title != "":
		return t.Tool.Title
	case t.Tool.Annotations != nil:
		return t.Tool.Annotations.Title
	}
	return ""
}

// objectSchema is a tool's input schema as a fresh map, an object schema
// with properties, without $schema (which some providers refuse).
func objectSchema(t Tool) map[string]any {
	var m map[string]any
	if t.Tool != nil && t.Tool.InputSchema != nil {
		if b, err := json.Marshal(t.Tool.InputSchema); err == nil {
			_ = json.Unmarshal(b, &m)
		}
	}
	if m == nil {
		m = map[string]any{}
	}
	delete(m, "$schema")
	if _, ok := m["type"]; !ok {
		m["type"] = "object"
	}
	if _, ok := m["properties"]; !ok {
		m["properties"] = map[string]any{}
	}
	return m
}
