package e2e

import (
	"fmt"
)

// loadIn loads a separate instance of mcp.js (its own module URL) with
// runtime into window[name]. Its runtime scenarios moved to e2e/xengine;
// rules_test.go still uses it here.
func loadIn(e *env, name, runtime string) {
	e.t.Helper()
	e.eval(fmt.Sprintf(`(async () => {
		const m = await import("/mcp.js?%s");
		window.MCPError ??= m.MCPError;
		window[%q] = await m.load({ runtime: %q });
		return window[%q].runtime;
	})()`, name, name, runtime, name), nil)
}
