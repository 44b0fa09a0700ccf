package mcpclient

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpwasm/mcpwasm/devkit/hostile"
	"github.com/mcpwasm/mcpwasm/mcperr"
)

// sessionTasks scripts a server that keeps each task for the session that
// created it, as the TypeScript SDK's task store does: initialize opens a
// session (Mcp-Session-Id), a request naming an unknown session is
// answered 404, DELETE ends one, and tasks/get of a task of another
// session is Invalid params. The tool "research" works until finish is
// called.
type sessionTasks struct {
	mu       sync.Mutex
	next     int
	sessions map[string]bool
	tasks    map[string]string // task id → session
	done     bool
	gone     bool     // the tasks were cancelled by someone else: no result
	seen     []string // "method session" of each request
	deletes  []string
	cut      int // the next cut tasks/get requests get no answer: the connection closes
}

func (s *sessionTasks) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	sid := r.Header.Get("Mcp-Session-Id")
	s.mu.Lock()
	if s.sessions == nil {
		s.sessions, s.tasks = map[string]bool{}, map[string]string{}
	}
	switch {
	case r.Method == http.MethodDelete:
		s.deletes = append(s.deletes, sid)
		delete(s.sessions, sid)
		s.mu.Unlock()
		return
	case sid != "" && !s.sessions[sid]:
		s.mu.Unlock()
		http.Error(w, "session not found", http.StatusNotFound)
		return
	}
	s.mu.Unlock()
	(&hostile.MCP{Answer: s.answer}).ServeHTTP(w, r)
}

func (s *sessionTasks) answer(w http.ResponseWriter, r *http.Request, m hostile.Message) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	sid := r.Header.Get("Mcp-Session-Id")
	s.seen = append(s.seen, m.Method+" "+sid)
	var p struct {
		TaskID string `json:"taskId"`
	}
	_ = json.Unmarshal(m.Params, &p)
	task := func(id, status string) map[string]any {
		return map[string]any{"taskId": id, "status": status, "statusMessage": status, "createdAt": "2026-11-30T00:00:00Z", "ttl": 60000, "pollInterval": 10}
	}
	mine := s.tasks[p.TaskID] == sid && sid != ""
	switch m.Method {
	case "initialize":
		s.next++
		id := fmt.Sprintf("s-%d", s.next)
		s.sessions[id] = true
		w.Header().Set("Mcp-Session-Id", id)
		hostile.Result(w, m.ID, map[string]any{"protocolVersion": "2025-11-25", "serverInfo": map[string]any{"name": "tasks", "version": "1"},
			"capabilities": map[string]any{"tools": map[string]any{}, "tasks": map[string]any{"requests": map[string]any{"tools": map[string]any{"call": map[string]any{}}}, "cancel": map[string]any{}}}})
	case "tools/list":
		hostile.Result(w, m.ID, map[string]any{"tools": []any{
			map[string]any{"name": "research", "inputSchema": map[string]any{"type": "object"}, "execution": map[string]any{"taskSupport": "required"}},
		}})
	case "tools/call":
		id := fmt.Sprintf("t-%d", len(s.tasks)+1)
		s.tasks[id] = sid
		hostile.Result(w, m.ID, map[string]any{"task": task(id, "working")})
	case "tasks/get", "tasks/result", "tasks/cancel":
		if m.Method == "tasks/get" && s.cut > 0 {
			s.cut--
			if conn, _, err := w.(http.Hijacker).Hijack(); err == nil {
				conn.Close()
			}
			return true
		}
		switch {
		case !mine:
			hostile.Error(w, m.ID, -32602, "Failed to retrieve task: Task not found")
		case m.Method == "tasks/cancel":
			hostile.Result(w, m.ID, task(p.TaskID, "cancelled"))
		case m.Method == "tasks/result" && s.gone:
			hostile.Error(w, m.ID, -32603, "Task "+p.TaskID+" has no result stored")
		case s.gone:
			hostile.Result(w, m.ID, task(p.TaskID, "cancelled"))
		case m.Method == "tasks/result":
			hostile.Result(w, m.ID, map[string]any{"content": []any{map[string]any{"type": "text", "text": "the report of " + p.TaskID}}})
		case s.done:
			hostile.Result(w, m.ID, task(p.TaskID, "completed"))
		default:
			hostile.Result(w, m.ID, task(p.TaskID, "working"))
		}
	default:
		return false
	}
	return true
}

func (s *sessionTasks) finish() {
	s.mu.Lock()
	s.done = true
	s.mu.Unlock()
}

// forget ends every session, as a server restart does.
func (s *sessionTasks) forget() {
	s.mu.Lock()
	clear(s.sessions)
	s.mu.Unlock()
}

func (s *sessionTasks) requests() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return strings.Join(s.seen, ", ")
}

func (s *sessionTasks) count(method string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, r := range s.seen {
		if strings.HasPrefix(r, method+" ") {
			n++
		}
	}
	return n
}

// mapTasks is a TaskStore in memory, as a page's IndexedDB is to the pages
// that follow it.
type mapTasks struct {
	mu sync.Mutex
	m  map[string][]byte
}

func (s *mapTasks) PutTask(_ context.Context, key string, data []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.m == nil {
		s.m = map[string][]byte{}
	}
	s.m[key] = append([]byte(nil), data...)
	return nil
}

func (s *mapTasks) DeleteTask(_ context.Context, key string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.m, key)
	return nil
}

func (s *mapTasks) ListTasks(context.Context) ([][]byte, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out [][]byte
	for _, v := range s.m {
		out = append(out, v)
	}
	return out, nil
}

func (s *mapTasks) len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.m)
}

// leaveDuringTask starts research on a client keeping tasks in store and
// lets the page that called it go away once the task works: the call ends
// with ErrOwnerGone, the client leaves. It returns the task's id.
func leaveDuringTask(t *testing.T, url string, s *sessionTasks, store TaskStore) string {
	t.Helper()
	c := pageClient(t, url, store)
	ctx, gone := context.WithCancelCause(ctxT(t))
	ended := make(chan error, 1)
	go func() {
		_, err := c.CallTool(ctx, "research", nil, nil)
		ended <- err
	}()
	deadline := time.Now().Add(10 * time.Second)
	for s.count("tasks/get") < 2 {
		if time.Now().After(deadline) {
			t.Fatalf("the task was never polled: %s", s.requests())
		}
		time.Sleep(5 * time.Millisecond)
	}
	gone(ErrOwnerGone)
	if err := <-ended; err == nil {
		t.Fatal("the call of a page that went away resolved")
	}
	if err := c.Leave(); err != nil {
		t.Fatal(err)
	}
	tasks := c.Tasks(ctxT(t))
	if len(tasks) != 1 || tasks[0].Tool != "research" || tasks[0].Status != "working" {
		t.Fatalf("kept tasks %+v; want research, working", tasks)
	}
	return tasks[0].TaskID
}

// pageClient is a connected client of a page: its book over the store the
// pages share.
func pageClient(t *testing.T, url string, store TaskStore) *Client {
	t.Helper()
	c := newClient(t, url, Options{Transport: TransportStreamable, Tasks: &TaskBook{Store: store}})
	if err := c.Connect(ctxT(t), ConnectOptions{}); err != nil {
		t.Fatal(err)
	}
	return c
}

// TestTaskOutlivesThePage: a page that goes away while its task works
// neither cancels the task nor ends the session it runs in; a client of
// the next page (a new book over the same store) lists the task, goes on
// in that session without a handshake, and follows the task to its result
// once, without calling the tool again; the task is forgotten then.
func TestTaskOutlivesThePage(t *testing.T) {
	s := &sessionTasks{}
	srv := hostile.Start(t, s)
	store := &mapTasks{}
	id := leaveDuringTask(t, srv.URL+"/mcp", s, store)
	if n := s.count("tasks/cancel"); n != 0 || len(s.deletes) != 0 {
		t.Fatalf("the page's leaving sent %d tasks/cancel and deleted sessions %v; want neither", n, s.deletes)
	}

	c := newClient(t, srv.URL+"/mcp", Options{Transport: TransportStreamable, Tasks: &TaskBook{Store: store}})
	if got := c.Tasks(ctxT(t)); len(got) != 1 || got[0].TaskID != id {
		t.Fatalf("the next page's client lists %+v; want task %s", got, id)
	}
	if err := c.Connect(ctxT(t), ConnectOptions{}); err != nil {
		t.Fatal(err)
	}
	if n := s.count("initialize"); n != 1 {
		t.Fatalf("%d handshakes; want the first page's only (the next page goes on in its session)", n)
	}
	s.finish()
	var progress []string
	res, err := c.ResumeTask(ctxT(t), id, func(p *mcp.ProgressNotificationParams) { progress = append(progress, p.Message) })
	if err != nil {
		t.Fatal(err)
	}
	if txt := res.Content[0].(*mcp.TextContent).Text; txt != "the report of "+id {
		t.Errorf("result %q; want the task's report", txt)
	}
	if n := s.count("tools/call"); n != 1 {
		t.Errorf("tools/call sent %d times; want once", n)
	}
	if !strings.Contains(s.requests(), "tasks/result s-1") {
		t.Errorf("requests %s; want tasks/result in the task's session s-1", s.requests())
	}
	if len(progress) == 0 || progress[len(progress)-1] != "completed" {
		t.Errorf("progress %q; want the task's status messages", progress)
	}
	if got := c.Tasks(ctxT(t)); len(got) != 0 || store.len() != 0 {
		t.Errorf("after its result: tasks %+v, %d stored; want none", got, store.len())
	}
	_, err = c.ResumeTask(ctxT(t), id, nil)
	wantCode(t, err, mcperr.InvalidArgument)
	if !strings.Contains(err.Error(), "client.tasks() lists") {
		t.Errorf("a second resume: %v", err)
	}
}

// TestTaskSessionOutlivesANetworkFailure: a request of a call following a
// task fails in the network (as a page's fetches do while it unloads):
// the client ends its session for a new one, but does not send DELETE for
// the session the task runs in, which would end the task at the server;
// the next page goes on in that session and gets the task's result.
func TestTaskSessionOutlivesANetworkFailure(t *testing.T) {
	s := &sessionTasks{}
	srv := hostile.Start(t, s)
	store := &mapTasks{}
	c := pageClient(t, srv.URL+"/mcp", store)
	deadline := time.Now().Add(10 * time.Second)
	ended := make(chan error, 1)
	go func() {
		_, err := c.CallTool(ctxT(t), "research", nil, nil)
		ended <- err
	}()
	for s.count("tasks/get") < 1 {
		if time.Now().After(deadline) {
			t.Fatalf("the task was never polled: %s", s.requests())
		}
		time.Sleep(5 * time.Millisecond)
	}
	s.mu.Lock()
	s.cut = 1
	s.mu.Unlock()
	err := <-ended
	wantCode(t, err, mcperr.Network)
	if !strings.Contains(err.Error(), "goes on at the server") {
		t.Errorf("the call's error %q; want it to say the task goes on", err)
	}
	s.mu.Lock()
	deletes := slices.Clone(s.deletes)
	s.mu.Unlock()
	if slices.Contains(deletes, "s-1") {
		t.Fatalf("the client deleted session s-1, where its kept task runs (deleted %v)", deletes)
	}
	c.Close()

	next := pageClient(t, srv.URL+"/mcp", store)
	tasks := next.Tasks(ctxT(t))
	if len(tasks) != 1 {
		t.Fatalf("the next page's client lists %+v; want the task", tasks)
	}
	s.finish()
	res, err := next.ResumeTask(ctxT(t), tasks[0].TaskID, nil)
	if err != nil {
		t.Fatalf("resuming the task: %v (requests %s)", err, s.requests())
	}
	if txt := res.Content[0].(*mcp.TextContent).Text; txt != "the report of "+tasks[0].TaskID {
		t.Errorf("result %q; want the task's report", txt)
	}
}

// TestKeptTaskOfAnEndedSession: when the server no longer knows the
// session a kept task ran in (it restarted), the next page's client starts
// a session of its own, and following the task ends "protocol", saying
// the server no longer knows it; the task is forgotten.
func TestKeptTaskOfAnEndedSession(t *testing.T) {
	s := &sessionTasks{}
	srv := hostile.Start(t, s)
	store := &mapTasks{}
	id := leaveDuringTask(t, srv.URL+"/mcp", s, store)
	s.forget()
	c := pageClient(t, srv.URL+"/mcp", store)
	_, err := c.ResumeTask(ctxT(t), id, nil)
	wantCode(t, err, mcperr.Protocol)
	if !strings.Contains(err.Error(), "no longer knows task "+id+" of research") {
		t.Errorf("error %v; want it to say the server no longer knows the task", err)
	}
	if !strings.Contains(s.requests(), "tasks/get s-2") {
		t.Errorf("requests %s; want tasks/get in a new session s-2 after s-1's 404", s.requests())
	}
	if got := c.Tasks(ctxT(t)); len(got) != 0 || store.len() != 0 {
		t.Errorf("tasks %+v, %d stored; want the unknown task forgotten", got, store.len())
	}
	if n := s.count("tools/call"); n != 1 {
		t.Errorf("tools/call sent %d times; want once", n)
	}
}

// TestCancelKeptTask: cancelTask sends tasks/cancel in the task's session
// and forgets the task; an abandoned call forgets its task as it cancels
// it; Close (not a page going away) ends the session as always.
func TestCancelKeptTask(t *testing.T) {
	s := &sessionTasks{}
	srv := hostile.Start(t, s)
	store := &mapTasks{}
	id := leaveDuringTask(t, srv.URL+"/mcp", s, store)
	c := pageClient(t, srv.URL+"/mcp", store)
	if err := c.CancelTask(ctxT(t), id); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(s.requests(), "tasks/cancel s-1") || store.len() != 0 {
		t.Errorf("requests %s, %d stored; want tasks/cancel in s-1 and the task forgotten", s.requests(), store.len())
	}

	ctx, cancel := context.WithTimeout(ctxT(t), 200*time.Millisecond)
	defer cancel()
	if _, err := c.CallTool(ctx, "research", nil, nil); err == nil {
		t.Fatal("an abandoned call resolved")
	}
	if n := s.count("tasks/cancel"); n != 2 || store.len() != 0 || len(c.Tasks(ctxT(t))) != 0 {
		t.Errorf("%d tasks/cancel, %d stored; want the abandoned call's task cancelled and forgotten", n, store.len())
	}
	c.Close()
	deadline := time.Now().Add(5 * time.Second)
	for {
		s.mu.Lock()
		n := len(s.deletes)
		s.mu.Unlock()
		if n == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("Close did not end the session")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestKeptTaskCancelledElsewhere: a kept task that someone else cancelled
// (the server says cancelled, and has no result) ends the resume with the
// server's words and is forgotten, not kept to be followed again.
func TestKeptTaskCancelledElsewhere(t *testing.T) {
	s := &sessionTasks{}
	srv := hostile.Start(t, s)
	store := &mapTasks{}
	id := leaveDuringTask(t, srv.URL+"/mcp", s, store)
	s.mu.Lock()
	s.gone = true
	s.mu.Unlock()
	c := pageClient(t, srv.URL+"/mcp", store)
	_, err := c.ResumeTask(ctxT(t), id, nil)
	if err == nil || !strings.Contains(err.Error(), "ended cancelled at the server without a result") || !strings.Contains(err.Error(), "has no result stored") {
		t.Fatalf("error %v; want it to say the task ended cancelled, with the server's words", err)
	}
	if got := c.Tasks(ctxT(t)); len(got) != 0 || store.len() != 0 {
		t.Errorf("tasks %+v, %d stored; want the ended task forgotten", got, store.len())
	}
}
