package e2e

import (
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// TestNpmPackage checks the package.json of the installed tarball: what a
// bundler and TypeScript read to find the modules and their types.
func TestNpmPackage(t *testing.T) {
	b := buildNpm(t)
	installed := filepath.Join(b.App, "node_modules", "mcpwasm")
	if fi, err := os.Lstat(installed); err != nil || fi.Mode()&os.ModeSymlink != 0 {
		t.Fatalf("node_modules/mcpwasm is not an installed copy (err %v)", err)
	}
	raw, err := os.ReadFile(filepath.Join(installed, "package.json"))
	if err != nil {
		t.Fatal(err)
	}
	var pkg struct {
		Name                 string                       `json:"name"`
		Type                 string                       `json:"type"`
		Exports              map[string]map[string]string `json:"exports"`
		SideEffects          []string                     `json:"sideEffects"`
		PeerDependenciesMeta map[string]map[string]bool   `json:"peerDependenciesMeta"`
	}
	if err := json.Unmarshal(raw, &pkg); err != nil {
		t.Fatal(err)
	}
	if pkg.Name != "mcpwasm" || pkg.Type != "module" {
		t.Errorf("name %q, type %q; want mcpwasm, module", pkg.Name, pkg.Type)
	}
	for _, entry := range []string{".", "./react", "./callback", "./mcp.wasm"} {
		e := pkg.Exports[entry]
		for _, cond := range []string{"types", "default"} {
			if e[cond] == "" {
				t.Errorf("exports[%q] has no %q condition", entry, cond)
				continue
			}
			if _, err := os.Stat(filepath.Join(installed, e[cond])); err != nil {
				t.Errorf("exports[%q].%s = %q is not in the package: %v", entry, cond, e[cond], err)
			}
		}
	}
	if !pkg.PeerDependenciesMeta["react"]["optional"] {
		t.Errorf("react is not an optional peer dependency: %s", raw)
	}
	for _, f := range []string{"mcp.wasm.gz", "oauth/callback.html", "README.md"} {
		if _, err := os.Stat(filepath.Join(installed, f)); err != nil {
			t.Errorf("the package lacks %s", f)
		}
	}
	if fi, err := os.Stat(b.Tarball); err == nil {
		t.Logf("measure: tarball %s: %d bytes", filepath.Base(b.Tarball), fi.Size())
	}
}

// TestNpmTypes runs tsc --noEmit over examples/react-vite/types/usage.ts,
// which imports mcpwasm, mcpwasm/react and mcpwasm/callback as installed
// from the tarball.
func TestNpmTypes(t *testing.T) {
	b := buildNpm(t)
	tsc := filepath.Join(repoRoot, "e2e", "node", "node_modules", ".bin", "tsc")
	cmd := exec.Command(tsc, "-p", filepath.Join(b.App, "types"))
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("tsc over the package's types: %v\n%s", err, out)
	}
}

// TestNpmReactApp drives the production build of the Vite + React example:
// the wasm is a hashed asset served as application/wasm; the hook connects
// to the protected demo server, signs in through a real popup whose
// redirect URI is an app route using mcpwasm/callback, calls a tool, stays
// signed in across a reload, and closes its session on unmount.
func TestNpmReactApp(t *testing.T) {
	b := buildNpm(t)
	asset := wasmAsset(t, b.Prod)
	e := newAppEnv(t, true, b.Prod)

	resp, err := http.Get(e.PageURL + "/assets/" + asset)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); resp.StatusCode != 200 || ct != "application/wasm" {
		t.Fatalf("GET /assets/%s: %d %q; want 200 application/wasm", asset, resp.StatusCode, ct)
	}

	popups := e.ownPopup()
	e.do("open the app", chromedp.Navigate(e.PageURL+"/"))
	e.waitJS("state needs_auth", `document.querySelector("#server")?.dataset.state === "needs_auth"`)
	if got := e.js(`performance.getEntriesByType("resource").filter((r) => r.name.endsWith("/assets/` + asset + `")).length`); got != "1" {
		t.Errorf("the page fetched /assets/%s %s times; want once", asset, got)
	}
	e.noPopup(popups, 300*time.Millisecond)

	popups = e.ownPopup()
	e.do("click Sign in", chromedp.Click(chromedp.ID("sign-in")))
	e.consent(e.popup(popups), "approve")
	e.waitJS("state connected", `document.querySelector("#server")?.dataset.state === "connected"`)
	if n := countOf(e.requestLog(), "GET page /oauth/callback"); n != 1 {
		t.Errorf("the app's /oauth/callback route was loaded %d times; want once (the popup's redirect)", n)
	}
	e.waitJS("the tool list", `document.querySelector('#tools [data-tool="add"]') !== null`)
	e.do("call add", chromedp.Click(chromedp.ID("add")))
	e.waitJS("the tool's result", `document.querySelector("#result").textContent !== ""`)
	if got := e.text("#result"); !strings.Contains(got, "42") {
		t.Errorf("add(2, 40) shows %q; want 42", got)
	}

	authorizations := e.AS.Count("authorize")
	e.do("reload", chromedp.Reload())
	e.waitJS("state connected after reload", `document.querySelector("#server")?.dataset.state === "connected"`)
	if n := e.AS.Count("authorize"); n != authorizations {
		t.Errorf("the reload went through the authorization server again (%d → %d)", authorizations, n)
	}
	t.Logf("measure: React app (production build, after reload, signed in): navigation → first connected %s ms", e.js(`window.__connectedAt.toFixed(0)`))

	deletes := countOf(e.requestLog(), "DELETE mcp /mcp")
	e.do("unmount", chromedp.Click(chromedp.ID("toggle")))
	e.waitJS("the hook's section gone", `document.querySelector("#server") === null`)
	e.waitFor("the session's end at the server (DELETE)", func() bool { return countOf(e.requestLog(), "DELETE mcp /mcp") > deletes })
	checkAppErrors(e)
}

// TestNpmReactStrictMode drives the development build (React's development
// build, StrictMode double-mounting effects): the hook makes one connection
// and, on Sign in, one popup.
func TestNpmReactStrictMode(t *testing.T) {
	b := buildNpm(t)
	e := newAppEnv(t, true, b.Dev)

	e.do("open the app on the server without sign-in", chromedp.Navigate(e.PageURL+"/?server=mcp2"))
	e.waitJS("state connected", `document.querySelector("#server")?.dataset.state === "connected"`)
	if got := e.js(`window.__appEffects`); got != "2" {
		t.Fatalf("the app's mount effect ran %s times; want 2 (StrictMode in development mounts twice)", got)
	}
	e.waitJS("the tool list", `document.querySelector("#tools li") !== null`)
	if n := countOf(e.jsonRPCMethods(), "initialize"); n != 1 {
		t.Errorf("the demo server saw %d initialize requests; want 1 (one connection under StrictMode)", n)
	}
	if n := countOf(e.requestLog(), "DELETE mcp2 /mcp"); n != 0 {
		t.Errorf("the demo server saw %d session ends while the component stayed mounted", n)
	}

	popups := e.ownPopup()
	e.do("open the app on the protected server", chromedp.Navigate(e.PageURL+"/"))
	e.waitJS("state needs_auth", `document.querySelector("#server")?.dataset.state === "needs_auth"`)
	e.noPopup(popups, 300*time.Millisecond)
	before := countOf(e.jsonRPCMethods(), "initialize")
	popups = e.ownPopup()
	e.do("click Sign in", chromedp.Click(chromedp.ID("sign-in")))
	e.consent(e.popup(popups), "approve")
	e.waitJS("state connected", `document.querySelector("#server")?.dataset.state === "connected"`)
	e.noPopup(popups, 500*time.Millisecond)
	if n := e.AS.Count("authorize"); n != 1 {
		t.Errorf("the authorization server saw %d authorization requests; want 1", n)
	}
	if n := countOf(e.jsonRPCMethods(), "initialize") - before; n != 1 {
		t.Errorf("signing in made %d connections; want 1", n)
	}
	checkAppErrors(e)
}

// checkAppErrors fails the test for the page's uncaught exceptions,
// console errors and Content-Security-Policy violations.
func checkAppErrors(e *demoEnv) {
	e.t.Helper()
	if got := e.js(`document.body.dataset.cspViolations || "0"`); got != "0" {
		e.t.Errorf("%s Content-Security-Policy violations on the page", got)
	}
	time.Sleep(50 * time.Millisecond) // let late console events arrive
	e.emu.Lock()
	defer e.emu.Unlock()
	for _, msg := range e.pageErrs {
		e.t.Errorf("page error: %s", msg)
	}
}
