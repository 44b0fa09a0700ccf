package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"

	"github.com/mcpwasm/mcpwasm/internal/headless"
)

// chromium drives headless Chromium over CDP with chromedp.
type chromium struct{ b *headless.Browser }

func startChromium(ctx context.Context) (Browser, error) {
	b, err := headless.Start(ctx)
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
	ch := chromedp.WaitNewTarget(w.tab, func(info *target.Info) bool {
		return info.Type == "page" && !known[info.TargetID] && (bc == "" || info.BrowserContextID == bc)
	})
	return func(ctx context.Context) (Window, error) {
		select {
		case id, ok := <-ch:
			if !ok {
				return nil, fmt.Errorf("engine: the tab closed before a popup opened")
			}
			return openCDPTab(ctx, w.tab, chromedp.WithTargetID(id))
		case <-ctx.Done():
			return nil, fmt.Errorf("engine: no popup opened: %w", ctx.Err())
		}
	}, nil
}

// Click clicks as a person does (mouse events at the element, a user
// gesture), once the page has loaded: before its style sheets apply, the
// element can move between finding it and the click, which then lands
// beside it.
func (w *cdpTab) Click(ctx context.Context, selector string) error {
	return w.run(ctx,
		chromedp.Poll[chromedp.Void](`document.readyState === "complete"`, chromedp.WithPollingInterval(20*time.Millisecond)),
		chromedp.WaitVisible(chromedp.CSS(selector)), chromedp.Click(chromedp.CSS(selector)))
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
