//go:build js && wasm

package main

import (
	"context"
	"encoding/json"
	"net/http"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpwasm/mcpwasm/jsbridge"
	"github.com/mcpwasm/mcpwasm/mcpclient"
	"github.com/mcpwasm/mcpwasm/mcperr"
)

// app holds the page's clients, keyed by the id the loader knows them by.
type app struct {
	hints *mcpclient.Hints
	http  *http.Client

	mu      sync.Mutex
	nextID  int
	clients map[int]*clientEntry
}

type clientEntry struct {
	c    *mcpclient.Client
	host jsbridge.Value // the loader's per-client callbacks
}

func newApp() *app {
	return &app{
		hints:   &mcpclient.Hints{},
		http:    &http.Client{Transport: http.DefaultTransport}, // fetch under GOOS=js
		clients: make(map[int]*clientEntry),
	}
}

// exports builds the object handed to the loader:
//
//	version: string
//	newClient(url, optionsJSON, host) -> id | MCPError
//	call(id, method, argsJSON, signal, onProgress) -> Promise<string|undefined>
//
// host has emit(type, detailJSON), accessToken() -> Promise<string>,
// elicit(paramsJSON) -> Promise<string>, sample(paramsJSON) -> Promise<string>.
func (a *app) exports() (jsbridge.Value, error) {
	newClient, err := jsbridge.Func(a.newClient)
	if err != nil {
		return jsbridge.Undefined(), err
	}
	call, err := jsbridge.Func(a.call)
	if err != nil {
		return jsbridge.Undefined(), err
	}
	return jsbridge.NewObject(map[string]any{
		"version":   version,
		"newClient": newClient,
		"call":      call,
	})
}

// clientOptions is the JSON the loader sends to newClient.
type clientOptions struct {
	ClientName     string            `json:"clientName"`
	Headers        map[string]string `json:"headers"`
	HasAccessToken bool              `json:"hasAccessToken"`
	Transport      string            `json:"transport"`
}

func (a *app) newClient(args []jsbridge.Value) (any, error) {
	url, err := jsbridge.String(jsbridge.Arg(args, 0), "the server URL")
	if err != nil {
		return nil, err
	}
	optsJSON, err := jsbridge.String(jsbridge.Arg(args, 1), "options")
	if err != nil {
		return nil, err
	}
	host := jsbridge.Arg(args, 2)
	var o clientOptions
	if err := json.Unmarshal([]byte(optsJSON), &o); err != nil {
		return nil, mcperr.New(mcperr.InvalidArgument, "mcp: bad client options: %v", err)
	}
	opts := mcpclient.Options{
		ClientName:    o.ClientName,
		ClientVersion: version,
		HTTPClient:    a.http,
		Headers:       o.Headers,
		Transport:     mcpclient.Transport(o.Transport),
		Hints:         a.hints,
		OnEvent: func(e mcpclient.Event) {
			detail, err := json.Marshal(e.Data)
			if err != nil {
				return
			}
			if emit, err := host.Get("emit"); err == nil {
				_, _ = jsbridge.Call(emit, e.Type, string(detail))
			}
		},
	}
	if o.HasAccessToken {
		opts.AccessToken = func(ctx context.Context) (string, error) {
			v, err := hostCall(ctx, host, "accessToken")
			if err != nil {
				return "", err
			}
			return jsbridge.String(v, "accessToken() result")
		}
	}
	c, err := mcpclient.New(url, opts)
	if err != nil {
		return nil, err
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	a.nextID++
	a.clients[a.nextID] = &clientEntry{c: c, host: host}
	return a.nextID, nil
}

// hostCall calls host[name](args...) and awaits the Promise it returns.
func hostCall(ctx context.Context, host jsbridge.Value, name string, args ...any) (jsbridge.Value, error) {
	fn, err := host.Get(name)
	if err != nil || !jsbridge.IsFunction(fn) {
		return jsbridge.Undefined(), mcperr.New(mcperr.Protocol, "mcp: loader callback %s is missing", name)
	}
	p, err := jsbridge.Call(fn, args...)
	if err != nil {
		return jsbridge.Undefined(), err
	}
	return jsbridge.Await(ctx, p)
}

func (a *app) entry(id int) (*clientEntry, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	e, ok := a.clients[id]
	if !ok {
		return nil, mcperr.New(mcperr.Closed, "mcp: this client is closed; create a new one with mcp.client()")
	}
	return e, nil
}

// callArgs is the union of the JSON arguments of every method.
type callArgs struct {
	Name        string            `json:"name"`
	Arguments   json.RawMessage   `json:"arguments"`
	PromptArgs  map[string]string `json:"promptArguments"`
	URI         string            `json:"uri"`
	TimeoutMs   float64           `json:"timeoutMs"`
	Elicitation bool              `json:"elicitation"`
	Sampling    bool              `json:"sampling"`
}

func (a *app) call(args []jsbridge.Value) (any, error) {
	idv := jsbridge.Arg(args, 0)
	id, err := idv.Int()
	if err != nil {
		return nil, mcperr.New(mcperr.InvalidArgument, "mcp: bad client id")
	}
	method, err := jsbridge.String(jsbridge.Arg(args, 1), "method")
	if err != nil {
		return nil, err
	}
	var ca callArgs
	if s := jsbridge.Arg(args, 2); !s.IsUndefined() {
		raw, err := jsbridge.String(s, "arguments")
		if err != nil {
			return nil, err
		}
		if err := json.Unmarshal([]byte(raw), &ca); err != nil {
			return nil, mcperr.New(mcperr.InvalidArgument, "mcp: bad arguments for %s: %v", method, err)
		}
	}
	if ca.TimeoutMs < 0 {
		return nil, mcperr.New(mcperr.InvalidArgument, "mcp: timeoutMs must be a positive number")
	}
	signal, onProgress := jsbridge.Arg(args, 3), jsbridge.Arg(args, 4)
	e, err := a.entry(id)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	release, err := jsbridge.OnAbort(signal, cancel)
	if err != nil {
		cancel()
		return nil, err
	}
	if ca.TimeoutMs > 0 {
		var cancelT context.CancelFunc
		ctx, cancelT = context.WithTimeout(ctx, time.Duration(ca.TimeoutMs*float64(time.Millisecond)))
		prev := cancel
		cancel = func() { cancelT(); prev() }
	}
	return jsbridge.Promise(func() (any, error) {
		defer cancel()
		defer release()
		v, err := a.run(ctx, id, e, method, ca, onProgress)
		if err != nil || v == nil {
			return nil, err
		}
		b, err := json.Marshal(v)
		if err != nil {
			return nil, mcperr.Wrap(mcperr.Protocol, err, "mcp: cannot encode the result")
		}
		return string(b), nil
	}), nil
}

// connectResult is what connect resolves with.
type connectResult struct {
	ServerInfo      *mcp.Implementation     `json:"serverInfo"`
	Capabilities    *mcp.ServerCapabilities `json:"capabilities"`
	Instructions    string                  `json:"instructions"`
	ProtocolVersion string                  `json:"protocolVersion"`
}

func (a *app) run(ctx context.Context, id int, e *clientEntry, method string, ca callArgs, onProgress jsbridge.Value) (any, error) {
	c := e.c
	switch method {
	case "connect":
		var co mcpclient.ConnectOptions
		if ca.Elicitation {
			co.Elicitation = func(ctx context.Context, p *mcp.ElicitParams) (*mcp.ElicitResult, error) {
				var r mcp.ElicitResult
				return &r, a.handler(ctx, e.host, "elicit", p, &r)
			}
		}
		if ca.Sampling {
			co.Sampling = func(ctx context.Context, p *mcp.CreateMessageParams) (*mcp.CreateMessageResult, error) {
				var r mcp.CreateMessageResult
				return &r, a.handler(ctx, e.host, "sample", p, &r)
			}
		}
		if err := c.Connect(ctx, co); err != nil {
			return nil, err
		}
		ir := c.InitializeResult()
		if ir == nil {
			return nil, mcperr.New(mcperr.Closed, "mcp: the session ended during connect")
		}
		return connectResult{ir.ServerInfo, ir.Capabilities, ir.Instructions, ir.ProtocolVersion}, nil
	case "close":
		a.mu.Lock()
		delete(a.clients, id)
		a.mu.Unlock()
		return nil, c.Close()
	case "listTools":
		return c.ListTools(ctx)
	case "listResources":
		return c.ListResources(ctx)
	case "listResourceTemplates":
		return c.ListResourceTemplates(ctx)
	case "listPrompts":
		return c.ListPrompts(ctx)
	case "readResource":
		return c.ReadResource(ctx, ca.URI)
	case "getPrompt":
		return c.GetPrompt(ctx, ca.Name, ca.PromptArgs)
	case "ping":
		return nil, c.Ping(ctx)
	case "callTool":
		var progress func(*mcp.ProgressNotificationParams)
		if jsbridge.IsFunction(onProgress) {
			progress = func(p *mcp.ProgressNotificationParams) {
				if b, err := json.Marshal(p); err == nil {
					_, _ = jsbridge.Call(onProgress, string(b))
				}
			}
		}
		return c.CallTool(ctx, ca.Name, ca.Arguments, progress)
	}
	return nil, mcperr.New(mcperr.InvalidArgument, "mcp: unknown method %q", method)
}

// handler forwards a server-to-client request to the page's handler through
// the loader and decodes its answer; a throwing handler becomes an error the
// server receives, never a hang.
func (a *app) handler(ctx context.Context, host jsbridge.Value, name string, params, result any) error {
	b, err := json.Marshal(params)
	if err != nil {
		return err
	}
	v, err := hostCall(ctx, host, name, string(b))
	if err != nil {
		return err
	}
	s, err := jsbridge.String(v, name+" result")
	if err != nil {
		return err
	}
	if err := json.Unmarshal([]byte(s), result); err != nil {
		return mcperr.New(mcperr.InvalidArgument, "mcp: the %s handler returned a value of the wrong shape: %v", name, err)
	}
	return nil
}
