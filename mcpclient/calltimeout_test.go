package mcpclient

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpwasm/mcpwasm/mcperr"
)

// A call with a short timeout whose server asks the user a question that
// takes longer than the timeout to answer completes: the time the person
// takes is not the server's, whether the request arrives outside the call
// (/mcp, elicitation/create) or within it (/modern, input_required). The
// same client's call to a server that is slow itself still times out.
func TestCallTimeoutPausesWhileTheUserAnswers(t *testing.T) {
	t.Parallel() // it waits on clocks and servers of its own
	const timeout = 300 * time.Millisecond
	base := startElicitServer(t)
	for _, path := range []string{"/mcp", "/modern"} {
		t.Run(strings.TrimPrefix(path, "/"), func(t *testing.T) {
			c := newClient(t, base+path, Options{})
			err := c.Connect(ctxT(t), ConnectOptions{Elicitation: func(ctx context.Context, _ *mcp.ElicitParams) (*mcp.ElicitResult, error) {
				select { // a person who takes longer than the call's timeout
				case <-time.After(4 * timeout):
				case <-ctx.Done():
					return nil, ctx.Err()
				}
				return &mcp.ElicitResult{Action: "decline"}, nil
			}})
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := WithCallTimeout(ctxT(t), timeout)
			defer cancel()
			res, err := c.CallTool(ctx, "ask", nil, nil)
			if err != nil {
				t.Fatalf("ask with a slow answer: %v; want the server's answer", err)
			}
			if got := res.Content[0].(*mcp.TextContent).Text; got != "decline:<nil>" {
				t.Errorf("ask answered %q; want %q", got, "decline:<nil>")
			}

			ctx, cancel = WithCallTimeout(ctxT(t), timeout)
			defer cancel()
			start := time.Now()
			_, err = c.CallTool(ctx, "wait", nil, nil)
			if code := mcperr.CodeOf(err, ""); code != mcperr.Timeout || !errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("a slow server's call = %v (code %q); want a timeout", err, code)
			}
			if took := time.Since(start); took > 20*timeout {
				t.Errorf("the slow call ended after %v; want about %v", took, timeout)
			}
		})
	}
}

// A paused timeout does not run out; once resumed it does, and the
// contexts derived from it say DeadlineExceeded, as context.WithTimeout's.
func TestPausableTimeout(t *testing.T) {
	p := newPausable(context.Background(), 100*time.Millisecond)
	defer p.stop()
	child, cancel := context.WithCancel(p)
	defer cancel()
	resume := p.pause()
	time.Sleep(250 * time.Millisecond)
	if p.Err() != nil {
		t.Fatalf("Err while paused = %v; want nil", p.Err())
	}
	resume()
	select {
	case <-child.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("the timeout did not run out after resuming")
	}
	if p.Err() != context.DeadlineExceeded || child.Err() != context.DeadlineExceeded {
		t.Errorf("Err = %v, child's %v; want DeadlineExceeded for both", p.Err(), child.Err())
	}
}
