package xengine

import (
	"slices"
	"testing"

	"github.com/mcpwasm/mcpwasm/devkit/devserver"
)

// TestLoadWithProgress: load() in a fresh window downloads the module,
// served precompressed, with a stream of progress reports that ends at
// its decoded size, says which runtime it picked and the build's version;
// a second load() returns the same instance without downloading again.
func TestLoadWithProgress(t *testing.T) {
	w := blankWorld(t, devserver.AuthConfig{})
	var got struct {
		Loaded   []float64 `json:"loaded"`
		Total    float64   `json:"total"`
		Size     float64   `json:"size"`
		Encoding string    `json:"encoding"`
		Runtime  string    `json:"runtime"`
		Version  string    `json:"version"`
		Same     bool      `json:"same"`
	}
	w.eval(`(async () => {
		const m = await import("/mcp.js");
		const loaded = []; let total = 0;
		const mcp = await m.load({ onProgress: (l, t) => { loaded.push(l); total = t; } });
		const again = await m.load({ onProgress: () => { throw new Error("load() downloaded the module again"); } });
		const r = await fetch("/mcp.wasm");
		const size = (await r.arrayBuffer()).byteLength;
		return { loaded, total, size, encoding: r.headers.get("Content-Encoding"), runtime: mcp.runtime, version: mcp.version, same: again === mcp };
	})()`, &got)
	if len(got.Loaded) < 2 {
		t.Errorf("onProgress called %d times; want a stream of reports", len(got.Loaded))
	}
	if n := len(got.Loaded); n > 0 && got.Loaded[n-1] != got.Size {
		t.Errorf("last progress = %v bytes; want the module's %v", got.Loaded[n-1], got.Size)
	}
	if got.Total != got.Size {
		t.Errorf("progress total = %v; want the decoded size %v", got.Total, got.Size)
	}
	if !slices.IsSorted(got.Loaded) {
		t.Errorf("progress went backwards: %v", got.Loaded)
	}
	if got.Encoding != "gzip" {
		t.Errorf("mcp.wasm served with Content-Encoding %q; want the precompressed gzip", got.Encoding)
	}
	if !got.Same {
		t.Error("load() twice returned different instances")
	}
	if got.Version != "e2e" {
		t.Errorf("version = %q; want e2e (set by -ldflags)", got.Version)
	}
	want := map[string][]string{"main": {"main"}, "auto": {"shared-worker", "worker"}}[runtimeMode()]
	if !slices.Contains(want, got.Runtime) {
		t.Errorf("load() runtime = %q; want one of %v for MCPWASM_E2E_RUNTIME=%s", got.Runtime, want, runtimeMode())
	}
	t.Logf("load(): runtime %s, %d progress reports, total %v, size %v", got.Runtime, len(got.Loaded), got.Total, got.Size)
}
