package mcpclient

import (
	"context"
	"errors"
	"math/rand/v2"
	"time"

	"github.com/mcpwasm/mcpwasm/mcperr"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The reconnect backoff of state reconnecting: the first probe after
// ReconnectBase (at once when the server forgot the session), doubling
// per failed probe up to ReconnectMax, each wait ±ReconnectJitter of
// itself so that the clients of many pages do not probe in step.
const (
	ReconnectBase   = 500 * time.Millisecond
	ReconnectMax    = 30 * time.Second
	ReconnectJitter = 0.2
)

// reconnector is a client's part in state reconnecting; its fields are
// guarded by the client's mu.
type reconnector struct {
	gen     int           // counts the entries into state reconnecting: one loop each
	changed chan struct{} // closed at each state change, for calls waiting out a reconnect
	wake    chan struct{} // a probe now (the network returned); buffered
}

// changedLocked wakes the calls waiting for a state change.
func (r *reconnector) changedLocked() {
	if r.changed != nil {
		close(r.changed)
		r.changed = nil
	}
}

func (r *reconnector) changedChLocked() <-chan struct{} {
	if r.changed == nil {
		r.changed = make(chan struct{})
	}
	return r.changed
}

func (r *reconnector) wakeChLocked() chan struct{} {
	if r.wake == nil {
		r.wake = make(chan struct{}, 1)
	}
	return r.wake
}

// errReconnecting is sessionOrErrLocked's answer in state reconnecting;
// awaitSession waits it out and never returns it.
var errReconnecting = errors.New("reconnecting")

// retryable reports whether a failed probe leaves the client reconnecting
// (the network, a timeout, a server that is away or answers 5xx) rather
// than in the state stateFor gives (a sign-in needed, a protocol fault).
func retryable(err error) bool {
	switch mcperr.CodeOf(err, "") {
	case mcperr.Network, mcperr.Timeout, mcperr.Closed, mcperr.HTTP:
		return true
	}
	return false
}

// lostReason is the error of a statechange to reconnecting: why the
// session ended.
func lostReason(err error) error {
	if errors.Is(err, mcp.ErrSessionMissing) {
		return mcperr.Wrap(mcperr.Closed, err, "mcp: the server no longer knows the session (it restarted); reconnecting with a fresh session")
	}
	return mcperr.Wrap(mcperr.Network, err, "mcp: the connection to the server was lost; reconnecting")
}

// errOffline is the reason of the change to reconnecting that the
// browser's "offline" event makes.
var errOffline = mcperr.New(mcperr.Network, "mcp: the browser is offline; reconnecting when the network returns")

// Offline tells the client the browser went offline (the "offline"
// event): a connected client ends its session and goes reconnecting at
// once, rather than when its next request fails. Other states ignore it.
func (c *Client) Offline() {
	c.mu.Lock()
	if c.closing || c.state != StateConnected || c.session == nil {
		c.mu.Unlock()
		return
	}
	after := c.applyLocked(inSessionLost, errOffline)
	c.mu.Unlock()
	after()
}

// Online tells the client the network returned (the "online" event): a
// reconnecting client probes the server now instead of at the end of its
// backoff. Other states ignore it.
func (c *Client) Online() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.state != StateReconnecting {
		return
	}
	select {
	case c.re.wakeChLocked() <- struct{}{}:
	default:
	}
}

// reconnectLoop probes the server while the client stays reconnecting:
// one connect at a time (a host's Connect joins it), backoff with jitter
// between failed probes, a probe at once on Online. It ends when a probe
// connects, when the state moves on (a sign-in needed, a protocol fault,
// disconnect, close) or when the client enters reconnecting again (that
// entry's loop takes over).
func (c *Client) reconnectLoop(co ConnectOptions, cause error) {
	c.mu.Lock()
	c.re.gen++
	gen := c.re.gen
	wake := c.re.wakeChLocked()
	select { // an Online before this entry says nothing about the next
	case <-wake:
	default:
	}
	c.mu.Unlock()
	delay := ReconnectBase
	if errors.Is(cause, mcp.ErrSessionMissing) {
		delay = 0 // the server is there: it only forgot the session
	}
	for {
		if delay > 0 {
			t := time.NewTimer(jitter(delay))
			select {
			case <-t.C:
			case <-wake:
				t.Stop()
			case <-c.ctx.Done():
				t.Stop()
				return
			}
		}
		c.mu.Lock()
		live := c.re.gen == gen && c.state == StateReconnecting && c.wanted && !c.closing
		c.mu.Unlock()
		if !live {
			return
		}
		if c.connectOnce(c.ctx, co) == nil {
			return
		}
		delay = min(max(2*delay, ReconnectBase), ReconnectMax)
	}
}

// jitter is d moved at random by up to ±ReconnectJitter of itself.
func jitter(d time.Duration) time.Duration {
	f := 1 + ReconnectJitter*(2*rand.Float64()-1)
	return time.Duration(float64(d) * f)
}

// awaitSession returns the live session; in state reconnecting it waits
// for the reconnect, until ctx ends (or, for a ctx without a deadline,
// DefaultRequestTimeout: a call never waits for ever), then fails
// network with the reason of the reconnect.
func (c *Client) awaitSession(ctx context.Context) (*mcp.ClientSession, error) {
	var stop context.CancelFunc = func() {}
	if _, ok := ctx.Deadline(); !ok {
		ctx, stop = context.WithTimeout(ctx, DefaultRequestTimeout)
	}
	defer stop()
	for {
		c.mu.Lock()
		cs, err := c.sessionOrErrLocked()
		if err != errReconnecting {
			c.mu.Unlock()
			return cs, err
		}
		changed, why := c.re.changedChLocked(), c.stateErr
		c.mu.Unlock()
		select {
		case <-changed:
		case <-ctx.Done():
			return nil, mcperr.AtServer(gaveUp(ctx, why), Host(c.url))
		}
	}
}

// gaveUp is the error of a call that waited for a reconnect until ctx
// ended: aborted when the caller aborted it, else network, saying why the
// client is reconnecting.
func gaveUp(ctx context.Context, why error) error {
	if errors.Is(ctx.Err(), context.Canceled) {
		return mcperr.Wrap(mcperr.Aborted, ctx.Err(), "mcp: aborted while the client was reconnecting to the server")
	}
	e := &mcperr.Error{Code: mcperr.Network, Msg: "mcp: the server cannot be reached; the client is reconnecting by itself, and the call gave up waiting at its timeout; try again later"}
	if why != nil {
		e.Err = why
	}
	return e
}
