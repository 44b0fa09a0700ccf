//go:build js && wasm

package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpwasm/mcpwasm/hostpolicy"
	"github.com/mcpwasm/mcpwasm/jsapi"
	"github.com/mcpwasm/mcpwasm/jsbridge"
	"github.com/mcpwasm/mcpwasm/mcpclient"
	"github.com/mcpwasm/mcpwasm/mcperr"
	"github.com/mcpwasm/mcpwasm/oauth"
)

// jsCall is what a call brings besides its JSON arguments.
type jsCall struct {
	signal     jsbridge.Value // an AbortSignal, or undefined
	onProgress jsbridge.Value // a function, or undefined
}

// handler runs one operation of jsapi.Ops.
type handler struct {
	args reflect.Type
	run  func(ctx context.Context, raw json.RawMessage, c jsCall) (any, error)
}

// op makes the handler of an operation whose arguments are an A.
func op[A any](fn func(ctx context.Context, args A, c jsCall) (any, error)) handler {
	return handler{
		args: reflect.TypeFor[A](),
		run: func(ctx context.Context, raw json.RawMessage, c jsCall) (any, error) {
			var args A
			if len(raw) > 0 {
				if err := json.Unmarshal(raw, &args); err != nil {
					return nil, mcperr.New(mcperr.InvalidArgument, "mcp: bad arguments: %v", err)
				}
			}
			if c, ok := any(&args).(interface{ CheckOptions() error }); ok {
				if err := c.CheckOptions(); err != nil {
					return nil, err
				}
			}
			return fn(ctx, args, c)
		},
	}
}

// handlers is the implementation of jsapi.Ops: the client's operations
// here, the catalog's and the agent's from featureHandlers.
func (a *app) handlers() map[string]handler {
	hs := map[string]handler{
		"client.new":       op(a.opNewClient),
		"client.connect":   op(a.opConnect),
		"client.authorize": op(a.opAuthorize),
		"client.logout":    op(a.clientOp(func(ctx context.Context, e *clientEntry) (any, error) { return nil, e.c.Logout(ctx) })),
		"client.close":     op(a.opClose),
		"client.listTools": op(a.clientOp(func(ctx context.Context, e *clientEntry) (any, error) {
			tools, err := e.c.ListTools(ctx)
			if err != nil {
				return nil, err
			}
			return e.c.WithUI(tools), nil
		})),
		"client.listResources":         op(a.clientOp(func(ctx context.Context, e *clientEntry) (any, error) { return e.c.ListResources(ctx) })),
		"client.listResourceTemplates": op(a.clientOp(func(ctx context.Context, e *clientEntry) (any, error) { return e.c.ListResourceTemplates(ctx) })),
		"client.listPrompts":           op(a.clientOp(func(ctx context.Context, e *clientEntry) (any, error) { return e.c.ListPrompts(ctx) })),
		"client.readResource":          op(a.opReadResource),
		"client.getPrompt":             op(a.opGetPrompt),
		"client.complete":              op(a.opComplete),
		"client.subscribe": op(func(ctx context.Context, args jsapi.Subscribe, _ jsCall) (any, error) {
			return a.withClient(ctx, args.ID, func(ctx context.Context, e *clientEntry) (any, error) { return nil, e.c.Subscribe(ctx, args.URI) })
		}),
		"client.unsubscribe": op(func(ctx context.Context, args jsapi.Subscribe, _ jsCall) (any, error) {
			return a.withClient(ctx, args.ID, func(ctx context.Context, e *clientEntry) (any, error) { return nil, e.c.Unsubscribe(ctx, args.URI) })
		}),
		"client.skills": op(a.clientOp(func(ctx context.Context, e *clientEntry) (any, error) { return e.c.Skills(ctx) })),
		"client.getSkill": op(func(ctx context.Context, args jsapi.SkillRef, _ jsCall) (any, error) {
			return a.withClient(ctx, args.ID, func(ctx context.Context, e *clientEntry) (any, error) { return e.c.GetSkill(ctx, args.URI) })
		}),
		"client.loadSkill": op(func(ctx context.Context, args jsapi.SkillRef, _ jsCall) (any, error) {
			return a.withClient(ctx, args.ID, func(ctx context.Context, e *clientEntry) (any, error) { return e.c.LoadSkill(ctx, args.URI) })
		}),
		"client.readSkillFile": op(func(ctx context.Context, args jsapi.SkillFile, _ jsCall) (any, error) {
			return a.withClient(ctx, args.ID, func(ctx context.Context, e *clientEntry) (any, error) {
				return e.c.ReadSkillFile(ctx, args.Skill, args.File)
			})
		}),
		"client.ping":       op(a.clientOp(func(ctx context.Context, e *clientEntry) (any, error) { return nil, e.c.Ping(ctx) })),
		"client.callTool":   op(a.opCallTool),
		"client.tasks":      op(a.clientOp(func(ctx context.Context, e *clientEntry) (any, error) { return e.c.Tasks(ctx), nil })),
		"client.resumeTask": op(a.opResumeTask),
		"client.cancelTask": op(func(ctx context.Context, args jsapi.TaskRef, _ jsCall) (any, error) {
			return a.withClient(ctx, args.ID, func(ctx context.Context, e *clientEntry) (any, error) { return nil, e.c.CancelTask(ctx, args.TaskID) })
		}),
		"callback.deliver": op(a.opDeliver),
		"grants.apply":     op(a.opApply),
		"views.state":      op(a.opViewState),
		"views.keep":       op(a.opKeepViewState),
		"views.forget":     op(a.opForgetViewStates),
		"storage.clear":    op(a.opClear),
		"storage.status":   op(a.opStorageStatus),
		"network.changed":  op(a.opNetworkChanged),
	}
	maps.Copy(hs, a.featureHandlers())
	return hs
}

// checkOps reports a difference between the handlers hs and the table.
func checkOps(hs map[string]handler) error {
	hs = maps.Clone(hs)
	for _, o := range jsapi.Ops {
		h, ok := hs[o.Name]
		if !ok {
			return fmt.Errorf("operation %s of the table has no handler", o.Name)
		}
		if want := reflect.TypeOf(o.Args); h.args != want {
			return fmt.Errorf("operation %s takes %v; the table says %v", o.Name, h.args, want)
		}
		delete(hs, o.Name)
	}
	for name := range hs {
		return fmt.Errorf("handler %s is not in the table", name)
	}
	return nil
}

// invoke is the exported function: invoke(op, argsJSON, signal,
// onProgress) returns a Promise of the result's JSON, or an MCPError value
// for a call that cannot start.
func (a *app) invoke(args []jsbridge.Value) (any, error) {
	name, err := jsbridge.String(jsbridge.Arg(args, 0), "the operation")
	if err != nil {
		return nil, err
	}
	h, ok := a.ops[name]
	if !ok {
		return nil, mcperr.New(mcperr.InvalidArgument, "mcp: unknown operation %q", name)
	}
	var raw json.RawMessage
	if s := jsbridge.Arg(args, 1); !s.IsUndefined() {
		str, err := jsbridge.String(s, "arguments")
		if err != nil {
			return nil, err
		}
		raw = json.RawMessage(str)
	}
	c := jsCall{signal: jsbridge.Arg(args, 2), onProgress: jsbridge.Arg(args, 3)}
	if o, _ := jsapi.OpNamed(name); o.Sync {
		return encodeResult(h.run(context.Background(), raw, c))
	}
	ctx, cancel := context.WithCancelCause(context.Background())
	release, err := jsbridge.OnAbort(c.signal, func() { cancel(abortCause(c.signal)) })
	if err != nil {
		cancel(nil)
		return nil, err
	}
	return jsbridge.Promise(func() (any, error) {
		defer cancel(nil)
		defer release()
		return encodeResult(h.run(ctx, raw, c))
	}), nil
}

// abortCause is why an aborted signal ended its call: the tab went away
// (jsapi.GoneReason, a worker runtime's bye), which keeps the call's
// task, or the page's own abort (nil: context.Canceled).
func abortCause(signal jsbridge.Value) error {
	if r, err := signal.Get("reason"); err == nil {
		if s, err := jsbridge.String(r, "reason"); err == nil && s == jsapi.GoneReason {
			return mcpclient.ErrOwnerGone
		}
	}
	return nil
}

// encodeResult gives JavaScript a result as JSON text (undefined for none).
func encodeResult(v any, err error) (any, error) {
	if err != nil || v == nil {
		return nil, err
	}
	if r, ok := v.(json.RawMessage); ok {
		return string(r), nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, mcperr.Wrap(mcperr.Protocol, err, "mcp: cannot encode the result")
	}
	return string(b), nil
}

// withClient runs fn for the client of id, under a context that also ends
// when the client is closed: nothing outlives it, and a call it ends
// rejects "closed".
func (a *app) withClient(ctx context.Context, id string, fn func(context.Context, *clientEntry) (any, error)) (any, error) {
	e, err := a.entry(id)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	stop := context.AfterFunc(e.ctx, func() { cancel(context.Cause(e.ctx)) })
	defer stop()
	if e.use != nil {
		release, err := e.use(ctx)
		if err != nil {
			return nil, err
		}
		defer release()
	}
	v, err := fn(ctx, e)
	if err != nil && e.ctx.Err() != nil {
		return nil, mcperr.Wrap(mcperr.Closed, err, "mcp: the client was closed during the call")
	}
	return v, err
}

// clientOp adapts an operation that needs only a client.
func (a *app) clientOp(fn func(context.Context, *clientEntry) (any, error)) func(context.Context, jsapi.ClientRef, jsCall) (any, error) {
	return func(ctx context.Context, args jsapi.ClientRef, _ jsCall) (any, error) {
		return a.withClient(ctx, args.ID, fn)
	}
}

func (a *app) opNewClient(_ context.Context, args jsapi.NewClient, _ jsCall) (any, error) {
	var o jsapi.ClientOptions
	if err := jsapi.Decode("client()", args.Options, &o); err != nil {
		return nil, err
	}
	page, err := jsapi.PagePolicy(args.Policy)
	if err != nil {
		return nil, err
	}
	return nil, a.newClient(args.ID, args.URL, o, hostpolicy.Chain{page}, nil)
}

func session(c *mcpclient.Client) (any, error) {
	info := c.Session()
	if info == nil {
		return nil, mcperr.New(mcperr.Closed, "mcp: the session ended during connect")
	}
	return jsapi.Session{ServerInfo: info.ServerInfo, Capabilities: info.Capabilities, Instructions: info.Instructions, ProtocolVersion: info.ProtocolVersion}, nil
}

func (a *app) opConnect(ctx context.Context, args jsapi.Connect, _ jsCall) (any, error) {
	return a.withClient(ctx, args.ID, func(ctx context.Context, e *clientEntry) (any, error) {
		if err := e.c.Connect(ctx, a.connectOptions(e, args.Elicitation, args.Sampling)); err != nil {
			return nil, err
		}
		return session(e.c)
	})
}

func (a *app) opAuthorize(ctx context.Context, args jsapi.Authorize, _ jsCall) (any, error) {
	return a.withClient(ctx, args.ID, func(ctx context.Context, e *clientEntry) (any, error) {
		if args.Popup == "blocked" {
			return nil, e.c.PopupBlocked()
		}
		if err := e.c.Authorize(ctx, a.connectOptions(e, args.Elicitation, args.Sampling)); err != nil {
			return nil, err
		}
		return session(e.c)
	})
}

func (a *app) opClose(_ context.Context, args jsapi.CloseClient, _ jsCall) (any, error) {
	e, err := a.entry(args.ID)
	if err != nil {
		return nil, err
	}
	a.mu.Lock()
	delete(a.clients, args.ID)
	a.mu.Unlock()
	if args.Gone {
		// The page went away without abandoning its calls: the tasks
		// they follow are kept for the next page, not cancelled.
		e.cancel(mcpclient.ErrOwnerGone)
		return nil, e.c.Leave()
	}
	e.cancel(nil) // first end this client's calls and sign-in; they reject "closed"
	return nil, e.c.Close()
}

func (a *app) opReadResource(ctx context.Context, args jsapi.ReadResource, _ jsCall) (any, error) {
	return a.withClient(ctx, args.ID, func(ctx context.Context, e *clientEntry) (any, error) {
		return e.c.ReadResourceJSON(ctx, args.URI)
	})
}

func (a *app) opGetPrompt(ctx context.Context, args jsapi.GetPrompt, _ jsCall) (any, error) {
	return a.withClient(ctx, args.ID, func(ctx context.Context, e *clientEntry) (any, error) {
		return e.c.GetPrompt(ctx, args.Name, args.Arguments)
	})
}

func (a *app) opComplete(ctx context.Context, args jsapi.Complete, _ jsCall) (any, error) {
	return a.withClient(ctx, args.ID, func(ctx context.Context, e *clientEntry) (any, error) {
		ref := mcpclient.CompleteRef{Type: args.Ref.Type, Name: args.Ref.Name, URI: args.Ref.URI}
		return e.c.Complete(ctx, ref, args.Argument.Name, args.Argument.Value, args.Context)
	})
}

// opCallTool times the call out after timeoutMs, not counting the time the
// person answers the server's elicitations, as a catalog call.
func (a *app) opCallTool(ctx context.Context, args jsapi.CallTool, c jsCall) (any, error) {
	return a.toolCall(ctx, args.ID, args.TimeoutMs, c, func(ctx context.Context, e *clientEntry, progress func(*mcp.ProgressNotificationParams)) (any, error) {
		return e.c.CallTool(ctx, args.Name, args.Arguments, progress)
	})
}

// opResumeTask follows a kept task as opCallTool follows a call.
func (a *app) opResumeTask(ctx context.Context, args jsapi.ResumeTask, c jsCall) (any, error) {
	return a.toolCall(ctx, args.ID, args.TimeoutMs, c, func(ctx context.Context, e *clientEntry, progress func(*mcp.ProgressNotificationParams)) (any, error) {
		return e.c.ResumeTask(ctx, args.TaskID, progress)
	})
}

// ms is an option in milliseconds (nil: 0) as a duration.
func ms(v *float64) time.Duration {
	if v == nil {
		return 0
	}
	return time.Duration(*v * float64(time.Millisecond))
}

// progressTo forwards progress notifications to a page callback, as
// mcp.d.ts's Progress (the progress token is the client's own business).
func progressTo(fn jsbridge.Value) func(*mcp.ProgressNotificationParams) {
	if !jsbridge.IsFunction(fn) {
		return nil
	}
	return func(p *mcp.ProgressNotificationParams) {
		if b, err := json.Marshal(jsapi.Progress{Progress: p.Progress, Total: p.Total, Message: p.Message}); err == nil {
			_, _ = jsbridge.Call(fn, string(b))
		}
	}
}

// toolCall runs call for the client of id under timeoutMs (paused while
// the person answers), its progress reports going to the page.
func (a *app) toolCall(ctx context.Context, id string, timeoutMs *float64, c jsCall, call func(context.Context, *clientEntry, func(*mcp.ProgressNotificationParams)) (any, error)) (any, error) {
	if timeoutMs != nil {
		var cancel context.CancelFunc
		ctx, cancel = mcpclient.WithCallTimeout(ctx, ms(timeoutMs))
		defer cancel()
	}
	progress := progressTo(c.onProgress)
	return a.withClient(ctx, id, func(ctx context.Context, e *clientEntry) (any, error) { return call(ctx, e, progress) })
}

// opDeliver hands a callback URL to the sign-in waiting on its state: a
// live flow of this page, else a flow persisted before a full-page
// redirect. It never rejects, so a relay meant for another tab is
// harmless; the registry tells every client (and, through announce, every
// tab) what changed.
func (a *app) opDeliver(ctx context.Context, args jsapi.Deliver, _ jsCall) (any, error) {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	resource, live, err := a.registry.HandleCallback(ctx, oauth.PendingConfig{
		Store:        a.idb,
		HTTPClient:   a.http,
		Locker:       webLocks{host: a.host},
		ClientSecret: a.clientSecret,
		// The keys the handlers of storage "indexeddb" use: redirect mode
		// needs that storage, and the code is bound to the key (dpop_jkt).
		DPoPKeys: a.idb.DPoPKeys(),
	}, args.URL)
	r := jsapi.Delivered{Taken: live || resource != "", Resource: resource}
	if err != nil {
		me := mcpclient.AsError(err)
		r.Error = &jsapi.Error{Code: me.Code, Status: me.Status, RPCCode: me.RPCCode, Message: me.Message, Detail: me.Detail}
	}
	return r, nil
}

func (a *app) opApply(ctx context.Context, args jsapi.GrantChange, _ jsCall) (any, error) {
	// Another page's sign-in, sign-out or clearStorage may have deleted
	// or replaced DPoP keys: the next proofs read them again, before the
	// handlers take the grant that may be bound to a new key.
	a.idb.KeysChanged()
	a.registry.Apply(ctx, oauth.Change{Kind: oauth.ChangeKind(args.Kind), Resource: args.Resource})
	return nil, nil
}

// opStorageStatus opens the store if needed and says where it keeps the
// sign-ins.
func (a *app) opStorageStatus(context.Context, struct{}, jsCall) (any, error) {
	err := a.idb.Fallback()
	if err == nil {
		return jsapi.StorageStatus{Persistent: true}, nil
	}
	// The store's own sentence (why, and what to do), not the generic one
	// of a failed request: nothing failed, the sign-ins live in memory.
	msg := err.Error()
	var me *mcperr.Error
	if errors.As(err, &me) {
		msg = strings.TrimPrefix(me.Msg, "indexeddb: ")
	}
	return jsapi.StorageStatus{Error: &jsapi.Error{Code: mcperr.CodeOf(err, mcperr.Storage), Message: msg, Detail: err.Error()}}, nil
}

// opClear deletes everything stored for this origin; this page's clients
// and other tabs' drop the grants they hold and need a sign-in.
func (a *app) opClear(ctx context.Context, _ struct{}, _ jsCall) (any, error) {
	if err := a.idb.Clear(ctx); err != nil {
		return nil, err
	}
	a.memory.Clear()
	a.memKeys.Clear() // clients with storage "memory": their grants are gone too
	a.registry.Clear()
	return nil, nil
}
