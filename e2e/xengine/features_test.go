package xengine

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/mcpwasm/mcpwasm/devkit/devserver"
)

// probeKeysJS stores a non-extractable AES-GCM CryptoKey in IndexedDB and
// reads it back, as the grant store does; "yes", or why not.
const probeKeysJS = `async () => {
  try {
    const key = await crypto.subtle.generateKey({ name: "AES-GCM", length: 256 }, false, ["encrypt", "decrypt"]);
    const db = await new Promise((res, rej) => {
      const r = indexedDB.open("xengine-probe-" + Math.random().toString(36).slice(2), 1);
      r.onupgradeneeded = () => r.result.createObjectStore("k");
      r.onsuccess = () => res(r.result);
      r.onerror = () => rej(r.error);
    });
    await new Promise((res, rej) => {
      const tx = db.transaction("k", "readwrite");
      tx.objectStore("k").put(key, "k");
      tx.oncomplete = res;
      tx.onerror = tx.onabort = () => rej(tx.error);
    });
    const back = await new Promise((res, rej) => {
      const r = db.transaction("k").objectStore("k").get("k");
      r.onsuccess = () => res(r.result);
      r.onerror = () => rej(r.error);
    });
    db.close();
    return back instanceof CryptoKey ? "yes" : "no: read back " + Object.prototype.toString.call(back);
  } catch (e) { return "no: " + e.name + ": " + e.message; }
}`

// featuresJS probes the page and a SharedWorker and a dedicated Worker of
// its origin (blob: workers) for what the runtimes rely on.
const featuresJS = `(async () => {
  const probe = ` + probeKeysJS + `;
  const src = (shared) => "const probe = " + probe.toString() + ";\n" +
    "const run = async () => ({ keys: await probe(), locks: !!self.navigator?.locks, bc: typeof BroadcastChannel === 'function' });\n" +
    (shared ? "onconnect = (e) => run().then((r) => e.ports[0].postMessage(r));" : "run().then((r) => postMessage(r));");
  const url = (shared) => URL.createObjectURL(new Blob([src(shared)], { type: "text/javascript" }));
  const answer = (start) => Promise.race([new Promise(start), new Promise((r) => setTimeout(() => r({ keys: "no: no answer in 10 s" }), 10000))]);
  const shared = typeof SharedWorker !== "function" ? null : await answer((res) => {
    const w = new SharedWorker(url(true));
    w.port.onmessage = (e) => res(e.data);
    w.onerror = (e) => res({ keys: "no: worker error " + (e.message ?? "") });
  });
  const worker = typeof Worker !== "function" ? null : await answer((res) => {
    const w = new Worker(url(false));
    w.onmessage = (e) => res(e.data);
    w.onerror = (e) => res({ keys: "no: worker error " + (e.message ?? "") });
  });
  return {
    sharedWorker: typeof SharedWorker === "function", locks: !!navigator.locks, broadcastChannel: typeof BroadcastChannel === "function",
    shared, worker, main: await probe(), runtime: mcp.runtime,
  };
})()`

// workerFeatures is what a worker of the page's origin reports.
type workerFeatures struct {
	Keys  string `json:"keys"`
	Locks bool   `json:"locks"`
	BC    bool   `json:"bc"`
}

// runtimeFeatures is one engine × runtime row of docs/JSAPI.md's Runtimes
// table.
type runtimeFeatures struct {
	Engine           string          `json:"engine"`
	Version          string          `json:"version"`
	Mode             string          `json:"mode"`    // MCPWASM_E2E_RUNTIME
	Runtime          string          `json:"runtime"` // what load() chose
	SharedWorker     bool            `json:"sharedWorker"`
	WebLocks         bool            `json:"webLocks"`
	BroadcastChannel bool            `json:"broadcastChannel"`
	Shared           *workerFeatures `json:"sharedWorkerProbe"`
	Worker           *workerFeatures `json:"workerProbe"`
	MainKeys         string          `json:"mainKeys"`
	OpenerKept       bool            `json:"openerKept"`      // the sign-in popup's window.opener, no COOP
	OpenerUnderCOOP  bool            `json:"openerUnderCOOP"` // the same when the AS sends COOP same-origin
	COOPSignIn       string          `json:"coopSignIn"`      // how a sign-in under COOP ended
	PreloadGETs      int             `json:"preloadGETs"`     // mcp.wasm GETs for preload() then load()
}

// TestRuntimeFeatures measures, in this engine and runtime mode, what
// docs/JSAPI.md's Runtimes table says: SharedWorker, Web Locks,
// BroadcastChannel, whether a CryptoKey can be stored in IndexedDB from
// each place Go may run, the runtime load() picks, the sign-in popup's
// window.opener with and without Cross-Origin-Opener-Policy, and that
// preload() then load() fetch mcp.wasm once. It logs the row (t.Log and
// a JSON line "xengine-features: {…}"), and fails where the library's
// choices do not hold.
func TestRuntimeFeatures(t *testing.T) {
	w := newWorld(t, devserver.AuthConfig{})
	var probe struct {
		SharedWorker     bool            `json:"sharedWorker"`
		Locks            bool            `json:"locks"`
		BroadcastChannel bool            `json:"broadcastChannel"`
		Shared           *workerFeatures `json:"shared"`
		Worker           *workerFeatures `json:"worker"`
		Main             string          `json:"main"`
		Runtime          string          `json:"runtime"`
	}
	w.eval(featuresJS, &probe)
	f := runtimeFeatures{
		Engine: browser.Name(), Version: browser.Version(), Mode: runtimeMode(), Runtime: probe.Runtime,
		SharedWorker: probe.SharedWorker, WebLocks: probe.Locks, BroadcastChannel: probe.BroadcastChannel,
		Shared: probe.Shared, Worker: probe.Worker, MainKeys: probe.Main,
	}

	// preload() alone fetches mcp.wasm, in a tab on another origin (the
	// same server as localhost: no runtime, storage or cached module of
	// that origin yet); load() then uses what it fetched.
	win := w.newTab()
	w.preload(win)
	w.navigate(win, strings.Replace(w.PageURL, "127.0.0.1", "localhost", 1)+"/e2e/blank.html")
	before := w.snapshot()
	w.evalIn(win, `(async () => { window.m = await import("/mcp.js"); m.preload(); })()`, nil)
	w.waitFor("preload() to fetch mcp.wasm", func() bool { return w.diff(before)["wasm"] > 0 })
	var runtime string
	w.evalIn(win, `(async () => (await m.load()).runtime)()`, &runtime)
	f.PreloadGETs = w.diff(before)["wasm"]

	// The sign-in window's opener, without and with COOP on the
	// authorization server's pages.
	opener := func(w *world) (bool, loginResult) {
		popup, early := w.consentPopup(`{}`)
		if early != nil {
			return false, *early
		}
		var kept bool
		if err := popup.Eval(w.ctx, `window.opener !== null`, &kept); err != nil {
			t.Fatalf("reading the sign-in window's opener: %v", err)
		}
		if err := popup.Click(w.ctx, "#approve"); err != nil {
			t.Fatalf("approving on the consent page: %v", err)
		}
		return kept, w.awaitLogin()
	}
	kept, plain := opener(w)
	f.OpenerKept = kept
	w.closeWindows()
	wc := newWorld(t, devserver.AuthConfig{COOP: true})
	keptCOOP, coop := opener(wc)
	f.OpenerUnderCOOP = keptCOOP
	f.COOPSignIn = coop.String()

	line, _ := json.Marshal(f)
	fmt.Printf("xengine-features: %s\n", line)
	t.Logf("%s %s, runtime %s (load() chose %s): SharedWorker %v, Web Locks %v, BroadcastChannel %v; CryptoKey in IndexedDB: SharedWorker %s, Worker %s, page %s; popup opener kept %v, under COOP %v (sign-in: %s); preload() then load(): %d mcp.wasm GET",
		f.Engine, f.Version, f.Mode, f.Runtime, f.SharedWorker, f.WebLocks, f.BroadcastChannel,
		keys(f.Shared), keys(f.Worker), f.MainKeys, f.OpenerKept, f.OpenerUnderCOOP, f.COOPSignIn, f.PreloadGETs)

	// What the library relies on.
	if !plain.OK || plain.State != "connected" {
		t.Errorf("sign-in without COOP: %s; want connected", plain)
	}
	if !coop.OK || coop.State != "connected" {
		t.Errorf("sign-in with COOP on the authorization server's pages: %s; want connected (the result comes back over BroadcastChannel)", coop)
	}
	if f.PreloadGETs != 1 || runtime != f.Runtime {
		t.Errorf("preload() then load(): %d mcp.wasm GETs, runtime %s; want 1 GET and runtime %s", f.PreloadGETs, runtime, f.Runtime)
	}
	want := "main"
	if runtimeMode() == "auto" {
		switch {
		case f.SharedWorker && f.Shared != nil && f.Shared.Keys == "yes":
			want = "shared-worker"
		case f.Worker != nil && f.Worker.Keys == "yes":
			want = "worker"
		}
	}
	if f.Runtime != want {
		t.Errorf("load() chose %s; with these features want %s", f.Runtime, want)
	}
	if where := map[string]string{"shared-worker": keys(f.Shared), "worker": keys(f.Worker), "main": f.MainKeys}[f.Runtime]; where != "yes" {
		t.Errorf("load() chose %s, where a CryptoKey cannot be stored in IndexedDB: %s", f.Runtime, where)
	}
}

func keys(p *workerFeatures) string {
	if p == nil {
		return "n/a"
	}
	return p.Keys
}
