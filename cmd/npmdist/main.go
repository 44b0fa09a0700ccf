// Command npmdist writes the npm package of mcpwasm (make dist), or only
// the ES module form of Go's wasm_exec.js, or only the content-hashed copy
// of mcp.wasm and the wasmurl.js naming it (make build).
//
//	npmdist -out dist/npm -wasm-dir web -version "$(git describe --always --dirty)"
//	npmdist -wasm-exec web/wasm_exec.js
//	npmdist -stamp web
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/mcpwasm/mcpwasm/devkit/webbuild"
)

func main() {
	out := flag.String("out", "dist/npm", "the package directory to write (emptied first)")
	wasmDir := flag.String("wasm-dir", "web", "where the built mcp.wasm (and .gz, .br) are")
	version := flag.String("version", "", "the output of git describe; made a semantic version")
	wasmExec := flag.String("wasm-exec", "", "only write wasm_exec.js as an ES module to this path")
	stamp := flag.String("stamp", "", "only write the hashed copy of this directory's mcp.wasm (and .gz, .br) and its wasmurl.js")
	flag.Parse()
	if *stamp != "" {
		name, err := webbuild.Stamp(*stamp)
		if err != nil {
			fmt.Fprintln(os.Stderr, "npmdist:", err)
			os.Exit(1)
		}
		fmt.Printf("npmdist: %s\n", name)
		return
	}
	if err := run(*out, *wasmDir, *version, *wasmExec); err != nil {
		fmt.Fprintln(os.Stderr, "npmdist:", err)
		os.Exit(1)
	}
}

func run(out, wasmDir, version, wasmExec string) error {
	if wasmExec != "" {
		b, err := webbuild.WasmExec()
		if err != nil {
			return err
		}
		return os.WriteFile(wasmExec, b, 0o644)
	}
	v := webbuild.SemVer(version)
	if err := webbuild.Npm(".", wasmDir, out, v); err != nil {
		return err
	}
	fmt.Printf("npmdist: %s at version %s\n", out, v)
	return nil
}
