package xengine

import (
	"fmt"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpwasm/mcpwasm/demo"
	"github.com/mcpwasm/mcpwasm/demo/cors"
	"github.com/mcpwasm/mcpwasm/devkit/devserver"
)

// catalogSignInJS starts window.cat's sign-in to "secure" with method
// (authorize or enable); the outcome lands in window.signedIn ("ok" or
// the error's code).
const catalogSignInJS = `void (window.signedIn = "", cat.%s("secure").then(() => { signedIn = "ok"; }, (e) => { signedIn = e.code; }))`

// catalogSignedIn waits for the outcome catalogSignInJS records.
func (w *world) catalogSignedIn() string {
	w.t.Helper()
	var s string
	w.waitFor("the catalog's sign-in to settle", func() bool {
		_ = w.win.Eval(w.ctx, `window.signedIn ?? ""`, &s)
		return s != ""
	})
	return s
}

// TestCatalogOfThreeServers, over the protected demo server (secure), a
// second demo server that wants an API key (notes) and the reference
// TypeScript server (everything): nothing connects before it is needed;
// tools() lists the open servers and marks the protected one needs_auth
// with one authrequired and no popup; a call to it says a sign-in is
// needed; a sign-in through the popup brings its tools with one
// toolschanged; a batch of OpenAI tool calls across servers comes back in
// order; no server's credentials reach another's origin; a reload
// reconnects every server from storage without a popup.
func TestCatalogOfThreeServers(t *testing.T) {
	eitherRuntime(t)
	everything := everythingServer(t)
	// The notes server records the credentials it gets; the world's demo
	// servers allow no X-Api-Key header (CORS), so a key sent to the
	// secure server fails its calls, which the scenario checks.
	var mu sync.Mutex
	var notesCreds []string
	notesH := demo.SecondHandler(demo.Options{CORS: cors.Options{AllowHeaders: []string{"X-Api-Key"}}})
	notes := serve(t, http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodOptions {
			mu.Lock()
			if r.Header.Get("Authorization") != "" {
				notesCreds = append(notesCreds, "Authorization")
			}
			if k := r.Header.Get("X-Api-Key"); k != "" {
				notesCreds = append(notesCreds, "X-Api-Key: "+k)
			}
			mu.Unlock()
		}
		notesH.ServeHTTP(rw, r)
	}))
	w := newServersWith(t, devserver.AuthConfig{}, os.DirFS(webDir), nil, func(cfg *devserver.Config, _ *devserver.PageConfig, _ string) {
		cfg.DemoOptions.CORS.AllowHeaders = nil
	})
	w.open()
	w.navigate(w.win, w.PageURL+"/e2e/blank.html")
	w.load(w.win)
	notesURL := notes.URL + demo.StreamablePath
	servers := fmt.Sprintf(`{ servers: {
		secure: { url: %q },
		notes: { url: %q, headers: { "X-Api-Key": "notes-key-123" } },
		everything: { url: %q },
	} }`, w.MCPURL, notesURL, everything)
	before := w.snapshot()
	w.eval(fmt.Sprintf(watchCatalogJS, servers), nil)
	if d := w.diff(before); d["mcp"]+d["prm"] != 0 {
		t.Errorf("making the catalog sent requests: %v; want none (lazy)", d)
	}

	start := time.Now()
	names := w.catalogTools()
	coldTime := time.Since(start)
	if !anyPrefixed(names, "notes_") || !anyPrefixed(names, "everything_") || anyPrefixed(names, "secure_") {
		t.Fatalf("tools() = %v; want notes_* and everything_*, no secure_*", names)
	}
	var st struct{ State string }
	w.eval(`cat.status("secure")`, &st)
	evs := w.catalogEvents()
	if st.State != "needs_auth" || countEvents(evs, "authrequired") != 1 {
		t.Errorf("secure: state %q, authrequired ×%d; want needs_auth ×1", st.State, countEvents(evs, "authrequired"))
	}
	if again := w.catalogTools(); len(again) != len(names) {
		t.Errorf("tools() again = %d tools; want %d", len(again), len(names))
	}
	if r := w.catalogCall("secure_add", `{a: 1, b: 2}`); !r.IsError || !strings.Contains(r.Text, "needs the user to sign in") {
		t.Errorf("a call before sign-in = %+v; want the needs-sign-in text", r)
	}
	opened := len(w.opensIn(w.win))
	if opened != 0 || countEvents(w.catalogEvents(), "authrequired") != 0 {
		t.Errorf("before sign-in: %d popups, another authrequired; want none", opened)
	}

	// Sign in from a click.
	wait, err := w.win.ExpectPopup(w.ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.win.Gesture(w.ctx, fmt.Sprintf(catalogSignInJS, "authorize")); err != nil {
		t.Fatal(err)
	}
	popup := w.popup(wait, "the sign-in popup")
	w.consentShown(popup)
	if err := popup.Click(w.ctx, "#approve"); err != nil {
		t.Fatalf("approving: %v", err)
	}
	if s := w.catalogSignedIn(); s != "ok" {
		t.Fatalf("cat.authorize(secure) = %q; want ok", s)
	}
	names = w.catalogTools()
	evs = w.catalogEvents()
	if !anyPrefixed(names, "secure_") || countEvents(evs, "toolschanged") != 1 {
		t.Errorf("after sign-in: tools %v, toolschanged ×%d; want secure_* and 1", names, countEvents(evs, "toolschanged"))
	}

	// A model's batch across two servers, results in call order.
	var results []struct {
		ToolCallID string `json:"tool_call_id"`
		Content    string `json:"content"`
	}
	w.eval(`cat.handleToolCalls({ role: "assistant", tool_calls: [
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
	mu.Lock()
	creds := slices.Clone(notesCreds)
	mu.Unlock()
	if slices.Contains(creds, "Authorization") {
		t.Errorf("the notes server received an Authorization header: another server's token")
	}
	if !slices.Contains(creds, "X-Api-Key: notes-key-123") {
		t.Errorf("the notes server did not get its own key: %v", creds)
	}

	// A reload: every server is back from storage, without a popup.
	if err := w.win.Reload(w.ctx); err != nil {
		t.Fatal(err)
	}
	w.load(w.win)
	w.eval(fmt.Sprintf(watchCatalogJS, servers), nil)
	reload := w.snapshot()
	start = time.Now()
	names = w.catalogTools()
	reloadTime := time.Since(start)
	d := w.diff(reload)
	opened = len(w.opensIn(w.win))
	if !anyPrefixed(names, "secure_") || opened != 0 || d["authorize"]+d["token"]+d["register"] != 0 {
		t.Errorf("after a reload: tools %v, %d popups, requests %v; want secure_* without sign-in", names, opened, d)
	}
	if r := w.catalogCall("secure_add", `{a: 2, b: 3}`); r.IsError || r.Text != "2 + 3 = 5" {
		t.Errorf("secure_add after the reload = %+v; want 2 + 3 = 5", r)
	}
	t.Logf("tools() of 3 servers: cold page %v, reload with stored grants %v", coldTime.Round(time.Millisecond), reloadTime.Round(time.Millisecond))
}

// TestCatalogDeclineLatch: closing the sign-in popup declines the server:
// it stays out of the tool list, calls to it say the user declined, and no
// popup opens again for tools() or callTool() until enable(id) from a
// click asks again.
func TestCatalogDeclineLatch(t *testing.T) {
	eitherRuntime(t)
	w := newWorld(t, devserver.AuthConfig{})
	w.eval(fmt.Sprintf(`void (globalThis.__mcpwasmSeverWindowMs = %d)`, severWindowMs), nil)
	w.eval(fmt.Sprintf(watchCatalogJS, fmt.Sprintf(`{ servers: { secure: { url: %q }, notes: { url: %q } } }`, w.MCPURL, w.MCP2URL)), nil)
	w.catalogTools()
	wait, err := w.win.ExpectPopup(w.ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.win.Gesture(w.ctx, fmt.Sprintf(catalogSignInJS, "authorize")); err != nil {
		t.Fatal(err)
	}
	w.closeAsAPerson(w.popup(wait, "the sign-in popup"))
	outcome := w.catalogSignedIn()
	var st struct{ State string }
	w.eval(`cat.status("secure")`, &st)
	if outcome != "declined" || st.State != "declined" {
		t.Fatalf("closing the popup: authorize %q, state %q; want declined", outcome, st.State)
	}
	for range 2 {
		if names := w.catalogTools(); anyPrefixed(names, "secure_") {
			t.Errorf("tools() after the decline = %v; want no secure_*", names)
		}
		if r := w.catalogCall("secure_add", `{a: 1, b: 2}`); !r.IsError || !strings.Contains(r.Text, "was declined or cancelled") {
			t.Errorf("a call after the decline = %+v; want the declined text", r)
		}
	}
	opened := len(w.opensIn(w.win))
	if opened != 1 {
		t.Errorf("popups = %d; want 1 (none after the decline)", opened)
	}

	// enable() from a click asks again.
	wait, err = w.win.ExpectPopup(w.ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.win.Gesture(w.ctx, fmt.Sprintf(catalogSignInJS, "enable")); err != nil {
		t.Fatal(err)
	}
	popup := w.popup(wait, "the sign-in popup of enable()")
	w.consentShown(popup)
	if err := popup.Click(w.ctx, "#approve"); err != nil {
		t.Fatalf("approving: %v", err)
	}
	outcome = w.catalogSignedIn()
	if names := w.catalogTools(); outcome != "ok" || !anyPrefixed(names, "secure_") {
		t.Errorf("enable() from a click: %q, tools %v; want a sign-in and secure_*", outcome, names)
	}
}

// TestCatalogBreaker: a server that goes down opens its breaker after the
// configured failures; calls then fail fast with the honest text and never
// reach it; after the cooldown (1 s, configured) one probe finds it back
// and the breaker closes.
func TestCatalogBreaker(t *testing.T) {
	eitherRuntime(t)
	var down atomic.Bool
	var hits atomic.Int32
	h := demo.SecondHandler(demo.Options{CORS: cors.Options{}})
	srv := serve(t, http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodOptions {
			hits.Add(1)
		}
		if down.Load() && r.Method == http.MethodPost {
			rw.Header().Set("Access-Control-Allow-Origin", r.Header.Get("Origin"))
			http.Error(rw, "down for maintenance", http.StatusServiceUnavailable)
			return
		}
		h.ServeHTTP(rw, r)
	}))
	w := newWorld(t, devserver.AuthConfig{})
	w.eval(fmt.Sprintf(watchCatalogJS, fmt.Sprintf(`{ servers: { notes: { url: %q } }, breaker: { failures: 2, cooldownMs: 1000 } }`, srv.URL+demo.StreamablePath)), nil)
	if r := w.catalogCall("notes_reverse", `{text: "ab"}`); r.IsError || r.Text != "ba" {
		t.Fatalf("a call while up = %+v", r)
	}
	down.Store(true)
	for i := range 2 {
		if r := w.catalogCall("notes_reverse", `{text: "ab"}`); !r.IsError {
			t.Fatalf("call %d while down = %+v; want an error result", i, r)
		}
	}
	var st struct {
		Breaker string  `json:"breaker"`
		RetryAt float64 `json:"retryAt"`
	}
	w.eval(`cat.status("notes")`, &st)
	if st.Breaker != "open" || st.RetryAt == 0 {
		t.Fatalf("after 2 failures: %+v; want the breaker open with retryAt", st)
	}
	n := hits.Load()
	if r := w.catalogCall("notes_reverse", `{text: "ab"}`); !r.IsError || !strings.Contains(r.Text, "paused calls") {
		t.Errorf("a call with the breaker open = %+v; want the breaker text", r)
	}
	if hits.Load() != n {
		t.Errorf("a call with the breaker open reached the server")
	}
	down.Store(false)
	w.waitFor("the breaker's cooldown to end", func() bool {
		var now float64
		return w.win.Eval(w.ctx, `Date.now()`, &now) == nil && now > st.RetryAt
	})
	if r := w.catalogCall("notes_reverse", `{text: "ab"}`); r.IsError || r.Text != "ba" {
		t.Errorf("the probe after the cooldown = %+v; want the server's answer", r)
	}
	w.eval(`cat.status("notes")`, &st)
	var transitions []string
	for _, ev := range w.catalogEvents() {
		if ev.Type == "statuschange" && (len(transitions) == 0 || transitions[len(transitions)-1] != ev.Status.Breaker) {
			transitions = append(transitions, ev.Status.Breaker)
		}
	}
	if st.Breaker != "closed" || !slices.Equal(transitions, []string{"closed", "open", "half_open", "closed"}) {
		t.Errorf("breaker %q, transitions %v; want closed after closed, open, half_open, closed", st.Breaker, transitions)
	}
}
