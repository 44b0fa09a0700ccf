package catalog

import "github.com/mcpwasm/mcpwasm/mcpclient"

// StateDisabled is the [Status] state of a server the host turned off.
const StateDisabled = "disabled"

// statusLocked reports e.
func (c *Catalog) statusLocked(e *entry) Status {
	st := Status{
		State:       string(e.state),
		Breaker:     e.br.state,
		Title:       e.cfg.Title,
		Description: e.cfg.Description,
		Required:    e.cfg.Required,
	}
	switch {
	case !e.enabled:
		st.State = StateDisabled
	case e.latched:
		st.State = string(mcpclient.StateDeclined)
	case e.parked:
		st.State = string(mcpclient.StateIdle) // also while its session closes
	}
	st.Idle = e.parked && e.enabled
	st.PendingSignIn = e.signInWaits > 0
	if e.contributes() {
		st.Tools = len(e.tools)
	}
	if e.br.state == BreakerOpen {
		st.RetryAt = e.br.retryAt.UnixMilli()
	}
	if st.State != string(mcpclient.StateConnected) && st.State != StateDisabled && e.err != nil {
		er := *e.err
		st.Error = &er
	}
	return st
}

// Status reports the server id; false when there is none.
func (c *Catalog) Status(id string) (Status, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries[id]
	if !ok {
		return Status{}, false
	}
	return c.statusLocked(e), true
}

// Statuses reports every server, by id.
func (c *Catalog) Statuses() map[string]Status {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make(map[string]Status, len(c.entries))
	for id, e := range c.entries {
		out[id] = c.statusLocked(e)
	}
	return out
}
