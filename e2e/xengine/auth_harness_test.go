package xengine

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/mcpwasm/mcpwasm/demo/authserver"
	"github.com/mcpwasm/mcpwasm/devkit/devserver"
	"github.com/mcpwasm/mcpwasm/e2e/engine"
)

// The sign-in scenarios' helpers (auth_*_test.go): what a page and a
// person do around the sign-in window, seen from the page itself so that
// every engine's driver can tell.

// web/auth.js's timing of the sign-in window, which scenarios act around.
const (
	closeGrace = 1500 * time.Millisecond // CLOSE_GRACE_MS: a closed window's results may still arrive
	pollEvery  = 250 * time.Millisecond  // POLL_MS
)

// Severance windows (web/auth.js SEVER_WINDOW_MS, 3 s, set through its
// test hook __mcpwasmSeverWindowMs): a sign-in window that closes sooner
// after its navigation is taken for severed by a Cross-Origin-Opener-
// Policy, later for closed by a person. Where a person closes it, a short
// window lets the person read briefly; with COOP, the window must still
// cover the page's noticing the severance (a poll or two after the
// server's page commits).
const (
	personSeverWindow = 250 * time.Millisecond
	coopSeverWindow   = 1500 * time.Millisecond
)

// setSeverWindow sets the severance window of the world's page to d.
func (w *world) setSeverWindow(d time.Duration) {
	w.t.Helper()
	w.eval(fmt.Sprintf(`void (globalThis.__mcpwasmSeverWindowMs = %d)`, d.Milliseconds()), nil)
}

// personTakes is a person on the consent page for d, timed by the page's
// own event loop, so that the page's sign-in window timers (which run on
// that loop) have run for as long.
func (w *world) personTakes(d time.Duration) {
	w.t.Helper()
	w.eval(fmt.Sprintf(`new Promise((r) => setTimeout(r, %d))`, d.Milliseconds()), nil)
}

// watchPage records, in win's page from now on, the page's console.info
// and console.warn lines (window.__said: web/auth.js and web/client.js
// tell the page's developer there).
func (w *world) watchPage(win engine.Window) {
	w.t.Helper()
	w.evalIn(win, `void (() => {
		window.__said = [];
		for (const k of ["info", "warn"]) {
			const f = console[k];
			console[k] = (...a) => { __said.push(k + ": " + a.join(" ")); f.apply(console, a); };
		}
	})()`, nil)
}

// said returns what the page told its console since watchPage, one line
// each.
func (w *world) said(win engine.Window) string {
	w.t.Helper()
	var lines []string
	w.evalIn(win, `window.__said ?? []`, &lines)
	return strings.Join(lines, "\n")
}

// awaitPage waits for the page's expression expr to be truthy, and
// decodes it into out.
func (w *world) awaitPage(what, expr string, out any) {
	w.t.Helper()
	w.waitFor(what, func() bool {
		var ok bool
		return w.win.Eval(w.ctx, "!!("+expr+")", &ok) == nil && ok
	})
	if out != nil {
		w.eval(expr, out)
	}
}

// popupOrSettled runs start (a click that may open the sign-in window)
// and returns the window once its consent page shows, or nil when the
// page's expression settled became truthy first (the operation ended
// without a window).
func (w *world) popupOrSettled(start func(), settled string) engine.Window {
	w.t.Helper()
	wait, err := w.win.ExpectPopup(w.ctx)
	if err != nil {
		w.t.Fatal(err)
	}
	start()
	popups := make(chan engine.Window, 1)
	waitCtx, stop := context.WithCancel(w.ctx)
	defer stop()
	go func() {
		p, _ := wait(waitCtx)
		popups <- p
	}()
	var popup engine.Window
	done := func() bool {
		var ok bool
		return w.win.Eval(w.ctx, "!!("+settled+")", &ok) == nil && ok
	}
	w.waitFor("the sign-in window or the end of the operation", func() bool {
		select {
		case popup = <-popups:
			return popup != nil
		default:
		}
		return done()
	})
	if popup == nil {
		return nil
	}
	w.track(popup)
	w.waitFor("the consent page", func() bool {
		var shown bool
		_ = popup.Eval(w.ctx, `document.readyState === "complete" && !!document.querySelector("#approve")`, &shown)
		return shown
	})
	return popup
}

// popupBlocked checks an operation that had to open the sign-in window
// itself after an asynchronous step (an interactive connect(), a call's
// step-up) and could not: only an engine written down in
// expectedFailures may block it, and only as written. The scenario then
// does what the error tells a person: authorize() from a click.
func (w *world) popupBlocked(code, message string) {
	w.t.Helper()
	exp := expectedFor(w.t)
	if exp == nil || exp.Code != "popup_blocked" {
		w.t.Fatalf("the operation opened no sign-in window: %s: %s; want the window", code, message)
	}
	if code != exp.Code || !strings.Contains(message, exp.Contains) {
		w.t.Fatalf("the operation opened no sign-in window: %s: %s; want the expected %s %q (%s)", code, message, exp.Code, exp.Contains, exp.Reason)
	}
	w.t.Logf("EXPECTED in %s, runtime %s: %s: %s (%s); a person clicks Sign in", exp.Engine, exp.Runtime, code, message, exp.Reason)
}

// popupOpened checks that an engine written down as blocking the window
// did not open it after all.
func (w *world) popupOpened() {
	w.t.Helper()
	if exp := expectedFor(w.t); exp != nil && exp.Code == "popup_blocked" {
		w.t.Errorf("%s, runtime %s now opens the sign-in window: remove %s from expectedFailures (it said: %s)", exp.Engine, exp.Runtime, exp.Scenario, exp.Reason)
	}
}

// mustSignIn fails the scenario unless r is a sign-in that ended
// connected (for scenarios with no expected failure of the sign-in).
func (w *world) mustSignIn(r loginResult) {
	w.t.Helper()
	if !r.OK || r.State != "connected" {
		w.t.Fatalf("sign-in: %s; want connected", r)
	}
}

// openTab opens a second tab of the world's browser on the blank page
// with mcp.js loaded and window.c a client of the protected server, whose
// connect() has settled; it returns the tab and the code connect()
// rejected with ("" when it connected).
func (w *world) openTab() (engine.Window, string) {
	w.t.Helper()
	tab := w.newTab()
	w.navigate(tab, w.PageURL+"/e2e/blank.html")
	w.load(tab)
	var code string
	w.evalIn(tab, fmt.Sprintf(`(async () => {
		window.c = mcp.client(%q);
		return c.connect().then(() => "", (e) => e.code);
	})()`, w.MCPURL), &code)
	return tab, code
}

// awaitState waits until window.c of win is in state.
func (w *world) awaitState(win engine.Window, what, state string) {
	w.t.Helper()
	w.waitFor(what, func() bool {
		var s string
		_ = win.Eval(w.ctx, `c.state`, &s)
		return s == state
	})
}

// skewClock moves win's wall clock (and its runtime's) d ahead: time
// passing for the page without the test waiting it out (web/boot.js).
// Tabs that share one runtime (a SharedWorker) move its clock once each.
func (w *world) skewClock(win engine.Window, d time.Duration) {
	w.t.Helper()
	w.evalIn(win, fmt.Sprintf(`mcp._skewClockForTest(%d)`, d.Milliseconds()), nil)
}

// refreshes is how many refresh grants the authorization server made.
func (w *world) refreshes() (ok int) {
	for _, ev := range w.AS.Events() {
		if ev.Kind == authserver.EventTokenRefresh && ev.Err == "" {
			ok++
		}
	}
	return ok
}

// traced returns the servers' requests so far, as tracing recorded them.
func (w *world) traced() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.trace...)
}

// mcpDelete is a DELETE the protected MCP server answered (a session's
// end) and how many revocations the authorization server had begun
// before it arrived.
type mcpDelete struct{ status, revokesBefore int }

var deleteEnded = regexp.MustCompile(`^mcp DELETE .* ended (\d+) `)

// mcpDeletes reads the servers' trace for the protected server's DELETEs.
func (w *world) mcpDeletes() []mcpDelete {
	var out []mcpDelete
	revokes := 0
	began := map[int]int{} // the n-th DELETE → revocations begun before it
	nDelete := 0
	for _, line := range w.traced() {
		_, what, _ := strings.Cut(strings.TrimSpace(line), "s ") // after record's "%7.2fs "
		switch {
		case strings.HasPrefix(what, "as POST /revoke") && strings.HasSuffix(what, " began"):
			revokes++
		case strings.HasPrefix(what, "mcp DELETE ") && strings.HasSuffix(what, " began"):
			began[nDelete] = revokes
			nDelete++
		default:
			if m := deleteEnded.FindStringSubmatch(what); m != nil {
				var status int
				fmt.Sscan(m[1], &status)
				out = append(out, mcpDelete{status: status, revokesBefore: began[len(out)]})
			}
		}
	}
	return out
}

// newSlowAuthorizeWorld is newWorld with an authorization endpoint that
// answers only after delay, as a far server would: the issuer is a proxy
// in front of the demo authorization server that holds /authorize.
func newSlowAuthorizeWorld(t *testing.T, ac devserver.AuthConfig, delay time.Duration) *world {
	t.Helper()
	var proxy delegate
	front := serve(t, &proxy)
	w := newServersWith(t, ac, os.DirFS(webDir), nil, func(_ *devserver.Config, pc *devserver.PageConfig, _ string) {
		target, err := url.Parse(pc.ASURL)
		if err != nil {
			t.Fatal(err)
		}
		rp := httputil.NewSingleHostReverseProxy(target)
		proxy.h = http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/authorize" {
				select {
				case <-time.After(delay):
				case <-r.Context().Done():
					return
				}
			}
			rp.ServeHTTP(rw, r)
		})
		pc.ASURL = front.URL
	})
	w.open()
	w.navigate(w.win, w.PageURL+"/e2e/blank.html")
	w.load(w.win)
	return w
}
