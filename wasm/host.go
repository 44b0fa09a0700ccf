//go:build js && wasm

package main

import (
	"context"
	"encoding/json"
	"net/url"
	"sync"

	"github.com/mcpwasm/mcpwasm/jsapi"
	"github.com/mcpwasm/mcpwasm/jsbridge"
	"github.com/mcpwasm/mcpwasm/mcperr"
)

// host is mcp.js's host object: the callbacks of jsapi.Hosts.
type host struct{ v jsbridge.Value }

func target(id string) string { return jsapi.Target("client", id) }

// eventTo sends an event to any target ("catalog:<id>", …).
func (h host) eventTo(target, typ string, data any) {
	b, err := json.Marshal(data)
	if err != nil {
		return
	}
	h.call("event", target, typ, string(b))
}

// call calls a synchronous host callback; a missing or throwing one is
// reported to the console, never a panic.
func (h host) call(name string, args ...any) {
	fn, err := h.v.Get(name)
	if err != nil || !jsbridge.IsFunction(fn) {
		jsbridge.ConsoleError("mcp.wasm: the loader has no host." + name)
		return
	}
	_, _ = jsbridge.Call(fn, args...)
}

// await calls an asynchronous host callback and waits for its Promise.
func (h host) await(ctx context.Context, name string, args ...any) (jsbridge.Value, error) {
	fn, err := h.v.Get(name)
	if err != nil || !jsbridge.IsFunction(fn) {
		return jsbridge.Undefined(), mcperr.New(mcperr.Protocol, "mcp: the loader has no host.%s", name)
	}
	p, err := jsbridge.Call(fn, args...)
	if err != nil {
		return jsbridge.Undefined(), err
	}
	return jsbridge.Await(ctx, p)
}

// event sends a client event; data is JSON-marshalled.
func (h host) event(id string, typ string, data any) {
	b, err := json.Marshal(data)
	if err != nil {
		return
	}
	h.call("event", target(id), typ, string(b))
}

// handler asks the page's handler name (elicit, sample) of client id and
// decodes its answer into result; a throwing handler becomes an error the
// server receives, never a hang.
func (h host) handler(ctx context.Context, id string, name string, params, result any) error {
	b, err := json.Marshal(params)
	if err != nil {
		return err
	}
	v, err := h.await(ctx, name, target(id), string(b))
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

// webLocks is an oauth.Locker over the Web Locks API (host.lock): locks
// span the tabs of this origin.
type webLocks struct{ host host }

func (w webLocks) Lock(ctx context.Context, name string) (func(), error) {
	fn, err := w.host.v.Get("lock")
	if err != nil || !jsbridge.IsFunction(fn) {
		return nil, mcperr.New(mcperr.Protocol, "mcp: the loader has no host.lock")
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

// popupCourier shows a client's authorization URL through host.openAuth:
// in the sign-in window the page opened in the user's gesture (or, in
// redirect mode, by sending the page there). host.authDismissed resolves
// when a person closes that window, or with the URL it reached when it
// came back to the redirect URI and no callback receiver ran there; when
// the flow ends, host.closeAuth closes it: that flow's window only (named
// by the authorization URL's state), since the person may have started
// the next sign-in by the time this one's end reaches the page.
type popupCourier struct {
	host host
	id   string
}

func (p popupCourier) Open(ctx context.Context, authURL string) (<-chan error, error) {
	if _, err := p.host.await(ctx, "openAuth", target(p.id), authURL); err != nil {
		return nil, err
	}
	ended := make(chan error, 1)
	go func() {
		v, err := p.host.await(ctx, "authDismissed", target(p.id))
		if err != nil || ctx.Err() != nil {
			return
		}
		if landed, err := jsbridge.String(v, "authDismissed"); err == nil && landed != "" {
			ended <- &mcperr.UnhandledRedirect{URL: redirectOf(authURL, landed)}
			return
		}
		close(ended)
	}()
	state := ""
	if u, err := url.Parse(authURL); err == nil {
		state = u.Query().Get("state")
	}
	go func() {
		<-ctx.Done()
		p.host.call("closeAuth", target(p.id), state)
	}()
	return ended, nil
}

// redirectOf names the redirect URI of authURL (its redirect_uri, which
// this runtime wrote), else the page's landed URL, without query or
// fragment either way: a callback's query holds the authorization code.
func redirectOf(authURL, landed string) string {
	raw := landed
	if u, err := url.Parse(authURL); err == nil && u.Query().Get("redirect_uri") != "" {
		raw = u.Query().Get("redirect_uri")
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "its redirect URI"
	}
	u.RawQuery, u.Fragment, u.RawFragment, u.User = "", "", "", nil
	return u.String()
}
