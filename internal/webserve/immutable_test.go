package webserve_test

import (
	"crypto/sha256"
	"encoding/hex"
	"testing"
	"time"

	"github.com/mcpwasm/mcpwasm/internal/webserve"
)

// TestImmutable: a file named after its content's SHA-256 is cached for a
// year in every encoding; a name that only looks hashed, and a plain name,
// revalidate.
func TestImmutable(t *testing.T) {
	srv, root := start(t)
	module := "\x00asm\x01\x00\x00\x00 hashed build"
	sum := sha256.Sum256([]byte(module))
	hashed := "mcp-" + hex.EncodeToString(sum[:])[:16] + ".wasm"
	writeFile(t, root, hashed, module, base)
	writeFile(t, root, hashed+".br", "BR(hashed)", base)
	// The same name pattern with other content: a file replaced in place.
	writeFile(t, root, "mcp-0123456789abcdef.wasm", module, base)
	writeFile(t, root, "app-"+hex.EncodeToString(sum[:])[:16]+".js", "other content", base.Add(time.Second))
	c := client(t)
	for _, tc := range []struct {
		name, accept, want, wantEncoding string
	}{
		{hashed, "", webserve.ImmutableCacheControl, ""},
		{hashed, "br, gzip", webserve.ImmutableCacheControl, "br"},
		{"mcp-0123456789abcdef.wasm", "", "no-cache", ""},
		{"app-" + hex.EncodeToString(sum[:])[:16] + ".js", "", "no-cache", ""},
		{"mcp.wasm", "br", "no-cache", "br"},
	} {
		r := get(t, c, "GET", srv.URL+"/"+tc.name, map[string]string{"Accept-Encoding": tc.accept})
		if r.status != 200 {
			t.Fatalf("GET /%s: %d; want 200", tc.name, r.status)
		}
		if got := r.header.Get("Cache-Control"); got != tc.want {
			t.Errorf("GET /%s (Accept-Encoding %q): Cache-Control %q; want %q", tc.name, tc.accept, got, tc.want)
		}
		if got := r.header.Get("Content-Encoding"); got != tc.wantEncoding {
			t.Errorf("GET /%s (Accept-Encoding %q): Content-Encoding %q; want %q", tc.name, tc.accept, got, tc.wantEncoding)
		}
	}
	// Replaced in place under the same name (a new size): no longer
	// immutable.
	writeFile(t, root, hashed, module+" changed", base.Add(time.Hour))
	if got := get(t, c, "GET", srv.URL+"/"+hashed, nil).header.Get("Cache-Control"); got != "no-cache" {
		t.Errorf("GET /%s after its content changed: Cache-Control %q; want no-cache", hashed, got)
	}
}
