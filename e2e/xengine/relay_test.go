package xengine

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/mcpwasm/mcpwasm/demo/authserver"
	"github.com/mcpwasm/mcpwasm/devkit/devserver"
)

// relayWorld is newWorld with the demo MCP server and authorization server
// sending no CORS headers, and the dev server's relay on the page origin
// (devserver -relay -no-cors).
func relayWorld(t *testing.T, ac devserver.AuthConfig) (*world, string) {
	t.Helper()
	var relayURL string
	w := newServersWith(t, ac, os.DirFS(webDir), nil, func(cfg *devserver.Config, pc *devserver.PageConfig, page string) {
		cfg.NoCORS = true
		cfg.Relay.Enabled = true
		pc.RelayURL = page + devserver.RelayPath
		relayURL = pc.RelayURL
	})
	w.open()
	w.navigate(w.win, w.PageURL+"/e2e/blank.html")
	w.load(w.win)
	return w, relayURL
}

// TestRelayNoCORSFails: without the relay option, a server and an
// authorization server that send no CORS headers are a network error
// whose message says what to use.
func TestRelayNoCORSFails(t *testing.T) {
	eitherRuntime(t)
	w, _ := relayWorld(t, devserver.AuthConfig{})
	var got struct {
		Error jsErr
		State string
	}
	got.Error, got.State = w.connected(w.MCPURL, `{}`)
	if got.Error.Code != "network" || !strings.Contains(got.Error.Message, "the client option relay") {
		t.Errorf("connect() without the relay: %+v; want a network error that names the client option relay", got.Error)
	}
	if n := w.snapshot()["mcp"]; n != 0 {
		t.Errorf("the server without CORS got %d MCP requests from the page; want 0 (its preflight is refused)", n)
	}
}

// TestRelayFallback: with relay (fallback mode), the same servers work:
// sign-in in the popup (discovery, registration and the code exchange
// through the relay), a tool call, and a refresh of the short-lived token
// before the next call. The grant stays keyed by the real server: a
// second client of that server connects with it, without a sign-in.
func TestRelayFallback(t *testing.T) {
	eitherRuntime(t)
	relayFallback(t, devserver.AuthConfig{})
}

// TestRelayFallbackDPoP is TestRelayFallback with DPoP-bound tokens and
// server nonces: the proofs name the server's URL (htu), not the relay's,
// and DPoP-Nonce comes back through it.
func TestRelayFallbackDPoP(t *testing.T) {
	eitherRuntime(t)
	relayFallback(t, devserver.AuthConfig{DPoP: true})
}

func relayFallback(t *testing.T, ac devserver.AuthConfig) {
	const ttl = 20 * time.Second
	ac.TokenTTL = ttl
	w, relayURL := relayWorld(t, ac)
	opts := fmt.Sprintf(`{ relay: %q, relayMode: "fallback" }`, relayURL)
	if !w.signedIn(w.popupSignIn(opts)) {
		return
	}
	var sum float64
	w.eval(`(async () => (await c.callTool("add", { a: 40, b: 2 })).structuredContent.sum)()`, &sum)
	if sum != 42 {
		t.Errorf("add(40, 2) through the relay = %v; want 42", sum)
	}
	// The client refreshes a token within 10 s of its expiry: wait until
	// the token is that old, then call again.
	w.waitFor("the access token to near its expiry", func() bool { return time.Since(w.tokenIssued()) > ttl-9*time.Second })
	w.eval(`(async () => (await c.callTool("add", { a: 1, b: 2 })).structuredContent.sum)()`, &sum)
	if sum != 3 {
		t.Errorf("add(1, 2) after the refresh = %v; want 3", sum)
	}
	if n := w.refreshes(); n < 1 {
		t.Errorf("refresh grants = %d; want at least 1 (through the relay)", n)
	}
	var second string
	w.eval(fmt.Sprintf(`(async () => { const d = mcp.client(%q, { relay: %q }); await d.connect(); return d.state; })()`, w.MCPURL, relayURL), &second)
	if second != "connected" {
		t.Errorf("a second client of the server with the relay: %s; want connected with the stored grant", second)
	}
	// The browser reports each refused direct attempt itself (Chromium
	// and Firefox as a console error): that is what fallback costs.
	// Nothing else may fail.
	errs, err := w.win.Errors(w.ctx)
	if err != nil {
		t.Fatalf("reading the page's errors: %v", err)
	}
	for _, e := range pageErrors(errs) {
		if !corsRefusal(e) {
			t.Errorf("page error: %s", e)
		}
	}
}

// tokenIssued is when the authorization server last issued an access
// token (a code exchange or a refresh).
func (w *world) tokenIssued() time.Time {
	var at time.Time
	for _, ev := range w.AS.Events() {
		if (ev.Kind == authserver.EventTokenCode || ev.Kind == authserver.EventTokenRefresh) && ev.Err == "" {
			at = ev.Time
		}
	}
	return at
}

// TestRelayPageWideAlways: load()'s page-wide relay reaches a catalog's
// server that names none, and relayMode "always" sends nothing directly:
// the server without CORS answers the catalog (it needs a sign-in), and
// never sees a preflight.
func TestRelayPageWideAlways(t *testing.T) {
	eitherRuntime(t)
	w, _ := relayWorld(t, devserver.AuthConfig{})
	w.navigate(w.win, w.PageURL+"/e2e/blank.html")
	var got struct {
		State string `json:"state"`
		Error string `json:"error"`
	}
	w.eval(fmt.Sprintf(`(async () => {
		const m = await import("/mcp.js");
		window.mcp = await m.load({ relay: %q, relayMode: "always" });
		const cat = mcp.catalog({ servers: { demo: { url: %q } } });
		await cat.tools();
		const s = cat.status("demo");
		return { state: s.state, error: s.error ? s.error.code + ": " + s.error.message : "" };
	})()`, devserver.RelayPath, w.MCPURL), &got)
	if got.State != "needs_auth" {
		t.Errorf("the catalog's server through the page-wide relay: state %q (%s); want needs_auth (its 401 came through the relay)", got.State, got.Error)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	relayed := 0
	for _, l := range w.trace {
		// A direct attempt starts with a preflight (its POST carries JSON);
		// the relay never sends one.
		if strings.Contains(l, "mcp OPTIONS") {
			t.Errorf("relayMode always, yet the page tried the server directly: %s", l)
		}
		if strings.Contains(l, "page POST /mcp-relay began") {
			relayed++
		}
	}
	if relayed == 0 {
		t.Errorf("no request went through the relay")
	}
}

// TestRelayRefusesAnUnlistedServer: the relay forwards only to its
// allowlist. A client that names it for a server it does not list (the
// second demo server) fails with a network error carrying the relay's
// refusal, and that server never hears from the page.
func TestRelayRefusesAnUnlistedServer(t *testing.T) {
	eitherRuntime(t)
	w, relayURL := relayWorld(t, devserver.AuthConfig{})
	var got struct{ Error jsErr }
	got.Error, _ = w.connected(w.MCP2URL, fmt.Sprintf(`{ relay: %q, relayMode: "always" }`, relayURL))
	if got.Error.Code != "network" || !strings.Contains(got.Error.Message, "target_not_allowed") {
		t.Errorf("connect() through a relay that does not list the server: %+v; want a network error with the relay's target_not_allowed", got.Error)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, l := range w.trace {
		if strings.Contains(l, "s mcp2 ") {
			t.Errorf("the unlisted server got a request: %s", l)
		}
	}
}

// TestRelayInAnEntryStaysOnThePagesOrigin: a catalog's server entry (which
// may come from a pasted configuration) names only a relay of the page's
// origin, so a pasted entry cannot send a server's tokens elsewhere; the
// page's code may name another origin's relay for the catalog.
func TestRelayInAnEntryStaysOnThePagesOrigin(t *testing.T) {
	eitherRuntime(t)
	w, _ := relayWorld(t, devserver.AuthConfig{})
	var got struct {
		Built, Added jsErr
		Own          string `json:"own"`
	}
	w.eval(fmt.Sprintf(`(async () => {
		const elsewhere = "https://relay.example/mcp-relay";
		const err = (f) => { try { f(); return {}; } catch (e) { return { name: e.name, code: e.code, message: e.message }; } };
		const built = err(() => mcp.catalog({ servers: { x: { url: %[1]q, relay: elsewhere, relayMode: "always" } } }));
		const cat = mcp.catalog({ servers: {} });
		const added = err(() => cat.add("x", { url: %[1]q, relay: elsewhere }));
		const own = err(() => mcp.catalog({ relay: elsewhere, servers: { x: { url: %[1]q } } })).code ?? "accepted";
		return { built, added, own };
	})()`, w.MCPURL), &got)
	for name, e := range map[string]jsErr{"catalog({servers})": got.Built, "cat.add()": got.Added} {
		if e.Code != "invalid_argument" || !strings.Contains(e.Message, "is not on this page's origin") {
			t.Errorf("%s with an entry naming another origin's relay: %+v; want invalid_argument saying the relay is not on this page's origin", name, e)
		}
	}
	if got.Own != "accepted" {
		t.Errorf("catalog({relay}) of another origin, given by the page's code: %s; want accepted", got.Own)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, l := range w.trace {
		if strings.Contains(l, "s mcp ") {
			t.Errorf("the server got a request: %s", l)
		}
	}
}

// corsRefusal reports whether a page error is the browser's own report of
// a request CORS refused, as Chromium and Firefox word it.
func corsRefusal(e string) bool {
	return strings.Contains(e, "Cross-Origin Request Blocked") || strings.Contains(e, "has been blocked by CORS policy")
}
