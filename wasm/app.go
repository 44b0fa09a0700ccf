//go:build js && wasm

package main

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpwasm/mcpwasm/internal/httpguard"
	"github.com/mcpwasm/mcpwasm/jsbridge"
	"github.com/mcpwasm/mcpwasm/mcpclient"
	"github.com/mcpwasm/mcpwasm/mcperr"
	"github.com/mcpwasm/mcpwasm/oauth"
)

// app holds the page's clients, keyed by the id the loader knows them by,
// and what they share: the flow registry (one callback page serves every
// server), the stores and the loader's page-level callbacks.
type app struct {
	hints    *mcpclient.Hints
	http     *http.Client
	registry *oauth.Registry
	stores   stores
	host     jsbridge.Value // lock(name), broadcast(json)

	mu      sync.Mutex
	nextID  int
	clients map[int]*clientEntry
}

type clientEntry struct {
	c      *mcpclient.Client
	auth   *oauth.Handler // nil when the client cannot sign in; noAuth says why
	noAuth error
	host   jsbridge.Value // the loader's per-client callbacks

	clientID, clientSecret string // a pre-registered client, for redirect returns

	// ctx is the parent of every call of this client; close() cancels it,
	// so nothing (a sign-in, a tool call) outlives the client.
	ctx    context.Context
	cancel context.CancelFunc
}

func newApp(host jsbridge.Value) *app {
	return &app{
		hints: loadHints(host),
		// fetch under GOOS=js, behind the guard: redirects stay on their
		// origin and no header value can throw inside fetch.
		http:     httpguard.NewClient(&httpguard.Transport{}),
		registry: oauth.NewRegistry(),
		host:     host,
		clients:  make(map[int]*clientEntry),
	}
}

// loadHints restores what earlier pages of this origin learnt about each
// server (transport, protocol version; no secrets), through the loader's
// hints string and saveHints(json) (localStorage), so a reload skips the
// probes.
func loadHints(host jsbridge.Value) *mcpclient.Hints {
	h := &mcpclient.Hints{}
	if v, err := host.Get("hints"); err == nil {
		if s, err := jsbridge.String(v, "hints"); err == nil {
			h.Load([]byte(s))
		}
	}
	if fn, err := host.Get("saveHints"); err == nil && jsbridge.IsFunction(fn) {
		h.Persist = func(b []byte) { _, _ = jsbridge.Call(fn, string(b)) }
	}
	return h
}

// exports builds the object handed to the loader:
//
//	version: string
//	newClient(url, optionsJSON, host) -> id | MCPError
//	call(id, method, argsJSON, signal, onProgress) -> Promise<string|undefined>
//	deliver(callbackURL) -> Promise<string>  (a login result from any courier; JSON {taken, resource, error})
//	clearStorage() -> Promise<void>
//
// host has emit(type, detailJSON), accessToken() -> Promise<string>,
// elicit(paramsJSON) -> Promise<string>, sample(paramsJSON) -> Promise<string>,
// openAuth(url) -> Promise<void>, closeAuth().
func (a *app) exports() (jsbridge.Value, error) {
	props := map[string]any{"version": version}
	for name, fn := range map[string]func([]jsbridge.Value) (any, error){
		"newClient":    a.newClient,
		"call":         a.call,
		"deliver":      a.deliver,
		"clearStorage": a.clearStorage,
	} {
		f, err := jsbridge.Func(fn)
		if err != nil {
			return jsbridge.Undefined(), err
		}
		props[name] = f
	}
	return jsbridge.NewObject(props)
}

// deliver hands a callback URL to the sign-in waiting on its state: a live
// flow of this page, else a flow persisted before a full-page redirect. It
// resolves {taken, resource, error}; it never rejects, so a relay meant for
// another tab is harmless.
func (a *app) deliver(args []jsbridge.Value) (any, error) {
	u, err := jsbridge.String(jsbridge.Arg(args, 0), "the callback URL")
	if err != nil {
		return nil, err
	}
	return jsbridge.Promise(func() (any, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		store, _ := a.stores.get(ctx, "indexeddb")
		resource, live, err := a.registry.HandleCallback(ctx, oauth.PendingConfig{
			Store:        store,
			HTTPClient:   a.http,
			Locker:       webLocks{host: a.host},
			ClientSecret: a.clientSecret,
		}, u)
		type result struct {
			Taken    bool             `json:"taken"`
			Resource string           `json:"resource,omitempty"`
			Error    *mcpclient.Error `json:"error,omitempty"`
		}
		r := result{Taken: live || resource != "", Resource: resource}
		if err != nil {
			r.Error = mcpclient.AsError(err)
		}
		if !live && resource != "" {
			if err == nil {
				// Finished from storage (a redirect return): the other
				// tabs hear of the new grant as they do of any other.
				a.broadcast("grant", resource)
			}
			for _, e := range a.entriesFor(resource) {
				switch {
				case err == nil:
					_, _ = e.auth.ReloadGrant(ctx)
				case errors.Is(err, oauth.ErrDeclined):
					e.auth.Decline(err) // no sign-in again until authorize()
				default:
					e.c.SetState(mcpclient.StateFailed, err)
				}
			}
		}
		b, _ := json.Marshal(r)
		return string(b), nil
	}), nil
}

// entriesFor returns the clients with an OAuth handler for resource.
func (a *app) entriesFor(resource string) []*clientEntry {
	a.mu.Lock()
	defer a.mu.Unlock()
	var out []*clientEntry
	for _, e := range a.clients {
		if e.auth != nil && e.auth.Resource() == resource {
			out = append(out, e)
		}
	}
	return out
}

// clientSecret finds the secret of a pre-registered confidential client
// among this page's clients, for finishing a redirect-mode flow. The page
// configures secrets per client ID, not per authorization server: when two
// clients give the same ID different secrets, it sends none rather than risk
// sending one server's secret to another.
func (a *app) clientSecret(_, clientID string) string {
	a.mu.Lock()
	defer a.mu.Unlock()
	secret := ""
	for _, e := range a.clients {
		if e.clientID != clientID || e.clientSecret == "" {
			continue
		}
		if secret != "" && secret != e.clientSecret {
			return ""
		}
		secret = e.clientSecret
	}
	return secret
}

// clearStorage deletes everything stored for this origin; this page's
// clients and other tabs' drop the grants they hold and need a sign-in.
func (a *app) clearStorage([]jsbridge.Value) (any, error) {
	return jsbridge.Promise(func() (any, error) {
		ctx := context.Background()
		if err := a.stores.clear(ctx); err != nil {
			return nil, err
		}
		a.mu.Lock()
		entries := make([]*clientEntry, 0, len(a.clients))
		for _, e := range a.clients {
			entries = append(entries, e)
		}
		a.mu.Unlock()
		for _, e := range entries {
			if err := a.peer(ctx, e, "logout"); err != nil {
				return nil, err
			}
		}
		a.broadcast("clear", "")
		return nil, nil
	}), nil
}

// clientOptions is the JSON the loader sends to newClient.
type clientOptions struct {
	ClientName     string            `json:"clientName"`
	Headers        map[string]string `json:"headers"`
	HasAccessToken bool              `json:"hasAccessToken"`
	Transport      string            `json:"transport"`
	authOptions
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
	emit := func(typ string, data any) {
		detail, err := json.Marshal(data)
		if err != nil {
			return
		}
		if fn, err := host.Get("emit"); err == nil {
			_, _ = jsbridge.Call(fn, typ, string(detail))
		}
	}
	opts := mcpclient.Options{
		ClientName:    o.ClientName,
		ClientVersion: version,
		Headers:       o.Headers,
		Transport:     mcpclient.Transport(o.Transport),
		Hints:         a.hints,
		OnEvent:       func(e mcpclient.Event) { emit(e.Type, e.Data) },
	}
	entry := &clientEntry{host: host, clientID: o.ClientID, clientSecret: o.ClientSecret}
	entry.ctx, entry.cancel = context.WithCancel(context.Background())
	// A server the page supplies tokens for, or one whose URL OAuth cannot
	// serve (plain http off loopback, a query), is used without sign-in;
	// authorize() then says why.
	if o.HasAccessToken {
		entry.noAuth = mcperr.New(mcperr.InvalidArgument, "mcp: this client uses the page's accessToken(); there is nothing to sign in to")
	} else if err := oauth.CheckResourceURL(url); err != nil {
		entry.noAuth = err
	} else {
		h, err := a.newAuth(url, o.ClientName, o.authOptions, host, func() *mcpclient.Client { return entry.c }, emit)
		if err != nil {
			return nil, err
		}
		entry.auth = h
		opts.OAuthHandler = h
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
	entry.c = c
	a.mu.Lock()
	defer a.mu.Unlock()
	a.nextID++
	a.clients[a.nextID] = entry
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
	Popup       string            `json:"popup"` // authorize: "open", "blocked" or "redirect"
	Kind        string            `json:"kind"`  // peer: "grant" or "logout"
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
	ctx, cancel := context.WithCancel(e.ctx)
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
		if err != nil && method != "close" && e.ctx.Err() != nil {
			return nil, mcperr.Wrap(mcperr.Closed, err, "mcp: the client was closed during the call")
		}
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
	case "connect", "authorize":
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
		if method == "authorize" {
			if err := a.authorize(ctx, e, ca.Popup); err != nil {
				return nil, err
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
	case "logout":
		if e.auth == nil {
			return nil, e.noAuth
		}
		err := e.auth.Logout(ctx)
		c.Disconnect(mcpclient.StateNeedsAuth, nil)
		a.broadcast("logout", e.auth.Resource())
		return nil, err
	case "peer":
		return nil, a.peer(ctx, e, ca.Kind)
	case "close":
		a.mu.Lock()
		delete(a.clients, id)
		a.mu.Unlock()
		e.cancel() // first end this client's calls and sign-in; they reject "closed"
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

// authorize runs the user-gesture login (JSAPI authorize()); popup says
// whether the loader managed to open the login window in the gesture.
func (a *app) authorize(ctx context.Context, e *clientEntry, popup string) error {
	if e.auth == nil {
		return e.noAuth
	}
	if popup == "blocked" {
		err := oauth.ErrPopupBlocked
		e.c.SetState(mcpclient.StateNeedsAuth, err)
		return err
	}
	return e.auth.Login(ctx)
}

// peer reacts to another tab's grant change for this client's server: the
// grant is read again from storage (a new grant lets a client waiting for a
// login connect without a popup); a logout ends this tab's session too.
func (a *app) peer(ctx context.Context, e *clientEntry, kind string) error {
	if e.auth == nil {
		return nil
	}
	if _, err := e.auth.ReloadGrant(ctx); err != nil {
		return err
	}
	switch kind {
	case "grant":
		// The loader reconnects a client that waited for a login, with its
		// handlers.
	case "logout":
		if s := e.c.State(); s != mcpclient.StateClosed && s != mcpclient.StateIdle {
			e.c.Disconnect(mcpclient.StateNeedsAuth, nil)
		}
	}
	return nil
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
