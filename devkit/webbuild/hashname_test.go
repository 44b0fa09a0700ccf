package webbuild

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mcpwasm/mcpwasm/devkit/hashname"
)

// TestStamp: the stamped name is the module's hash; only siblings that
// decode to the module follow it, listed in its manifest; wasmurl.js names
// it; a rebuild with another module changes the name and removes the old
// copies, and a sibling left from the old build is not carried over.
func TestStamp(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	read := func(name string) []byte {
		t.Helper()
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	hashedFiles := func() []string {
		var out []string
		ents, _ := os.ReadDir(dir)
		for _, e := range ents {
			if strings.HasPrefix(e.Name(), "mcp-") || strings.HasPrefix(e.Name(), ".") {
				out = append(out, e.Name())
			}
		}
		return out
	}
	write("mcp.wasm", "\x00asm build one")
	if err := Gzip(filepath.Join(dir, "mcp.wasm")); err != nil {
		t.Fatal(err)
	}
	write("mcp.wasm.br", "not brotli of build one")
	first, err := Stamp(dir)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256([]byte("\x00asm build one"))
	if want := "mcp-" + hex.EncodeToString(sum[:8]) + ".wasm"; first != want {
		t.Errorf("Stamp named the module %s; want %s (its SHA-256)", first, want)
	}
	if !bytes.Equal(read(first), []byte("\x00asm build one")) || !bytes.Equal(read(first+".gz"), read("mcp.wasm.gz")) {
		t.Errorf("%s or its .gz differ from mcp.wasm and mcp.wasm.gz", first)
	}
	want := []string{first, first + ".gz", first + hashname.ManifestSuffix}
	if got := hashedFiles(); !slices.Equal(got, want) {
		t.Errorf("files after Stamp: %q; want %q (no .br that does not decode to the module, no temporary files)", got, want)
	}
	gzSum := sha256.Sum256(read(first + ".gz"))
	manifest := hashname.ParseManifest(read(hashname.ManifestName(first)))
	if manifest[first] != hex.EncodeToString(sum[:]) || manifest[first+".gz"] != hex.EncodeToString(gzSum[:]) || len(manifest) != 2 {
		t.Errorf("manifest %v; want the module's and its .gz's digests", manifest)
	}
	mod := string(read(WasmModule))
	if want := `new URL("./` + first + `", import.meta.url)`; !strings.Contains(mod, want) || !strings.Contains(mod, "export const hashedName = new RegExp(") {
		t.Errorf("wasmurl.js lacks %s and hashedName:\n%s", want, mod)
	}

	// Build two: the .gz beside it is still build one's (newer on disk
	// than the module, so only its content tells).
	write("mcp.wasm", "\x00asm build two")
	if err := os.WriteFile(filepath.Join(dir, "mcp.wasm.gz"), read(first+".gz"), 0o644); err != nil {
		t.Fatal(err)
	}
	os.Remove(filepath.Join(dir, "mcp.wasm.br"))
	second, err := Stamp(dir)
	if err != nil {
		t.Fatal(err)
	}
	if second == first {
		t.Fatalf("a changed module kept the name %s", first)
	}
	if got, want := hashedFiles(), []string{second, second + hashname.ManifestSuffix}; !slices.Equal(got, want) {
		t.Errorf("hashed files after the rebuild: %q; want %q (build one's .gz left out, build one's files removed)", got, want)
	}
	if mod := read(WasmModule); !strings.Contains(string(mod), second) {
		t.Errorf("wasmurl.js after the rebuild does not name %s:\n%s", second, mod)
	}
}

// TestStampBrotli: a .br made by the brotli command from the module goes
// with it (the brotli command is what checks it).
func TestStampBrotli(t *testing.T) {
	if _, err := exec.LookPath("brotli"); err != nil {
		t.Log("no brotli command: Stamp cannot check a .br and leaves it out, which TestStamp covers")
		return
	}
	dir := t.TempDir()
	wasm := filepath.Join(dir, "mcp.wasm")
	if err := os.WriteFile(wasm, []byte("\x00asm brotli"), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("brotli", "-q", "1", "-f", "-o", wasm+".br", wasm).CombinedOutput(); err != nil {
		t.Fatalf("brotli: %v\n%s", err, out)
	}
	name, err := Stamp(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, name+".br")); err != nil {
		t.Errorf("%s.br: %v; want brotli's sibling carried over", name, err)
	}
}

// TestCopyWebNamesPlain: before Stamp, wasmurl.js names the plain mcp.wasm,
// whatever a build left in web/.
func TestCopyWebNamesPlain(t *testing.T) {
	dst := t.TempDir()
	if err := CopyWeb(filepath.Join("..", ".."), dst); err != nil {
		t.Fatal(err)
	}
	mod, err := os.ReadFile(filepath.Join(dst, WasmModule))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(mod), `new URL("./mcp.wasm", import.meta.url)`) {
		t.Errorf("wasmurl.js after CopyWeb:\n%s", mod)
	}
	ents, _ := os.ReadDir(dst)
	for _, e := range ents {
		if IsHashed(e.Name()) {
			t.Errorf("CopyWeb copied %s from web/", e.Name())
		}
	}
}

func TestIsHashed(t *testing.T) {
	name := HashedName([]byte("x"))
	for n, want := range map[string]bool{
		name: true, name + ".gz": true, name + ".br": true, name + hashname.ManifestSuffix: true,
		"mcp.wasm": false, "mcp.wasm.gz": false, "app-0123456789abcdef.wasm": false, name + ".zst": false,
	} {
		if got := IsHashed(n); got != want {
			t.Errorf("IsHashed(%q) = %v; want %v", n, got, want)
		}
	}
}
