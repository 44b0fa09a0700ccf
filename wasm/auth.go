//go:build js && wasm

package main

import (
	"context"
	"encoding/json"
	"sync"
	"time"

	"github.com/mcpwasm/mcpwasm/jsbridge"
	"github.com/mcpwasm/mcpwasm/mcpclient"
	"github.com/mcpwasm/mcpwasm/mcperr"
	"github.com/mcpwasm/mcpwasm/oauth"
	"github.com/mcpwasm/mcpwasm/storage/indexeddb"
)

// dbName is the IndexedDB database of this origin's grants.
const dbName = "mcpwasm"

// stores opens the page's stores once: IndexedDB (falling back to memory
// when it is unavailable) and an in-memory one for storage: "memory".
type stores struct {
	mu       sync.Mutex
	idb      oauth.Store
	fallback error // why IndexedDB is not used, once tried
	memory   *oauth.MemoryStore
}

// get returns the store for kind ("indexeddb" or "memory") and, when
// IndexedDB had to be replaced by memory, why.
func (s *stores) get(ctx context.Context, kind string) (oauth.Store, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.memory == nil {
		s.memory = oauth.NewMemoryStore()
	}
	if kind == "memory" {
		return s.memory, nil
	}
	if s.idb == nil && s.fallback == nil {
		st, err := indexeddb.Open(ctx, dbName)
		if err != nil {
			s.fallback = err
		} else {
			s.idb = st
		}
	}
	if s.fallback != nil {
		return s.memory, s.fallback
	}
	return s.idb, nil
}

// clear deletes everything stored for this origin.
func (s *stores) clear(ctx context.Context) error {
	s.mu.Lock()
	s.memory = oauth.NewMemoryStore()
	idb := s.idb
	s.mu.Unlock()
	if st, ok := idb.(*indexeddb.Store); ok {
		return st.Clear(ctx)
	}
	if idb == nil {
		// Not opened in this page yet: open it only to clear it.
		st, err := indexeddb.Open(ctx, dbName)
		if err != nil {
			return nil // nothing was ever stored there by us
		}
		defer st.Close()
		return st.Clear(ctx)
	}
	return nil
}

// lazyStore opens the page store on first use, so that a client that never
// needs authorization never touches IndexedDB, and reports a fallback to
// memory once through warn.
type lazyStore struct {
	app  *app
	kind string
	warn func(error)
	once sync.Once
}

func (l *lazyStore) store(ctx context.Context) oauth.Store {
	st, _ := l.storeShared(ctx)
	return st
}

// storeShared also reports whether other tabs see the store.
func (l *lazyStore) storeShared(ctx context.Context) (oauth.Store, bool) {
	st, fallback := l.app.stores.get(ctx, l.kind)
	if fallback != nil {
		l.once.Do(func() { l.warn(fallback) })
	}
	return st, l.kind != "memory" && fallback == nil
}

func (l *lazyStore) GetGrant(ctx context.Context, r string) (*oauth.Grant, error) {
	return l.store(ctx).GetGrant(ctx, r)
}
func (l *lazyStore) PutGrant(ctx context.Context, g *oauth.Grant) error {
	st, shared := l.storeShared(ctx)
	if err := st.PutGrant(ctx, g); err != nil {
		return err
	}
	if shared {
		l.app.broadcast("grant", g.Resource)
	}
	return nil
}
func (l *lazyStore) DeleteGrant(ctx context.Context, r string) error {
	return l.store(ctx).DeleteGrant(ctx, r)
}
func (l *lazyStore) GetClient(ctx context.Context, iss, ru string) (*oauth.ClientRegistration, error) {
	return l.store(ctx).GetClient(ctx, iss, ru)
}
func (l *lazyStore) PutClient(ctx context.Context, c *oauth.ClientRegistration) error {
	return l.store(ctx).PutClient(ctx, c)
}
func (l *lazyStore) DeleteClient(ctx context.Context, iss, ru string) error {
	return l.store(ctx).DeleteClient(ctx, iss, ru)
}
func (l *lazyStore) GetMetadata(ctx context.Context, k string) (*oauth.CachedMetadata, error) {
	return l.store(ctx).GetMetadata(ctx, k)
}
func (l *lazyStore) PutMetadata(ctx context.Context, m *oauth.CachedMetadata) error {
	return l.store(ctx).PutMetadata(ctx, m)
}
func (l *lazyStore) DeleteMetadata(ctx context.Context, k string) error {
	return l.store(ctx).DeleteMetadata(ctx, k)
}
func (l *lazyStore) GetPending(ctx context.Context, s string) (*oauth.PendingFlow, error) {
	return l.store(ctx).GetPending(ctx, s)
}
func (l *lazyStore) PutPending(ctx context.Context, p *oauth.PendingFlow) error {
	return l.store(ctx).PutPending(ctx, p)
}
func (l *lazyStore) DeletePending(ctx context.Context, s string) error {
	return l.store(ctx).DeletePending(ctx, s)
}

var _ oauth.Store = (*lazyStore)(nil)

// webLocks is an [oauth.Locker] over the Web Locks API (navigator.locks),
// through the loader: locks span the tabs of this origin.
type webLocks struct{ host jsbridge.Value }

func (w webLocks) Lock(ctx context.Context, name string) (func(), error) {
	fn, err := w.host.Get("lock")
	if err != nil || !jsbridge.IsFunction(fn) {
		return nil, mcperr.New(mcperr.Protocol, "mcp: the loader has no lock function")
	}
	p, err := jsbridge.Call(fn, "mcpwasm:"+name)
	if err != nil {
		return nil, err
	}
	release, err := jsbridge.Await(ctx, p)
	if err != nil {
		if ctx.Err() != nil {
			// Release the lock whenever it is granted after all.
			go func() {
				if r, err := jsbridge.Await(context.Background(), p); err == nil {
					_, _ = jsbridge.Call(r)
				}
			}()
		}
		return nil, err
	}
	var once sync.Once
	return func() { once.Do(func() { _, _ = jsbridge.Call(release) }) }, nil
}

// popupCourier shows the authorization URL through the loader: in the login
// popup (or, in redirect mode, by navigating the page). When the flow ends
// the popup is closed.
type popupCourier struct{ host jsbridge.Value }

func (p popupCourier) Open(ctx context.Context, authURL string) error {
	if _, err := hostCall(ctx, p.host, "openAuth", authURL); err != nil {
		return err
	}
	go func() {
		<-ctx.Done()
		if fn, err := p.host.Get("closeAuth"); err == nil && jsbridge.IsFunction(fn) {
			_, _ = jsbridge.Call(fn)
		}
	}()
	return nil
}

// authOptions are the OAuth options of a client (JSAPI.md mcp.client).
type authOptions struct {
	RedirectURI       string   `json:"redirectUri"`
	Scopes            []string `json:"scopes"`
	ClientID          string   `json:"clientId"`
	ClientMetadataURL string   `json:"clientMetadataUrl"`
	ClientSecret      string   `json:"clientSecret"`
	Storage           string   `json:"storage"`
	Interactive       bool     `json:"interactive"`
	AuthMode          string   `json:"authMode"`
	AuthTimeoutMs     float64  `json:"authTimeoutMs"`
}

// newAuth builds the OAuth handler of one client; events go to c.
func (a *app) newAuth(url, clientName string, o authOptions, host jsbridge.Value, c func() *mcpclient.Client, emit func(string, any)) (*oauth.Handler, error) {
	switch o.Storage {
	case "", "indexeddb", "memory":
	default:
		return nil, mcperr.New(mcperr.InvalidArgument, `mcp: storage must be "indexeddb" or "memory"`)
	}
	switch o.AuthMode {
	case "", "popup", "redirect":
	default:
		return nil, mcperr.New(mcperr.InvalidArgument, `mcp: authMode must be "popup" or "redirect"`)
	}
	if o.AuthMode == "redirect" && o.Storage == "memory" {
		return nil, mcperr.New(mcperr.InvalidArgument, `mcp: authMode "redirect" needs storage "indexeddb": the page is gone while the user signs in`)
	}
	if o.AuthTimeoutMs < 0 {
		return nil, mcperr.New(mcperr.InvalidArgument, "mcp: authTimeoutMs must be a positive number")
	}
	store := &lazyStore{app: a, kind: o.Storage, warn: func(err error) {
		emit("storagefallback", map[string]string{"reason": err.Error()})
	}}
	cfg := oauth.Config{
		ResourceURL:       url,
		HTTPClient:        a.http,
		RedirectURL:       o.RedirectURI,
		ClientName:        clientName,
		Scopes:            o.Scopes,
		ClientID:          o.ClientID,
		ClientSecret:      o.ClientSecret,
		ClientMetadataURL: o.ClientMetadataURL,
		Store:             store,
		Registry:          a.registry,
		Courier:           popupCourier{host: host},
		Locker:            webLocks{host: a.host},
		Interactive:       o.Interactive,
		// Redirect mode: the page (and this runtime) is gone when the
		// callback arrives; the flow must be finished from storage.
		PersistFlows:        o.AuthMode == "redirect",
		RequestRefreshToken: true,
		AuthTimeout:         time.Duration(o.AuthTimeoutMs * float64(time.Millisecond)),
		// Refresh this long before expiry: enough for a fetch round trip,
		// short enough that minute-long tokens are not refreshed on every call.
		RefreshMargin: 10 * time.Second,
		OnEvent: func(e oauth.Event) {
			cl := c()
			if cl == nil {
				return
			}
			switch e.Kind {
			case oauth.EventTokenRefreshed:
				emit("tokenrefreshed", map[string]string{"resource": e.Resource})
			case oauth.EventStoreFailed:
				emit("storageerror", map[string]string{"resource": e.Resource, "message": e.Err.Error()})
			case oauth.EventState:
				switch e.State {
				case oauth.StateNeedsAuth:
					cl.SetState(mcpclient.StateNeedsAuth, e.Err)
				case oauth.StateAuthorizing:
					cl.SetState(mcpclient.StateAuthorizing, nil)
				case oauth.StateDeclined:
					cl.SetState(mcpclient.StateDeclined, e.Err)
				case oauth.StateAuthorized:
					cl.AuthSettled()
				}
			}
		},
	}
	return oauth.New(cfg)
}

// broadcast tells the other tabs of this origin about a grant change.
func (a *app) broadcast(kind, resource string) {
	fn, err := a.host.Get("broadcast")
	if err != nil || !jsbridge.IsFunction(fn) {
		return
	}
	b, _ := json.Marshal(map[string]string{"kind": kind, "resource": resource})
	_, _ = jsbridge.Call(fn, string(b))
}
