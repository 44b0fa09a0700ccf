package devserver_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/mcpwasm/mcpwasm/demo"
	"github.com/mcpwasm/mcpwasm/devkit/devserver"
)

// TestBusySwitch: the demo MCP server's switch answers the next n POSTs
// with the busy status, Retry-After and the CORS headers a page needs to
// read them (Retry-After exposed), notes each POST with its JSON-RPC
// method, and then lets requests through to the server.
func TestBusySwitch(t *testing.T) {
	sw := &devserver.Busy{}
	origins, err := devserver.Handlers(devserver.Config{Web: fstest.MapFS{}, Demo: true, Busy: devserver.BusyConfig{MCP: sw}},
		devserver.PageConfig{MCPURL: "http://127.0.0.1:1" + demo.StreamablePath})
	if err != nil {
		t.Fatal(err)
	}
	var mcpSrv *httptest.Server
	for _, o := range origins {
		if o.Name == "mcp" {
			mcpSrv = httptest.NewServer(o.Handler)
			t.Cleanup(mcpSrv.Close)
		}
	}
	post := func() *http.Response {
		t.Helper()
		req, _ := http.NewRequest(http.MethodPost, mcpSrv.URL+demo.StreamablePath,
			strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`))
		req.Header.Set("Origin", "http://127.0.0.1:2")
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp
	}
	sw.Set(2, http.StatusTooManyRequests, 7)
	for i := range 2 {
		resp := post()
		if resp.StatusCode != 429 || resp.Header.Get("Retry-After") != "7" {
			t.Errorf("POST %d: %d, Retry-After %q; want 429 with 7", i, resp.StatusCode, resp.Header.Get("Retry-After"))
		}
		if resp.Header.Get("Access-Control-Allow-Origin") != "http://127.0.0.1:2" || !strings.Contains(resp.Header.Get("Access-Control-Expose-Headers"), "Retry-After") {
			t.Errorf("POST %d: CORS headers %v; want the origin allowed and Retry-After exposed", i, resp.Header)
		}
	}
	if resp := post(); resp.StatusCode != 200 {
		t.Errorf("POST after the switch ran out: %d; want the server's 200", resp.StatusCode)
	}
	sw.Set(1, http.StatusServiceUnavailable, -1)
	if resp := post(); resp.StatusCode != 503 || resp.Header.Get("Retry-After") != "" {
		t.Errorf("503 switch: %d, Retry-After %q; want 503 without Retry-After", resp.StatusCode, resp.Header.Get("Retry-After"))
	}
	hits := sw.Hits()
	if len(hits) != 4 {
		t.Fatalf("hits %+v; want 4", hits)
	}
	for i, want := range []int{429, 429, 0, 503} {
		if hits[i].Status != want || hits[i].Method != "initialize" {
			t.Errorf("hit %d = %+v; want status %d, method initialize", i, hits[i], want)
		}
	}
}
