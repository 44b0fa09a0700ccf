package catalog

import (
	"encoding/json"
	"slices"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpwasm/mcpwasm/mcpclient"
	"github.com/mcpwasm/mcpwasm/mcperr"
)

// contributes reports whether e's tools are in the aggregated list.
func (e *entry) contributes() bool {
	return e.enabled && !e.latched && e.avail && e.tools != nil && e.br.state != BreakerOpen
}

// changedLocked wakes everything waiting on e.
func (e *entry) changedLocked() {
	close(e.wake)
	e.wake = make(chan struct{})
}

// onServerEvent takes a server's own events: state changes and tool list
// changes.
func (c *Catalog) onServerEvent(e *entry, serial int, ev mcpclient.Event) {
	switch ev.Type {
	case "statechange":
		var sc mcpclient.StateChange
		switch d := ev.Data.(type) {
		case mcpclient.StateChange:
			sc = d
		case *mcpclient.StateChange:
			if d == nil {
				return
			}
			sc = *d
		default:
			return
		}
		load := false
		c.update(func() {
			if c.current(e) && e.serial == serial {
				c.setStateLocked(e, sc.State, sc.Error)
				// Connected by a sign-in elsewhere (another client of the
				// server, another tab): list its tools now, not at the
				// next Tools call.
				load = sc.State == mcpclient.StateConnected && c.wantsLoadLocked(e)
			}
		})
		if load {
			go func() { _ = c.load(c.life, e, false) }()
		}
	case "toolschanged":
		c.mu.Lock()
		ok := c.current(e) && e.serial == serial
		if ok {
			e.stale = true
		}
		c.mu.Unlock()
		if ok {
			go c.refreshTools(e)
		}
	case "elicitationcomplete":
		if d, ok := ev.Data.(mcpclient.ElicitationComplete); ok {
			c.update(func() {
				if c.current(e) && e.serial == serial {
					c.emitLocked(EventElicitationComplete, ElicitationComplete{ID: e.id, ElicitationID: d.ElicitationID})
				}
			})
		}
	}
}

// setStateLocked records a state of e's server.
func (c *Catalog) setStateLocked(e *entry, s mcpclient.State, err *mcpclient.Error) {
	e.state = s
	if err != nil {
		e.err = err
	}
	switch s {
	case mcpclient.StateConnected:
		e.err = nil
		e.notified = false
		if e.parked && !e.parking {
			e.parked = false // connected by a sign-in
			c.usedLocked(e)
		}
	case mcpclient.StateNeedsAuth:
		e.avail = false
		if !e.notified && e.enabled && !e.latched {
			e.notified = true
			c.emitLocked(EventAuthRequired, AuthRequired{ID: e.id})
		}
	case mcpclient.StateDeclined:
		e.avail = false
		e.latched = true
		e.notified = false
	}
	e.changedLocked()
}

// setToolsLocked stores the tools e's server listed, after its allow and
// deny lists and the cap (with a warning when the cap cut some).
func (c *Catalog) setToolsLocked(e *entry, tools []*mcp.Tool) {
	// By name, whatever order the server listed them in: the cap keeps
	// the same tools and a model sees one order in every request.
	tools = slices.Clone(tools)
	slices.SortStableFunc(tools, func(a, b *mcp.Tool) int { return strings.Compare(toolName(a), toolName(b)) })
	kept, viewOnly, cut := filterTools(e.cfg, tools, c.cfg.MaxToolsPerServer)
	if !sameTools(e.viewOnly, viewOnly) {
		c.warnUILocked(e, viewOnly)
		e.viewOnly = viewOnly
		e.schemas = nil // compiled by tool name: a view-only tool's may have changed
	}
	if kept == nil {
		kept = []*mcp.Tool{}
	}
	if cut > 0 {
		c.emitLocked(EventWarning, Warning{ID: e.id, Message: say(
			"server %q offers %d tools; only the first %d are used (maxToolsPerServer)", e.id, len(kept)+cut, len(kept))})
	}
	e.stale = false
	if e.tools != nil && sameTools(e.tools, kept) {
		return // listed again, unchanged
	}
	c.warnUILocked(e, kept)
	e.tools = kept
	e.toolsVer++
	e.schemas = nil
	c.renamed = true
	e.changedLocked()
}

// warnUILocked warns about each of tools (of e's server) whose view is not
// a ui:// resource.
func (c *Catalog) warnUILocked(e *entry, tools []*mcp.Tool) {
	for _, t := range tools {
		if _, err := mcpclient.UIOf(t); err != nil {
			c.emitLocked(EventWarning, Warning{ID: e.id, Message: say("server %q: %v", e.id, err)})
		}
	}
}

// sameTools reports whether two tool lists say the same (as JSON).
func sameTools(a, b []*mcp.Tool) bool {
	if len(a) != len(b) {
		return false
	}
	ja, err1 := json.Marshal(a)
	jb, err2 := json.Marshal(b)
	return err1 == nil && err2 == nil && string(ja) == string(jb)
}

// failedLocked records that connecting, listing or signing in to e failed
// with err; connecting says whether a connection attempt failed (which
// backs off).
func (c *Catalog) failedLocked(e *entry, err error, connecting bool) {
	ae := mcpclient.AsError(err)
	switch mcperr.CodeOf(err, mcperr.Protocol) {
	case mcperr.AuthRequired, mcperr.PopupBlocked, mcperr.InsufficientScope:
		c.setStateLocked(e, mcpclient.StateNeedsAuth, ae)
	case mcperr.Declined:
		c.setStateLocked(e, mcpclient.StateDeclined, ae)
	case mcperr.Aborted:
		if e.state == mcpclient.StateConnecting {
			e.state = mcpclient.StateIdle
		}
	default:
		e.err, e.cause = ae, err
		e.avail = false
		if connecting {
			e.connFails++
			e.nextTry = c.now().Add(backoff(e.connFails))
			// A client that reconnects by itself says so, rather than failed.
			if e.state != mcpclient.StateClosed && e.state != mcpclient.StateReconnecting {
				e.state = mcpclient.StateFailed
			}
		}
		e.changedLocked()
	}
}

// Reconnect backoff: after a failed connection attempt the next one waits
// backoffBase, doubling per further failure up to backoffMax.
const (
	backoffBase = time.Second
	backoffMax  = 30 * time.Second
)

// backoff is the wait before the next connection attempt after n failed
// ones in a row: exponential from backoffBase, capped at backoffMax.
func backoff(n int) time.Duration {
	d := backoffBase
	for i := 1; i < n && d < backoffMax; i++ {
		d *= 2
	}
	return min(d, backoffMax)
}

// toolName is t's name; "" for nil (filterTools drops those).
func toolName(t *mcp.Tool) string {
	if t == nil {
		return ""
	}
	return t.Name
}
