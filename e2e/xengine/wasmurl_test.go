package xengine

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpwasm/mcpwasm/devkit/devserver"
	"github.com/mcpwasm/mcpwasm/devkit/webbuild"
	"github.com/mcpwasm/mcpwasm/devkit/webserve"
)

// TestHashedWasmURL: a page loads the module under its content-hashed
// name, which the server marks immutable, and a second tab of the same
// build sends no HEAD to tell builds apart (the name is the build), also
// when it passes that URL as wasmURL itself: the worker reads the build
// from the URL's name, not from anything else the page says.
func TestHashedWasmURL(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(webDir, "mcp.wasm"))
	if err != nil {
		t.Fatal(err)
	}
	hashed := webbuild.HashedName(b)
	w := newWorld(t, devserver.AuthConfig{})
	var first struct {
		URL          string `json:"url"`
		Runtime      string `json:"runtime"`
		CacheControl string `json:"cacheControl"`
	}
	w.eval(`(async () => {
		const r = await fetch(mcp.wasmURL);
		r.body?.cancel(); // the headers are the point
		return { url: mcp.wasmURL, runtime: mcp.runtime, cacheControl: r.headers.get("Cache-Control") };
	})()`, &first)
	if want := w.PageURL + "/" + hashed; first.URL != want {
		t.Errorf("mcp.wasmURL = %q; want %q", first.URL, want)
	}
	if first.CacheControl != webserve.ImmutableCacheControl {
		t.Errorf("%s came with Cache-Control %q; want %q", hashed, first.CacheControl, webserve.ImmutableCacheControl)
	}
	var gets []string
	w.mu.Lock()
	for _, line := range w.trace {
		if i := strings.Index(line, "page GET /"); i >= 0 && strings.HasSuffix(line, ".wasm began") {
			gets = append(gets, strings.TrimSuffix(line[i+len("page GET "):], " began"))
		}
	}
	w.mu.Unlock()
	if len(gets) == 0 || gets[0] != "/"+hashed {
		t.Errorf("the first load's wasm GETs: %q; want /%s first", gets, hashed)
	}

	// A second tab of the same build.
	win := w.newTab()
	w.preload(win)
	w.navigate(win, w.PageURL+"/e2e/blank.html")
	before := w.snapshot()
	w.evalIn(win, `(async () => {
		const m = await import("/mcp.js");
		window.mcp = await m.load({ wasmURL: "/`+hashed+`" });
	})()`, nil)
	var second string
	w.evalIn(win, `mcp.runtime`, &second)
	d := w.diff(before)
	t.Logf("%s, runtime %s (chose %s, then %s): second tab: %d wasm GET, %d HEAD", browser.Name(), runtimeMode(), first.Runtime, second, d["wasm"], d["wasmHEAD"])
	if n := w.snapshot()["wasmHEAD"]; n != 0 {
		t.Errorf("%d HEAD requests to the wasm module; want none (its hashed name identifies the build)", n)
	}
	if second == "shared-worker" && d["wasm"] != 0 {
		t.Errorf("the second tab joined the shared runtime yet fetched the module %d times; want none", d["wasm"])
	}
}
