package xengine

import (
	"net/http"
	"strings"
	"testing"

	"github.com/mcpwasm/mcpwasm/demo/authserver"
	"github.com/mcpwasm/mcpwasm/devkit/devserver"
)

// TestDPoPOption: the dpop option reaches the client. With storage
// "memory" the key lives in the runtime only (nothing in IndexedDB); with
// dpop: false the client sends no proof and the DPoP-only demo server
// refuses the sign-in; with dpop: true against a server without DPoP the
// sign-in fails rather than fall back to a bearer token.
func TestDPoPOption(t *testing.T) {
	eitherRuntime(t)
	parallel(t)
	t.Run("memory", func(t *testing.T) {
		parallel(t)
		w, wire := newWiredWorld(t, devserver.AuthConfig{DPoP: true})
		if !w.signedIn(w.popupSignIn(`{ storage: "memory", dpop: true }`)) {
			return
		}
		var stored int
		w.eval(openDBJS, nil)
		w.eval(`(async () => {
			const db = await openDB();
			const n = db.objectStoreNames.contains("dpop")
				? await new Promise((res, rej) => { const r = db.transaction("dpop").objectStore("dpop").count(); r.onsuccess = () => res(r.result); r.onerror = () => rej(r.error); })
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
			t.Errorf("storage memory: no accepted DPoP request (%v)", wire.all())
		}
	})
	t.Run("off against a DPoP server", func(t *testing.T) {
		parallel(t)
		w := newWorld(t, devserver.AuthConfig{DPoP: true})
		r := w.approve(w.consentPopup(`{ dpop: false }`))
		if r.OK || r.Error == nil || r.Error.Code != "token_failed" {
			t.Fatalf("dpop: false against a DPoP-only server: %s; want token_failed", r)
		}
		var refused int
		for _, ev := range w.AS.Events() {
			if ev.Kind != authserver.EventTokenCode {
				continue
			}
			if ev.Err != "invalid_dpop_proof" {
				t.Errorf("token request: %q %q; want invalid_dpop_proof (no proof sent)", ev.Err, ev.Detail)
			}
			refused++
		}
		if refused == 0 {
			t.Error("the authorization server saw no token request; want one refused for its missing proof")
		}
	})
	t.Run("on against a server without DPoP", func(t *testing.T) {
		parallel(t)
		w := newWorld(t, devserver.AuthConfig{})
		w.startLogin(`{ dpop: true }`)
		r := w.awaitLogin()
		if r.OK || r.Error == nil || r.Error.Code != "discovery_failed" || !strings.Contains(r.Error.Message, "DPoP") {
			t.Fatalf("dpop: true against a server without DPoP: %s; want discovery_failed naming DPoP", r)
		}
		if n := w.snapshot()["token"]; n != 0 {
			t.Errorf("%d token requests; want none", n)
		}
	})
}
