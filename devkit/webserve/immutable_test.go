package webserve_test

import (
	"crypto/sha256"
	"encoding/hex"
	"testing"
	"time"

	"github.com/mcpwasm/mcpwasm/devkit/hashname"
	"github.com/mcpwasm/mcpwasm/devkit/webserve"
)

// TestImmutable: a file named after its content's SHA-256 is cached for a
// year, and so is a precompressed sibling its manifest lists; a sibling
// the manifest does not list is never sent under that name; a name that
// only looks hashed, and a plain name, revalidate.
func TestImmutable(t *testing.T) {
	srv, root := start(t)
	module := "\x00asm\x01\x00\x00\x00 hashed build"
	sum := sha256.Sum256([]byte(module))
	hashed := hashname.Name("mcp", ".wasm", []byte(module))
	writeFile(t, root, hashed, module, base)
	writeFile(t, root, hashed+".br", "BR(hashed)", base)
	brSum := sha256.Sum256([]byte("BR(hashed)"))
	writeFile(t, root, hashname.ManifestName(hashed), string(hashname.Manifest([]string{hashed, hashed + ".br"}, [][]byte{sum[:], brSum[:]})), base)
	// A .gz the build did not vouch for (another build's, say).
	writeFile(t, root, hashed+".gz", "GZ(other build)", base)
	// The same name pattern with other content: a file replaced in place.
	writeFile(t, root, "mcp-0123456789abcdef.wasm", module, base)
	other := "app-" + hex.EncodeToString(sum[:])[:hashname.HashLen] + ".js"
	writeFile(t, root, other, "other content", base.Add(time.Second))
	c := client(t)
	check := func(name, accept, want, wantEncoding, wantBody string) {
		t.Helper()
		r := get(t, c, "GET", srv.URL+"/"+name, map[string]string{"Accept-Encoding": accept})
		if r.status != 200 {
			t.Fatalf("GET /%s: %d; want 200", name, r.status)
		}
		if got := r.header.Get("Cache-Control"); got != want {
			t.Errorf("GET /%s (Accept-Encoding %q): Cache-Control %q; want %q", name, accept, got, want)
		}
		if got := r.header.Get("Content-Encoding"); got != wantEncoding {
			t.Errorf("GET /%s (Accept-Encoding %q): Content-Encoding %q; want %q", name, accept, got, wantEncoding)
		}
		if wantBody != "" && r.body != wantBody {
			t.Errorf("GET /%s (Accept-Encoding %q): body %q; want %q", name, accept, r.body, wantBody)
		}
	}
	check(hashed, "", webserve.ImmutableCacheControl, "", module)
	check(hashed, "br, gzip", webserve.ImmutableCacheControl, "br", "BR(hashed)")
	check(hashed, "gzip", webserve.ImmutableCacheControl, "", module)
	check("mcp-0123456789abcdef.wasm", "", "no-cache", "", "")
	check(other, "", "no-cache", "", "")
	check("mcp.wasm", "br", "no-cache", "br", "")

	// The .br replaced in place (newer, so not stale by its time): no
	// longer the one the manifest lists.
	writeFile(t, root, hashed+".br", "BR(replaced)", base.Add(time.Hour))
	check(hashed, "br", webserve.ImmutableCacheControl, "", module)

	// The module replaced in place under the same name: no longer immutable.
	writeFile(t, root, hashed, module+" changed", base.Add(2*time.Hour))
	if got := get(t, c, "GET", srv.URL+"/"+hashed, nil).header.Get("Cache-Control"); got != "no-cache" {
		t.Errorf("GET /%s after its content changed: Cache-Control %q; want no-cache", hashed, got)
	}
}
