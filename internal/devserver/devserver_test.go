package devserver_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpwasm/mcpwasm/internal/devserver"
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
	web := fstest.MapFS{"index.html": {Data: []byte("<!doctype html><title>t</title>"), ModTime: time.Now()}}
	r, err := devserver.Start(devserver.Config{Web: web, WebAddr: "127.0.0.1:0", Demo: true, MCPAddr: "127.0.0.1:0"})
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
	if page != r.Page || page.MCPURL == "" || page.SSEURL == "" {
		t.Errorf("config = %+v; want %+v with both URLs", page, r.Page)
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
