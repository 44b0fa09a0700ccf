package mcpclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpwasm/mcpwasm/mcperr"
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
	TaskID        string   `json:"taskId"`
	Status        string   `json:"status"`
	StatusMessage string   `json:"statusMessage"`
	PollInterval  float64  `json:"pollInterval"`
	TTL           *float64 `json:"ttl"` // null: kept as long as the server likes
}

func (t keptTask) terminal() bool { return terminalStatus(t.Status) }

func terminalStatus(s string) bool { return s == "completed" || s == "failed" || s == "cancelled" }

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

// ErrOwnerGone is the cause a call's context ends with when whoever made
// the call went away without abandoning it (a page that reloads or
// closes): a task the call follows is kept for a later
// [Client.ResumeTask] instead of cancelled.
var ErrOwnerGone = errors.New("mcp: the page that made the call went away")

// callTask calls the tool as a task and follows it to its result. The
// task is kept in the client's book until its result is delivered.
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
	kt := c.keep(ctx, keptTask{
		ID: created.Task.TaskID, Tool: params.Name,
		Status: created.Task.Status, StatusMessage: created.Task.StatusMessage, PollInterval: created.Task.PollInterval,
		Session: c.keptSession(cs),
	}, created.Task.TTL)
	return c.followNew(ctx, cs, kt, onProgress)
}

// keep records a task a call just started (t, of this client's server,
// created now, kept ttlMs by the server when it says) in the book.
func (c *Client) keep(ctx context.Context, t keptTask, ttlMs *float64) keptTask {
	t.Server, t.Created = c.url, time.Now()
	if ttlMs != nil && *ttlMs > 0 {
		t.Expires = t.Created.Add(time.Duration(*ttlMs) * time.Millisecond)
	}
	_ = c.book.put(ctx, t) // a store that fails says so itself; the task is kept in memory
	return t
}

// followNew follows the task a call just started, kept in the book.
func (c *Client) followNew(ctx context.Context, cs *mcp.ClientSession, kt keptTask, onProgress func(*mcp.ProgressNotificationParams)) (*mcp.CallToolResult, error) {
	if w, _ := ctx.Value(taskWaitKey{}).(*taskWait); w != nil && w.wait > 0 {
		return c.followWithin(ctx, cs, kt, onProgress, w)
	}
	done, _ := c.book.follow(c.url, kt.ID)
	defer done()
	res, err := c.followKept(ctx, cs, &kt, onProgress)
	if err != nil && ctx.Err() == nil && c.book.has(ctx, kt.Server, kt.ID) {
		// Not the caller's error to retry: the tool was called.
		return nil, keptTaskError(&kt, err)
	}
	return res, err
}

// followKept follows t as the protocol it was created under does.
func (c *Client) followKept(ctx context.Context, cs *mcp.ClientSession, t *keptTask, onProgress func(*mcp.ProgressNotificationParams)) (*mcp.CallToolResult, error) {
	if t.Version >= protocol20260728 {
		return c.followTaskExt(ctx, cs, t, onProgress)
	}
	return c.followTask(ctx, cs, t, onProgress)
}

// cancelRemote asks the server to cancel t (tasks/cancel; the Tasks
// extension's request names the task in Mcp-Name too).
func (c *Client) cancelRemote(ctx context.Context, cs *mcp.ClientSession, t *keptTask) error {
	var headers map[string]string
	if t.Version >= protocol20260728 {
		headers = map[string]string{"Mcp-Name": t.ID}
	}
	return c.callRawHeaders(ctx, cs, "tasks/cancel", map[string]any{"taskId": t.ID}, headers, &struct{}{})
}

// keptSession is cs's session as a kept task records it: only a
// Streamable HTTP session of a version with sessions.
func (c *Client) keptSession(cs *mcp.ClientSession) *keptSession {
	ir := cs.InitializeResult()
	if cs.ID() == "" || ir == nil || ir.ProtocolVersion >= protocol20260728 {
		return nil
	}
	c.mu.Lock()
	caps := c.rawCaps
	c.mu.Unlock()
	init := map[string]any{"protocolVersion": ir.ProtocolVersion, "capabilities": caps, "serverInfo": ir.ServerInfo}
	if ir.Instructions != "" {
		init["instructions"] = ir.Instructions
	}
	raw, err := json.Marshal(init)
	if err != nil {
		return nil
	}
	return &keptSession{ID: cs.ID(), Version: ir.ProtocolVersion, Init: raw}
}

// followTask follows the kept task t to its result: tasks/get at the
// server's poll interval (each new status message a progress report),
// then tasks/result, which also carries the server's questions while the
// task needs input. The book forgets the task once its result is here or
// the server no longer knows it, and when the call is abandoned (the task
// is cancelled at the server); a call whose owner went away
// ([ErrOwnerGone]) or that failed on the way keeps it.
func (c *Client) followTask(ctx context.Context, cs *mcp.ClientSession, t *keptTask, onProgress func(*mcp.ProgressNotificationParams)) (res *mcp.CallToolResult, err error) {
	defer func() { err = c.settleTask(ctx, cs, t, err) }()
	step := 0.0
	report := func() {
		if onProgress != nil && t.StatusMessage != "" {
			step++
			onProgress(&mcp.ProgressNotificationParams{Progress: step, Message: t.StatusMessage})
		}
	}
	report()
	for !t.terminal() && t.Status != "input_required" {
		msg, err := c.pollTask(ctx, cs, t)
		if err != nil {
			return nil, err
		}
		if t.StatusMessage != msg {
			report()
		}
	}
	var r mcp.CallToolResult
	if err := c.callRaw(ctx, cs, "tasks/result", map[string]any{"taskId": t.ID}, &r); err != nil {
		return nil, err
	}
	t.Status = "completed"
	if r.Content == nil {
		r.Content = []mcp.Content{}
	}
	return &r, nil
}

// pollTask waits the task's poll interval and asks for its status
// (tasks/get), recording a change in the book; it returns the status
// message before.
func (c *Client) pollTask(ctx context.Context, cs *mcp.ClientSession, t *keptTask) (string, error) {
	wait := defaultTaskPoll
	if t.PollInterval > 0 {
		wait = min(max(time.Duration(t.PollInterval)*time.Millisecond, minTaskPoll), maxTaskPoll)
	}
	select {
	case <-ctx.Done():
		return "", ctx.Err()
	case <-time.After(wait):
	}
	var next task
	if err := c.callRaw(ctx, cs, "tasks/get", map[string]any{"taskId": t.ID}, &next); err != nil {
		return "", err
	}
	if next.TaskID != "" && next.TaskID != t.ID {
		return "", violation("the server answered tasks/get for task %s with task %s", cleanText(t.ID), cleanText(next.TaskID))
	}
	msg, status := t.StatusMessage, t.Status
	t.Status, t.StatusMessage, t.PollInterval = next.Status, next.StatusMessage, next.PollInterval
	if t.Status != status || t.StatusMessage != msg {
		_ = c.book.put(ctx, *t)
	}
	return msg, nil
}

// settleTask is what following t to err leaves: the task forgotten once
// its result is here (err nil) or the server no longer knows it; an
// abandoned call's task cancelled at the server and forgotten; else (the
// call's owner went away, the connection failed) still kept. It returns
// the error the caller gets.
func (c *Client) settleTask(ctx context.Context, cs *mcp.ClientSession, t *keptTask, err error) error {
	switch {
	case err == nil:
		c.book.drop(ctx, t.Server, t.ID)
	case taskUnknown(err):
		c.book.drop(ctx, t.Server, t.ID)
		return mcperr.New(mcperr.Protocol, "mcp: the server no longer knows task %s of %s (it expired, or ended with the session it ran in); call the tool again if its result is still wanted", cleanText(t.ID), cleanText(t.Tool))
	case ctx.Err() == nil && t.terminal():
		// It ended without a result to give (cancelled elsewhere, failed):
		// there is nothing more to follow.
		c.book.drop(ctx, t.Server, t.ID)
		return &mcperr.Error{Code: mcperr.CodeOf(err, mcperr.Protocol), Status: mcperr.StatusOf(err), Msg: fmt.Sprintf(
			"mcp: task %s of %s ended %s at the server without a result (%s); call the tool again if its result is still wanted",
			cleanText(t.ID), cleanText(t.Tool), cleanText(t.Status), strings.TrimSuffix(err.Error(), "."))}
	case ctx.Err() != nil && !errors.Is(context.Cause(ctx), ErrOwnerGone):
		if !t.terminal() {
			cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
			defer cancel()
			_ = c.cancelRemote(cctx, cs, t)
		}
		c.book.drop(ctx, t.Server, t.ID)
	}
	return err
}

// taskUnknown reports whether err is the server's answer for a task it
// does not know (Invalid params: never created, expired, or gone with
// its session).
func taskUnknown(err error) bool {
	var je *jsonrpc.Error
	return errors.As(err, &je) && je.Code == jsonrpc.CodeInvalidParams
}

// keptTaskError is err of a task followed no further, which the book
// keeps: its code as err's, without err's chain (a lost session must not
// make the caller send the tool call again), saying how to go on.
func keptTaskError(t *keptTask, err error) error {
	code := mcperr.CodeOf(err, mcperr.Network)
	if errors.Is(err, mcp.ErrSessionMissing) || errors.Is(err, mcp.ErrConnectionClosed) {
		code = mcperr.Network
	}
	return &mcperr.Error{Code: code, Status: mcperr.StatusOf(err), Msg: fmt.Sprintf(
		"%s; task %s of %s goes on at the server: client.resumeTask(%q) follows it once the client is connected",
		strings.TrimSuffix(err.Error(), "."), cleanText(t.ID), cleanText(t.Tool), cleanText(t.ID))}
}

// Tasks lists the tasks of this server that were started (by this client,
// or an earlier one sharing its [TaskBook]) and whose results nobody has
// received yet, oldest first, with their status as last seen. Tasks past
// their expiry are forgotten.
func (c *Client) Tasks(ctx context.Context) []TaskInfo {
	out := []TaskInfo{}
	for _, t := range c.book.list(ctx, c.url, time.Now()) {
		info := TaskInfo{TaskID: t.ID, Tool: t.Tool, Status: t.Status, StatusMessage: t.StatusMessage, CreatedAt: t.Created}
		if !t.Expires.IsZero() {
			info.ExpiresAt = &t.Expires
		}
		out = append(out, info)
	}
	return out
}

// ResumeTask follows a kept task (see [Client.Tasks]) to its result, as
// the call that started it would have: progress reports, the server's
// questions to the connect's elicitation handler, the result once (the
// task is forgotten then). An abandoned resume cancels the task at the
// server. A task the server no longer knows fails "protocol" and is
// forgotten.
func (c *Client) ResumeTask(ctx context.Context, id string, onProgress func(*mcp.ProgressNotificationParams)) (*mcp.CallToolResult, error) {
	t, err := c.keptTask(ctx, id)
	if err != nil {
		return nil, err
	}
	done, ok := c.book.follow(c.url, id)
	if !ok {
		return nil, mcperr.New(mcperr.InvalidArgument, "mcp: task %s is already followed by a call of this page; its result comes there", cleanText(id))
	}
	defer done()
	defer c.clocks.track(ctx)()
	res, err := do(ctx, c, func(ctx context.Context, cs *mcp.ClientSession) (*mcp.CallToolResult, error) {
		return c.followKept(ctx, cs, &t, onProgress)
	})
	if err != nil && ctx.Err() == nil && c.book.has(ctx, t.Server, t.ID) {
		return nil, keptTaskError(&t, err)
	}
	return res, err
}

// CancelTask cancels a kept task at the server (tasks/cancel) and forgets
// it. A task the server no longer knows, or that ended before, is only
// forgotten.
func (c *Client) CancelTask(ctx context.Context, id string) error {
	t, err := c.keptTask(ctx, id)
	if err != nil {
		return err
	}
	_, err = do(ctx, c, func(ctx context.Context, cs *mcp.ClientSession) (struct{}, error) {
		err := c.cancelRemote(ctx, cs, &t)
		if taskUnknown(err) {
			err = nil // unknown, or ended already (the server refuses to cancel it)
		}
		return struct{}{}, err
	})
	if err != nil {
		return err
	}
	c.book.drop(ctx, t.Server, t.ID)
	return nil
}

// keptTask is the book's task id of this server, or an error saying where
// the page can find the ones there are.
func (c *Client) keptTask(ctx context.Context, id string) (keptTask, error) {
	if id == "" {
		return keptTask{}, mcperr.New(mcperr.InvalidArgument, "mcp: name the task by its taskId, as client.tasks() lists it")
	}
	t, ok := c.book.get(ctx, c.url, id)
	if !ok {
		return keptTask{}, mcperr.New(mcperr.InvalidArgument, "mcp: no task %s of this server is kept (its result was delivered, or it ended or expired); client.tasks() lists the ones that are", cleanText(id))
	}
	return t, nil
}

// HoldsTasks reports whether a kept task runs in the client's session,
// which must then stay open (see [Client.Leave]).
func (c *Client) HoldsTasks() bool {
	c.mu.Lock()
	cs := c.session
	c.mu.Unlock()
	return cs != nil && c.book.holds(context.Background(), c.url, cs.ID())
}

// Leave is Close for a client whose owner went away without abandoning
// its calls (a page that reloads): a session that a kept task still runs
// in is left open at the server, so that a later client follows the task
// there ([Client.ResumeTask]); everything else ends as with Close.
func (c *Client) Leave() error {
	c.leaving.Store(true)
	return c.Close()
}
