package mcpclient

import (
	"context"
	"encoding/json"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Tasks (2025-11-25, experimental): a tool whose execution.taskSupport is
// "required" runs only as a task. Its call is sent with a task parameter
// and answered with a task handle; the client then follows the task
// (tasks/get at the server's poll interval, each status a progress
// report) and fetches its result (tasks/result, which also carries the
// server's questions while the task waits for input). An abandoned call
// cancels its task (tasks/cancel).

// taskTTL is how long the client asks the server to keep a task and its
// result.
const taskTTL = 10 * time.Minute

// Bounds on the poll interval a server may ask for.
const (
	minTaskPoll     = 250 * time.Millisecond
	maxTaskPoll     = 10 * time.Second
	defaultTaskPoll = time.Second
)

// task is a task's state as tasks/get and a task handle carry it.
type task struct {
	TaskID        string  `json:"taskId"`
	Status        string  `json:"status"`
	StatusMessage string  `json:"statusMessage"`
	PollInterval  float64 `json:"pollInterval"`
}

func (t task) terminal() bool {
	return t.Status == "completed" || t.Status == "failed" || t.Status == "cancelled"
}

// toolsListed keeps the execution.taskSupport of each tool a tools/list
// answer (m) lists.
func (c *Client) toolsListed(m *wireMessage) {
	var r struct {
		Tools []struct {
			Name      string `json:"name"`
			Execution *struct {
				TaskSupport string `json:"taskSupport"`
			} `json:"execution"`
		} `json:"tools"`
	}
	if m.Method != "" || json.Unmarshal(m.Result, &r) != nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.taskTools == nil {
		c.taskTools = map[string]string{} // known, if empty: no need to list again
	}
	for _, t := range r.Tools {
		if t.Execution != nil && t.Execution.TaskSupport != "" {
			c.taskTools[t.Name] = t.Execution.TaskSupport
		} else {
			delete(c.taskTools, t.Name)
		}
	}
}

// runsAsTask reports whether the tool must be called as a task: the
// server declares task-augmented tools/call in its capabilities and lists
// the tool with taskSupport "required". When the server offers tasks and
// its tools were never listed on this client, they are listed first.
func (c *Client) runsAsTask(ctx context.Context, cs *mcp.ClientSession, name string) bool {
	c.mu.Lock()
	raw, known := c.rawCaps, c.taskTools != nil
	c.mu.Unlock()
	var caps struct {
		Tasks *struct {
			Requests *struct {
				Tools *struct {
					Call json.RawMessage `json:"call"`
				} `json:"tools"`
			} `json:"requests"`
		} `json:"tasks"`
	}
	if json.Unmarshal(raw, &caps) != nil || caps.Tasks == nil || caps.Tasks.Requests == nil || caps.Tasks.Requests.Tools == nil || caps.Tasks.Requests.Tools.Call == nil {
		return false
	}
	if !known {
		for range cs.Tools(ctx, nil) {
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.taskTools[name] == "required"
}

// callTask calls the tool as a task and follows it to its result.
func (c *Client) callTask(ctx context.Context, cs *mcp.ClientSession, params *mcp.CallToolParams, onProgress func(*mcp.ProgressNotificationParams)) (*mcp.CallToolResult, error) {
	p := map[string]any{"name": params.Name, "arguments": params.Arguments, "task": map[string]any{"ttl": taskTTL.Milliseconds()}}
	if params.Meta != nil {
		p["_meta"] = map[string]any(params.Meta)
	}
	var created struct {
		Task *task `json:"task"`
	}
	if err := c.callRawHeaders(ctx, cs, "tools/call", p, map[string]string{"Mcp-Name": params.Name}, &created); err != nil {
		return nil, err
	}
	if created.Task == nil || created.Task.TaskID == "" {
		return nil, violation("the server answered a task call of %s without a task", cleanText(params.Name))
	}
	t := *created.Task
	id := t.TaskID
	// An abandoned call (aborted, timed out) ends its task at the server.
	defer func() {
		if ctx.Err() != nil && !t.terminal() {
			cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
			defer cancel()
			_ = c.callRaw(cctx, cs, "tasks/cancel", map[string]any{"taskId": id}, &struct{}{})
		}
	}()
	step := 0.0
	report := func() {
		if onProgress != nil && t.StatusMessage != "" {
			step++
			onProgress(&mcp.ProgressNotificationParams{Progress: step, Message: t.StatusMessage})
		}
	}
	report()
	for !t.terminal() && t.Status != "input_required" {
		wait := defaultTaskPoll
		if t.PollInterval > 0 {
			wait = min(max(time.Duration(t.PollInterval)*time.Millisecond, minTaskPoll), maxTaskPoll)
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(wait):
		}
		var next task
		if err := c.callRaw(ctx, cs, "tasks/get", map[string]any{"taskId": id}, &next); err != nil {
			return nil, err
		}
		if next.TaskID != "" && next.TaskID != id {
			return nil, violation("the server answered tasks/get for task %s with task %s", cleanText(id), cleanText(next.TaskID))
		}
		msg := t.StatusMessage
		t.Status, t.StatusMessage, t.PollInterval = next.Status, next.StatusMessage, next.PollInterval
		if t.StatusMessage != msg {
			report()
		}
	}
	// tasks/result waits for the end, carrying the server's questions
	// (elicitation) while the task needs input.
	var res mcp.CallToolResult
	if err := c.callRaw(ctx, cs, "tasks/result", map[string]any{"taskId": id}, &res); err != nil {
		return nil, err
	}
	t.Status = "completed"
	if res.Content == nil {
		res.Content = []mcp.Content{}
	}
	return &res, nil
}
