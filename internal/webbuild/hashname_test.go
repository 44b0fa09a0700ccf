package webbuild

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestStamp: the stamped name is the module's hash, its siblings follow it,
// wasmurl.js names it, and a rebuild with another module changes the name
// and removes the old copies.
func TestStamp(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("mcp.wasm", "\x00asm build one")
	write("mcp.wasm.gz", "GZ(one)")
	first, err := Stamp(dir)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256([]byte("\x00asm build one"))
	if want := "mcp-" + hex.EncodeToString(sum[:8]) + ".wasm"; first != want {
		t.Errorf("Stamp named the module %s; want %s (its SHA-256)", first, want)
	}
	for name, want := range map[string]string{first: "\x00asm build one", first + ".gz": "GZ(one)"} {
		if b, err := os.ReadFile(filepath.Join(dir, name)); err != nil || string(b) != want {
			t.Errorf("%s: %q, %v; want %q", name, b, err, want)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, first+".br")); !os.IsNotExist(err) {
		t.Errorf("%s.br exists (err %v) without mcp.wasm.br", first, err)
	}
	mod, err := os.ReadFile(filepath.Join(dir, WasmModule))
	if err != nil {
		t.Fatal(err)
	}
	if want := `new URL("./` + first + `", import.meta.url)`; !strings.Contains(string(mod), want) || !strings.Contains(string(mod), "hashed = true") {
		t.Errorf("wasmurl.js lacks %s and hashed = true:\n%s", want, mod)
	}

	write("mcp.wasm", "\x00asm build two")
	write("mcp.wasm.br", "BR(two)")
	// build one's .gz, older than the new module: stale, never copied.
	old := time.Now().Add(-time.Hour)
	if err := os.Chtimes(filepath.Join(dir, "mcp.wasm.gz"), old, old); err != nil {
		t.Fatal(err)
	}
	second, err := Stamp(dir)
	if err != nil {
		t.Fatal(err)
	}
	if second == first {
		t.Fatalf("a changed module kept the name %s", first)
	}
	var hashed []string
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), "mcp-") {
			hashed = append(hashed, e.Name())
		}
	}
	if want := []string{second, second + ".br"}; strings.Join(hashed, " ") != strings.Join(want, " ") {
		t.Errorf("hashed files after the rebuild: %q; want %q", hashed, want)
	}
	if mod, _ := os.ReadFile(filepath.Join(dir, WasmModule)); !strings.Contains(string(mod), second) {
		t.Errorf("wasmurl.js after the rebuild does not name %s:\n%s", second, mod)
	}
}

// TestCopyWebNamesPlain: before Stamp, wasmurl.js names the plain mcp.wasm
// and says it is not hashed, whatever a build left in web/.
func TestCopyWebNamesPlain(t *testing.T) {
	dst := t.TempDir()
	if err := CopyWeb(filepath.Join("..", ".."), dst); err != nil {
		t.Fatal(err)
	}
	mod, err := os.ReadFile(filepath.Join(dst, WasmModule))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(mod), `new URL("./mcp.wasm", import.meta.url)`) || !strings.Contains(string(mod), "hashed = false") {
		t.Errorf("wasmurl.js after CopyWeb:\n%s", mod)
	}
}
