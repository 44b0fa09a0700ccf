package webbuild

import (
	"encoding/json"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

func TestSemVer(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"v1.2.3", "1.2.3"},
		{"1.2.3", "1.2.3"},
		{"v1.2.3-dirty", "1.2.3-dev.dirty"},
		{"v1.2.3-5-gabc1234", "1.2.4-dev.5.gabc1234"},
		{"v0.9.9-12-g0123abc-dirty", "0.9.10-dev.12.g0123abc.dirty"},
		{"255e74e", "0.0.0-dev.g255e74e"},
		{"255e74e-dirty", "0.0.0-dev.g255e74e.dirty"},
		{"dev", "0.0.0-dev"},
		{"", "0.0.0-dev"},
	} {
		if got := SemVer(c.in); got != c.want {
			t.Errorf("SemVer(%q) = %q; want %q", c.in, got, c.want)
		}
	}
}

// TestNpm writes the package from this repository's web/ and checks what
// package.json points at is there, and that wasm_exec.js is a module.
func TestNpm(t *testing.T) {
	wasmDir := t.TempDir()
	if err := os.WriteFile(filepath.Join(wasmDir, "mcp.wasm"), []byte("\x00asm"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := Gzip(filepath.Join(wasmDir, "mcp.wasm")); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "npm")
	if err := Npm(filepath.Join("..", ".."), wasmDir, out, "1.2.3"); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(filepath.Join(out, "package.json"))
	if err != nil {
		t.Fatal(err)
	}
	var pkg struct {
		Version string                       `json:"version"`
		Exports map[string]map[string]string `json:"exports"`
		Files   []string                     `json:"files"`
	}
	if err := json.Unmarshal(raw, &pkg); err != nil {
		t.Fatal(err)
	}
	if pkg.Version != "1.2.3" {
		t.Errorf("version %q; want 1.2.3", pkg.Version)
	}
	var paths []string
	for _, e := range pkg.Exports {
		for _, p := range e {
			paths = append(paths, p)
		}
	}
	paths = append(paths, pkg.Files...)
	for _, p := range paths {
		if _, err := os.Stat(filepath.Join(out, p)); err != nil {
			t.Errorf("package.json names %s, which the package lacks", p)
		}
	}
	hashed := HashedName([]byte("\x00asm"))
	for _, f := range []string{hashed, hashed + ".gz", WasmModule} {
		if !slices.Contains(pkg.Files, f) {
			t.Errorf("package.json files lack %s: %q", f, pkg.Files)
		}
	}
	// The module once: the "./mcp.wasm" export is the hashed file.
	for _, f := range []string{"mcp.wasm", "mcp.wasm.gz"} {
		if slices.Contains(pkg.Files, f) {
			t.Errorf("package.json files carry the module twice, with %s: %q", f, pkg.Files)
		}
	}
	if got := pkg.Exports["./mcp.wasm"]["default"]; got != "./"+hashed {
		t.Errorf(`exports["./mcp.wasm"] is %q; want "./%s"`, got, hashed)
	}
	if mod, err := os.ReadFile(filepath.Join(out, WasmModule)); err != nil || !strings.Contains(string(mod), hashed) {
		t.Errorf("the package's %s does not name %s (err %v):\n%s", WasmModule, hashed, err, mod)
	}
	for _, entry := range []string{".", "./react", "./ai", "./callback", "./mcp.wasm"} {
		if pkg.Exports[entry]["types"] == "" {
			t.Errorf("exports[%q] has no types condition", entry)
		}
	}
	we, err := os.ReadFile(filepath.Join(out, "wasm_exec.js"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(string(we), "export { Go };\n") || !strings.Contains(string(we), "delete globalThis.Go") {
		t.Errorf("wasm_exec.js does not export Go and remove the global:\n%s", we[len(we)-200:])
	}
}

// importRE matches the relative module specifiers of a module: static
// imports and re-exports, dynamic imports, and the URLs of modules it
// starts (new URL("./worker.js", import.meta.url)).
var importRE = regexp.MustCompile(`(?m)(?:^(?:import|export)\b[^;"]*?\bfrom\s*|^import\s*|\bimport\(\s*|\bnew URL\(\s*)"(\.\.?/[^"]+)"`)

// TestNpmFilesImports: every module a shipped module imports is shipped,
// so that a module split off another cannot be left out of the package
// (the import would fail on the user's page).
func TestNpmFilesImports(t *testing.T) {
	web := filepath.Join("..", "..", "web")
	built := []string{"wasm_exec.js", WasmModule} // written by the build, not in web/'s tree
	for _, f := range NpmFiles {
		if !strings.HasSuffix(f, ".js") {
			continue
		}
		src, err := os.ReadFile(filepath.Join(web, filepath.FromSlash(f)))
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range importRE.FindAllStringSubmatch(withoutComments(string(src)), -1) {
			dep := path.Join(path.Dir(f), m[1])
			if !slices.Contains(NpmFiles, dep) && !slices.Contains(built, dep) {
				t.Errorf("%s imports %s, which NpmFiles lacks: add it, or the package's import fails", f, m[1])
			}
		}
	}
}

// withoutComments drops the lines of src that are comments, which may
// show a module's code.
func withoutComments(src string) string {
	var b strings.Builder
	for _, line := range strings.Split(src, "\n") {
		if t := strings.TrimSpace(line); strings.HasPrefix(t, "//") || strings.HasPrefix(t, "*") || strings.HasPrefix(t, "/*") {
			continue
		}
		b.WriteString(line)
		b.WriteByte('\n')
	}
	return b.String()
}
