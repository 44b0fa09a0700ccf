package xengine

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// appsServer runs an official MCP Apps example server, a server nobody
// here wrote: which is "vanillajs" or "react" (@modelcontextprotocol/
// server-basic-<which>) or the rest of another's name (server-<which>:
// "threejs", "pdf", "map", "system-monitor", …), each pinned in
// e2e/node/package.json and served by e2e/node/apps-server.mjs on
// 127.0.0.1 (stateless Streamable HTTP). It returns the server's MCP URL
// and stats, which reads the tools/call requests it got per tool and the
// resources/read requests per URI. The server stops at the test's
// cleanup.
func appsServer(t *testing.T, which string) (url string, stats func() (calls, reads map[string]int)) {
	t.Helper()
	dir := filepath.Join(repo, "e2e", "node")
	pkg := "server-" + which
	if which == "vanillajs" || which == "react" {
		pkg = "server-basic-" + which
	}
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "@modelcontextprotocol", pkg)); err != nil {
		t.Fatalf("the pinned MCP Apps example servers are not installed in %s: run scripts/install-deps.sh (make deps)", dir)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, "node", "apps-server.mjs", which)
	cmd.Dir = dir
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		cancel()
		t.Fatalf("starting node: %v", err)
	}
	t.Cleanup(func() { cancel(); _ = cmd.Wait() })
	port := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if p, ok := strings.CutPrefix(sc.Text(), "LISTENING "); ok {
				port <- p
				break
			}
		}
		_, _ = io.Copy(io.Discard, out)
	}()
	var base string
	select {
	case p := <-port:
		base = "http://127.0.0.1:" + p
	case <-time.After(30 * time.Second):
		t.Fatalf("node apps-server.mjs %s did not start within 30s", which)
	}
	return base + "/mcp", func() (calls, reads map[string]int) {
		t.Helper()
		resp, err := http.Get(base + "/stats")
		if err != nil {
			t.Fatalf("the %s apps server's stats: %v", which, err)
		}
		defer resp.Body.Close()
		var s struct {
			Calls map[string]int `json:"calls"`
			Reads map[string]int `json:"reads"`
		}
		if err := json.NewDecoder(resp.Body).Decode(&s); err != nil {
			t.Fatalf("the %s apps server's stats: %v", which, err)
		}
		return s.Calls, s.Reads
	}
}

// TestAppsServersServeTheirViews checks, with the Go SDK's client and no
// browser, what the scenarios rely on: both example servers list get-time
// with its view (_meta.ui.resourceUri), serve that view as an MCP App's
// HTML, answer the call, and count both in their stats.
func TestAppsServersServeTheirViews(t *testing.T) {
	eitherRuntime(t)
	const tool, view = "get-time", "ui://get-time/mcp-app.html"
	for _, which := range []string{"vanillajs", "react"} {
		t.Run(which, func(t *testing.T) {
			url, stats := appsServer(t, which)
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			c := mcp.NewClient(&mcp.Implementation{Name: "xengine", Version: "1"}, nil)
			s, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url, MaxRetries: -1}, nil)
			if err != nil {
				t.Fatalf("connect: %v", err)
			}
			defer s.Close()
			tools, err := s.ListTools(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			var uri string
			for _, tl := range tools.Tools {
				if tl.Name == tool {
					if ui, ok := tl.Meta["ui"].(map[string]any); ok {
						uri, _ = ui["resourceUri"].(string)
					}
				}
			}
			if uri != view {
				t.Fatalf("%s's view = %q; want %q (tools: %+v)", tool, uri, view, tools.Tools)
			}
			res, err := s.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Contents) != 1 || res.Contents[0].MIMEType != "text/html;profile=mcp-app" || !strings.Contains(res.Contents[0].Text, "<html") {
				t.Fatalf("read %s: %d contents, the first %q; want one MCP App's HTML", uri, len(res.Contents), res.Contents[0].MIMEType)
			}
			r, err := s.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: map[string]any{}})
			if err != nil {
				t.Fatal(err)
			}
			if text, ok := r.Content[0].(*mcp.TextContent); r.IsError || !ok || !strings.HasPrefix(text.Text, "20") {
				t.Fatalf("call %s: %+v; want the server's time", tool, r)
			}
			calls, reads := stats()
			if calls[tool] != 1 || reads[view] != 1 {
				t.Errorf("stats: calls %v, reads %v; want one call of %s and one read of %s", calls, reads, tool, view)
			}
		})
	}
}
