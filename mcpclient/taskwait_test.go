package mcpclient

import (
	"context"
	"encoding/json"
	"errors"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpwasm/mcpwasm/demo"
	"github.com/mcpwasm/mcpwasm/devkit/hostile"
)

// TestTaskWaitHandsOff: a call under WithTaskWait whose task runs longer
// than the wait fails with a *TaskRunning naming the task, at once; the
// client follows the task on its own, and its result reaches onEnd; then
// nothing is kept.
func TestTaskWaitHandsOff(t *testing.T) {
	srv := httptest.NewServer(demo.Handler(demo.Options{}))
	t.Cleanup(srv.Close)
	store := &mapTasks{}
	c := pageClient(t, srv.URL+demo.StatelessPath, store)
	ends := make(chan TaskEnd, 1)
	ctx := WithTaskWait(ctxT(t), 150*time.Millisecond, func(e TaskEnd) { ends <- e })
	_, err := c.CallTool(ctx, demo.ToolResearch, json.RawMessage(`{"topic":"hand-off","steps":4,"delayMs":150}`), nil)
	var running *TaskRunning
	if !errors.As(err, &running) || running.Task.Tool != demo.ToolResearch || running.Task.TaskID == "" {
		t.Fatalf("err = %v; want a *TaskRunning naming research's task", err)
	}
	if got := c.Tasks(ctxT(t)); len(got) != 1 {
		t.Errorf("while it runs the client keeps %+v; want the task", got)
	}
	select {
	case e := <-ends:
		if e.Err != nil || e.Task.TaskID != running.Task.TaskID || e.Result.Content[0].(*mcp.TextContent).Text != "Research on hand-off: 4 steps done." {
			t.Errorf("onEnd got %+v (err %v); want the task's report", e, e.Err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("onEnd was not called")
	}
	if got := c.Tasks(ctxT(t)); len(got) != 0 || store.len() != 0 {
		t.Errorf("after its end: kept %+v, %d stored; want nothing", got, store.len())
	}
}

// TestTaskWaitAbortAndLeave: a call abandoned before its wait is over
// cancels its task, as without a wait; a task handed off and then left
// (the page went away) is kept, not cancelled.
func TestTaskWaitAbortAndLeave(t *testing.T) {
	s := &sessionTasks{}
	srv := hostile.Start(t, s)
	store := &mapTasks{}
	c := pageClient(t, srv.URL+"/mcp", store)
	actx, abort := context.WithTimeout(WithTaskWait(ctxT(t), time.Minute, nil), 100*time.Millisecond)
	defer abort()
	if _, err := c.CallTool(actx, "research", nil, nil); err == nil {
		t.Fatal("an abandoned call resolved")
	}
	if n := s.count("tasks/cancel"); n != 1 || store.len() != 0 {
		t.Fatalf("%d tasks/cancel, %d kept; want the abandoned call's task cancelled and forgotten", n, store.len())
	}
	ended := make(chan TaskEnd, 1)
	_, err := c.CallTool(WithTaskWait(ctxT(t), 50*time.Millisecond, func(e TaskEnd) { ended <- e }), "research", nil, nil)
	var running *TaskRunning
	if !errors.As(err, &running) {
		t.Fatalf("err = %v; want a hand-off", err)
	}
	if err := c.Leave(); err != nil {
		t.Fatal(err)
	}
	// The client's own following ends with it: the task is free to follow.
	deadline := time.Now().Add(10 * time.Second)
	for {
		if done, ok := c.book.follow(c.url, running.Task.TaskID); ok {
			done()
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the handed-off task was still followed after Leave")
		}
		time.Sleep(5 * time.Millisecond)
	}
	select {
	case e := <-ended:
		t.Errorf("onEnd got %+v after the page left; want nothing (the task is kept for the next page)", e)
	default:
	}
	if n := s.count("tasks/cancel"); n != 1 || store.len() != 1 {
		t.Errorf("%d tasks/cancel, %d kept after Leave; want the handed-off task kept, not cancelled", n, store.len())
	}
}
