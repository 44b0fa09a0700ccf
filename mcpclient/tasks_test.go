package mcpclient

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpwasm/mcpwasm/devkit/hostile"
)

// taskServer scripts a server whose tool "research" runs only as a task:
// it declares task-augmented tools/call, lists the tool with taskSupport
// "required", answers a call that carries a task parameter with a task
// that works for two polls, and records the methods it saw.
type taskServer struct {
	mu      sync.Mutex
	methods []string
	polls   int
	plain   bool // a call without the task parameter
}

func (s *taskServer) answer(w http.ResponseWriter, r *http.Request, m hostile.Message) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.methods = append(s.methods, m.Method)
	var p struct {
		Name string          `json:"name"`
		Task json.RawMessage `json:"task"`
	}
	_ = json.Unmarshal(m.Params, &p)
	task := func(status, msg string) map[string]any {
		return map[string]any{"taskId": "t-1", "status": status, "statusMessage": msg, "createdAt": "2026-11-29T00:00:00Z", "ttl": 60000, "pollInterval": 10}
	}
	switch m.Method {
	case "initialize":
		hostile.Result(w, m.ID, map[string]any{"protocolVersion": "2025-11-25", "serverInfo": map[string]any{"name": "tasks", "version": "1"},
			"capabilities": map[string]any{"tools": map[string]any{}, "tasks": map[string]any{"requests": map[string]any{"tools": map[string]any{"call": map[string]any{}}}, "cancel": map[string]any{}}}})
	case "tools/list":
		hostile.Result(w, m.ID, map[string]any{"tools": []any{
			map[string]any{"name": "research", "inputSchema": map[string]any{"type": "object"}, "execution": map[string]any{"taskSupport": "required"}},
			hostile.EchoTool,
		}})
	case "tools/call":
		if p.Name == "research" && p.Task == nil {
			s.plain = true
			hostile.Error(w, m.ID, -32602, "research runs only as a task")
			return true
		}
		if p.Name != "research" {
			return false
		}
		hostile.Result(w, m.ID, map[string]any{"task": task("working", "Gathering sources")})
	case "tasks/get":
		s.polls++
		if s.polls < 3 {
			hostile.Result(w, m.ID, task("working", "Stage "+string(rune('0'+s.polls))))
		} else {
			hostile.Result(w, m.ID, task("completed", "Done"))
		}
	case "tasks/result":
		hostile.Result(w, m.ID, map[string]any{"content": []any{map[string]any{"type": "text", "text": "the report"}}})
	case "tasks/cancel":
		hostile.Result(w, m.ID, task("cancelled", ""))
	default:
		return false
	}
	return true
}

func (s *taskServer) seen() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.methods...)
}

// TestTaskRequiredToolRunsAsTask: a tool the server runs only as a task is
// called with a task parameter and followed to its result, each status
// message a progress report; the tools are listed first when the page
// never listed them; a tool without taskSupport is called as before.
func TestTaskRequiredToolRunsAsTask(t *testing.T) {
	s := &taskServer{}
	srv := hostile.Start(t, &hostile.MCP{Answer: s.answer})
	c := newClient(t, srv.URL+"/mcp", Options{Transport: TransportStreamable})
	if err := c.Connect(ctxT(t), ConnectOptions{}); err != nil {
		t.Fatal(err)
	}
	var progress []string
	res, err := c.CallTool(ctxT(t), "research", json.RawMessage(`{"topic":"x"}`), func(p *mcp.ProgressNotificationParams) {
		progress = append(progress, p.Message)
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Content) != 1 || res.Content[0].(*mcp.TextContent).Text != "the report" {
		t.Errorf("result %+v; want the task's result", res.Content)
	}
	if got := strings.Join(progress, "|"); got != "Gathering sources|Stage 1|Stage 2|Done" {
		t.Errorf("progress %q; want each status message once", got)
	}
	methods := strings.Join(s.seen(), " ")
	if _, after, _ := strings.Cut(methods, "initialize "); after != "notifications/initialized tools/list tools/call tasks/get tasks/get tasks/get tasks/result" {
		t.Errorf("methods %v", methods)
	}
	if s.plain {
		t.Error("the tool was called without the task parameter")
	}
	if _, err := c.CallTool(ctxT(t), "echo", nil, nil); err != nil {
		t.Fatal(err)
	}
	if got := s.seen()[len(s.seen())-1]; got != "tools/call" {
		t.Errorf("echo went out as %s", got)
	}
}

// TestAbortedTaskIsCancelled: a call abandoned while its task works sends
// tasks/cancel.
func TestAbortedTaskIsCancelled(t *testing.T) {
	s := &taskServer{}
	srv := hostile.Start(t, &hostile.MCP{Answer: func(w http.ResponseWriter, r *http.Request, m hostile.Message) bool {
		if m.Method == "tasks/get" {
			s.mu.Lock()
			s.polls = 0 // works for ever
			s.mu.Unlock()
		}
		return s.answer(w, r, m)
	}})
	c := newClient(t, srv.URL+"/mcp", Options{Transport: TransportStreamable})
	if err := c.Connect(ctxT(t), ConnectOptions{}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	if _, err := c.CallTool(ctx, "research", nil, nil); err == nil {
		t.Fatal("the call ended without an error")
	}
	deadline := time.Now().Add(5 * time.Second)
	for !strings.Contains(strings.Join(s.seen(), " "), "tasks/cancel") {
		if time.Now().After(deadline) {
			t.Fatalf("methods %v; want tasks/cancel", s.seen())
		}
		time.Sleep(20 * time.Millisecond)
	}
}
