//go:build js && wasm && !mcpwasm_client

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpwasm/mcpwasm/agent"
	"github.com/mcpwasm/mcpwasm/catalog"
	"github.com/mcpwasm/mcpwasm/hostpolicy"
	"github.com/mcpwasm/mcpwasm/jsapi"
	"github.com/mcpwasm/mcpwasm/jsbridge"
	"github.com/mcpwasm/mcpwasm/mcpclient"
	"github.com/mcpwasm/mcpwasm/mcperr"
)

// catalogEntry is one mcp.catalog() of the page: the catalog, the client
// of each server, and the agents made over it.
type catalogEntry struct {
	id  string
	cat *catalog.Catalog

	mu      sync.Mutex
	clients map[string]string // server id → client id ("<catalog id>/<server id>")
	agents  map[string]*agent.Agent
	checked map[string]jsapi.ClientOptions // a server's options, decoded before its client is made
	elicit  bool                           // the page set onElicitation: the servers may ask the user
	apps    bool                           // the page renders the servers' views (catalog option apps)
	policy  hostpolicy.Chain               // the page's policy, then the catalog's
	relay   relayDefault                   // for the servers whose entry names none
	webmcp  map[string]*webmcpServer       // server id → the page's own WebMCP tools (entry webmcp: true), or a view's own tools
}

// idleTimeout is catalog.Config.IdleTimeout for the option idleTimeoutMs:
// unset is the default, 0 never.
func idleTimeout(v *float64) time.Duration {
	if v != nil && *v == 0 {
		return -1
	}
	return ms(v)
}

func catalogTarget(id string) string { return jsapi.Target("catalog", id) }

// serverClient is the id of the client of server in catalog id: the page
// knows it without asking.
func serverClient(id, server string) string { return id + "/" + server }

func (a *app) catalogEntry(id string) (*catalogEntry, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	e, ok := a.catalogs[id]
	if !ok {
		return nil, mcperr.New(mcperr.Closed, "mcp: this catalog is closed; create a new one with mcp.catalog()")
	}
	return e, nil
}

// factory makes each server of catalog ce: a client of the page (its
// events reach both the page and the catalog) whose server's sampling
// requests go to the catalog's agent, when the host approves.
func (a *app) factory(ce *catalogEntry) catalog.Factory {
	return func(id string, sc catalog.ServerConfig, events func(mcpclient.Event)) (catalog.Server, error) {
		ce.mu.Lock()
		o, ok := ce.checked[id]
		delete(ce.checked, id)
		ce.mu.Unlock()
		if sc.WebMCP || sc.View {
			s := &webmcpServer{host: a.host, target: catalogTarget(ce.id), events: events, state: mcpclient.StateIdle}
			if sc.View {
				s.view = id
			}
			ce.mu.Lock()
			ce.webmcp[id] = s
			ce.mu.Unlock()
			return s, nil
		}
		if !ok {
			var err error
			if o, err = serverOptions(id, sc, ce.relay); err != nil {
				return nil, err
			}
		}
		o.Apps = o.Apps || ce.apps
		clientID := serverClient(ce.id, id)
		if err := a.newClient(clientID, sc.URL, o, ce.policy, events); err != nil {
			return nil, fmt.Errorf("server %q: %w", id, err)
		}
		e, err := a.entry(clientID)
		if err != nil {
			return nil, err
		}
		ce.mu.Lock()
		ce.clients[id] = clientID
		ce.mu.Unlock()
		// The page's own use of the client (a view's resources, a call
		// of its own) holds its session open and reopens it when idle.
		e.use = func(ctx context.Context) (func(), error) {
			ce.mu.Lock()
			cat := ce.cat
			ce.mu.Unlock()
			if cat == nil {
				return func() {}, nil
			}
			return cat.Use(ctx, id)
		}
		co := mcpclient.ConnectOptions{Sampling: a.sampling(ce, id)}
		if ce.elicit {
			co.Elicitation = func(ctx context.Context, p *mcp.ElicitParams) (*mcp.ElicitResult, error) {
				ce.mu.Lock()
				cat := ce.cat
				ce.mu.Unlock()
				if cat == nil {
					return nil, mcperr.New(mcperr.Closed, "mcp: the catalog is closed")
				}
				return cat.Elicit(ctx, id, p)
			}
		}
		return catalog.FromClient(e.c, co), nil
	}
}

// elicit asks the host's onElicitation of catalog id (host.catalogElicit)
// with the server's request and who asks; its answer is checked by the
// server's client (mcpclient) and go-sdk before the server gets it.
func (a *app) elicit(ctx context.Context, id string, req catalog.ElicitationRequest) (*mcp.ElicitResult, error) {
	params, err := json.Marshal(req.Params)
	if err != nil {
		return nil, err
	}
	who, err := json.Marshal(map[string]string{"serverId": req.ServerID, "elicitationId": req.ElicitationID})
	if err != nil {
		return nil, err
	}
	v, err := a.host.await(ctx, "catalogElicit", catalogTarget(id), string(params), string(who))
	if err != nil {
		return nil, err
	}
	s, err := jsbridge.String(v, "onElicitation result")
	if err != nil {
		return nil, err
	}
	var r mcp.ElicitResult
	if err := json.Unmarshal([]byte(s), &r); err != nil {
		return nil, mcperr.New(mcperr.InvalidArgument, "mcp: the catalog's onElicitation returned a value of the wrong shape: %v", err)
	}
	return &r, nil
}

// sampling serves a server's sampling/createMessage with the catalog's
// agent's model, when there is an agent and the host's approve says yes;
// else it is refused with the error servers know ("User rejected sampling
// request").
func (a *app) sampling(ce *catalogEntry, server string) func(context.Context, *mcp.CreateMessageParams) (*mcp.CreateMessageResult, error) {
	return func(ctx context.Context, p *mcp.CreateMessageParams) (*mcp.CreateMessageResult, error) {
		ce.mu.Lock()
		var ag *agent.Agent
		for _, x := range ce.agents {
			ag = x
			break
		}
		ce.mu.Unlock()
		if ag == nil {
			return nil, agent.ErrSamplingRefused
		}
		// Each sampling request is asked about on its own: "always" and
		// "server" allow this one.
		allow := func(ctx context.Context, p *mcp.CreateMessageParams) (bool, error) {
			ans, err := a.approve(ctx, ce.id, catalog.ApprovalRequest{ID: server, Tool: "sampling/createMessage", Name: "sampling/createMessage"})
			return ans != catalog.Refuse, err
		}
		return ag.SamplingHandler(allow)(ctx, p)
	}
}

// approve asks the host's approve function of catalog id: true, false,
// "always" or "server" (catalog.js passes nothing else).
func (a *app) approve(ctx context.Context, id string, req catalog.ApprovalRequest) (catalog.Answer, error) {
	b, err := json.Marshal(req)
	if err != nil {
		return catalog.Refuse, err
	}
	v, err := a.host.await(ctx, "approve", catalogTarget(id), string(b))
	if err != nil {
		return catalog.Refuse, err
	}
	if ok, err := v.Bool(); err == nil {
		if ok {
			return catalog.AllowOnce, nil
		}
		return catalog.Refuse, nil
	}
	switch s, _ := jsbridge.String(v, "approve()'s answer"); s {
	case "always":
		return catalog.AllowAlways, nil
	case "server":
		return catalog.AllowServer, nil
	}
	return catalog.Refuse, mcperr.New(mcperr.InvalidArgument, `mcp: approve() must resolve to true, false, "always" or "server"`)
}

func (a *app) opNewCatalog(_ context.Context, args jsapi.NewCatalog, _ jsCall) (any, error) {
	var o jsapi.CatalogOptions
	if err := jsapi.Decode("catalog()", args.Options, &o); err != nil {
		return nil, err
	}
	page, err := jsapi.PagePolicy(args.Policy)
	if err != nil {
		return nil, err
	}
	own, err := o.Policy.Policy("catalog()", "policy.", jsapi.CatalogPolicyOwner)
	if err != nil {
		return nil, err
	}
	policy := hostpolicy.Chain{page, own}
	raw := o.Servers
	if len(o.MCPServers) > 0 {
		raw = o.MCPServers
	}
	// Decode has checked that it is an object; each entry is read once.
	dflt := relayDefault{o.Relay, o.RelayMode}
	var entries map[string]json.RawMessage
	if len(raw) > 0 {
		if err := json.Unmarshal(raw, &entries); err != nil {
			return nil, mcperr.New(mcperr.InvalidArgument, "catalog(): servers must be an object")
		}
	}
	servers := make(map[string]catalog.ServerConfig, len(entries))
	checked := make(map[string]jsapi.ClientOptions, len(entries))
	var warnings []error
	for _, id := range slices.Sorted(maps.Keys(entries)) {
		sc, err := catalog.ParseEntry(id, entries[id])
		if err != nil {
			warnings = append(warnings, err) // left out, as ParseServers does
			continue
		}
		o, err := serverOptions(id, sc, dflt)
		if err != nil {
			return nil, err
		}
		if err := checkServerPolicy(policy, sc); err != nil {
			// Left out like an entry the catalog cannot use: the rest of a
			// pasted configuration still loads.
			warnings = append(warnings, fmt.Errorf("server %q: %w", id, err))
			continue
		}
		checked[id] = o
		servers[id] = sc
	}
	a.mu.Lock()
	_, used := a.catalogs[args.ID]
	a.mu.Unlock()
	if err := checkID("catalog", args.ID, used); err != nil {
		return nil, err
	}
	ce := &catalogEntry{id: args.ID, clients: map[string]string{}, agents: map[string]*agent.Agent{}, webmcp: map[string]*webmcpServer{}, checked: checked, elicit: o.OnElicitation, apps: o.Apps, policy: policy, relay: dflt}
	cfg := catalog.Config{
		Servers:           servers,
		MaxServers:        o.MaxServers,
		MaxToolsPerServer: o.MaxToolsPerServer,
		CallTimeout:       ms(o.CallTimeoutMs),
		TaskWait:          ms(o.TaskWaitMs),
		IdleTimeout:       idleTimeout(o.IdleTimeoutMs),
		ServerTools:       o.ServerTools,
		Skills:            o.Skills,
		ToolBudget:        o.ToolBudget,
		Factory:           a.factory(ce),
		OnEvent:           func(ev catalog.Event) { a.host.eventTo(catalogTarget(ce.id), ev.Type, ev.Data) },
	}
	if o.Breaker != nil {
		cfg.Breaker = catalog.BreakerConfig{Failures: o.Breaker.Failures, Cooldown: ms(o.Breaker.CooldownMs)}
	}
	if o.Approve {
		cfg.Approve = func(ctx context.Context, req catalog.ApprovalRequest) (catalog.Answer, error) {
			return a.approve(ctx, ce.id, req)
		}
	}
	if p := o.ApprovalPolicy; p != nil {
		cfg.ApprovalPolicy = catalog.ApprovalPolicy{ReadOnly: catalog.Level(p.ReadOnly), Destructive: catalog.Level(p.Destructive)}
		for id, l := range p.Servers {
			if cfg.ApprovalPolicy.Servers == nil {
				cfg.ApprovalPolicy.Servers = map[string]catalog.Level{}
			}
			cfg.ApprovalPolicy.Servers[id] = catalog.Level(l)
		}
	}
	if o.OnElicitation {
		cfg.Elicit = func(ctx context.Context, req catalog.ElicitationRequest) (*mcp.ElicitResult, error) {
			return a.elicit(ctx, ce.id, req)
		}
	}
	cat, err := catalog.New(cfg)
	if err != nil {
		a.dropClients(ce)
		return nil, err
	}
	ce.mu.Lock()
	ce.cat = cat
	ce.mu.Unlock()
	a.mu.Lock()
	a.catalogs[ce.id] = ce
	a.mu.Unlock()
	r := jsapi.CatalogCreated{Statuses: cat.Statuses()}
	for _, w := range warnings {
		r.Warnings = append(r.Warnings, w.Error())
	}
	return r, nil
}

// serverOptions decodes and checks a catalog server's client options,
// naming the server (as web/rules.js does).
func serverOptions(id string, sc catalog.ServerConfig, dflt relayDefault) (jsapi.ClientOptions, error) {
	var o jsapi.ClientOptions
	what := fmt.Sprintf("catalog: server %q", id)
	if err := jsapi.Decode(what, sc.Client, &o); err != nil {
		return o, err
	}
	if o.Relay != "" {
		// An entry may come from a pasted configuration: only the page's
		// code names a relay on another origin.
		return o, jsapi.CheckEntryRelay(what, o.Relay, pageOrigin())
	}
	o.Relay, o.RelayMode = dflt.relay, dflt.mode
	return o, nil
}

// relayDefault is a catalog's relay for the servers whose entry names none.
type relayDefault struct{ relay, mode string }

// pageOrigin is the page's origin (a worker runs on its page's origin), or
// "" when it cannot be read.
func pageOrigin() string {
	loc, err := jsbridge.Global().Get("location")
	if err != nil {
		return ""
	}
	o, err := loc.Get("origin")
	if err != nil {
		return ""
	}
	s, _ := jsbridge.String(o, "location.origin")
	return s
}

// dropClients forgets the page clients of a catalog's servers (the catalog
// closed them).
func (a *app) dropClients(ce *catalogEntry, only ...string) {
	ce.mu.Lock()
	var ids []string
	for server, id := range ce.clients {
		if len(only) == 0 || server == only[0] {
			ids = append(ids, id)
			delete(ce.clients, server)
		}
	}
	ce.mu.Unlock()
	a.mu.Lock()
	for _, id := range ids {
		if e := a.clients[id]; e != nil {
			e.cancel(nil)
			delete(a.clients, id)
		}
	}
	a.mu.Unlock()
}

// withCatalog runs fn for catalog id; an error other than an abort is
// coded as fn gave it.
func (a *app) withCatalog(id string, fn func(*catalogEntry) (any, error)) (any, error) {
	ce, err := a.catalogEntry(id)
	if err != nil {
		return nil, err
	}
	return fn(ce)
}

func (a *app) opCatalogAdd(_ context.Context, args jsapi.CatalogAdd, _ jsCall) (any, error) {
	return a.withCatalog(args.ID, func(ce *catalogEntry) (any, error) {
		sc, err := catalog.ParseEntry(args.Server, args.Config)
		if err != nil {
			return nil, err
		}
		if err := checkServerPolicy(ce.policy, sc); err != nil {
			return nil, err
		}
		o, err := serverOptions(args.Server, sc, ce.relay)
		if err != nil {
			return nil, err
		}
		ce.mu.Lock()
		ce.checked[args.Server] = o
		ce.mu.Unlock()
		if err := ce.cat.Add(args.Server, sc); err != nil {
			return nil, err
		}
		return nil, nil
	})
}

func (a *app) opCatalogRemove(_ context.Context, args jsapi.CatalogServer, _ jsCall) (any, error) {
	return a.withCatalog(args.ID, func(ce *catalogEntry) (any, error) {
		err := ce.cat.Remove(args.Server)
		a.dropClients(ce, args.Server)
		ce.mu.Lock()
		delete(ce.webmcp, args.Server)
		ce.mu.Unlock()
		return nil, err
	})
}

func (a *app) opCatalogEnable(_ context.Context, args jsapi.CatalogServer, _ jsCall) (any, error) {
	return a.withCatalog(args.ID, func(ce *catalogEntry) (any, error) { return nil, ce.cat.Enable(args.Server) })
}

func (a *app) opCatalogDisable(_ context.Context, args jsapi.CatalogServer, _ jsCall) (any, error) {
	return a.withCatalog(args.ID, func(ce *catalogEntry) (any, error) { return nil, ce.cat.Disable(args.Server) })
}

func (a *app) opCatalogAuthorize(ctx context.Context, args jsapi.CatalogAuthorize, _ jsCall) (any, error) {
	return a.withCatalog(args.ID, func(ce *catalogEntry) (any, error) {
		if args.Popup == "blocked" {
			ce.mu.Lock()
			cid, ok := ce.clients[args.Server]
			ce.mu.Unlock()
			if !ok {
				return nil, mcperr.New(mcperr.InvalidArgument, "mcp: the catalog has no server %q", args.Server)
			}
			e, err := a.entry(cid)
			if err != nil {
				return nil, err
			}
			return nil, e.c.PopupBlocked()
		}
		return nil, ce.cat.Authorize(ctx, args.Server)
	})
}

func (a *app) opCatalogTools(ctx context.Context, args jsapi.CatalogRef, _ jsCall) (any, error) {
	return a.withCatalog(args.ID, func(ce *catalogEntry) (any, error) { return ce.cat.Tools(ctx) })
}

func (a *app) opCatalogToolsFor(ctx context.Context, args jsapi.CatalogFormat, _ jsCall) (any, error) {
	return a.withCatalog(args.ID, func(ce *catalogEntry) (any, error) {
		return ce.cat.ToolsForConversation(ctx, catalog.Format(args.Format), args.Used)
	})
}

func (a *app) opCatalogCallTool(ctx context.Context, args jsapi.CatalogCallTool, c jsCall) (any, error) {
	return a.withCatalog(args.ID, func(ce *catalogEntry) (any, error) {
		return ce.cat.CallTool(ctx, args.Name, args.Arguments, catalog.CallOptions{
			Timeout:    ms(args.TimeoutMs),
			OnProgress: progressTo(c.onProgress),
		})
	})
}

func (a *app) opCatalogViewTools(ctx context.Context, args jsapi.CatalogServer, _ jsCall) (any, error) {
	return a.withCatalog(args.ID, func(ce *catalogEntry) (any, error) { return ce.cat.ViewTools(ctx, args.Server) })
}

func (a *app) opCatalogViewCall(ctx context.Context, args jsapi.CatalogViewCall, _ jsCall) (any, error) {
	return a.withCatalog(args.ID, func(ce *catalogEntry) (any, error) {
		return ce.cat.ViewCall(ctx, args.Server, args.Name, args.Arguments, catalog.CallOptions{})
	})
}

func (a *app) opCatalogToolCalls(ctx context.Context, args jsapi.CatalogToolCalls, _ jsCall) (any, error) {
	return a.withCatalog(args.ID, func(ce *catalogEntry) (any, error) {
		return ce.cat.HandleToolCalls(ctx, catalog.Format(args.Format), args.Calls, catalog.CallOptions{})
	})
}

func (a *app) opCatalogClose(_ context.Context, args jsapi.CloseCatalog, _ jsCall) (any, error) {
	ce, err := a.catalogEntry(args.ID)
	if err != nil {
		return nil, nil // closing twice is fine
	}
	a.mu.Lock()
	delete(a.catalogs, args.ID)
	a.mu.Unlock()
	if args.Gone {
		// The page went away: the tasks its calls started are kept for
		// the next page, and so are the sessions they run in.
		err = ce.cat.Leave()
	} else {
		err = ce.cat.Close()
	}
	a.dropClients(ce)
	return nil, err
}

// checkServerPolicy applies the host policy to a catalog entry. It governs
// remote servers: a WebMCP entry (the page's own tools, no URL) passes.
func checkServerPolicy(p hostpolicy.Chain, sc catalog.ServerConfig) error {
	if sc.WebMCP {
		return nil
	}
	return p.CheckServer(sc.URL)
}
