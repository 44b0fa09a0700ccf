package xengine

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/mcpwasm/mcpwasm/demo/authserver"
	"github.com/mcpwasm/mcpwasm/devkit/devserver"
)

// TestAuthorizationServerByHand: a server behind an authorization server
// that publish no OAuth metadata at all. Without help the sign-in fails
// before any window opens, with an error naming the options that
// configure the authorization server by hand; with them (a pre-registered
// client) the popup signs in, the grant survives a reload with no
// request to sign in again, and a sign-out revokes at the endpoint given.
// A partial set of those options is refused at once, in a client and in
// a catalog's server entry.
func TestAuthorizationServerByHand(t *testing.T) {
	eitherRuntime(t)
	parallel(t)
	const clientID = "xengine-by-hand"
	w := newServersWith(t, devserver.AuthConfig{NoMetadata: true}, os.DirFS(webDir), nil, func(cfg *devserver.Config, _ *devserver.PageConfig, page string) {
		cfg.Auth.Clients = []authserver.Client{{ID: clientID, RedirectURIs: []string{page + "/oauth/callback.html"}}}
	})
	w.open()
	w.navigate(w.win, w.PageURL+"/e2e/blank.html")
	w.load(w.win)

	// Discovery alone: the guessed endpoints fail, and the error says what to do.
	before := w.snapshot()
	w.startLogin(`{}`)
	r := w.awaitLogin()
	if r.Error == nil || r.OK {
		t.Fatalf("authorize() with no metadata anywhere: %s; want a failure naming the manual options", r)
	}
	t.Logf("authorize() without the manual options: %s", r)
	for _, want := range []string{"publishes no OAuth metadata", "authorizationEndpoint, tokenEndpoint and clientId"} {
		if !strings.Contains(r.Error.Message, want) {
			t.Errorf("authorize() failed with %s: %q, which does not say %q", r.Error.Code, r.Error.Message, want)
		}
	}
	// The window opened in the click is closed again (it never left this origin).
	w.waitFor("the sign-in window to close", func() bool {
		var closed bool
		_ = w.win.Eval(w.ctx, `!globalThis.__e2eLastOpened || __e2eLastOpened.closed`, &closed)
		return closed
	})
	if got := w.diff(before); got["asmeta"] == 0 || got["token"] != 0 || got["authorize"] != 0 {
		t.Errorf("requests of the failed discovery: %v; want the metadata probes and no authorize or token request", got)
	}
	w.eval(`c.close()`, nil)

	// A partial set is refused before anything is sent.
	var partial []jsErr
	w.eval(fmt.Sprintf(`(async () => {
		const out = [];
		const tries = [
			() => mcp.client(%[1]q, { authorizationEndpoint: %[2]q, clientId: "x" }),
			() => mcp.client(%[1]q, { authorizationEndpoint: %[2]q, tokenEndpoint: %[3]q }),
			() => mcp.catalog({ servers: { hand: { url: %[1]q, tokenEndpoint: %[3]q, clientId: "x" } } }),
		];
		for (const f of tries) {
			try { f(); out.push({ code: "none", message: "not refused" }); }
			catch (e) { out.push({ name: e.name, code: e.code, message: e.message }); }
		}
		return out;
	})()`, w.MCPURL, w.ASURL+"/authorize", w.ASURL+"/token"), &partial)
	for i, e := range partial {
		if e.Code != "invalid_argument" || !strings.Contains(e.Message, "go together") {
			t.Errorf("partial manual configuration %d: %s %q; want invalid_argument saying the options go together", i, e.Code, e.Message)
		}
	}
	var insecure loginResult
	w.eval(fmt.Sprintf(`(async () => {
		try {
			const c = mcp.client(%q, { clientId: "x", authorizationEndpoint: %q, tokenEndpoint: "http://as.example/token" });
			await c.connect();
			return { ok: true, state: c.state };
		} catch (e) { return { error: { name: e.name, code: e.code, message: e.message } }; }
	})()`, w.MCPURL, w.ASURL+"/authorize"), &insecure)
	if insecure.Error == nil || insecure.Error.Code != "invalid_argument" || !strings.Contains(insecure.Error.Message, "tokenEndpoint must be an absolute https URL") {
		t.Errorf("a token endpoint on plain http off loopback: %s; want invalid_argument naming tokenEndpoint", insecure)
	}

	// By hand: the popup signs in at the endpoints given.
	opts := fmt.Sprintf(`{ clientId: %q, authorizationEndpoint: %q, tokenEndpoint: %q, revocationEndpoint: %q }`,
		clientID, w.ASURL+"/authorize", w.ASURL+"/token", w.ASURL+"/revoke")
	before = w.snapshot()
	if !w.signedIn(w.popupSignIn(opts)) {
		return
	}
	got := w.diff(before)
	for kind, want := range map[string]int{"prm": 0, "asmeta": 0, "register": 0, "token": 1} {
		if got[kind] != want {
			t.Errorf("the sign-in by hand: %d %s requests; want %d (all: %v)", got[kind], kind, want, got)
		}
	}
	var sum float64
	w.eval(`(async () => (await c.callTool("add", { a: 2, b: 3 })).structuredContent.sum)()`, &sum)
	if sum != 5 {
		t.Errorf("add(2, 3) after the sign-in by hand = %v; want 5", sum)
	}

	reqs, sum := w.reloadAndConnect(opts)
	if sum != 3 {
		t.Errorf("add(1, 2) after a reload = %v; want 3", sum)
	}
	for _, k := range []string{"prm", "asmeta", "register", "authorize", "token"} {
		if reqs[k] != 0 {
			t.Errorf("reload: %d %s requests; want 0 (all: %v)", reqs[k], k, reqs)
		}
	}

	before = w.snapshot()
	var out struct {
		State string `json:"state"`
		Error *jsErr `json:"error"`
	}
	w.eval(fmt.Sprintf(`(async () => {
		try { await c.logout(); return { state: c.state }; }
		catch (e) { return (%s)(e); }
	})()`, catchJS), &out)
	if out.Error != nil || out.State != "needs_auth" {
		t.Errorf("logout(): state %q, error %+v; want needs_auth", out.State, out.Error)
	}
	if got := w.diff(before); got["revoke"] == 0 {
		t.Errorf("logout() sent no request to the revocation endpoint given by hand (requests: %v)", got)
	}
	w.noPageErrors()
}
