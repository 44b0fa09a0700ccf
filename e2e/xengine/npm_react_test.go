package xengine

import (
	"testing"
)

// TestNpmReactStrictMode drives the example app's development build
// (React's development build, StrictMode mounting every effect twice):
// the hook makes one connection, and on Sign in opens one window and
// makes one authorization request and one connection.
func TestNpmReactStrictMode(t *testing.T) {
	eitherRuntime(t)
	w := appWorldOf(t, reactApp(t).Dev)
	w.navigate(w.win, w.PageURL+"/?server=mcp2")
	w.appState("connected")
	if got := w.js(`window.__appEffects`); got != "2" {
		t.Fatalf("the app's mount effect ran %s times; want 2 (StrictMode in development mounts twice)", got)
	}
	w.shown("#tools li")
	if n := countOf(w.rpcMethods(), "initialize"); n != 1 {
		t.Errorf("the demo servers saw %d initialize requests; want 1 (one connection under StrictMode)", n)
	}
	if n := w.requests("mcp2 DELETE /mcp"); n != 0 {
		t.Errorf("the demo server saw %d session ends while the component stayed mounted", n)
	}

	w.navigate(w.win, w.PageURL+"/")
	w.appState("needs_auth")
	if n, auth := w.opens(), w.snapshot()["authorize"]; n != 0 || auth != 0 {
		t.Errorf("before any click the app opened %d windows and the authorization server saw %d authorization requests; want none", n, auth)
	}
	before := countOf(w.rpcMethods(), "initialize")
	w.appSignIn("#approve")
	w.appState("connected")
	// The tool list comes after the connection: a second window or
	// connection the double mount started with the first would be
	// counted by then.
	w.shown(`#tools li[data-tool="add"]`)
	if n := w.opens(); n != 1 {
		t.Errorf("signing in opened %d windows; want 1", n)
	}
	if n := w.AS.Count("authorize"); n != 1 {
		t.Errorf("the authorization server saw %d authorization requests; want 1", n)
	}
	if n := countOf(w.rpcMethods(), "initialize") - before; n != 1 {
		t.Errorf("signing in made %d connections; want 1", n)
	}
	w.checkPage()
}

// TestNpmReactCatalog drives useCatalog in the production build: both
// demo servers behind one tool list, the protected one's tools left out
// until it is signed in from its button, and every session closed on
// unmount.
func TestNpmReactCatalog(t *testing.T) {
	eitherRuntime(t)
	w := appWorld(t)
	w.navigate(w.win, w.PageURL+"/?view=catalog")
	w.shown(`#servers li[data-server="notes"][data-state="connected"]`)
	w.shown(`#servers li[data-server="demo"][data-state="needs_auth"]`)
	w.shown(`#catalog-tools [data-tool^="notes_"]`)
	if got := w.js(`document.querySelectorAll('#catalog-tools [data-tool^="demo_"]').length`); got != "0" {
		t.Errorf("%s tools of the server waiting for a sign-in are listed", got)
	}
	w.signIn(`button[data-sign-in="demo"]`, "#approve")
	w.shown(`#servers li[data-server="demo"][data-state="connected"]`)
	w.shown(`#catalog-tools [data-tool="demo_add"]`)

	deletes := w.requests("mcp DELETE /mcp") + w.requests("mcp2 DELETE /mcp")
	w.click("#toggle")
	w.waitFor("both sessions' end at the servers", func() bool {
		return w.requests("mcp DELETE /mcp")+w.requests("mcp2 DELETE /mcp") >= deletes+2
	})
	w.checkPage()
}
