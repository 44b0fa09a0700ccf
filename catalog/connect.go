package catalog

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"golang.org/x/sync/errgroup"

	"github.com/mcpwasm/mcpwasm/mcpclient"
	"github.com/mcpwasm/mcpwasm/mcperr"
)

// Reasons a server was not asked, so that a call can say why.
var (
	errDisabled = errors.New("catalog: the server is disabled")
	errLatched  = errors.New("catalog: the sign-in was declined or cancelled")
	errNeedAuth = errors.New("catalog: the server needs a sign-in")
	errGone     = errors.New("catalog: the server was removed")
)

// waitError: the last connection attempt failed and the next waits until.
type waitError struct {
	until time.Time
	last  string
}

func (e *waitError) Error() string {
	return fmt.Sprintf("catalog: reconnecting after %s (%s)", e.until.Format(time.RFC3339), e.last)
}

// openError: the breaker is open until retryAt (zero while a probe runs).
type openError struct {
	retryAt time.Time
}

func (e *openError) Error() string { return "catalog: the circuit breaker is open" }

// connectLimit bounds how many servers [Catalog.Tools] connects at once.
const connectLimit = 4

// Tools returns the aggregated tool list: the tools of every enabled server
// that is connected, under their exported names, then the meta tools when
// Config.ServerTools is set. Servers not connected yet are connected first,
// in parallel (at most four at a time), without any user interaction: one
// that needs a sign-in gets state needs_auth, fires authrequired once, and
// is left out, as are servers that are declined, disabled, failing or
// behind an open breaker; their Status says why. Its only errors are
// aborted (ctx) and closed.
func (c *Catalog) Tools(ctx context.Context) ([]Tool, error) {
	tools, _, err := c.tools(ctx)
	return tools, err
}

// tools is [Catalog.Tools] with the generation of the list it returns
// (see [exportCache]).
func (c *Catalog) tools(ctx context.Context) ([]Tool, uint64, error) {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil, 0, errClosed
	}
	var todo []*entry
	for _, e := range c.entries {
		if c.wantsLoadLocked(e) {
			todo = append(todo, e)
		}
	}
	c.mu.Unlock()
	slices.SortFunc(todo, func(a, b *entry) int { return compareStrings(a.id, b.id) })
	var g errgroup.Group
	g.SetLimit(connectLimit)
	for _, e := range todo {
		g.Go(func() error {
			_ = c.load(ctx, e, false) // the server's status records any failure
			return nil
		})
	}
	_ = g.Wait()
	if err := ctx.Err(); err != nil {
		return nil, 0, mcperr.Wrap(mcperr.Aborted, err, "catalog: aborted")
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil, 0, errClosed
	}
	if len(c.listed) == 0 {
		return []Tool{}, c.exports.gen, nil // a list, also as JSON
	}
	return slices.Clone(c.listed), c.exports.gen, nil
}

func compareStrings(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// wantsLoadLocked reports whether Tools should try e: enabled, not declined,
// not waiting for a sign-in, and not already connected with fresh tools.
func (c *Catalog) wantsLoadLocked(e *entry) bool {
	if !e.enabled || e.latched || e.parked {
		return false
	}
	switch e.state {
	case mcpclient.StateNeedsAuth, mcpclient.StateAuthorizing, mcpclient.StateDeclined:
		return false
	}
	return e.state != mcpclient.StateConnected || e.tools == nil || e.stale || !e.avail || e.br.state != BreakerClosed
}

// load makes sure e is connected and its tools are listed. When the breaker
// is not closed, a connected server with its tools is probed with a list
// request, unless forCall: then the call itself is the probe. Concurrent
// loads of one server share one attempt, which runs detached from any one
// caller's ctx (bounded by CallTimeout and Close) so that a caller giving up
// does not fail the others; each caller stops waiting when its ctx ends.
func (c *Catalog) load(ctx context.Context, e *entry, forCall bool) error {
	c.mu.Lock()
	// One key per server instance and generation, whatever the mode: a
	// joiner of the other mode gets the same connection.
	key := fmt.Sprintf("%s\x00%d\x00%d", e.id, e.serial, e.gen)
	if forCall {
		c.usedLocked(e)
	}
	c.mu.Unlock()
	ch := c.flights.DoChan(key, func() (any, error) { return nil, c.doLoad(e, forCall) })
	select {
	case r := <-ch:
		return r.Err
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (c *Catalog) doLoad(e *entry, forCall bool) error {
	c.mu.Lock()
	if err := c.awaitParkedLocked(c.life, e); err != nil {
		c.mu.Unlock()
		return errClosed
	}
	if err := c.loadBlockedLocked(e); err != nil {
		c.mu.Unlock()
		return err
	}
	now := c.now()
	// A session closed for idleness is connected again, its tools listed
	// anew (changes announced meanwhile were not heard).
	connect := e.state != mcpclient.StateConnected || e.parked
	list := connect || e.tools == nil || e.stale || !e.avail
	if !list && (forCall || e.br.state == BreakerClosed) {
		c.mu.Unlock()
		return nil
	}
	if connect && now.Before(e.nextTry) {
		msg := "connection failed"
		if e.cause != nil {
			msg = errText(e.cause)
		}
		c.mu.Unlock()
		return &waitError{until: e.nextTry, last: msg}
	}
	p, ok := e.br.allow(now)
	if !ok {
		retry := e.br.retryAt
		c.mu.Unlock()
		return &openError{retryAt: retry}
	}
	srv, gen := e.srv, e.gen
	e.loading++    // not idle while it connects and lists
	c.syncLocked() // announces half_open when this is the probe
	c.mu.Unlock()
	c.flush()

	ctx, cancel := context.WithTimeout(c.life, c.cfg.CallTimeout)
	defer cancel()
	var err error
	if connect {
		err = srv.Connect(ctx)
	}
	var tools []*mcp.Tool
	if err == nil {
		tools, err = srv.ListTools(ctx)
	}
	c.update(func() {
		e.loading--
		c.loadedLocked(e, gen, p, connect, tools, err)
	})
	if err == nil && c.isClosed() {
		return errClosed
	}
	return err
}

// loadBlockedLocked is why doLoad must not contact e's server, nil when it
// may: the catalog is closed, e was removed, or e's state (disabled,
// declined, waiting for a sign-in) rules a connect out. The errors are the
// sentinels gate reads to say why. c.mu must be held.
func (c *Catalog) loadBlockedLocked(e *entry) error {
	if c.closed {
		return errClosed
	}
	if c.entries[e.id] != e {
		return errGone
	}
	switch {
	case !e.enabled:
		return errDisabled
	case e.latched || e.state == mcpclient.StateDeclined:
		return errLatched
	case e.state == mcpclient.StateNeedsAuth || e.state == mcpclient.StateAuthorizing:
		return errNeedAuth
	}
	return nil
}

// loadedLocked records the outcome of doLoad's attempt (generation gen,
// breaker permit p) on e: the breaker's report, then either the failure or
// the connected state and the listed tools. Nothing is recorded when the
// catalog closed, e was removed or its generation moved on (disable,
// enable, authorize) meanwhile: the result is stale. c.mu must be held.
func (c *Catalog) loadedLocked(e *entry, gen int, p permit, connect bool, tools []*mcp.Tool, err error) {
	if !c.current(e) || e.gen != gen {
		return
	}
	e.br.report(p, classify(err), c.now())
	if connect {
		// Connected or not, it is no longer parked: a failure shows, and
		// Tools retries as for any failed server.
		e.parked = false
	}
	if err != nil {
		c.failedLocked(e, err, connect)
		return
	}
	e.connFails, e.nextTry = 0, time.Time{}
	if connect {
		c.usedLocked(e)
	}
	if e.state != mcpclient.StateConnected {
		c.setStateLocked(e, mcpclient.StateConnected, nil)
	}
	c.setToolsLocked(e, tools)
	e.avail = true
}

func (c *Catalog) isClosed() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.closed
}

// classify sorts an error for the breaker: transport failures, 5xx,
// timeouts, network and closed connections count; answers that show the
// server alive (tool errors, refused arguments, protocol errors) and the
// user's own doing (sign-in, abort) do not.
func classify(err error) outcomeKind {
	if err == nil {
		return success
	}
	switch mcperr.CodeOf(err, mcperr.Protocol) {
	case mcperr.Network, mcperr.Timeout, mcperr.Closed:
		return failure
	case mcperr.HTTP:
		if s := mcperr.StatusOf(err); s == 0 || s >= 500 {
			return failure
		}
	}
	return neutral
}

// refreshTools lists e's tools again after the server announced a change,
// and publishes the new list. Announcements during a refresh make it run
// once more, so the last list wins.
func (c *Catalog) refreshTools(e *entry) {
	c.mu.Lock()
	if e.refreshing {
		e.again = true
		c.mu.Unlock()
		return
	}
	e.refreshing = true
	c.mu.Unlock()
	for {
		c.mu.Lock()
		e.again = false
		ok := c.current(e) && e.enabled && !e.latched && e.state == mcpclient.StateConnected && e.br.state == BreakerClosed
		srv, gen := e.srv, e.gen
		c.mu.Unlock()
		if ok {
			ctx, cancel := context.WithTimeout(c.life, c.cfg.CallTimeout)
			tools, err := srv.ListTools(ctx)
			cancel()
			c.update(func() {
				if c.current(e) && e.gen == gen && err == nil {
					c.setToolsLocked(e, tools)
				}
			})
		}
		c.mu.Lock()
		if !e.again || !ok {
			e.refreshing = false
			c.mu.Unlock()
			return
		}
		c.mu.Unlock()
	}
}

// ToolsFor returns [Catalog.Tools] in a provider's tool format (see
// [Export]) when the servers' tools fit Config.ToolBudget; over it, the
// meta tools catalog_search_tools and catalog_call_tool (and those of
// Config.ServerTools) instead. It is ToolsForConversation with no tools
// used yet.
func (c *Catalog) ToolsFor(ctx context.Context, f Format) (json.RawMessage, error) {
	return c.ToolsForConversation(ctx, f, nil)
}

// ToolsForConversation is [Catalog.ToolsFor] for a conversation that
// already called the tools named in used (exported names; see
// [UsedTools]): over the budget, those tools' full definitions follow the
// meta tools, so the model can call them again directly.
func (c *Catalog) ToolsForConversation(ctx context.Context, f Format, used []string) (json.RawMessage, error) {
	if _, err := formatOf(f); err != nil {
		return nil, err
	}
	tools, gen, err := c.tools(ctx)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	b, ok := c.exports.get(gen, f, used)
	c.mu.Unlock()
	if ok {
		return b, nil
	}
	b, err = Export(f, c.budgeted(tools, used))
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	c.exports.put(gen, f, used, b)
	c.mu.Unlock()
	return bytes.Clone(b), nil
}
