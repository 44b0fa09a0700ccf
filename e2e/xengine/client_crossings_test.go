package xengine

import (
	"fmt"
	"strings"
	"testing"

	"github.com/mcpwasm/mcpwasm/devkit/devserver"
)

// countCrossingsJS makes the page count the crossings between mcp.js and
// Go (the __mcpwasmTrace test hook, which bootJS's trace hears too) by
// direction and name, for a module instance loaded after it.
const countCrossingsJS = `void (() => {
	const note = globalThis.__mcpwasmTrace;
	globalThis.__mcpwasmTrace = (dir, name) => {
		const c = (globalThis.__crossings ??= {});
		c[dir + " " + name] = (c[dir + " " + name] ?? 0) + 1;
		note?.(dir, name);
	};
})()`

// crossings reads and resets the page's counts.
func (w *world) crossings() map[string]int {
	w.t.Helper()
	var c map[string]int
	w.eval(`(() => { const c = globalThis.__crossings ?? {}; globalThis.__crossings = {}; return c; })()`, &c)
	return c
}

func crossed(c map[string]int, dir string) int {
	n := 0
	for k, v := range c {
		if strings.HasPrefix(k, dir+" ") {
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
	w := newWorld(t, devserver.AuthConfig{})
	w.eval(countCrossingsJS, nil)
	w.eval(`(async () => { window.mcp = await (await import("/mcp.js?trace")).load(); })()`, nil)
	w.eval(fmt.Sprintf(`(async () => { window.c = mcp.client(%q); await c.connect().catch(() => {}); })()`, w.MCPURL), nil)
	w.crossings()
	if !w.signedIn(w.approve(w.consentPopupOf(w.startAuthorize))) {
		return
	}
	popup := w.crossings()
	t.Logf("popup sign-in crossings: %v", popup)
	if popup["js→go callback.deliver"] != 1 || popup["js→go client.authorize"] != 1 || crossed(popup, "js→go") != 2 {
		t.Errorf("JS→Go crossings of a popup sign-in: %v; want authorize and one delivery", popup)
	}
	w.closeWindows() // WebKit's driver holds one session at a time

	r := newWorld(t, devserver.AuthConfig{})
	r.eval(fmt.Sprintf(`void (window.c = mcp.client(%q, { authMode: "redirect" }), window.result = null)`, r.MCPURL), nil)
	if err := r.win.Gesture(r.ctx, `c.authorize().catch((e) => { result = { error: { name: e.name, code: e.code, message: e.message }, state: c.state }; })`); err != nil {
		t.Fatal(err)
	}
	if !r.approveInTab() {
		return
	}
	r.waitFor("the return to the app page", func() bool {
		var path string
		_ = r.win.Eval(r.ctx, `location.pathname + (document.readyState === "complete" ? "" : "…")`, &path)
		return path == "/e2e/blank.html"
	})
	r.eval(countCrossingsJS, nil)
	r.eval(fmt.Sprintf(`(async () => {
		window.mcp = await (await import("/mcp.js")).load();
		window.c = mcp.client(%q, { authMode: "redirect" });
		globalThis.__crossings = {};
		if (!await mcp.handleCallback()) throw new Error("handleCallback() did not take the return");
	})()`, r.MCPURL), nil)
	red := r.crossings()
	t.Logf("redirect return crossings: %v", red)
	if red["js→go callback.deliver"] != 1 || crossed(red, "js→go") != 1 {
		t.Errorf("JS→Go crossings of a redirect return: %v; want one delivery", red)
	}
}
