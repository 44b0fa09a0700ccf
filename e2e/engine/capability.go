package engine

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
)

// Capability is something a scenario does to a page from outside it,
// which not every engine's automation protocol offers; the package
// documentation lists each engine's and the fallbacks.
type Capability string

const (
	Preload          Capability = "preload"
	Freeze           Capability = "freeze"
	KillSharedWorker Capability = "kill-shared-worker"
	Quota            Capability = "quota"
	Offline          Capability = "offline"
	// ParallelWindows: several windows (each with storage of its own)
	// driven at once, so that scenarios can run side by side.
	ParallelWindows Capability = "parallel-windows"
)

// ErrUnsupported is what a capability's method returns (wrapped in an
// UnsupportedError) in an engine without it.
var ErrUnsupported = errors.New("engine: not supported by this engine")

// UnsupportedError says which engine lacks which capability and why.
type UnsupportedError struct {
	Engine     string
	Capability Capability
	Why        string
}

func (e *UnsupportedError) Error() string {
	return fmt.Sprintf("%s cannot %s: %s", e.Engine, e.Capability, e.Why)
}

func (e *UnsupportedError) Unwrap() error { return ErrUnsupported }

// lacks says why an engine cannot do a capability, by engine.
var lacks = map[Capability]map[string]string{
	Preload: {
		"webkit": "classic WebDriver has no command to run a script before a page's own",
	},
	Freeze: {
		"firefox": "WebDriver BiDi has no command to freeze a page (Page Lifecycle); only CDP's Page.setWebLifecycleState does",
		"webkit":  "classic WebDriver has no command to freeze a page (Page Lifecycle); only CDP's Page.setWebLifecycleState does",
	},
	KillSharedWorker: {
		"firefox": "WebDriver BiDi cannot close a SharedWorker from outside; only CDP's Target.closeTarget can",
		"webkit":  "classic WebDriver cannot close a SharedWorker from outside; only CDP's Target.closeTarget can",
	},
	Quota: {
		"firefox": "WebDriver BiDi has no command to change an origin's storage quota; only CDP's Storage.overrideQuotaForOrigin does",
		"webkit":  "classic WebDriver has no command to change an origin's storage quota; only CDP's Storage.overrideQuotaForOrigin does",
	},
	Offline: {
		"webkit": "classic WebDriver has no network emulation; take the page offline with SimulateLifecycle and the wire with a server-side fault",
	},
	// WebKit's too: a WebKitWebDriver holds one session, so each window
	// open at once has a driver of its own.
	ParallelWindows: {},
}

// Has reports whether win's engine can do c; when it cannot, why.
func Has(win Window, c Capability) (bool, string) { return Supports(engineOf(win), c) }

// Supports reports whether the named engine can do c; when it cannot, why.
func Supports(name string, c Capability) (bool, string) {
	if why, ok := lacks[c][name]; ok {
		return false, why
	}
	if _, known := lacks[c]; !known {
		return false, fmt.Sprintf("engine: no capability %q", c)
	}
	return true, ""
}

func engineOf(win Window) string {
	switch win.(type) {
	case *cdpTab:
		return "chromium"
	case *bidiWindow:
		return "firefox"
	case *wdWindow:
		return "webkit"
	}
	return "unknown"
}

// Network is a Window whose engine can take the window's network away,
// as a lost connection does: requests fail and navigator.onLine turns
// false (with an offline event), until SetOffline(false).
type Network interface {
	SetOffline(ctx context.Context, offline bool) error
}

var (
	_ Network = (*cdpTab)(nil)
	_ Network = (*bidiWindow)(nil)
)

// SetOffline implements Network with CDP: requests fail
// (Network.emulateNetworkConditionsByRule) and navigator.onLine says so
// (Network.overrideNetworkState), in this tab.
func (w *cdpTab) SetOffline(ctx context.Context, offline bool) error {
	return w.run(ctx, chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		if _, err := cdp.Call(ctx, t, network.Enable, network.EnableParams{}); err != nil {
			return err
		}
		rule := []*network.Conditions{{Offline: offline, DownloadThroughput: -1, UploadThroughput: -1}}
		if _, err := cdp.Call(ctx, t, network.EmulateNetworkConditionsByRule, network.EmulateNetworkConditionsByRuleParams{MatchedNetworkConditions: rule}); err != nil {
			return err
		}
		_, err := cdp.Call(ctx, t, network.OverrideNetworkState, network.OverrideNetworkStateParams{Offline: offline, DownloadThroughput: -1, UploadThroughput: -1})
		return err
	}))
}

// SetOffline implements Network with BiDi's emulation.setNetworkConditions,
// for the window's user context (its tabs and popups too).
func (w *bidiWindow) SetOffline(ctx context.Context, offline bool) error {
	var cond any // null: the network as it is
	if offline {
		cond = map[string]any{"type": "offline"}
	}
	err := w.f.bidi.call(ctx, "emulation.setNetworkConditions", map[string]any{"networkConditions": cond, "userContexts": []string{w.uc}}, nil)
	if err != nil && strings.Contains(err.Error(), "unknown command") {
		return &UnsupportedError{Engine: "firefox", Capability: Offline, Why: "this Firefox's WebDriver BiDi has no emulation.setNetworkConditions: " + err.Error()}
	}
	return err
}

// Lifecycle events a page can be sent by SimulateLifecycle.
const (
	// Hidden: document.hidden turns true and visibilitychange fires,
	// as when the tab goes to the background.
	Hidden = "hidden"
	// Visible undoes Hidden.
	Visible = "visible"
	// Frozen and Resumed fire freeze and resume (Page Lifecycle), as a
	// browser does around a frozen background tab.
	Frozen  = "freeze"
	Resumed = "resume"
	// OfflineEvent and OnlineEvent turn navigator.onLine and fire offline
	// and online on window, as a lost and a found connection do.
	OfflineEvent = "offline"
	OnlineEvent  = "online"
)

// SimulateLifecycle sends the page of win the events a browser sends it
// in each step, in order, with the document state those events announce
// (document.hidden, visibilityState, navigator.onLine) overridden to
// match: the engine-neutral fallback of Freeze and Offline. It reaches
// the code that listens to those events; it stops no timer and no
// request, which only a real Freeze or Offline do.
func SimulateLifecycle(ctx context.Context, win Window, steps ...string) error {
	for _, s := range steps {
		switch s {
		case Hidden, Visible, Frozen, Resumed, OfflineEvent, OnlineEvent:
		default:
			return fmt.Errorf("engine: SimulateLifecycle: unknown step %q", s)
		}
	}
	js := `((steps) => {
		const def = (o, k, v) => Object.defineProperty(o, k, { configurable: true, get: () => v });
		for (const s of steps) {
			switch (s) {
			case "hidden": case "visible":
				def(document, "hidden", s === "hidden");
				def(document, "visibilityState", s);
				document.dispatchEvent(new Event("visibilitychange"));
				break;
			case "freeze": case "resume":
				document.dispatchEvent(new Event(s));
				break;
			case "offline": case "online":
				def(navigator, "onLine", s === "online");
				window.dispatchEvent(new Event(s));
				break;
			}
		}
	})(` + jsStrings(steps) + `)`
	return win.Eval(ctx, js, nil)
}

func jsStrings(ss []string) string {
	out := "["
	for i, s := range ss {
		if i > 0 {
			out += ","
		}
		out += fmt.Sprintf("%q", s)
	}
	return out + "]"
}
