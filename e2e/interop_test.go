package e2e

// startNode and startEverything stay here for catalog_test.go; the interop
// scenarios run in e2e/xengine (interop_test.go there).

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// startNode runs a script of e2e/node (its packages pinned in package.json)
// and returns the ports it prints as "<NAME> <port>" lines, once every name
// in want has been printed.
func startNode(t *testing.T, want []string, args ...string) map[string]string {
	t.Helper()
	dir := filepath.Join(repoRoot, "e2e", "node")
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "@modelcontextprotocol")); err != nil {
		t.Fatalf("the pinned MCP servers are not installed in %s: run scripts/install-deps.sh (make deps)", dir)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, "node", args...)
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
	ports := make(chan map[string]string, 1)
	go func() {
		got := map[string]string{}
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if name, port, ok := strings.Cut(sc.Text(), " "); ok {
				got[name] = port
			}
			done := true
			for _, w := range want {
				done = done && got[w] != ""
			}
			if done {
				ports <- got
				break
			}
		}
		_, _ = bufio.NewReader(out).WriteTo(discard{})
	}()
	select {
	case p := <-ports:
		return p
	case <-time.After(30 * time.Second):
		t.Fatalf("node %s did not start within 30s", strings.Join(args, " "))
	}
	return nil
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }

// startEverything runs the pinned @modelcontextprotocol/server-everything
// (e2e/node) in Streamable HTTP mode on loopback and returns its MCP URL.
func startEverything(t *testing.T) string {
	t.Helper()
	p := startNode(t, []string{"LISTENING"}, "run-everything.mjs", "streamableHttp")
	return "http://127.0.0.1:" + p["LISTENING"] + "/mcp"
}
