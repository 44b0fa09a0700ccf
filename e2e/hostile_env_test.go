package e2e

// The hostile-server suite: loopback servers that misbehave in one way
// each, driven in Chromium through the public JavaScript API only. This
// file holds what the cases share; the cases are in hostile_*_test.go, one
// file per subject. Every case names itself "input → outcome" and runs in
// its own tab on its own page origin (so its own IndexedDB), in parallel.

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"

	"github.com/mcpwasm/mcpwasm/demo"
	"github.com/mcpwasm/mcpwasm/demo/authserver"
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

// spyJS wraps window.open so that the test sees every window the page
// opens: while a popup is on the page's own origin its URL, text, images
// and trap are recorded (window.__popupSeen); its closing is noted.
const spyJS = `void (() => {
	window.__popupSeen = [];
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
				window.__popupSeen.push({ href: String(w.location.href), text: d.body ? d.body.innerText : "",
					images: d.images.length, scripts: d.scripts.length, pwned: w.__pwned !== undefined });
				if (window.__popupSeen.length > 400) window.__popupSeen.splice(0, 200);
			} catch { /* on another origin */ }
		}, 10);
		return w;
	};
})()`

// popupLog records, from the browser's target events, every URL that a
// window opened by the test's tab showed, and which are still open.
type popupLog struct {
	mu   sync.Mutex
	own  target.ID
	urls map[target.ID][]string
	open map[target.ID]bool
}

func (e *env) watchPopups() *popupLog {
	l := &popupLog{own: chromedp.FromContext(e.ctx).Target.TargetID, urls: map[target.ID][]string{}, open: map[target.ID]bool{}}
	chromedp.ListenBrowser(e.ctx, func(ev any) {
		l.mu.Lock()
		defer l.mu.Unlock()
		note := func(ti *target.Info) {
			if ti.OpenerID != l.own && l.urls[ti.TargetID] == nil {
				return
			}
			if u := l.urls[ti.TargetID]; len(u) == 0 || u[len(u)-1] != ti.URL {
				l.urls[ti.TargetID] = append(u, ti.URL)
			}
		}
		switch ev := ev.(type) {
		case *target.EventTargetCreated:
			if ev.TargetInfo.OpenerID == l.own {
				l.open[ev.TargetInfo.TargetID] = true
			}
			note(ev.TargetInfo)
		case *target.EventTargetInfoChanged:
			note(ev.TargetInfo)
		case *target.EventTargetDestroyed:
			delete(l.open, ev.TargetID)
		}
	})
	return l
}

// URLs returns every URL a popup showed, in order.
func (l *popupLog) URLs() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for _, us := range l.urls {
		out = append(out, us...)
	}
	return out
}

func (l *popupLog) stillOpen() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.open)
}

// hostileAuthEnv is an auth environment (page, protected demo MCP server,
// demo authorization server) whose handlers a case has tampered with, plus
// an attacker origin, an unprotected demo server to prove the runtime still
// works, and a recorder on every origin.
type hostileAuthEnv struct {
	*authEnv
	Attacker *hostile.Server
	Good     string // Streamable HTTP URL of an unprotected demo server
	Page     *hostile.Recorder
	MCP      *hostile.Recorder
	ASRec    *hostile.Recorder
	popups   *popupLog
}

// authTamper wraps the handlers of the MCP and AS origins; nil leaves one
// as it is. It runs once the origins' URLs are known (e.MCPURL, e.ASURL,
// e.Attacker.URL).
type authTamper struct {
	MCP func(e *hostileAuthEnv, h http.Handler) http.Handler
	AS  func(e *hostileAuthEnv, h http.Handler) http.Handler
}

// newHostileAuthEnv starts the auth environment with tamper applied and
// opens the test's tab with mcp.js loaded, the popup spy in place and
// window.__pwned unset.
func newHostileAuthEnv(t *testing.T, ac devserver.AuthConfig, tamper authTamper) *hostileAuthEnv {
	t.Helper()
	h := &hostileAuthEnv{Page: &hostile.Recorder{}, MCP: &hostile.Recorder{}, ASRec: &hostile.Recorder{}}
	h.Attacker = hostile.Start(t, attackerHandler(h))
	good := httptest.NewServer(demo.Handler(demo.Options{}))
	t.Cleanup(good.Close)
	h.Good = good.URL + demo.StreamablePath
	h.authEnv = newAuthEnvWith(t, ac, func(e *authEnv, name string, hd http.Handler) http.Handler {
		h.authEnv = e
		switch name {
		case "page":
			return h.Page.Wrap(hd)
		case "mcp":
			if tamper.MCP != nil {
				hd = tamper.MCP(h, hd)
			}
			return h.MCP.Wrap(hd)
		case "as":
			if tamper.AS != nil {
				hd = tamper.AS(h, hd)
			}
			return h.ASRec.Wrap(hd)
		}
		return hd
	})
	h.popups = h.watchPopups()
	h.eval(spyJS, nil)
	return h
}

// attackerHandler is the attacker's origin: it poses as a protected
// resource and an authorization server of its own, so that a client that
// followed it anywhere would go on to send it something.
func attackerHandler(h *hostileAuthEnv) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		self := h.Attacker.URL
		switch {
		case strings.HasPrefix(r.URL.Path, "/.well-known/oauth-protected-resource"):
			resource := ""
			if h.authEnv != nil {
				resource = h.MCPURL
			}
			writeJSONBody(w, map[string]any{"resource": resource, "authorization_servers": []string{self}})
		case strings.HasPrefix(r.URL.Path, "/.well-known/"):
			writeJSONBody(w, map[string]any{
				"issuer": self, "authorization_endpoint": self + "/authorize", "token_endpoint": self + "/token",
				"registration_endpoint": self + "/register", "code_challenge_methods_supported": []string{"S256"},
				"response_types_supported": []string{"code"},
			})
		case r.URL.Path == "/register":
			hostile.JSON(w, http.StatusCreated, map[string]any{"client_id": "attacker-client"})
		case r.URL.Path == "/token":
			writeJSONBody(w, map[string]any{"access_token": "attacker-token", "token_type": "Bearer"})
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

func writeJSONBody(w http.ResponseWriter, v any) { hostile.JSON(w, http.StatusOK, v) }

// login starts c.authorize() in a gesture with clientOpts and waits for it
// to settle.
func (h *hostileAuthEnv) login(clientOpts string) loginResult {
	h.t.Helper()
	h.startLogin(clientOpts)
	return h.awaitLogin()
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
		if !strings.Contains(strings.ToLower(r.Error.Message), strings.ToLower(p)) {
			t.Errorf("the message %q does not say %q", r.Error.Message, p)
		}
	}
}

// storeCounts returns the number of records in each object store of the
// page's "mcpwasm" database (empty when it does not exist: it is not
// created here, which would leave the product an empty database).
func (e *env) storeCounts() map[string]int {
	e.t.Helper()
	var out map[string]int
	e.eval(`(async () => {
		const dbs = await indexedDB.databases();
		if (!dbs.some((d) => d.name === "mcpwasm")) return {};
		const db = await new Promise((res, rej) => { const r = indexedDB.open("mcpwasm"); r.onsuccess = () => res(r.result); r.onerror = () => rej(r.error); });
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
func (e *env) noGrant(withMetadata bool) {
	e.t.Helper()
	c := e.storeCounts()
	for _, s := range []string{"grants", "pending"} {
		if c[s] != 0 {
			e.t.Errorf("IndexedDB holds %d %s record(s) after a failed sign-in; want none (%v)", c[s], s, c)
		}
	}
	if withMetadata && c["metadata"] != 0 {
		e.t.Errorf("IndexedDB caches %d metadata record(s) from a failed discovery; want none", c["metadata"])
	}
}

// noScript fails when a payload ran: the page's trap, and the trap of any
// popup the page could read.
func (e *env) noScript() {
	e.t.Helper()
	var got struct {
		Page  bool `json:"page"`
		Popup bool `json:"popup"`
		Img   bool `json:"img"`
	}
	e.eval(`({ page: window.__pwned !== undefined, popup: (window.__popupSeen ?? []).some((s) => s.pwned),
		img: document.images.length > 0 })`, &got)
	if got.Page || got.Popup {
		e.t.Errorf("an injected script ran (page trap %v, popup trap %v)", got.Page, got.Popup)
	}
	if got.Img {
		e.t.Errorf("an injected element appeared in the page")
	}
}

// popupsClosed fails unless every window the page opened is closed within
// a few seconds, and none ever showed a URL starting with one of bad.
func (h *hostileAuthEnv) popupsClosed(bad ...string) {
	h.t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for h.popups.stillOpen() > 0 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if n := h.popups.stillOpen(); n > 0 {
		h.t.Errorf("%d sign-in window(s) still open after authorize() settled (URLs: %q)", n, h.popups.URLs())
	}
	for _, u := range h.popups.URLs() {
		for _, b := range bad {
			if strings.HasPrefix(strings.ToLower(u), strings.ToLower(b)) {
				h.t.Errorf("the sign-in window was sent to %q", u)
			}
		}
	}
}

// secretsOnlyAt fails when any of secrets reached a recorder that is not
// allowed to see it.
func secretsOnlyAt(t *testing.T, secrets []string, allowed map[*hostile.Recorder]bool, all map[string]*hostile.Recorder) {
	t.Helper()
	for name, r := range all {
		if allowed[r] {
			continue
		}
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
func (h *hostileAuthEnv) attackerSawNothing() {
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

// stillUsable fails unless a new client of the same page connects to a
// good demo server and lists its tools: the runtime survived the case.
func (e *env) stillUsable(goodURL string) {
	e.t.Helper()
	var got struct {
		Tools []string `json:"tools"`
		Error *jsErr   `json:"error"`
	}
	e.eval(fmt.Sprintf(`(async () => {
		const c = mcp.client(%q, { storage: "memory" });
		try {
			await c.connect();
			const tools = (await c.listTools()).map((t) => t.name);
			await c.close();
			return { tools };
		} catch (e) { return { error: { code: e.code, message: e.message + " — " + (e.detail ?? "") } }; }
	})()`, goodURL), &got)
	if got.Error != nil || !slices.Contains(got.Tools, "add") {
		e.t.Errorf("afterwards a new client of a good server: tools %v, error %+v; want it to work", got.Tools, got.Error)
	}
}

// noMoreRequests waits a moment and fails if the origins counted by h see
// any more requests of the given kinds: no loop is running on.
func (h *hostileAuthEnv) noMoreRequests(kinds ...string) {
	h.t.Helper()
	before := h.snapshot()
	time.Sleep(1500 * time.Millisecond)
	d := h.diff(before)
	for _, k := range kinds {
		if d[k] != 0 {
			h.t.Errorf("%d more %s request(s) after the outcome: a loop is still running", d[k], k)
		}
	}
}

// dumpDB returns every record of every store of the page's "mcpwasm"
// database as text, binary fields as latin1 and base64 (as
// TestStoredGrantIsNotPlaintext does), for looking for secrets.
func (e *env) dumpDB() string {
	e.t.Helper()
	var dump string
	e.eval(`(async () => {
		const dbs = await indexedDB.databases();
		if (!dbs.some((d) => d.name === "mcpwasm")) return "";
		const db = await new Promise((res, rej) => { const r = indexedDB.open("mcpwasm"); r.onsuccess = () => res(r.result); r.onerror = () => rej(r.error); });
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
