package xengine

import (
	"bytes"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/mcpwasm/mcpwasm/demo"
	"github.com/mcpwasm/mcpwasm/internal/devserver"
	"github.com/mcpwasm/mcpwasm/internal/npmapp"
)

var (
	appOnce sync.Once
	appDist string // the production build of examples/react-vite
	appErr  error
)

// reactApp is the production build of examples/react-vite made from the
// packed npm package: the one MCPWASM_E2E_APP names, else built now
// (once per test binary).
func reactApp(t *testing.T) string {
	t.Helper()
	appOnce.Do(func() {
		if appDir != "" {
			appDist = filepath.Join(appDir, "prod")
			return
		}
		dir, err := os.MkdirTemp("", "xengine-app-")
		if err != nil {
			appErr = err
			return
		}
		t.Logf("building the React example app from the packed npm package (set MCPWASM_E2E_APP to reuse a build)")
		var b *npmapp.Build
		if b, appErr = npmapp.Make(repo, webDir, dir, false); appErr == nil {
			appDist = b.Prod
		}
	})
	if appErr != nil {
		t.Fatalf("building the React example app: %v", appErr)
	}
	return appDist
}

// appWorld serves the built app as the page origin, with the SPA fallback
// every single-page app host has (the app's route /oauth/callback answers
// with its index.html), under the strict Content-Security-Policy of
// docs/JSAPI.md; its index.html gets boot.js first.
func appWorld(t *testing.T) *world {
	t.Helper()
	dist := reactApp(t)
	index, err := os.ReadFile(filepath.Join(dist, "index.html"))
	if err != nil {
		t.Fatal(err)
	}
	index = bytes.Replace(index, []byte("<head>"), []byte(`<head><script src="/e2e/boot.js"></script>`), 1)
	w := newServers(t, devserver.AuthConfig{}, os.DirFS(dist), func(w *world, mux *http.ServeMux) {
		serveIndex := func(rw http.ResponseWriter, r *http.Request) {
			rw.Header().Set("Content-Type", "text/html; charset=utf-8")
			rw.Header().Set("Cache-Control", "no-cache")
			rw.Header().Set("Content-Security-Policy", "default-src 'none'; script-src 'self' 'wasm-unsafe-eval'; style-src 'self'; connect-src 'self' "+
				strings.TrimSuffix(w.MCPURL, demo.StreamablePath)+" "+strings.TrimSuffix(w.MCP2URL, demo.StreamablePath)+" "+w.ASURL)
			rw.Write(index)
		}
		mux.HandleFunc("GET /{$}", serveIndex)
		mux.HandleFunc("GET /oauth/callback", serveIndex)
	})
	w.open()
	return w
}

// appState is the state the app's #server section shows.
func (w *world) appState(want string) {
	w.t.Helper()
	w.waitFor("the app to show state "+want, func() bool {
		var s string
		_ = w.win.Eval(w.ctx, `document.querySelector("#server")?.dataset.state ?? ""`, &s)
		return s == want
	})
}

// TestReactAppFromTarball: the Vite + React example app, built from the
// packed npm package, survives a Deny on the consent page and signs in
// again through a popup that returns to the app's own /oauth/callback
// route, calls a tool and shows
// its result, and after a reload is still signed in; no page error and
// no Content-Security-Policy violation on the way.
func TestReactAppFromTarball(t *testing.T) {
	w := appWorld(t)
	w.navigate(w.win, w.PageURL+"/")
	w.appState("needs_auth")
	// A Deny first: the app shows it and offers the sign-in again, with
	// no uncaught rejection of authorize() (checked at the end).
	w.appSignIn("#deny")
	w.appState("declined")
	var shown string
	_ = w.win.Eval(w.ctx, `document.querySelector("#error")?.textContent ?? ""`, &shown)
	if !strings.Contains(strings.ToLower(shown), "declined") {
		t.Errorf("after Deny the app shows %q; want the decline said", shown)
	}
	w.appSignIn("#approve")
	w.appState("connected")
	// As a person would: the tools are listed, then Add is pressed.
	w.waitFor("the tool list", func() bool {
		var listed bool
		_ = w.win.Eval(w.ctx, `document.querySelector('#tools li[data-tool="add"]') !== null`, &listed)
		return listed
	})
	if err := w.win.Click(w.ctx, "#add"); err != nil {
		t.Fatalf("clicking Add: %v", err)
	}
	var result string
	w.waitFor("the tool's result", func() bool {
		_ = w.win.Eval(w.ctx, `document.querySelector("#result")?.textContent ?? ""`, &result)
		return result != ""
	})
	if !strings.Contains(result, "42") {
		t.Errorf("add(2, 40) shows %q; want 42", result)
	}
	before := w.snapshot()
	if err := w.win.Reload(w.ctx); err != nil {
		t.Fatalf("reload: %v", err)
	}
	w.appState("connected")
	for _, k := range []string{"authorize", "token", "register"} {
		if n := w.diff(before)[k]; n != 0 {
			t.Errorf("the reload made %d %s requests; want 0 (it stays signed in)", n, k)
		}
	}
	w.noPageErrors()
}

// appSignIn clicks the app's Sign in button and the consent page's
// button (#approve or #deny) in the popup it opens.
func (w *world) appSignIn(button string) {
	w.t.Helper()
	wait, err := w.win.ExpectPopup(w.ctx)
	if err != nil {
		w.t.Fatal(err)
	}
	if err := w.win.Click(w.ctx, "#sign-in"); err != nil {
		w.t.Fatalf("clicking Sign in: %v", err)
	}
	popup, err := wait(w.ctx)
	if err != nil {
		w.t.Fatalf("the sign-in popup: %v", err)
	}
	w.track(popup)
	if err := popup.Click(w.ctx, button); err != nil {
		w.t.Fatalf("clicking %s on the consent page: %v", button, err)
	}
}

// noPageErrors fails the test for the window's uncaught exceptions,
// unhandled rejections and console errors so far (the example app logs
// each Content-Security-Policy violation as one; pageErrors leaves out
// the browser's own favicon request, which WebKit reports as one too).
func (w *world) noPageErrors() {
	w.t.Helper()
	errs, err := w.win.Errors(w.ctx)
	if err != nil {
		w.t.Fatalf("reading the page's errors: %v", err)
	}
	for _, e := range pageErrors(errs) {
		w.t.Errorf("page error: %s", e)
	}
}
