// Package archtest checks the layering rules of docs/ARCHITECTURE.md: only the browser
// packages touch syscall/js, and every file there is built for js/wasm only.
package archtest

import (
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// browserDirs may import syscall/js (through safejs); their files that call
// JavaScript carry the js && wasm build tag, the rest build natively too.
var browserDirs = []string{"jsbridge", "wasm", "storage/indexeddb"}

func repoRoot(t *testing.T) string {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..")
}

func TestBrowserFilesCarryBuildTag(t *testing.T) {
	root := repoRoot(t)
	for _, dir := range browserDirs {
		files, _ := filepath.Glob(filepath.Join(root, dir, "*.go"))
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			parsed, err := parser.ParseFile(token.NewFileSet(), f, b, parser.ImportsOnly)
			if err != nil {
				t.Fatal(err)
			}
			js := dir == "wasm" // package main of GOOS=js
			for _, imp := range parsed.Imports {
				p, _ := strconv.Unquote(imp.Path.Value)
				if p == "syscall/js" || strings.HasPrefix(p, "github.com/hack-pad/safejs") || p == "github.com/mcpwasm/mcpwasm/jsbridge" {
					js = true
				}
			}
			if js && !strings.HasPrefix(string(b), "//go:build js && wasm") {
				t.Errorf("%s: calls JavaScript; its first line must be //go:build js && wasm", f)
			}
		}
	}
}

// TestNativePackagesStayNative checks that nothing outside the browser
// packages depends on syscall/js or safejs, even indirectly, so that they
// build and test natively.
func TestNativePackagesStayNative(t *testing.T) {
	root := repoRoot(t)
	pkgs := exec.Command("go", "list", "./...")
	pkgs.Dir = root
	out, err := pkgs.Output()
	if err != nil {
		t.Fatal(err)
	}
	for _, pkg := range strings.Fields(string(out)) {
		rel := strings.TrimPrefix(pkg, "github.com/mcpwasm/mcpwasm/")
		if isBrowser(rel) || strings.HasPrefix(rel, "e2e") || strings.HasPrefix(rel, "cmd/") {
			continue
		}
		// Natively (GOOS unset), so that they test natively: under GOOS=js net/http
		// itself uses syscall/js for fetch.
		deps := exec.Command("go", "list", "-deps", pkg)
		deps.Dir = root
		d, err := deps.Output()
		if err != nil {
			t.Fatalf("go list -deps %s: %v", pkg, err)
		}
		for _, dep := range strings.Fields(string(d)) {
			if dep == "syscall/js" || strings.HasPrefix(dep, "github.com/hack-pad/safejs") {
				t.Errorf("%s depends on %s; only %v may", pkg, dep, browserDirs)
			}
		}
	}
}

func isBrowser(rel string) bool {
	for _, d := range browserDirs {
		if rel == d || strings.HasPrefix(rel, d+"/") {
			return true
		}
	}
	return false
}

// TestOnlyBrowserPackagesImportJS checks, as built for the browser, that no
// package outside the browser packages imports syscall/js or safejs
// directly (a foo_js.go file would pass the native check).
func TestOnlyBrowserPackagesImportJS(t *testing.T) {
	root := repoRoot(t)
	cmd := exec.Command("go", "list", "-e", "-f", `{{.ImportPath}} {{join .Imports " "}}`, "./...")
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "GOOS=js", "GOARCH=wasm")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		if len(fields) == 0 {
			continue
		}
		rel := strings.TrimPrefix(fields[0], "github.com/mcpwasm/mcpwasm/")
		if isBrowser(rel) {
			continue
		}
		for _, imp := range fields[1:] {
			if imp == "syscall/js" || strings.HasPrefix(imp, "github.com/hack-pad/safejs") {
				t.Errorf("%s imports %s; only %v may", fields[0], imp, browserDirs)
			}
		}
	}
}

// allowedImports reads the "may import" column of the package table in
// docs/ARCHITECTURE.md: package → the module packages it imports.
func allowedImports(t *testing.T) map[string][]string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repoRoot(t), "docs", "ARCHITECTURE.md"))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]string{}
	row := regexp.MustCompile("^\\| `([a-z0-9/]+)/` \\|[^|]*\\|([^|]*)\\|$")
	tick := regexp.MustCompile("`([a-z0-9/]+)`")
	for _, line := range strings.Split(string(b), "\n") {
		m := row.FindStringSubmatch(strings.TrimSpace(line))
		if m == nil {
			continue
		}
		var deps []string
		for _, d := range tick.FindAllStringSubmatch(m[2], -1) {
			deps = append(deps, d[1])
		}
		sort.Strings(deps)
		out[m[1]] = deps
	}
	if len(out) == 0 {
		t.Fatal("docs/ARCHITECTURE.md has no package table")
	}
	return out
}

// TestImportsMatchTheArchitecture: every package's imports of this
// module's packages are exactly what docs/ARCHITECTURE.md says it may
// import, natively and as built for the browser. Commands and e2e may
// import anything.
func TestImportsMatchTheArchitecture(t *testing.T) {
	allowed := allowedImports(t)
	actual := moduleImports(t)
	for pkg, imps := range actual {
		if strings.HasPrefix(pkg, "cmd/") || pkg == "e2e" || strings.HasPrefix(pkg, "e2e/") {
			continue
		}
		want, ok := allowed[pkg]
		if !ok {
			t.Errorf("package %s is not in the table of docs/ARCHITECTURE.md", pkg)
			continue
		}
		var got []string
		for imp := range imps {
			got = append(got, imp)
		}
		sort.Strings(got)
		if strings.Join(got, " ") != strings.Join(want, " ") {
			t.Errorf("%s imports %v; docs/ARCHITECTURE.md says %v", pkg, got, want)
		}
	}
	for pkg := range allowed {
		if _, ok := actual[pkg]; !ok {
			t.Errorf("docs/ARCHITECTURE.md lists %s, which does not exist", pkg)
		}
	}
}

// TestTreeRunsOneWay: the product imports neither demo/ nor devkit/, and
// demo/ does not import devkit/ (non-test imports, natively and as built
// for the browser), so the dev and test harnesses can never become part of
// what an embedder ships.
func TestTreeRunsOneWay(t *testing.T) {
	for pkg, imps := range moduleImports(t) {
		var forbidden []string
		switch {
		case strings.HasPrefix(pkg, "cmd/"), strings.HasPrefix(pkg, "e2e"), strings.HasPrefix(pkg, "devkit/"):
			continue
		case strings.HasPrefix(pkg, "demo"):
			forbidden = []string{"devkit/"}
		default:
			forbidden = []string{"devkit/", "demo"}
		}
		for imp := range imps {
			for _, fb := range forbidden {
				if strings.HasPrefix(imp, fb) {
					t.Errorf("%s imports %s: the import graph runs product → demo → devkit, never back", pkg, imp)
				}
			}
		}
	}
}

// moduleImports maps each package of this module to the module's
// packages it imports (not its tests'), natively and as built for the
// browser, both relative to the module's path.
func moduleImports(t *testing.T) map[string]map[string]bool {
	t.Helper()
	const module = "github.com/mcpwasm/mcpwasm/"
	actual := map[string]map[string]bool{}
	for _, env := range [][]string{nil, {"GOOS=js", "GOARCH=wasm"}} {
		cmd := exec.Command("go", "list", "-e", "-f", `{{.ImportPath}} {{join .Imports " "}}`, "./...")
		cmd.Dir = repoRoot(t)
		cmd.Env = append(os.Environ(), env...)
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("go list: %v", err)
		}
		for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
			f := strings.Fields(line)
			pkg := strings.TrimPrefix(f[0], module)
			if actual[pkg] == nil {
				actual[pkg] = map[string]bool{}
			}
			for _, imp := range f[1:] {
				if rel, ok := strings.CutPrefix(imp, module); ok {
					actual[pkg][rel] = true
				}
			}
		}
	}
	return actual
}
