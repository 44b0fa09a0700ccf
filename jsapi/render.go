package jsapi

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// RenderJS returns web/jsapi.js: the codes, states, option kinds and the
// names of the operations and host callbacks, as JavaScript constants for
// mcp.js.
func RenderJS() []byte {
	var b bytes.Buffer
	w := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	js := func(v any) string {
		out, _ := json.Marshal(v)
		return string(out)
	}
	w("// jsapi.js: the JavaScript API's codes, states, options and the table of\n")
	w("// operations of the wasm module, generated from the Go package jsapi by\n")
	w("// `go generate ./jsapi`. Do not edit: a test fails when it is stale.\n\n")
	w("/** The MCPError codes. */\nexport const CODES = Object.freeze(%s);\n\n", js(Codes))
	w("/** The states of a client. */\nexport const STATES = Object.freeze(%s);\n\n", js(States))
	kinds := map[string]string{}
	var order []string
	for _, o := range OptionsOf(ClientOptions{}) {
		kinds[o.Name] = o.Kind
		order = append(order, o.Name)
	}
	w("/** The options of mcp.client() and the JavaScript type of each (Go checks their values). */\nexport const CLIENT_OPTIONS = Object.freeze({\n")
	for _, n := range order {
		w("  %s: %s,\n", n, js(kinds[n]))
	}
	w("});\n\n")
	w("/** The operations the wasm module exports (invoke(name, argsJSON, signal, onProgress)); true marks one that answers at once, not with a Promise. */\nexport const OPS = Object.freeze({\n")
	for _, o := range Ops {
		w("  %s: %v,\n", js(o.Name), o.Sync)
	}
	w("});\n\n")
	var hosts []string
	for _, h := range Hosts {
		hosts = append(hosts, h.Name)
	}
	w("/** The callbacks the wasm module calls on the host object. */\nexport const HOSTS = Object.freeze(%s);\n", js(hosts))
	return b.Bytes()
}
