package catalog

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpwasm/mcpwasm/mcpclient"
	"github.com/mcpwasm/mcpwasm/mcperr"
)

// outcome is what became of one call: the server's (or a meta tool's)
// result, or the catalog's own text saying why there is none.
type outcome struct {
	name string // exported name as called
	id   string // server id; "" for unknown names and meta tools
	tool string // the server's tool name
	res  *mcp.CallToolResult
	text string // when res is nil: what happened, from the text table
	ui   *mcpclient.ToolUI
}

// CallTool calls a tool by its exported name with args (a JSON object;
// empty or null for none). Every outcome is a result: when the server
// answered, its result as it came (IsError when the tool failed); otherwise
// an IsError result whose text says what happened and what a model should
// do (the server needs a sign-in, was declined, is disabled, is paused by
// its breaker, refused approval, timed out, could not be reached; the name
// is unknown; the arguments are not JSON or fail the tool's input schema).
// The only errors are aborted (ctx ended), closed (the catalog is) and
// invalid_argument (a negative opts.Timeout).
func (c *Catalog) CallTool(ctx context.Context, name string, args json.RawMessage, opts CallOptions) (*mcp.CallToolResult, error) {
	o, err := c.call(ctx, name, args, opts)
	if err != nil {
		return nil, err
	}
	if o.res != nil {
		return o.res, nil
	}
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: o.text}}, IsError: true}, nil
}

// ModelCall runs one tool call as a model asked for it: args is the
// arguments' JSON text (empty for none). It resolves as [Catalog.CallTool]
// does and renders the outcome for the model (see [ToolResult]). The only
// errors are aborted, closed and invalid_argument (a negative opts.Timeout).
func (c *Catalog) ModelCall(ctx context.Context, name, args string, opts CallOptions) (ToolResult, error) {
	o, err := c.call(ctx, name, []byte(args), opts)
	if err != nil {
		return ToolResult{}, err
	}
	return o.render(), nil
}

func aborted(err error) error { return mcperr.Wrap(mcperr.Aborted, err, "catalog: aborted") }

func (c *Catalog) call(ctx context.Context, name string, raw []byte, opts CallOptions) (outcome, error) {
	o := outcome{name: name}
	if c.isClosed() {
		return o, errClosed
	}
	if err := c.checkCallOptions(opts); err != nil {
		return o, err
	}
	if err := ctx.Err(); err != nil {
		return o, aborted(err)
	}
	if strings.TrimSpace(name) == "" {
		o.text = textMissingName
		return o, nil
	}
	switch name {
	case MetaSearchTools:
		return c.callSearch(ctx, raw)
	case MetaCallTool:
		return c.callThrough(ctx, raw, opts)
	}
	if t, ok := c.meta[name]; ok {
		return c.callMeta(ctx, t, raw, opts)
	}
	e, tool := c.resolve(name)
	if e == nil {
		o.text = say(textUnknownTool, name)
		return o, nil
	}
	o.id, o.tool = e.id, tool
	text, err := c.gate(ctx, e, name, opts)
	if err != nil || text != "" {
		o.text = text
		return o, err
	}
	// Connected and listed: the name must now name one of its tools.
	c.mu.Lock()
	k, ok := c.names[name]
	var t *mcp.Tool
	if ok && k.id == e.id && c.entries[e.id] == e {
		for _, x := range e.tools {
			if x.Name == k.tool {
				t = x
			}
		}
	}
	display := displayName(e.id, e.cfg)
	url := e.cfg.URL
	c.mu.Unlock()
	if t == nil {
		o.text = say(textUnknownTool, name)
		return o, nil
	}
	o.tool = t.Name
	o.ui, _ = mcpclient.UIOf(t) // a view that is not ui:// was warned about when listed
	return c.run(ctx, e, t, o, raw, ApprovalRequest{ID: e.id, Tool: t.Name, Name: name, Annotations: t.Annotations}, display, url, opts)
}

// run is what a model's call and a view's share once the tool t is known:
// the arguments (raw) are checked against its schema, the approval
// (req, with the arguments added) decides, and the call goes out. Texts
// name the call as o.name; display is the server's name, url its URL.
func (c *Catalog) run(ctx context.Context, e *entry, t *mcp.Tool, o outcome, raw []byte, req ApprovalRequest, display, url string, opts CallOptions) (outcome, error) {
	args, instance, text := parseArgs(o.name, raw)
	if text != "" {
		o.text = text
		return o, nil
	}
	if problem := c.checkArgs(e, t, instance); problem != "" {
		o.text = say(textSchema, display, o.name, problem)
		return o, nil
	}
	req.Args = args
	d, err := c.approve(ctx, req, url, t, opts)
	if err != nil {
		return o, err
	}
	if !d.Approved {
		o.text = refusalText(d, display, o.name)
		return o, nil
	}
	return c.invoke(ctx, e, t, o, args, opts)
}

// checkCallOptions refuses options that would otherwise silently become
// defaults.
func (c *Catalog) checkCallOptions(opts CallOptions) error {
	if opts.Timeout < 0 {
		return mcperr.New(mcperr.InvalidArgument, "catalog: CallOptions.Timeout must not be negative; use 0 for Config.CallTimeout (%v)", c.cfg.CallTimeout)
	}
	return nil
}

// readOnly reports whether the server annotated t readOnlyHint: true. The
// annotation is the server's claim; it only ever spares asking about t
// itself.
func readOnly(t *mcp.Tool) bool { return t.Annotations != nil && t.Annotations.ReadOnlyHint }

// resolve finds the server and tool an exported name routes to: from the
// name table, or, for a server whose tools are not known yet, from the name
// starting with its sanitized id and "_" (the longest such id), so that a
// call can say why that server cannot answer or connect it and look again.
func (c *Catalog) resolve(name string) (*entry, string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if k, ok := c.names[name]; ok {
		if e := c.entries[k.id]; e != nil {
			return e, k.tool
		}
	}
	var best *entry
	for id, e := range c.entries {
		if e.tools != nil {
			continue
		}
		prefix := baseName(id, "")
		if strings.HasPrefix(name, prefix) && (best == nil || len(prefix) > len(baseName(best.id, ""))) {
			best = e
		}
	}
	if best == nil {
		return nil, ""
	}
	return best, strings.TrimPrefix(name, baseName(best.id, ""))
}

// gate brings e to a state where a call can go out: connected with its tools
// listed. When it cannot, text says why. With opts.AuthWait, a server that
// needs a sign-in is waited for (after opts.OnAuthRequired, once) until the
// host signs in through Authorize, the user declines, or the wait ends.
func (c *Catalog) gate(ctx context.Context, e *entry, name string, opts CallOptions) (string, error) {
	var timer *time.Timer
	defer func() {
		if timer != nil {
			timer.Stop()
			c.update(func() {
				e.signInWaits--
				e.changedLocked()
			})
		}
	}()
	for {
		c.mu.Lock()
		if c.closed {
			c.mu.Unlock()
			return "", errClosed
		}
		if c.entries[e.id] != e {
			c.mu.Unlock()
			return say(textUnknownTool, name), nil
		}
		display := displayName(e.id, e.cfg)
		wake := e.wake
		if text := c.refusalLocked(e, name, display); text != "" {
			declined := e.enabled && (e.latched || e.state == mcpclient.StateDeclined)
			c.mu.Unlock()
			if declined && timer == nil { // once per call: not after this call's own wait ended declined
				c.askAgain(e.id, opts)
			}
			return text, nil
		}
		if e.state == mcpclient.StateNeedsAuth || e.state == mcpclient.StateAuthorizing {
			c.mu.Unlock()
			text, again, err := c.waitForSignIn(ctx, e, wake, &timer, display, name, opts)
			if again {
				continue
			}
			return text, err
		}
		c.mu.Unlock()
		err := c.load(ctx, e, true)
		if err == nil {
			return "", nil
		}
		text, again, err := c.loadFailure(ctx, e, name, display, err)
		if again {
			continue
		}
		return text, err
	}
}

// waitForSignIn is gate's step for server id when it needs a sign-in.
// Without opts.AuthWait the call ends with the text that says so. The
// first time, it starts the wait in *timer and tells the host (once per
// call); after that it waits for a change of the server (wake), the end of
// the wait, the call or the catalog. again: gate looks at the server anew.
// While it waits, the server's status says a sign-in is pending.
func (c *Catalog) waitForSignIn(ctx context.Context, e *entry, wake <-chan struct{}, timer **time.Timer, display, name string, opts CallOptions) (text string, again bool, err error) {
	if opts.AuthWait <= 0 {
		return say(textNeedsAuth, display, name), false, nil
	}
	if *timer == nil {
		*timer = time.NewTimer(opts.AuthWait)
		c.update(func() { e.signInWaits++ }) // gate's defer takes it back
		if opts.OnAuthRequired != nil {
			opts.OnAuthRequired(AuthRequired{ID: e.id})
		}
		return "", true, nil
	}
	select {
	case <-wake:
		return "", true, nil
	case <-(*timer).C:
		return say(textNeedsAuth, display, name), false, nil
	case <-ctx.Done():
		return "", false, aborted(ctx.Err())
	case <-c.life.Done():
		return "", false, errClosed
	}
}

// askAgain tells the host, for a call to server id whose sign-in the user
// declined, that the call wanted it (the catalog's authrequired event with
// Declined, and opts.OnAuthRequired): one notice per call, so the page can
// offer a Sign in. Nothing opens a sign-in or waits for one: the decline
// latch holds until the user's own action.
func (c *Catalog) askAgain(id string, opts CallOptions) {
	ev := AuthRequired{ID: id, Declined: true}
	c.mu.Lock()
	c.emitLocked(EventAuthRequired, ev)
	c.mu.Unlock()
	c.flush()
	if opts.OnAuthRequired != nil {
		opts.OnAuthRequired(ev)
	}
}

// refusalLocked is gate's text for a server that is disabled or declined,
// "" otherwise: those states end the call at once, without a connect
// attempt. c.mu must be held.
func (c *Catalog) refusalLocked(e *entry, name, display string) string {
	switch {
	case !e.enabled:
		if c.meta[MetaEnableServer] != nil {
			return say(textDisabledMeta, display, name, e.id)
		}
		return say(textDisabled, display, name)
	case e.latched || e.state == mcpclient.StateDeclined:
		return say(textDeclined, display, name)
	}
	return ""
}

// loadFailure turns the error of gate's connect attempt into the call's
// outcome: the text saying why the server cannot answer, or aborted or
// closed. again is set when the entry's recorded state now explains the
// failure (disabled, declined, needs a sign-in), so that gate looks at the
// entry once more instead of reporting the connect error itself.
func (c *Catalog) loadFailure(ctx context.Context, e *entry, name, display string, err error) (text string, again bool, _ error) {
	if ctx.Err() != nil {
		return "", false, aborted(ctx.Err())
	}
	var wait *waitError
	var open *openError
	switch {
	case errors.Is(err, errClosed) || c.isClosed():
		return "", false, errClosed
	case errors.Is(err, errGone):
		return say(textUnknownTool, name), false, nil
	case errors.Is(err, errDisabled), errors.Is(err, errLatched), errors.Is(err, errNeedAuth):
		return "", true, nil // the state says why; the loop reads it
	case errors.As(err, &open):
		return c.openText(e, name, open), false, nil
	case errors.As(err, &wait):
		return say(textReconnectWait, display, name, detail(wait.last), roughly(wait.until.Sub(c.now()))), false, nil
	}
	switch mcperr.CodeOf(err, mcperr.Protocol) {
	case mcperr.AuthRequired, mcperr.PopupBlocked, mcperr.InsufficientScope, mcperr.Declined:
		return "", true, nil // recorded as needs_auth or declined; the loop reads it
	case mcperr.Aborted:
		return "", true, nil // not this call's: the server was disabled while it connected
	}
	return say(textConnectFailed, display, name, errText(err)), false, nil
}

// openText is the text for a call the breaker stopped.
func (c *Catalog) openText(e *entry, name string, open *openError) string {
	display := displayName(e.id, e.cfg)
	if open.retryAt.IsZero() {
		return say(textBreakerProbing, display, name)
	}
	return say(textBreakerOpen, display, name, c.cfg.Breaker.Failures, roughly(open.retryAt.Sub(c.now())))
}

// reopenIfParked marks e used and, when its session was closed for
// idleness while the call waited (for an approval, say), connects it again
// first: a text for the model, or an error, when that fails.
func (c *Catalog) reopenIfParked(ctx context.Context, e *entry, name string, opts CallOptions) (string, error) {
	c.mu.Lock()
	c.usedLocked(e)
	parked := e.parked || e.parking
	c.mu.Unlock()
	if !parked {
		return "", nil
	}
	return c.gate(ctx, e, name, opts)
}

// invoke sends the call through e's breaker.
func (c *Catalog) invoke(ctx context.Context, e *entry, t *mcp.Tool, o outcome, args json.RawMessage, opts CallOptions) (outcome, error) {
	if text, err := c.reopenIfParked(ctx, e, o.name, opts); err != nil || text != "" {
		o.text = text
		return o, err
	}
	c.mu.Lock()
	if c.entries[e.id] != e || c.closed {
		closed := c.closed
		c.mu.Unlock()
		if closed {
			return o, errClosed
		}
		o.text = say(textUnknownTool, o.name)
		return o, nil
	}
	p, ok := e.br.allow(c.now())
	retry := e.br.retryAt
	srv, gen := e.srv, e.gen
	display := displayName(e.id, e.cfg)
	c.syncLocked()
	c.mu.Unlock()
	c.flush()
	if !ok {
		o.text = c.openText(e, o.name, &openError{retryAt: retry})
		return o, nil
	}
	timeout := opts.Timeout
	if timeout <= 0 {
		timeout = c.cfg.CallTimeout
	}
	cctx, untrack := c.track(ctx, e.id, timeout, opts)
	wait := min(c.cfg.TaskWait, timeout/2)
	cctx = mcpclient.WithTaskWait(cctx, wait, func(end mcpclient.TaskEnd) { c.taskEnded(e.id, o.name, end) })
	res, err := srv.CallTool(cctx, t.Name, args, opts.OnProgress)
	untrack()
	if running := (*mcpclient.TaskRunning)(nil); errors.As(err, &running) {
		o.res = &mcp.CallToolResult{
			Content: []mcp.Content{&mcp.TextContent{Text: say(textTaskRunning, display, o.name, running.Task.TaskID, wait.Round(time.Second))}},
			Meta:    mcp.Meta{"io.modelcontextprotocol/related-task": map[string]any{"taskId": running.Task.TaskID}},
		}
		c.update(func() { c.reportLocked(e, gen, p, classify(nil), nil) })
		return o, nil
	}
	kind := classify(err)
	if err != nil && ctx.Err() != nil {
		kind = neutral
	}
	c.update(func() { c.reportLocked(e, gen, p, kind, err) })
	switch {
	case err == nil && res != nil:
		o.res = res
		return o, nil
	case err == nil:
		o.text = say(textServerError, display, o.name, "no result")
		return o, nil
	case ctx.Err() != nil:
		return o, aborted(ctx.Err())
	case c.isClosed():
		return o, errClosed
	}
	o.text = callFailureText(display, o.name, timeout, err)
	return o, nil
}

// taskEnded tells the page how a task a call of name (on server id)
// handed off ended.
func (c *Catalog) taskEnded(id, name string, end mcpclient.TaskEnd) {
	tr := TaskResult{ID: id, TaskID: end.Task.TaskID, Tool: name, Result: end.Result}
	if end.Err != nil {
		tr.Result, tr.Error = nil, mcpclient.AsError(end.Err)
	}
	c.update(func() { c.emitLocked(EventTaskResult, tr) })
}

// reportLocked tells e's breaker how a call it allowed (p) went, and
// moves e to signed out or declined when the call says so; a report about
// an entry replaced or reconnected since (gen) is dropped.
func (c *Catalog) reportLocked(e *entry, gen int, p permit, kind outcomeKind, err error) {
	if !c.current(e) || e.gen != gen {
		return
	}
	e.br.report(p, kind, c.now())
	switch mcperr.CodeOf(err, mcperr.Protocol) {
	case mcperr.AuthRequired, mcperr.PopupBlocked:
		c.setStateLocked(e, mcpclient.StateNeedsAuth, mcpclient.AsError(err))
	case mcperr.Declined:
		c.setStateLocked(e, mcpclient.StateDeclined, mcpclient.AsError(err))
	}
	if kind == failure {
		e.err = mcpclient.AsError(err)
	}
}

// callFailureText is the text for a call the server did not answer with a
// result (err is not nil): what went wrong, by the error's code, and what a
// model should do about it. timeout is the call's deadline, quoted when it
// passed.
func callFailureText(display, name string, timeout time.Duration, err error) string {
	switch mcperr.CodeOf(err, mcperr.Protocol) {
	case mcperr.Timeout:
		return say(textTimeout, display, name, roughly(timeout))
	case mcperr.AuthRequired, mcperr.PopupBlocked:
		return say(textNeedsAuth, display, name)
	case mcperr.InsufficientScope:
		return say(textInsufficientScope, display, name)
	case mcperr.Declined:
		return say(textDeclined, display, name)
	case mcperr.InvalidArgument:
		return say(textServerRejected, display, name, errText(err))
	case mcperr.Closed:
		return say(textConnectionLost, display, name, errText(err))
	case mcperr.Network, mcperr.HTTP:
		if b := (*mcperr.Busy)(nil); errors.As(err, &b) {
			return say(textBusy, display, name, b.Status, b.When())
		}
		if cut := (*mcperr.Cut)(nil); errors.As(err, &cut) || mcperr.StatusOf(err) == 404 || errors.Is(err, mcp.ErrSessionMissing) {
			return say(textConnectionLost, display, name, errText(err))
		}
		return say(textUnreachable, display, name, errText(err))
	}
	return say(textServerError, display, name, errText(err))
}

// errText is an error's message for a model: the classified summary for
// transport errors (the causes repeat request details), the whole chain
// otherwise (a server's own error message is what it said), without the
// package prefix and shortened.
func errText(err error) string {
	msg := err.Error()
	var me *mcperr.Error
	if errors.As(err, &me) && me.Msg != "" {
		switch me.Code {
		case mcperr.Network, mcperr.HTTP, mcperr.Timeout, mcperr.Closed:
			msg = me.Msg
		}
	}
	msg = strings.TrimPrefix(msg, "mcp: ")
	msg = strings.TrimPrefix(msg, "catalog: ")
	return detail(msg)
}

// parseArgs reads a call's arguments: empty or null is {}, anything else
// must be a JSON object. text is the model-facing reason when it is not.
func parseArgs(name string, raw []byte) (json.RawMessage, map[string]any, string) {
	t := bytes.TrimSpace(raw)
	if len(t) == 0 || string(t) == "null" {
		return json.RawMessage("{}"), map[string]any{}, ""
	}
	var v any
	if err := json.Unmarshal(t, &v); err != nil {
		return nil, nil, say(textNotJSON, "", name, detail(err.Error()))
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, nil, say(textNotObject, "", name)
	}
	return json.RawMessage(t), m, ""
}
