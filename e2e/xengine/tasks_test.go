package xengine

import (
	"fmt"
	"strings"
	"testing"

	"github.com/mcpwasm/mcpwasm/demo"
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

// TestTaskOutlivesAReload: the page reloads while two tasks of
// server-everything's simulate-research-query work (the reference
// server, built on the TypeScript SDK, keeps a task only for the session
// that created it). The next page's client lists both, goes on in their
// session, follows the first to its result once, without calling the
// tool again, and cancels the second, which waits for an answer the
// first page never gave (the server refuses to cancel a task that
// ended); then nothing is kept.
func TestTaskOutlivesAReload(t *testing.T) {
	eitherRuntime(t)
	parallel(t)
	everything := startEverything(t)
	w := newWorld(t, devserver.AuthConfig{})
	type kept struct {
		TaskID string `json:"taskId"`
		Tool   string `json:"tool"`
		Status string `json:"status"`
	}
	var first struct {
		Kept     []kept `json:"kept"`
		Resolved bool   `json:"resolved"`
	}
	w.eval(fmt.Sprintf(`(async () => {
		const c = mcp.client(%q);
		c.onElicitation = () => new Promise(() => {}); // the person has not answered yet
		await c.connect();
		// A call's first report comes once its task is stored: the second
		// starts after the first (tasks() lists them in that order), and
		// the page reloads when both are stored.
		for (const [topic, ambiguous] of [["reloaded tasks", false], ["cancelled tasks", true]]) {
			await new Promise((working) => {
				c.callTool("simulate-research-query", { topic, ambiguous }, { onProgress: () => working() })
					.then(() => { globalThis.__resolved = true; }, () => {});
			});
		}
		const kept = await c.tasks();
		return { kept, resolved: !!globalThis.__resolved };
	})()`, everything), &first)
	if len(first.Kept) != 2 || first.Resolved {
		t.Fatalf("before the reload: kept %+v, a call resolved: %v; want two tasks working", first.Kept, first.Resolved)
	}
	for _, k := range first.Kept {
		if k.Tool != "simulate-research-query" || k.Status != "working" {
			t.Fatalf("before the reload: kept %+v; want simulate-research-query, working", first.Kept)
		}
	}

	w.navigate(w.win, w.PageURL+"/e2e/blank.html")
	w.load(w.win)
	var second struct {
		Kept      []kept   `json:"kept"`
		Text      string   `json:"text"`
		IsError   bool     `json:"isError"`
		Progress  []string `json:"progress"`
		After     []kept   `json:"after"`
		Again     string   `json:"again"`
		Cancelled string   `json:"cancelled"`
	}
	w.eval(fmt.Sprintf(`(async () => {
		const c = mcp.client(%q);
		await c.connect();
		const kept = await c.tasks();
		const progress = [];
		const r = await c.resumeTask(kept[0].taskId, { onProgress: (p) => progress.push(p.message) });
		await c.cancelTask(kept[1].taskId);
		const after = await c.tasks();
		const code = (p) => p.then(() => "resolved", (e) => e.code);
		const again = await code(c.resumeTask(kept[0].taskId));
		const cancelled = await code(c.resumeTask(kept[1].taskId));
		await c.close();
		return { kept, text: r.content[0]?.text ?? "", isError: r.isError, progress, after, again, cancelled };
	})()`, everything), &second)
	if len(second.Kept) != 2 || second.Kept[0].TaskID != first.Kept[0].TaskID || second.Kept[1].TaskID != first.Kept[1].TaskID {
		t.Fatalf("after the reload: kept %+v; want the first page's tasks %+v", second.Kept, first.Kept)
	}
	if second.IsError || !strings.Contains(second.Text, "# Research Report: reloaded tasks") {
		t.Errorf("the resumed task's result = %q (isError %v); want its research report", second.Text, second.IsError)
	}
	if len(second.After) != 0 || second.Again != "invalid_argument" || second.Cancelled != "invalid_argument" {
		t.Errorf("after the result and the cancel: kept %+v, resuming again %q, the cancelled %q; want nothing kept, both invalid_argument", second.After, second.Again, second.Cancelled)
	}
}

// TestCatalogTaskOutlivesAReload: a catalog's call of a task tool
// (server-everything's simulate-research-query) is kept when the page
// reloads; the next page finds it through the catalog's server client
// and follows it to its result.
func TestCatalogTaskOutlivesAReload(t *testing.T) {
	eitherRuntime(t)
	parallel(t)
	everything := startEverything(t)
	w := newWorld(t, devserver.AuthConfig{})
	setup := fmt.Sprintf(`const cat = mcp.catalog({ servers: { everything: { url: %q } } });`, everything)
	var first []string
	w.eval(`(async () => {`+setup+`
		const tool = (await cat.tools()).find((t) => t.serverId === "everything" && t.tool.name === "simulate-research-query");
		let working;
		const seen = new Promise((res) => { working = res; });
		cat.callTool(tool.name, { topic: "catalog tasks" }, { onProgress: () => working() }).catch(() => {});
		await seen;
		return (await cat.server("everything").tasks()).map((k) => k.status);
	})()`, &first)
	if len(first) != 1 || first[0] != "working" {
		t.Fatalf("before the reload the catalog's server keeps tasks %q; want one, working", first)
	}
	w.navigate(w.win, w.PageURL+"/e2e/blank.html")
	w.load(w.win)
	var second struct {
		Kept  int    `json:"kept"`
		Text  string `json:"text"`
		After int    `json:"after"`
	}
	w.eval(`(async () => {`+setup+`
		await cat.tools();
		const c = cat.server("everything");
		const kept = await c.tasks();
		const r = await c.resumeTask(kept[0].taskId);
		const after = (await c.tasks()).length;
		await cat.close();
		return { kept: kept.length, text: r.content[0]?.text ?? "", after };
	})()`, &second)
	if second.Kept != 1 || !strings.Contains(second.Text, "# Research Report: catalog tasks") || second.After != 0 {
		t.Errorf("after the reload: %d kept, result %q, %d kept after; want the task's report once", second.Kept, second.Text, second.After)
	}
}

// TestTaskExtensionOutlivesAReload: the demo server's endpoint without
// sessions (protocol 2026-07-28) answers a call of research with a task
// of the Tasks extension; the page reloads while it works; the next page
// lists it, follows it to its result (answering the question the task
// asks halfway through onElicitation, once), and nothing is kept then.
func TestTaskExtensionOutlivesAReload(t *testing.T) {
	eitherRuntime(t)
	parallel(t)
	w := newWorld(t, devserver.AuthConfig{})
	url := strings.Replace(w.OpenURL, demo.StreamablePath, demo.StatelessPath, 1)
	var first struct {
		Version string `json:"version"`
		Kept    []struct {
			Tool   string `json:"tool"`
			Status string `json:"status"`
		} `json:"kept"`
	}
	w.eval(fmt.Sprintf(`(async () => {
		const c = mcp.client(%q);
		c.onElicitation = () => new Promise(() => {}); // the person has not answered yet
		await c.connect();
		let working;
		const seen = new Promise((res) => { working = res; });
		c.callTool("research", { topic: "reloads", steps: 6, delayMs: 300, ask: true }, { onProgress: () => working() }).catch(() => {});
		await seen;
		return { version: c.protocolVersion, kept: await c.tasks() };
	})()`, url), &first)
	if first.Version != "2026-07-28" || len(first.Kept) != 1 || first.Kept[0].Tool != "research" {
		t.Fatalf("before the reload: protocol %s, kept %+v; want 2026-07-28 and the research task", first.Version, first.Kept)
	}

	w.navigate(w.win, w.PageURL+"/e2e/blank.html")
	w.load(w.win)
	var second struct {
		Text  string   `json:"text"`
		Asked []string `json:"asked"`
		After int      `json:"after"`
	}
	w.eval(fmt.Sprintf(`(async () => {
		const c = mcp.client(%q);
		const asked = [];
		c.onElicitation = async (p) => { asked.push(p.message); return { action: "accept", content: { focus: "resumption" } }; };
		await c.connect();
		const [task] = await c.tasks();
		const r = await c.resumeTask(task.taskId);
		const after = (await c.tasks()).length;
		await c.close();
		return { text: r.content[0]?.text ?? "", asked, after };
	})()`, url), &second)
	if second.Text != "Research on reloads: 6 steps done. Focus: resumption." {
		t.Errorf("the resumed task's result = %q; want the report with the focus chosen after the reload", second.Text)
	}
	if len(second.Asked) != 1 || !strings.Contains(second.Asked[0], "Which aspect of reloads") || second.After != 0 {
		t.Errorf("after the reload: asked %q, %d kept after; want the task's question once and nothing kept", second.Asked, second.After)
	}
}

// TestCatalogHandsOffATask: a catalog call of the demo server's research
// (a task of the Tasks extension) that outlasts taskWaitMs resolves with
// a result that is not an error, naming the task, and the task's report
// arrives as a taskresult event.
func TestCatalogHandsOffATask(t *testing.T) {
	eitherRuntime(t)
	parallel(t)
	w := newWorld(t, devserver.AuthConfig{})
	url := strings.Replace(w.OpenURL, demo.StreamablePath, demo.StatelessPath, 1)
	var got struct {
		Text    string `json:"text"`
		IsError bool   `json:"isError"`
		TaskID  string `json:"taskId"`
		Event   struct {
			ID     string `json:"id"`
			TaskID string `json:"taskId"`
			Tool   string `json:"tool"`
			Text   string `json:"text"`
		} `json:"event"`
	}
	w.eval(fmt.Sprintf(`(async () => {
		const cat = mcp.catalog({ servers: { demo: { url: %q } }, taskWaitMs: 300 });
		const ended = new Promise((res) => cat.addEventListener("taskresult", (e) => res(e.detail), { once: true }));
		const r = await cat.callTool("demo_research", { topic: "hand-offs", steps: 4, delayMs: 250 });
		const e = await ended;
		await cat.close();
		return { text: r.content[0]?.text ?? "", isError: r.isError, taskId: r._meta?.["io.modelcontextprotocol/related-task"]?.taskId ?? "",
			event: { id: e.id, taskId: e.taskId, tool: e.tool, text: e.result?.content?.[0]?.text ?? "" } };
	})()`, url), &got)
	if got.IsError || got.TaskID == "" || !strings.Contains(got.Text, "is running on the demo server as task "+got.TaskID) {
		t.Errorf("the call resolved with %q (isError %v, task %q); want the running task named, not an error", got.Text, got.IsError, got.TaskID)
	}
	if got.Event.ID != "demo" || got.Event.TaskID != got.TaskID || got.Event.Tool != "demo_research" || got.Event.Text != "Research on hand-offs: 4 steps done." {
		t.Errorf("taskresult %+v; want the task's report", got.Event)
	}
}
