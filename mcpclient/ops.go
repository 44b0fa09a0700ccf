package mcpclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	"github.com/mcpwasm/mcpwasm/mcperr"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// do runs op on the session and classifies its error.
func do[T any](ctx context.Context, c *Client, op func(context.Context, *mcp.ClientSession) (T, error)) (T, error) {
	var zero T
	cs, err := c.awaitSession(ctx)
	if err != nil {
		return zero, err
	}
	v, missing, err := doOnce(ctx, c, cs, op)
	if missing && ctx.Err() == nil {
		// The server answered 404 to the session id: it restarted and
		// never ran the request. doOn ended the session, so the client
		// reconnects; the request runs once more on the fresh session.
		if cs, err2 := c.awaitSession(ctx); err2 == nil {
			return doOn(ctx, c, cs, op)
		}
	}
	return v, err
}

// doBounded is [do] with [DefaultRequestTimeout] when ctx has no deadline.
func doBounded[T any](ctx context.Context, c *Client, op func(context.Context, *mcp.ClientSession) (T, error)) (T, error) {
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, DefaultRequestTimeout)
		defer cancel()
	}
	return do(ctx, c, op)
}

func doOn[T any](ctx context.Context, c *Client, cs *mcp.ClientSession, op func(context.Context, *mcp.ClientSession) (T, error)) (T, error) {
	v, _, err := doOnce(ctx, c, cs, op)
	return v, err
}

// doOnce is doOn that also says whether the server no longer knew the
// session (404 on its id), so that the request never ran there.
func doOnce[T any](ctx context.Context, c *Client, cs *mcp.ClientSession, op func(context.Context, *mcp.ClientSession) (T, error)) (T, bool, error) {
	var zero T
	rctx, rec := withRecord(ctx)
	v, err := op(rctx, cs)
	if err != nil {
		if c.State() == StateClosed {
			return zero, false, errClosed
		}
		cerr := classify(err, rec)
		if errors.Is(err, mcp.ErrSessionMissing) || errors.Is(err, mcp.ErrConnectionClosed) || (mcperr.CodeOf(cerr, "") == mcperr.Network && ctx.Err() == nil) {
			// The server no longer knows the session (a restart: 404 on
			// its id), the connection is gone, or the network failed the
			// request: end the session now, so the client reconnects
			// (state reconnecting) instead of using it again.
			c.lostSession(cs, err)
		}
		return zero, errors.Is(err, mcp.ErrSessionMissing), mcperr.AtServer(cerr, Host(c.url))
	}
	return v, false, nil
}

// The bounds of one list operation (listTools and the others): a server
// that pages forever, repeats a cursor or returns an attacker-sized list
// fails the operation with a "protocol" error instead of flooding the
// server with requests or the page with items.
const (
	MaxListPages = 100
	MaxListItems = 10000
)

// listAll follows a list's pagination: page(cursor) returns one page's
// items and the next cursor ("" at the end).
func listAll[T any](ctx context.Context, what string, page func(ctx context.Context, cursor string) ([]T, string, error)) ([]T, error) {
	out := []T{}
	seen := map[string]bool{}
	cursor := ""
	for n := 1; ; n++ {
		items, next, err := page(ctx, cursor)
		if err != nil {
			return nil, err
		}
		out = append(out, items...)
		switch {
		case len(out) > MaxListItems:
			return nil, mcperr.New(mcperr.Protocol, "mcp: the server's %s list has more than %d items; refusing the rest", what, MaxListItems)
		case next == "":
			return out, nil
		case seen[next]:
			return nil, mcperr.New(mcperr.Protocol, "mcp: the server's %s list repeats a page cursor (a pagination loop); stopped after %d pages", what, n)
		case n >= MaxListPages:
			return nil, mcperr.New(mcperr.Protocol, "mcp: the server's %s list has more than %d pages; refusing the rest", what, MaxListPages)
		}
		seen[next] = true
		cursor = next
	}
}

// ListTools returns every tool, following pagination.
func (c *Client) ListTools(ctx context.Context) ([]*mcp.Tool, error) {
	return doBounded(ctx, c, func(ctx context.Context, cs *mcp.ClientSession) ([]*mcp.Tool, error) {
		return listAll(ctx, "tools", func(ctx context.Context, cur string) ([]*mcp.Tool, string, error) {
			r, err := cs.ListTools(ctx, &mcp.ListToolsParams{Cursor: cur})
			if err != nil {
				return nil, "", err
			}
			for _, x := range r.Tools {
				x.Icons = c.safeIcons(fmt.Sprintf("tool %q", x.Name), x.Icons)
			}
			return r.Tools, r.NextCursor, nil
		})
	})
}

// ListResources returns every resource, following pagination.
func (c *Client) ListResources(ctx context.Context) ([]*mcp.Resource, error) {
	return doBounded(ctx, c, func(ctx context.Context, cs *mcp.ClientSession) ([]*mcp.Resource, error) {
		return listAll(ctx, "resources", func(ctx context.Context, cur string) ([]*mcp.Resource, string, error) {
			r, err := cs.ListResources(ctx, &mcp.ListResourcesParams{Cursor: cur})
			if err != nil {
				return nil, "", err
			}
			for _, x := range r.Resources {
				x.Icons = c.safeIcons(fmt.Sprintf("resource %q", x.Name), x.Icons)
			}
			return r.Resources, r.NextCursor, nil
		})
	})
}

// ListResourceTemplates returns every resource template, following pagination.
func (c *Client) ListResourceTemplates(ctx context.Context) ([]*mcp.ResourceTemplate, error) {
	return doBounded(ctx, c, func(ctx context.Context, cs *mcp.ClientSession) ([]*mcp.ResourceTemplate, error) {
		return listAll(ctx, "resource templates", func(ctx context.Context, cur string) ([]*mcp.ResourceTemplate, string, error) {
			r, err := cs.ListResourceTemplates(ctx, &mcp.ListResourceTemplatesParams{Cursor: cur})
			if err != nil {
				return nil, "", err
			}
			for _, x := range r.ResourceTemplates {
				x.Icons = c.safeIcons(fmt.Sprintf("resource template %q", x.Name), x.Icons)
			}
			return r.ResourceTemplates, r.NextCursor, nil
		})
	})
}

// ListPrompts returns every prompt, following pagination.
func (c *Client) ListPrompts(ctx context.Context) ([]*mcp.Prompt, error) {
	return doBounded(ctx, c, func(ctx context.Context, cs *mcp.ClientSession) ([]*mcp.Prompt, error) {
		return listAll(ctx, "prompts", func(ctx context.Context, cur string) ([]*mcp.Prompt, string, error) {
			r, err := cs.ListPrompts(ctx, &mcp.ListPromptsParams{Cursor: cur})
			if err != nil {
				return nil, "", err
			}
			for _, x := range r.Prompts {
				x.Icons = c.safeIcons(fmt.Sprintf("prompt %q", x.Name), x.Icons)
			}
			return r.Prompts, r.NextCursor, nil
		})
	})
}

// ReadResource reads the resource at uri.
func (c *Client) ReadResource(ctx context.Context, uri string) (*mcp.ReadResourceResult, error) {
	if uri == "" {
		return nil, mcperr.New(mcperr.InvalidArgument, "mcp: readResource needs a non-empty URI")
	}
	return doBounded(ctx, c, func(ctx context.Context, cs *mcp.ClientSession) (*mcp.ReadResourceResult, error) {
		return cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
	})
}

// GetPrompt renders the named prompt with args.
func (c *Client) GetPrompt(ctx context.Context, name string, args map[string]string) (*mcp.GetPromptResult, error) {
	if name == "" {
		return nil, mcperr.New(mcperr.InvalidArgument, "mcp: getPrompt needs a prompt name")
	}
	return doBounded(ctx, c, func(ctx context.Context, cs *mcp.ClientSession) (*mcp.GetPromptResult, error) {
		return cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: name, Arguments: args})
	})
}

// Ping checks that the server answers. On protocol 2026-07-28 the ping
// carries the per-request _meta envelope every request carries there; as
// that version has no ping method, a server's "method not found" (-32601)
// answer counts as an answer.
func (c *Client) Ping(ctx context.Context) error {
	_, err := doBounded(ctx, c, func(ctx context.Context, cs *mcp.ClientSession) (struct{}, error) {
		env := c.envelope(cs)
		if env == nil {
			return struct{}{}, cs.Ping(ctx, nil)
		}
		err := cs.Ping(ctx, &mcp.PingParams{Meta: env})
		var rpcErr *jsonrpc.Error
		if errors.As(err, &rpcErr) && rpcErr.Code == jsonrpc.CodeMethodNotFound {
			return struct{}{}, nil
		}
		return struct{}{}, err
	})
	return err
}

// envelope returns the _meta a request of session cs carries on protocol
// 2026-07-28 (the protocol version, the client's capabilities and info),
// or nil for an older protocol. go-sdk adds it to every request but ping.
func (c *Client) envelope(cs *mcp.ClientSession) mcp.Meta {
	ir := cs.InitializeResult()
	if ir == nil || ir.ProtocolVersion < protocol20260728 {
		return nil
	}
	c.mu.Lock()
	caps, impl := c.caps, c.impl
	c.mu.Unlock()
	return mcp.Meta{
		mcp.MetaKeyProtocolVersion:    ir.ProtocolVersion,
		mcp.MetaKeyClientCapabilities: caps,
		mcp.MetaKeyClientInfo:         impl,
	}
}

// CallTool calls the named tool. args must be a JSON object (or empty for
// none). When onProgress is set, the server's progress notifications for
// this call reach it, in order, all before CallTool returns. Cancelling ctx
// sends notifications/cancelled to the server. A ctx from
// [WithCallTimeout] times the call out without counting the time the user
// spends answering the server's elicitations.
func (c *Client) CallTool(ctx context.Context, name string, args json.RawMessage, onProgress func(*mcp.ProgressNotificationParams)) (*mcp.CallToolResult, error) {
	if name == "" {
		return nil, mcperr.New(mcperr.InvalidArgument, "mcp: callTool needs a tool name")
	}
	var arguments any = map[string]any{}
	if len(args) > 0 && string(args) != "null" {
		var obj map[string]json.RawMessage
		if err := json.Unmarshal(args, &obj); err != nil || obj == nil {
			return nil, mcperr.New(mcperr.InvalidArgument, "mcp: callTool arguments must be a plain object, like {\"a\": 1}")
		}
		arguments = args
	}
	defer c.clocks.track(ctx)()
	return do(ctx, c, func(ctx context.Context, cs *mcp.ClientSession) (*mcp.CallToolResult, error) {
		params := &mcp.CallToolParams{Name: name, Arguments: arguments}
		if onProgress != nil {
			token := "mcpwasm-" + strconv.FormatInt(c.nextID.Add(1), 10)
			defer c.taps.add(token, onProgress)()
			params.SetProgressToken(token)
		}
		if c.runsAsTask(ctx, cs, name) {
			return c.callTask(ctx, cs, params, onProgress)
		}
		if _, ok := extension(cs, TasksExtension); !ok || cs.InitializeResult().ProtocolVersion < protocol20260728 {
			return cs.CallTool(ctx, params)
		}
		// The server may answer with a task handle instead of the result.
		th := &taskHandle{}
		r, err := cs.CallTool(context.WithValue(ctx, taskHandleKey{}, th), params)
		if h := th.kept(); h != nil {
			kt, err := c.keepHandle(ctx, cs, name, h)
			if err != nil {
				return nil, err
			}
			return c.followNew(ctx, cs, kt, onProgress)
		}
		return r, err
	})
}
