package xengine

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/mcpwasm/mcpwasm/devkit/devserver"
)

// TestReplayedCallbackIsRejected: the callback URL the callback page
// relayed on its BroadcastChannel (as another page of the origin, or
// someone who saw the URL, could have kept it) is refused when handed in
// again: handleCallback() does not take it, the client stays connected,
// and the used code never reaches the token endpoint again.
func TestReplayedCallbackIsRejected(t *testing.T) {
	parallel(t)
	w := newWorld(t, devserver.AuthConfig{})
	w.eval(`void (new BroadcastChannel("mcpwasm-oauth").onmessage = (ev) => { window.relayed = ev.data.url; })`, nil)
	w.mustSignIn(w.popupSignIn(`{}`))
	tokens := w.AS.Count("token_code")
	var relayed string
	w.awaitPage("the callback page's relay on the BroadcastChannel", "window.relayed", &relayed)
	var replay struct {
		Taken bool   `json:"taken"`
		State string `json:"state"`
	}
	w.eval(`(async () => ({ taken: await mcp.handleCallback(window.relayed), state: c.state }))()`, &replay)
	if replay.Taken || replay.State != "connected" {
		t.Errorf("replaying the callback URL: taken=%v state=%q; want false, still connected", replay.Taken, replay.State)
	}
	if n := w.AS.Count("token_code"); n != tokens {
		t.Errorf("the replay reached the token endpoint (%d → %d code exchanges)", tokens, n)
	}
}

// TestForgedMessageFromAnotherOriginIsIgnored: a page of another origin,
// framed by ours, posts a sign-in result with the running sign-in's state;
// the page ignores it (and tells its console), the sign-in goes on, and
// Approve in the real window signs in.
func TestForgedMessageFromAnotherOriginIsIgnored(t *testing.T) {
	parallel(t)
	w := newWorld(t, devserver.AuthConfig{})
	forger := serve(t, http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		rw.Header().Set("Content-Type", "text/html")
		fmt.Fprintf(rw, `<script>parent.postMessage({ type: "mcpwasm:oauth-callback",
			url: %q + "/oauth/callback.html?code=forged&state=" + new URLSearchParams(location.search).get("state") }, "*");</script>`, w.PageURL)
	}))
	w.watchPage(w.win)
	popup, early := w.consentPopup(`{}`)
	if early != nil {
		t.Fatalf("authorize() ended before its consent page: %s", early)
	}
	var state string
	w.eval(`c._login?.state ?? ""`, &state)
	if state == "" {
		t.Fatal("the page's sign-in window has no state")
	}
	w.eval(fmt.Sprintf(`void document.body.append(Object.assign(document.createElement("iframe"), { src: %q + "/?state=" + encodeURIComponent(%q) }))`, forger.URL, state), nil)
	w.waitFor("the page to ignore the forged message", func() bool { return strings.Contains(w.said(w.win), "from another origin") })
	var mid string
	w.eval(`c.state`, &mid)
	if mid != "authorizing" {
		t.Fatalf("after the forged message the state is %q; want still authorizing", mid)
	}
	if r := w.approve(popup, nil); !r.OK || r.State != "connected" {
		t.Fatalf("sign-in after a forged message: %s; want connected", r)
	}
	if n := w.AS.Count("token_code"); n != 1 {
		t.Errorf("code exchanges = %d; want 1 (the forged code never sent)", n)
	}
}
