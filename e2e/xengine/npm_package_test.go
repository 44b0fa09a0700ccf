package xengine

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpwasm/mcpwasm/devkit/webbuild"
)

// TestNpmPackage unpacks the packed tarball as npm would and checks its
// package.json: what a bundler and TypeScript read to find the modules
// and their types, the module once under its content-hashed name.
func TestNpmPackage(t *testing.T) {
	onePass(t)
	b := reactApp(t)
	dir := t.TempDir()
	if out, err := exec.Command("tar", "-xzf", b.Tarball, "-C", dir).CombinedOutput(); err != nil {
		t.Fatalf("unpacking %s: %v\n%s", b.Tarball, err, out)
	}
	pkgDir := filepath.Join(dir, "package")
	raw, err := os.ReadFile(filepath.Join(pkgDir, "package.json"))
	if err != nil {
		t.Fatal(err)
	}
	var pkg struct {
		Name                 string                       `json:"name"`
		Type                 string                       `json:"type"`
		Exports              map[string]map[string]string `json:"exports"`
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
			if _, err := os.Stat(filepath.Join(pkgDir, e[cond])); err != nil {
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
	wasm, err := os.ReadFile(filepath.Join(pkgDir, hashed))
	if err != nil {
		t.Fatal(err)
	}
	if want := webbuild.HashedName(wasm); hashed != want {
		t.Errorf(`exports["./mcp.wasm"] is %q; want the module's hashed name %q`, hashed, want)
	}
	for _, f := range []string{hashed + ".gz", "wasmurl.js", "oauth/callback.html", "README.md"} {
		if _, err := os.Stat(filepath.Join(pkgDir, f)); err != nil {
			t.Errorf("the package lacks %s", f)
		}
	}
	for _, f := range []string{"mcp.wasm", "mcp.wasm.gz", "mcp.wasm.br"} {
		if _, err := os.Stat(filepath.Join(pkgDir, f)); err == nil {
			t.Errorf("the package carries %s beside %s: the module twice", f, hashed)
		}
	}
	if mod, err := os.ReadFile(filepath.Join(pkgDir, "wasmurl.js")); err != nil || !strings.Contains(string(mod), `"./`+hashed+`"`) {
		t.Errorf("the package's wasmurl.js does not name %s (err %v):\n%s", hashed, err, mod)
	}
	if fi, err := os.Stat(b.Tarball); err == nil {
		t.Logf("measure: tarball %s: %d bytes", filepath.Base(b.Tarball), fi.Size())
	}
}

// TestNpmTypes runs tsc --noEmit over the examples' types/usage.ts, which
// import the package as installed from the tarball: mcpwasm,
// mcpwasm/react and mcpwasm/callback in examples/react-vite, and
// mcpwasm/ai's ToolSet in examples/ai-sdk, which is what the pinned AI
// SDK's generateText, streamText, ToolLoopAgent and DirectChatTransport
// take.
func TestNpmTypes(t *testing.T) {
	onePass(t)
	reactApp(t)
	aiSDKApp(t)
	tsc := filepath.Join(repo, "e2e", "node", "node_modules", ".bin", "tsc")
	for _, example := range []string{"react-vite", "ai-sdk"} {
		t.Run(example, func(t *testing.T) {
			cmd := exec.Command(tsc, "-p", filepath.Join(repo, "examples", example, "types"))
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("tsc over the package's types in examples/%s: %v\n%s", example, err, out)
			}
		})
	}
}
