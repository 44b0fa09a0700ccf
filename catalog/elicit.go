package catalog

import (
	"context"
	"fmt"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpwasm/mcpwasm/mcpclient"
	"github.com/mcpwasm/mcpwasm/mcperr"
)

// ElicitationRequest is a server's request for input from the user
// (elicitation, form or URL mode), as [Config.Elicit] is asked it and
// [CallOptions.OnElicitation] hears of it.
type ElicitationRequest struct {
	ServerID string `json:"serverId"`
	// ElicitationID is unique within the catalog: the host matches the
	// request its Elicit is asked with the one a running call heard of.
	ElicitationID string            `json:"elicitationId"`
	Params        *mcp.ElicitParams `json:"params"`
}

// Mode is the request's mode: "form" or "url".
func (r ElicitationRequest) Mode() string {
	if r.Params != nil && r.Params.Mode != "" {
		return r.Params.Mode
	}
	return "form"
}

// callKey marks the context of a call to a server with its [running]
// call: a server's request that arrives in that context (a 2026-07-28
// server's input_required result, fulfilled within the call) belongs to it.
type callKey struct{}

// running is a call in progress at a server, for attributing the server's
// requests to it.
type running struct {
	server string
	notify func(ElicitationRequest)
}

// track registers a call to server for the time it runs, with its
// timeout: ctx is the call's, to pass to the server; done ends it. The
// timeout is [mcpclient.WithCallTimeout]'s, which the server's client
// pauses while the user answers an elicitation of the call.
func (c *Catalog) track(ctx context.Context, server string, timeout time.Duration, opts CallOptions) (context.Context, func()) {
	clock, stop := mcpclient.WithCallTimeout(ctx, timeout)
	r := &running{server: server, notify: opts.OnElicitation}
	c.mu.Lock()
	if c.running == nil {
		c.running = map[string][]*running{}
	}
	c.running[server] = append(c.running[server], r)
	c.mu.Unlock()
	return context.WithValue(clock, callKey{}, r), func() {
		stop()
		c.mu.Lock()
		defer c.mu.Unlock()
		calls := c.running[server]
		for i, x := range calls {
			if x == r {
				c.running[server] = append(calls[:i:i], calls[i+1:]...)
				break
			}
		}
		if len(c.running[server]) == 0 {
			delete(c.running, server)
		}
		if e := c.entries[server]; e != nil {
			c.usedLocked(e) // a long call counts until it ends
		}
	}
}

// callOfLocked is the running call a request of server that arrived in
// ctx belongs to: the call whose context it is, else (a 2025-11-25
// server's elicitation/create, which go-sdk does not tie to the call it
// serves) the earliest call still running at that server; nil when none
// runs.
func (c *Catalog) callOfLocked(ctx context.Context, server string) *running {
	calls := c.running[server]
	if r, ok := ctx.Value(callKey{}).(*running); ok && r.server == server {
		for _, x := range calls {
			if x == r {
				return r
			}
		}
	}
	if len(calls) > 0 {
		return calls[0]
	}
	return nil
}

// Elicit answers server's elicitation request p (form or URL mode) with
// [Config.Elicit], after telling the running call it belongs to
// (its [CallOptions.OnElicitation]); that call's timeout does not run
// while the user answers (the server's [mcpclient.Client] pauses it, by
// the same rule: see [mcpclient.WithCallTimeout]). A [Factory] makes it
// the handler of the server's client
// ([mcpclient.ConnectOptions.Elicitation]) when Config.Elicit is set, so
// that the server is told elicitation is supported only then. ctx is the
// server request's.
func (c *Catalog) Elicit(ctx context.Context, server string, p *mcp.ElicitParams) (*mcp.ElicitResult, error) {
	if c.cfg.Elicit == nil {
		return nil, mcperr.New(mcperr.Protocol, "catalog: no Elicit handler is configured")
	}
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil, errClosed
	}
	c.elicitations++
	req := ElicitationRequest{ServerID: server, ElicitationID: fmt.Sprintf("elicitation-%d", c.elicitations), Params: p}
	r := c.callOfLocked(ctx, server)
	c.mu.Unlock()
	if r != nil && r.notify != nil {
		r.notify(req)
	}
	res, err := c.cfg.Elicit(ctx, req)
	if err != nil {
		return nil, err
	}
	if res == nil {
		return nil, mcperr.New(mcperr.Protocol, "catalog: the Elicit handler gave no answer")
	}
	return res, nil
}
