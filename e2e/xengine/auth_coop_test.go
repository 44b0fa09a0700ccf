package xengine

import (
	"strings"
	"testing"
	"time"

	"github.com/mcpwasm/mcpwasm/devkit/devserver"
)

// The authorization server's pages send Cross-Origin-Opener-Policy:
// same-origin, which cuts the sign-in window's link to the page: the page
// sees it as closed, and only the callback page's BroadcastChannel relay
// brings the result. These scenarios run one at a time: they time the
// window's closing against web/auth.js's severance window.

// coopSignIn opens the sign-in window in w (whose authorization server
// sends COOP) and waits until the page has taken it for severed (its
// console says so); a person then stays on the consent page past the
// severance window and the close grace, when a window taken for closed
// would have been declined, and approves. It returns how authorize()
// settled.
func (w *world) coopSignIn() loginResult {
	w.t.Helper()
	w.setSeverWindow(coopSeverWindow)
	w.watchPage(w.win)
	popup, early := w.consentPopup(`{}`)
	if early != nil {
		w.t.Fatalf("authorize() ended before its consent page: %s", early)
	}
	w.waitFor("the page to take the sign-in window for severed", func() bool {
		var ended bool
		_ = w.win.Eval(w.ctx, `!!window.result`, &ended)
		return ended || strings.Contains(w.said(w.win), "Cross-Origin-Opener-Policy")
	})
	w.personTakes(max(coopSeverWindow, closeGrace) + pollEvery)
	var mid *loginResult
	w.eval(`window.result`, &mid)
	if mid != nil {
		w.t.Fatalf("the sign-in ended while the person was on the consent page: %s", mid)
	}
	r := w.approve(popup, nil)
	if said := w.said(w.win); !strings.Contains(said, "Cross-Origin-Opener-Policy") {
		w.t.Errorf("the page never took the sign-in window for severed (the scenario proves nothing); it said: %q", said)
	}
	return r
}

// TestCOOPSignInCompletesThroughBroadcastChannel: a sign-in whose window
// COOP severed completes through the BroadcastChannel relay, even when
// the person takes a while.
func TestCOOPSignInCompletesThroughBroadcastChannel(t *testing.T) {
	w := newWorld(t, devserver.AuthConfig{COOP: true})
	if r := w.coopSignIn(); !r.OK || r.State != "connected" {
		t.Fatalf("sign-in with COOP on the authorization server: %s; want connected", r)
	}
}

// TestSlowCOOPServerIsNotTakenForAClose: an authorization endpoint that
// answers only after longer than the severance window: the wait before
// its page shows does not count toward the window, so the severance is
// still recognised and the sign-in completes.
func TestSlowCOOPServerIsNotTakenForAClose(t *testing.T) {
	w := newSlowAuthorizeWorld(t, devserver.AuthConfig{COOP: true}, coopSeverWindow+500*time.Millisecond)
	if r := w.coopSignIn(); !r.OK || r.State != "connected" {
		t.Fatalf("sign-in at a slow server with COOP: %s; want connected", r)
	}
}

// TestCOOPRealCloseStillDeclines: a person closes a sign-in window COOP
// severed (the page cannot see the close): when no result comes within
// severedPopupTimeoutMs, the sign-in ends declined.
func TestCOOPRealCloseStillDeclines(t *testing.T) {
	w := newWorld(t, devserver.AuthConfig{COOP: true})
	popup, early := w.consentPopup(`{ severedPopupTimeoutMs: 2500 }`)
	if early != nil {
		t.Fatalf("authorize() ended before its consent page: %s", early)
	}
	if err := popup.Close(); err != nil {
		t.Fatalf("closing the sign-in window: %v", err)
	}
	if r := w.awaitLogin(); r.Error == nil || r.Error.Code != "declined" || r.State != "declined" {
		t.Fatalf("closing a COOP-severed sign-in window: %s; want declined", r)
	}
}
