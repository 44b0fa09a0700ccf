package catalog

import (
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpwasm/mcpwasm/mcpclient"
)

// The types of [Event].
const (
	EventStatusChange = "statuschange" // Data: StatusChange
	EventToolsChanged = "toolschanged" // Data: ToolsChanged
	EventAuthRequired = "authrequired" // Data: AuthRequired
	EventWarning      = "warning"      // Data: Warning
	// EventElicitationComplete: a server says the user finished a URL-mode
	// elicitation (Data: ElicitationComplete).
	EventElicitationComplete = "elicitationcomplete"
	// EventTaskResult: a task a call handed off ended (Data: TaskResult).
	EventTaskResult = "taskresult"
)

// Event is a catalog event; Data is JSON-marshalable.
type Event struct {
	Type string // "statuschange", "toolschanged", "authrequired", "warning", "elicitationcomplete"
	Data any
}

// ElicitationComplete is the Data of an "elicitationcomplete" [Event]: the
// server ID says the user finished its URL-mode elicitation ElicitationID
// (the server's id, the request's elicitationId), so a page can take the
// link away.
type ElicitationComplete struct {
	ID            string `json:"id"`
	ElicitationID string `json:"elicitationId"`
}

// StatusChange is the Data of a "statuschange" [Event]: a server's state,
// tool count or breaker changed.
type StatusChange struct {
	ID     string `json:"id"`
	Status Status `json:"status"`
}

// ToolsChanged is the Data of a "toolschanged" [Event]: the aggregated tool
// list changed, for these servers.
type ToolsChanged struct {
	IDs []string `json:"ids"`
}

// AuthRequired is the Data of an "authrequired" [Event]: the server needs
// the user to sign in; call [Catalog.Authorize] from a user action.
type AuthRequired struct {
	ID string `json:"id"`
	// Declined: the user declined this server's sign-in before, and a
	// call to it wants it now (one event per such call). Nothing waits and
	// no sign-in starts by itself: offer the user a Sign in.
	Declined bool `json:"declined,omitempty"`
}

// TaskResult is the Data of a "taskresult" [Event]: a task that a call
// handed off (see [Config.TaskWait]) ended, with its result or its error.
type TaskResult struct {
	ID     string              `json:"id"`
	TaskID string              `json:"taskId"`
	Tool   string              `json:"tool"` // the exported name the call used
	Result *mcp.CallToolResult `json:"result,omitempty"`
	Error  *mcpclient.Error    `json:"error,omitempty"`
}

// Warning is the Data of a "warning" [Event]: something was left out, for
// example tools beyond MaxToolsPerServer.
type Warning struct {
	ID      string `json:"id"`
	Message string `json:"message"`
}

// update runs fn under the lock, announces what changed, and delivers the
// events after unlocking.
func (c *Catalog) update(fn func()) {
	c.mu.Lock()
	fn()
	c.syncLocked()
	c.mu.Unlock()
	c.flush()
}

// emitLocked queues an event; flush delivers it.
func (c *Catalog) emitLocked(typ string, data any) {
	if c.cfg.OnEvent != nil {
		c.pending = append(c.pending, Event{Type: typ, Data: data})
	}
}

// flush delivers queued events in order, outside the lock. One goroutine
// delivers at a time; events queued meanwhile (even by OnEvent itself) are
// delivered by it too, so OnEvent may call the catalog.
func (c *Catalog) flush() {
	c.mu.Lock()
	if c.draining {
		c.mu.Unlock()
		return
	}
	c.draining = true
	for len(c.pending) > 0 {
		evs := c.pending
		c.pending = nil
		c.mu.Unlock()
		c.deliver(evs)
		c.mu.Lock()
	}
	c.draining = false
	c.mu.Unlock()
}

// deliver calls OnEvent; should it panic, the next flush still delivers.
func (c *Catalog) deliver(evs []Event) {
	defer func() {
		if r := recover(); r != nil {
			c.mu.Lock()
			c.draining = false
			c.mu.Unlock()
			panic(r)
		}
	}()
	for _, ev := range evs {
		c.cfg.OnEvent(ev)
	}
}
