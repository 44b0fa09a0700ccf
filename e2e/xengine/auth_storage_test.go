package xengine

import (
	"fmt"
	"strings"
	"testing"

	"github.com/mcpwasm/mcpwasm/demo/authserver"
	"github.com/mcpwasm/mcpwasm/devkit/devserver"
)

// readStores is page-side JavaScript: a function of a list of store
// names (undefined: every store) that resolves with the client's
// IndexedDB records as they are, { store: [records] }, for scenarios that
// inspect what is stored.
const readStores = `(names) => new Promise((ok, fail) => {
	const r = indexedDB.open("mcpwasm");
	r.onerror = () => fail(r.error);
	r.onsuccess = () => {
		const db = r.result, out = {};
		const tx = db.transaction(names ?? [...db.objectStoreNames]);
		for (const n of tx.objectStoreNames) { const g = tx.objectStore(n).getAll(); g.onsuccess = () => { out[n] = g.result; }; }
		tx.oncomplete = () => { db.close(); ok(out); };
		tx.onabort = () => { db.close(); fail(tx.error); };
	};
})`

// TestStoredGrantIsNotPlaintext: after a sign-in, no record of the
// client's database holds token material, as text or as base64; the
// encryption key is a CryptoKey that cannot be exported.
func TestStoredGrantIsNotPlaintext(t *testing.T) {
	parallel(t)
	w := newWorld(t, devserver.AuthConfig{})
	w.mustSignIn(w.popupSignIn(`{}`))
	var dump string
	w.eval(fmt.Sprintf(`(async () => {
		const out = await (%s)();
		const seen = new Set();
		const flat = (v) => {
			if (v instanceof Uint8Array || v instanceof ArrayBuffer) { const b = new Uint8Array(v); let s = ""; for (const x of b) s += String.fromCharCode(x); return s + " " + btoa(s); }
			if (v instanceof CryptoKey) return "CryptoKey(extractable=" + v.extractable + ")";
			if (v && typeof v === "object") { if (seen.has(v)) return ""; seen.add(v); return Object.entries(v).map(([k, x]) => k + "=" + flat(x)).join(" "); }
			return String(v);
		};
		return flat(out);
	})()`, readStores), &dump)
	if !strings.Contains(dump, "grants=") || !strings.Contains(dump, "CryptoKey(extractable=false)") {
		t.Fatalf("the dump does not look like our database (no grants, no unexportable key): %.300s", dump)
	}
	for _, secret := range []string{authserver.AccessTokenPrefix, authserver.RefreshTokenPrefix} {
		if strings.Contains(dump, secret) {
			t.Errorf("IndexedDB holds token material in plaintext (%q found)", secret)
		}
	}
}

// TestClearStorageSignsEverythingOut: mcp.clearStorage() empties the
// grants, registrations, metadata and pending sign-ins; the client needs
// a sign-in at once and its next connect() says so.
func TestClearStorageSignsEverythingOut(t *testing.T) {
	parallel(t)
	w := newWorld(t, devserver.AuthConfig{})
	w.mustSignIn(w.popupSignIn(`{}`))
	var got struct {
		State   string `json:"state"`
		Records int    `json:"records"`
		Next    string `json:"next"`
	}
	w.eval(fmt.Sprintf(`(async () => {
		await mcp.clearStorage();
		const stores = await (%s)(["grants", "clients", "metadata", "pending"]);
		const records = Object.values(stores).reduce((n, rs) => n + rs.length, 0);
		const state = c.state;
		const next = await c.connect().then(() => "ok", (e) => e.code);
		return { state, records, next };
	})()`, readStores), &got)
	if got.Records != 0 || got.State != "needs_auth" || got.Next != "auth_required" {
		t.Errorf("after clearStorage(): %+v; want 0 records, needs_auth, auth_required", got)
	}
}
