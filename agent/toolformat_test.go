package agent_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/mcpwasm/mcpwasm/agent"
	"github.com/mcpwasm/mcpwasm/catalog"
)

// formatModel takes its tools in Gemini's format and records them.
type formatModel struct{ tools []string }

func (m *formatModel) ToolFormat() catalog.Format { return catalog.FormatGemini }

func (m *formatModel) Generate(ctx context.Context, req agent.Request, onText func(string)) (agent.Message, error) {
	m.tools = append(m.tools, string(req.Tools))
	return agent.Message{Role: agent.RoleAssistant, Content: "ok"}, nil
}

// formatTools exports a marker per format.
type formatTools struct{}

func (formatTools) ToolsFor(ctx context.Context, f catalog.Format) (json.RawMessage, error) {
	return json.Marshal([]string{string(f)})
}

func (formatTools) ModelCall(ctx context.Context, name, args string, opts catalog.CallOptions) (catalog.ToolResult, error) {
	return catalog.ToolResult{}, nil
}

// TestModelNamesItsToolFormat: a model that is a ToolFormatter gets its
// tools in the format it names.
func TestModelNamesItsToolFormat(t *testing.T) {
	m := &formatModel{}
	a, err := agent.New(agent.Config{Model: m, Tools: formatTools{}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.RunText(context.Background(), "hi", nil); err != nil {
		t.Fatal(err)
	}
	if len(m.tools) != 1 || m.tools[0] != `["gemini"]` {
		t.Errorf("the model got tools %q; want the gemini export", m.tools)
	}
}
