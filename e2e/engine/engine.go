// Package engine drives a browser engine for the cross-engine e2e suite
// (e2e/xengine) through one small interface: Chromium over CDP (chromedp),
// Firefox over WebDriver BiDi (its built-in Remote Agent, no geckodriver)
// and WebKitGTK over W3C classic WebDriver (WebKitWebDriver and MiniBrowser
// under Xvfb). A scenario is written once against Window and runs in each.
//
// # Capabilities
//
// What only some engines can do to a page from outside it is a
// Capability: an optional interface a Window may implement (for Preload,
// an error), and a fallback a scenario takes where the engine lacks it:
//
//	capability        interface                    chromium  firefox  webkit  fallback
//	Preload           Window.Preload               CDP       BiDi     —       the script in the page (boot.js)
//	Freeze            Lifecycle.Freeze, Resume     CDP       —        —       SimulateLifecycle: the page's own events
//	KillSharedWorker  Lifecycle.KillSharedWorkers  CDP       —        —       the worker ends itself (a page test hook)
//	Quota             QuotaSetter                  CDP       —        —       none: the scenario skips
//	Offline           Network.SetOffline           CDP       BiDi     —       SimulateLifecycle(OfflineEvent) for the
//	                                                                          page, a server-side fault for the wire
//	ParallelWindows   Browser.NewWindow, at once   yes       yes      yes     scenarios run one after another
//
// A scenario asks with Has(win, c) (or Supports(engine, c)), which says why not in words for
// t.Skipf or t.Logf; a method that cannot do what it is asked returns an
// error matching ErrUnsupported. A new capability adds its interface, a
// row here and its reasons in capability.go's lacks.
package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
)

// Browser is a running engine.
type Browser interface {
	// Name is "chromium", "firefox" or "webkit".
	Name() string
	// Version is what the engine says of itself.
	Version() string
	// NewWindow opens a window on about:blank with storage of its own
	// (a browser context, a user context, or a browser session).
	NewWindow(ctx context.Context) (Window, error)
	// Close stops the engine and removes its profile.
	Close() error
}

// Window is one top-level browsing context.
type Window interface {
	// Preload runs src at the start of every document this window (and
	// the windows it opens) loads from now on, before the page's own
	// scripts; ErrNoPreload when the engine cannot (classic WebDriver).
	Preload(ctx context.Context, src string) error
	// Navigate loads url and waits for its load event.
	Navigate(ctx context.Context, url string) error
	// Reload reloads the page and waits for its load event.
	Reload(ctx context.Context) error
	// Eval evaluates a JavaScript expression, awaits it when it is a
	// promise, and decodes its JSON value into out (when out is not nil).
	Eval(ctx context.Context, expr string, out any) error
	// Gesture evaluates expr with transient user activation, as if a
	// person clicked (so window.open may open a popup); it does not wait
	// for a promise expr returns.
	Gesture(ctx context.Context, expr string) error
	// ExpectPopup arms a wait for the next window this window opens;
	// call it before the action that opens one.
	ExpectPopup(ctx context.Context) (Popup, error)
	// Click waits until an element matching the CSS selector is in the
	// page, then clicks it (with user activation).
	Click(ctx context.Context, selector string) error
	// EvalIn evaluates expr like Eval, in the document of a nested frame:
	// frames are CSS selectors of iframe elements, the first in this
	// window's document, each next one in the document of the frame before.
	// The frames may be cross-origin, and sandboxed with an opaque origin.
	EvalIn(ctx context.Context, frames []string, expr string, out any) error
	// ClickIn waits until an element matching selector is in that frame's
	// document, then clicks it with user activation.
	ClickIn(ctx context.Context, frames []string, selector string) error
	// Press presses and releases a key ("Enter", "Escape", "Tab") as a
	// person does, at the element that has the focus: the browser's own
	// handling follows (a form's implicit submission, a dialog's close
	// watcher, the focus order).
	Press(ctx context.Context, key string) error
	// NewTab opens another tab sharing this window's storage and its
	// preload scripts.
	NewTab(ctx context.Context) (Window, error)
	// Errors returns the page errors and console errors so far.
	Errors(ctx context.Context) ([]string, error)
	// Close closes the window.
	Close() error
}

// Popup waits for the window ExpectPopup armed for.
type Popup func(ctx context.Context) (Window, error)

// ErrNoPreload says the engine cannot run a script before a page's own.
var ErrNoPreload = errors.New("engine: this engine cannot preload scripts; put the script in the page")

// Names lists the engines, in the order make test runs them.
var Names = []string{"chromium", "firefox", "webkit"}

// FromEnv returns MCPWASM_E2E_ENGINE, "chromium" when unset.
func FromEnv() string {
	if n := os.Getenv("MCPWASM_E2E_ENGINE"); n != "" {
		return n
	}
	return "chromium"
}

// Options are opt-in changes to how an engine starts, for the scenarios
// that need them; every other scenario runs in the engine as it ships.
type Options struct {
	// ChromiumFeatures are Chromium features to turn on
	// (--enable-features), such as "WebMCP"; the other engines have no
	// such switch and start as they are.
	ChromiumFeatures []string
}

// Start starts the named engine.
func Start(ctx context.Context, name string) (Browser, error) {
	return StartWith(ctx, name, Options{})
}

// StartWith starts the named engine with o.
func StartWith(ctx context.Context, name string, o Options) (Browser, error) {
	switch name {
	case "chromium":
		return startChromium(ctx, o)
	case "firefox":
		return startFirefox(ctx)
	case "webkit":
		return startWebKit(ctx)
	}
	return nil, fmt.Errorf("engine: unknown engine %q (want one of %s)", name, strings.Join(Names, ", "))
}

// keyCodes are the WebDriver key codes (WebDriver §17.4.2) of the keys
// Press takes.
var keyCodes = map[string]string{"Enter": "\uE007", "Escape": "\uE00C", "Tab": "\uE004"}

// keyCode is key's WebDriver code, or an error naming the keys there are.
func keyCode(key string) (string, error) {
	c, ok := keyCodes[key]
	if !ok {
		return "", fmt.Errorf("engine: Press takes Enter, Escape or Tab, not %q", key)
	}
	return c, nil
}

// keyActions is the WebDriver action sequence (classic and BiDi alike)
// that presses and releases the key whose code is c.
func keyActions(c string) []any {
	return []any{map[string]any{"type": "key", "id": "keyboard", "actions": []any{
		map[string]any{"type": "keyDown", "value": c},
		map[string]any{"type": "keyUp", "value": c},
	}}}
}

// JSError is an exception a script threw or a promise it rejected with.
type JSError struct{ Text string }

func (e *JSError) Error() string { return "JavaScript: " + e.Text }

// jsonWrap makes expr's awaited value a JSON string (or undefined), the
// one result shape every protocol returns the same way.
func jsonWrap(expr string) string {
	return "(async () => { const v = await (" + expr + "\n); return v === undefined ? undefined : JSON.stringify(v); })()"
}

// renderedElement is a JavaScript function (doc, selector) giving the
// element of a loaded document that a click can reach, or null: before the
// load (its style sheets) an element can still move, and one that is not
// rendered has no box.
const renderedElement = `((doc, s) => { const e = doc.readyState === "complete" && doc.querySelector(s); return e && e.getClientRects().length > 0 ? e : null; })`

// decode decodes a JSON string (absent for undefined) into out.
func decode(s *string, out any) error {
	if out == nil || s == nil {
		return nil
	}
	return json.Unmarshal([]byte(*s), out)
}
