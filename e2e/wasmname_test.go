package e2e

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/mcpwasm/mcpwasm/devkit/webbuild"
)

// builtWasm is the path of the module a page loads by default: the built
// mcp.wasm under its content-hashed name.
func builtWasm(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(webDir, "mcp.wasm"))
	if err != nil {
		t.Fatal(err)
	}
	return "/" + webbuild.HashedName(b)
}
