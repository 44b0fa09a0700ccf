package xengine

// The hostile-server suite: loopback servers that misbehave in one way
// each (devkit/hostile), driven through the public JavaScript API only.
// This file holds what the cases share; the cases are in hostile_*_test.go,
// one file per subject. Every case names itself "input → outcome" and runs
// in a window of its own on a page origin of its own (so its own
// IndexedDB), in parallel with its siblings where the engine allows.

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode"

	"github.com/mcpwasm/mcpwasm/demo"
	"github.com/mcpwasm/mcpwasm/demo/authserver"
	"github.com/mcpwasm/mcpwasm/demo/cors"
	"github.com/mcpwasm/mcpwasm/devkit/devserver"
	"github.com/mcpwasm/mcpwasm/devkit/hostile"
)

// Secrets of the credential cases: the page's API key and the token its
// accessToken() hands out. They must reach the MCP server's origin only.
const (
	hostileKey   = "sk-hostile-e2e-key-7f3a"
	hostileToken = "tok-hostile-e2e-9c1d"
)

// credentialOpts are client options carrying both credentials.
var credentialOpts = fmt.Sprintf(`{ headers: { "X-Api-Key": %q }, accessToken: async () => %q }`, hostileKey, hostileToken)

// xssPayload is markup that, if any page inserted it as HTML, would set
// the traps of the page and of its popup.
const xssPayload = `<img src=x onerror="window.opener&&(window.opener.__pwned=1);window.__pwned=1">`

// spyJS wraps window.open so that the test sees every window the page
// opens, in any engine: while a popup is readable (about:blank or the
// page's own origin) its URL, text, images and trap are recorded
// (window.__popupSeen); a popup that becomes unreadable while open has
// gone to another origin (window.__popupLeft); its closing is counted
// (window.__popupsOpen).
const spyJS = `void (() => {
	window.__popupSeen = [];
	window.__popupLeft = [];
	window.__popupsOpen = 0;
	const open = window.open;
	window.open = function (...args) {
		const w = open.apply(window, args);
		if (!w) return w;
		window.__popupsOpen++;
		const timer = setInterval(() => {
			let closed = true;
			try { closed = w.closed; } catch {}
			if (closed) { clearInterval(timer); window.__popupsOpen--; return; }
			try {
				const d = w.document;
				const href = String(w.location.href);
				const last = window.__popupSeen[window.__popupSeen.length - 1];
				const seen = { href, text: d.body ? d.body.innerText : "", images: d.images.length, pwned: w.__pwned !== undefined };
				if (!last || JSON.stringify(last) !== JSON.stringify(seen)) window.__popupSeen.push(seen);
				if (window.__popupSeen.length > 400) window.__popupSeen.splice(0, 200);
			} catch {
				if (window.__popupLeft.length < 20) window.__popupLeft.push("a popup went to another origin");
			}
		}, 10);
		return w;
	};
})()`

// hostileWorld is a world whose MCP and authorization server origins a
// case has tampered with, plus an attacker origin and a recorder on the
// page, MCP and AS origins. OpenURL (an unprotected demo server) proves
// the runtime still works afterwards.
type hostileWorld struct {
	*world
	Attacker *hostile.Server
	Page     *hostile.Recorder
	MCP      *hostile.Recorder
	ASRec    *hostile.Recorder
	MCPBase  string // the protected MCP server's origin
	// released is closed when a request a hostile MCP server held open
	// without answering ends (the client let it go).
	released chan struct{}
}

// authTamper wraps the handlers of the MCP and AS origins; nil leaves one
// as it is. It runs once the origins' URLs are known.
type authTamper struct {
	MCP func(h *hostileWorld, hd http.Handler) http.Handler
	AS  func(h *hostileWorld, hd http.Handler) http.Handler
}

// newHostileWorld starts the page, the demo MCP server behind the demo
// authorization server (ac), an open demo server and the attacker, with
// tamper applied; it opens the scenario's window on the page with mcp.js
// loaded and the popup spy in place. newServers cannot wrap the servers'
// handlers, so this builds the world from its parts.
func newHostileWorld(t *testing.T, ac devserver.AuthConfig, tamper authTamper) *hostileWorld {
	t.Helper()
	oneWebKitWindow(t)
	ac.Enabled = true
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	t.Cleanup(cancel)
	w := &world{t: t, ctx: ctx, counts: map[string]int{}, start: time.Now()}
	t.Cleanup(w.logTrace)
	h := &hostileWorld{world: w, Page: &hostile.Recorder{}, MCP: &hostile.Recorder{}, ASRec: &hostile.Recorder{}, released: make(chan struct{})}
	h.Attacker = hostile.Start(t, attackerHandler(h))

	var dPage, dMCP, dAS delegate
	page, mcpSrv, asSrv := httptest.NewUnstartedServer(&dPage), httptest.NewUnstartedServer(&dMCP), httptest.NewUnstartedServer(&dAS)
	base := func(s *httptest.Server) string { return "http://" + s.Listener.Addr().String() }
	pc := devserver.PageConfig{MCPURL: base(mcpSrv) + demo.StreamablePath, SSEURL: base(mcpSrv) + demo.SSEPath, ASURL: base(asSrv)}
	w.PageURL, w.MCPURL, w.ASURL, h.MCPBase = base(page), pc.MCPURL, pc.ASURL, base(mcpSrv)
	cfg := devserver.Config{Web: os.DirFS(webDir), Demo: true, Auth: ac,
		DemoOptions: demo.Options{CORS: cors.Options{AllowHeaders: []string{"X-Api-Key"}}}}
	origins, err := devserver.Handlers(cfg, pc)
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range origins {
		switch o.Name {
		case "page":
			dPage.h = w.tracing("page", h.Page.Wrap(w.pageHandler(o.Handler, nil)))
		case "mcp":
			hd := o.Handler
			if tamper.MCP != nil {
				hd = tamper.MCP(h, hd)
			}
			dMCP.h = w.tracing("mcp", w.counting(h.MCP.Wrap(hd)))
		case "as":
			hd := o.Handler
			if tamper.AS != nil {
				hd = tamper.AS(h, hd)
			}
			dAS.h = w.tracing("as", w.counting(h.ASRec.Wrap(hd)))
			w.AS = o.AuthServer
		}
	}
	for _, s := range []*httptest.Server{page, mcpSrv, asSrv} {
		s.Start()
		t.Cleanup(func() { closeServer(s) })
	}
	w.OpenURL = serve(t, demo.Handler(demo.Options{})).URL + demo.StreamablePath
	h.openWindow()
	w.navigate(w.win, w.PageURL+"/e2e/blank.html")
	w.load(w.win)
	w.eval(spyJS, nil)
	return h
}

// openWindow is world.open, retried once when Firefox refuses to create
// a tab because a window it would have opened it beside was just closed
// (another case's, in parallel): e2e/engine should retry that itself.
func (h *hostileWorld) openWindow() {
	h.t.Helper()
	win, err := browser.NewWindow(h.ctx)
	if err != nil {
		h.t.Fatalf("opening a window: %v", err)
	}
	h.track(win)
	h.win = win
	h.preload(win)
}

// webkitWindows holds WebKit's one window at a time: WebKitWebDriver runs
// one session at a time, and each window is a session of its own.
var webkitWindows = make(chan struct{}, 1)

// oneWebKitWindow waits, in WebKit, until no other hostile case holds a
// window, and holds it until t ends (after t's windows close).
func oneWebKitWindow(t *testing.T) {
	if browser.Name() != "webkit" {
		return
	}
	webkitWindows <- struct{}{}
	t.Cleanup(func() { <-webkitWindows })
}

// goCoreOnly runs t in the main runtime's pass only: what a hostile server
// sends is checked by the Go core, the same code in every runtime; the
// sign-in window and its relay, which differ by runtime, are attacked in
// both passes (TestHostileCallback*, TestHostileRegistration*,
// TestHostileAuthLoops, TestHostileToken{EndpointNeverAnswers,ShapesThatSignIn}).
func goCoreOnly(t *testing.T) {
	t.Helper()
	if m := runtimeMode(); m != "main" {
		t.Skipf("runs in the main runtime's pass only (the %s pass would add minutes, not coverage): what a hostile server sends is checked by the Go core, the same code in every runtime", m)
	}
}

// attackerHandler is the attacker's origin: it poses as a protected
// resource and an authorization server of its own, so that a client that
// followed it anywhere would go on to send it something.
func attackerHandler(h *hostileWorld) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		self := h.Attacker.URL
		switch {
		case strings.HasPrefix(r.URL.Path, "/.well-known/oauth-protected-resource"):
			hostile.JSON(w, http.StatusOK, map[string]any{"resource": h.MCPURL, "authorization_servers": []string{self}})
		case strings.HasPrefix(r.URL.Path, "/.well-known/"):
			hostile.JSON(w, http.StatusOK, map[string]any{
				"issuer": self, "authorization_endpoint": self + "/authorize", "token_endpoint": self + "/token",
				"registration_endpoint": self + "/register", "code_challenge_methods_supported": []string{"S256"},
				"response_types_supported": []string{"code"},
			})
		case r.URL.Path == "/register":
			hostile.JSON(w, http.StatusCreated, map[string]any{"client_id": "attacker-client"})
		case r.URL.Path == "/token":
			hostile.JSON(w, http.StatusOK, map[string]any{"access_token": "attacker-token", "token_type": "Bearer"})
		default:
			w.Header().Set("Content-Type", "text/html")
			fmt.Fprint(w, `<!doctype html><title>attacker</title><script>try{window.opener.__pwned=1}catch(e){}window.__pwned=1</script>`)
		}
	})
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// login creates window.c for the protected server with clientOpts,
// starts c.authorize() from a click and waits for it to settle.
func (h *hostileWorld) login(clientOpts string) loginResult {
	h.t.Helper()
	h.startLogin(clientOpts)
	return h.awaitLogin()
}

// lastState returns the state parameter of the last authorization
// request the AS saw.
func (h *hostileWorld) lastState() string {
	state := ""
	for _, q := range h.ASRec.Requests() {
		if q.Path == authserver.AuthorizePath {
			if v, err := url.ParseQuery(q.Query); err == nil && v.Get("state") != "" {
				state = v.Get("state")
			}
		}
	}
	return state
}

// wantErr fails unless r is a rejection with code whose message contains
// every part (case-insensitive).
func wantErr(t *testing.T, r loginResult, code string, parts ...string) {
	t.Helper()
	if r.Error == nil {
		t.Errorf("authorize() succeeded (state %q); want MCPError %q", r.State, code)
		return
	}
	if r.Error.Code != code {
		t.Errorf("authorize() rejected %q (%s); want %q", r.Error.Code, r.Error.Message, code)
	}
	for _, p := range parts {
		if p != "" && !strings.Contains(strings.ToLower(r.Error.Message), strings.ToLower(p)) {
			t.Errorf("the message %q does not say %q", r.Error.Message, p)
		}
	}
}

// sanitised fails when a message a page shows holds control characters or
// is unbounded.
func sanitised(t *testing.T, msg string) {
	t.Helper()
	if strings.IndexFunc(msg, func(r rune) bool { return unicode.IsControl(r) || unicode.Is(unicode.Bidi_Control, r) }) >= 0 {
		t.Errorf("the message holds control characters: %q", msg)
	}
	if len(msg) > 1000 {
		t.Errorf("the message is %d bytes long; want it bounded", len(msg))
	}
}

// idbJS opens the page's "mcpwasm" database as it is, or returns null
// when it does not exist (it is not created here, which would leave the
// product an empty database).
const idbJS = `const dbs = await indexedDB.databases();
	if (!dbs.some((d) => d.name === "mcpwasm")) return null;
	const db = await new Promise((res, rej) => { const r = indexedDB.open("mcpwasm"); r.onsuccess = () => res(r.result); r.onerror = () => rej(r.error); });`

// storeCounts returns the number of records in each object store of the
// page's "mcpwasm" database (empty when it does not exist).
func (h *hostileWorld) storeCounts() map[string]int {
	h.t.Helper()
	var out map[string]int
	h.eval(`(async () => {
		`+idbJS+`
		const out = {};
		for (const name of db.objectStoreNames) {
			out[name] = await new Promise((res) => { const r = db.transaction(name).objectStore(name).count(); r.onsuccess = () => res(r.result); });
		}
		db.close();
		return out;
	})()`, &out)
	return out
}

// noGrant fails when a grant or a pending flow is stored; withMetadata
// also fails on cached discovery metadata (a discovery that failed must
// cache nothing).
func (h *hostileWorld) noGrant(withMetadata bool) {
	h.t.Helper()
	c := h.storeCounts()
	for _, s := range []string{"grants", "pending"} {
		if c[s] != 0 {
			h.t.Errorf("IndexedDB holds %d %s record(s) after a failed sign-in; want none (%v)", c[s], s, c)
		}
	}
	if withMetadata && c["metadata"] != 0 {
		h.t.Errorf("IndexedDB caches %d metadata record(s) from a failed discovery; want none", c["metadata"])
	}
}

// dumpDB returns every record of every store of the page's "mcpwasm"
// database as text, binary fields as latin1 and base64, for looking for
// secrets.
func (h *hostileWorld) dumpDB() string {
	h.t.Helper()
	var dump string
	h.eval(`(async () => {
		`+idbJS+`
		const out = {};
		for (const name of db.objectStoreNames) {
			out[name] = await new Promise((res) => { const r = db.transaction(name).objectStore(name).getAll(); r.onsuccess = () => res(r.result); });
		}
		db.close();
		const seen = new Set();
		const flat = (v) => {
			if (v instanceof Uint8Array || v instanceof ArrayBuffer) { const b = new Uint8Array(v); let s = ""; for (const x of b) s += String.fromCharCode(x); return s + " " + btoa(s); }
			if (v instanceof CryptoKey) return "CryptoKey";
			if (v && typeof v === "object") { if (seen.has(v)) return ""; seen.add(v); return Object.entries(v).map(([k, x]) => k + "=" + flat(x)).join(" "); }
			return String(v);
		};
		return flat(out);
	})()`, &dump)
	return dump
}

// noScript fails when a payload ran: the page's trap, and the trap of any
// popup the page could read.
func (h *hostileWorld) noScript() {
	h.t.Helper()
	var got struct {
		Page  bool `json:"page"`
		Popup bool `json:"popup"`
		Img   bool `json:"img"`
	}
	h.eval(`({ page: window.__pwned !== undefined, popup: (window.__popupSeen ?? []).some((s) => s.pwned),
		img: document.images.length > 0 })`, &got)
	if got.Page || got.Popup {
		h.t.Errorf("an injected script ran (page trap %v, popup trap %v)", got.Page, got.Popup)
	}
	if got.Img {
		h.t.Errorf("an injected element appeared in the page")
	}
}

// popupsClosed fails unless every window the page opened has closed
// within a few seconds of authorize() settling.
func (h *hostileWorld) popupsClosed() {
	h.t.Helper()
	var open int
	for deadline := time.Now().Add(10 * time.Second); ; {
		h.eval(`window.__popupsOpen`, &open)
		if open == 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if open > 0 {
		h.t.Errorf("%d sign-in window(s) still open 10 s after authorize() settled", open)
	}
}

// popupStayedBlank fails when a sign-in window showed anything but
// about:blank: a flow refused before the authorization request must not
// send the window anywhere.
func (h *hostileWorld) popupStayedBlank() {
	h.t.Helper()
	var got struct {
		Seen []string `json:"seen"`
		Left []string `json:"left"`
	}
	h.eval(`({ seen: window.__popupSeen.map((s) => s.href), left: window.__popupLeft })`, &got)
	for _, u := range got.Seen {
		if u != "about:blank" && u != "" {
			h.t.Errorf("the sign-in window left about:blank for %q", u)
		}
	}
	if len(got.Left) > 0 {
		h.t.Errorf("the sign-in window left about:blank: %s", got.Left[0])
	}
}

// secretsOnlyAt fails when any of secrets reached a recorder that is not
// allowed to see it.
func secretsOnlyAt(t *testing.T, secrets []string, all map[string]*hostile.Recorder) {
	t.Helper()
	for name, r := range all {
		for _, s := range secrets {
			if s != "" && r.Contains(s) {
				t.Errorf("the %s origin received a credential (%.12s…)", name, s)
			}
		}
	}
}

// attackerSawNothing fails when the attacker origin received a request
// with a credential: an Authorization or X-Api-Key header, a code, a PKCE
// verifier, a client secret, a token of the demo AS.
func (h *hostileWorld) attackerSawNothing() {
	h.t.Helper()
	for _, q := range h.Attacker.Requests() {
		for _, hd := range []string{"Authorization", "X-Api-Key", "Dpop"} {
			if q.Header.Get(hd) != "" {
				h.t.Errorf("the attacker origin received %s on %s %s", hd, q.Method, q.Path)
			}
		}
		for _, s := range []string{"code_verifier", "client_secret", "code=", authserver.AccessTokenPrefix, authserver.RefreshTokenPrefix, hostileKey, hostileToken} {
			if strings.Contains(q.Query, s) || strings.Contains(q.Body, s) {
				h.t.Errorf("the attacker origin received %q on %s %s", s, q.Method, q.Path)
			}
		}
	}
}

// stillUsable fails unless a new client of the same page connects to the
// open demo server and lists its tools: the runtime survived the case.
func (h *hostileWorld) stillUsable() {
	h.t.Helper()
	var got struct {
		Tools []string `json:"tools"`
		Error *jsErr   `json:"error"`
	}
	h.eval(fmt.Sprintf(`(async () => {
		const c = mcp.client(%q, { storage: "memory" });
		try {
			await c.connect();
			const tools = (await c.listTools()).map((t) => t.name);
			await c.close();
			return { tools };
		} catch (e) { return { error: { code: e.code, message: e.message + " — " + (e.detail ?? "") } }; }
	})()`, h.OpenURL), &got)
	if got.Error != nil || !slices.Contains(got.Tools, "add") {
		h.t.Errorf("afterwards a new client of a good server: tools %v, error %+v; want it to work", got.Tools, got.Error)
	}
}

// quietAfterwards fails when the protected server's origins see more
// requests of the given kinds once a case has its outcome: no loop runs
// on. The positive signal that a loop would have shown by then: a later
// request of the same runtime to the MCP server (a new client without a
// grant, which is refused auth_required) reached the server and settled,
// after what the case had already started.
func (h *hostileWorld) quietAfterwards(kinds ...string) {
	h.t.Helper()
	before := h.snapshot()
	var code string
	h.eval(fmt.Sprintf(`mcp.client(%q, { storage: "memory" }).connect().then(() => "ok", (e) => e.code)`, h.MCPURL), &code)
	d := h.diff(before)
	if d["mcp"] == 0 {
		h.t.Fatalf("the later client's connect() (%s) reached no MCP server: no signal that a loop would have shown", code)
	}
	for _, k := range kinds {
		if d[k] != 0 {
			h.t.Errorf("%d more %s request(s) after the outcome: a loop is still running", d[k], k)
		}
	}
}

// step is the outcome of one call of a case's script.
type step struct {
	Code    string  `json:"code"` // "ok" or the MCPError code
	Status  int     `json:"status"`
	Message string  `json:"message"`
	MS      float64 `json:"ms"`
}

// runSteps creates window.c for url with the test's credentials and the
// extra options, runs script (which calls step(() => …) for each call)
// and returns the outcomes.
func (h *hostileWorld) runSteps(url, extra, script string) []step {
	h.t.Helper()
	var out []step
	h.eval(fmt.Sprintf(`(async () => {
		window.c = mcp.client(%q, Object.assign(%s, %s));
		const out = [];
		const step = async (f) => {
			const t0 = performance.now();
			try { await f(); out.push({ code: "ok", ms: performance.now() - t0 }); }
			catch (e) { out.push({ code: e.code ?? String(e), status: e.status ?? 0, message: e.message + " — " + (e.detail ?? ""), ms: performance.now() - t0 }); }
		};
		%s
		return out;
	})()`, url, credentialOpts, extra, script), &out)
	return out
}

// lazyPopupBlocked is where a sign-in window that the client opens itself
// after a server's answer (connect() of an interactive client, in a click)
// is blocked, and why: such a call ends popup_blocked there.
var lazyPopupBlocked = map[string]string{
	"firefox": "Firefox's popup blocker lets window.open through only while the click is being handled; a window opened 100 ms later, after a request, is blocked",
	"webkit":  "WebKit's popup blocker lets window.open through only while the click is being handled, not after the request that meets the 401",
}

// callResult is how a click's tool call settled.
type callResult struct {
	Code    string `json:"code"` // "ok" or the MCPError code
	Status  int    `json:"status"`
	Message string `json:"message"`
}

// callInGesture is a person clicking the app's "call the tool" button: the
// app connects first when the client is not connected, then calls
// c.callTool("echo"). It waits (bounded) for the outcome.
func (h *hostileWorld) callInGesture() callResult {
	h.t.Helper()
	if err := h.win.Gesture(h.ctx, `void (window.called = null, (c.state === "connected" ? Promise.resolve() : c.connect()).then(() => c.callTool("echo", { text: "x" })).then(() => { called = { code: "ok" }; },
		(e) => { called = { code: e.code, status: e.status ?? 0, message: e.message + " — " + (e.detail ?? "") }; }))`); err != nil {
		h.t.Fatalf("gesture: %v", err)
	}
	var r callResult
	h.eval(`(async () => {
		for (let i = 0; i < 600 && !window.called; i++) await new Promise((r) => setTimeout(r, 50));
		return window.called ?? { code: "test_timeout", message: "callTool() did not settle in 30s" };
	})()`, &r)
	return r
}
