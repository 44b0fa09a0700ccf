package mcpclient

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpwasm/mcpwasm/mcperr"
)

// TaskRunning is the error of a call whose task is still running when the
// wait [WithTaskWait] gave it is over: the task goes on, followed by the
// client (and kept, see [Client.Tasks]), and its end reaches the wait's
// onEnd.
type TaskRunning struct {
	Task TaskInfo
}

// MCPErrorCode is timeout: the call's wait is over, not the task.
func (e *TaskRunning) MCPErrorCode() mcperr.Code { return mcperr.Timeout }

func (e *TaskRunning) Error() string {
	return fmt.Sprintf("mcp: %s runs as task %s and has not finished yet; its result comes later", cleanText(e.Task.Tool), cleanText(e.Task.TaskID))
}

// TaskEnd is how a task handed off by [WithTaskWait] ended: its result, or
// the error that ended it.
type TaskEnd struct {
	Task   TaskInfo
	Result *mcp.CallToolResult
	Err    error
}

type taskWait struct {
	wait  time.Duration
	onEnd func(TaskEnd)
}

type taskWaitKey struct{}

// WithTaskWait bounds how long a call under ctx waits for a tool that runs
// as a task: after wait, the call fails with a [*TaskRunning] and the
// client follows the task on its own, calling onEnd (from another
// goroutine) when it ends, unless the client left (see [Client.Leave]):
// that task is kept for the next page. Without it a call waits for its
// task's end.
func WithTaskWait(ctx context.Context, wait time.Duration, onEnd func(TaskEnd)) context.Context {
	return context.WithValue(ctx, taskWaitKey{}, &taskWait{wait: wait, onEnd: onEnd})
}

// followWithin is followNew under a wait: the task is followed under the
// client's life, the call's abort cancelling it until the wait is over,
// and after that nothing of the call's.
func (c *Client) followWithin(ctx context.Context, cs *mcp.ClientSession, kt keptTask, onProgress func(*mcp.ProgressNotificationParams), w *taskWait) (*mcp.CallToolResult, error) {
	done, _ := c.book.follow(c.url, kt.ID)
	var handed atomic.Bool
	fctx, cancel := context.WithCancelCause(c.ctx)
	stop := context.AfterFunc(ctx, func() { cancel(context.Cause(ctx)) })
	progress := onProgress
	if onProgress != nil {
		progress = func(p *mcp.ProgressNotificationParams) {
			if !handed.Load() {
				onProgress(p)
			}
		}
	}
	type end struct {
		res *mcp.CallToolResult
		err error
	}
	ended := make(chan end, 1)
	t := kt
	go func() {
		res, err := c.followKept(fctx, cs, &t, progress)
		ended <- end{res, err}
	}()
	timer := time.NewTimer(w.wait)
	defer timer.Stop()
	select {
	case e := <-ended:
		stop()
		cancel(nil)
		done()
		if e.err != nil && ctx.Err() == nil && c.book.has(ctx, kt.Server, kt.ID) {
			return nil, keptTaskError(&kt, e.err)
		}
		return e.res, e.err
	case <-timer.C:
	}
	handed.Store(true)
	if !stop() {
		// The call was abandoned just as the wait ended: its abort
		// cancels the task, as before.
		e := <-ended
		done()
		return e.res, e.err
	}
	info := TaskInfo{TaskID: kt.ID, Tool: kt.Tool, Status: kt.Status, StatusMessage: kt.StatusMessage, CreatedAt: kt.Created}
	go func() {
		e := <-ended
		gone := errors.Is(context.Cause(fctx), ErrOwnerGone)
		cancel(nil)
		defer done() // after onEnd: a follower that sees the task free knows it was told
		// A task whose page went away is kept for the next one: nobody
		// is left to tell.
		if w.onEnd != nil && !gone {
			w.onEnd(TaskEnd{Task: info, Result: e.res, Err: e.err})
		}
	}()
	return nil, &TaskRunning{Task: info}
}
