//go:build js && wasm

// Command wasm is the WebAssembly module behind web/mcp.js. It exports a
// small low-level API to the loader (see app.go); mcp.js turns it into the
// JavaScript API of JSAPI.md.
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
	app := newApp(host)
	api, err := app.exports()
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
