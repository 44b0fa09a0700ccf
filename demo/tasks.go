package demo

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TasksExtension is the Tasks extension's identifier (protocol
// 2026-07-28), which the demo server declares: a client that declares it
// on a call of research gets a task handle, and follows the task with
// tasks/get, tasks/update and tasks/cancel (taskMethods, before go-sdk's
// handler, which routes none of them).
const TasksExtension = "io.modelcontextprotocol/tasks"

// ToolResearch works through steps, and runs as a task for a client that
// can follow one.
const ToolResearch = "research"

// ResearchInput is research's arguments.
type ResearchInput struct {
	Topic   string `json:"topic"`
	Steps   int    `json:"steps"`
	DelayMs int    `json:"delayMs"`
	Ask     bool   `json:"ask"`
}

// The bounds of the demo's tasks: how long one is kept, and how many the
// server keeps at once (a client cannot make it hold more).
const (
	taskTTL      = 10 * time.Minute
	maxDemoTasks = 1000
	taskPollMs   = 250
)

func (d *demo) addResearch() {
	mcp.AddTool(d.server, &mcp.Tool{
		Name:  ToolResearch,
		Title: "Research (a task)",
		Description: "Researches a topic in steps of delayMs each, reporting each step. A client that follows tasks " +
			"(the Tasks extension) gets a task it can follow, resume after a reload, or cancel; ask makes the task " +
			"ask the person what to focus on halfway. Other clients wait for the result.",
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true},
		InputSchema: object([]string{"topic"}, schema{
			"topic":   schema{"type": "string", "title": "Topic", "description": "What to research.", "minLength": 1, "maxLength": 200, "default": "tasks"},
			"steps":   schema{"type": "integer", "title": "Steps", "minimum": 1, "maximum": maxSteps, "default": 5},
			"delayMs": schema{"type": "integer", "title": "Delay per step (ms)", "minimum": 0, "maximum": maxDelayMs, "default": 1000},
			"ask":     schema{"type": "boolean", "title": "Ask what to focus on", "description": "Only when run as a task.", "default": false},
		}),
	}, func(ctx context.Context, req *mcp.CallToolRequest, in ResearchInput) (*mcp.CallToolResult, any, error) {
		for step := 1; step <= in.Steps; step++ {
			select {
			case <-ctx.Done():
				return nil, nil, ctx.Err()
			case <-time.After(time.Duration(in.DelayMs) * time.Millisecond):
			}
			if token := req.Params.GetProgressToken(); token != nil {
				_ = req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: token, Progress: float64(step), Total: float64(in.Steps), Message: researchStep(step, in.Steps)})
			}
		}
		return researchResult(in.Topic, in.Steps, ""), nil, nil
	})
}

func researchStep(step, steps int) string { return fmt.Sprintf("Step %d of %d", step, steps) }

func researchResult(topic string, steps int, focus string) *mcp.CallToolResult {
	s := fmt.Sprintf("Research on %s: %d steps done.", topic, steps)
	if focus != "" {
		s += " Focus: " + focus + "."
	}
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
}

// demoTask is one task of research.
type demoTask struct {
	id, owner      string
	created        time.Time
	updated        time.Time
	status, msg    string
	input          map[string]any // the outstanding input requests, by key
	answer         chan map[string]any
	result         *mcp.CallToolResult
	cancel         context.CancelFunc
	topic          string
	steps, delayMs int
	ask            bool
}

// taskStore holds the server's tasks; a task belongs to the caller's
// authorization (the token's user), or to whoever knows its id on a
// server without sign-in (its id is 128 random bits).
type taskStore struct {
	mu    sync.Mutex
	tasks map[string]*demoTask
}

// taskMethods answers a call of research that declares the Tasks
// extension with a task, and the extension's methods, before next (go-sdk's
// handler) sees the request; every other request reaches next unchanged.
func taskMethods(next http.Handler) http.Handler {
	st := &taskStore{tasks: map[string]*demoTask{}}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, ok := postBody(w, r, next)
		if !ok {
			return
		}
		var msg taskRequest
		if json.Unmarshal(body, &msg) != nil || len(msg.ID) == 0 || !msg.ours() {
			next.ServeHTTP(w, r)
			return
		}
		result, rpcErr := st.answer(r, &msg)
		reply := map[string]any{"jsonrpc": "2.0", "id": msg.ID}
		if rpcErr != nil {
			reply["error"] = rpcErr
		} else {
			reply["result"] = result
		}
		out, _ := json.Marshal(reply)
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(out)
	})
}

type taskRequest struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params struct {
		Name           string                     `json:"name"`
		Arguments      json.RawMessage            `json:"arguments"`
		TaskID         string                     `json:"taskId"`
		InputResponses map[string]json.RawMessage `json:"inputResponses"`
		Meta           struct {
			Caps struct {
				Extensions map[string]json.RawMessage `json:"extensions"`
			} `json:"io.modelcontextprotocol/clientCapabilities"`
		} `json:"_meta"`
	} `json:"params"`
}

// ours: a research call that may get a task, or a method of the extension.
func (m *taskRequest) ours() bool {
	switch m.Method {
	case "tools/call":
		return m.Params.Name == ToolResearch && m.declares()
	case "tasks/get", "tasks/update", "tasks/cancel":
		return true
	}
	return false
}

func (m *taskRequest) declares() bool {
	_, ok := m.Params.Meta.Caps.Extensions[TasksExtension]
	return ok
}

type rpcError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
	Data    any    `json:"data,omitempty"`
}

func owner(r *http.Request) string {
	if ti := auth.TokenInfoFromContext(r.Context()); ti != nil {
		return ti.UserID
	}
	return ""
}

func (st *taskStore) answer(r *http.Request, m *taskRequest) (any, *rpcError) {
	if !m.declares() {
		return nil, &rpcError{Code: -32021, Message: "Missing required client capability",
			Data: map[string]any{"requiredCapabilities": map[string]any{"extensions": map[string]any{TasksExtension: map[string]any{}}}}}
	}
	if m.Method == "tools/call" {
		return st.start(owner(r), m.Params.Arguments)
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	st.expireLocked()
	t := st.tasks[m.Params.TaskID]
	if t == nil || t.owner != owner(r) {
		return nil, &rpcError{Code: -32602, Message: "Failed to retrieve task: Task not found"}
	}
	switch m.Method {
	case "tasks/update":
		if t.input != nil {
			answers := map[string]any{}
			for k, v := range m.Params.InputResponses {
				if _, open := t.input[k]; open {
					var a any
					_ = json.Unmarshal(v, &a)
					answers[k] = a
				}
			}
			if len(answers) > 0 {
				t.input = nil
				t.answer <- answers
			}
		}
		return map[string]any{"resultType": "complete"}, nil
	case "tasks/cancel":
		if !terminal(t.status) {
			t.cancel()
			t.set("cancelled", "Cancelled by the client.")
		}
		return map[string]any{"resultType": "complete"}, nil
	}
	return t.detailed(), nil
}

// start makes a task of research with the call's arguments.
func (st *taskStore) start(owner string, args json.RawMessage) (any, *rpcError) {
	in := ResearchInput{Topic: "tasks", Steps: 5, DelayMs: 1000}
	if len(args) > 0 {
		dec := json.NewDecoder(bytes.NewReader(args))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&in); err != nil {
			return nil, &rpcError{Code: -32602, Message: "research: arguments must be an object of topic, steps, delayMs and ask: " + err.Error()}
		}
	}
	if in.Topic == "" || len(in.Topic) > 200 || in.Steps < 1 || in.Steps > maxSteps || in.DelayMs < 0 || in.DelayMs > maxDelayMs {
		return nil, &rpcError{Code: -32602, Message: fmt.Sprintf("research: topic must be 1 to 200 characters, steps 1 to %d, delayMs 0 to %d", maxSteps, maxDelayMs)}
	}
	id := make([]byte, 16)
	_, _ = rand.Read(id)
	ctx, cancel := context.WithTimeout(context.Background(), taskTTL)
	now := time.Now().UTC()
	t := &demoTask{id: hex.EncodeToString(id), owner: owner, created: now, updated: now, status: "working", msg: "Starting",
		answer: make(chan map[string]any, 1), cancel: cancel, topic: in.Topic, steps: in.Steps, delayMs: in.DelayMs, ask: in.Ask}
	st.mu.Lock()
	st.expireLocked()
	if len(st.tasks) >= maxDemoTasks {
		st.mu.Unlock()
		cancel()
		return nil, &rpcError{Code: -32603, Message: "the demo server holds as many tasks as it keeps; try again later"}
	}
	st.tasks[t.id] = t
	handle := t.detailed()
	st.mu.Unlock()
	handle["resultType"] = "task"
	go st.run(ctx, t)
	return handle, nil
}

// run works through t's steps, asking for a focus halfway when t.ask.
func (st *taskStore) run(ctx context.Context, t *demoTask) {
	focus := ""
	for step := 1; step <= t.steps; step++ {
		select {
		case <-ctx.Done():
			return
		case <-time.After(time.Duration(t.delayMs) * time.Millisecond):
		}
		st.mu.Lock()
		t.set("working", researchStep(step, t.steps))
		if t.ask && step == (t.steps+1)/2 {
			t.input = map[string]any{"focus": map[string]any{"method": "elicitation/create", "params": map[string]any{
				"mode": "form", "message": fmt.Sprintf("Which aspect of %s should the report focus on?", t.topic),
				"requestedSchema": object([]string{"focus"}, schema{"focus": schema{"type": "string", "title": "Focus", "maxLength": 200}}),
			}}}
			t.set("input_required", "Waiting for the person to choose a focus")
		}
		asking := t.input != nil
		st.mu.Unlock()
		if asking {
			select {
			case <-ctx.Done():
				return
			case a := <-t.answer:
				focus = focusOf(a["focus"])
			}
			st.mu.Lock()
			t.set("working", researchStep(step, t.steps))
			st.mu.Unlock()
		}
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	if !terminal(t.status) {
		t.result = researchResult(t.topic, t.steps, focus)
		t.set("completed", "Done")
	}
}

// focusOf is the focus an elicitation answer gives, or what declining says.
func focusOf(answer any) string {
	a, _ := answer.(map[string]any)
	if a["action"] != "accept" {
		return fmt.Sprintf("none (the person chose %v)", a["action"])
	}
	content, _ := a["content"].(map[string]any)
	if f, ok := content["focus"].(string); ok && f != "" && len(f) <= 200 {
		return f
	}
	return "none"
}

func terminal(status string) bool {
	return status == "completed" || status == "failed" || status == "cancelled"
}

func (t *demoTask) set(status, msg string) {
	t.status, t.msg, t.updated = status, msg, time.Now().UTC()
}

// detailed is the task as tasks/get answers it.
func (t *demoTask) detailed() map[string]any {
	d := map[string]any{
		"resultType": "complete", "taskId": t.id, "status": t.status, "statusMessage": t.msg,
		"createdAt": t.created.Format(time.RFC3339Nano), "lastUpdatedAt": t.updated.Format(time.RFC3339Nano),
		"ttlMs": taskTTL.Milliseconds(), "pollIntervalMs": taskPollMs,
	}
	switch t.status {
	case "input_required":
		d["inputRequests"] = t.input
	case "completed":
		d["result"] = t.result
	}
	return d
}

// expireLocked forgets the tasks past their time to live.
func (st *taskStore) expireLocked() {
	for id, t := range st.tasks {
		if time.Since(t.created) > taskTTL {
			t.cancel()
			delete(st.tasks, id)
		}
	}
}
