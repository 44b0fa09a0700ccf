package xengine

import (
	"errors"
	"fmt"
	"os"
	"testing"

	"github.com/mcpwasm/mcpwasm/devkit/devserver"
	"github.com/mcpwasm/mcpwasm/e2e/engine"
)

// TestEngineCapabilities: what engine.Has says of this engine is what its
// window does: each capability it claims has its interface and works
// (Offline takes the page's network away and gives it back), each it
// lacks says why; and the engine-neutral SimulateLifecycle brings a page
// the events, and the state, of a hidden, frozen, offline tab.
func TestEngineCapabilities(t *testing.T) {
	w := newServers(t, devserver.AuthConfig{}, os.DirFS(webDir), nil)
	w.open()
	w.navigate(w.win, w.PageURL+"/e2e/blank.html")
	_, lifecycle := w.win.(engine.Lifecycle)
	_, quota := w.win.(engine.QuotaSetter)
	network, hasNetwork := w.win.(engine.Network)
	for c, has := range map[engine.Capability]bool{
		engine.Freeze:           lifecycle,
		engine.KillSharedWorker: lifecycle,
		engine.Quota:            quota,
		engine.Offline:          hasNetwork,
		engine.Preload:          w.preloaded,
	} {
		ok, why := engine.Has(w.win, c)
		switch {
		case ok && !has:
			t.Errorf("Has(%s) = true, but %s's window cannot", c, browser.Name())
		case !ok && has && c != engine.Offline:
			t.Errorf("Has(%s) = false (%s), but %s's window can", c, why, browser.Name())
		case !ok && why == "":
			t.Errorf("Has(%s) = false without a reason", c)
		}
		t.Logf("%s: %v %s", c, ok, why)
	}

	if ok, why := engine.Has(w.win, engine.Offline); ok {
		fetchOK := func() bool {
			var ok bool
			w.eval(`fetch("/e2e/boot.js", { cache: "no-store" }).then(() => true, () => false)`, &ok)
			return ok
		}
		w.eval(`void (window.netEvents = [], ["offline", "online"].forEach((k) => addEventListener(k, () => netEvents.push(k))))`, nil)
		err := network.SetOffline(w.ctx, true)
		if errors.Is(err, engine.ErrUnsupported) {
			t.Skipf("%s claims Offline but: %v", browser.Name(), err)
		}
		if err != nil {
			t.Fatalf("SetOffline(true): %v", err)
		}
		var online bool
		w.eval(`navigator.onLine`, &online)
		if online || fetchOK() {
			t.Errorf("offline: navigator.onLine %v, a fetch went through %v; want neither", online, !online)
		}
		if err := network.SetOffline(w.ctx, false); err != nil {
			t.Fatalf("SetOffline(false): %v", err)
		}
		w.eval(`navigator.onLine`, &online)
		if !online || !fetchOK() {
			t.Errorf("back online: navigator.onLine %v; want true and a fetch to work", online)
		}
	} else {
		t.Logf("no Offline: %s", why)
	}

	var seen struct {
		Events  []string `json:"events"`
		Hidden  bool     `json:"hidden"`
		State   string   `json:"state"`
		Online  bool     `json:"online"`
		Visible bool     `json:"visible"`
	}
	w.eval(`void (window.seen = [], ["visibilitychange", "freeze", "resume"].forEach((k) => document.addEventListener(k, () => seen.push(k + ":" + document.visibilityState))),
		["offline", "online"].forEach((k) => addEventListener(k, () => seen.push(k + ":" + navigator.onLine))))`, nil)
	if err := engine.SimulateLifecycle(w.ctx, w.win, engine.Hidden, engine.Frozen, engine.OfflineEvent); err != nil {
		t.Fatal(err)
	}
	w.eval(`({ events: seen, hidden: document.hidden, state: document.visibilityState, online: navigator.onLine })`, &seen)
	if want := "[visibilitychange:hidden freeze:hidden offline:false]"; fmt.Sprint(seen.Events) != want || !seen.Hidden || seen.State != "hidden" || seen.Online {
		t.Errorf("simulated hidden, frozen, offline: %+v; want events %s and the state they announce", seen, want)
	}
	if err := engine.SimulateLifecycle(w.ctx, w.win, engine.OnlineEvent, engine.Resumed, engine.Visible); err != nil {
		t.Fatal(err)
	}
	w.eval(`({ events: seen, hidden: document.hidden, state: document.visibilityState, online: navigator.onLine })`, &seen)
	if seen.Hidden || seen.State != "visible" || !seen.Online || len(seen.Events) != 6 {
		t.Errorf("simulated back: %+v; want visible and online, six events", seen)
	}
	if err := engine.SimulateLifecycle(w.ctx, w.win, "sleep"); err == nil {
		t.Error("SimulateLifecycle took an unknown step")
	}
}
