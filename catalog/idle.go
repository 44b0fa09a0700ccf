package catalog

import (
	"context"
	"sync"
	"time"

	"github.com/mcpwasm/mcpwasm/mcpclient"
)

// DefaultIdleTimeout is how long a server's session stays open unused when
// Config.IdleTimeout is 0.
const DefaultIdleTimeout = 10 * time.Minute

// sessionHolder is implemented by servers that may hold something a closed
// session would lose (resource subscriptions): they are not closed for
// idleness while they do.
type sessionHolder interface {
	HoldsSession() bool
}

// usedLocked records that e's server is in use now: the idle timeout counts
// from the last use. c.mu must be held.
func (c *Catalog) usedLocked(e *entry) {
	e.lastUsed = c.now()
}

// idleLoop closes the sessions left unused for Config.IdleTimeout, until
// the catalog closes. It runs only when the timeout is positive.
func (c *Catalog) idleLoop(every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-c.life.Done():
			return
		case <-t.C:
			c.closeIdle()
		}
	}
}

// idleCheckEvery is how often idleLoop looks for idle sessions: a quarter
// of the timeout, between 10 ms and a minute.
func idleCheckEvery(timeout time.Duration) time.Duration {
	return min(max(timeout/4, 10*time.Millisecond), time.Minute)
}

// closeIdle ends the session of every server idle for Config.IdleTimeout.
// Its tools stay listed; the next call to it, or the host's next direct use
// ([Catalog.Use]), connects it again with the grant it holds.
func (c *Catalog) closeIdle() {
	type idle struct {
		e *entry
		d disconnecter
	}
	var todo []idle
	c.update(func() {
		now := c.now()
		for _, e := range c.entries {
			d, ok := e.srv.(disconnecter)
			if !ok || !c.idleLocked(e, now) {
				continue
			}
			e.parked, e.parking = true, true
			e.changedLocked()
			todo = append(todo, idle{e, d})
		}
	})
	for _, x := range todo {
		x.d.Disconnect()
		c.update(func() {
			x.e.parking = false
			x.e.changedLocked()
		})
	}
}

// idleLocked reports whether e's session may be closed for idleness at now:
// connected with its tools listed, with no call running, no direct use
// ([Catalog.Use]), no connect and no tool list being read, nothing held
// open, and unused for Config.IdleTimeout. c.mu must be held.
func (c *Catalog) idleLocked(e *entry, now time.Time) bool {
	if !e.enabled || e.parked || e.refreshing || e.holds > 0 || e.loading > 0 || !e.contributes() || e.state != mcpclient.StateConnected || len(c.running[e.id]) > 0 {
		return false
	}
	if h, ok := e.srv.(sessionHolder); ok && h.HoldsSession() {
		return false
	}
	return now.Sub(e.lastUsed) >= c.cfg.IdleTimeout
}

// awaitParkedLocked waits until no idle close of e is under way, so that a
// call does not start on a session being closed. c.mu must be held; it is
// released while waiting.
func (c *Catalog) awaitParkedLocked(ctx context.Context, e *entry) error {
	for e.parking {
		wake := e.wake
		c.mu.Unlock()
		select {
		case <-wake:
		case <-ctx.Done():
			c.mu.Lock()
			return ctx.Err()
		}
		c.mu.Lock()
	}
	return nil
}

// Use tells the catalog the host is about to use server id's client
// directly (through [ClientOf]: reading a view's resource, a prompt, a
// call of its own): the session is not closed for idleness until release
// is called, and one closed already is connected again first, with the
// grant the client holds. Its errors are the connection's; release is
// then a no-op. Call release once the use ends.
func (c *Catalog) Use(ctx context.Context, id string) (release func(), err error) {
	e, err := c.lookup(id)
	if err != nil {
		return func() {}, err
	}
	c.mu.Lock()
	c.usedLocked(e)
	e.holds++
	parked := e.parked || e.parking
	c.mu.Unlock()
	var once sync.Once
	release = func() {
		once.Do(func() {
			c.mu.Lock()
			e.holds--
			c.usedLocked(e)
			c.mu.Unlock()
		})
	}
	if parked {
		if err := c.load(ctx, e, true); err != nil {
			release()
			return func() {}, err
		}
	}
	return release, nil
}
