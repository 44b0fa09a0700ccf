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

	"github.com/mcpwasm/mcpwasm/devkit/npmapp"
	"github.com/mcpwasm/mcpwasm/devkit/webbuild"
	"github.com/mcpwasm/mcpwasm/devkit/webserve"
)

// TestNpmPackage checks the package.json of the installed tarball: what a
// bundler and TypeScript read to find the modules and their types.
func TestNpmPackage(t *testing.T) {
	onlyInPass(t, "auto", packageInDefaultRuntime)
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
	for _, entry := range []string{".", "./react", "./ai", "./callback", "./mcp.wasm"} {
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
	for _, peer := range []string{"react", "ai"} {
		if !pkg.PeerDependenciesMeta[peer]["optional"] {
			t.Errorf("%s is not an optional peer dependency: %s", peer, raw)
		}
	}
	// The module once, under its content-hashed name, which mcp.js loads
	// through wasmurl.js and the "./mcp.wasm" export names, with its
	// compressed variant.
	hashed := strings.TrimPrefix(pkg.Exports["./mcp.wasm"]["default"], "./")
	wasm, err := os.ReadFile(filepath.Join(installed, hashed))
	if err != nil {
		t.Fatal(err)
	}
	if want := webbuild.HashedName(wasm); hashed != want {
		t.Errorf(`exports["./mcp.wasm"] is %q; want the module's hashed name %q`, hashed, want)
	}
	for _, f := range []string{hashed + ".gz", "wasmurl.js", "oauth/callback.html", "README.md"} {
		if _, err := os.Stat(filepath.Join(installed, f)); err != nil {
			t.Errorf("the package lacks %s", f)
		}
	}
	for _, f := range []string{"mcp.wasm", "mcp.wasm.gz", "mcp.wasm.br"} {
		if _, err := os.Stat(filepath.Join(installed, f)); err == nil {
			t.Errorf("the package carries %s beside %s: the module twice", f, hashed)
		}
	}
	if mod, err := os.ReadFile(filepath.Join(installed, "wasmurl.js")); err != nil || !strings.Contains(string(mod), `"./`+hashed+`"`) {
		t.Errorf("the package's wasmurl.js does not name %s (err %v):\n%s", hashed, err, mod)
	}
	if fi, err := os.Stat(b.Tarball); err == nil {
		t.Logf("measure: tarball %s: %d bytes", filepath.Base(b.Tarball), fi.Size())
	}
}

// TestNpmTypes runs tsc --noEmit over examples/react-vite/types/usage.ts,
// which imports mcpwasm, mcpwasm/react and mcpwasm/callback as installed
// from the tarball.
func TestNpmTypes(t *testing.T) {
	onlyInPass(t, "auto", packageInDefaultRuntime)
	b := buildNpm(t)
	tsc := filepath.Join(repoRoot, "e2e", "node", "node_modules", ".bin", "tsc")
	cmd := exec.Command(tsc, "-p", filepath.Join(b.App, "types"))
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("tsc over the package's types: %v\n%s", err, out)
	}
}

// TestNpmAISDKTypes builds examples/ai-sdk from the packed package and
// runs tsc --noEmit over its types/usage.ts: mcpwasm/ai's ToolSet, as
// installed from the tarball, is what the pinned AI SDK's generateText,
// streamText, ToolLoopAgent and DirectChatTransport take.
func TestNpmAISDKTypes(t *testing.T) {
	onlyInPass(t, "auto", packageInDefaultRuntime)
	b, err := npmapp.MakeExample(repoRoot, webDir, t.TempDir(), "ai-sdk", false)
	if err != nil {
		t.Fatal(err)
	}
	tsc := filepath.Join(repoRoot, "e2e", "node", "node_modules", ".bin", "tsc")
	cmd := exec.Command(tsc, "-p", filepath.Join(b.App, "types"))
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("tsc over mcpwasm/ai's types with the AI SDK: %v\n%s", err, out)
	}
}

// TestNpmReactApp drives the production build of the Vite + React example:
// the wasm is a hashed asset served as application/wasm; the hook connects
// to the protected demo server, signs in through a real popup whose
// redirect URI is an app route using mcpwasm/callback, calls a tool, stays
// signed in across a reload, and closes its session on unmount.
func TestNpmReactApp(t *testing.T) {
	onlyInPass(t, "auto", packageInDefaultRuntime)
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
	gets := countOf(e.requestLog(), "GET page /assets/"+asset) // the check above
	e.do("open the app", chromedp.Navigate(e.PageURL+"/"))
	waitApp(e, "state needs_auth", `document.querySelector("#server")?.dataset.state === "needs_auth"`)
	// The module is downloaded once: by the page on the main thread, else by
	// the worker (the bundle's worker chunk found the hashed asset).
	if n := countOf(e.requestLog(), "GET page /assets/"+asset) - gets; n != 1 {
		t.Errorf("/assets/%s was requested %d times; want once", asset, n)
	}
	want := "0"
	if onMainThread() {
		want = "1"
	}
	if got := e.js(`performance.getEntriesByType("resource").filter((r) => r.name.endsWith("/assets/` + asset + `")).length`); got != want {
		t.Errorf("the page itself fetched /assets/%s %s times; want %s", asset, got, want)
	}
	e.noPopup(popups, 300*time.Millisecond)

	popups = e.ownPopup()
	e.do("click Sign in", chromedp.Click(chromedp.ID("sign-in")))
	e.consent(e.popup(popups), "approve")
	waitApp(e, "state connected", `document.querySelector("#server")?.dataset.state === "connected"`)
	if n := countOf(e.requestLog(), "GET page /oauth/callback"); n != 1 {
		t.Errorf("the app's /oauth/callback route was loaded %d times; want once (the popup's redirect)", n)
	}
	waitApp(e, "the tool list", `document.querySelector('#tools [data-tool="add"]') !== null`)
	e.do("call add", chromedp.Click(chromedp.ID("add")))
	waitApp(e, "the tool's result", `document.querySelector("#result").textContent !== ""`)
	if got := e.text("#result"); !strings.Contains(got, "42") {
		t.Errorf("add(2, 40) shows %q; want 42", got)
	}

	authorizations := e.AS.Count("authorize")
	e.do("reload", chromedp.Reload())
	waitApp(e, "state connected after reload", `document.querySelector("#server")?.dataset.state === "connected"`)
	if n := e.AS.Count("authorize"); n != authorizations {
		t.Errorf("the reload went through the authorization server again (%d → %d)", authorizations, n)
	}
	t.Logf("measure: React app (production build, after reload, signed in): navigation → first connected %s ms", e.js(`window.__connectedAt.toFixed(0)`))

	deletes := countOf(e.requestLog(), "DELETE mcp /mcp")
	e.do("unmount", chromedp.Click(chromedp.ID("toggle")))
	waitApp(e, "the hook's section gone", `document.querySelector("#server") === null`)
	e.waitFor("the session's end at the server (DELETE)", func() bool { return countOf(e.requestLog(), "DELETE mcp /mcp") > deletes })
	checkAppErrors(e)
}

// TestNpmReactStrictMode drives the development build (React's development
// build, StrictMode double-mounting effects): the hook makes one connection
// and, on Sign in, one popup.
func TestNpmReactStrictMode(t *testing.T) {
	onlyInPass(t, "auto", packageInDefaultRuntime)
	b := buildNpm(t)
	e := newAppEnv(t, true, b.Dev)

	e.do("open the app on the server without sign-in", chromedp.Navigate(e.PageURL+"/?server=mcp2"))
	waitApp(e, "state connected", `document.querySelector("#server")?.dataset.state === "connected"`)
	if got := e.js(`window.__appEffects`); got != "2" {
		t.Fatalf("the app's mount effect ran %s times; want 2 (StrictMode in development mounts twice)", got)
	}
	waitApp(e, "the tool list", `document.querySelector("#tools li") !== null`)
	if n := countOf(e.jsonRPCMethods(), "initialize"); n != 1 {
		t.Errorf("the demo server saw %d initialize requests; want 1 (one connection under StrictMode)", n)
	}
	if n := countOf(e.requestLog(), "DELETE mcp2 /mcp"); n != 0 {
		t.Errorf("the demo server saw %d session ends while the component stayed mounted", n)
	}

	popups := e.ownPopup()
	e.do("open the app on the protected server", chromedp.Navigate(e.PageURL+"/"))
	waitApp(e, "state needs_auth", `document.querySelector("#server")?.dataset.state === "needs_auth"`)
	e.noPopup(popups, 300*time.Millisecond)
	before := countOf(e.jsonRPCMethods(), "initialize")
	windows := e.countPopups()
	popups = e.ownPopup()
	e.do("click Sign in", chromedp.Click(chromedp.ID("sign-in")))
	e.consent(e.popup(popups), "approve")
	waitApp(e, "state connected", `document.querySelector("#server")?.dataset.state === "connected"`)
	time.Sleep(500 * time.Millisecond) // a late second window would show by now
	if n := windows(); n != 1 {
		t.Errorf("signing in opened %d windows; want 1", n)
	}
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

// plainPage loads the package's files with no bundler (a relative import),
// connects to the server given in ?server= (a key of the dev server's
// config) and calls add; #sign-in signs in.
const plainPage = `<!doctype html><meta charset="utf-8"><title>plain</title>
<script type="module" src="/plain.js"></script>
<body><button id="sign-in">Sign in</button><output id="state"></output><output id="result"></output></body>`

const plainJS = `
document.addEventListener("securitypolicyviolation", (e) => {
  document.body.dataset.cspViolations = String(Number(document.body.dataset.cspViolations || 0) + 1);
  console.error("CSP violation: " + e.violatedDirective + " " + e.blockedURI);
});
import { load } from "./pkg/mcp.js";
const config = await (await fetch("/devserver/config.json")).json();
const mcp = await load();
window.__goGlobal = typeof globalThis.Go;
const client = mcp.client(config[new URLSearchParams(location.search).get("server")]);
const state = document.querySelector("#state");
client.addEventListener("statechange", async (e) => {
  state.dataset.state = e.detail.state;
  if (e.detail.state !== "connected") return;
  window.__connectedAt ??= performance.now();
  const tools = (await client.listTools()).map((t) => t.name);
  if (!tools.includes("add")) { // the server without sign-in (notes)
    document.querySelector("#result").textContent = "tools: " + tools.join(" ");
    return;
  }
  const r = await client.callTool("add", { a: 2, b: 40 });
  document.querySelector("#result").textContent = r.content.map((c) => c.text).join(" ");
});
document.querySelector("#sign-in").addEventListener("click", () => { client.authorize().catch(() => {}); });
client.connect().catch(() => {});
`

// TestNpmPlainPageCSP loads the package's files without a bundler, under
// the strict Content-Security-Policy docs/JSAPI.md documents, and connects
// to the demo server without sign-in, then signs in to the protected one
// through the package's static oauth/callback.html. It also measures
// navigation → first connected against the React app's production build.
func TestNpmPlainPageCSP(t *testing.T) {
	onlyInPass(t, "auto", packageInDefaultRuntime)
	b := buildNpm(t)
	var e *demoEnv
	e = newSiteEnv(t, true, os.DirFS(b.Prod), func(mux *http.ServeMux) {
		mux.Handle("/pkg/", http.StripPrefix("/pkg", webserve.Handler(os.DirFS(b.Pkg))))
		mux.HandleFunc("GET /plain.html", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			w.Header().Set("Content-Security-Policy", cspFor(e))
			w.Write([]byte(plainPage))
		})
		mux.HandleFunc("GET /plain.js", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/javascript; charset=utf-8")
			w.Write([]byte(plainJS))
		})
	})
	e.do("open the plain page", chromedp.Navigate(e.PageURL+"/plain.html?server=mcp2URL"))
	waitApp(e, "the tool list", `document.querySelector("#result").textContent !== ""`)
	if got := e.text("#result"); got == "tools: " {
		t.Errorf("the server without sign-in lists no tools")
	}
	if got := e.js(`window.__goGlobal`); got != "undefined" {
		t.Errorf("after load(), typeof globalThis.Go is %q; want undefined (wasm_exec.js as a module leaks no global)", got)
	}
	plain := e.js(`window.__connectedAt.toFixed(0)`)

	popups := e.ownPopup()
	e.do("open the plain page on the protected server", chromedp.Navigate(e.PageURL+"/plain.html?server=mcpURL"))
	waitApp(e, "state needs_auth", `document.querySelector("#state").dataset.state === "needs_auth"`)
	e.noPopup(popups, 300*time.Millisecond)
	popups = e.ownPopup()
	e.do("click Sign in", chromedp.Click(chromedp.ID("sign-in")))
	e.consent(e.popup(popups), "approve")
	waitApp(e, "the tool's result after sign-in", `document.querySelector("#result").textContent !== ""`)
	if got := e.text("#result"); !strings.Contains(got, "42") {
		t.Errorf("add(2, 40) shows %q; want 42", got)
	}
	if n := countOf(e.requestLog(), "GET page /pkg/oauth/callback.html"); n != 1 {
		t.Errorf("the package's oauth/callback.html was loaded %d times; want once", n)
	}
	checkAppErrors(e)

	e.do("open the React app on the server without sign-in", chromedp.Navigate(e.PageURL+"/?server=mcp2"))
	waitApp(e, "state connected", `document.querySelector("#server")?.dataset.state === "connected"`)
	react := e.js(`window.__connectedAt.toFixed(0)`)
	t.Logf("measure: navigation → first connected (server without sign-in, each page fetching and compiling its own copy of the wasm): plain page %s ms, React app (production build) %s ms", plain, react)
}

// origin is the scheme://host:port of a URL.
func origin(u string) string {
	if i := strings.Index(u[len("http://"):], "/"); i >= 0 {
		return u[:len("http://")+i]
	}
	return u
}

// TestNpmReactCatalog drives useCatalog in the production build: both demo
// servers behind one tool list, the protected one signed in from its
// button, and every session closed on unmount.
func TestNpmReactCatalog(t *testing.T) {
	onlyInPass(t, "auto", packageInDefaultRuntime)
	b := buildNpm(t)
	e := newAppEnv(t, true, b.Prod)
	e.do("open the catalog view", chromedp.Navigate(e.PageURL+"/?view=catalog"),
		chromedp.WaitVisible(chromedp.CSS(`#servers li[data-server="notes"][data-state="connected"]`)),
		chromedp.WaitVisible(chromedp.CSS(`#servers li[data-server="demo"][data-state="needs_auth"]`)))
	waitApp(e, "the notes server's tools", `document.querySelector('#catalog-tools [data-tool^="notes_"]') !== null`)
	if got := e.js(`document.querySelectorAll('#catalog-tools [data-tool^="demo_"]').length`); got != "0" {
		t.Errorf("%s tools of the server waiting for a sign-in are listed", got)
	}
	popups := e.ownPopup()
	e.do("click the demo server's Sign in", chromedp.Click(chromedp.CSS(`button[data-sign-in="demo"]`)))
	e.consent(e.popup(popups), "approve")
	e.do("the demo server connects", chromedp.WaitVisible(chromedp.CSS(`#servers li[data-server="demo"][data-state="connected"]`)))
	waitApp(e, "the demo server's tools", `document.querySelector('#catalog-tools [data-tool="demo_add"]') !== null`)

	deletes := countOf(e.requestLog(), "DELETE mcp /mcp") + countOf(e.requestLog(), "DELETE mcp2 /mcp")
	e.do("unmount", chromedp.Click(chromedp.ID("toggle")))
	e.waitFor("both sessions' end at the servers", func() bool {
		return countOf(e.requestLog(), "DELETE mcp /mcp")+countOf(e.requestLog(), "DELETE mcp2 /mcp") >= deletes+2
	})
	checkAppErrors(e)
}
