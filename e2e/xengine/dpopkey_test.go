package xengine

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/mcpwasm/mcpwasm/demo/authserver"
	"github.com/mcpwasm/mcpwasm/internal/devserver"
)

// TestDPoPKeyReplacedInAnotherTab: a second tab proves possession with
// its runtime's copy of the DPoP key, reading no IndexedDB per call; when
// the first tab clears the storage (the key with it) and signs in again
// (a new key under the same name), the second follows and calls with the
// new key: no proof by the old key is refused on the way.
func TestDPoPKeyReplacedInAnotherTab(t *testing.T) {
	// A pre-registered client: its ID, and so the name of its key, stays
	// the same after clearStorage (a client registered anew would get a
	// new ID and a key of another name).
	const clientID = "xengine-dpop-key"
	w := newServersWith(t, devserver.AuthConfig{DPoP: true}, os.DirFS(webDir), nil, func(cfg *devserver.Config, _ *devserver.PageConfig, page string) {
		cfg.Auth.Clients = []authserver.Client{{ID: clientID, RedirectURIs: []string{page + "/oauth/callback.html"}}}
	})
	w.open()
	w.navigate(w.win, w.PageURL+"/e2e/blank.html")
	w.load(w.win)
	opts := fmt.Sprintf(`{ clientId: %q }`, clientID)
	tabB, err := w.win.NewTab(w.ctx)
	if err != nil {
		t.Fatalf("opening a second tab: %v", err)
	}
	w.track(tabB)
	w.navigate(tabB, w.PageURL+"/e2e/blank.html")
	w.load(tabB)
	if !w.signedIn(w.popupSignIn(opts)) {
		return
	}
	// Tab B counts its reads of the DPoP keys' object store: they happen
	// in the page only where the runtime runs there (main).
	var first struct {
		Runtime string `json:"runtime"`
		Sums    []int  `json:"sums"`
		Reads   int    `json:"reads"`
		Error   *jsErr `json:"error"`
	}
	w.evalIn(tabB, fmt.Sprintf(`(async () => {
		try {
			const get = IDBObjectStore.prototype.get;
			window.dpopReads = 0;
			IDBObjectStore.prototype.get = function (...a) { if (this.name === "dpop") dpopReads++; return get.apply(this, a); };
			window.c = mcp.client(%q, %s);
			await c.connect();
			await c.callTool("add", { a: 1, b: 1 }); // the key read once
			dpopReads = 0;
			const sums = [];
			for (let i = 0; i < 3; i++) sums.push((await c.callTool("add", { a: i, b: 10 })).structuredContent.sum);
			return { runtime: mcp.runtime, sums, reads: dpopReads };
		} catch (e) { return { error: (%s)(e).error }; }
	})()`, w.MCPURL, opts, catchJS), &first)
	if first.Error != nil || fmt.Sprint(first.Sums) != "[10 11 12]" {
		t.Fatalf("tab B's calls with tab A's grant: %v, error %+v; want [10 11 12]", first.Sums, first.Error)
	}
	if first.Runtime == "main" {
		if first.Reads != 0 {
			t.Errorf("tab B read the DPoP key from IndexedDB %d times in 3 calls; want 0 (its runtime's copy)", first.Reads)
		}
	} else {
		t.Logf("runtime %s: the DPoP keys are read in a worker, where this page cannot count the reads", first.Runtime)
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
		Reads int     `json:"reads"`
		State string  `json:"state"`
		Error *jsErr  `json:"error"`
	}
	w.evalIn(tabB, fmt.Sprintf(`(async () => {
		try {
			const sum = (await c.callTool("add", { a: 40, b: 2 })).structuredContent.sum;
			return { sum, reads: dpopReads, state: c.state };
		} catch (e) { return { ...(%s)(e), state: c.state }; }
	})()`, catchJS), &after)
	if after.Error != nil || after.Sum != 42 {
		t.Errorf("tab B's call after tab A's new sign-in: sum %v, state %s, error %+v; want 42", after.Sum, after.State, after.Error)
	}
	if refused := w.keyRefusals(mark); len(refused) > 0 {
		t.Errorf("the MCP server refused proofs after the new sign-in (a stale key):\n  %s", strings.Join(refused, "\n  "))
	}
	if first.Runtime == "main" {
		t.Logf("IndexedDB reads of the DPoP key by tab B: 0 in 3 calls with its copy; %d from the new sign-in through its next call", after.Reads)
	}
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
