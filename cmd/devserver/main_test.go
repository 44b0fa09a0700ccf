package main

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestRunServesAndShutsDown(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "index.html"), []byte("hello page"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, "apps"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "apps", "sandbox.html"), []byte("hello sandbox"), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"-addr", "127.0.0.1:0", "-mcp-addr", "127.0.0.1:0", "-as-addr", "127.0.0.1:0", "-mcp2-addr", "127.0.0.1:0", "-model-addr", "127.0.0.1:0", "-sandbox-addr", "127.0.0.1:0", "-web", dir}, pw, io.Discard)
		pw.Close()
	}()

	urls := map[string]string{}
	sc := bufio.NewScanner(pr)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "Press Ctrl+C") {
			break
		}
		if k, v, ok := strings.Cut(strings.TrimSpace(line), ":"); ok {
			if f := strings.Fields(v); len(f) > 0 {
				urls[k] = f[0]
			}
		}
	}
	go io.Copy(io.Discard, pr)
	for _, k := range []string{"page", "MCP server", "legacy SSE", "OAuth", "MCP server 2", "model", "sandbox"} {
		if !strings.HasPrefix(urls[k], "http://127.0.0.1:") {
			t.Errorf("printed %s URL = %q; want a loopback URL", k, urls[k])
		}
	}
	resp, err := http.Get(urls["page"])
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(b) != "hello page" {
		t.Errorf("page = %q; want hello page", b)
	}
	resp, err = http.Get(urls["sandbox"])
	if err != nil {
		t.Fatal(err)
	}
	b, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(b) != "hello sandbox" || !strings.HasSuffix(urls["sandbox"], "/sandbox.html") {
		t.Errorf("sandbox %s = %q; want hello sandbox at /sandbox.html", urls["sandbox"], b)
	}

	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("run: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("run did not return after cancel")
	}
}

func TestRunRejects(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"remote addr", []string{"-addr", "0.0.0.0:0", "-web", dir}, "not a loopback address"},
		{"remote mcp addr", []string{"-addr", "127.0.0.1:0", "-mcp-addr", ":0", "-web", dir}, "not a loopback address"},
		{"remote sandbox addr", []string{"-addr", "127.0.0.1:0", "-demo=false", "-sandbox-addr", "0.0.0.0:0", "-web", dir}, "not a loopback address"},
		{"missing web dir", []string{"-web", filepath.Join(dir, "nope")}, "not found"},
		{"relay target not an origin", []string{"-addr", "127.0.0.1:0", "-mcp-addr", "127.0.0.1:0", "-as-addr", "127.0.0.1:0", "-mcp2-addr", "", "-model-addr", "", "-sandbox-addr", "", "-relay", "-relay-targets", "mcp.example.com", "-web", dir}, "is not an origin"},
		{"stray argument", []string{"extra"}, "unexpected arguments"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := run(context.Background(), tt.args, io.Discard, io.Discard)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("run(%q) = %v; want an error containing %q", tt.args, err, tt.want)
			}
		})
	}
}

// TestRunRefusesAnUnbuiltWeb: a web/ with mcp.js but without what make
// build writes (a fresh clone) is refused with what to run, rather than
// served to a page whose import of wasmurl.js would end in a 404.
func TestRunRefusesAnUnbuiltWeb(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "mcp.js"), []byte(`import { wasmURL } from "./wasmurl.js";`), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	err := run(ctx, []string{"-addr", "127.0.0.1:0", "-mcp-addr", "127.0.0.1:0", "-as-addr", "127.0.0.1:0", "-mcp2-addr", "127.0.0.1:0", "-model-addr", "127.0.0.1:0", "-sandbox-addr", "127.0.0.1:0", "-web", dir}, io.Discard, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "wasmurl.js") || !strings.Contains(err.Error(), "make build") {
		t.Errorf("run with an unbuilt web/: %v; want an error that names wasmurl.js and make build", err)
	}
}
