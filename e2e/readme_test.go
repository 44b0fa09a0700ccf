package e2e

import (
	"context"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/mcpwasm/mcpwasm/devkit/webbuild"
	"github.com/mcpwasm/mcpwasm/devkit/webserve"
	"github.com/mcpwasm/mcpwasm/e2e/internal/respstatus"
)

// The README's snippets are tested as a reader pastes them: each sits
// between <!-- name --> and <!-- /name --> in README.md, and the tests
// below read them from there.

// readmeSection is the text of README.md between <!-- name --> and
// <!-- /name -->.
func readmeSection(t *testing.T, name string) string {
	t.Helper()
	return markedSection(t, "README.md", name)
}

// markedSection is the text of a file of the repository between
// <!-- name --> and <!-- /name -->.
func markedSection(t *testing.T, file, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repoRoot, filepath.FromSlash(file)))
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	open, end := "<!-- "+name+" -->", "<!-- /"+name+" -->"
	i, j := strings.Index(s, open), strings.Index(s, end)
	if i < 0 || j < i {
		t.Fatalf("%s has no %s … %s section", file, open, end)
	}
	return s[i+len(open) : j]
}

var fencedRE = regexp.MustCompile("(?s)```[a-z]*\n(.*?)```")

// readmeCode is the one fenced code block of a README section.
func readmeCode(t *testing.T, name string) string {
	t.Helper()
	m := fencedRE.FindAllStringSubmatch(readmeSection(t, name), -1)
	if len(m) != 1 {
		t.Fatalf("README.md's %s section has %d code blocks; want 1", name, len(m))
	}
	return m[0][1]
}

// replaceOnce replaces the one occurrence of old in s, failing the test
// when the README's snippet no longer holds it.
func replaceOnce(t *testing.T, what, s, old, new string) string {
	t.Helper()
	if n := strings.Count(s, old); n != 1 {
		t.Fatalf("%s holds %q %d times; want once (the test puts the demo server there)", what, old, n)
	}
	return strings.Replace(s, old, new, 1)
}

const readmeServerURL = "https://mcp.example.com/mcp"

var backtickedRE = regexp.MustCompile("`([^`]+)`")

// TestReadmePlainPage copies exactly the files README.md's plain-page list
// names from a build of web/ into an empty directory with the README's
// quick-start page, serves it on loopback, and in Chromium the page loads,
// connects, signs in through the popup (the consent page shows the
// clientName) and calls a tool, with no request failing.
func TestReadmePlainPage(t *testing.T) {
	onlyInPass(t, "auto", readmeInDefaultRuntime)
	var files []string
	for _, m := range backtickedRE.FindAllStringSubmatch(readmeSection(t, "plain-page-files"), -1) {
		files = append(files, m[1])
	}
	// Every module and page the package ships for a page (not the React
	// binding nor the AI SDK's tools, which import their packages by name
	// for a bundler; not the types) must be on the list.
	for _, f := range webbuild.NpmFiles {
		if f == "react.js" || f == "ai.js" || strings.HasSuffix(f, ".ts") {
			continue
		}
		if !slices.Contains(files, f) {
			t.Errorf("README.md's plain-page file list lacks %s, which the npm package ships", f)
		}
	}
	// The list names the hashed module by its pattern; the build named it.
	if i := slices.Index(files, "mcp-<hash>.wasm"); i >= 0 {
		files[i] = strings.TrimPrefix(builtWasm(t), "/")
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
	page := readmeCode(t, "quick-start-page")

	var (
		mu       sync.Mutex
		pageHTML string
		statuses = map[string]int{} // path under /app/ → last status
	)
	e := newSiteEnv(t, true, os.DirFS(webDir), func(mux *http.ServeMux) {
		site := http.StripPrefix("/app", webserve.Handler(os.DirFS(dir)))
		mux.HandleFunc("/app/", func(w http.ResponseWriter, r *http.Request) {
			rec := &respstatus.Writer{ResponseWriter: w}
			mu.Lock()
			body := pageHTML
			mu.Unlock()
			if r.URL.Path == "/app/index.html" {
				rec.Header().Set("Content-Type", "text/html; charset=utf-8")
				rec.Write([]byte(body))
			} else {
				site.ServeHTTP(rec, r)
			}
			mu.Lock()
			statuses[strings.TrimPrefix(r.URL.Path, "/app/")] = rec.Status
			mu.Unlock()
		})
	})
	mu.Lock()
	pageHTML = replaceOnce(t, "README.md's quick-start page", page, readmeServerURL, e.MCPURL)
	mu.Unlock()

	e.do("open the quick-start page", chromedp.Navigate(e.PageURL+"/app/index.html"))
	waitApp(e, "the Sign in button", `!document.querySelector("#sign-in").hidden`)
	popups := e.ownPopup()
	e.do("click Sign in", chromedp.Click(chromedp.ID("sign-in")))
	popup := e.popup(popups)
	checkConsentName(e, popup)
	e.consent(popup, "approve")
	waitApp(e, "the tool's result", `/\b42\b/.test(document.querySelector("#out").textContent)`)

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
	for _, f := range []string{"mcp.js", "remote.js", "rules.js", "boot.js", "errors.js", "options.js", "client.js", "catalog.js", "oauth/callback.html", "oauth/callback.js", "oauth/callback.css"} {
		if statuses[f] == 0 {
			t.Errorf("the page never loaded /app/%s", f)
		}
	}
	if !onMainThread() && statuses["worker.js"] == 0 {
		t.Errorf("the page never loaded /app/worker.js: load() ran on the main thread instead of a worker")
	}
	checkAppErrors(e)
}

// checkConsentName fails the test unless the consent page in popup names
// the app as the README's snippets do (clientName "My App"), not after the
// page's title.
func checkConsentName(e *demoEnv, popup context.Context) {
	e.t.Helper()
	name, err := chromedp.Run(popup, chromedp.Text(chromedp.ID("client-name")))
	if err != nil {
		e.t.Fatalf("reading the consent page's client name: %v", err)
	}
	if name != "My App" {
		e.t.Errorf("the consent page names the client %q; want the README's clientName \"My App\"", name)
	}
}

// TestReadmeReactComponent builds README.md's React src/main.jsx (the
// package's README shows the same) into a Vite app (the index.html and
// vite.config.js of a new Vite React app, the packed tarball and
// examples/react-vite's pinned node_modules) and drives it: Sign in, Deny on the consent page (the component shows why and the
// Sign in button again, with no uncaught error), Sign in again, Approve,
// and a tool call's result.
func TestReadmeReactComponent(t *testing.T) {
	onlyInPass(t, "auto", readmeInDefaultRuntime)
	// The package's README shows the same main.jsx.
	if pkg := markedSection(t, "web/README.npm.md", "react-component"); pkg != readmeSection(t, "react-component") {
		t.Errorf("web/README.npm.md's react-component section differs from README.md's; keep them the same (this test builds README.md's)")
	}
	b := buildNpm(t)
	mainJSX := replaceOnce(t, "README.md's React main.jsx", readmeCode(t, "react-component"),
		`const MCP_URL = "`+readmeServerURL+`";`,
		`const MCP_URL = new URLSearchParams(location.search).get("mcp");`)
	dist := buildReadmeApp(t, b, mainJSX)
	e := newAppEnv(t, true, dist)

	signIn := `//button[text()="Sign in"]`
	hasSignIn := `[...document.querySelectorAll("button")].some((b) => b.textContent === "Sign in")`
	e.do("open the app", chromedp.Navigate(e.PageURL+"/?mcp="+url.QueryEscape(e.MCPURL)))
	waitApp(e, "the Sign in button", hasSignIn)

	popups := e.ownPopup()
	e.do("click Sign in", chromedp.Click(signIn))
	popup := e.popup(popups)
	checkConsentName(e, popup)
	e.consent(popup, "deny")
	waitApp(e, "the declined message with the Sign in button", hasSignIn+` && /declined/i.test(document.body.innerText)`)
	checkAppErrors(e)
	// The callback page closes the denied window; a window event of its
	// would otherwise pass for the next popup's.
	me := chromedp.FromContext(e.ctx).Target.TargetID
	e.waitFor("the denied sign-in window to close", func() bool {
		targets, err := chromedp.Targets(e.ctx)
		if err != nil {
			return false
		}
		for _, ti := range targets {
			if ti.Type == "page" && ti.OpenerID == me {
				return false
			}
		}
		return true
	})

	popups = e.ownPopup()
	e.do("click Sign in again", chromedp.Click(signIn))
	e.consent(e.popup(popups), "approve")
	waitApp(e, "the tool list", `[...document.querySelectorAll("li")].some((li) => li.textContent === "add")`)
	e.do("call add", chromedp.Click(`//button[text()="Add 2 and 40"]`))
	waitApp(e, "the tool's result", `/\b42\b/.test(document.querySelector("output")?.textContent ?? "")`)
	if n := e.AS.Count("authorize"); n != 2 {
		t.Errorf("the authorization server saw %d authorization requests; want 2 (Deny, then Approve)", n)
	}
	checkAppErrors(e)
}

// The index.html, package.json and vite.config.js of a new Vite React app
// (npm create vite -- --template react), the README's main.jsx beside them.
const (
	readmeAppIndex = `<!doctype html>
<html lang="en">
<head><meta charset="UTF-8"><meta name="viewport" content="width=device-width, initial-scale=1.0"><title>app</title></head>
<body><div id="root"></div><script type="module" src="/src/main.jsx"></script></body>
</html>
`
	readmeAppPackage = `{ "name": "app", "private": true, "type": "module" }
`
	readmeAppViteConfig = `import { defineConfig } from "vite";
import react from "@vitejs/plugin-react";

export default defineConfig({ plugins: [react()] });
`
)

// buildReadmeApp writes the app into a directory inside examples/react-vite
// (so that Node finds react, vite and the installed tarball in its
// node_modules), runs vite build and returns the built dist.
func buildReadmeApp(t *testing.T, b *npmBuild, mainJSX string) string {
	t.Helper()
	// The example app's node_modules are shared: one e2e process at a time.
	if lock, err := os.OpenFile(filepath.Join(os.TempDir(), "mcpwasm-e2e-react-vite.lock"), os.O_CREATE|os.O_RDWR, 0o600); err == nil {
		defer lock.Close()
		if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err == nil {
			defer syscall.Flock(int(lock.Fd()), syscall.LOCK_UN)
		}
	}
	src, err := os.MkdirTemp(b.App, ".e2e-readme-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(src)
	for name, body := range map[string]string{
		"index.html": readmeAppIndex, "package.json": readmeAppPackage,
		"vite.config.js": readmeAppViteConfig, "src/main.jsx": mainJSX,
	} {
		p := filepath.Join(src, filepath.FromSlash(name))
		if err := os.MkdirAll(path.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// Install this process's tarball again: the e2e process of another
	// runtime mode may have installed its own since.
	install := exec.Command("npm", "install", "--no-save", "--no-audit", "--no-fund", "--loglevel=error", b.Tarball)
	install.Dir = b.App
	install.Env = append(os.Environ(), "NO_COLOR=1", "npm_config_update_notifier=false")
	if out, err := install.CombinedOutput(); err != nil {
		t.Fatalf("npm install %s: %v\n%s", b.Tarball, err, out)
	}
	dist := filepath.Join(t.TempDir(), "dist")
	cmd := exec.Command(filepath.Join(b.App, "node_modules", ".bin", "vite"), "build", "--logLevel", "warn", "--outDir", dist)
	cmd.Dir = src
	cmd.Env = append(os.Environ(), "NO_COLOR=1")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("vite build of README.md's React main.jsx: %v\n%s", err, out)
	}
	return dist
}
