package xengine

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpwasm/mcpwasm/demo/authserver"
	"github.com/mcpwasm/mcpwasm/devkit/devserver"
	"github.com/mcpwasm/mcpwasm/e2e/engine"
)

// The tab and the clock: a computer that slept past a token's
// expiry, a frozen and resumed tab, a discarded (reloaded) one, and a
// worker runtime the browser killed while tabs use it. Each comes back
// with its grant and without a second sign-in.

// expiredTokensSent counts the MCP server's refusals of an expired access
// token since the authorization server's event n.
func (w *world) expiredTokensSent(since int) int {
	n := 0
	for _, ev := range w.AS.Events()[since:] {
		if ev.Kind == authserver.EventVerify && ev.Err == "invalid_token" && strings.Contains(ev.Detail, "expired") {
			n++
		}
	}
	return n
}

// callAdd calls add(a, b) on window.c of win: the sum, or the error the
// page sees, and the client's state after. The call's own timeout ends a
// hang in seconds, as the page would see it.
func (w *world) callAdd(win engine.Window, a, b int) (sum float64, state string, err *jsErr) {
	w.t.Helper()
	var got struct {
		Sum   float64 `json:"sum"`
		State string  `json:"state"`
		Error *jsErr  `json:"error"`
	}
	// A call that outlives its own timeout is a failure too, said in a
	// minute rather than at the scenario's end.
	ctx, cancel := context.WithTimeout(w.ctx, time.Minute)
	defer cancel()
	evalErr := win.Eval(ctx, fmt.Sprintf(`c.callTool("add", { a: %d, b: %d }, { timeoutMs: 20000 }).then(
		(r) => ({ sum: r.structuredContent.sum, state: c.state }), (e) => ({ ...(%s)(e), state: c.state }))`, a, b, catchJS), &got)
	if evalErr != nil {
		w.t.Fatalf("callTool(add, {%d, %d}) with timeoutMs 20000 did not settle within a minute: %v", a, b, evalErr)
	}
	return got.Sum, got.State, got.Error
}

// TestSleepPastTokenExpiry: the page's wall clock (and the authorization
// server's) jumps two hours past the access token's expiry while the
// page's monotonic clock stands still, as when a laptop sleeps in an
// engine whose performance.now() stops during sleep. The next call
// refreshes exactly once first and succeeds; the MCP server never sees
// the expired token.
func TestSleepPastTokenExpiry(t *testing.T) {
	var skew atomic.Int64 // the authorization server's clock, ahead of real time
	w := newWorld(t, devserver.AuthConfig{
		TokenTTL: time.Hour,
		Now:      func() time.Time { return time.Now().Add(time.Duration(skew.Load())) },
	})
	if !w.signedIn(w.popupSignIn(`{}`)) {
		return
	}
	if sum, state, err := w.callAdd(w.win, 1, 2); sum != 3 || err != nil {
		t.Fatalf("before the sleep: add(1, 2) = %v, state %s, error %v; want 3", sum, state, err)
	}
	before, events := w.snapshot(), len(w.AS.Events())
	const slept = 2 * time.Hour
	skew.Store(int64(slept))
	w.eval(fmt.Sprintf(`mcp._skewClockForTest(%d)`, slept.Milliseconds()), nil)
	var wall int64
	w.eval(`Date.now()`, &wall)
	if ahead := time.Until(time.UnixMilli(wall)); ahead < slept-time.Minute {
		t.Fatalf("the page's clock is %v ahead after the skew; want about %v", ahead.Round(time.Second), slept)
	}
	sum, state, err := w.callAdd(w.win, 40, 2)
	if sum != 42 || err != nil || state != "connected" {
		t.Errorf("after the sleep: add(40, 2) = %v, state %s, error %v; want 42, connected", sum, state, err)
	}
	if n := w.refreshes(); n != 1 {
		t.Errorf("refreshes after one sleep past the expiry = %d; want exactly 1", n)
	}
	if n := w.expiredTokensSent(events); n != 0 {
		t.Errorf("the MCP server refused an expired access token %d times after the sleep; want 0 (the page must refresh before sending it)", n)
	}
	if d := w.diff(before); d["authorize"] != 0 || d["register"] != 0 {
		t.Errorf("after the sleep: %v; want no sign-in (authorize, register)", d)
	}
}

// TestFrozenTabResumesThenReloads: a signed-in tab is frozen and resumed
// (Page Lifecycle), then discarded and brought back (a reload: a
// discarded tab is reloaded when the person returns to it). After each,
// the tool works with the stored grant: no sign-in, no token request.
func TestFrozenTabResumesThenReloads(t *testing.T) {
	w := newWorld(t, devserver.AuthConfig{})
	if !w.signedIn(w.popupSignIn(`{}`)) {
		return
	}
	before := w.snapshot()
	w.eval(`void (window.lifecycle = [], ["freeze", "resume", "visibilitychange"].forEach((k) => document.addEventListener(k, () => lifecycle.push(k))))`, nil)
	// A call in flight across the freeze: its answer comes while the page
	// runs nothing, and must reach it once it runs again.
	w.eval(`void (window.inflight = null, c.callTool("slow", { steps: 4, delayMs: 100 }, { timeoutMs: 20000 }).then(
		(r) => { inflight = { steps: r.structuredContent.steps }; }, (e) => { inflight = { error: e.code + ": " + e.message }; }))`, nil)
	if lc, ok := w.win.(engine.Lifecycle); ok {
		if err := lc.Freeze(w.ctx); err != nil {
			t.Fatalf("freezing the tab: %v", err)
		}
		// Frozen, the page runs nothing: the authorization and MCP
		// servers go on (a refresh or a session may age meanwhile).
		time.Sleep(500 * time.Millisecond)
		if err := lc.Resume(w.ctx); err != nil {
			t.Fatalf("resuming the tab: %v", err)
		}
		var seen string
		w.eval(`lifecycle.filter((k) => k !== "visibilitychange").join(",")`, &seen)
		if seen != "freeze,resume" {
			t.Errorf("the page saw %q; want freeze, resume", seen)
		}
	} else {
		// The library must at least live through the events, and the
		// hidden state, a freeze and a background tab bring.
		_, why := engine.Has(w.win, engine.Freeze)
		t.Logf("%s; the page gets the hidden, freeze, resume and visible steps simulated instead", why)
		if err := engine.SimulateLifecycle(w.ctx, w.win, engine.Hidden, engine.Frozen, engine.Resumed, engine.Visible); err != nil {
			t.Fatalf("simulating a freeze: %v", err)
		}
	}
	var inflight struct {
		Steps float64 `json:"steps"`
		Error string  `json:"error"`
	}
	w.waitFor("the call in flight across the freeze", func() bool {
		_ = w.win.Eval(w.ctx, `window.inflight`, &inflight)
		return inflight.Steps != 0 || inflight.Error != ""
	})
	if inflight.Steps != 4 || inflight.Error != "" {
		t.Errorf("the call in flight across the freeze: steps %v, error %q; want 4", inflight.Steps, inflight.Error)
	}
	if sum, state, err := w.callAdd(w.win, 2, 3); sum != 5 || err != nil || state != "connected" {
		t.Errorf("after freeze and resume: add(2, 3) = %v, state %s, error %v; want 5, connected", sum, state, err)
	}
	if d := w.diff(before); d["authorize"] != 0 || d["token"] != 0 || d["register"] != 0 {
		t.Errorf("after freeze and resume: requests %v; want no sign-in or token request", d)
	}
	reqs, sum := w.reloadAndConnect(`{}`)
	if sum != 3 {
		t.Errorf("add(1, 2) after the reload = %v; want 3", sum)
	}
	for _, k := range []string{"authorize", "token", "register"} {
		if reqs[k] != 0 {
			t.Errorf("the reload: %d %s requests; want 0 (all: %v)", reqs[k], k, reqs)
		}
	}
}

// TestKilledWorkerClientsComeBack: two signed-in tabs share a worker
// runtime (a SharedWorker; where load() picks a dedicated Worker, each
// tab has its own and the first tab's is killed), and the browser kills
// it. A call in flight rejects closed; each of its tabs' clients reports
// failed with an error that says what to do; its next connect() makes it again in a
// new runtime with the stored grant: the tool works, no sign-in, no
// token request.
func TestKilledWorkerClientsComeBack(t *testing.T) {
	w := newWorld(t, devserver.AuthConfig{TokenTTL: time.Hour})
	tabB, _, ok := w.twoTabsSignedIn()
	if !ok {
		return
	}
	tabs := []engine.Window{w.win, tabB}
	var mode, first string
	w.eval(`mcp.runtime`, &mode)
	w.eval(`mcp._runtimeId ?? ""`, &first)
	if mode == "main" {
		// Nothing to kill: each tab runs Go on its own thread, and a tab
		// that goes away takes only itself.
		t.Logf("runtime %q: no worker to kill; checking that both tabs' clients work", mode)
		for i, tab := range tabs {
			if sum, _, err := w.callAdd(tab, i, 1); sum != float64(i+1) || err != nil {
				t.Errorf("tab %d: add(%d, 1) = %v, error %v", i+1, i, sum, err)
			}
		}
		return
	}
	for _, tab := range tabs {
		w.evalIn(tab, `void (window.failed = null, c.addEventListener("statechange", (ev) => {
			if (ev.detail.state === "failed") failed = { code: ev.detail.error?.code, message: ev.detail.error?.message };
		}))`, nil)
	}
	// A dedicated Worker serves one tab: killing the first tab's leaves
	// the second's running (and spares a second start, slow in WebKit).
	killed := tabs
	if mode == "worker" {
		killed = tabs[:1]
	}
	// A call in flight in the first tab when its worker goes.
	w.eval(`new Promise((progressed) => {
		window.pending = null;
		c.callTool("slow", { steps: 100, delayMs: 100 }, { onProgress: () => progressed() }).then(
			() => { pending = { code: "none" }; }, (e) => { pending = { name: e.name, code: e.code, message: e.message }; });
	})`, nil)
	before := w.snapshot()
	lc, cdp := w.win.(engine.Lifecycle)
	switch {
	case cdp && mode == "shared-worker":
		n, err := lc.KillSharedWorkers(w.ctx, w.PageURL+"/worker.js")
		if err != nil || n != 1 {
			t.Fatalf("killing the SharedWorker through CDP: %d closed, %v; want 1", n, err)
		}
	default:
		// Only CDP can kill a worker from outside; here the worker ends
		// itself (close()), telling no tab, which the tabs see the same.
		_, why := engine.Has(w.win, engine.KillSharedWorker)
		if why == "" {
			why = "CDP's kill closes SharedWorkers, not a dedicated Worker"
		}
		t.Logf("runtime %s in %s: the worker ends itself (a test hook calls close() there): %s", mode, browser.Name(), why)
		w.eval(`mcp._killWorkerForTest()`, nil)
	}
	var pending *jsErr
	w.waitFor("the call in flight to settle", func() bool {
		_ = w.win.Eval(w.ctx, `window.pending`, &pending)
		return pending != nil
	})
	if pending.Code != "closed" || pending.Name != "MCPError" {
		t.Errorf("the call in flight when the worker went: %+v; want MCPError closed", pending)
	}
	for i, tab := range killed {
		var failed *jsErr
		w.waitFor(fmt.Sprintf("tab %d's client to see its runtime end", i+1), func() bool {
			_ = tab.Eval(w.ctx, `window.failed`, &failed)
			return failed != nil
		})
		if failed.Code != "closed" || !strings.Contains(failed.Message, "connect()") {
			t.Errorf("tab %d: the client failed with %s %q; want closed, saying to call connect()", i+1, failed.Code, failed.Message)
		}
		if _, _, err := w.callAdd(tab, 1, 1); err == nil || err.Code != "closed" {
			t.Errorf("tab %d: a call before connect() = %+v; want closed", i+1, err)
		}
	}
	ids := make([]string, len(tabs))
	for i, tab := range tabs {
		if i >= len(killed) {
			var failed *jsErr
			w.evalIn(tab, `window.failed`, &failed)
			if failed != nil {
				t.Errorf("tab %d, whose worker lives: its client failed with %s %q; want it untouched", i+1, failed.Code, failed.Message)
			}
		}
		var got struct {
			Sum   float64 `json:"sum"`
			State string  `json:"state"`
			ID    string  `json:"id"`
		}
		w.evalIn(tab, fmt.Sprintf(`(async () => {
			await c.connect();
			const r = await c.callTool("add", { a: %d, b: 10 });
			return { sum: r.structuredContent.sum, state: c.state, id: mcp._runtimeId ?? "" };
		})()`, i), &got)
		if got.Sum != float64(i+10) || got.State != "connected" {
			t.Errorf("tab %d after connect(): add(%d, 10) = %v, state %s; want %d, connected", i+1, i, got.Sum, got.State, i+10)
		}
		ids[i] = got.ID
	}
	if ids[0] == "" || ids[0] == first {
		t.Errorf("the runtime after the kill = %q (before: %q); want a new one", ids[0], first)
	}
	if mode == "shared-worker" && ids[0] != ids[1] {
		t.Errorf("after the kill the tabs run in runtimes %q and %q; want one shared", ids[0], ids[1])
	}
	if d := w.diff(before); d["authorize"] != 0 || d["token"] != 0 || d["register"] != 0 {
		t.Errorf("coming back: requests %v; want no sign-in or token request", d)
	}
}

// TestConnectAtOnceAfterTheWorkerEnds: a connect() made as soon as the
// page hears its worker runtime ended reaches a new runtime. Firefox can
// join a new SharedWorker to the one still ending, which never answers:
// the page then joins again until a worker answers.
func TestConnectAtOnceAfterTheWorkerEnds(t *testing.T) {
	parallel(t)
	w := newWorld(t, devserver.AuthConfig{})
	var mode string
	w.eval(`mcp.runtime`, &mode)
	if mode == "main" {
		t.Skipf("runtime main: no worker runtime to end (the worker runtimes run this in each engine's auto pass)")
	}
	var got struct {
		Sum   float64 `json:"sum"`
		State string  `json:"state"`
	}
	w.eval(fmt.Sprintf(`(async () => {
		const c = mcp.client(%q);
		await c.connect();
		await new Promise((gone) => {
			c.addEventListener("statechange", (e) => { if (e.detail.state === "failed") gone(); });
			mcp._killWorkerForTest();
		});
		await c.connect();
		const r = await c.callTool("add", { a: 2, b: 3 });
		return { sum: r.structuredContent.sum, state: c.state };
	})()`, w.OpenURL), &got)
	if got.Sum != 5 || got.State != "connected" {
		t.Errorf("after the worker ended, connect() at once then add(2, 3) = %v, state %s; want 5, connected", got.Sum, got.State)
	}
}
