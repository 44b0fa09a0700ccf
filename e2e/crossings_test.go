package e2e

import (
	"fmt"
	"testing"

	"github.com/mcpwasm/mcpwasm/devkit/devserver"
)

// traceJS records the crossings between mcp.js and Go (the __mcpwasmTrace
// test hook), counted by direction and name, from the next load on.
const traceJS = `void (globalThis.__mcpwasmTrace = (dir, name) => {
	const c = (globalThis.__crossings ??= {});
	c[dir + " " + name] = (c[dir + " " + name] ?? 0) + 1;
})`

// crossings reads and resets the counts.
func crossings(e *env) map[string]int {
	var c map[string]int
	e.eval(`(() => { const c = globalThis.__crossings ?? {}; globalThis.__crossings = {}; return c; })()`, &c)
	return c
}

func sum(c map[string]int, dir string) int {
	n := 0
	for k, v := range c {
		if len(k) > len(dir) && k[:len(dir)] == dir {
			n += v
		}
	}
	return n
}

// TestSignInCrossings: a popup sign-in crosses from JavaScript into Go
// twice (authorize, the callback's delivery: its postMessage and
// BroadcastChannel relays are delivered once), and a redirect return once
// (the delivery); no grant is read twice, and Go alone decides what the
// page's clients do about the new grant.
func TestSignInCrossings(t *testing.T) {
	e := newAuthEnv(t, devserver.AuthConfig{})
	e.eval(traceJS, nil)
	e.eval(`(async () => { window.mcp = await (await import("/mcp.js?trace")).load(); })()`, nil)
	e.eval(fmt.Sprintf(`(async () => { window.c = mcp.client(%q); await c.connect().catch(() => {}); })()`, e.MCPURL), nil)
	crossings(e.env)
	popups := e.expectPopup()
	e.gesture(`void (c.authorize().then(() => { window.result = { ok: true, state: c.state }; }, (e) => { window.result = { state: c.state, error: { code: e.code } }; }))`)
	e.consent(e.popup(popups), "approve")
	if r := e.awaitLogin(); !r.OK {
		t.Fatalf("sign-in: %+v", r)
	}
	popup := crossings(e.env)
	t.Logf("popup sign-in crossings: %v", popup)
	if popup["js→go callback.deliver"] != 1 || popup["js→go client.authorize"] != 1 || sum(popup, "js→go") != 2 {
		t.Errorf("JS→Go crossings of a popup sign-in: %v; want authorize and one delivery", popup)
	}

	r := newAuthEnv(t, devserver.AuthConfig{})
	r.eval(fmt.Sprintf(`void (window.c = mcp.client(%q, { authMode: "redirect" }))`, r.MCPURL), nil)
	r.gesture(`void c.authorize()`)
	clickLoaded(t, r.ctx, "approve", "the consent page in the tab")
	r.waitFor("the return to the app page", func() bool {
		var path string
		_ = r.tryEval(`location.pathname + (document.readyState === "complete" ? "" : "…")`, &path)
		return path == "/e2e/blank.html"
	})
	r.eval(traceJS, nil)
	r.eval(fmt.Sprintf(`(async () => {
		window.mcp = await (await import("/mcp.js")).load();
		window.c = mcp.client(%q, { authMode: "redirect" });
		globalThis.__crossings = {};
		if (!await mcp.handleCallback()) throw new Error("not taken");
	})()`, r.MCPURL), nil)
	red := crossings(r.env)
	t.Logf("redirect return crossings: %v", red)
	if red["js→go callback.deliver"] != 1 || sum(red, "js→go") != 1 {
		t.Errorf("JS→Go crossings of a redirect return: %v; want one delivery", red)
	}
}
