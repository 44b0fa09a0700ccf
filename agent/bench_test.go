package agent_test

import (
	"context"
	"testing"

	"github.com/mcpwasm/mcpwasm/agent"
)

// BenchmarkRunStep measures the loop's own cost per step: an in-memory
// model that calls one tool per step, then answers, and in-memory tools.
func BenchmarkRunStep(b *testing.B) {
	const steps = 8
	m := agent.ModelFunc(func(ctx context.Context, req agent.Request, onText func(string)) (agent.Message, error) {
		if len(req.Messages) >= 2*steps-1 {
			onText("done")
			return agent.Message{Content: "done"}, nil
		}
		return agent.Message{ToolCalls: []agent.ToolCall{{ID: "c", Function: agent.FunctionCall{Name: "text_echo", Arguments: `{"text":"x"}`}}}}, nil
	})
	a, err := agent.New(agent.Config{Model: m, Tools: newFakeTools(echoTool()), MaxSteps: steps})
	if err != nil {
		b.Fatal(err)
	}
	events := 0
	b.ReportAllocs()
	for b.Loop() {
		res, err := a.RunText(context.Background(), "go", func(agent.Event) { events++ })
		if err != nil || res.Steps != steps {
			b.Fatalf("steps = %d, err = %v", res.Steps, err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*steps), "ns/step")
}
