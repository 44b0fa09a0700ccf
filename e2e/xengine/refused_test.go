package xengine

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpwasm/mcpwasm/demo/authserver"
	"github.com/mcpwasm/mcpwasm/devkit/devserver"
)

// TestServerRefusesFreshToken: right after a sign-in, the
// authorization server's clock (which judges the MCP server's tokens)
// runs two hours ahead of the page's, so the MCP server refuses as
// expired a token the page holds as valid. The call refreshes once and
// succeeds. Then the clock runs past the refresh token's life too: the
// call fails at once with auth_required (a call cannot open a sign-in
// window) and the client needs a sign-in; authorize() from a click signs
// in again and the next call works. No call waits for its timeout.
func TestServerRefusesFreshToken(t *testing.T) {
	eitherRuntime(t)
	var skew atomic.Int64 // the authorization server's clock, ahead of the page's
	w := newWorld(t, devserver.AuthConfig{
		TokenTTL: time.Hour,
		Now:      func() time.Time { return time.Now().Add(time.Duration(skew.Load())) },
	})
	if !w.signedIn(w.popupSignIn(`{}`)) {
		return
	}
	skew.Store(int64(2 * time.Hour))
	sum, state, err := w.callAdd(w.win, 40, 2)
	if sum != 42 || err != nil || state != "connected" {
		t.Errorf("a fresh token refused: add(40, 2) = %v, state %s, error %v; want 42, connected", sum, state, err)
	}
	if n := w.refreshes(); n != 1 {
		t.Errorf("refreshes after the server refused a fresh token = %d; want exactly 1", n)
	}

	// Past the refresh token's life (30 days at the demo server): the
	// server refuses the access token and the refresh.
	skew.Store(int64(40 * 24 * time.Hour))
	sum, state, err = w.callAdd(w.win, 1, 2)
	if err == nil || err.Code != "auth_required" || state != "needs_auth" {
		t.Errorf("refresh refused: add(1, 2) = %v, state %s, error %v; want auth_required, needs_auth", sum, state, err)
	}
	if n := w.refreshes(); n != 1 {
		t.Errorf("successful refreshes = %d; want still 1", n)
	}
	refused := 0
	for _, ev := range w.AS.Events() {
		if ev.Kind == authserver.EventTokenRefresh && ev.Err != "" {
			refused++
		}
	}
	if refused != 1 {
		t.Errorf("refused refreshes = %d; want 1 (no loop)", refused)
	}

	// The person's click signs in again; the next call works.
	if r := w.reauthorize(); !r.OK || r.State != "connected" {
		t.Fatalf("authorize() after the refusal: %s; want connected", r)
	}
	if sum, state, err := w.callAdd(w.win, 2, 3); sum != 5 || err != nil || state != "connected" {
		t.Errorf("after the new sign-in: add(2, 3) = %v, state %s, error %v; want 5, connected", sum, state, err)
	}
}

// reauthorize runs window.c's authorize() from a click and approves on
// the consent page in its popup; it reports how authorize() settled.
func (w *world) reauthorize() loginResult {
	w.t.Helper()
	return w.approve(w.consentPopupOf(w.startAuthorize))
}
