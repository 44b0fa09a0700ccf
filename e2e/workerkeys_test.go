package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/mcpwasm/mcpwasm/devkit/devserver"
)

// TestWorkerThatCannotStoreKeys: a worker that cannot store a WebCrypto
// key in IndexedDB (WebKit's SharedWorker, where a CryptoKey cannot be
// structured-cloned) is not used; load({ runtime: "auto" }) runs Go in a
// dedicated Worker instead and says so. Chromium's SharedWorker can store
// keys, so the test hook __mcpwasmRefuseKeys makes it refuse as WebKit's
// does. On that path a DPoP sign-in works, the encryption key and the DPoP
// private key in IndexedDB are non-extractable CryptoKeys, the grant is
// sealed (no token in the record), and a reload signs in again from
// IndexedDB without a popup. The test asks for runtime "auto" itself, so
// it takes this path in every pass of the suite.
func TestWorkerThatCannotStoreKeys(t *testing.T) {
	var wire wireLog
	e := newAuthEnvWith(t, devserver.AuthConfig{DPoP: true}, wire.record)

	// Without the hook, Chromium's SharedWorker keeps the keys: the
	// suite's load() uses it where the suite's mode allows one.
	var plain string
	e.eval(`mcp.runtime`, &plain)
	if mode := runtimeMode(); (mode == "" || mode == "auto" || mode == "shared-worker") && plain != "shared-worker" {
		t.Errorf("load() in Chromium runs in %q; want shared-worker (the key probe must pass there)", plain)
	}

	// Every page of the tab from now on: the SharedWorker refuses the keys.
	hook := `globalThis.__mcpwasmRefuseKeys = ["shared-worker"];`
	if err := chromedp.Do(e.ctx, chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		_, err := cdp.Call(ctx, tg, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: hook})
		return err
	})); err != nil {
		t.Fatal(err)
	}
	load := func(when string) {
		t.Helper()
		logs := e.console()
		if err := chromedp.Do(e.ctx, chromedp.Reload()); err != nil {
			t.Fatal(err)
		}
		var runtime string
		e.eval(`(async () => {
			const m = await import("/mcp.js");
			window.mcp = await m.load({ runtime: "auto" });
			return mcp.runtime;
		})()`, &runtime)
		e.eval(openDB, nil)
		if runtime != "worker" {
			t.Fatalf("%s: load({ runtime: \"auto\" }) with a SharedWorker that cannot store keys runs in %q; want worker", when, runtime)
		}
		if l := logs(); !strings.Contains(l, "SharedWorker cannot store a WebCrypto key in IndexedDB") || !strings.Contains(l, "running in a dedicated Worker") {
			t.Errorf("%s: the console does not say why the SharedWorker was not used:\n%s", when, l)
		}
	}

	load("first load")
	e.signIn(`{ clientName: "e2e worker keys" }`)
	var sum any
	e.eval(`(async () => (await c.callTool("add", { a: 2, b: 3 })).structuredContent?.sum)()`, &sum)
	if sum != float64(5) {
		t.Fatalf("add after sign-in = %v; want 5", sum)
	}
	token := wire.stolen()
	if token == "" {
		t.Fatal("no access token was seen on the wire")
	}

	// What IndexedDB holds: keys no script can export, records no script
	// can read.
	var stored struct {
		Keys []struct {
			Extractable *bool  `json:"extractable"`
			Alg         string `json:"alg"`
			Export      string `json:"export"`
		} `json:"keys"`
		DPoP []struct {
			Extractable *bool  `json:"extractable"`
			Alg         string `json:"alg"`
			Export      string `json:"export"`
		} `json:"dpop"`
		Grants []struct {
			Sealed bool   `json:"sealed"`
			Text   string `json:"text"`
		} `json:"grants"`
	}
	e.eval(`(async () => {
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
	if len(stored.Keys) != 1 || stored.Keys[0].Extractable == nil || *stored.Keys[0].Extractable || stored.Keys[0].Alg != "AES-GCM" || stored.Keys[0].Export != "InvalidAccessError" {
		t.Errorf("the stored encryption keys = %+v; want one AES-GCM key, extractable false, export refused", stored.Keys)
	}
	if len(stored.DPoP) != 1 || stored.DPoP[0].Extractable == nil || *stored.DPoP[0].Extractable || stored.DPoP[0].Alg != "ECDSA" || stored.DPoP[0].Export != "InvalidAccessError" {
		t.Errorf("the stored DPoP keys = %+v; want one ECDSA private key, extractable false, export refused", stored.DPoP)
	}
	if len(stored.Grants) != 1 || !stored.Grants[0].Sealed || strings.Contains(stored.Grants[0].Text, token) {
		t.Errorf("the stored grants = %d (sealed %v); want one, sealed, without its access token in the clear", len(stored.Grants), len(stored.Grants) == 1 && stored.Grants[0].Sealed)
	}

	// Reload: the same path, and the grant, its key and the DPoP key come
	// back from IndexedDB without a popup or a token request.
	before := e.snapshot()
	load("reload")
	e.eval(fmt.Sprintf(`(async () => {
		const c = mcp.client(%q);
		await c.connect();
		return (await c.callTool("add", { a: 4, b: 5 })).structuredContent?.sum;
	})()`, e.MCPURL), &sum)
	if sum != float64(9) {
		t.Fatalf("add after reload = %v; want 9", sum)
	}
	for kind, n := range e.diff(before) {
		if (kind == "register" || kind == "token" || kind == "authorize") && n != 0 {
			t.Errorf("reload made %d %s requests; want 0", n, kind)
		}
	}
}
