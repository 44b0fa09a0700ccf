package main

import (
	"os"
	"path/filepath"
	"testing"
)

// TestLoadsHashedName: the -also tree's module is measured under the name
// its pages request, so the check must find wasmurl.js wherever the
// module's scripts import it (this tree's start.js) and answer false for
// a tree that loads mcp.wasm.
func TestLoadsHashedName(t *testing.T) {
	if !loadsHashedName(filepath.Join("..", "..", "web")) {
		t.Error("this tree's web/ loads the hashed module name, but loadsHashedName says it does not")
	}
	old := t.TempDir()
	write := func(dir, name, text string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(old, "mcp.js", `const url = new URL("./mcp.wasm", import.meta.url);`)
	write(old, "wasmurl.js", `export const hashedName = "mcp-0123.wasm";`)
	if loadsHashedName(old) {
		t.Error("a tree whose scripts load mcp.wasm counts as loading the hashed name (a wasmurl.js beside it does not count)")
	}
	write(old, "start.js", `import { wasmURL } from "./wasmurl.js";`)
	if !loadsHashedName(old) {
		t.Error("a start.js importing ./wasmurl.js is not seen")
	}
}
