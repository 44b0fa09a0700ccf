package xengine

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/mcpwasm/mcpwasm/devkit/devserver"
	"github.com/mcpwasm/mcpwasm/e2e/engine"
)

// storageStatus is what mcp.storageStatus() resolved with.
type storageStatus struct {
	Persistent bool   `json:"persistent"`
	Error      *jsErr `json:"error"`
}

func (s storageStatus) String() string {
	if s.Error != nil {
		return fmt.Sprintf("persistent %v, %s: %s", s.Persistent, s.Error.Code, s.Error.Message)
	}
	return fmt.Sprintf("persistent %v", s.Persistent)
}

func (w *world) storageStatus() storageStatus {
	w.t.Helper()
	var st storageStatus
	w.eval(`(async () => {
		const s = await mcp.storageStatus();
		return { persistent: s.persistent, error: s.error ? { name: s.error.name, code: s.error.code, message: s.error.message } : null };
	})()`, &st)
	return st
}

// watchStorage makes a client of the protected server whose storagefallback
// events land in window.fallbacks, as a page's status line would hear them.
func (w *world) watchStorage() {
	w.t.Helper()
	w.eval(fmt.Sprintf(`void (window.fallbacks = [], mcp.client(%q).addEventListener("storagefallback", (e) => fallbacks.push(e.detail.reason)))`, w.MCPURL), nil)
}

func (w *world) fallbacks() []string {
	w.t.Helper()
	var out []string
	w.eval(`window.fallbacks`, &out)
	return out
}

// reloadAndTry reloads the page, loads mcp.js again and connects a new
// client of the protected server with what storage holds; it returns the
// client's state and the code connect() rejected with ("" when it
// connected).
func (w *world) reloadAndTry() (state, code string) {
	w.t.Helper()
	if err := w.win.Reload(w.ctx); err != nil {
		w.t.Fatalf("reload: %v", err)
	}
	w.load(w.win)
	var got struct {
		State string `json:"state"`
		Code  string `json:"code"`
	}
	w.eval(fmt.Sprintf(`(async () => {
		window.c = mcp.client(%q);
		const code = await c.connect().then(() => "", (e) => e.code);
		return { state: c.state, code };
	})()`, w.MCPURL), &got)
	return got.State, got.Code
}

// addWorks calls the protected server's add tool with client c.
func (w *world) addWorks() bool {
	w.t.Helper()
	var sum float64
	w.eval(`(async () => (await c.callTool("add", { a: 1, b: 2 })).structuredContent.sum)()`, &sum)
	return sum == 3
}

// TestFullStorageKeepsSignInsInMemory: when IndexedDB refuses writes for
// lack of room (the origin's quota shrunk to a byte, for real, where the
// engine can), the sign-in still completes and the tool call works; the
// page hears once that sign-ins are kept in memory, mcp.storageStatus()
// says so with a storage error, and a reload shows the sign-in was not
// kept.
func TestFullStorageKeepsSignInsInMemory(t *testing.T) {
	w := newWorld(t, devserver.AuthConfig{})
	w.watchStorage()
	if st := w.storageStatus(); !st.Persistent || st.Error != nil {
		t.Fatalf("storageStatus() before the quota shrinks = %s; want persistent", st)
	}
	qs, ok := w.win.(engine.QuotaSetter)
	if !ok {
		t.Logf("%s has no command that shrinks an origin's quota (WebDriver BiDi and classic WebDriver have none; Chromium's CDP Storage.overrideQuotaForOrigin does), so IndexedDB cannot be filled for real here: this checks that a sign-in is stored and reported persistent", browser.Name())
		if !w.signedIn(w.popupSignIn(`{}`)) {
			return
		}
		if !w.addWorks() {
			t.Error("add(1, 2) after the sign-in did not return 3")
		}
		if st := w.storageStatus(); !st.Persistent {
			t.Errorf("storageStatus() after the sign-in = %s; want persistent", st)
		}
		if f := w.fallbacks(); len(f) != 0 {
			t.Errorf("storagefallback events %q with working storage; want none", f)
		}
		return
	}
	if err := qs.SetQuota(w.ctx, w.PageURL, 1); err != nil {
		t.Fatalf("shrinking the quota: %v", err)
	}
	if !w.signedIn(w.popupSignIn(`{}`)) {
		return
	}
	if !w.addWorks() {
		t.Error("add(1, 2) after the sign-in on full storage did not return 3")
	}
	st := w.storageStatus()
	if st.Persistent || st.Error == nil || st.Error.Code != "storage" || st.Error.Name != "MCPError" ||
		!strings.Contains(st.Error.Message, "full") || !strings.Contains(st.Error.Message, "will not be kept after this tab closes") {
		t.Errorf("storageStatus() on full storage = %s; want not persistent, a storage MCPError saying storage is full and sign-ins will not be kept after this tab closes", st)
	}
	if f := w.fallbacks(); len(f) != 1 || !strings.Contains(f[0], "full") {
		t.Errorf("storagefallback reasons = %q; want one, saying storage is full", f)
	}
	w.noPageErrors()
	// The sign-in lived in memory: the next visit signs in again.
	if state, code := w.reloadAndTry(); state != "needs_auth" || code != "auth_required" {
		t.Errorf("after reload: state %s, connect() %q; want needs_auth, auth_required (the sign-in was not kept)", state, code)
	}
}

// TestEvictedStoreSignsOutCleanly: between two visits the browser loses
// the stored sign-ins, first only the record of their encryption key
// (the sealed records remain), then the whole database (evicted, cleared).
// Each time the next visit is signed out cleanly (needs_auth, no page or
// console error), and a new sign-in works and is stored again.
func TestEvictedStoreSignsOutCleanly(t *testing.T) {
	w := newWorld(t, devserver.AuthConfig{})
	if !w.signedIn(w.popupSignIn(`{}`)) {
		return
	}
	// The key record goes; the sealed grant, registration and flows stay.
	w.eval(`new Promise((ok, fail) => {
		const r = indexedDB.open("mcpwasm");
		r.onerror = () => fail(r.error);
		r.onsuccess = () => {
			const db = r.result, tx = db.transaction("keys", "readwrite");
			tx.objectStore("keys").clear();
			tx.oncomplete = () => { db.close(); ok(); };
			tx.onabort = () => fail(tx.error);
		};
	})`, nil)
	w.signedOutThenSignIn("the encryption key was lost")

	// The whole database goes while this page's runtime holds it open: it
	// steps aside (no "blocked"), and the deletion completes.
	var outcome string
	w.eval(`new Promise((ok) => {
		const r = indexedDB.deleteDatabase("mcpwasm");
		r.onsuccess = () => ok("deleted");
		r.onerror = () => ok("error: " + r.error);
		r.onblocked = () => ok("blocked");
	})`, &outcome)
	if outcome != "deleted" {
		t.Fatalf("deleting the database: %s; want deleted (the runtime must close its connection)", outcome)
	}
	w.signedOutThenSignIn("the database was deleted")
}

// signedOutThenSignIn checks that a reload is signed out cleanly, then
// signs in again and checks the sign-in is stored: a reload connects.
func (w *world) signedOutThenSignIn(after string) {
	w.t.Helper()
	before := w.snapshot()
	state, code := w.reloadAndTry()
	if state != "needs_auth" || code != "auth_required" {
		w.t.Fatalf("%s, after reload: state %s, connect() %q; want needs_auth, auth_required", after, state, code)
	}
	if d := w.diff(before); d["token"] != 0 || d["authorize"] != 0 {
		w.t.Errorf("%s: the signed-out page sent %v; want no token or authorization request", after, d)
	}
	w.noPageErrors()
	if !w.signedIn(w.popupSignIn(`{}`)) {
		return
	}
	if !w.addWorks() {
		w.t.Errorf("%s: add(1, 2) after signing in again did not return 3", after)
	}
	if st := w.storageStatus(); !st.Persistent {
		w.t.Errorf("%s: storageStatus() after signing in again = %s; want persistent", after, st)
	}
	if state, code := w.reloadAndTry(); state != "connected" {
		w.t.Errorf("%s: the new sign-in was not kept: after reload state %s (%s)", after, state, code)
	}
}

// TestNewerSchemaIsRefused: a newer build of the app, opened beside this
// one, upgrades the database: neither page waits for the other, this one
// says a newer version stored the sign-ins (also after a reload, when it
// finds the newer schema on opening), keeps its sign-in in memory, and
// leaves the newer build's records as they were.
func TestNewerSchemaIsRefused(t *testing.T) {
	w := newWorld(t, devserver.AuthConfig{})
	if st := w.storageStatus(); !st.Persistent {
		t.Fatalf("storageStatus() = %s; want persistent", st)
	}
	w.watchStorage()
	// The newer build's page: version 6, a store of its own and a record
	// in the grants store, written in its upgrade.
	var outcome string
	w.eval(`new Promise((ok) => {
		const r = indexedDB.open("mcpwasm", 6);
		r.onupgradeneeded = () => {
			r.result.createObjectStore("newer", { keyPath: "k" }).put({ k: "m", v: "the newer build's" });
			r.transaction.objectStore("grants").put({ k: "https://newer.example/mcp", v: "the newer build's grant" });
		};
		r.onsuccess = () => { r.result.close(); ok("upgraded"); };
		r.onerror = () => ok("error: " + r.error);
		r.onblocked = () => ok("blocked");
	})`, &outcome)
	if outcome != "upgraded" {
		t.Fatalf("the newer build's upgrade: %s; want upgraded (the older page must close its connection)", outcome)
	}
	newer := func(st storageStatus) bool {
		return !st.Persistent && st.Error != nil && st.Error.Code == "storage" &&
			strings.Contains(st.Error.Message, "a newer version of this app stored these sign-ins") && strings.Contains(st.Error.Message, "reload")
	}
	var st storageStatus
	w.waitFor("storageStatus() to say a newer version stored the sign-ins", func() bool { st = w.storageStatus(); return newer(st) })
	if f := w.fallbacks(); len(f) != 1 || !strings.Contains(f[0], "newer version") {
		t.Errorf("storagefallback reasons = %q; want one, saying a newer version stored the sign-ins", f)
	}
	if !w.signedIn(w.popupSignIn(`{}`)) {
		return
	}
	if !w.addWorks() {
		t.Error("add(1, 2) after the sign-in did not return 3")
	}
	// A reload of the older page finds the newer schema on opening.
	if err := w.win.Reload(w.ctx); err != nil {
		t.Fatalf("reload: %v", err)
	}
	w.load(w.win)
	if st := w.storageStatus(); !newer(st) {
		t.Errorf("storageStatus() after reload = %s; want the newer-version storage error", st)
	}
	w.noPageErrors()
	// Nothing of the newer build's was overwritten or deleted, nothing added.
	var db struct {
		Version int      `json:"version"`
		Stores  []string `json:"stores"`
		Marker  string   `json:"marker"`
		Grants  []string `json:"grants"`
	}
	w.eval(`new Promise((ok, fail) => {
		const r = indexedDB.open("mcpwasm");
		r.onerror = () => fail(r.error);
		r.onsuccess = () => {
			const d = r.result, tx = d.transaction(["newer", "grants"]);
			const m = tx.objectStore("newer").get("m"), g = tx.objectStore("grants").getAllKeys();
			tx.oncomplete = () => { d.close(); ok({ version: d.version, stores: [...d.objectStoreNames], marker: m.result?.v ?? "", grants: g.result }); };
		};
	})`, &db)
	if db.Version != 6 || db.Marker != "the newer build's" || len(db.Grants) != 1 || db.Grants[0] != "https://newer.example/mcp" {
		t.Errorf("the newer build's database afterwards: %+v; want version 6, its record and only its grant", db)
	}
}

// TestIndexedDBUnavailableKeepsSignInsInMemory: where IndexedDB cannot be
// used (taken away from the page, and from a worker runtime's worker
// through the test hook, as where storage is disabled), mcp.storageStatus()
// says sign-ins are kept in memory and why, the page hears it once, and
// the sign-in and the tool call work. The page's console warns of it too.
func TestIndexedDBUnavailableKeepsSignInsInMemory(t *testing.T) {
	w := newServers(t, devserver.AuthConfig{}, os.DirFS(webDir), nil)
	w.open()
	w.navigate(w.win, w.PageURL+"/e2e/blank.html")
	w.eval(`void (globalThis.__mcpwasmNoIndexedDB = true, Object.defineProperty(window, "indexedDB", { configurable: true, get: () => undefined }))`, nil)
	w.load(w.win)
	var rt string
	w.eval(`mcp.runtime`, &rt)
	t.Logf("Go runs in %s", rt)
	w.watchPage(w.win)
	w.watchStorage()
	st := w.storageStatus()
	if st.Persistent || st.Error == nil || st.Error.Code != "storage" || !strings.Contains(st.Error.Message, "will not be kept after this tab closes") {
		t.Errorf("storageStatus() without IndexedDB = %s; want not persistent, a storage error saying sign-ins will not be kept after this tab closes", st)
	}
	if f := w.fallbacks(); len(f) != 1 {
		t.Errorf("storagefallback reasons = %q; want one", f)
	}
	if said := w.said(w.win); !strings.Contains(said, "warn: mcp: sign-ins are kept in memory") {
		t.Errorf("the page's console had no warning that sign-ins are kept in memory; it said: %q", said)
	}
	if !w.signedIn(w.popupSignIn(`{}`)) {
		return
	}
	if !w.addWorks() {
		t.Error("add(1, 2) after the sign-in did not return 3")
	}
	w.noPageErrors()
}
