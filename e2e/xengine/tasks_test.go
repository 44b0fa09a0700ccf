package xengine

import (
	"fmt"
	"strings"
	"testing"

	"github.com/mcpwasm/mcpwasm/devkit/devserver"
)

// TestTaskToolOfServerEverything calls a tool that the reference server
// (server-everything, which nobody here wrote) runs only as a task
// (simulate-research-query, taskSupport "required"): the call goes out as
// a task, is followed through its stages (each status message an
// onProgress report) and resolves with the task's result. An ambiguous
// query makes the task wait for input: the server's question reaches the
// page's onElicitation, and the answer reaches the report.
func TestTaskToolOfServerEverything(t *testing.T) {
	eitherRuntime(t)
	parallel(t)
	everything := startEverything(t)
	w := newWorld(t, devserver.AuthConfig{})
	var got struct {
		Text     string   `json:"text"`
		IsError  bool     `json:"isError"`
		Progress []string `json:"progress"`
		Asked    string   `json:"asked"`
		Answered string   `json:"answered"`
	}
	w.eval(fmt.Sprintf(`(async () => {
		const c = mcp.client(%q);
		let asked = "";
		c.onElicitation = async (params) => {
			asked = params.message;
			return { action: "accept", content: { interpretation: "programming" } };
		};
		await c.connect();
		const progress = [];
		const r = await c.callTool("simulate-research-query", { topic: "browser tasks" }, { onProgress: (p) => progress.push(p.message) });
		const a = await c.callTool("simulate-research-query", { topic: "python", ambiguous: true });
		await c.close();
		return { text: r.content[0]?.text ?? "", isError: r.isError, progress, asked, answered: a.content[0]?.text ?? "" };
	})()`, everything), &got)
	if got.IsError || !strings.Contains(got.Text, "# Research Report: browser tasks") {
		t.Errorf("the task's result = %q (isError %v); want its research report", got.Text, got.IsError)
	}
	if !strings.Contains(got.Asked, "multiple interpretations") || !strings.Contains(got.Answered, "Clarification**: programming") {
		t.Errorf("an ambiguous query: asked %q, report %q; want the question at onElicitation and its answer in the report", got.Asked, got.Answered)
	}
	for _, stage := range []string{"Gathering sources...", "Generating report..."} {
		if !strings.Contains(strings.Join(got.Progress, "|"), stage) {
			t.Errorf("progress %q lacks the stage %q", got.Progress, stage)
		}
	}
}
