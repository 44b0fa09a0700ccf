package catalog

import (
	"context"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpwasm/mcpwasm/mcpclient"
	"github.com/mcpwasm/mcpwasm/mcperr"
)

// Add adds a server; like the others it connects when first needed. It
// fails when id exists, when the entry is invalid, or when the catalog
// already holds MaxServers servers.
func (c *Catalog) Add(id string, sc ServerConfig) error {
	if err := validateServer(id, sc); err != nil {
		return err
	}
	c.mu.Lock()
	switch {
	case c.closed:
		c.mu.Unlock()
		return errClosed
	case c.entries[id] != nil:
		c.mu.Unlock()
		return mcperr.New(mcperr.InvalidArgument, EntryForm.Messages.Exists, id)
	case len(c.entries) >= c.cfg.MaxServers:
		c.mu.Unlock()
		return mcperr.New(mcperr.InvalidArgument, EntryForm.Messages.Full, c.cfg.MaxServers)
	}
	c.mu.Unlock()
	e, err := c.newEntry(id, sc)
	if err != nil {
		return err
	}
	var dup bool
	c.update(func() {
		if c.closed || c.entries[id] != nil || len(c.entries) >= c.cfg.MaxServers {
			dup = true
			return
		}
		c.entries[id] = e
	})
	if dup {
		_ = e.srv.Close()
		return mcperr.New(mcperr.InvalidArgument, "catalog: server %q could not be added (added concurrently, or the catalog is full or closed)", id)
	}
	return nil
}

// Remove closes the server's session and drops it from the catalog.
func (c *Catalog) Remove(id string) error {
	e, err := c.lookup(id)
	if err != nil {
		return err
	}
	c.update(func() {
		if c.entries[id] == e {
			delete(c.entries, id)
			c.renamed = true
			e.gen++
			e.state = mcpclient.StateClosed
			e.changedLocked()
			c.emitLocked(EventStatusChange, StatusChange{ID: id, Status: Status{State: string(mcpclient.StateClosed), Breaker: e.br.state, Title: e.cfg.Title, Description: e.cfg.Description}})
		}
	})
	return e.srv.Close()
}

// disconnecter is implemented by servers that can end their session and
// still connect again later ([FromClient]'s adapter). Others are closed on
// Disable and made anew by the Factory on Enable.
type disconnecter interface {
	Disconnect()
}

// Disable turns the server off: its session ends, its tools leave the
// list, and calls routed to it resolve with a text saying it is off. The
// entry stays, with state "disabled". A required server
// ([ServerConfig.Required]) is refused with invalid_argument.
func (c *Catalog) Disable(id string) error {
	e, err := c.lookup(id)
	if err != nil {
		return err
	}
	if e.cfg.Required {
		return mcperr.New(mcperr.InvalidArgument, "catalog: server %q is required by the page (required: true) and cannot be disabled", id)
	}
	var srv Server
	c.update(func() {
		if !c.current(e) || !e.enabled {
			return
		}
		e.enabled = false
		e.parked = false
		e.gen++
		e.avail = false
		e.changedLocked()
		srv = e.srv
	})
	if srv == nil {
		return nil
	}
	if d, ok := srv.(disconnecter); ok {
		d.Disconnect()
		return nil
	}
	err = srv.Close()
	c.mu.Lock()
	if e.srv == srv {
		e.state = mcpclient.StateClosed
	}
	c.mu.Unlock()
	return err
}

// Enable turns a disabled server on again and clears the decline latch and
// the breaker: it is a user action. The server connects when next needed.
func (c *Catalog) Enable(id string) error {
	e, err := c.lookup(id)
	if err != nil {
		return err
	}
	return c.enable(e, true)
}

// enable turns e on; a user action (userAction) also clears the decline
// latch, the breaker and the backoff.
func (c *Catalog) enable(e *entry, userAction bool) error {
	var old Server
	c.mu.Lock()
	if !c.current(e) {
		c.mu.Unlock()
		return nil
	}
	if _, keeps := e.srv.(disconnecter); !e.enabled && !keeps {
		old = e.srv
	}
	c.mu.Unlock()
	if old != nil {
		if err := c.makeServer(e, old); err != nil {
			return err
		}
	}
	c.update(func() {
		if !c.current(e) {
			return
		}
		if !e.enabled {
			e.enabled = true
			e.gen++
		}
		if userAction {
			c.userActionLocked(e)
		}
		e.changedLocked()
	})
	return nil
}

// userActionLocked forgets what a user action overrides: the decline
// latch, the breaker, the reconnect backoff and the authrequired already
// fired.
func (c *Catalog) userActionLocked(e *entry) {
	e.latched = false
	if e.state == mcpclient.StateDeclined {
		e.state = mcpclient.StateIdle
	}
	e.err, e.cause = nil, nil
	e.notified = false
	e.connFails = 0
	e.nextTry = time.Time{}
	e.br.reset(c.now())
}

// Authorize signs in to the server and connects it: call it from a user
// action (it may open a sign-in window). It clears the decline latch first;
// on success the server's tools join the list. Its error is the sign-in's
// (declined when the user said no; the latch is set again then).
func (c *Catalog) Authorize(ctx context.Context, id string) error {
	e, err := c.lookup(id)
	if err != nil {
		return err
	}
	var srv Server
	var gen int
	c.mu.Lock()
	if !e.enabled {
		c.mu.Unlock()
		return mcperr.New(mcperr.InvalidArgument, "catalog: server %q is disabled; enable it first", id)
	}
	c.mu.Unlock()
	c.update(func() {
		if !c.current(e) {
			return
		}
		c.userActionLocked(e)
		e.gen++
		srv, gen = e.srv, e.gen
	})
	if srv == nil { // closed or removed meanwhile
		if _, err := c.lookup(id); err != nil {
			return err
		}
		return mcperr.New(mcperr.InvalidArgument, "catalog: server %q was replaced meanwhile", id)
	}
	err = srv.Authorize(ctx)
	if err == nil {
		var tools []*mcp.Tool
		tools, err = srv.ListTools(ctx)
		c.update(func() {
			if !c.current(e) || e.gen != gen {
				return
			}
			if err == nil {
				c.setStateLocked(e, mcpclient.StateConnected, nil)
				c.setToolsLocked(e, tools)
				e.avail = true
			}
		})
		if err == nil {
			return nil
		}
	}
	if ctx.Err() != nil {
		return mcperr.Wrap(mcperr.Aborted, ctx.Err(), "catalog: authorize aborted")
	}
	c.update(func() {
		if c.current(e) && e.gen == gen {
			c.failedLocked(e, err, false)
		}
	})
	return err
}
