package mcpclient

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpwasm/mcpwasm/demo"
	"github.com/mcpwasm/mcpwasm/mcperr"
)

// TestTaskExtension: the demo server (protocol 2026-07-28) answers a call
// of research with a task (the Tasks extension): the client follows it
// with tasks/get, each step a progress report, answers the question the
// task asks halfway (inputRequests, through the connect's elicitation
// handler, once) with tasks/update, and resolves with the task's result;
// nothing is kept then.
func TestTaskExtension(t *testing.T) {
	srv := httptest.NewServer(demo.Handler(demo.Options{}))
	t.Cleanup(srv.Close)
	store := &mapTasks{}
	c := newClient(t, srv.URL+demo.StatelessPath, Options{Tasks: &TaskBook{Store: store}})
	var mu sync.Mutex
	var asked []string
	co := ConnectOptions{Elicitation: func(_ context.Context, p *mcp.ElicitParams) (*mcp.ElicitResult, error) {
		mu.Lock()
		asked = append(asked, p.Message)
		mu.Unlock()
		return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"focus": "speed"}}, nil
	}}
	if err := c.Connect(ctxT(t), co); err != nil {
		t.Fatal(err)
	}
	var progress []string
	res, err := c.CallTool(ctxT(t), demo.ToolResearch, json.RawMessage(`{"topic":"wasm","steps":3,"delayMs":10,"ask":true}`), func(p *mcp.ProgressNotificationParams) {
		progress = append(progress, p.Message)
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := res.Content[0].(*mcp.TextContent).Text; got != "Research on wasm: 3 steps done. Focus: speed." {
		t.Errorf("result %q; want the report with the focus the person chose", got)
	}
	if len(asked) != 1 || !strings.Contains(asked[0], "Which aspect of wasm") {
		t.Errorf("asked %q; want the task's question once", asked)
	}
	if p := strings.Join(progress, "|"); !strings.Contains(p, "Waiting for the person to choose a focus") || !strings.HasSuffix(p, "|Done") {
		t.Errorf("progress %q; want the task's status messages, from its question to Done", p)
	}
	if len(c.Tasks(ctxT(t))) != 0 || store.len() != 0 {
		t.Errorf("a task is kept after its result")
	}
}

// TestTaskExtensionOutlivesThePage: a page that leaves while its task
// (the Tasks extension) works keeps it; the next page's client lists it
// and follows it to its result, or cancels it.
func TestTaskExtensionOutlivesThePage(t *testing.T) {
	srv := httptest.NewServer(demo.Handler(demo.Options{}))
	t.Cleanup(srv.Close)
	url := srv.URL + demo.StatelessPath
	store := &mapTasks{}
	leave := func(topic string) string {
		c := pageClient(t, url, store)
		ctx, gone := context.WithCancelCause(ctxT(t))
		working := make(chan struct{}, 1)
		ended := make(chan error, 1)
		go func() {
			_, err := c.CallTool(ctx, demo.ToolResearch, json.RawMessage(`{"topic":"`+topic+`","steps":4,"delayMs":100}`), func(*mcp.ProgressNotificationParams) {
				select {
				case working <- struct{}{}:
				default:
				}
			})
			ended <- err
		}()
		<-working
		gone(ErrOwnerGone)
		<-ended
		if err := c.Leave(); err != nil {
			t.Fatal(err)
		}
		tasks := c.Tasks(ctxT(t))
		return tasks[len(tasks)-1].TaskID
	}
	first, second := leave("first"), leave("second")

	c := pageClient(t, url, store)
	if got := c.Tasks(ctxT(t)); len(got) != 2 || got[0].Tool != demo.ToolResearch {
		t.Fatalf("the next page lists %+v; want both tasks of research", got)
	}
	res, err := c.ResumeTask(ctxT(t), first, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := res.Content[0].(*mcp.TextContent).Text; got != "Research on first: 4 steps done." {
		t.Errorf("result %q; want the first task's report", got)
	}
	if err := c.CancelTask(ctxT(t), second); err != nil {
		t.Fatal(err)
	}
	// The server's own view: the task was cancelled there.
	body := `{"jsonrpc":"2.0","id":1,"method":"tasks/get","params":{"taskId":"` + second +
		`","_meta":{"io.modelcontextprotocol/clientCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}}}}}`
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Result struct {
			Status string `json:"status"`
		} `json:"result"`
	}
	_ = json.NewDecoder(resp.Body).Decode(&got)
	resp.Body.Close()
	if got.Result.Status != "cancelled" {
		t.Errorf("the server says the cancelled task is %q; want cancelled", got.Result.Status)
	}
	if got := c.Tasks(ctxT(t)); len(got) != 0 || store.len() != 0 {
		t.Errorf("kept %+v, %d stored; want nothing", got, store.len())
	}
	_, err = c.ResumeTask(ctxT(t), second, nil)
	wantCode(t, err, mcperr.InvalidArgument)
}

// TestTaskExtensionCancelledElsewhere: a task of the extension cancelled
// by another client of the same sign-in ends the call that follows it
// saying so, with the server's reason, and is forgotten.
func TestTaskExtensionCancelledElsewhere(t *testing.T) {
	srv := httptest.NewServer(demo.Handler(demo.Options{}))
	t.Cleanup(srv.Close)
	url := srv.URL + demo.StatelessPath
	c := pageClient(t, url, &mapTasks{})
	ids := make(chan string, 1)
	ended := make(chan error, 1)
	go func() {
		_, err := c.CallTool(ctxT(t), demo.ToolResearch, json.RawMessage(`{"topic":"x","steps":20,"delayMs":200}`), func(*mcp.ProgressNotificationParams) {
			if tasks := c.Tasks(ctxT(t)); len(tasks) == 1 {
				select {
				case ids <- tasks[0].TaskID:
				default:
				}
			}
		})
		ended <- err
	}()
	// Another page's client, whose book has the task too, cancels it.
	other := pageClient(t, url, &mapTasks{})
	id := <-ids
	if err := other.book.put(ctxT(t), keptTask{Server: other.url, ID: id, Tool: demo.ToolResearch, Version: "2026-07-28"}); err != nil {
		t.Fatal(err)
	}
	if err := other.CancelTask(ctxT(t), id); err != nil {
		t.Fatal(err)
	}
	err := <-ended
	if err == nil || !strings.Contains(err.Error(), "ended cancelled at the server without a result (Cancelled by the client)") {
		t.Fatalf("the call ended with %v; want it to say the task was cancelled, and why", err)
	}
	if got := c.Tasks(ctxT(t)); len(got) != 0 {
		t.Errorf("kept %+v; want the cancelled task forgotten", got)
	}
}
