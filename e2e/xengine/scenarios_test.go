package xengine

import (
	"context"
	"fmt"
	"testing"

	"github.com/mcpwasm/mcpwasm/devkit/devserver"
	"github.com/mcpwasm/mcpwasm/e2e/engine"
)

// startLogin creates window.c for the protected server with clientOpts
// and starts c.authorize() in a user gesture; the outcome lands in
// window.result.
func (w *world) startLogin(clientOpts string) {
	w.t.Helper()
	w.eval(fmt.Sprintf(`void (window.c = mcp.client(%q, %s))`, w.MCPURL, clientOpts), nil)
	w.startAuthorize()
}

// startAuthorize starts window.c's authorize() in a user gesture; the
// outcome lands in window.result.
func (w *world) startAuthorize() {
	w.t.Helper()
	w.eval(`void (window.result = null)`, nil)
	if err := w.win.Gesture(w.ctx, `c.authorize().then(() => { result = { ok: true, state: c.state }; },
		(e) => { result = { error: { name: e.name, code: e.code, message: e.message + (e.detail ? " — " + e.detail : "") }, state: c.state }; })`); err != nil {
		w.t.Fatalf("gesture: %v", err)
	}
}

// awaitLogin waits for window.result.
func (w *world) awaitLogin() loginResult {
	w.t.Helper()
	var r loginResult
	w.eval(`(async () => {
		for (let i = 0; i < 600 && !window.result; i++) await new Promise((r) => setTimeout(r, 50));
		return window.result ?? { state: c.state, error: { code: "test_timeout", message: "authorize() did not settle in 30s" } };
	})()`, &r)
	return r
}

// consentPopup starts a sign-in with clientOpts and returns the popup
// once it shows the consent page; or, when authorize() fails before that
// (an engine's expected failure), how it failed.
func (w *world) consentPopup(clientOpts string) (engine.Window, *loginResult) {
	w.t.Helper()
	return w.consentPopupOf(func() { w.startLogin(clientOpts) })
}

// consentPopupOf runs start, which starts a sign-in from a click, and
// returns the popup once it shows the consent page, or how authorize()
// failed before that. Each wait is bounded (waitFor), so a popup that
// never shows fails the scenario with what the page last did rather than
// at the scenario's deadline.
func (w *world) consentPopupOf(start func()) (engine.Window, *loginResult) {
	w.t.Helper()
	wait, err := w.win.ExpectPopup(w.ctx)
	if err != nil {
		w.t.Fatal(err)
	}
	start()
	failed := func() *loginResult {
		var r loginResult
		if err := w.win.Eval(w.ctx, `window.result ?? {}`, &r); err == nil && r.Error != nil {
			return &r
		}
		return nil
	}
	popups := make(chan engine.Window, 1)
	waitCtx, stopWaiting := context.WithCancel(w.ctx)
	defer stopWaiting()
	go func() {
		p, err := wait(waitCtx)
		if err != nil {
			p = nil
		}
		popups <- p
	}()
	var popup engine.Window
	w.waitFor("the sign-in popup", func() bool {
		select {
		case popup = <-popups:
			return true
		default:
		}
		return failed() != nil
	})
	if popup == nil {
		if r := failed(); r != nil {
			return nil, r
		}
		w.t.Fatalf("no sign-in popup (authorize(): %s)", w.awaitLogin())
	}
	w.track(popup)
	var shown bool
	w.waitFor("the consent page", func() bool {
		_ = popup.Eval(w.ctx, `document.readyState === "complete" && !!document.querySelector("#approve")`, &shown)
		return shown || failed() != nil
	})
	if !shown {
		return nil, failed()
	}
	return popup, nil
}

// popupSignIn signs in through the consent page in a popup (Approve) and
// reports how authorize() settled.
func (w *world) popupSignIn(clientOpts string) loginResult {
	w.t.Helper()
	return w.approve(w.consentPopup(clientOpts))
}

// approve clicks Approve on the consent page in popup and reports how
// authorize() settled; r, when not nil, is how it failed before the
// consent page.
func (w *world) approve(popup engine.Window, r *loginResult) loginResult {
	w.t.Helper()
	if r != nil {
		return *r
	}
	if err := popup.Click(w.ctx, "#approve"); err != nil {
		w.t.Fatalf("approving on the consent page: %v", err)
	}
	return w.awaitLogin()
}

// reloadAndConnect reloads the page, loads mcp.js again and connects
// with the stored grant; it returns the requests that took and the sum
// a tool call computed, and fails the test for any page error so far.
func (w *world) reloadAndConnect(clientOpts string) (map[string]int, float64) {
	w.t.Helper()
	before := w.snapshot()
	if err := w.win.Reload(w.ctx); err != nil {
		w.t.Fatalf("reload: %v", err)
	}
	w.load(w.win)
	var got struct {
		State string  `json:"state"`
		Sum   float64 `json:"sum"`
	}
	w.eval(fmt.Sprintf(`(async () => {
		window.c = mcp.client(%q, %s);
		await c.connect();
		const r = await c.callTool("add", { a: 1, b: 2 });
		return { state: c.state, sum: r.structuredContent.sum };
	})()`, w.MCPURL, clientOpts), &got)
	if got.State != "connected" {
		w.t.Errorf("after reload: state %s; want connected", got.State)
	}
	// Nothing the unloaded page left running (a stream being read, a
	// pending request) may end in an uncaught error.
	w.noPageErrors()
	return w.diff(before), got.Sum
}

// TestStrictCSPPage: under the strict Content-Security-Policy docs/JSAPI.md
// documents, load() starts and a client connects and calls a tool.
func TestStrictCSPPage(t *testing.T) {
	eitherRuntime(t)
	w := newWorld(t, devserver.AuthConfig{})
	w.navigate(w.win, w.PageURL+"/e2e/strict.html")
	w.load(w.win)
	var got struct {
		Runtime string  `json:"runtime"`
		Sum     float64 `json:"sum"`
	}
	w.eval(fmt.Sprintf(`(async () => {
		const c = mcp.client(%q);
		await c.connect();
		return { runtime: mcp.runtime, sum: (await c.callTool("add", { a: 2, b: 3 })).structuredContent.sum };
	})()`, w.OpenURL), &got)
	if got.Sum != 5 {
		t.Errorf("add(2, 3) under the strict CSP = %v (runtime %s)", got.Sum, got.Runtime)
	}
}
