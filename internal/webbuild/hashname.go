package webbuild

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
)

// WasmModule is the generated module mcp.js imports for the URL of the
// wasm module: the content-hashed name after [Stamp], the plain one before.
const WasmModule = "wasmurl.js"

// hashLen is the number of hex digits of SHA-256 in a hashed name: 64
// bits, plenty to tell builds apart.
const hashLen = 16

// hashedRE matches the hashed names Stamp writes, and their siblings.
var hashedRE = regexp.MustCompile(`^mcp-[0-9a-f]{16}\.wasm(\.gz|\.br)?$`)

// HashedName is the immutable name of the module whose bytes are wasm:
// mcp-<the first 16 hex digits of their SHA-256>.wasm.
func HashedName(wasm []byte) string {
	sum := sha256.Sum256(wasm)
	return "mcp-" + hex.EncodeToString(sum[:])[:hashLen] + ".wasm"
}

// Stamp gives the module dir/mcp.wasm its hashed name: it copies it, and
// its .gz and .br siblings where present and not older, to [HashedName], removes the
// hashed copies of other builds, and writes dir/wasmurl.js ([WasmModule])
// pointing at the new name. It returns that name. Run it after anything
// that writes mcp.wasm or its siblings.
func Stamp(dir string) (string, error) {
	wasm, err := os.ReadFile(filepath.Join(dir, "mcp.wasm"))
	if err != nil {
		return "", fmt.Errorf("webbuild: stamping the module's hashed name: %w (build mcp.wasm first)", err)
	}
	name := HashedName(wasm)
	orig, err := os.Stat(filepath.Join(dir, "mcp.wasm"))
	if err != nil {
		return "", err
	}
	if err := removeHashed(dir); err != nil {
		return "", err
	}
	// The module first, then its siblings: a sibling older than its
	// original is stale to webserve.
	if err := os.WriteFile(filepath.Join(dir, name), wasm, 0o644); err != nil {
		return "", err
	}
	for _, suffix := range []string{".gz", ".br"} {
		// A sibling older than the module is of another build (webserve
		// ignores it too): under the immutable name it would stay cached.
		sib, err := os.Stat(filepath.Join(dir, "mcp.wasm"+suffix))
		if os.IsNotExist(err) || (err == nil && sib.ModTime().Unix() < orig.ModTime().Unix()) {
			continue
		}
		if err != nil {
			return "", err
		}
		b, err := os.ReadFile(filepath.Join(dir, "mcp.wasm"+suffix))
		if err != nil {
			return "", err
		}
		if err := os.WriteFile(filepath.Join(dir, name+suffix), b, 0o644); err != nil {
			return "", err
		}
	}
	if err := os.WriteFile(filepath.Join(dir, WasmModule), WasmURLModule(name), 0o644); err != nil {
		return "", err
	}
	return name, nil
}

// WasmURLModule is the source of wasmurl.js for the module file name (a
// name beside it). The literal new URL("./…", import.meta.url) is the
// pattern Vite, webpack 5, Rollup and esbuild turn into an emitted asset.
func WasmURLModule(name string) []byte {
	return []byte("// wasmurl.js: where mcp.js finds this build's WebAssembly module (written by\n" +
		"// internal/webbuild; a content-hashed name is immutable, see docs/JSAPI.md).\n" +
		"export const wasmURL = new URL(" + strconv.Quote("./"+name) + ", import.meta.url);\n" +
		"/** Whether the name above changes with the module's content. */\n" +
		"export const hashed = " + strconv.FormatBool(name != "mcp.wasm") + ";\n")
}

// removeHashed removes the hashed modules (and siblings) in dir.
func removeHashed(dir string) error {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, e := range ents {
		if hashedRE.MatchString(e.Name()) {
			if err := os.Remove(filepath.Join(dir, e.Name())); err != nil {
				return err
			}
		}
	}
	return nil
}

// IsHashed reports whether the file name is one [Stamp] writes: a hashed
// module or one of its siblings.
func IsHashed(name string) bool { return hashedRE.MatchString(name) }
