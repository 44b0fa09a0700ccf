package catalog

import (
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/mcpwasm/mcpwasm/demo"
)

// TestTaskHandedOffToThePage: a call of a tool that runs as a task (the
// demo server's research, at its endpoint without sessions) that outlasts
// TaskWait hands back an honest "running" result naming the task, not an
// error; the task goes on, and its result is a taskresult event.
func TestTaskHandedOffToThePage(t *testing.T) {
	srv := httptest.NewServer(demo.Handler(demo.Options{}))
	t.Cleanup(srv.Close)
	cat, ev := newCatalog(t, Config{
		Servers:  servers("demo", srv.URL+demo.StatelessPath),
		Factory:  clientFactory(t),
		TaskWait: 100 * time.Millisecond,
	})
	res, err := cat.CallTool(ctxT(t), "demo_research", json.RawMessage(`{"topic":"hand-offs","steps":3,"delayMs":150}`), CallOptions{})
	if err != nil {
		t.Fatal(err)
	}
	related, _ := res.Meta["io.modelcontextprotocol/related-task"].(map[string]any)
	taskID, _ := related["taskId"].(string)
	if text := resultText(res); res.IsError || taskID == "" || !strings.Contains(text, "demo_research is running on the demo server as task "+taskID) || !strings.Contains(text, "Do not call demo_research again") {
		t.Fatalf("the model got %q (isError %v, task %q); want the running task named, not an error", text, res.IsError, taskID)
	}
	waitFor(t, "the taskresult event", func() bool { return ev.count(EventTaskResult) == 1 })
	tr := ev.of(EventTaskResult)[0].Data.(TaskResult)
	if tr.ID != "demo" || tr.TaskID != taskID || tr.Tool != "demo_research" || tr.Error != nil || resultText(tr.Result) != "Research on hand-offs: 3 steps done." {
		t.Errorf("taskresult %+v; want the task's report for demo_research", tr)
	}
}
