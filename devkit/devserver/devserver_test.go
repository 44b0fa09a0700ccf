package devserver_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpwasm/mcpwasm/devkit/devserver"
)

func TestCheckLoopback(t *testing.T) {
	tests := []struct {
		addr string
		ok   bool
	}{
		{"127.0.0.1:8080", true},
		{"127.0.0.2:0", true},
		{"[::1]:8080", true},
		{"localhost:8080", true},
		{"LOCALHOST:1", true},
		{":8080", false},
		{"0.0.0.0:8080", false},
		{"[::]:8080", false},
		{"192.168.1.2:8080", false},
		{"example.com:80", false},
		{"127.0.0.1", false},
	}
	for _, tt := range tests {
		err := devserver.CheckLoopback(tt.addr)
		if got := err == nil; got != tt.ok {
			t.Errorf("CheckLoopback(%q) = %v; want ok = %v", tt.addr, err, tt.ok)
		}
	}
}

func TestStartRefusesRemote(t *testing.T) {
	_, err := devserver.Start(devserver.Config{Web: fstest.MapFS{}, WebAddr: "0.0.0.0:0"})
	if err == nil {
		t.Fatal("Start on 0.0.0.0 without AllowRemote: err = nil; want an error")
	}
}

// TestStart starts both origins on free loopback ports, loads the page and
// its config, and talks MCP to the demo origin from the config's URL.
func TestStart(t *testing.T) {
	web := fstest.MapFS{
		"index.html":        {Data: []byte("<!doctype html><title>t</title>"), ModTime: time.Now()},
		"apps/sandbox.html": {Data: []byte("<!doctype html><title>sandbox</title>"), ModTime: time.Now()},
	}
	r, err := devserver.Start(devserver.Config{Web: web, WebAddr: "127.0.0.1:0", Demo: true, MCPAddr: "127.0.0.1:0", SandboxAddr: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		defer cancel()
		if err := r.Shutdown(ctx); err != nil {
			t.Errorf("Shutdown: %v", err)
		}
	})

	resp, err := http.Get(r.PageURL)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || string(body) != "<!doctype html><title>t</title>" {
		t.Errorf("GET %s: %d %q; want the index page", r.PageURL, resp.StatusCode, body)
	}

	resp, err = http.Get(r.PageURL + devserver.ConfigPath[1:])
	if err != nil {
		t.Fatal(err)
	}
	var page devserver.PageConfig
	err = json.NewDecoder(resp.Body).Decode(&page)
	resp.Body.Close()
	if err != nil {
		t.Fatalf("config: %v", err)
	}
	if page != r.Page || page.MCPURL == "" || page.SSEURL == "" || !strings.HasSuffix(page.SandboxURL, devserver.SandboxPath) {
		t.Errorf("config = %+v; want %+v with the MCP, SSE and sandbox URLs", page, r.Page)
	}
	resp, err = http.Get(page.SandboxURL)
	if err != nil {
		t.Fatal(err)
	}
	body, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || string(body) != "<!doctype html><title>sandbox</title>" {
		t.Errorf("GET %s: %d %q; want the sandbox page", page.SandboxURL, resp.StatusCode, body)
	}
	if strings.HasPrefix(page.SandboxURL, r.PageURL) {
		t.Errorf("sandbox %s is on the page's origin %s", page.SandboxURL, r.PageURL)
	}

	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	c := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "0"}, nil)
	cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: page.MCPURL, HTTPClient: &http.Client{}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "hi"}})
	if err != nil {
		t.Fatal(err)
	}
	if got := res.Content[0].(*mcp.TextContent).Text; got != "hi" {
		t.Errorf("echo = %q; want hi", got)
	}
}

// TestHandlersWithoutDemo checks the page-only wiring.
func TestHandlersWithoutDemo(t *testing.T) {
	origins, err := devserver.Handlers(devserver.Config{Web: fstest.MapFS{}}, devserver.PageConfig{})
	if err != nil {
		t.Fatal(err)
	}
	if len(origins) != 1 || origins[0].Name != "page" {
		t.Errorf("origins = %+v; want only page", origins)
	}
}

// TestHandlersRefuseABadAuthServer: a configuration the demo authorization
// server refuses is an error at once, not a server answering 500 forever.
func TestHandlersRefuseABadAuthServer(t *testing.T) {
	_, err := devserver.Handlers(devserver.Config{Web: fstest.MapFS{}, Demo: true, Auth: devserver.AuthConfig{Enabled: true}},
		devserver.PageConfig{MCPURL: "http://127.0.0.1:1/mcp", ASURL: "not a url"})
	if err == nil || !strings.Contains(err.Error(), "authorization server") {
		t.Errorf("error %v; want one about the authorization server", err)
	}
}

// TestSandboxOrigin: the "sandbox" origin serves the files of web/apps/ at
// its root, framable from the page's origin (no CSP, no X-Frame-Options)
// and without a referrer; nothing else of web/, no directory, no other
// method; and the page finds it in its config.
func TestSandboxOrigin(t *testing.T) {
	now := time.Now()
	web := fstest.MapFS{
		"demo/index.html":     {Data: []byte("<!doctype html><title>demo</title>"), ModTime: now},
		"mcp.js":              {Data: []byte("export {};"), ModTime: now},
		"apps/sandbox.html":   {Data: []byte("<!doctype html><title>sandbox</title>"), ModTime: now},
		"apps/sandbox.js":     {Data: []byte("// sandbox"), ModTime: now},
		"apps/sub/x.js":       {Data: []byte("// x"), ModTime: now},
		"apps/.hidden.js":     {Data: []byte("// hidden"), ModTime: now},
		"oauth/callback.html": {Data: []byte("<!doctype html>"), ModTime: now},
	}
	page := devserver.PageConfig{SandboxURL: "http://127.0.0.1:1" + devserver.SandboxPath}
	for _, demoMode := range []bool{false, true} {
		origins, err := devserver.Handlers(devserver.Config{Web: web, Demo: demoMode}, page)
		if err != nil {
			t.Fatal(err)
		}
		if last := origins[len(origins)-1]; last.Name != "sandbox" {
			t.Fatalf("demo=%v: the last origin is %q; want sandbox", demoMode, last.Name)
		}
	}
	origins, err := devserver.Handlers(devserver.Config{Web: web}, page)
	if err != nil {
		t.Fatal(err)
	}
	if len(origins) != 2 || origins[0].Name != "page" {
		t.Fatalf("origins = %+v; want page and sandbox", origins)
	}
	sandbox := httptest.NewServer(origins[1].Handler)
	t.Cleanup(sandbox.Close)
	pageSrv := httptest.NewServer(origins[0].Handler)
	t.Cleanup(pageSrv.Close)

	do := func(method, path string) (*http.Response, string) {
		t.Helper()
		req, err := http.NewRequest(method, sandbox.URL+path, nil)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := sandbox.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		return resp, string(b)
	}
	checkHeaders := func(what string, resp *http.Response) {
		t.Helper()
		h := resp.Header
		if got := h.Get("X-Content-Type-Options"); got != "nosniff" {
			t.Errorf("%s: X-Content-Type-Options = %q; want nosniff", what, got)
		}
		if got := h.Get("Referrer-Policy"); got != "no-referrer" {
			t.Errorf("%s: Referrer-Policy = %q; want no-referrer", what, got)
		}
		for _, k := range []string{"Content-Security-Policy", "Content-Security-Policy-Report-Only", "X-Frame-Options", "Set-Cookie"} {
			if v, ok := h[k]; ok {
				t.Errorf("%s: %s: %q; want none", what, k, v)
			}
		}
	}

	for _, tt := range []struct{ path, ctype, body string }{
		{"/sandbox.html", "text/html; charset=utf-8", "<!doctype html><title>sandbox</title>"},
		{"/sandbox.js", "text/javascript; charset=utf-8", "// sandbox"},
		{"/sub/x.js", "text/javascript; charset=utf-8", "// x"},
	} {
		resp, body := do("GET", tt.path)
		if resp.StatusCode != 200 || body != tt.body {
			t.Errorf("GET %s: %d %q; want 200 %q", tt.path, resp.StatusCode, body, tt.body)
		}
		if got := resp.Header.Get("Content-Type"); got != tt.ctype {
			t.Errorf("GET %s: Content-Type %q; want %q", tt.path, got, tt.ctype)
		}
		if got := resp.Header.Get("Cache-Control"); got != "no-cache" {
			t.Errorf("GET %s: Cache-Control %q; want no-cache", tt.path, got)
		}
		checkHeaders("GET "+tt.path, resp)
	}
	if resp, body := do("HEAD", "/sandbox.html"); resp.StatusCode != 200 || body != "" {
		t.Errorf("HEAD /sandbox.html: %d %q; want 200 and no body", resp.StatusCode, body)
	}

	for _, p := range []string{
		"/", "/index.html", "/mcp.js", "/../mcp.js", "/%2e%2e/mcp.js", "/apps/sandbox.html", "/../apps/sandbox.html",
		"/oauth/callback.html", "/demo/index.html", "/sub", "/sub/", "//sandbox.html", "/./sandbox.html",
		"/sandbox.html/", "/sub/../sandbox.html", "/.hidden.js", "/nope.html", devserver.ConfigPath,
	} {
		resp, _ := do("GET", p)
		if resp.StatusCode != 404 {
			t.Errorf("GET %s: %d; want 404", p, resp.StatusCode)
		}
		checkHeaders("GET "+p, resp)
	}
	for _, m := range []string{"POST", "PUT", "DELETE", "OPTIONS"} {
		resp, _ := do(m, "/sandbox.html")
		if resp.StatusCode != 405 || resp.Header.Get("Allow") != "GET, HEAD" {
			t.Errorf("%s /sandbox.html: %d, Allow %q; want 405, GET, HEAD", m, resp.StatusCode, resp.Header.Get("Allow"))
		}
		checkHeaders(m+" /sandbox.html", resp)
	}

	resp, err := http.Get(pageSrv.URL + devserver.ConfigPath)
	if err != nil {
		t.Fatal(err)
	}
	var raw map[string]any
	err = json.NewDecoder(resp.Body).Decode(&raw)
	resp.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	if raw["sandboxURL"] != page.SandboxURL {
		t.Errorf("config.json sandboxURL = %v; want %q", raw["sandboxURL"], page.SandboxURL)
	}
}

// TestPageFramesTheSandboxOnly: with a sandbox origin, the demo page's
// policy frames that origin and nothing else (its frame-src 'none' made
// that origin, at / and /index.html, with a Content-Length and ETag of
// the page as served); without one, the page is served as it is; a
// sandbox URL that could smuggle another source into the policy is
// refused.
func TestPageFramesTheSandboxOnly(t *testing.T) {
	now := time.Now()
	const policy = `<meta http-equiv="Content-Security-Policy" content="default-src 'self'; frame-src 'none'; object-src 'none'">`
	web := fstest.MapFS{
		"demo/index.html":    {Data: []byte("<!doctype html>" + policy + "<title>demo</title>"), ModTime: now},
		"demo/index.html.gz": {Data: []byte("stale, not the page"), ModTime: now.Add(time.Second)},
		"demo/app.js":        {Data: []byte("// frame-src 'none' stays in other files"), ModTime: now},
		"apps/sandbox.html":  {Data: []byte("<!doctype html>"), ModTime: now},
	}
	get := func(h http.Handler, method, path string, hdr ...string) *httptest.ResponseRecorder {
		t.Helper()
		req := httptest.NewRequest(method, path, nil)
		for i := 0; i+1 < len(hdr); i += 2 {
			req.Header.Set(hdr[i], hdr[i+1])
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		return rec
	}

	for _, sandbox := range []string{"http://127.0.0.1:43210", "https://views.app.example", "http://[::1]:8085"} {
		origins, err := devserver.Handlers(devserver.Config{Web: web}, devserver.PageConfig{SandboxURL: sandbox + devserver.SandboxPath})
		if err != nil {
			t.Fatal(err)
		}
		page := origins[0].Handler
		want := strings.Replace(policy, "frame-src 'none'", "frame-src "+sandbox, 1)
		var etag string
		for _, path := range []string{"/", "/index.html"} {
			rec := get(page, "GET", path, "Accept-Encoding", "gzip")
			body := rec.Body.String()
			if rec.Code != 200 || !strings.Contains(body, want) || strings.Contains(body, "'none'; object") {
				t.Errorf("%s, GET %s: %d %q; want the page with frame-src %s", sandbox, path, rec.Code, body, sandbox)
			}
			if got := rec.Header().Get("Content-Length"); got != strconv.Itoa(len(body)) {
				t.Errorf("%s, GET %s: Content-Length %s for %d bytes", sandbox, path, got, len(body))
			}
			if rec.Header().Get("Content-Encoding") != "" {
				t.Errorf("%s, GET %s: the precompressed sibling was served", sandbox, path)
			}
			etag = rec.Header().Get("ETag")
		}
		if rec := get(page, "GET", "/", "If-None-Match", etag); rec.Code != 304 {
			t.Errorf("%s: GET / with its ETag: %d; want 304", sandbox, rec.Code)
		}
		if body := get(page, "GET", "/app.js").Body.String(); body != "// frame-src 'none' stays in other files" {
			t.Errorf("%s: app.js = %q; want it as it is", sandbox, body)
		}
	}

	origins, err := devserver.Handlers(devserver.Config{Web: web}, devserver.PageConfig{})
	if err != nil {
		t.Fatal(err)
	}
	if body := get(origins[0].Handler, "GET", "/").Body.String(); !strings.Contains(body, policy) {
		t.Errorf("without a sandbox, GET / = %q; want the page's own policy", body)
	}

	for _, bad := range []string{"javascript:alert(1)", "/sandbox.html", "http://a.example; script-src *", "http://a.example%20*", "http://user@a.example/", "ftp://a.example/"} {
		if _, err := devserver.Handlers(devserver.Config{Web: web}, devserver.PageConfig{SandboxURL: bad}); err == nil {
			t.Errorf("sandbox URL %q: no error; want it refused", bad)
		}
	}
}

// TestRelayAndNoCORS: with NoCORS the demo servers send no CORS headers;
// the relay on the page origin forwards to them for the page, and to
// nothing else.
func TestRelayAndNoCORS(t *testing.T) {
	web := fstest.MapFS{"index.html": {Data: []byte("<!doctype html><title>t</title>"), ModTime: time.Now()}}
	r, err := devserver.Start(devserver.Config{
		Web: web, WebAddr: "127.0.0.1:0", Demo: true, MCPAddr: "127.0.0.1:0",
		Auth:   devserver.AuthConfig{Enabled: true, Addr: "127.0.0.1:0"},
		Relay:  devserver.RelayConfig{Enabled: true},
		NoCORS: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Shutdown(context.Background()) })
	if want := strings.TrimSuffix(r.PageURL, "/") + devserver.RelayPath; r.Page.RelayURL != want {
		t.Fatalf("RelayURL %q; want %q", r.Page.RelayURL, want)
	}
	pageOrigin := strings.TrimSuffix(r.PageURL, "/")
	get := func(u string) *http.Response {
		t.Helper()
		req, _ := http.NewRequest("GET", u, nil)
		req.Header.Set("Origin", pageOrigin)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	meta := r.Page.ASURL + "/.well-known/oauth-authorization-server"
	if resp := get(meta); resp.StatusCode != 200 || resp.Header.Get("Access-Control-Allow-Origin") != "" {
		t.Errorf("authorization server without CORS: %d, Allow-Origin %q; want 200 without it", resp.StatusCode, resp.Header.Get("Access-Control-Allow-Origin"))
	}
	q := func(target string) string { return r.Page.RelayURL + "?url=" + url.QueryEscape(target) }
	if resp := get(q(meta)); resp.StatusCode != 200 || resp.Header.Get("Access-Control-Allow-Origin") != pageOrigin {
		t.Errorf("through the relay: %d, Allow-Origin %q; want 200 %q", resp.StatusCode, resp.Header.Get("Access-Control-Allow-Origin"), pageOrigin)
	}
	if resp := get(q("https://example.com/")); resp.StatusCode != http.StatusForbidden {
		t.Errorf("the relay to an unlisted origin: %d; want 403", resp.StatusCode)
	}
}
