package webserve_test

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpwasm/mcpwasm/devkit/webserve"
)

// base is the modification time of every original file in the fixture.
var base = time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)

// files is the fixture tree: name → content. Precompressed siblings hold
// marker text rather than real compressed bytes, so a test can tell which
// file was sent.
var files = map[string]string{
	"index.html":             "<!doctype html><title>demo</title>",
	"mcp.js":                 "export function load() {}",
	"mcp.js.br":              "BR(mcp.js)",
	"mcp.js.gz":              "GZ(mcp.js)",
	"mod.mjs":                "export {}",
	"mcp.wasm":               "\x00asm\x01\x00\x00\x00",
	"mcp.wasm.br":            "BR(mcp.wasm)",
	"mcp.wasm.gz":            "GZ(mcp.wasm)",
	"mcp.d.ts":               "export declare function load(): void;",
	"style.css":              "body{}",
	"only-gz.js":             "gz only",
	"only-gz.js.gz":          "GZ(only-gz.js)",
	"stale.js":               "fresh original",
	"stale.js.br":            "BR(stale.js)",
	"subsecond.js":           "original",
	"subsecond.js.br":        "BR(subsecond.js)",
	"oauth/callback.html":    "<!doctype html><title>callback</title>",
	"oauth/callback.js":      "relay()",
	"empty/.keep":            "",
	".env":                   "SECRET=1",
	"download.gz":            "GZ(download)",
	".well-known/thing.json": `{"ok":true}`,
}

// start writes the fixture into a fresh directory (inside a parent holding a
// file that must never be reachable) and serves it on loopback.
func start(t *testing.T, opts ...webserve.Option) (srv *httptest.Server, root string) {
	t.Helper()
	parent := t.TempDir()
	if err := os.WriteFile(filepath.Join(parent, "secret.txt"), []byte("TOP SECRET"), 0o644); err != nil {
		t.Fatal(err)
	}
	root = filepath.Join(parent, "web")
	for name, content := range files {
		writeFile(t, root, name, content, base)
	}
	// stale.js.br predates its original: it must be ignored.
	touch(t, root, "stale.js.br", base.Add(-time.Hour))
	// The brotli tool copies the original's time without its sub-second
	// part: still fresh.
	touch(t, root, "subsecond.js", base.Add(850*time.Millisecond))
	touch(t, root, "subsecond.js.br", base)
	srv = httptest.NewServer(webserve.Handler(os.DirFS(root), opts...))
	t.Cleanup(srv.Close)
	return srv, root
}

func writeFile(t *testing.T, root, name, content string, mod time.Time) {
	t.Helper()
	p := filepath.Join(root, filepath.FromSlash(name))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	touch(t, root, name, mod)
}

func touch(t *testing.T, root, name string, mod time.Time) {
	t.Helper()
	if err := os.Chtimes(filepath.Join(root, filepath.FromSlash(name)), mod, mod); err != nil {
		t.Fatal(err)
	}
}

// client returns an HTTP client that sends Accept-Encoding exactly as the
// test sets it and never decompresses.
func client(t *testing.T) *http.Client {
	t.Helper()
	tr := &http.Transport{DisableCompression: true}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{
		Transport:     tr,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

type response struct {
	status int
	header http.Header
	body   string
}

func get(t *testing.T, c *http.Client, method, url string, header map[string]string) response {
	t.Helper()
	req, err := http.NewRequest(method, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return response{resp.StatusCode, resp.Header, string(b)}
}

func TestContentTypes(t *testing.T) {
	srv, _ := start(t)
	c := client(t)
	tests := []struct {
		path, want, body string
	}{
		{"/", "text/html; charset=utf-8", files["index.html"]},
		{"/index.html", "text/html; charset=utf-8", files["index.html"]},
		{"/mcp.js", "text/javascript; charset=utf-8", files["mcp.js"]},
		{"/mod.mjs", "text/javascript; charset=utf-8", files["mod.mjs"]},
		{"/mcp.wasm", "application/wasm", files["mcp.wasm"]},
		{"/mcp.d.ts", "text/plain; charset=utf-8", files["mcp.d.ts"]},
		{"/style.css", "text/css; charset=utf-8", files["style.css"]},
		{"/oauth/callback.html", "text/html; charset=utf-8", files["oauth/callback.html"]},
		{"/oauth/callback.js", "text/javascript; charset=utf-8", files["oauth/callback.js"]},
		{"/.well-known/thing.json", "application/json", files[".well-known/thing.json"]},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			r := get(t, c, "GET", srv.URL+tt.path, nil)
			if r.status != http.StatusOK {
				t.Fatalf("status = %d; want 200", r.status)
			}
			if got := r.header.Get("Content-Type"); got != tt.want {
				t.Errorf("Content-Type = %q; want %q", got, tt.want)
			}
			if got := r.body; got != tt.body {
				t.Errorf("body = %q; want %q", got, tt.body)
			}
			if got := r.header.Get("X-Content-Type-Options"); got != "nosniff" {
				t.Errorf("X-Content-Type-Options = %q; want nosniff", got)
			}
			if got := r.header.Get("Cache-Control"); got != "no-cache" {
				t.Errorf("Cache-Control = %q; want no-cache", got)
			}
			if got := r.header.Get("Content-Encoding"); got != "" {
				t.Errorf("Content-Encoding = %q; want none", got)
			}
		})
	}
}

func TestEncodingNegotiation(t *testing.T) {
	srv, _ := start(t)
	c := client(t)
	tests := []struct {
		path, accept string
		wantEncoding string
		wantBody     string
	}{
		{"/mcp.wasm", "", "", files["mcp.wasm"]},
		{"/mcp.wasm", "gzip, deflate, br, zstd", "br", "BR(mcp.wasm)"},
		{"/mcp.wasm", "gzip", "gzip", "GZ(mcp.wasm)"},
		{"/mcp.wasm", "x-gzip", "gzip", "GZ(mcp.wasm)"},
		{"/mcp.wasm", "BR", "br", "BR(mcp.wasm)"},
		{"/mcp.wasm", "br;q=0, gzip", "gzip", "GZ(mcp.wasm)"},
		{"/mcp.wasm", "br;q=0.5, gzip;q=0.8", "gzip", "GZ(mcp.wasm)"},
		{"/mcp.wasm", "br;q=0.8, gzip;q=0.8", "br", "BR(mcp.wasm)"},
		{"/mcp.wasm", "br;q=0, gzip;q=0", "", files["mcp.wasm"]},
		{"/mcp.wasm", "identity;q=1, br;q=0.5", "", files["mcp.wasm"]},
		{"/mcp.wasm", "identity;q=0.1, br;q=0.5", "br", "BR(mcp.wasm)"},
		{"/mcp.wasm", "*", "br", "BR(mcp.wasm)"},
		{"/mcp.wasm", "*;q=0, identity", "", files["mcp.wasm"]},
		{"/mcp.wasm", "gzip;q=bogus, br;q=2", "", files["mcp.wasm"]},
		{"/mcp.wasm", "deflate, zstd", "", files["mcp.wasm"]},
		{"/mcp.js", "br, gzip", "br", "BR(mcp.js)"},
		{"/only-gz.js", "br, gzip", "gzip", "GZ(only-gz.js)"},
		{"/only-gz.js", "br", "", files["only-gz.js"]},
		{"/stale.js", "br, gzip", "", files["stale.js"]},
		{"/subsecond.js", "br", "br", "BR(subsecond.js)"},
		{"/index.html", "br, gzip", "", files["index.html"]},
	}
	for _, tt := range tests {
		t.Run(tt.path+" "+tt.accept, func(t *testing.T) {
			r := get(t, c, "GET", srv.URL+tt.path, map[string]string{"Accept-Encoding": tt.accept})
			if r.status != http.StatusOK {
				t.Fatalf("status = %d; want 200", r.status)
			}
			if got := r.header.Get("Content-Encoding"); got != tt.wantEncoding {
				t.Errorf("Content-Encoding = %q; want %q", got, tt.wantEncoding)
			}
			if got := r.body; got != tt.wantBody {
				t.Errorf("body = %q; want %q", got, tt.wantBody)
			}
			if got, want := r.header.Get("Content-Type"), webserveType(tt.path); got != want {
				t.Errorf("Content-Type = %q; want %q", got, want)
			}
			if got := r.header.Values("Vary"); !contains(got, "Accept-Encoding") {
				t.Errorf("Vary = %q; want it to contain Accept-Encoding", got)
			}
		})
	}
}

func webserveType(p string) string {
	switch {
	case strings.HasSuffix(p, ".wasm"):
		return "application/wasm"
	case strings.HasSuffix(p, ".js"):
		return "text/javascript; charset=utf-8"
	default:
		return "text/html; charset=utf-8"
	}
}

func contains(vs []string, want string) bool {
	for _, v := range vs {
		for part := range strings.SplitSeq(v, ",") {
			if strings.EqualFold(strings.TrimSpace(part), want) {
				return true
			}
		}
	}
	return false
}

func TestETagRevalidation(t *testing.T) {
	srv, root := start(t)
	c := client(t)
	url := srv.URL + "/mcp.wasm"

	etags := map[string]string{}
	for _, enc := range []string{"", "br", "gzip"} {
		first := get(t, c, "GET", url, map[string]string{"Accept-Encoding": enc})
		etag := first.header.Get("ETag")
		if !strings.HasPrefix(etag, `"`) || !strings.HasSuffix(etag, `"`) || len(etag) < 10 {
			t.Fatalf("Accept-Encoding %q: ETag = %q; want a strong quoted tag", enc, etag)
		}
		for other, tag := range etags {
			if tag == etag {
				t.Errorf("ETag for %q = ETag for %q = %s; want one per encoding", enc, other, etag)
			}
		}
		etags[enc] = etag

		again := get(t, c, "GET", url, map[string]string{"Accept-Encoding": enc, "If-None-Match": etag})
		if got, want := again.status, http.StatusNotModified; got != want {
			t.Errorf("Accept-Encoding %q revalidation: status = %d; want %d", enc, got, want)
		}
		if got := len(again.body); got != 0 {
			t.Errorf("Accept-Encoding %q revalidation: body has %d bytes; want 0", enc, got)
		}
		if got := again.header.Get("ETag"); got != etag {
			t.Errorf("Accept-Encoding %q revalidation: ETag = %q; want %q", enc, got, etag)
		}
	}

	// The br ETag does not validate the gzip representation.
	cross := get(t, c, "GET", url, map[string]string{"Accept-Encoding": "gzip", "If-None-Match": etags["br"]})
	if got, want := cross.status, http.StatusOK; got != want {
		t.Errorf("gzip with br ETag: status = %d; want %d", got, want)
	}

	// A rebuilt module (new content, new time) gets a new ETag and a 200.
	writeFile(t, root, "mcp.wasm", "\x00asm\x01\x00\x00\x00 rebuilt", base.Add(time.Hour))
	changed := get(t, c, "GET", url, map[string]string{"If-None-Match": etags[""]})
	if got, want := changed.status, http.StatusOK; got != want {
		t.Fatalf("after rebuild: status = %d; want %d", got, want)
	}
	if got := changed.header.Get("ETag"); got == etags[""] {
		t.Errorf("after rebuild: ETag unchanged (%s)", got)
	}
	// The siblings are now older than the original: stale, so identity.
	stale := get(t, c, "GET", url, map[string]string{"Accept-Encoding": "br, gzip"})
	if got := stale.header.Get("Content-Encoding"); got != "" {
		t.Errorf("after rebuild with stale siblings: Content-Encoding = %q; want none", got)
	}
}

func TestHead(t *testing.T) {
	srv, _ := start(t)
	r := get(t, client(t), "HEAD", srv.URL+"/mcp.wasm", map[string]string{"Accept-Encoding": "br"})
	if r.status != http.StatusOK || r.body != "" {
		t.Errorf("HEAD: status %d, body %q; want 200 and no body", r.status, r.body)
	}
	if got, want := r.header.Get("Content-Length"), "12"; got != want {
		t.Errorf("HEAD Content-Length = %q; want %q (length of the br file)", got, want)
	}
}

func TestNotServed(t *testing.T) {
	srv, _ := start(t)
	c := client(t)
	tests := []struct {
		method, path string
		want         int
	}{
		{"GET", "/missing.js", http.StatusNotFound},
		{"GET", "/mcp.wasm.br", http.StatusNotFound},
		{"GET", "/mcp.js.gz", http.StatusNotFound},
		{"GET", "/stale.js.br", http.StatusNotFound},
		{"GET", "/empty/", http.StatusNotFound}, // no index.html, no listing
		{"GET", "/.env", http.StatusNotFound},
		{"GET", "/empty/.keep", http.StatusNotFound},
		{"POST", "/index.html", http.StatusMethodNotAllowed},
		{"DELETE", "/mcp.js", http.StatusMethodNotAllowed},
	}
	for _, tt := range tests {
		t.Run(tt.method+" "+tt.path, func(t *testing.T) {
			r := get(t, c, tt.method, srv.URL+tt.path, map[string]string{"Accept-Encoding": "br, gzip"})
			if r.status != tt.want {
				t.Errorf("status = %d; want %d", r.status, tt.want)
			}
			if strings.Contains(r.body, "BR(") || strings.Contains(r.body, "GZ(") || strings.Contains(r.body, "SECRET") {
				t.Errorf("body = %q; leaked a file", r.body)
			}
		})
	}
}

func TestDirectoryRedirect(t *testing.T) {
	srv, _ := start(t)
	c := client(t)
	r := get(t, c, "GET", srv.URL+"/oauth?x=1", nil)
	if got, want := r.status, http.StatusMovedPermanently; got != want {
		t.Fatalf("status = %d; want %d", got, want)
	}
	if got, want := r.header.Get("Location"), "/oauth/?x=1"; got != want {
		t.Errorf("Location = %q; want %q", got, want)
	}
	// A .gz file without an original is an ordinary download.
	dl := get(t, c, "GET", srv.URL+"/download.gz", nil)
	if got, want := dl.header.Get("Content-Type"), "application/gzip"; dl.status != 200 || got != want {
		t.Errorf("download.gz: status %d, Content-Type %q; want 200, %q", dl.status, got, want)
	}
}

// TestTraversal sends raw request lines, so no client-side cleaning hides
// the attempt.
func TestTraversal(t *testing.T) {
	srv, _ := start(t)
	targets := []string{
		"/../secret.txt",
		"/../../secret.txt",
		"/%2e%2e/secret.txt",
		"/..%2fsecret.txt",
		"/oauth/../../secret.txt",
		`/..\secret.txt`,
		"/%2e%2e%5csecret.txt",
		"/./../secret.txt",
		"//../secret.txt",
	}
	for _, target := range targets {
		t.Run(target, func(t *testing.T) {
			conn, err := net.Dial("tcp", srv.Listener.Addr().String())
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { conn.Close() })
			if _, err := io.WriteString(conn, "GET "+target+" HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"); err != nil {
				t.Fatal(err)
			}
			resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if strings.Contains(string(body), "TOP SECRET") {
				t.Fatalf("status %d: served the file outside the root", resp.StatusCode)
			}
			if resp.StatusCode == http.StatusOK {
				t.Errorf("status = 200 (body %q); want an error status", body)
			}
		})
	}
}

func TestWithHeader(t *testing.T) {
	srv, _ := start(t, webserve.WithHeader("Content-Security-Policy", "default-src 'self'"))
	r := get(t, client(t), "GET", srv.URL+"/", nil)
	if got, want := r.header.Get("Content-Security-Policy"), "default-src 'self'"; got != want {
		t.Errorf("Content-Security-Policy = %q; want %q", got, want)
	}
}
