package e2e

import (
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/mcpwasm/mcpwasm/demo/authserver"
	"github.com/mcpwasm/mcpwasm/devkit/devserver"
	"github.com/mcpwasm/mcpwasm/e2e/internal/respstatus"
)

// mcpSeen is one request the demo MCP server answered: the scheme of its
// Authorization header, whether it had a DPoP proof, the status and the
// challenge.
type mcpSeen struct {
	scheme    string
	proof     bool
	status    int
	challenge string
	// bareProbe: a server/discover without the Mcp-Method header, which
	// a first connect of an unknown era sends and the server answers 400
	// (header mismatch) before the probe is sent again with it.
	bareProbe bool
}

// wireLog records what the demo MCP server saw and the last access token it
// was sent (the token a thief on the wire would take).
type wireLog struct {
	mu    sync.Mutex
	seen  []mcpSeen
	token string
}

func (l *wireLog) all() []mcpSeen {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]mcpSeen(nil), l.seen...)
}

func (l *wireLog) stolen() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.token
}

// record wraps the "mcp" origin's handler so that l sees its requests.
func (l *wireLog) record(_ *authEnv, name string, h http.Handler) http.Handler {
	if name != "mcp" {
		return h
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodOptions || r.URL.Path != "/mcp" {
			h.ServeHTTP(w, r)
			return
		}
		scheme, token, _ := strings.Cut(r.Header.Get("Authorization"), " ")
		sw := &respstatus.Writer{ResponseWriter: w}
		h.ServeHTTP(sw, r)
		l.mu.Lock()
		defer l.mu.Unlock()
		l.seen = append(l.seen, mcpSeen{scheme: scheme, proof: r.Header.Get("DPoP") != "",
			status: sw.Status, challenge: w.Header().Get("WWW-Authenticate"),
			bareProbe: r.Header.Get("Mcp-Method") == "" && r.Header.Get("Mcp-Protocol-Version") >= "2026-07-28"})
		if token != "" {
			l.token = token
		}
	})
}

// TestDPoPSignInReloadAndStolenToken: with the demo servers enforcing DPoP
// (with nonces), a popup sign-in gets a DPoP-bound grant, the page calls a
// tool with DPoP proofs only, a reload reuses the grant without a popup,
// the key in IndexedDB is not extractable, and the token taken from the
// wire is refused without the key.
func TestDPoPSignInReloadAndStolenToken(t *testing.T) {
	var wire wireLog
	e := newAuthEnvWith(t, devserver.AuthConfig{DPoP: true}, wire.record)

	e.signIn(`{ clientName: "e2e dpop" }`) // dpop: "auto"
	var sum any
	e.eval(`(async () => (await c.callTool("add", { a: 2, b: 3 })).structuredContent?.sum)()`, &sum)
	if sum != float64(5) {
		t.Fatalf("add after a DPoP sign-in = %v; want 5", sum)
	}

	// The authorization server asked for its nonce once and then issued a
	// DPoP-bound grant.
	var asNonce, codeOK int
	for _, ev := range e.AS.Events() {
		if ev.Kind == authserver.EventTokenCode && ev.Err == "use_dpop_nonce" {
			asNonce++
		}
		if ev.Kind == authserver.EventTokenCode && ev.Err == "" {
			codeOK++
		}
		if ev.Kind == authserver.EventTokenCode && ev.Err != "" && ev.Err != "use_dpop_nonce" {
			t.Errorf("token request refused: %s %s", ev.Err, ev.Detail)
		}
	}
	if asNonce != 1 || codeOK != 1 {
		t.Errorf("token requests: %d use_dpop_nonce, %d successful; want 1 and 1", asNonce, codeOK)
	}

	checkWire := func(when string, from int) int {
		t.Helper()
		seen := wire.all()
		var ok, rsNonce int
		for _, s := range seen[from:] {
			switch {
			case s.scheme == "":
				// The first request of a sign-in, before there is a token.
			case !strings.EqualFold(s.scheme, "DPoP") || !s.proof:
				t.Errorf("%s: the MCP server saw Authorization %q (proof %v); want DPoP with a proof", when, s.scheme, s.proof)
			case s.status == http.StatusOK || s.status == http.StatusAccepted:
				ok++
			case s.status == http.StatusUnauthorized && strings.Contains(s.challenge, `error="use_dpop_nonce"`):
				rsNonce++
			case s.status == http.StatusBadRequest && s.bareProbe:
				// The first connect's probe, sent again with its headers.
			case s.status >= 400:
				t.Errorf("%s: a DPoP request was refused: %d %q", when, s.status, s.challenge)
			}
		}
		if ok == 0 {
			t.Errorf("%s: no DPoP request was accepted (%+v)", when, seen[from:])
		}
		t.Logf("%s: %d DPoP requests accepted, %d nonce challenges", when, ok, rsNonce)
		return rsNonce
	}
	if checkWire("sign-in and call", 0) == 0 {
		t.Error("the MCP server never asked for its nonce; the test would not see the retry")
	}

	// The key: one pair in IndexedDB, its private key not extractable.
	var key struct {
		N           int    `json:"n"`
		Extractable *bool  `json:"extractable"`
		Type        string `json:"type"`
		Alg         string `json:"alg"`
		Curve       string `json:"curve"`
		PublicExp   bool   `json:"publicExportable"`
	}
	e.eval(`(async () => {
		const db = await openDB();
		const all = await new Promise((res, rej) => { const r = db.transaction("dpop").objectStore("dpop").getAll(); r.onsuccess = () => res(r.result); r.onerror = () => rej(r.error); });
		db.close();
		const k = all[0]?.privateKey;
		return { n: all.length, extractable: k?.extractable, type: k?.type, alg: k?.algorithm?.name, curve: k?.algorithm?.namedCurve,
			publicExportable: !!(await crypto.subtle.exportKey("jwk", all[0].publicKey)).x };
	})()`, &key)
	if key.N != 1 || key.Extractable == nil || *key.Extractable || key.Type != "private" || key.Alg != "ECDSA" || key.Curve != "P-256" || !key.PublicExp {
		t.Errorf("the stored DPoP key = %+v; want one ECDSA P-256 private key, extractable false", key)
	}
	var exported string
	e.eval(`(async () => {
		const db = await openDB();
		const all = await new Promise((res) => { const r = db.transaction("dpop").objectStore("dpop").getAll(); r.onsuccess = () => res(r.result); });
		db.close();
		return crypto.subtle.exportKey("jwk", all[0].privateKey).then(() => "exported", (e) => e.name);
	})()`, &exported)
	if exported != "InvalidAccessError" {
		t.Errorf("exporting the private key: %q; want InvalidAccessError", exported)
	}

	// Reload: the bound grant and its key come from IndexedDB; no popup,
	// no token request, DPoP again.
	from := len(wire.all())
	before := e.snapshot()
	if err := chromedp.Do(e.ctx, chromedp.Reload()); err != nil {
		t.Fatal(err)
	}
	e.eval(fmt.Sprintf(`(async () => {
		const m = await import("/mcp.js");
		window.mcp = await m.load();
		const c = mcp.client(%q);
		await c.connect();
		return (await c.callTool("add", { a: 4, b: 5 })).structuredContent?.sum;
	})()`, e.MCPURL), &sum)
	if sum != float64(9) {
		t.Fatalf("add after reload = %v; want 9", sum)
	}
	warm := e.diff(before)
	for _, kind := range []string{"register", "token", "authorize"} {
		if warm[kind] != 0 {
			t.Errorf("reload made %d %s requests; want 0 (all: %v)", warm[kind], kind, warm)
		}
	}
	checkWire("after reload", from)

	// The stolen token, replayed without the key: as Bearer, as DPoP
	// without a proof. Both 401.
	stolen := wire.stolen()
	if stolen == "" {
		t.Fatal("no access token was seen on the wire")
	}
	for _, authz := range []string{"Bearer " + stolen, "DPoP " + stolen} {
		req, _ := http.NewRequest("POST", e.MCPURL, strings.NewReader(
			`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"thief","version":"1"}}}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Authorization", authz)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		scheme, _, _ := strings.Cut(authz, " ")
		if ch := resp.Header.Get("WWW-Authenticate"); resp.StatusCode != http.StatusUnauthorized || !strings.HasPrefix(ch, "DPoP ") {
			t.Errorf("stolen token as %s without a proof: %d %q; want 401 with a DPoP challenge", scheme, resp.StatusCode, ch)
		}
	}
}

// TestDPoPOption: the dpop option reaches the client. With storage
// "memory" the key lives in the page only (nothing in IndexedDB); with
// dpop: false the client sends no proof and the DPoP-only demo server
// refuses the sign-in; with dpop: true against a server without DPoP the
// sign-in fails rather than fall back to a bearer token.
func TestDPoPOption(t *testing.T) {
	t.Run("memory", func(t *testing.T) {
		var wire wireLog
		e := newAuthEnvWith(t, devserver.AuthConfig{DPoP: true}, wire.record)
		e.signIn(`{ storage: "memory", dpop: true }`)
		var stored int
		e.eval(`(async () => {
			const db = await openDB();
			const n = db.objectStoreNames.contains("dpop")
				? await new Promise((res) => { const r = db.transaction("dpop").objectStore("dpop").count(); r.onsuccess = () => res(r.result); })
				: 0;
			db.close();
			return n;
		})()`, &stored)
		if stored != 0 {
			t.Errorf("storage memory: %d DPoP keys in IndexedDB; want 0", stored)
		}
		var dpop bool
		for _, s := range wire.all() {
			if strings.EqualFold(s.scheme, "DPoP") && s.proof && s.status == http.StatusOK {
				dpop = true
			}
		}
		if !dpop {
			t.Errorf("storage memory: no accepted DPoP request (%+v)", wire.all())
		}
	})
	t.Run("off against a DPoP server", func(t *testing.T) {
		e := newAuthEnv(t, devserver.AuthConfig{DPoP: true})
		popups := e.expectPopup()
		e.startLogin(`{ dpop: false }`)
		e.consent(e.popup(popups), "approve")
		r := e.awaitLogin()
		if r.OK || r.Error == nil || r.Error.Code != "token_failed" {
			t.Fatalf("dpop: false against a DPoP-only server: %+v; want token_failed", r)
		}
		for _, ev := range e.AS.Events() {
			if ev.Kind == authserver.EventTokenCode && ev.Err != "invalid_dpop_proof" {
				t.Errorf("token request: %q %q; want invalid_dpop_proof (no proof sent)", ev.Err, ev.Detail)
			}
		}
	})
	t.Run("on against a server without DPoP", func(t *testing.T) {
		e := newAuthEnv(t, devserver.AuthConfig{})
		e.startLogin(`{ dpop: true }`)
		r := e.awaitLogin()
		if r.OK || r.Error == nil || r.Error.Code != "discovery_failed" || !strings.Contains(r.Error.Message, "DPoP") {
			t.Fatalf("dpop: true against a server without DPoP: %+v; want discovery_failed naming DPoP", r)
		}
		if e.snapshot()["token"] != 0 {
			t.Errorf("a token request was made; want none")
		}
	})
}
