package xengine

import (
	"fmt"
	"strings"
	"testing"

	"github.com/mcpwasm/mcpwasm/devkit/devserver"
)

// TestWorkerThatCannotStoreKeys: a worker that cannot store a WebCrypto
// key in IndexedDB (WebKit's SharedWorker, where a CryptoKey cannot be
// structured-cloned) is not used; load({ runtime: "auto" }) runs Go in a
// dedicated Worker instead and says so. Chromium's and Firefox's
// SharedWorkers can store keys, so the test hook __mcpwasmRefuseKeys
// makes theirs refuse as WebKit's does. On that path a DPoP sign-in
// works, the encryption key and the DPoP private key in IndexedDB are
// non-extractable CryptoKeys, the grant is sealed (no token in the
// record), and a reload signs in again from IndexedDB without a popup.
func TestWorkerThatCannotStoreKeys(t *testing.T) {
	if runtimeMode() == "main" {
		t.Skipf("asks for load({ runtime: \"auto\" }) itself, so the main-thread pass would run the auto pass's scenario again")
	}
	parallel(t)
	w, wire := newWiredWorld(t, devserver.AuthConfig{DPoP: true})

	// Without the hook, the suite's load() keeps a SharedWorker where it
	// can store keys, and WebKit's says it cannot.
	var plain string
	w.eval(`mcp.runtime`, &plain)
	want := map[string]string{"chromium": "shared-worker", "firefox": "shared-worker", "webkit": "worker"}[browser.Name()]
	if plain != want {
		t.Errorf("load() in %s runs in %q; want %s (the SharedWorker's key probe)", browser.Name(), plain, want)
	}

	// From here on the SharedWorker refuses the keys in every engine.
	load := func(when string) {
		t.Helper()
		if err := w.win.Reload(w.ctx); err != nil {
			t.Fatalf("%s: reload: %v", when, err)
		}
		var got struct {
			Runtime string   `json:"runtime"`
			Infos   []string `json:"infos"`
		}
		w.eval(`(async () => {
			globalThis.__mcpwasmRefuseKeys = ["shared-worker"];
			const infos = [];
			const info = console.info;
			console.info = (...a) => { infos.push(a.join(" ")); info.apply(console, a); };
			const m = await import("/mcp.js");
			window.mcp = await m.load({ runtime: "auto" });
			console.info = info;
			return { runtime: mcp.runtime, infos };
		})()`, &got)
		w.eval(openDBJS, nil)
		if got.Runtime != "worker" {
			t.Fatalf("%s: load({ runtime: \"auto\" }) with a SharedWorker that cannot store keys runs in %q; want worker", when, got.Runtime)
		}
		if l := strings.Join(got.Infos, "\n"); !strings.Contains(l, "SharedWorker cannot store a WebCrypto key in IndexedDB") || !strings.Contains(l, "running in a dedicated Worker") {
			t.Errorf("%s: the console does not say why the SharedWorker was not used:\n%s", when, l)
		}
	}

	load("first load")
	if !w.signedIn(w.popupSignIn(`{ clientName: "xengine worker keys" }`)) {
		return
	}
	var sum float64
	w.eval(`(async () => (await c.callTool("add", { a: 2, b: 3 })).structuredContent?.sum)()`, &sum)
	if sum != 5 {
		t.Fatalf("add after sign-in = %v; want 5", sum)
	}
	checkDPoPWire(t, wire, "sign-in and call", 0)
	token := wire.stolen()
	if token == "" {
		t.Fatal("no access token was seen on the wire")
	}

	// What IndexedDB holds: keys no script can export, records no script
	// can read.
	type storedKey struct {
		Extractable *bool  `json:"extractable"`
		Alg         string `json:"alg"`
		Export      string `json:"export"`
	}
	var stored struct {
		Keys   []storedKey `json:"keys"`
		DPoP   []storedKey `json:"dpop"`
		Grants []struct {
			Sealed bool   `json:"sealed"`
			Text   string `json:"text"`
		} `json:"grants"`
	}
	w.eval(`(async () => {
		const db = await openDB();
		const all = (s) => new Promise((res, rej) => { const r = db.transaction(s).objectStore(s).getAll(); r.onsuccess = () => res(r.result); r.onerror = () => rej(r.error); });
		const exp = (k) => crypto.subtle.exportKey("jwk", k).then(() => "exported", (e) => e.name);
		const out = { keys: [], dpop: [], grants: [] };
		for (const r of await all("keys")) out.keys.push({ extractable: r.key?.extractable, alg: r.key?.algorithm?.name, export: await exp(r.key) });
		for (const r of await all("dpop")) out.dpop.push({ extractable: r.privateKey?.extractable, alg: r.privateKey?.algorithm?.name, export: await exp(r.privateKey) });
		for (const r of await all("grants")) out.grants.push({ sealed: r.ct instanceof Uint8Array && r.iv instanceof Uint8Array && !("json" in r),
			text: r.ct instanceof Uint8Array ? new TextDecoder("latin1").decode(r.ct) : JSON.stringify(r) });
		db.close();
		return out;
	})()`, &stored)
	unexportable := func(ks []storedKey, alg string) bool {
		return len(ks) == 1 && ks[0].Extractable != nil && !*ks[0].Extractable && ks[0].Alg == alg && ks[0].Export == "InvalidAccessError"
	}
	if !unexportable(stored.Keys, "AES-GCM") {
		t.Errorf("the stored encryption keys = %+v; want one AES-GCM key, extractable false, export refused", stored.Keys)
	}
	if !unexportable(stored.DPoP, "ECDSA") {
		t.Errorf("the stored DPoP keys = %+v; want one ECDSA private key, extractable false, export refused", stored.DPoP)
	}
	if len(stored.Grants) != 1 || !stored.Grants[0].Sealed || strings.Contains(stored.Grants[0].Text, token) {
		t.Errorf("the stored grants = %d (sealed %v); want one, sealed, without its access token in the clear", len(stored.Grants), len(stored.Grants) == 1 && stored.Grants[0].Sealed)
	}

	// Reload: the same path, and the grant, its key and the DPoP key come
	// back from IndexedDB without a popup or a token request.
	before := w.snapshot()
	from := len(wire.all())
	load("reload")
	w.eval(fmt.Sprintf(`(async () => {
		const c = mcp.client(%q);
		await c.connect();
		return (await c.callTool("add", { a: 4, b: 5 })).structuredContent?.sum;
	})()`, w.MCPURL), &sum)
	if sum != 9 {
		t.Fatalf("add after reload = %v; want 9", sum)
	}
	reqs := w.diff(before)
	for _, kind := range []string{"register", "token", "authorize"} {
		if reqs[kind] != 0 {
			t.Errorf("reload made %d %s requests; want 0 (all: %v)", reqs[kind], kind, reqs)
		}
	}
	checkDPoPWire(t, wire, "after reload", from)
	w.noPageErrors()
}
