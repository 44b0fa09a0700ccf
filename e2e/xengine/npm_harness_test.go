package xengine

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// wasmAssetRE is the name Vite gives the emitted module: a content hash
// between the name and the extension.
var wasmAssetRE = regexp.MustCompile(`^mcp-[A-Za-z0-9_-]{6,}\.wasm$`)

// wasmAsset is the name of the one wasm file under dist/assets, failing
// the test unless there is exactly one, hashed.
func wasmAsset(t *testing.T, dist string) string {
	t.Helper()
	entries, err := os.ReadDir(filepath.Join(dist, "assets"))
	if err != nil {
		t.Fatal(err)
	}
	var found []string
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".wasm") {
			found = append(found, e.Name())
		}
	}
	if len(found) != 1 || !wasmAssetRE.MatchString(found[0]) {
		t.Fatalf("the app's dist/assets has wasm files %q; want one, named with a content hash (mcp-<hash>.wasm)", found)
	}
	return found[0]
}
