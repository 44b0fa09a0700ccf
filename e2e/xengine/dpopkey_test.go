package xengine

import (
	"fmt"
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/mcpwasm/mcpwasm/demo/authserver"
	"github.com/mcpwasm/mcpwasm/devkit/devserver"
)

// TestDPoPKeyReplacedInAnotherTab: a second tab proves possession with
// its runtime's copy of the DPoP key, reading no IndexedDB per call
// (counted wherever its runtime runs: the page, a Worker or a
// SharedWorker); when
// the first tab clears the storage (the key with it) and signs in again
// (a new key under the same name), the second follows and calls with the
// new key: no proof by the old key is refused on the way.
func TestDPoPKeyReplacedInAnotherTab(t *testing.T) {
	// A pre-registered client: its ID, and so the name of its key, stays
	// the same after clearStorage (a client registered anew would get a
	// new ID and a key of another name).
	const clientID = "xengine-dpop-key"
	w := newServersWith(t, devserver.AuthConfig{DPoP: true}, os.DirFS(webDir), countingWorkers, func(cfg *devserver.Config, _ *devserver.PageConfig, page string) {
		cfg.Auth.Clients = []authserver.Client{{ID: clientID, RedirectURIs: []string{page + "/oauth/callback.html"}}}
	})
	w.open()
	w.navigate(w.win, w.PageURL+"/e2e/blank.html")
	w.evalIn(w.win, fmt.Sprintf(countDPoPReadsJS, "A"), nil)
	w.load(w.win)
	opts := fmt.Sprintf(`{ clientId: %q }`, clientID)
	tabB := w.newTab()
	w.navigate(tabB, w.PageURL+"/e2e/blank.html")
	w.evalIn(tabB, fmt.Sprintf(countDPoPReadsJS, "B"), nil)
	w.load(tabB)
	if !w.signedIn(w.popupSignIn(opts)) {
		return
	}
	// Tab B counts its runtime's reads of the DPoP keys' object store.
	var first struct {
		Runtime string `json:"runtime"`
		Sums    []int  `json:"sums"`
		Reads   *int   `json:"reads"` // null: the runtime did not answer
		Error   *jsErr `json:"error"`
	}
	w.evalIn(tabB, fmt.Sprintf(`(async () => {
		try {
			window.c = mcp.client(%q, %s);
			await c.connect();
			await c.callTool("add", { a: 1, b: 1 }); // the key read once
			await dpopReads(true);
			const sums = [];
			for (let i = 0; i < 3; i++) sums.push((await c.callTool("add", { a: i, b: 10 })).structuredContent.sum);
			return { runtime: mcp.runtime, sums, reads: await dpopReads(false) };
		} catch (e) { return { error: (%s)(e).error }; }
	})()`, w.MCPURL, opts, catchJS), &first)
	if first.Error != nil || fmt.Sprint(first.Sums) != "[10 11 12]" {
		t.Fatalf("tab B's calls with tab A's grant: %v, error %+v; want [10 11 12]", first.Sums, first.Error)
	}
	t.Logf("tab B's runtime: %s", first.Runtime)
	switch {
	case first.Reads == nil:
		t.Errorf("runtime %s: tab B's runtime did not say how often it read the DPoP key (the counting worker script did not run)", first.Runtime)
	case *first.Reads != 0:
		t.Errorf("runtime %s: tab B read the DPoP key from IndexedDB %d times in 3 calls; want 0 (its runtime's copy)", first.Runtime, *first.Reads)
	}

	// Tab A deletes everything (the key with it) and signs in again: a new key.
	mark := w.traceLen()
	w.eval(`mcp.clearStorage()`, nil)
	w.waitFor("tab B to follow clearStorage", func() bool {
		var s string
		_ = tabB.Eval(w.ctx, `c.state`, &s)
		return s == "needs_auth"
	})
	if !w.signedIn(w.popupSignIn(opts)) {
		return
	}
	w.waitFor("tab B to take tab A's new grant", func() bool {
		var s string
		_ = tabB.Eval(w.ctx, `c.state`, &s)
		return s == "connected"
	})
	var after struct {
		Sum   float64 `json:"sum"`
		Reads *int    `json:"reads"`
		State string  `json:"state"`
		Error *jsErr  `json:"error"`
	}
	w.evalIn(tabB, fmt.Sprintf(`(async () => {
		try {
			const sum = (await c.callTool("add", { a: 40, b: 2 })).structuredContent.sum;
			return { sum, reads: await dpopReads(false), state: c.state };
		} catch (e) { return { ...(%s)(e), state: c.state }; }
	})()`, catchJS), &after)
	if after.Error != nil || after.Sum != 42 {
		t.Errorf("tab B's call after tab A's new sign-in: sum %v, state %s, error %+v; want 42", after.Sum, after.State, after.Error)
	}
	if refused := w.keyRefusals(mark); len(refused) > 0 {
		t.Errorf("the MCP server refused proofs after the new sign-in (a stale key):\n  %s", strings.Join(refused, "\n  "))
	}
	if first.Reads != nil && after.Reads != nil {
		t.Logf("runtime %s: IndexedDB reads of the DPoP key by tab B's runtime: %d in 3 calls with its copy; %d from the new sign-in through its next call", first.Runtime, *first.Reads, *after.Reads)
	}
}

// countDPoPReadsJS, formatted with a tab's name, makes the tab count its
// runtime's reads of the DPoP keys' object store before mcp.js loads:
// on the main thread here; in a worker runtime through the worker script
// countingWorkers serves, which counts in the worker and answers on a
// BroadcastChannel (a page cannot reach a worker's globals). A
// SharedWorker's script has one URL for every tab, so that the tabs
// share it as they do without the count; a dedicated Worker's names its
// tab. dpopReads(reset) resolves to the count (then zeroed when reset),
// or null when the runtime does not answer.
const countDPoPReadsJS = `(() => {
	const tab = %q;
	const get = IDBObjectStore.prototype.get;
	let reads = 0;
	IDBObjectStore.prototype.get = function (...a) { if (this.name === "dpop") reads++; return get.apply(this, a); };
	const wrap = (name, query) => {
		const Real = globalThis[name];
		if (typeof Real !== "function") return;
		globalThis[name] = class extends Real {
			constructor(url, opts) { super("/e2e/dpopcount-worker.js" + query, opts); }
		};
	};
	wrap("SharedWorker", "");
	wrap("Worker", "?tab=" + tab);
	window.dpopReads = (reset) => {
		if (mcp.runtime === "main") {
			const n = reads;
			if (reset) reads = 0;
			return Promise.resolve(n);
		}
		const ch = new BroadcastChannel("e2e-dpop-reads" + (mcp.runtime === "worker" ? "-" + tab : ""));
		return new Promise((resolve) => {
			const done = (n) => { ch.close(); resolve(n); };
			ch.onmessage = (ev) => { if (typeof ev.data?.reads === "number") done(ev.data.reads); };
			setTimeout(() => done(null), 5000);
			ch.postMessage({ ask: true, reset });
		});
	};
})()`

// countingWorkers serves the worker script of countDPoPReadsJS: the
// counter, then mcp.js's worker.js unchanged.
func countingWorkers(_ *world, mux *http.ServeMux) {
	script := func(body string) http.HandlerFunc {
		return func(rw http.ResponseWriter, _ *http.Request) {
			rw.Header().Set("Content-Type", "text/javascript; charset=utf-8")
			rw.Header().Set("Cache-Control", "no-store")
			fmt.Fprint(rw, body)
		}
	}
	// Imports run in order: the counter is in place before worker.js runs.
	mux.HandleFunc("/e2e/dpopcount-worker.js", script(`import "/e2e/dpopcount.js";
import "/worker.js";
`))
	mux.HandleFunc("/e2e/dpopcount.js", script(`const get = IDBObjectStore.prototype.get;
let reads = 0;
IDBObjectStore.prototype.get = function (...a) { if (this.name === "dpop") reads++; return get.apply(this, a); };
const tab = new URLSearchParams(self.location.search).get("tab");
const ch = new BroadcastChannel("e2e-dpop-reads" + (tab ? "-" + tab : ""));
ch.onmessage = (ev) => {
	if (!ev.data?.ask) return;
	ch.postMessage({ reads });
	if (ev.data.reset) reads = 0;
};
`))
}

// traceLen is the number of lines in the servers' trace so far.
func (w *world) traceLen() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.trace)
}

// keyRefusals lists the MCP server's 401 answers to a token since trace
// line from (those that name an error), but nonce challenges
// (use_dpop_nonce: a new nonce, not a bad key).
func (w *world) keyRefusals(from int) []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []string
	for _, l := range w.trace[from:] {
		if strings.Contains(l, " mcp ") && strings.Contains(l, " ended 401 ") && strings.Contains(l, `error="`) && !strings.Contains(l, "use_dpop_nonce") {
			out = append(out, l)
		}
	}
	return out
}
