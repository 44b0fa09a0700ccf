package e2e

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// startEverything runs the pinned @modelcontextprotocol/server-everything
// (e2e/node) in Streamable HTTP mode on loopback and returns its MCP URL.
func startEverything(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(repoRoot, "e2e", "node")
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "@modelcontextprotocol", "server-everything")); err != nil {
		t.Fatalf("server-everything is not installed in %s: run scripts/install-deps.sh (make deps)", dir)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, "node", "run-everything.mjs")
	cmd.Dir = dir
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting node: %v", err)
	}
	t.Cleanup(func() { cancel(); _ = cmd.Wait() })
	port := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if p, ok := strings.CutPrefix(sc.Text(), "LISTENING "); ok {
				port <- p
			}
		}
	}()
	select {
	case p := <-port:
		return "http://127.0.0.1:" + p + "/mcp"
	case <-time.After(30 * time.Second):
		t.Fatal("server-everything did not start within 30s")
	}
	return ""
}

// TestInteropServerEverything talks to a server nobody here wrote: the
// reference TypeScript server, over its own CORS.
func TestInteropServerEverything(t *testing.T) {
	url := startEverything(t)
	e := newEnv(t)
	var got struct {
		Server   string   `json:"server"`
		Version  string   `json:"version"`
		Tools    []string `json:"tools"`
		Echo     string   `json:"echo"`
		URI      string   `json:"uri"`
		Contents int      `json:"contents"`
		Text     string   `json:"text"`
	}
	e.eval(fmt.Sprintf(`(async () => {
		const c = mcp.client(%q);
		await c.connect();
		const tools = (await c.listTools()).map((t) => t.name);
		const echo = await c.callTool("echo", { message: "hello from wasm" });
		const res = await c.listResources();
		const read = await c.readResource(res[0].uri);
		await c.close();
		return { server: c.serverInfo.name, version: c.protocolVersion, tools, echo: echo.content[0].text,
			uri: res[0].uri, contents: read.contents.length, text: read.contents[0].text ?? read.contents[0].blob ?? "" };
	})()`, url), &got)
	t.Logf("server-everything: %s, protocol %s, %d tools", got.Server, got.Version, len(got.Tools))
	if len(got.Tools) < 5 {
		t.Errorf("tools = %v; want the everything server's tool list", got.Tools)
	}
	if !strings.Contains(got.Echo, "hello from wasm") {
		t.Errorf("echo = %q", got.Echo)
	}
	if got.Contents < 1 || got.Text == "" {
		t.Errorf("readResource(%s): %d contents, text %q", got.URI, got.Contents, got.Text)
	}
}
