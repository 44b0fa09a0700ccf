package xengine

import (
	"fmt"
	"testing"

	"github.com/mcpwasm/mcpwasm/demo/authserver"
	"github.com/mcpwasm/mcpwasm/devkit/devserver"
)

// TestRedirectSignIn: authMode "redirect" takes the tab itself to the
// consent page; oauth/callback.html keeps the result and sends the tab
// back to the app page, where handleCallback() finishes the sign-in from
// storage with one code exchange (against DPoP-only servers too, with the
// IndexedDB key the code was bound to), and takes no URL with an unknown
// state. A second tab waiting for that server connects with the grant,
// without a window of its own.
func TestRedirectSignIn(t *testing.T) {
	for _, dpop := range []bool{false, true} {
		t.Run(fmt.Sprintf("dpop=%v", dpop), func(t *testing.T) {
			parallel(t)
			testRedirectSignIn(t, dpop)
		})
	}
}

func testRedirectSignIn(t *testing.T, dpop bool) {
	w := newWorld(t, devserver.AuthConfig{DPoP: dpop})
	tabB, pre := w.openTab()
	if pre != "auth_required" {
		t.Fatalf("tab B before any sign-in: connect() %q; want auth_required", pre)
	}
	w.eval(fmt.Sprintf(`void (window.c = mcp.client(%q, { authMode: "redirect" }), window.result = null,
		c.addEventListener("statechange", (ev) => { if (ev.detail.state !== "authorizing") result = { state: ev.detail.state }; }))`, w.MCPURL), nil)
	if err := w.win.Gesture(w.ctx, `c.authorize().catch((e) => { result = { error: { name: e.name, code: e.code, message: e.message + (e.detail ? " — " + e.detail : "") }, state: c.state }; })`); err != nil {
		t.Fatal(err)
	}
	// Either the tab goes to the consent page, or authorize() fails
	// first and says so on this page (an engine's expected failure).
	if !w.approveInTab() {
		return
	}
	w.waitFor("the return to the app page", func() bool {
		var path string
		_ = w.win.Eval(w.ctx, `location.pathname + (document.readyState === "complete" ? "" : "…")`, &path)
		return path == "/e2e/blank.html"
	})
	w.load(w.win)
	var got struct {
		Stored bool    `json:"stored"`
		Taken  bool    `json:"taken"`
		Again  bool    `json:"again"`
		State  string  `json:"state"`
		Sum    float64 `json:"sum"`
		Error  *jsErr  `json:"error"`
	}
	w.eval(fmt.Sprintf(`(async () => {
		const stored = sessionStorage.getItem("mcpwasm:callback") !== null;
		try {
			const taken = await mcp.handleCallback();
			const c = mcp.client(%q, { authMode: "redirect" });
			await c.connect();
			const r = await c.callTool("add", { a: 40, b: 2 });
			const again = await mcp.handleCallback(location.origin + "/oauth/callback.html?code=x&state=y");
			return { stored, taken, again, state: c.state, sum: r.structuredContent.sum };
		} catch (e) { return { stored, ...(%s)(e) }; }
	})()`, w.MCPURL, catchJS), &got)
	if !got.Stored {
		t.Errorf("the callback page kept no result in sessionStorage for the return")
	}
	if !w.signedIn(loginResult{OK: got.Error == nil && got.Taken, State: got.State, Error: got.Error}) {
		return
	}
	if got.Sum != 42 {
		t.Errorf("after the redirect: sum %v; want 42", got.Sum)
	}
	if got.Again {
		t.Error("handleCallback() took a URL with an unknown state")
	}
	exchanged := 0
	for _, ev := range w.AS.Events() {
		switch {
		case ev.Kind != authserver.EventTokenCode:
		case ev.Err == "":
			exchanged++
		case !(dpop && ev.Err == "use_dpop_nonce"):
			t.Errorf("token request refused: %s %s", ev.Err, ev.Detail)
		}
	}
	if exchanged != 1 {
		t.Errorf("code exchanges = %d; want 1", exchanged)
	}
	w.awaitState(tabB, "tab B to connect with tab A's grant", "connected")
	if sum, _, err := w.callAdd(tabB, 1, 2); sum != 3 || err != nil {
		t.Errorf("tab B: add(1, 2) = %v, %v; want 3", sum, err)
	}
	if n := w.AS.Count("authorize"); n != 1 {
		t.Errorf("authorization requests = %d; want 1 (tab B never signed in itself)", n)
	}
}

// approveInTab waits for a redirect-mode sign-in to bring the tab to the
// consent page and approves there; false when authorize() failed first
// (an engine's expected failure, judged by signedIn).
func (w *world) approveInTab() bool {
	w.t.Helper()
	var at string
	w.waitFor("the consent page in the tab", func() bool {
		_ = w.win.Eval(w.ctx, `window.result?.error ? "failed" : document.readyState === "complete" && document.querySelector("#approve") ? "consent" : ""`, &at)
		return at != ""
	})
	if at == "failed" {
		var early loginResult
		w.eval(`window.result`, &early)
		w.signedIn(early)
		return false
	}
	if err := w.win.Click(w.ctx, "#approve"); err != nil {
		w.t.Fatalf("consent page in the same tab: %v", err)
	}
	return true
}
