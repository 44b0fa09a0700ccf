//go:build js && wasm

// Command wasm is the WebAssembly module behind web/mcp.js. It exports one
// function, invoke(op, argsJSON, signal, onProgress), for the operations
// of the table in package jsapi, and calls back into mcp.js through the
// host object of the same table; mcp.js turns both into the JavaScript API.
package main

import (
	"fmt"
	"os"

	"github.com/mcpwasm/mcpwasm/jsbridge"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

func main() {
	boot, err := jsbridge.Global().Get("__mcpwasmBoot")
	if err != nil || boot.IsUndefined() {
		fmt.Fprintln(os.Stderr, "mcp.wasm: start me through mcp.js load(); __mcpwasmBoot is missing")
		os.Exit(1)
	}
	makeError, _ := boot.Get("makeError")
	jsbridge.SetErrorFactory(makeError)
	host, _ := boot.Get("host")
	hints, _ := boot.Get("hints")
	hintsJSON, _ := jsbridge.String(hints, "hints")
	a := newApp(host, hintsJSON)
	if err := checkOps(a.ops); err != nil {
		jsbridge.ConsoleError("mcp.wasm: " + err.Error())
		os.Exit(1)
	}
	invoke, err := jsbridge.Func(a.invoke)
	if err != nil {
		fmt.Fprintln(os.Stderr, "mcp.wasm: cannot export the API:", err)
		os.Exit(1)
	}
	api, err := jsbridge.NewObject(map[string]any{"version": version, "invoke": invoke})
	if err != nil {
		fmt.Fprintln(os.Stderr, "mcp.wasm: cannot export the API:", err)
		os.Exit(1)
	}
	if _, err := boot.Call("ready", api); err != nil {
		fmt.Fprintln(os.Stderr, "mcp.wasm: the loader refused the API:", err)
		os.Exit(1)
	}
	select {} // serve calls from JavaScript until the page goes away
}
