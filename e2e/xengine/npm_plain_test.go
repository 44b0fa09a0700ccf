package xengine

import (
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/mcpwasm/mcpwasm/devkit/webserve"
)

// plainPage loads the package's files with no bundler (a relative
// import), connects to the server given in ?server= (a key of the dev
// server's config) and calls add; #sign-in signs in.
const plainPage = `<!doctype html><meta charset="utf-8"><title>plain</title>
<script src="/e2e/boot.js"></script>
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
// the strict Content-Security-Policy docs/JSAPI.md documents: the page
// connects to the demo server without sign-in (wasm_exec.js, a module,
// leaves no global Go), then signs in to the protected one through the
// package's static oauth/callback.html. It also measures navigation →
// first connected against the React app's production build.
func TestNpmPlainPageCSP(t *testing.T) {
	eitherRuntime(t)
	b := reactApp(t)
	w := newSiteWorld(t, true, os.DirFS(b.Prod), func(w *world, mux *http.ServeMux) {
		mux.Handle("/pkg/", http.StripPrefix("/pkg", webserve.Handler(os.DirFS(b.Pkg))))
		mux.HandleFunc("GET /plain.html", func(rw http.ResponseWriter, r *http.Request) {
			rw.Header().Set("Content-Type", "text/html; charset=utf-8")
			rw.Header().Set("Content-Security-Policy", appCSP(w))
			rw.Write([]byte(plainPage))
		})
		mux.HandleFunc("GET /plain.js", func(rw http.ResponseWriter, r *http.Request) {
			rw.Header().Set("Content-Type", "text/javascript; charset=utf-8")
			rw.Write([]byte(plainJS))
		})
	})
	w.navigate(w.win, w.PageURL+"/plain.html?server=mcp2URL")
	w.until("the tool list", `document.querySelector("#result").textContent !== ""`)
	if got := w.text("#result"); strings.TrimSpace(got) == "tools:" {
		t.Errorf("the server without sign-in lists no tools")
	}
	if got := w.js(`window.__goGlobal`); got != "undefined" {
		t.Errorf("after load(), typeof globalThis.Go is %q; want undefined (wasm_exec.js as a module leaks no global)", got)
	}
	plain := w.js(`window.__connectedAt.toFixed(0)`)

	w.navigate(w.win, w.PageURL+"/plain.html?server=mcpURL")
	w.until("state needs_auth", `document.querySelector("#state").dataset.state === "needs_auth"`)
	if n, auth := w.opens(), w.snapshot()["authorize"]; n != 0 || auth != 0 {
		t.Errorf("before any click the page opened %d windows and the authorization server saw %d authorization requests; want none", n, auth)
	}
	w.signIn("#sign-in", "#approve")
	w.until("the tool's result after sign-in", `document.querySelector("#result").textContent !== ""`)
	if got := w.text("#result"); !strings.Contains(got, "42") {
		t.Errorf("add(2, 40) shows %q; want 42", got)
	}
	if n := w.requests("page GET /pkg/oauth/callback.html"); n != 1 {
		t.Errorf("the package's oauth/callback.html was loaded %d times; want once", n)
	}
	w.checkPage()

	w.navigate(w.win, w.PageURL+"/?server=mcp2")
	w.appState("connected")
	react := w.js(`window.__connectedAt.toFixed(0)`)
	t.Logf("measure (%s): navigation → first connected (server without sign-in, each page fetching and compiling its own copy of the wasm): plain page %s ms, React app (production build) %s ms", browser.Name(), plain, react)
}
