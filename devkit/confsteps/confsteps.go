// Package confsteps says what the client does in each scenario of the
// official MCP conformance suite after it connects: which tools, resources
// and prompts it lists, reads and calls. Both harnesses follow it, the
// native cmd/conformance-client and the browser cmd/conformance-browser, so
// a scenario cannot be exercised in one and forgotten in the other.
package confsteps

// Op is a client operation.
type Op string

// The operations a step may perform.
const (
	ListTools     Op = "listTools"
	CallTool      Op = "callTool"
	ListResources Op = "listResources"
	ReadResource  Op = "readResource"
	ListPrompts   Op = "listPrompts"
	GetPrompt     Op = "getPrompt"
	ListSkills    Op = "listSkills"
	LoadSkill     Op = "loadSkill"
	ReadSkillFile Op = "readSkillFile"
)

// Step is one operation: Name is the tool or prompt name, or the resource
// or skill URI; Args the tool or prompt arguments (for ReadSkillFile,
// Args["file"] is the file's path in the skill). For a CallTool with
// SchemaOf set, Args["schema"] is the inputSchema of the listed tool
// SchemaOf, passed through exactly as received. Fails says the client
// must refuse the step: it is an error when the step succeeds.
type Step struct {
	Op       Op             `json:"op"`
	Name     string         `json:"name,omitempty"`
	Args     map[string]any `json:"args,omitempty"`
	SchemaOf string         `json:"schemaOf,omitempty"`
	Fails    bool           `json:"fails,omitempty"`
}

func call(name string, args map[string]any) Step {
	if args == nil {
		args = map[string]any{}
	}
	return Step{Op: CallTool, Name: name, Args: args}
}

// For returns the steps of scenario; cctx is the scenario's context
// (MCP_CONFORMANCE_CONTEXT), nil when there is none. Every plan starts with
// listing the tools. Elicitations are accepted in every scenario (the
// harnesses answer "accept" with no content: the client applies the
// schema's defaults).
func For(scenario string, cctx map[string]any) []Step {
	steps := []Step{{Op: ListTools}}
	switch scenario {
	case "initialize", "request-metadata", "json-schema-ref-no-deref":
		// Connecting and listing is the whole scenario; ref-no-deref
		// serves nothing but tools/list.
	case "tools_call":
		steps = append(steps, call("add_numbers", map[string]any{"a": 5, "b": 3}))
	case "elicitation-sep1034-client-defaults":
		steps = append(steps, call("test_client_elicitation_defaults", nil))
	case "sse-retry":
		steps = append(steps, call("test_reconnection", nil))
	case "sep-2322-client-request-state":
		// Multi-round-trip requests: each of the first two asks for an
		// elicitation before it completes.
		for _, t := range []string{"test_mrtr_echo_state", "test_mrtr_no_state", "test_mrtr_unrelated", "test_mrtr_no_result_type"} {
			steps = append(steps, call(t, nil))
		}
	case "http-standard-headers":
		steps = append(steps,
			call("test_headers", nil),
			Step{Op: ListResources},
			Step{Op: ReadResource, Name: "file:///path/to/file%20name.txt"},
			Step{Op: ListPrompts},
			Step{Op: GetPrompt, Name: "test_prompt", Args: map[string]any{}},
		)
	case "http-custom-headers":
		calls, _ := cctx["toolCalls"].([]any)
		for _, c := range calls {
			m, _ := c.(map[string]any)
			name, _ := m["name"].(string)
			args, _ := m["arguments"].(map[string]any)
			if name != "" {
				steps = append(steps, call(name, args))
			}
		}
	case "http-invalid-tool-headers":
		steps = append(steps, call("valid_tool", map[string]any{"region": "us-west1"}))
	case "json-schema-2020-12-preservation":
		s := call("json_schema_echo", nil)
		s.SchemaOf = "json_schema_2020_12_tool"
		steps = append(steps, s)
	case "sep-2640-client-no-prefetch":
		// Listing reads none of a skill's files.
		steps = append(steps, Step{Op: ListSkills})
	case "sep-2640-client-verify-digest", "sep-2640-client-verify-size", "sep-2640-client-verify-frontmatter":
		// The server serves a SKILL.md that is not its entry's: loading
		// it fails verification, and the skill's other files are then
		// not read.
		const skill = "skill://pdf-processing/SKILL.md"
		steps = append(steps,
			Step{Op: ListSkills},
			Step{Op: LoadSkill, Name: skill, Fails: true},
			Step{Op: ReadSkillFile, Name: skill, Args: map[string]any{"file": "references/FORMS.md"}, Fails: true},
		)
	default: // the auth scenarios
		steps = append(steps, call("test-tool", nil))
	}
	return steps
}
