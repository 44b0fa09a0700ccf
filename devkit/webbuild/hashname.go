package webbuild

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/mcpwasm/mcpwasm/devkit/hashname"
)

// WasmModule is the generated module mcp.js imports for the URL of the
// wasm module: the content-hashed name after [Stamp], the plain one before.
const WasmModule = "wasmurl.js"

// HashedName is the immutable name of the module whose bytes are wasm:
// mcp-<the first hashname.HashLen hex digits of their SHA-256>.wasm.
func HashedName(wasm []byte) string { return hashname.Name("mcp", ".wasm", wasm) }

// siblingSuffixes are the precompressed variants Stamp carries over.
var siblingSuffixes = []string{".gz", ".br"}

// Stamp gives the module dir/mcp.wasm its hashed name in dir: see [StampTo].
func Stamp(dir string) (string, error) { return StampTo(dir, dir) }

// StampTo writes src/mcp.wasm into dst under [HashedName], with those of
// its .gz and .br siblings that decode to its bytes (gzip is checked here,
// brotli with the brotli command; a sibling that cannot be checked is left
// out), a manifest of their digests (see package hashname) and, last,
// dst/wasmurl.js ([WasmModule]) naming the module, so a page never names a
// module that is not all there. Each file is written to a temporary name
// and renamed. The hashed files of other builds in dst are removed after
// that. It returns the hashed name. Run it after anything that writes
// mcp.wasm or its siblings.
func StampTo(src, dst string) (string, error) {
	wasm, err := os.ReadFile(filepath.Join(src, "mcp.wasm"))
	if err != nil {
		return "", fmt.Errorf("webbuild: stamping the module's hashed name: %w (build mcp.wasm first: make build)", err)
	}
	name := HashedName(wasm)
	if err := writeAtomic(dst, name, wasm); err != nil {
		return "", err
	}
	sum := sha256.Sum256(wasm)
	names, sums := []string{name}, [][]byte{sum[:]}
	keep := map[string]bool{name: true}
	for _, suffix := range siblingSuffixes {
		b, err := os.ReadFile(filepath.Join(src, "mcp.wasm"+suffix))
		if os.IsNotExist(err) {
			continue
		}
		if err != nil {
			return "", err
		}
		// A sibling of another build (stale, or written over) would be
		// cached for a year under the immutable name: only one that
		// decodes to these bytes goes.
		if !decodesTo(suffix, b, wasm) {
			continue
		}
		if err := writeAtomic(dst, name+suffix, b); err != nil {
			return "", err
		}
		s := sha256.Sum256(b)
		names, sums = append(names, name+suffix), append(sums, s[:])
		keep[name+suffix] = true
	}
	manifest := hashname.ManifestName(name)
	if err := writeAtomic(dst, manifest, hashname.Manifest(names, sums)); err != nil {
		return "", err
	}
	keep[manifest] = true
	if err := writeAtomic(dst, WasmModule, WasmURLModule(name)); err != nil {
		return "", err
	}
	return name, removeHashed(dst, keep)
}

// decodesTo reports whether b, the sibling with suffix, decodes to want.
func decodesTo(suffix string, b, want []byte) bool {
	var got []byte
	switch suffix {
	case ".gz":
		zr, err := gzip.NewReader(bytes.NewReader(b))
		if err != nil {
			return false
		}
		if got, err = io.ReadAll(io.LimitReader(zr, int64(len(want))+1)); err != nil {
			return false
		}
	case ".br":
		// No brotli decoder in the standard library; the command that
		// wrote the sibling (make build's) can read it.
		cmd := exec.Command("brotli", "-d", "-c")
		cmd.Stdin = bytes.NewReader(b)
		out, err := cmd.Output()
		if err != nil {
			return false
		}
		got = out
	default:
		return false
	}
	return bytes.Equal(got, want)
}

// writeAtomic writes dir/name through a hidden temporary file in dir and a
// rename, so a reader sees the old file or the whole new one.
func writeAtomic(dir, name string, b []byte) error {
	f, err := os.CreateTemp(dir, "."+name+".tmp-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	_, err = f.Write(b)
	if err == nil {
		err = f.Chmod(0o644)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, filepath.Join(dir, name))
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("webbuild: writing %s: %w", filepath.Join(dir, name), err)
	}
	return nil
}

// WasmURLModule is the source of wasmurl.js for the module file name (a
// name beside it). The literal new URL("./…", import.meta.url) is the
// pattern Vite, webpack 5 and Parcel turn into an emitted asset (esbuild
// and plain Rollup do not: copy the module and pass load({ wasmURL })).
// hashedName, from [hashname.Pattern], tells a worker whether a module
// URL names one build by itself.
func WasmURLModule(name string) []byte {
	pattern, _ := json.Marshal(hashname.Pattern) // a JS string literal
	return []byte("// wasmurl.js: where mcp.js finds this build's WebAssembly module (written by\n" +
		"// devkit/webbuild; a content-hashed name is immutable, see docs/JSAPI.md).\n" +
		"export const wasmURL = new URL(" + strconv.Quote("./"+name) + ", import.meta.url);\n" +
		"/** Matches a module file name that carries the module's content hash (mcp-<hash>.wasm, also as a bundler renames it). */\n" +
		"export const hashedName = new RegExp(" + string(pattern) + ");\n")
}

// removeHashed removes the hashed modules (and siblings, manifests) in dir
// but those in keep.
func removeHashed(dir string, keep map[string]bool) error {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, e := range ents {
		if IsHashed(e.Name()) && !keep[e.Name()] {
			if err := os.Remove(filepath.Join(dir, e.Name())); err != nil {
				return err
			}
		}
	}
	return nil
}

// IsHashed reports whether the file name is one [Stamp] writes: a hashed
// module, one of its siblings or its manifest.
func IsHashed(name string) bool {
	for _, s := range append([]string{hashname.ManifestSuffix}, siblingSuffixes...) {
		if b, ok := strings.CutSuffix(name, s); ok {
			name = b
			break
		}
	}
	h, ok := hashname.Hash(name)
	return ok && name == "mcp-"+h+".wasm"
}
