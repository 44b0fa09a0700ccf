package xengine

import (
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/mcpwasm/mcpwasm/devkit/webbuild"
	"github.com/mcpwasm/mcpwasm/devkit/webserve"
	"github.com/mcpwasm/mcpwasm/e2e/internal/respstatus"
)

// TestReadmePlainPage copies exactly the files README.md's plain-page list
// names from the build of web/ into an empty directory with the README's
// quick-start page, serves them on loopback, and the page loads, connects,
// signs in through the popup (the consent page shows the clientName) and
// calls a tool, with no request failing and no page error. The page gets
// boot.js first (the pass's runtime, and the error log WebKit reads);
// otherwise it is the README's.
func TestReadmePlainPage(t *testing.T) {
	parallel(t)
	files := readmeList(t, "plain-page-files")
	// Every module and page the package ships for a page must be on the
	// list: not the React binding's modules nor the AI SDK's tools, which
	// import their packages by name for a bundler; not the types.
	for _, f := range webbuild.NpmFiles {
		if strings.HasPrefix(f, "react") || f == "ai.js" || strings.HasSuffix(f, ".ts") {
			continue
		}
		if !slices.Contains(files, f) {
			t.Errorf("README.md's plain-page file list lacks %s, which the npm package ships", f)
		}
	}
	// The list names the hashed module by its pattern; the build named it.
	if i := slices.Index(files, "mcp-<hash>.wasm"); i >= 0 {
		b, err := os.ReadFile(filepath.Join(webDir, "mcp.wasm"))
		if err != nil {
			t.Fatal(err)
		}
		files[i] = webbuild.HashedName(b)
	}
	dir := t.TempDir()
	for _, f := range files {
		b, err := os.ReadFile(filepath.Join(webDir, filepath.FromSlash(f)))
		if err != nil {
			t.Fatalf("README.md lists %s for a plain page; the build of web/ has no such file: %v", f, err)
		}
		dst := filepath.Join(dir, filepath.FromSlash(f))
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(dst, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	page := replaceOnce(t, "README.md's quick-start page", readmeCode(t, "quick-start-page"),
		`<meta charset="utf-8">`, `<meta charset="utf-8"><script src="/e2e/boot.js"></script>`)

	var (
		mu       sync.Mutex
		statuses = map[string]int{} // path under /app/ → last status
	)
	w := newSiteWorld(t, true, os.DirFS(webDir), func(w *world, mux *http.ServeMux) {
		index := replaceOnce(t, "README.md's quick-start page", page, readmeServerURL, w.MCPURL)
		site := http.StripPrefix("/app", webserve.Handler(os.DirFS(dir)))
		mux.HandleFunc("/app/", func(rw http.ResponseWriter, r *http.Request) {
			rec := &respstatus.Writer{ResponseWriter: rw}
			if r.URL.Path == "/app/index.html" {
				rec.Header().Set("Content-Type", "text/html; charset=utf-8")
				rec.Write([]byte(index))
			} else {
				site.ServeHTTP(rec, r)
			}
			mu.Lock()
			statuses[strings.TrimPrefix(r.URL.Path, "/app/")] = rec.Status
			mu.Unlock()
		})
	})

	// A page that never gets ready says which of its requests failed.
	t.Cleanup(func() {
		if !t.Failed() {
			return
		}
		mu.Lock()
		defer mu.Unlock()
		for p, status := range statuses {
			if status >= 400 {
				t.Logf("GET /app/%s: %d", p, status)
			}
		}
	})
	w.navigate(w.win, w.PageURL+"/app/index.html")
	w.until("the Sign in button", `!document.querySelector("#sign-in").hidden`)
	wait, err := w.win.ExpectPopup(w.ctx)
	if err != nil {
		t.Fatal(err)
	}
	w.click("#sign-in")
	popup := w.popup(wait, "the sign-in popup")
	if name := w.consentName(popup); name != "My App" {
		t.Errorf("the consent page names the client %q; want the README's clientName \"My App\"", name)
	}
	w.consentClick(popup, "#approve")
	w.until("the tool's result", `/\b42\b/.test(document.querySelector("#out").textContent)`)

	mu.Lock()
	defer mu.Unlock()
	for p, status := range statuses {
		if status >= 400 {
			t.Errorf("GET /app/%s: %d; the README's file list (or the page) misses it", p, status)
		}
		if p != "index.html" && !slices.Contains(files, p) {
			t.Errorf("the page loaded /app/%s, which README.md's plain-page list does not name", p)
		}
	}
	// What mcp.js imports, and the sign-in's callback page, came from the
	// copied files.
	for _, f := range append(staticImports(t, dir, "mcp.js"), "oauth/callback.html", "oauth/callback.js", "oauth/callback.css") {
		if statuses[f] == 0 {
			t.Errorf("the page never loaded /app/%s", f)
		}
	}
	switch main := runtimeMode() == "main"; {
	case !main && statuses["worker.js"] == 0:
		t.Errorf("the page never loaded /app/worker.js: load() ran on the main thread instead of a worker")
	case main && statuses["worker.js"] != 0:
		t.Errorf("the page loaded /app/worker.js in the main runtime's pass: boot.js did not set load()'s runtime")
	}
	w.noPageErrors()
}

// TestReadmeReactComponent builds README.md's React src/main.jsx (the
// package's README shows the same) into a Vite app (the index.html and
// vite.config.js of a new Vite React app, the packed tarball and
// examples/react-vite's pinned node_modules), serves it under the strict
// Content-Security-Policy and drives it: Sign in, Deny on the consent
// page (the component shows why and the Sign in button again, with no
// uncaught error), Sign in again, Approve, and a tool call's result.
func TestReadmeReactComponent(t *testing.T) {
	eitherRuntime(t)
	parallel(t)
	if pkg := markedSection(t, "web/README.npm.md", "react-component"); pkg != readmeSection(t, "react-component") {
		t.Errorf("web/README.npm.md's react-component section differs from README.md's; keep them the same (this test builds README.md's)")
	}
	mainJSX := replaceOnce(t, "README.md's React main.jsx", readmeCode(t, "react-component"),
		`const MCP_URL = "`+readmeServerURL+`";`,
		`const MCP_URL = new URLSearchParams(location.search).get("mcp");`)
	w := appWorldOf(t, buildReadmeApp(t, reactApp(t), mainJSX))

	hasSignIn := `[...document.querySelectorAll("button")].some((b) => b.textContent === "Sign in")`
	w.navigate(w.win, w.PageURL+"/?mcp="+url.QueryEscape(w.MCPURL))
	w.until("the Sign in button", hasSignIn)
	// The component shows one button at a time: Sign in, or Add.
	signIn := func(button string) {
		t.Helper()
		wait, err := w.win.ExpectPopup(w.ctx)
		if err != nil {
			t.Fatal(err)
		}
		w.click("button")
		popup := w.popup(wait, "the sign-in popup")
		if name := w.consentName(popup); name != "My App" {
			t.Errorf("the consent page names the client %q; want the README's clientName \"My App\"", name)
		}
		w.consentClick(popup, button)
	}
	signIn("#deny")
	w.until("the declined message with the Sign in button", hasSignIn+` && /declined/i.test(document.body.innerText)`)
	w.checkPage()

	signIn("#approve")
	w.until("the tool list", `[...document.querySelectorAll("li")].some((li) => li.textContent === "add")`)
	if got := w.text("button"); got != "Add 2 and 40" {
		t.Fatalf("the signed-in component's button reads %q; want Add 2 and 40", got)
	}
	w.click("button")
	w.until("the tool's result", `/\b42\b/.test(document.querySelector("output")?.textContent ?? "")`)
	if n := w.AS.Count("authorize"); n != 2 {
		t.Errorf("the authorization server saw %d authorization requests; want 2 (Deny, then Approve)", n)
	}
	w.checkPage()
}
