package oauth

import (
	"context"
	"crypto/subtle"
	"net/url"
	"strconv"
	"sync"
	"time"

	"github.com/mcpwasm/mcpwasm/mcperr"
)

// maxCallbackURL bounds the length of a callback URL accepted by
// [ParseCallback].
const maxCallbackURL = 16 << 10

// Callback is a parsed authorization response (RFC 6749 §4.1.2, §4.1.2.1;
// RFC 9207 iss). Code is a secret.
type Callback struct {
	State            string
	Code             string // secret
	Iss              string // RFC 9207 issuer, when sent
	Error            string // e.g. "access_denied"
	ErrorDescription string // sanitised
}

// ParseCallback parses a redirect URL carrying an authorization response.
// It requires a state, exactly one of code and error, and no repeated
// parameters. The error is [ErrStateMismatch]-coded when the state is
// missing and "protocol"-coded otherwise; it never contains the code.
func ParseCallback(callbackURL string) (*Callback, error) {
	if len(callbackURL) > maxCallbackURL {
		return nil, newErr(mcperr.Protocol, "callback URL too long", nil)
	}
	u, err := url.Parse(callbackURL)
	if err != nil {
		return nil, newErr(mcperr.Protocol, "callback URL malformed", nil)
	}
	q, err := url.ParseQuery(u.RawQuery)
	if err != nil {
		return nil, newErr(mcperr.Protocol, "callback URL query malformed", nil)
	}
	for k, v := range q {
		if len(v) > 1 {
			return nil, newErr(mcperr.Protocol, "callback parameter "+strconv.Quote(k)+" repeated", nil)
		}
	}
	cb := &Callback{
		State:            q.Get("state"),
		Code:             q.Get("code"),
		Iss:              q.Get("iss"),
		Error:            sanitize(q.Get("error")),
		ErrorDescription: sanitize(q.Get("error_description")),
	}
	if cb.State == "" {
		return nil, &Error{Code: mcperr.StateMismatch, Msg: "oauth: callback has no state"}
	}
	switch {
	case cb.Code == "" && cb.Error == "":
		return nil, newErr(mcperr.Protocol, "callback has neither code nor error", nil)
	case cb.Code != "" && cb.Error != "":
		return nil, newErr(mcperr.Protocol, "callback has both code and error", nil)
	}
	return cb, nil
}

// Registry routes callbacks to the flows waiting for them, by state. One
// Registry serves every [Handler] of a page (one callback page for all
// servers): pass it in each [Config]. The zero value is not usable; call
// [NewRegistry]. It is safe for concurrent use.
//
// It also keeps every [Handler] created with it, by resource, so that a
// grant change reaches all of them through one path: a sign-in, refresh,
// decline or logout in one handler is applied to the others of the same
// resource, and announced to other pages through [Registry.Announce] when
// the grant lives in storage they share; a change another page announced
// comes in through [Registry.Apply].
type Registry struct {
	// Announce, when set, is told of each change a handler of this
	// registry made to a grant in shared storage (see [SharedStore]), so
	// that the embedder can pass it to its other pages (a
	// BroadcastChannel), which call [Registry.Apply]. Set it before the
	// first handler is made; it must not block.
	Announce func(Change)

	mu       sync.Mutex
	flows    []*waiter
	handlers map[string][]*Handler
}

// ChangeKind is what happened to a resource's grant.
type ChangeKind string

// The kinds of [Change].
const (
	ChangeGranted  ChangeKind = "grant"   // a new or refreshed grant was stored
	ChangeRevoked  ChangeKind = "logout"  // the grant was deleted (sign-out)
	ChangeCleared  ChangeKind = "clear"   // every grant of the origin was deleted
	ChangeDeclined ChangeKind = "decline" // the user declined a sign-in (this page only)
)

// Change is a grant change, as announced between pages. It carries no
// secret.
type Change struct {
	Kind     ChangeKind `json:"kind"`
	Resource string     `json:"resource,omitempty"` // "" for ChangeCleared
}

// SharedStore is implemented by a [Store] whose grants other pages see
// (IndexedDB, not memory): changes to them are announced.
type SharedStore interface {
	Shared() bool
}

func isShared(s Store) bool {
	ss, ok := s.(SharedStore)
	return ok && ss.Shared()
}

func (r *Registry) register(h *Handler) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.handlers == nil {
		r.handlers = map[string][]*Handler{}
	}
	r.handlers[h.resource] = append(r.handlers[h.resource], h)
}

func (r *Registry) unregister(h *Handler) {
	r.mu.Lock()
	defer r.mu.Unlock()
	hs := r.handlers[h.resource]
	for i, x := range hs {
		if x == h {
			r.handlers[h.resource] = append(hs[:i:i], hs[i+1:]...)
			break
		}
	}
	if len(r.handlers[h.resource]) == 0 {
		delete(r.handlers, h.resource)
	}
}

// handlersOf returns the handlers of resource ("" for all of them).
func (r *Registry) handlersOf(resource string) []*Handler {
	r.mu.Lock()
	defer r.mu.Unlock()
	if resource != "" {
		return append([]*Handler(nil), r.handlers[resource]...)
	}
	var all []*Handler
	for _, hs := range r.handlers {
		all = append(all, hs...)
	}
	return all
}

// changed applies a change made by from (nil: made from storage, by
// [CompletePending]) to the other handlers of its resource and, when
// shared (the grant lives in storage other pages see), announces it. g is
// the new grant of a ChangeGranted, err the reason of a ChangeDeclined.
func (r *Registry) changed(from *Handler, c Change, g *Grant, err error, shared bool) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, h := range r.handlersOf(c.Resource) {
		if h == from {
			continue
		}
		switch c.Kind {
		case ChangeGranted:
			if from != nil && g != nil && h.cfg.Store == from.cfg.Store {
				h.adoptGrant(g)
			} else {
				_, _ = h.ReloadGrant(ctx)
			}
		case ChangeRevoked:
			h.forget()
		case ChangeDeclined:
			h.Decline(err)
		}
	}
	if shared && c.Kind != ChangeDeclined && r.Announce != nil {
		r.Announce(c)
	}
}

// changed reports a change h made to its grant to the registry.
func (h *Handler) changed(c ChangeKind, g *Grant, err error) {
	h.cfg.Registry.changed(h, Change{Kind: c, Resource: h.resource}, g, err, isShared(h.cfg.Store))
}

// Clear applies a deletion of every grant of the origin that this page
// made (its storage is cleared): every handler forgets its grant and needs
// a sign-in, and other pages hear of it.
func (r *Registry) Clear() {
	for _, h := range r.handlersOf("") {
		h.forget()
	}
	if r.Announce != nil {
		r.Announce(Change{Kind: ChangeCleared})
	}
}

// Apply applies a change another page announced: the handlers of its
// resource (of every resource, for ChangeCleared) read their grant from
// storage again. Handlers whose Store other pages do not share are left
// alone.
func (r *Registry) Apply(ctx context.Context, c Change) {
	resource := c.Resource
	if c.Kind == ChangeCleared {
		resource = ""
	}
	for _, h := range r.handlersOf(resource) {
		if !isShared(h.cfg.Store) {
			continue
		}
		switch c.Kind {
		case ChangeGranted, ChangeRevoked:
			_, _ = h.ReloadGrant(ctx)
		case ChangeCleared:
			h.forget()
		}
	}
}

type waiter struct {
	state    string
	resource string         // the flow's handler resource
	ch       chan *Callback // buffered, receives at most one value
	done     chan error     // buffered: the flow's outcome once it took its callback
}

// NewRegistry returns an empty [Registry].
func NewRegistry() *Registry { return &Registry{} }

func (r *Registry) add(state, resource string) *waiter {
	w := &waiter{state: state, resource: resource, ch: make(chan *Callback, 1), done: make(chan error, 1)}
	r.mu.Lock()
	r.flows = append(r.flows, w)
	r.mu.Unlock()
	return w
}

// remove forgets w; later deliveries of its state are rejected.
func (r *Registry) remove(w *waiter) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for i, f := range r.flows {
		if f == w {
			r.flows = append(r.flows[:i], r.flows[i+1:]...)
			return
		}
	}
}

// Deliver hands a callback URL (from the popup's message, a redirect
// return or a URL the user pasted) to the flow waiting on its state. The
// state is compared in constant time against every waiting flow. A state
// that no flow waits for (unknown, expired, already delivered) is rejected
// with an [ErrStateMismatch]-coded error; so is a malformed URL (with a
// "protocol" code). Each state is accepted at most once.
//
// Deliver only reaches flows alive in this page. A flow persisted for the
// full-page redirect mode whose page is gone is finished by
// [CompletePending]; [Registry.HandleCallback] tries both, in that order.
func (r *Registry) Deliver(callbackURL string) error {
	_, err := r.deliver(callbackURL)
	return err
}

func (r *Registry) deliver(callbackURL string) (*waiter, error) {
	cb, err := ParseCallback(callbackURL)
	if err != nil {
		return nil, err
	}
	r.mu.Lock()
	var found *waiter
	for _, f := range r.flows {
		if subtle.ConstantTimeCompare([]byte(f.state), []byte(cb.State)) == 1 {
			found = f
		}
	}
	if found != nil {
		for i, f := range r.flows {
			if f == found {
				r.flows = append(r.flows[:i], r.flows[i+1:]...)
				break
			}
		}
	}
	r.mu.Unlock()
	if found == nil {
		return nil, &Error{Code: mcperr.StateMismatch, Msg: "oauth: no authorization flow is waiting for this state (unknown, expired or already used)"}
	}
	found.ch <- cb // buffered; the waiter was removed, so this happens once
	return found, nil
}

// HandleCallback is what mcp.handleCallback(url) does with any callback
// URL (popup relay, redirect return, pasted URL): when a flow of this page
// waits on its state, the URL is delivered to it in memory ([Deliver];
// live is true, and err is the flow's outcome once it finished, as its
// Login/Authorize caller gets it);
// otherwise, when cfg.Store is set, the flow is completed from the Store
// ([CompletePending]; live is false and err is its outcome). resource is
// the MCP server URI of the flow that took the URL ("" when none did).
// An unknown, expired or replayed state is [ErrStateMismatch].
func (r *Registry) HandleCallback(ctx context.Context, cfg PendingConfig, callbackURL string) (resource string, live bool, err error) {
	w, err := r.deliver(callbackURL)
	if err == nil {
		// A live flow took it: its outcome (the exchange) is the answer.
		select {
		case err = <-w.done:
		case <-ctx.Done():
			err = ctx.Err()
		}
		return w.resource, true, err
	}
	if cfg.Store == nil || !isCode(err, mcperr.StateMismatch) {
		return "", false, err
	}
	resource, err = CompletePending(ctx, cfg, callbackURL)
	if resource != "" {
		// Finished from storage: the handlers of this page learn of it
		// here, other pages through Announce.
		switch {
		case err == nil:
			r.changed(nil, Change{Kind: ChangeGranted, Resource: resource}, nil, nil, isShared(cfg.Store))
		case isCode(err, mcperr.Declined):
			r.changed(nil, Change{Kind: ChangeDeclined, Resource: resource}, nil, err, false)
		default:
			for _, h := range r.handlersOf(resource) {
				h.setState(StateFailed, err)
			}
		}
	}
	return resource, false, err
}

// Pending reports whether any flow is waiting for a callback.
func (r *Registry) Pending() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.flows) > 0
}
