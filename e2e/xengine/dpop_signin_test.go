package xengine

import (
	"net/http"
	"strings"
	"testing"

	"github.com/mcpwasm/mcpwasm/demo/authserver"
	"github.com/mcpwasm/mcpwasm/devkit/devserver"
)

// TestDPoPSignInReloadAndStolenToken: with the demo servers enforcing
// DPoP (with nonces), a popup sign-in gets a DPoP-bound grant, the page
// calls a tool with DPoP proofs only, the key in IndexedDB is not
// extractable, a reload proves possession with that key without a new
// sign-in, and the token taken from the wire is refused without the key.
func TestDPoPSignInReloadAndStolenToken(t *testing.T) {
	parallel(t)
	w, wire := newWiredWorld(t, devserver.AuthConfig{DPoP: true})
	if !w.signedIn(w.popupSignIn(`{ clientName: "xengine dpop" }`)) { // dpop: "auto"
		return
	}
	var sum float64
	w.eval(`(async () => (await c.callTool("add", { a: 2, b: 3 })).structuredContent?.sum)()`, &sum)
	if sum != 5 {
		t.Fatalf("add after a DPoP sign-in = %v; want 5", sum)
	}

	// The authorization server asked for its nonce once and then issued a
	// DPoP-bound grant.
	var asNonce, codeOK int
	for _, ev := range w.AS.Events() {
		switch {
		case ev.Kind != authserver.EventTokenCode:
		case ev.Err == "use_dpop_nonce":
			asNonce++
		case ev.Err == "":
			codeOK++
		default:
			t.Errorf("token request refused: %s %s", ev.Err, ev.Detail)
		}
	}
	if asNonce != 1 || codeOK != 1 {
		t.Errorf("token requests: %d use_dpop_nonce, %d successful; want 1 and 1", asNonce, codeOK)
	}
	if checkDPoPWire(t, wire, "sign-in and call", 0) == 0 {
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
		Export      string `json:"export"`
	}
	w.eval(openDBJS, nil)
	w.eval(`(async () => {
		const db = await openDB();
		const all = await new Promise((res, rej) => { const r = db.transaction("dpop").objectStore("dpop").getAll(); r.onsuccess = () => res(r.result); r.onerror = () => rej(r.error); });
		db.close();
		const k = all[0]?.privateKey;
		return { n: all.length, extractable: k?.extractable, type: k?.type, alg: k?.algorithm?.name, curve: k?.algorithm?.namedCurve,
			publicExportable: !!(await crypto.subtle.exportKey("jwk", all[0].publicKey)).x,
			export: await crypto.subtle.exportKey("jwk", k).then(() => "exported", (e) => e.name) };
	})()`, &key)
	if key.N != 1 || key.Extractable == nil || *key.Extractable || key.Type != "private" || key.Alg != "ECDSA" || key.Curve != "P-256" || !key.PublicExp {
		t.Errorf("the stored DPoP key = %+v; want one ECDSA P-256 private key, extractable false", key)
	}
	if key.Export != "InvalidAccessError" {
		t.Errorf("exporting the private key: %q; want InvalidAccessError", key.Export)
	}

	// Reload: the bound grant and its key come from IndexedDB; no popup,
	// no token request, DPoP again.
	from := len(wire.all())
	reqs, sum := w.reloadAndConnect(`{}`)
	if sum != 3 {
		t.Errorf("add(1, 2) after reload = %v; want 3", sum)
	}
	for _, k := range []string{"authorize", "token", "register"} {
		if reqs[k] != 0 {
			t.Errorf("reload: %d %s requests; want 0 (all: %v)", reqs[k], k, reqs)
		}
	}
	checkDPoPWire(t, wire, "after reload", from)

	// The stolen token, replayed without the key: as Bearer, as DPoP
	// without a proof. Both 401.
	stolen := wire.stolen()
	if stolen == "" {
		t.Fatal("no access token was seen on the wire")
	}
	for _, scheme := range []string{"Bearer", "DPoP"} {
		req, err := http.NewRequestWithContext(w.ctx, "POST", w.MCPURL, strings.NewReader(
			`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"thief","version":"1"}}}`))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Authorization", scheme+" "+stolen)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if ch := resp.Header.Get("WWW-Authenticate"); resp.StatusCode != http.StatusUnauthorized || !strings.HasPrefix(ch, "DPoP ") {
			t.Errorf("stolen token as %s without a proof: %d %q; want 401 with a DPoP challenge", scheme, resp.StatusCode, ch)
		}
	}
}
