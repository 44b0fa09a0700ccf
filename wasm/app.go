//go:build js && wasm

package main

import (
	"context"
	"encoding/json"
	"net/http"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpwasm/mcpwasm/hostpolicy"
	"github.com/mcpwasm/mcpwasm/internal/httpguard"
	"github.com/mcpwasm/mcpwasm/jsapi"
	"github.com/mcpwasm/mcpwasm/jsbridge"
	"github.com/mcpwasm/mcpwasm/jsbridge/jsfetch"
	"github.com/mcpwasm/mcpwasm/mcpclient"
	"github.com/mcpwasm/mcpwasm/mcperr"
	"github.com/mcpwasm/mcpwasm/oauth"
	"github.com/mcpwasm/mcpwasm/relay"
	"github.com/mcpwasm/mcpwasm/storage/indexeddb"
)

// dbName is the IndexedDB database of this origin's grants.
const dbName = "mcpwasm"

// app is the page's runtime: its clients, keyed by the id mcp.js knows
// them by, and what they share: the flow registry (one callback page
// serves every server, and every grant change goes through it), the
// stores, the hints and the host.
type app struct {
	host     host
	ops      map[string]handler // jsapi.Ops' handlers, built once
	hints    *mcpclient.Hints
	http     *http.Client
	registry *oauth.Registry
	idb      *indexeddb.Store

	// relayRoutes is what the relay option's fallback learnt per origin,
	// for the runtime's life (every client with a relay shares it).
	relayRoutes *relay.Routes

	memory   *oauth.MemoryStore        // storage: "memory"
	memKeys  *indexeddb.MemoryDPoPKeys // the DPoP keys of storage "memory"
	tasks    *mcpclient.TaskBook       // the tasks clients keep, in IndexedDB
	memTasks *mcpclient.TaskBook       // those of clients with storage "memory"

	// The page's objects by the ids it chose.
	mu       sync.Mutex
	clients  map[string]*clientEntry
	features // the catalog's and the agent's
}

type clientEntry struct {
	id   string
	c    *mcpclient.Client
	opts jsapi.ClientOptions
	// ctx is the parent of every call of this client; close() cancels it,
	// so nothing (a sign-in, a tool call) outlives the client.
	ctx    context.Context
	cancel context.CancelCauseFunc
	// use, for a catalog's server, holds the session open while the page
	// uses the client directly (catalog.Catalog.Use); nil otherwise.
	use func(context.Context) (release func(), err error)
}

func newApp(hv jsbridge.Value, hintsJSON string) *app {
	a := &app{
		host: host{hv},
		// fetch (jsfetch: net/http's fetch path with fewer JavaScript
		// values per request), behind the guard: redirects stay on their
		// origin and no header value can throw inside fetch.
		http:        httpguard.NewClient(&httpguard.Transport{Base: baseTransport()}),
		registry:    oauth.NewRegistry(),
		relayRoutes: &relay.Routes{},
		memory:      oauth.NewMemoryStore(),
		memKeys:     indexeddb.NewMemoryDPoPKeys(),
		clients:     make(map[string]*clientEntry),
		features:    newFeatures(),
	}
	a.ops = a.handlers()
	a.hints = &mcpclient.Hints{Persist: func(b []byte) { a.host.call("saveHints", string(b)) }}
	a.hints.Load([]byte(hintsJSON))
	a.idb = indexeddb.New(dbName, a.storageFallback)
	a.tasks, a.memTasks = &mcpclient.TaskBook{Store: a.idb}, &mcpclient.TaskBook{}
	a.registry.Announce = func(c oauth.Change) {
		b, _ := json.Marshal(c)
		a.host.call("announce", string(b))
	}
	return a
}

// baseTransport is what sends every request of the module: jsfetch where
// there is a fetch, else net/http's transport. A benchmark build with the
// tag nethttp_transport sends through net/http's own fetch path instead,
// to compare the two.
func baseTransport() http.RoundTripper {
	if !netHTTPTransport && jsfetch.Available() {
		return &jsfetch.Transport{}
	}
	return http.DefaultTransport
}

// storageFallback tells every client that keeps its sign-ins in IndexedDB
// that they live in memory instead.
func (a *app) storageFallback(err error) {
	for _, e := range a.entries() {
		if e.opts.Storage != "memory" {
			a.host.event(e.id, "storagefallback", map[string]string{"reason": err.Error()})
		}
	}
}

func (a *app) entries() []*clientEntry {
	a.mu.Lock()
	defer a.mu.Unlock()
	out := make([]*clientEntry, 0, len(a.clients))
	for _, e := range a.clients {
		out = append(out, e)
	}
	return out
}

func (a *app) entry(id string) (*clientEntry, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	e, ok := a.clients[id]
	if !ok {
		return nil, mcperr.New(mcperr.Closed, "mcp: this client is closed; create a new one with mcp.client()")
	}
	return e, nil
}

// store returns the store of kind ("indexeddb" or "memory").
func (a *app) store(kind string) oauth.Store {
	if kind == "memory" {
		return a.memory
	}
	return a.idb
}

// taskBook is where a client of that storage keeps its tasks.
func (a *app) taskBook(kind string) *mcpclient.TaskBook {
	if kind == "memory" {
		return a.memTasks
	}
	return a.tasks
}

// newClient makes a client from the options mcp.js sent (decoded and
// checked); its events go to the page, and to also when set (a catalog's
// server).
func (a *app) newClient(id, url string, o jsapi.ClientOptions, pol hostpolicy.Chain, also func(mcpclient.Event)) error {
	// Refused here, before the client exists: nothing is sent to a server
	// the page's (or its catalog's) policy does not list.
	if err := pol.CheckServer(url); err != nil {
		return err
	}
	a.mu.Lock()
	_, used := a.clients[id]
	a.mu.Unlock()
	if err := checkID("client", id, used); err != nil {
		return err
	}
	// The relay is the lowest layer: below the credential guard and the
	// DPoP proofs, which keep seeing the server's own URL.
	base, authHTTP := baseTransport(), a.http
	if o.Relay != "" {
		if err := relay.CheckURL(o.Relay); err != nil {
			return mcperr.New(mcperr.InvalidArgument, "mcp: client(): %v", err)
		}
		mode := relay.Fallback
		if o.RelayMode == string(relay.Always) {
			mode = relay.Always
		}
		base = &relay.Transport{Base: base, Relay: o.Relay, Mode: mode, Routes: a.relayRoutes}
		authHTTP = httpguard.NewClient(&httpguard.Transport{Base: base})
	}
	e := &clientEntry{id: id, opts: o}
	e.ctx, e.cancel = context.WithCancelCause(context.Background())
	opts := mcpclient.Options{
		ClientName:    o.ClientName,
		ClientVersion: version,
		Apps:          o.Apps,
		Headers:       o.Headers,
		Transport:     mcpclient.Transport(o.Transport),
		// The MCP requests go through fetch as the OAuth ones do (jsfetch):
		// net/http's own fetch path leaves the rejection of a response
		// stream's cancel() unhandled, which a page reports as an
		// uncaught error when it unloads during an event stream.
		HTTPClient: &http.Client{Transport: base},
		Hints:      a.hints,
		Tasks:      a.taskBook(o.Storage),
		OnEvent: func(ev mcpclient.Event) {
			a.host.event(id, ev.Type, ev.Data)
			if also != nil {
				also(ev)
			}
		},
	}
	switch {
	case o.AccessToken:
		// The page supplies the tokens: there is nothing to sign in to.
		opts.NoSignIn = mcperr.New(mcperr.InvalidArgument, "mcp: this client uses the page's accessToken(); there is nothing to sign in to")
		opts.AccessToken = func(ctx context.Context) (string, error) {
			v, err := a.host.await(ctx, "accessToken", target(id))
			if err != nil {
				return "", err
			}
			return jsbridge.String(v, "accessToken() result")
		}
	case oauth.CheckResourceURL(url) != nil:
		// A URL OAuth cannot serve (plain http off loopback, a query) is
		// used without sign-in; authorize() says why.
		opts.NoSignIn = oauth.CheckResourceURL(url)
	default:
		h, err := a.newAuth(id, url, o, authHTTP, pol)
		if err != nil {
			e.cancel(nil)
			return err
		}
		opts.Auth = h
	}
	c, err := mcpclient.New(url, opts)
	if err != nil {
		if opts.Auth != nil {
			opts.Auth.Close()
		}
		e.cancel(nil)
		return err
	}
	e.c = c
	a.mu.Lock()
	a.clients[id] = e
	a.mu.Unlock()
	if o.Storage != "memory" {
		// The client's first connect reads its kept tasks from IndexedDB:
		// the database opens meanwhile, while the page goes on to connect.
		go a.idb.Warm()
	}
	return nil
}

// checkID refuses an empty id or one in use: the page chooses unique ids
// (a worker prefixes each tab's), so either is a bug of the caller.
func checkID(kind, id string, used bool) error {
	if id == "" || used {
		return mcperr.New(mcperr.InvalidArgument, "mcp: %s id %q is empty or in use", kind, id)
	}
	return nil
}

// newAuth builds the OAuth handler of client id.
func (a *app) newAuth(id string, url string, o jsapi.ClientOptions, httpc *http.Client, pol hostpolicy.Chain) (*oauth.Handler, error) {
	ms := func(v *float64) time.Duration {
		if v == nil {
			return 0
		}
		return time.Duration(*v * float64(time.Millisecond))
	}
	var ea *oauth.EnterpriseAuth
	if o.IdentityAssertion {
		// Enterprise-managed authorization: the page's SSO ID token is
		// exchanged for an ID-JAG; no popup.
		ea = &oauth.EnterpriseAuth{
			IdentityAssertion: func(ctx context.Context) (string, error) {
				v, err := a.host.await(ctx, "identityAssertion", target(id))
				if err != nil {
					return "", err
				}
				return jsbridge.String(v, "identityAssertion() result")
			},
			IdPTokenEndpoint: o.IdPTokenEndpoint,
			IdPIssuer:        o.IdPIssuer,
			IdPClientID:      o.IdPClientID,
			IdPClientSecret:  o.IdPClientSecret,
			SubjectTokenType: o.IdPSubjectTokenType,
		}
	}
	var manual *oauth.Endpoints
	if o.AuthorizationEndpoint != "" || o.TokenEndpoint != "" {
		manual = &oauth.Endpoints{Authorization: o.AuthorizationEndpoint, Token: o.TokenEndpoint, Revocation: o.RevocationEndpoint}
	}
	return oauth.New(oauth.Config{
		Endpoints:         manual,
		EnterpriseAuth:    ea,
		ResourceURL:       url,
		HTTPClient:        httpc,
		RedirectURL:       o.RedirectURI,
		ClientName:        o.ClientName,
		Scopes:            o.Scopes,
		ClientID:          o.ClientID,
		ClientSecret:      o.ClientSecret,
		ClientMetadataURL: o.ClientMetadataURL,
		Store:             a.store(o.Storage),
		Registry:          a.registry,
		Courier:           popupCourier{host: a.host, id: id},
		Locker:            webLocks{host: a.host},
		Interactive:       o.Interactive,
		// Redirect mode: the page (and this runtime) is gone when the
		// callback arrives; the flow must be finished from storage.
		PersistFlows:        o.AuthMode == "redirect",
		RequestRefreshToken: true,
		AuthTimeout:         ms(o.AuthTimeoutMs),
		// Refresh this long before expiry: enough for a fetch round trip,
		// short enough that minute-long tokens are not refreshed on every call.
		RefreshMargin: 10 * time.Second,
		DPoP:          oauth.DPoPMode(o.DPoPMode()),
		DPoPKeys:      a.dpopKeys(o.Storage),
		TrustIssuer:   pol.CheckIssuer,
	})
}

// dpopKeys returns the DPoP keys beside the store of kind: IndexedDB's, or
// this page's memory keys.
func (a *app) dpopKeys(kind string) oauth.DPoPKeys {
	if kind == "memory" {
		return a.memKeys
	}
	return a.idb.DPoPKeys()
}

// clientSecret finds the secret of a pre-registered confidential client
// among this page's clients, for finishing a redirect-mode flow. The page
// configures secrets per client ID, not per authorization server: when two
// clients give the same ID different secrets, it sends none rather than
// risk sending one server's secret to another.
func (a *app) clientSecret(_, clientID string) string {
	secret := ""
	for _, e := range a.entries() {
		if e.opts.ClientID != clientID || e.opts.ClientSecret == "" {
			continue
		}
		if secret != "" && secret != e.opts.ClientSecret {
			return ""
		}
		secret = e.opts.ClientSecret
	}
	return secret
}

// connectOptions are the page's server-to-client handlers of client e.
func (a *app) connectOptions(e *clientEntry, elicitation, sampling bool) mcpclient.ConnectOptions {
	var co mcpclient.ConnectOptions
	if elicitation {
		co.Elicitation = func(ctx context.Context, p *mcp.ElicitParams) (*mcp.ElicitResult, error) {
			var r mcp.ElicitResult
			return &r, a.host.handler(ctx, e.id, "elicit", p, &r)
		}
	}
	if sampling {
		co.Sampling = func(ctx context.Context, p *mcp.CreateMessageParams) (*mcp.CreateMessageResult, error) {
			var r mcp.CreateMessageResult
			return &r, a.host.handler(ctx, e.id, "sample", p, &r)
		}
	}
	return co
}
