package xengine

import (
	"context"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"

	"github.com/mcpwasm/mcpwasm/devkit/npmapp"
	"github.com/mcpwasm/mcpwasm/e2e/engine"
)

// The README's snippets are tested as a reader pastes them: each sits
// between <!-- name --> and <!-- /name --> in README.md, and the tests
// read them from there.

// readmeServerURL is the MCP server the README's snippets name; the tests
// put the demo server there.
const readmeServerURL = "https://mcp.example.com/mcp"

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
	b, err := os.ReadFile(filepath.Join(repo, filepath.FromSlash(file)))
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

var (
	fencedRE     = regexp.MustCompile("(?s)```[a-z]*\n(.*?)```")
	backtickedRE = regexp.MustCompile("`([^`]+)`")
)

// readmeCode is the one fenced code block of a README section.
func readmeCode(t *testing.T, name string) string {
	t.Helper()
	m := fencedRE.FindAllStringSubmatch(readmeSection(t, name), -1)
	if len(m) != 1 {
		t.Fatalf("README.md's %s section has %d code blocks; want 1", name, len(m))
	}
	return m[0][1]
}

// readmeList is the backticked names of a README section.
func readmeList(t *testing.T, name string) []string {
	t.Helper()
	var out []string
	for _, m := range backtickedRE.FindAllStringSubmatch(readmeSection(t, name), -1) {
		out = append(out, m[1])
	}
	return out
}

// replaceOnce replaces the one occurrence of old in s, failing the test
// when the README's snippet no longer holds it.
func replaceOnce(t *testing.T, what, s, old, new string) string {
	t.Helper()
	if n := strings.Count(s, old); n != 1 {
		t.Fatalf("%s holds %q %d times; want once (the test puts its own there)", what, old, n)
	}
	return strings.Replace(s, old, new, 1)
}

// staticImportRE finds a module's static relative imports (import … from
// "./x.js", import "./x.js"; not import(), which may never run).
var staticImportRE = regexp.MustCompile(`(?m)^\s*(?:import|export)\b[^;"'()=]*?(?:from\s+)?"(\.\.?/[^"]+)"`)

// staticImports is entry and every module it imports statically, with the
// modules those import, as paths under dir: what a browser must load
// before entry runs.
func staticImports(t *testing.T, dir, entry string) []string {
	t.Helper()
	seen := map[string]bool{entry: true}
	out, todo := []string{entry}, []string{entry}
	for len(todo) > 0 {
		f := todo[0]
		todo = todo[1:]
		b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(f)))
		if err != nil {
			t.Fatalf("reading %s, which the page's modules import: %v", f, err)
		}
		for _, m := range staticImportRE.FindAllStringSubmatch(string(b), -1) {
			dep := path.Join(path.Dir(f), m[1])
			if !seen[dep] {
				seen[dep] = true
				out = append(out, dep)
				todo = append(todo, dep)
			}
		}
	}
	return out
}

// consentName is the client name the consent page in popup shows, once
// it shows one.
func (w *world) consentName(popup engine.Window) string {
	w.t.Helper()
	var name string
	w.waitFor("the consent page's client name", func() bool {
		return popup.Eval(w.ctx, `document.querySelector("#client-name")?.textContent ?? ""`, &name) == nil && name != ""
	})
	return name
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

// buildReadmeApp writes the app into a directory inside the example app b
// was built with (so that Node finds react, vite and the installed
// tarball in its node_modules), runs vite build and returns the built
// dist.
func buildReadmeApp(t *testing.T, b *npmapp.Build, mainJSX string) string {
	t.Helper()
	// The example app's node_modules are shared: one process at a time
	// (the lock npmapp.Make takes).
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
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// Install this run's tarball again: another pass (another engine or
	// runtime) may have installed its own since.
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

// consentClick clicks button (#approve, #deny) on the consent page in
// popup.
func (w *world) consentClick(popup engine.Window, button string) {
	w.t.Helper()
	ctx, cancel := context.WithTimeout(w.ctx, waitLimit)
	defer cancel()
	if err := popup.Click(ctx, button); err != nil {
		w.t.Fatalf("clicking %s on the consent page: %v", button, err)
	}
}
