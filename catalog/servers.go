package catalog

import (
	"context"
	"encoding/json"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"golang.org/x/sync/singleflight"

	"github.com/mcpwasm/mcpwasm/mcpclient"
	"github.com/mcpwasm/mcpwasm/mcperr"
)

// Defaults of [Config].
const (
	DefaultMaxServers        = 32
	DefaultMaxToolsPerServer = 128
	DefaultCallTimeout       = 60 * time.Second
	DefaultBreakerFailures   = 3
	DefaultBreakerCooldown   = 30 * time.Second
)

// Reconnect backoff: after a failed connection attempt the next one waits
// backoffBase, doubling per further failure up to backoffMax.
const (
	backoffBase = time.Second
	backoffMax  = 30 * time.Second
)

// connectLimit bounds how many servers [Catalog.Tools] connects at once.
const connectLimit = 4

// The types of [Event].
const (
	EventStatusChange = "statuschange" // Data: StatusChange
	EventToolsChanged = "toolschanged" // Data: ToolsChanged
	EventAuthRequired = "authrequired" // Data: AuthRequired
	EventWarning      = "warning"      // Data: Warning
)

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
}

// Warning is the Data of a "warning" [Event]: something was left out, for
// example tools beyond MaxToolsPerServer.
type Warning struct {
	ID      string `json:"id"`
	Message string `json:"message"`
}

// StateDisabled is the [Status] state of a server the host turned off.
const StateDisabled = "disabled"

// Catalog is many MCP servers behind one tool list: it connects them lazily
// and in parallel, keeps each one's status and circuit breaker, names their
// tools uniquely for a model, and routes a model's tool calls back, turning
// every outcome into a result the model can read. It is safe for concurrent
// use.
type Catalog struct {
	cfg     Config
	life    context.Context // cancelled by Close
	stop    context.CancelFunc
	flights singleflight.Group

	mu        sync.Mutex
	closed    bool
	entries   map[string]*entry
	serial    int                  // instance counter for server events
	names     map[string]toolKey   // exported name → tool, for every known tool
	exported  map[toolKey]string   // the reverse
	listed    []Tool               // what Tools returns
	published map[string]string    // id → signature of its part of listed
	pending   []Event              // events to deliver, in order
	draining  bool                 // a goroutine is delivering pending
	meta      map[string]*mcp.Tool // the meta tools, when enabled
	renamed   bool                 // a tool list changed: names must be assigned again
}

// entry is one server of the catalog. Its fields are guarded by Catalog.mu.
type entry struct {
	id      string
	cfg     ServerConfig
	srv     Server
	serial  int // events from another instance are stale
	gen     int // bumped by disable, enable and authorize: older results are stale
	enabled bool
	latched bool // the user declined: no Connect or Authorize until a user action

	state mcpclient.State
	err   *mcpclient.Error // why the last attempt failed, for Status
	cause error            // the same error, for texts

	tools      []*mcp.Tool // filtered and capped; nil until listed
	toolsVer   int         // bumped when tools change
	stale      bool        // the server announced a tool change
	avail      bool        // the last connect or list succeeded
	refreshing bool
	again      bool // another refresh was asked for while one ran
	schemas    map[string]*jsonschema.Resolved

	notified  bool // authrequired was fired for the current sign-in need
	connFails int  // consecutive failed connection attempts
	nextTry   time.Time
	br        *breaker

	wake chan struct{} // closed and replaced on every change
	last *Status       // the status last announced
}

// New validates cfg and returns a catalog. Nothing connects yet: each
// server connects on the first [Catalog.Tools], [Catalog.ToolsFor],
// [Catalog.CallTool] or [Catalog.ModelCall] that needs it. The Factory is
// called for every server now (it must not connect either).
func New(cfg Config) (*Catalog, error) {
	bad := func(format string, args ...any) error {
		return mcperr.New(mcperr.InvalidArgument, "catalog: "+format, args...)
	}
	if cfg.Factory == nil {
		return nil, bad("Config.Factory is required")
	}
	if cfg.MaxServers <= 0 {
		cfg.MaxServers = DefaultMaxServers
	}
	if cfg.MaxToolsPerServer <= 0 {
		cfg.MaxToolsPerServer = DefaultMaxToolsPerServer
	}
	if cfg.CallTimeout <= 0 {
		cfg.CallTimeout = DefaultCallTimeout
	}
	if cfg.Breaker.Failures <= 0 {
		cfg.Breaker.Failures = DefaultBreakerFailures
	}
	if cfg.Breaker.Cooldown <= 0 {
		cfg.Breaker.Cooldown = DefaultBreakerCooldown
	}
	if cfg.Clock == nil {
		cfg.Clock = realClock{}
	}
	if len(cfg.Servers) > cfg.MaxServers {
		return nil, bad("%d servers configured; at most %d (maxServers) are allowed", len(cfg.Servers), cfg.MaxServers)
	}
	ids := slices.Sorted(maps.Keys(cfg.Servers))
	for _, id := range ids {
		if err := validateServer(id, cfg.Servers[id]); err != nil {
			return nil, err
		}
	}
	c := &Catalog{
		cfg:       cfg,
		entries:   make(map[string]*entry, len(ids)),
		names:     map[string]toolKey{},
		published: map[string]string{},
	}
	c.cfg.Servers = nil // the entries hold them from now on
	c.life, c.stop = context.WithCancel(context.Background())
	if cfg.ServerTools {
		c.meta = metaTools()
	}
	for _, id := range ids {
		e, err := c.newEntry(id, cfg.Servers[id])
		if err != nil {
			c.Close()
			return nil, err
		}
		c.mu.Lock()
		c.entries[id] = e
		c.mu.Unlock()
	}
	c.update(func() {})
	return c, nil
}

type realClock struct{}

func (realClock) Now() time.Time { return time.Now() }

func (c *Catalog) now() time.Time { return c.cfg.Clock.Now() }

// newEntry makes the entry and its server; the caller adds it.
func (c *Catalog) newEntry(id string, sc ServerConfig) (*entry, error) {
	sc.AllowTools = slices.Clone(sc.AllowTools)
	sc.DenyTools = slices.Clone(sc.DenyTools)
	sc.Client = slices.Clone(sc.Client)
	e := &entry{
		id:      id,
		cfg:     sc,
		enabled: sc.Enabled == nil || *sc.Enabled,
		br:      newBreaker(c.cfg.Breaker),
		wake:    make(chan struct{}),
	}
	if err := c.makeServer(e, nil); err != nil {
		return nil, err
	}
	return e, nil
}

// makeServer calls the Factory for e; its events reach onServerEvent.
// With old (Enable remaking a closed server), the new server replaces old
// only while e is current and still holds old: one made for a catalog
// closed or an entry removed meanwhile, or beaten by a concurrent Enable,
// is closed at once instead of left behind.
func (c *Catalog) makeServer(e *entry, old Server) error {
	c.mu.Lock()
	c.serial++
	serial := c.serial
	c.mu.Unlock()
	srv, err := c.cfg.Factory(e.id, e.cfg, func(ev mcpclient.Event) { c.onServerEvent(e, serial, ev) })
	if err != nil {
		return mcperr.Wrap(mcperr.CodeOf(err, mcperr.InvalidArgument), err, "catalog: server "+quote(e.id))
	}
	if srv == nil {
		return mcperr.New(mcperr.InvalidArgument, "catalog: the Factory returned no server for %q", e.id)
	}
	st := srv.State()
	c.mu.Lock()
	if old != nil && (!c.current(e) || e.srv != old) {
		closed := c.closed
		c.mu.Unlock()
		_ = srv.Close()
		if closed {
			return errClosed
		}
		return nil
	}
	e.srv, e.serial, e.state = srv, serial, st
	c.mu.Unlock()
	return nil
}

func quote(s string) string { b, _ := json.Marshal(s); return string(b) }

// errClosed is what every method returns once the catalog is closed.
var errClosed = mcperr.New(mcperr.Closed, "catalog: the catalog is closed; create a new one")

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

// current reports whether e is still the catalog's entry for its id.
func (c *Catalog) current(e *entry) bool { return !c.closed && c.entries[e.id] == e }

// contributes reports whether e's tools are in the aggregated list.
func (e *entry) contributes() bool {
	return e.enabled && !e.latched && e.avail && e.tools != nil && e.br.state != BreakerOpen
}

// changedLocked wakes everything waiting on e.
func (e *entry) changedLocked() {
	close(e.wake)
	e.wake = make(chan struct{})
}

// syncLocked rebuilds the name table and the aggregated list, and queues a
// statuschange for every server whose status differs from the one last
// announced and one toolschanged for the servers whose part of the list
// changed. Comparing with what was announced makes each event fire exactly
// once per change, however many paths lead to it.
func (c *Catalog) syncLocked() {
	ids := slices.Sorted(maps.Keys(c.entries))
	if c.renamed || c.exported == nil {
		c.renamed = false
		var keys []toolKey
		for _, id := range ids {
			for _, t := range c.entries[id].tools {
				keys = append(keys, toolKey{id, t.Name})
			}
		}
		var reserved []string
		for name := range c.meta {
			reserved = append(reserved, name)
		}
		c.exported = assignNames(keys, reserved)
		c.names = make(map[string]toolKey, len(c.exported))
		for k, name := range c.exported {
			c.names[name] = k
		}
	}
	c.listed = c.listed[:0:0]
	parts := make(map[string]string, len(ids))
	for _, id := range ids {
		e := c.entries[id]
		if !e.contributes() {
			continue
		}
		// A server's part changes when its tools do or when their names do.
		sig := []string{strconv.Itoa(e.toolsVer)}
		for _, t := range e.tools {
			name := c.exported[toolKey{id, t.Name}]
			c.listed = append(c.listed, Tool{Name: name, ServerID: id, Tool: t})
			sig = append(sig, name)
		}
		parts[id] = strings.Join(sig, "\x00")
	}
	for _, name := range slices.Sorted(maps.Keys(c.meta)) {
		c.listed = append(c.listed, Tool{Name: name, Tool: c.meta[name]})
	}
	for _, id := range ids {
		e := c.entries[id]
		st := c.statusLocked(e)
		if e.last == nil || !sameStatus(*e.last, st) {
			e.last = &st
			c.emitLocked(EventStatusChange, StatusChange{ID: id, Status: st})
		}
	}
	var changed []string
	for id := range parts {
		if c.published[id] != parts[id] {
			changed = append(changed, id)
		}
	}
	for id := range c.published {
		if _, ok := parts[id]; !ok {
			changed = append(changed, id)
		}
	}
	if len(changed) > 0 {
		slices.Sort(changed)
		c.published = parts
		c.emitLocked(EventToolsChanged, ToolsChanged{IDs: changed})
	}
}

func sameStatus(a, b Status) bool {
	ea, eb := a.Error, b.Error
	a.Error, b.Error = nil, nil
	if a != b {
		return false
	}
	if ea == nil || eb == nil {
		return ea == eb
	}
	return *ea == *eb
}

// statusLocked reports e.
func (c *Catalog) statusLocked(e *entry) Status {
	st := Status{
		State:       string(e.state),
		Breaker:     e.br.state,
		Title:       e.cfg.Title,
		Description: e.cfg.Description,
	}
	switch {
	case !e.enabled:
		st.State = StateDisabled
	case e.latched:
		st.State = string(mcpclient.StateDeclined)
	}
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

// IDs returns the ids of the servers, sorted.
func (c *Catalog) IDs() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Sorted(maps.Keys(c.entries))
}

// Server returns the [Server] of id (for a server made by [FromClient],
// [ClientOf] gives its client).
func (c *Catalog) Server(id string) (Server, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries[id]
	if !ok {
		return nil, false
	}
	return e.srv, true
}

// Config returns the configuration of server id.
func (c *Catalog) Config(id string) (ServerConfig, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries[id]
	if !ok {
		return ServerConfig{}, false
	}
	return e.cfg, true
}

func (c *Catalog) lookup(id string) (*entry, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil, errClosed
	}
	e, ok := c.entries[id]
	if !ok {
		return nil, mcperr.New(mcperr.InvalidArgument, "catalog: there is no server %q", id)
	}
	return e, nil
}

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
		return mcperr.New(mcperr.InvalidArgument, "catalog: server %q exists; remove it first", id)
	case len(c.entries) >= c.cfg.MaxServers:
		c.mu.Unlock()
		return mcperr.New(mcperr.InvalidArgument, "catalog: the catalog holds %d servers already, the most allowed (maxServers)", c.cfg.MaxServers)
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
// entry stays, with state "disabled".
func (c *Catalog) Disable(id string) error {
	e, err := c.lookup(id)
	if err != nil {
		return err
	}
	var srv Server
	c.update(func() {
		if !c.current(e) || !e.enabled {
			return
		}
		e.enabled = false
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

// Close closes every server. Later calls fail with an error coded closed;
// calls waiting for a sign-in end with it too.
func (c *Catalog) Close() error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil
	}
	c.closed = true
	var srvs []Server
	for _, e := range c.entries {
		if e.srv != nil {
			srvs = append(srvs, e.srv)
		}
		e.changedLocked()
	}
	c.mu.Unlock()
	if c.stop != nil {
		c.stop()
	}
	var first error
	for _, s := range srvs {
		if err := s.Close(); err != nil && first == nil {
			first = err
		}
	}
	return first
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
	kept, cut := filterTools(e.cfg, tools, c.cfg.MaxToolsPerServer)
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
	e.tools = kept
	e.toolsVer++
	e.schemas = nil
	c.renamed = true
	e.changedLocked()
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
			if e.state != mcpclient.StateClosed {
				e.state = mcpclient.StateFailed
			}
		}
		e.changedLocked()
	}
}

// backoff is the wait before the next connection attempt after n failed
// ones in a row: exponential from backoffBase, capped at backoffMax.
func backoff(n int) time.Duration {
	d := backoffBase
	for i := 1; i < n && d < backoffMax; i++ {
		d *= 2
	}
	return min(d, backoffMax)
}
