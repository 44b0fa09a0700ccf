package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/dom"
	cdplog "github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/mcpwasm/mcpwasm/devkit/headless"
)

// chromium drives headless Chromium over CDP with chromedp.
type chromium struct{ b *headless.Browser }

func startChromium(ctx context.Context, o Options) (Browser, error) {
	var extra []chromedp.ExecAllocatorOption
	if len(o.ChromiumFeatures) > 0 {
		extra = append(extra, chromedp.Flag("enable-features", strings.Join(o.ChromiumFeatures, ",")))
	}
	b, err := headless.Start(ctx, extra...)
	if err != nil {
		return nil, err
	}
	return &chromium{b: b}, nil
}

func (c *chromium) Name() string    { return "chromium" }
func (c *chromium) Version() string { return c.b.Version }
func (c *chromium) Close() error    { c.b.Close(); return nil }

func (c *chromium) NewWindow(ctx context.Context) (Window, error) {
	return openCDPTab(ctx, c.b.Ctx, chromedp.WithNewBrowserContext())
}

// cdpTab is a Chromium tab; tab is its chromedp context (cancelling it
// closes the tab).
type cdpTab struct {
	tab    context.Context
	cancel context.CancelFunc
	mu     sync.Mutex
	errs   []string
	// preloads are the tab's preload scripts, which the tabs it opens
	// (NewTab) get too, as Firefox's and WebKit's do.
	preloads []string
	// oopifs are the contexts attached to out-of-process iframes.
	oopifs map[target.ID]context.Context
}

func openCDPTab(ctx context.Context, parent context.Context, opts ...chromedp.ContextOption) (*cdpTab, error) {
	tab, cancel := chromedp.NewContext(parent, opts...)
	w := &cdpTab{tab: tab, cancel: cancel}
	// The first action creates (or attaches to) the tab, with the tab's
	// own context: chromedp closes a tab when the context that created it
	// ends.
	stop := context.AfterFunc(ctx, cancel)
	err := chromedp.Do(tab)
	stop()
	if err != nil {
		cancel()
		return nil, err
	}
	_ = chromedp.Listen(tab, func(ev any) {
		var line string
		switch ev := ev.(type) {
		case *runtime.EventConsoleAPICalled:
			if ev.Type != runtime.ConsoleAPICalledTypeError {
				return
			}
			var parts []string
			for _, a := range ev.Args {
				if a.Value != nil {
					parts = append(parts, string(a.Value))
				} else {
					parts = append(parts, a.Description)
				}
			}
			line = "console.error: " + strings.Join(parts, " ")
		case *cdplog.EventEntryAdded:
			// The browser's own reports: a request CORS refused, a
			// blocked resource. A response's HTTP status (a 401
			// challenge) is not an error of the page.
			e := ev.Entry
			if e.Level != cdplog.EntryLevelError || e.Source == cdplog.EntrySourceNetwork {
				return
			}
			line = string(e.Source) + ": " + e.Text
			if e.URL != "" {
				line += " (" + e.URL + ")"
			}
		case *runtime.EventExceptionThrown:
			d := ev.ExceptionDetails
			line = "uncaught: " + d.Text
			if d.Exception != nil && d.Exception.Description != "" {
				line += " " + d.Exception.Description
			}
		default:
			return
		}
		w.mu.Lock()
		w.errs = append(w.errs, line)
		w.mu.Unlock()
	})
	return w, nil
}

// run runs actions in the tab, stopped when ctx ends.
func (w *cdpTab) run(ctx context.Context, actions ...chromedp.Action[chromedp.Void]) error {
	c, cancel := w.with(ctx)
	defer cancel()
	return chromedp.Do(c, actions...)
}

// with is the tab's context, ended when ctx ends.
func (w *cdpTab) with(ctx context.Context) (context.Context, func()) {
	c, cancel := context.WithCancel(w.tab)
	stop := context.AfterFunc(ctx, cancel)
	return c, func() { stop(); cancel() }
}

func (w *cdpTab) Preload(ctx context.Context, src string) error {
	err := w.run(ctx, chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		_, err := cdp.Call(ctx, t, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: src})
		return err
	}))
	if err == nil {
		w.mu.Lock()
		w.preloads = append(w.preloads, src)
		w.mu.Unlock()
	}
	return err
}

func (w *cdpTab) Navigate(ctx context.Context, url string) error {
	return w.run(ctx, chromedp.Navigate(url))
}

func (w *cdpTab) Reload(ctx context.Context) error { return w.run(ctx, chromedp.Reload()) }

func (w *cdpTab) Eval(ctx context.Context, expr string, out any) error {
	c, cancel := w.with(ctx)
	defer cancel()
	s, err := chromedp.Run(c, chromedp.Evaluate[*string](jsonWrap(expr), chromedp.EvalAwaitPromise))
	if err != nil && err != chromedp.ErrJSUndefined {
		if ex, ok := err.(*chromedp.ExceptionError); ok {
			return &JSError{Text: ex.Error()}
		}
		return err
	}
	return decode(s, out)
}

func (w *cdpTab) Gesture(ctx context.Context, expr string) error {
	userGesture := func(p *runtime.EvaluateParams) { t := true; p.UserGesture = &t }
	c, cancel := w.with(ctx)
	defer cancel()
	_, err := chromedp.Run(c, chromedp.Evaluate[json.RawMessage]("void ("+expr+"\n)", userGesture))
	if err != nil && err != chromedp.ErrJSUndefined {
		return err
	}
	return nil
}

func (w *cdpTab) ExpectPopup(ctx context.Context) (Popup, error) {
	bc := chromedp.FromContext(w.tab).BrowserContextID
	// WaitNewTarget also reports changes of targets that exist already
	// (an earlier popup navigating or closing): only a page that did not
	// exist yet is the popup.
	existing, err := chromedp.Targets(w.tab)
	if err != nil {
		return nil, fmt.Errorf("engine: listing the open pages: %w", err)
	}
	known := map[target.ID]bool{}
	for _, info := range existing {
		known[info.TargetID] = true
	}
	popup := func(info *target.Info) bool {
		return info.Type == "page" && info.OpenerID != "" && !known[info.TargetID] && (bc == "" || info.BrowserContextID == bc)
	}
	ch := chromedp.WaitNewTarget(w.tab, popup)
	return func(ctx context.Context) (Window, error) {
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case id, ok := <-ch:
				if !ok {
					return nil, fmt.Errorf("engine: the tab closed before a popup opened")
				}
				return openCDPTab(ctx, w.tab, chromedp.WithTargetID(id))
			case <-tick.C:
				// The target list finds a popup whose event did not come.
				infos, err := chromedp.Targets(w.tab)
				if err != nil {
					continue
				}
				for _, info := range infos {
					if popup(info) {
						return openCDPTab(ctx, w.tab, chromedp.WithTargetID(info.TargetID))
					}
				}
			case <-ctx.Done():
				return nil, fmt.Errorf("engine: no popup opened: %w", ctx.Err())
			}
		}
	}, nil
}

// Click clicks as a person does (mouse events at the element, a user
// gesture), once the page has loaded: before its style sheets apply, the
// element can move between finding it and the click, which then lands
// beside it.
//
// The element is found and measured in one evaluation of a loaded
// document, then clicked at that point: a window opened blank that then
// navigates (a popup on its way to a sign-in page) has a loaded blank
// document first, and a wait for the load made there would let the click
// land on the next document before its style sheets apply.
func (w *cdpTab) Click(ctx context.Context, selector string) error {
	sel, _ := json.Marshal(selector)
	find := `(() => {
		const e = ` + renderedElement + `(document, ` + string(sel) + `);
		if (!e) return null;
		e.scrollIntoView({ block: "center", inline: "center" });
		const r = e.getBoundingClientRect();
		return { x: r.left + r.width / 2, y: r.top + r.height / 2 };
	})()`
	for {
		var at *struct{ X, Y float64 }
		err := w.Eval(ctx, find, &at)
		if err == nil && at != nil {
			return w.run(ctx, chromedp.MouseClickXY(at.X, at.Y))
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("engine: waiting for %s: %w (last: %v)", selector, ctx.Err(), err)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

func (w *cdpTab) Press(ctx context.Context, key string) error {
	if _, err := keyCode(key); err != nil {
		return err
	}
	return w.run(ctx, chromedp.KeyEvent(map[string]string{"Enter": kb.Enter, "Escape": kb.Escape, "Tab": kb.Tab}[key]))
}

func (w *cdpTab) NewTab(ctx context.Context) (Window, error) {
	// A child of this tab's context opens in the same browser context.
	t, err := openCDPTab(ctx, w.tab)
	if err != nil {
		return nil, err
	}
	// A preload script is per target in CDP: the new tab gets this one's.
	w.mu.Lock()
	preloads := append([]string(nil), w.preloads...)
	w.mu.Unlock()
	for _, src := range preloads {
		if err := t.Preload(ctx, src); err != nil {
			t.Close()
			return nil, err
		}
	}
	return t, nil
}

func (w *cdpTab) Errors(context.Context) ([]string, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.errs...), nil
}

func (w *cdpTab) Close() error {
	w.cancel()
	return nil
}

// cdpFrameGroup is the object group of the remote objects EvalIn and
// ClickIn hold, released when they return.
const cdpFrameGroup = "mcpwasm-e2e-frames"

// cdpDoc is a frame's document: the chromedp context of the target the
// frame lives in (the tab's, or an out-of-process iframe's) and, for a
// frame in the target's process but not its top, the document's object
// in the frame's main world (empty: the target's own top document).
type cdpDoc struct {
	ctx   context.Context
	obj   runtime.RemoteObjectID
	oopif target.ID // the out-of-process iframe's target, if any
}

// call calls fn (a function declaration) on the document, in its frame's
// main world; the expression Evaluate takes for the top document of a
// target.
func (d cdpDoc) call(fn string, byValue, gesture bool, args ...*runtime.CallArgument) (*runtime.RemoteObject, error) {
	var res *runtime.RemoteObject
	var exc *runtime.ExceptionDetails
	if d.obj == "" {
		// A function called on the target's global object: Evaluate of
		// its call.
		var a []string
		for _, arg := range args {
			a = append(a, string(arg.Value))
		}
		r, err := chromedp.Call(d.ctx, runtime.Evaluate, runtime.EvaluateParams{
			Expression:    "(" + fn + ").call(document" + strings.Repeat(",", min(len(a), 1)) + strings.Join(a, ",") + ")",
			ReturnByValue: &byValue, AwaitPromise: ptrTrue(), UserGesture: &gesture, ObjectGroup: cdpFrameGroup,
		})
		if err != nil {
			return nil, err
		}
		res, exc = r.Result, r.ExceptionDetails
	} else {
		r, err := chromedp.Call(d.ctx, runtime.CallFunctionOn, runtime.CallFunctionOnParams{
			FunctionDeclaration: fn, ObjectID: d.obj, Arguments: args,
			ReturnByValue: &byValue, AwaitPromise: ptrTrue(), UserGesture: &gesture, ObjectGroup: cdpFrameGroup,
		})
		if err != nil {
			return nil, err
		}
		res, exc = r.Result, r.ExceptionDetails
	}
	if exc != nil {
		return nil, &JSError{Text: (&chromedp.ExceptionError{ExceptionDetails: exc}).Error()}
	}
	return res, nil
}

func ptrTrue() *bool { t := true; return &t }

// frame finds the document of the frames, one level at a time: the
// iframe element, found in the document before, describes its frame; an
// in-process frame's content document resolves to an object in that
// frame's main world; an out-of-process frame (a target of its own, whose
// id is the frame's) is attached to. release releases the objects in
// every target used.
func (w *cdpTab) frame(ctx context.Context, frames []string) (d cdpDoc, release func(), err error) {
	c, cancel := w.with(ctx)
	d = cdpDoc{ctx: c}
	used := []context.Context{c}
	release = func() {
		for _, u := range used {
			_, _ = chromedp.Call(u, runtime.ReleaseObjectGroup, runtime.ReleaseObjectGroupParams{ObjectGroup: cdpFrameGroup})
		}
		cancel()
	}
	for i, sel := range frames {
		where := strings.Join(frames[:i+1], " > ")
		arg, _ := json.Marshal(sel)
		el, err := d.call(`function (s) { return this.querySelector(s); }`, false, false, &runtime.CallArgument{Value: arg})
		if err != nil {
			w.forget(d, err)
			return d, release, fmt.Errorf("engine: frame %s: %w", where, err)
		}
		if el.ObjectID == "" {
			return d, release, fmt.Errorf("engine: frame %s: no such element", where)
		}
		desc, err := chromedp.Call(d.ctx, dom.DescribeNode, dom.DescribeNodeParams{ObjectID: el.ObjectID, Depth: ptrInt(0), Pierce: ptrTrue()})
		if err != nil {
			return d, release, fmt.Errorf("engine: frame %s: %w", where, err)
		}
		n := desc.Node
		switch {
		case n == nil || n.FrameID == "":
			return d, release, fmt.Errorf("engine: frame %s: not an iframe with a frame", where)
		case n.ContentDocument != nil:
			doc, err := chromedp.Call(d.ctx, dom.ResolveNode, dom.ResolveNodeParams{BackendNodeID: n.ContentDocument.BackendNodeID, ObjectGroup: cdpFrameGroup})
			if err != nil {
				return d, release, fmt.Errorf("engine: frame %s: its document: %w", where, err)
			}
			d.obj = doc.Object.ObjectID
		default:
			oop, err := w.oopif(ctx, target.ID(n.FrameID))
			if err != nil {
				return d, release, fmt.Errorf("engine: frame %s (out of process): %w", where, err)
			}
			oc, ocancel := context.WithCancel(oop)
			stop := context.AfterFunc(ctx, ocancel)
			prev := release
			release = func() { prev(); stop(); ocancel() }
			used = append(used, oc)
			d = cdpDoc{ctx: oc, oopif: target.ID(n.FrameID)}
		}
	}
	return d, release, nil
}

func ptrInt(n int64) *int64 { return &n }

// oopif returns the chromedp context attached to the out-of-process
// iframe id, attaching to it the first time (the context ends with the
// tab, detaching without closing anything).
func (w *cdpTab) oopif(ctx context.Context, id target.ID) (context.Context, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if c, ok := w.oopifs[id]; ok {
		if c.Err() == nil {
			return c, nil
		}
		delete(w.oopifs, id)
	}
	c, cancel := chromedp.NewContext(w.tab, chromedp.WithTargetID(id), chromedp.WithDetachOnCancel())
	// The context must outlive ctx: ctx only bounds the attaching.
	stop := context.AfterFunc(ctx, cancel)
	err := chromedp.Do(c)
	if !stop() || err != nil {
		cancel()
		if err == nil {
			err = ctx.Err()
		}
		return nil, err
	}
	if w.oopifs == nil {
		w.oopifs = map[target.ID]context.Context{}
	}
	w.oopifs[id] = c
	return c, nil
}

// forget drops the attachment to d's out-of-process iframe when a call
// there failed other than by an exception (the iframe went away or moved
// to another process): the next call attaches again.
func (w *cdpTab) forget(d cdpDoc, err error) {
	var js *JSError
	if d.oopif == "" || errors.As(err, &js) {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if c, ok := w.oopifs[d.oopif]; ok {
		delete(w.oopifs, d.oopif)
		_ = chromedp.Cancel(c)
	}
}

// EvalIn evaluates in the frame's main world (a function called on its
// document, or Evaluate in an out-of-process frame's own target).
func (w *cdpTab) EvalIn(ctx context.Context, frames []string, expr string, out any) error {
	if len(frames) == 0 {
		return w.Eval(ctx, expr, out)
	}
	d, release, err := w.frame(ctx, frames)
	defer release()
	if err != nil {
		return err
	}
	r, err := d.call("function () { return "+jsonWrap(expr)+"; }", true, false)
	if err != nil {
		w.forget(d, err)
		return err
	}
	if r.Type == runtime.RemoteObjectTypeUndefined || len(r.Value) == 0 {
		return nil
	}
	var s *string
	if err := json.Unmarshal(r.Value, &s); err != nil {
		return fmt.Errorf("engine: EvalIn's result %.200s: %w", r.Value, err)
	}
	return decode(s, out)
}

// ClickIn waits until the frames resolve and the element is rendered in
// the loaded document of the last, then clicks it (el.click() from a call
// with a user gesture: transient activation in that frame).
func (w *cdpTab) ClickIn(ctx context.Context, frames []string, selector string) error {
	if len(frames) == 0 {
		return w.Click(ctx, selector)
	}
	arg, _ := json.Marshal(selector)
	for {
		d, release, err := w.frame(ctx, frames)
		var r *runtime.RemoteObject
		if err == nil {
			r, err = d.call(`function (s) { return !!`+renderedElement+`(this, s); }`, true, false, &runtime.CallArgument{Value: arg})
		}
		if err != nil {
			w.forget(d, err)
		}
		if err == nil && string(r.Value) == "true" {
			_, err = d.call(`function (s) { this.querySelector(s).click(); }`, true, true, &runtime.CallArgument{Value: arg})
			release()
			return err
		}
		release()
		select {
		case <-ctx.Done():
			return fmt.Errorf("engine: waiting for %s: %w (last: %v)", strings.Join(append(append([]string(nil), frames...), selector), " > "), ctx.Err(), err)
		case <-time.After(50 * time.Millisecond):
		}
	}
}
