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

// CopyWeb copies root/web into dst without any built module and adds the
// toolchain's wasm_exec.js.
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
	goroot, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		return fmt.Errorf("webbuild: go env GOROOT: %w", err)
	}
	b, err := os.ReadFile(filepath.Join(strings.TrimSpace(string(goroot)), "lib", "wasm", "wasm_exec.js"))
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dst, "wasm_exec.js"), b, 0o644)
}

// BuildWasm builds root's ./wasm for GOOS=js into out with flags.
func BuildWasm(root, out string, flags ...string) error {
	args := append([]string{"build"}, flags...)
	args = append(args, "-o", out, "./wasm")
	cmd := exec.Command("go", args...)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "GOOS=js", "GOARCH=wasm")
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("webbuild: go %s (in %s): %v\n%s", strings.Join(args, " "), root, err, b)
	}
	return nil
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

// Build copies web/ and builds mcp.wasm into dst (see CopyWeb, BuildWasm).
func Build(root, dst string, flags ...string) error {
	if err := CopyWeb(root, dst); err != nil {
		return err
	}
	return BuildWasm(root, filepath.Join(dst, "mcp.wasm"), flags...)
}
