// Package webbuild builds what a page loads — web/ with mcp.wasm and the
// toolchain's wasm_exec.js — into a directory, for the e2e tests, the
// benchmark and the browser conformance client, so each runs the code of
// the tree it was started from.
package webbuild

import (
	"compress/gzip"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// CopyWeb copies root/web into dst without any built module, adds the
// toolchain's wasm_exec.js as an ES module (see [WasmExecModule]) and a
// wasmurl.js that names the plain mcp.wasm until [Stamp] hashes it.
func CopyWeb(root, dst string) error {
	if err := os.MkdirAll(dst, 0o755); err != nil {
		return err
	}
	if err := os.CopyFS(dst, os.DirFS(filepath.Join(root, "web"))); err != nil {
		return err
	}
	for _, f := range []string{"mcp.wasm", "mcp.wasm.gz", "mcp.wasm.br", "wasm_exec.js"} {
		os.Remove(filepath.Join(dst, f))
	}
	if err := removeHashed(dst, nil); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dst, WasmModule), WasmURLModule("mcp.wasm"), 0o644); err != nil {
		return err
	}
	b, err := WasmExec()
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dst, "wasm_exec.js"), b, 0o644)
}

// WasmExec reads the toolchain's wasm_exec.js and returns it as an ES
// module (see [WasmExecModule]).
func WasmExec() ([]byte, error) {
	goroot, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		return nil, fmt.Errorf("webbuild: go env GOROOT: %w", err)
	}
	b, err := os.ReadFile(filepath.Join(strings.TrimSpace(string(goroot)), "lib", "wasm", "wasm_exec.js"))
	if err != nil {
		return nil, err
	}
	return WasmExecModule(b), nil
}

// WasmExecModule wraps Go's wasm_exec.js (a script that sets globalThis.Go)
// as an ES module that exports Go and puts back whatever globalThis.Go was
// before, so importing it defines no global of its own. The stubs of fs,
// process and path it installs when a page has none stay: the Go runtime
// reads them from globalThis while it runs.
func WasmExecModule(script []byte) []byte {
	var b strings.Builder
	b.WriteString("// wasm_exec.js: Go's lib/wasm/wasm_exec.js as an ES module exporting Go (written by\n")
	b.WriteString("// devkit/webbuild; the original follows unchanged between the two marked lines).\n")
	b.WriteString("const hadGo = Object.prototype.hasOwnProperty.call(globalThis, \"Go\");\n")
	b.WriteString("const previousGo = globalThis.Go;\n")
	b.WriteString("// ---- begin Go's wasm_exec.js\n")
	b.Write(script)
	b.WriteString("\n// ---- end Go's wasm_exec.js\n")
	b.WriteString("const Go = globalThis.Go;\n")
	b.WriteString("if (hadGo) globalThis.Go = previousGo;\nelse delete globalThis.Go;\n")
	b.WriteString("export { Go };\n")
	return []byte(b.String())
}

// Tags are the build tags of every mcp.wasm build (the Makefile's
// WASMTAGS says the same; TestMakefileTags holds them together).
// nethttpomithttp2 leaves out net/http's bundled HTTP/2 client, which
// only its own TLS dialer would reach: the module sends every request
// through the browser's fetch, which speaks HTTP/2 itself.
const Tags = "nethttpomithttp2"

// BuildWasm builds root's ./wasm for GOOS=js into out with flags, adding
// [Tags] to any -tags among them.
func BuildWasm(root, out string, flags ...string) error {
	args := append([]string{"build"}, WithTags(flags)...)
	args = append(args, "-o", out, "./wasm")
	cmd := exec.Command("go", args...)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "GOOS=js", "GOARCH=wasm")
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("webbuild: go %s (in %s): %v\n%s", strings.Join(args, " "), root, err, b)
	}
	return nil
}

// WithTags returns flags with [Tags] added: to the value of their -tags
// flag, or as a -tags flag of their own when they have none.
func WithTags(flags []string) []string {
	out := make([]string, 0, len(flags)+1)
	found := false
	for i := 0; i < len(flags); i++ {
		f := flags[i]
		switch {
		case (f == "-tags" || f == "--tags") && i+1 < len(flags):
			out = append(out, "-tags="+joinTags(flags[i+1]))
			i++
			found = true
		case strings.HasPrefix(f, "-tags=") || strings.HasPrefix(f, "--tags="):
			out = append(out, "-tags="+joinTags(f[strings.Index(f, "=")+1:]))
			found = true
		default:
			out = append(out, f)
		}
	}
	if !found {
		out = append([]string{"-tags=" + Tags}, out...)
	}
	return out
}

func joinTags(list string) string {
	if list = strings.TrimSpace(list); list == "" {
		return Tags
	}
	return list + "," + Tags
}

// Gzip writes name.gz beside name (a precompressed variant webserve serves
// to browsers that accept gzip). Fast compression: for tests, not releases.
func Gzip(name string) error {
	b, err := os.ReadFile(name)
	if err != nil {
		return err
	}
	f, err := os.Create(name + ".gz")
	if err != nil {
		return err
	}
	zw, _ := gzip.NewWriterLevel(f, gzip.BestSpeed)
	if _, err := zw.Write(b); err != nil {
		f.Close()
		return err
	}
	if err := zw.Close(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// Build copies web/ and builds mcp.wasm into dst with its .gz, then its
// hashed copy that the page loads (see CopyWeb, BuildWasm, Gzip, Stamp).
func Build(root, dst string, flags ...string) error {
	if err := CopyWeb(root, dst); err != nil {
		return err
	}
	wasm := filepath.Join(dst, "mcp.wasm")
	if err := BuildWasm(root, wasm, flags...); err != nil {
		return err
	}
	if err := Gzip(wasm); err != nil {
		return err
	}
	_, err := Stamp(dst)
	return err
}
