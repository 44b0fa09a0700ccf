// Command gen writes web/jsapi.js from the jsapi package.
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/mcpwasm/mcpwasm/jsapi"
)

func main() {
	out := flag.String("out", "web/jsapi.js", "where to write")
	flag.Parse()
	if err := os.WriteFile(*out, jsapi.RenderJS(), 0o644); err != nil {
		fmt.Fprintln(os.Stderr, "jsapi/gen:", err)
		os.Exit(1)
	}
}
