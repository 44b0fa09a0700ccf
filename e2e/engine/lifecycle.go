package engine

import (
	"context"
	"fmt"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"
)

// Lifecycle is what an engine can do to a page's life beyond what a page
// can do to itself (the Freeze and KillSharedWorker capabilities): only
// Chromium has it (CDP); a scenario asks with Has or a type assertion
// and takes the fallback the package documentation gives elsewhere.
type Lifecycle interface {
	// Freeze freezes the page as a browser does to a background tab
	// (Page Lifecycle "frozen": no tasks, no timers, freeze event first);
	// Resume makes it active again (resume event).
	Freeze(ctx context.Context) error
	Resume(ctx context.Context) error
	// KillSharedWorkers closes every SharedWorker whose script URL is
	// scriptURL, as the browser does when it ends one (its pages get no
	// message); it returns how many it closed.
	KillSharedWorkers(ctx context.Context, scriptURL string) (int, error)
}

var _ Lifecycle = (*cdpTab)(nil)

func (w *cdpTab) Freeze(ctx context.Context) error {
	return w.lifecycle(ctx, page.SetWebLifecycleStateStateFrozen)
}
func (w *cdpTab) Resume(ctx context.Context) error {
	return w.lifecycle(ctx, page.SetWebLifecycleStateStateActive)
}

func (w *cdpTab) lifecycle(ctx context.Context, state page.SetWebLifecycleStateState) error {
	return w.run(ctx, chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		_, err := cdp.Call(ctx, t, page.SetWebLifecycleState, page.SetWebLifecycleStateParams{State: state})
		return err
	}))
}

func (w *cdpTab) KillSharedWorkers(ctx context.Context, scriptURL string) (int, error) {
	c, cancel := w.with(ctx)
	defer cancel()
	infos, err := chromedp.Targets(c)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, ti := range infos {
		if ti.Type != "shared_worker" || ti.URL != scriptURL {
			continue
		}
		if _, err := chromedp.CallBrowser(c, target.CloseTarget, target.CloseTargetParams{TargetID: ti.TargetID}); err != nil {
			return n, fmt.Errorf("closing the shared worker %s: %w", ti.URL, err)
		}
		n++
	}
	return n, nil
}
