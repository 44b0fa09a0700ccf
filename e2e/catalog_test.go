package e2e

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/mcpwasm/mcpwasm/demo"
	"github.com/mcpwasm/mcpwasm/demo/cors"
	"github.com/mcpwasm/mcpwasm/devkit/devserver"
)

// catalogJS makes window.cat over servers (a JS object literal) and records
// its events in window.catEvents and every window.open in window.opened.
const catalogJS = `(() => {
	window.opened = 0;
	const open = window.open.bind(window);
	window.open = (...a) => { opened++; return open(...a); };
	window.catEvents = [];
	window.cat = mcp.catalog(%s);
	for (const t of ["statuschange", "toolschanged", "authrequired", "warning"]) {
		cat.addEventListener(t, (ev) => catEvents.push({ type: t, ...ev.detail }));
	}
})()`

type catEvent struct {
	Type   string   `json:"type"`
	ID     string   `json:"id"`
	IDs    []string `json:"ids"`
	Status struct {
		State   string `json:"state"`
		Breaker string `json:"breaker"`
	} `json:"status"`
}

// catEvents returns and clears the catalog's events.
func catEvents(e *env) []catEvent {
	var evs []catEvent
	e.eval(`(() => { const v = catEvents; catEvents = []; return v; })()`, &evs)
	return evs
}

func count(evs []catEvent, typ string) int {
	n := 0
	for _, ev := range evs {
		if ev.Type == typ {
			n++
		}
	}
	return n
}

// toolNames lists cat.tools().
func toolNames(e *env) []string {
	var names []string
	e.eval(`(async () => (await cat.tools()).map((t) => t.name))()`, &names)
	return names
}

func hasPrefix(names []string, prefix string) bool {
	return slices.ContainsFunc(names, func(n string) bool { return strings.HasPrefix(n, prefix) })
}

// callText runs cat.callTool and returns {isError, text}.
type callText struct {
	IsError bool   `json:"isError"`
	Text    string `json:"text"`
}

func catCall(e *env, name, args string) callText {
	var r callText
	e.eval(fmt.Sprintf(`(async () => {
		const r = await cat.callTool(%q, %s);
		return { isError: !!r.isError, text: r.content.map((c) => c.text ?? "").join("\n") };
	})()`, name, args), &r)
	return r
}

// TestCatalogOfThreeServers, against the dev server's protected demo server
// (secure), its second demo server (notes) and the reference TypeScript
// server (everything): nothing connects before it is needed; tools() lists
// the open servers and marks the protected one needs_auth with one
// authrequired and no popup; a call to it says a sign-in is needed; a sign
// in through the popup brings its tools with one toolschanged; a batch of
// OpenAI tool calls across servers comes back in order; no server's
// credentials reach another's origin; a reload reconnects every server
// from storage without a popup.
func TestCatalogOfThreeServers(t *testing.T) {
	everything := startEverything(t)
	e := newAuthEnv(t, devserver.AuthConfig{})
	servers := fmt.Sprintf(`{ servers: {
		secure: { url: %q },
		notes: { url: %q, headers: { "X-Api-Key": "notes-key-123" } },
		everything: { url: %q },
	} }`, e.MCPURL, e.MCP2URL, everything)
	before := e.snapshot()
	e.eval(fmt.Sprintf(catalogJS, servers), nil)
	if d := e.diff(before); d["mcp"]+d["mcp2"]+d["prm"] != 0 {
		t.Errorf("making the catalog sent requests: %v; want none (lazy)", d)
	}

	cold := e.snapshot()
	start := time.Now()
	names := toolNames(e.env)
	coldTime := time.Since(start)
	coldRequests := e.diff(cold)
	if !hasPrefix(names, "notes_") || !hasPrefix(names, "everything_") || hasPrefix(names, "secure_") {
		t.Fatalf("tools() = %v; want notes_* and everything_*, no secure_*", names)
	}
	var st struct{ State string }
	e.eval(`cat.status("secure")`, &st)
	evs := catEvents(e.env)
	if st.State != "needs_auth" || count(evs, "authrequired") != 1 {
		t.Errorf("secure: state %q, authrequired ×%d; want needs_auth ×1", st.State, count(evs, "authrequired"))
	}
	if got := toolNames(e.env); len(got) != len(names) {
		t.Errorf("tools() again = %d tools; want %d", len(got), len(names))
	}
	if r := catCall(e.env, "secure_add", `{a: 1, b: 2}`); !r.IsError || !strings.Contains(r.Text, "needs the user to sign in") {
		t.Errorf("a call before sign-in = %+v; want the needs-sign-in text", r)
	}
	var opened int
	e.eval(`opened`, &opened)
	if opened != 0 || count(catEvents(e.env), "authrequired") != 0 {
		t.Errorf("before sign-in: %d popups, another authrequired; want none", opened)
	}

	// Sign in from a click.
	popups := e.expectPopup()
	e.gesture(`void cat.authorize("secure").then(() => { window.signedIn = "ok"; }, (e) => { window.signedIn = e.code; })`)
	e.consent(e.popup(popups), "approve")
	e.waitFor("the sign-in", func() bool {
		var s string
		_ = e.tryEval(`window.signedIn ?? ""`, &s)
		return s != ""
	})
	names = toolNames(e.env)
	evs = catEvents(e.env)
	if !hasPrefix(names, "secure_") || count(evs, "toolschanged") != 1 {
		t.Errorf("after sign-in: tools %v, toolschanged ×%d; want secure_* and 1", names, count(evs, "toolschanged"))
	}

	// A model's batch across two servers, results in call order.
	var results []struct {
		ToolCallID string `json:"tool_call_id"`
		Content    string `json:"content"`
	}
	e.eval(`cat.handleToolCalls({ role: "assistant", tool_calls: [
		{ id: "a", type: "function", function: { name: "secure_add", arguments: "{\"a\":2,\"b\":40}" } },
		{ id: "b", type: "function", function: { name: "notes_reverse", arguments: "{\"text\":\"hello\"}" } },
		{ id: "c", type: "function", function: { name: "secure_echo", arguments: "{\"text\":\"hi\"}" } },
		{ id: "d", type: "function", function: { name: "nope", arguments: "{}" } },
	] }, { format: "openai" })`, &results)
	var got []string
	for _, r := range results {
		got = append(got, r.ToolCallID+"="+r.Content)
	}
	if len(got) != 4 || got[0] != "a=2 + 40 = 42" || got[1] != "b=olleh" || got[2] != "c=hi" || !strings.HasPrefix(got[3], "d=Error: There is no tool named") {
		t.Errorf("handleToolCalls = %q", got)
	}

	// Each origin got only its own credentials.
	for _, c := range e.credentials("mcp2") {
		if strings.HasPrefix(c, "Authorization") {
			t.Errorf("the notes server received %q: another server's token", c)
		}
	}
	for _, c := range e.credentials("mcp") {
		if strings.HasPrefix(c, "X-Api-Key") {
			t.Errorf("the secure server received %q: another server's API key", c)
		}
	}
	if !slices.Contains(e.credentials("mcp2"), "X-Api-Key: notes-key-123") {
		t.Errorf("the notes server did not get its own key: %v", e.credentials("mcp2"))
	}

	// A reload: every server is back from storage, without a popup.
	if err := chromedp.Do(e.ctx, chromedp.Reload()); err != nil {
		t.Fatal(err)
	}
	e.eval(`(async () => { window.mcp = await (await import("/mcp.js")).load(); })()`, nil)
	e.eval(fmt.Sprintf(catalogJS, servers), nil)
	reload := e.snapshot()
	start = time.Now()
	names = toolNames(e.env)
	reloadTime := time.Since(start)
	reloadRequests := e.diff(reload)
	e.eval(`opened`, &opened)
	if !hasPrefix(names, "secure_") || opened != 0 || reloadRequests["authorize"]+reloadRequests["token"]+reloadRequests["register"] != 0 {
		t.Errorf("after a reload: tools %v, %d popups, requests %v; want secure_* without sign-in", names, opened, reloadRequests)
	}

	// The same three servers connected by hand, for the ratio.
	var byHand float64
	e.eval(fmt.Sprintf(`(async () => {
		const t0 = performance.now();
		const cs = [%q, %q, %q].map((u, i) => mcp.client(u, i === 1 ? { headers: { "X-Api-Key": "notes-key-123" } } : {}));
		await Promise.all(cs.map(async (c) => { await c.connect(); await c.listTools(); }));
		const ms = performance.now() - t0;
		await Promise.all(cs.map((c) => c.close()));
		return ms;
	})()`, e.MCPURL, e.MCP2URL, everything), &byHand)
	t.Logf("tools() of 3 servers: cold page %v (requests to the demo origins: %v; server-everything not counted), reload with stored grants %v (requests: %v); 3 clients connected and listed by hand: %.0f ms; ratio tools()/by hand after the reload: %.2f",
		coldTime.Round(time.Millisecond), coldRequests, reloadTime.Round(time.Millisecond), reloadRequests, byHand, float64(reloadTime.Milliseconds())/byHand)
}

// TestCatalogDeclineLatch: closing the sign-in popup declines the server:
// it stays out of the tool list, calls to it say the user declined, and no
// popup opens again for tools() or callTool() until enable(id) from a
// click asks again.
func TestCatalogDeclineLatch(t *testing.T) {
	e := newAuthEnv(t, devserver.AuthConfig{})
	e.setSeverWindow(personSeverWindow)
	e.eval(fmt.Sprintf(catalogJS, fmt.Sprintf(`{ servers: { secure: { url: %q }, notes: { url: %q } } }`, e.MCPURL, e.MCP2URL)), nil)
	toolNames(e.env)
	catEvents(e.env)
	popups := e.expectPopup()
	e.gesture(`void cat.authorize("secure").then(() => { window.signedIn = "ok"; }, (e) => { window.signedIn = e.code; })`)
	popup := e.popup(popups)
	if err := chromedp.Do(popup, chromedp.WaitVisible(chromedp.ID("approve"))); err != nil {
		t.Fatal(err)
	}
	personReads() // then closes the window
	if _, err := chromedp.Run(popup, chromedp.Evaluate[any](`window.close()`)); err != nil && err != chromedp.ErrJSUndefined {
		t.Logf("closing the popup: %v", err)
	}
	var outcome string
	e.waitFor("the decline", func() bool {
		_ = e.tryEval(`window.signedIn ?? ""`, &outcome)
		return outcome != ""
	})
	var st struct{ State string }
	e.eval(`cat.status("secure")`, &st)
	if outcome != "declined" || st.State != "declined" {
		t.Fatalf("closing the popup: authorize %q, state %q; want declined", outcome, st.State)
	}
	for range 2 {
		if names := toolNames(e.env); hasPrefix(names, "secure_") {
			t.Errorf("tools() after the decline = %v; want no secure_*", names)
		}
		if r := catCall(e.env, "secure_add", `{a: 1, b: 2}`); !r.IsError || !strings.Contains(r.Text, "declined to sign in") {
			t.Errorf("a call after the decline = %+v; want the declined text", r)
		}
	}
	var opened int
	e.eval(`opened`, &opened)
	if opened != 1 {
		t.Errorf("popups = %d; want 1 (none after the decline)", opened)
	}

	// enable() from a click asks again.
	popups = e.expectPopup()
	e.gesture(`void (window.signedIn = "", cat.enable("secure").then(() => { window.signedIn = "ok"; }, (e) => { window.signedIn = e.code; }))`)
	e.consent(e.popup(popups), "approve")
	e.waitFor("the new sign-in", func() bool {
		_ = e.tryEval(`window.signedIn ?? ""`, &outcome)
		return outcome != ""
	})
	if names := toolNames(e.env); outcome != "ok" || !hasPrefix(names, "secure_") {
		t.Errorf("enable() from a click: %q, tools %v; want a sign-in and secure_*", outcome, names)
	}
}

// TestCatalogBreaker: a server that goes down opens its breaker after the
// configured failures; calls then fail fast with the honest text and never
// reach it; after the cooldown one probe finds it back and the breaker
// closes.
func TestCatalogBreaker(t *testing.T) {
	var down atomic.Bool
	var hits atomic.Int32
	h := demo.SecondHandler(demo.Options{CORS: cors.Options{}})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodOptions {
			hits.Add(1)
		}
		if down.Load() && r.Method == http.MethodPost {
			w.Header().Set("Access-Control-Allow-Origin", r.Header.Get("Origin"))
			http.Error(w, "down for maintenance", http.StatusServiceUnavailable)
			return
		}
		h.ServeHTTP(w, r)
	}))
	closeLive(t, srv)
	e := newEnv(t)
	e.eval(fmt.Sprintf(catalogJS, fmt.Sprintf(`{ servers: { notes: { url: %q } }, breaker: { failures: 2, cooldownMs: 1000 } }`, srv.URL+demo.StreamablePath)), nil)
	if r := catCall(e, "notes_reverse", `{text: "ab"}`); r.IsError || r.Text != "ba" {
		t.Fatalf("a call while up = %+v", r)
	}
	down.Store(true)
	for i := range 2 {
		if r := catCall(e, "notes_reverse", `{text: "ab"}`); !r.IsError {
			t.Fatalf("call %d while down = %+v; want an error result", i, r)
		}
	}
	var st struct {
		Breaker string  `json:"breaker"`
		RetryAt float64 `json:"retryAt"`
	}
	e.eval(`cat.status("notes")`, &st)
	if st.Breaker != "open" || st.RetryAt == 0 {
		t.Fatalf("after 2 failures: %+v; want the breaker open with retryAt", st)
	}
	n := hits.Load()
	if r := catCall(e, "notes_reverse", `{text: "ab"}`); !r.IsError || !strings.Contains(r.Text, "paused calls") {
		t.Errorf("a call with the breaker open = %+v; want the breaker text", r)
	}
	if hits.Load() != n {
		t.Errorf("a call with the breaker open reached the server")
	}
	down.Store(false)
	e.waitFor("the breaker's cooldown to end", func() bool {
		var now float64
		return e.tryEval(`Date.now()`, &now) == nil && now > st.RetryAt
	})
	if r := catCall(e, "notes_reverse", `{text: "ab"}`); r.IsError || r.Text != "ba" {
		t.Errorf("the probe after the cooldown = %+v; want the server's answer", r)
	}
	e.eval(`cat.status("notes")`, &st)
	var transitions []string
	for _, ev := range catEvents(e) {
		if ev.Type == "statuschange" && (len(transitions) == 0 || transitions[len(transitions)-1] != ev.Status.Breaker) {
			transitions = append(transitions, ev.Status.Breaker)
		}
	}
	if st.Breaker != "closed" || !slices.Equal(transitions, []string{"closed", "open", "half_open", "closed"}) {
		t.Errorf("breaker %q, transitions %v; want closed after closed, open, half_open, closed", st.Breaker, transitions)
	}
}
