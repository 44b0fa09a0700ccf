package oauth

import (
	"context"
	"crypto/subtle"
	"net/url"
	"strconv"
	"sync"

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
type Registry struct {
	mu    sync.Mutex
	flows []*waiter
}

type waiter struct {
	state    string
	resource string         // the flow's handler resource
	ch       chan *Callback // buffered, receives at most one value
}

// NewRegistry returns an empty [Registry].
func NewRegistry() *Registry { return &Registry{} }

func (r *Registry) add(state, resource string) *waiter {
	w := &waiter{state: state, resource: resource, ch: make(chan *Callback, 1)}
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

func (r *Registry) deliver(callbackURL string) (resource string, err error) {
	cb, err := ParseCallback(callbackURL)
	if err != nil {
		return "", err
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
		return "", &Error{Code: mcperr.StateMismatch, Msg: "oauth: no authorization flow is waiting for this state (unknown, expired or already used)"}
	}
	found.ch <- cb // buffered; the waiter was removed, so this happens once
	return found.resource, nil
}

// HandleCallback is what mcp.handleCallback(url) does with any callback
// URL (popup relay, redirect return, pasted URL): when a flow of this page
// waits on its state, the URL is delivered to it in memory ([Deliver];
// live is true and the flow's Login/Authorize caller gets the outcome);
// otherwise, when cfg.Store is set, the flow is completed from the Store
// ([CompletePending]; live is false and err is its outcome). resource is
// the MCP server URI of the flow that took the URL ("" when none did).
// An unknown, expired or replayed state is [ErrStateMismatch].
func (r *Registry) HandleCallback(ctx context.Context, cfg PendingConfig, callbackURL string) (resource string, live bool, err error) {
	resource, err = r.deliver(callbackURL)
	if err == nil {
		return resource, true, nil
	}
	if cfg.Store == nil || !isCode(err, mcperr.StateMismatch) {
		return "", false, err
	}
	resource, err = CompletePending(ctx, cfg, callbackURL)
	return resource, false, err
}

// Pending reports whether any flow is waiting for a callback.
func (r *Registry) Pending() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.flows) > 0
}
