package webserve

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"testing/fstest"
	"time"
)

// TestHashOncePerVersion checks that a file is hashed once per version, not
// once per request, and again after it changes.
func TestHashOncePerVersion(t *testing.T) {
	t0 := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	fsys := fstest.MapFS{
		"mcp.wasm":    {Data: []byte("wasm v1"), ModTime: t0},
		"mcp.wasm.br": {Data: []byte("br v1"), ModTime: t0},
	}
	h := Handler(fsys).(*handler)
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	tr := &http.Transport{DisableCompression: true}
	t.Cleanup(tr.CloseIdleConnections)
	c := &http.Client{Transport: tr}

	fetch := func(accept string) string {
		t.Helper()
		req, _ := http.NewRequest("GET", srv.URL+"/mcp.wasm", nil)
		req.Header.Set("Accept-Encoding", accept)
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.Header.Get("ETag")
	}

	steps := []struct {
		name       string
		change     func()
		accept     string
		wantHashes int64
	}{
		{"first identity", nil, "", 1},
		{"identity again", nil, "", 1},
		{"first br", nil, "br", 2},
		{"br again", nil, "br", 2},
		{"identity third time", nil, "identity", 2},
		{"same size, new time", func() { fsys["mcp.wasm"] = &fstest.MapFile{Data: []byte("wasm v2"), ModTime: t0.Add(time.Second)} }, "", 3},
		{"new size, same time", func() { fsys["mcp.wasm"] = &fstest.MapFile{Data: []byte("wasm v2!"), ModTime: t0.Add(time.Second)} }, "", 4},
		{"unchanged", nil, "", 4},
	}
	seen := map[string]bool{}
	for _, s := range steps {
		if s.change != nil {
			s.change()
		}
		etag := fetch(s.accept)
		if got := h.hashes.Load(); got != s.wantHashes {
			t.Errorf("%s: hashes = %d; want %d", s.name, got, s.wantHashes)
		}
		if s.change != nil && seen[etag] {
			t.Errorf("%s: ETag %s was already used by an earlier version", s.name, etag)
		}
		seen[etag] = true
	}
}

func TestParseAcceptEncoding(t *testing.T) {
	tests := []struct {
		header string
		token  string
		want   float64
	}{
		{"", "identity", implicitIdentity},
		{"", "br", 0},
		{"br", "br", 1},
		{"br;q=0.3", "br", 0.3},
		{"br ; Q=0.3", "br", 0.3},
		{"*;q=0.2", "gzip", 0.2},
		{"*;q=0", "identity", 0},
		{"identity;q=0", "identity", 0},
		{"gzip;q=1.5", "gzip", 0},
		{"x-gzip", "gzip", 1},
	}
	for _, tt := range tests {
		if got := parseAcceptEncoding(tt.header).q(tt.token); got != tt.want {
			t.Errorf("parseAcceptEncoding(%q).q(%q) = %v; want %v", tt.header, tt.token, got, tt.want)
		}
	}
}
