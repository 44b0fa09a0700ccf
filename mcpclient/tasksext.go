package mcpclient

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpwasm/mcpwasm/mcperr"
)

// The Tasks extension (io.modelcontextprotocol/tasks, protocol 2026-07-28,
// SEP-2663): the client declares it in every request's capabilities; a
// server that declares it too may answer any tools/call with a task handle
// (resultType "task") instead of the result. The client then polls
// tasks/get, whose answer carries the task's status and, at the end, its
// result or error inline; a task waiting for input lists the server's
// requests (inputRequests), which the client answers with tasks/update.
// Cancelling is tasks/cancel. There are no sessions: a task belongs to
// the caller's authorization, so a later page follows it as it is.

// TasksExtension is the Tasks extension's identifier.
const TasksExtension = "io.modelcontextprotocol/tasks"

// taskHandle keeps the task handle a tools/call was answered with: the
// answer reaches go-sdk as an empty complete result, and the call follows
// the task instead.
type taskHandle struct {
	mu     sync.Mutex
	handle json.RawMessage
}

type taskHandleKey struct{}

func taskHandleFrom(ctx context.Context) *taskHandle {
	th, _ := ctx.Value(taskHandleKey{}).(*taskHandle)
	return th
}

// answered is the listener of the tools/call with JSON-RPC id.
func (th *taskHandle) answered(id json.RawMessage) listener {
	return func(m *wireMessage) []byte {
		if m.Method != "" || len(m.Result) == 0 || !sameID(m.ID, id) {
			return nil
		}
		var r struct {
			ResultType string `json:"resultType"`
		}
		if json.Unmarshal(m.Result, &r) != nil || r.ResultType != "task" {
			return nil
		}
		th.mu.Lock()
		th.handle = m.Result
		th.mu.Unlock()
		return fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%s,"result":{"content":[],"resultType":"complete"}}`, m.ID)
	}
}

func (th *taskHandle) kept() json.RawMessage {
	th.mu.Lock()
	defer th.mu.Unlock()
	return th.handle
}

// detailedTask is a task as tasks/get (and a task handle) carry it.
type detailedTask struct {
	TaskID         string                     `json:"taskId"`
	Status         string                     `json:"status"`
	StatusMessage  string                     `json:"statusMessage"`
	TTLMs          *float64                   `json:"ttlMs"`
	PollIntervalMs float64                    `json:"pollIntervalMs"`
	InputRequests  map[string]json.RawMessage `json:"inputRequests"`
	Result         json.RawMessage            `json:"result"`
	Error          *jsonrpc.Error             `json:"error"`
}

// keepHandle records the task a tools/call of name was answered with
// (raw), for the version the session speaks.
func (c *Client) keepHandle(ctx context.Context, cs *mcp.ClientSession, name string, raw json.RawMessage) (keptTask, error) {
	var d detailedTask
	if err := json.Unmarshal(raw, &d); err != nil || d.TaskID == "" {
		return keptTask{}, violation("the server answered a call of %s with a task handle without a task id", cleanText(name))
	}
	return c.keep(ctx, keptTask{
		ID: d.TaskID, Tool: name, Status: d.Status, StatusMessage: d.StatusMessage,
		PollInterval: d.PollIntervalMs, Version: cs.InitializeResult().ProtocolVersion,
	}, d.TTLMs), nil
}

// followTaskExt is followTask for a task of the Tasks extension: tasks/get
// at the server's poll interval until the task ends (each new status
// message a progress report), the server's requests of a task waiting for
// input answered with tasks/update, each once.
func (c *Client) followTaskExt(ctx context.Context, cs *mcp.ClientSession, t *keptTask, onProgress func(*mcp.ProgressNotificationParams)) (res *mcp.CallToolResult, err error) {
	defer func() { err = c.settleTask(ctx, cs, t, err) }()
	answered := map[string]bool{}
	step := 0.0
	first := true
	for {
		if !first {
			if err := sleepCtx(ctx, pollWait(t.PollInterval)); err != nil {
				return nil, err
			}
		}
		first = false
		var d detailedTask
		if err := c.callRawHeaders(ctx, cs, "tasks/get", map[string]any{"taskId": t.ID}, map[string]string{"Mcp-Name": t.ID}, &d); err != nil {
			return nil, err
		}
		if d.TaskID != "" && d.TaskID != t.ID {
			return nil, violation("the server answered tasks/get for task %s with task %s", cleanText(t.ID), cleanText(d.TaskID))
		}
		msg, status := t.StatusMessage, t.Status
		t.Status, t.StatusMessage, t.PollInterval = d.Status, d.StatusMessage, d.PollIntervalMs
		if t.StatusMessage != msg && t.StatusMessage != "" && onProgress != nil {
			step++
			onProgress(&mcp.ProgressNotificationParams{Progress: step, Message: t.StatusMessage})
		}
		if t.Status != status || t.StatusMessage != msg {
			_ = c.book.put(ctx, *t)
		}
		if done, res, err := taskEnd(t, &d); done {
			return res, err
		}
		if d.Status == "input_required" {
			if err := c.answerTask(ctx, cs, t, d.InputRequests, answered); err != nil {
				return nil, err
			}
		}
	}
}

// taskEnd is the outcome of task t if its tasks/get answer d says it ended
// (completed, failed or cancelled); done is false while it runs.
func taskEnd(t *keptTask, d *detailedTask) (done bool, res *mcp.CallToolResult, err error) {
	switch d.Status {
	case "completed":
		var r mcp.CallToolResult
		if err := json.Unmarshal(d.Result, &r); err != nil {
			return true, nil, violation("the result of task %s is not a tool result: %v", cleanText(t.ID), err)
		}
		if r.Content == nil {
			r.Content = []mcp.Content{}
		}
		return true, &r, nil
	case "failed":
		if d.Error == nil {
			return true, nil, violation("task %s failed without its error", cleanText(t.ID))
		}
		return true, nil, d.Error
	case "cancelled":
		// settleTask says the task ended cancelled; this is why.
		why := "no reason given"
		if t.StatusMessage != "" {
			why = cleanText(t.StatusMessage)
		}
		return true, nil, mcperr.New(mcperr.Protocol, "%s", why)
	}
	return false, nil, nil
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(d):
		return nil
	}
}

// pollWait is the wait before the next tasks/get, from the server's
// interval in milliseconds (0: none given).
func pollWait(ms float64) time.Duration {
	if ms <= 0 {
		return defaultTaskPoll
	}
	return min(max(time.Duration(ms)*time.Millisecond, minTaskPoll), maxTaskPoll)
}

// answerTask answers the server's requests of a task waiting for input
// that were not answered yet (answered, by key), in key order, as the
// same requests outside a task are answered, and sends the answers with
// tasks/update.
func (c *Client) answerTask(ctx context.Context, cs *mcp.ClientSession, t *keptTask, reqs map[string]json.RawMessage, answered map[string]bool) error {
	keys := make([]string, 0, len(reqs))
	for k := range reqs {
		if !answered[k] {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	if len(keys) == 0 {
		return nil
	}
	c.mu.Lock()
	co := c.lastCO
	c.mu.Unlock()
	responses := map[string]any{}
	for _, k := range keys {
		r, err := c.answerInput(ctx, co, reqs[k])
		if err != nil {
			return fmt.Errorf("task %s of %s asks for input (%s): %w", cleanText(t.ID), cleanText(t.Tool), cleanText(k), err)
		}
		responses[k] = r
	}
	if err := c.callRawHeaders(ctx, cs, "tasks/update", map[string]any{"taskId": t.ID, "inputResponses": responses}, map[string]string{"Mcp-Name": t.ID}, &struct{}{}); err != nil {
		return err
	}
	for _, k := range keys {
		answered[k] = true
	}
	return nil
}

// answerInput answers one of a task's input requests: an elicitation by
// the connect's handler (with the checks of any elicitation), a sampling
// request by its sampling handler, a roots request with no roots.
func (c *Client) answerInput(ctx context.Context, co ConnectOptions, raw json.RawMessage) (any, error) {
	var req struct {
		Method string          `json:"method"`
		Params json.RawMessage `json:"params"`
	}
	if err := json.Unmarshal(raw, &req); err != nil {
		return nil, violation("an input request is not a request: %v", err)
	}
	switch req.Method {
	case "elicitation/create":
		if co.Elicitation == nil {
			return nil, mcperr.New(mcperr.Protocol, "mcp: the server asks the person (elicitation) and the page set no onElicitation before connect()")
		}
		var p mcp.ElicitParams
		if err := json.Unmarshal(req.Params, &p); err != nil {
			return nil, violation("an elicitation request's params: %v", err)
		}
		return c.elicitationHandler(co.Elicitation)(ctx, &mcp.ElicitRequest{Params: &p})
	case "sampling/createMessage":
		if co.Sampling == nil {
			return nil, mcperr.New(mcperr.Protocol, "mcp: the server asks for the page's model (sampling) and the page set no onSampling before connect()")
		}
		var p mcp.CreateMessageParams
		if err := json.Unmarshal(req.Params, &p); err != nil {
			return nil, violation("a sampling request's params: %v", err)
		}
		return co.Sampling(ctx, &p)
	case "roots/list":
		return map[string]any{"roots": []any{}}, nil
	}
	return nil, violation("an input request's method %q is not one a task may ask", cleanText(req.Method))
}
