package xengine

import (
	"context"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestDemoCommandOnOtherPorts is `make run ADDR=… MCP_ADDR=… AS_ADDR=…
// MCP2_ADDR=… MODEL_ADDR=… SANDBOX_ADDR=…`: the real devserver command
// with every origin moved off its default port. The page offers the
// moved MCP server, the way to a sign-in shows no error (no red banner,
// no error in the log), and a real sign-in through the popup connects,
// lists the tools, and reaches the Servers panel's catalog.
func TestDemoCommandOnOtherPorts(t *testing.T) {
	eitherRuntime(t)
	parallel(t)
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	t.Cleanup(cancel)
	w := &world{t: t, ctx: ctx, counts: map[string]int{}, start: time.Now()}
	w.open()
	d := &demoWorld{world: w}

	bin := filepath.Join(t.TempDir(), "devserver")
	build := exec.Command("go", "build", "-o", bin, "./cmd/devserver")
	build.Dir = repo
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/devserver: %v\n%s", err, out)
	}
	addrs := freeAddrs(t, 6)
	cmd := exec.CommandContext(ctx, bin, "-web", bootedWebDir(t, w.preloaded), "-addr", addrs[0], "-mcp-addr", addrs[1],
		"-as-addr", addrs[2], "-mcp2-addr", addrs[3], "-model-addr", addrs[4], "-sandbox-addr", addrs[5])
	cmd.Dir = repo
	var logs strings.Builder
	cmd.Stdout, cmd.Stderr = &logs, &logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cancel()
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("devserver output:\n%s", logs.String())
		}
	})
	d.PageURL, d.MCPURL = "http://"+addrs[0], "http://"+addrs[1]+"/mcp"
	waitServing(t, d.PageURL+"/devserver/config.json")

	d.openDemo("/")
	if got := d.value("#server-url"); got != d.MCPURL {
		t.Fatalf("server URL field = %q; want the moved demo server %q", got, d.MCPURL)
	}
	d.click("#connect")
	d.shown(`#state[data-state="needs_auth"]`)
	d.shown("#auth-notice")
	d.shown("#sign-in")
	if got := d.text("#auth-notice"); !strings.Contains(got, "Sign in required") {
		t.Errorf("the sign-in notice says %q; want Sign in required", got)
	}
	if got := d.js(`document.querySelector("#state-error").hidden`); got != "true" {
		t.Errorf("the red error banner shows %q on the way to signing in", d.text("#state-error"))
	}
	for _, line := range strings.Split(d.logLines(), "\n") {
		if strings.HasPrefix(line, "error ") || strings.Contains(line, " error ") {
			t.Errorf("the event log has an error line on the way to signing in: %q", line)
		}
	}

	d.signIn("#sign-in", "#approve")
	d.shown(`#state[data-state="connected"]`)
	d.shown(`#tools [data-tool="add"]`)
	if got := d.js(`document.querySelector("#state-error").hidden`); got != "true" {
		t.Errorf("the red error banner shows %q once connected", d.text("#state-error"))
	}
	// The Servers panel's catalog holds its own client of the same
	// server: the sign-in reaches it, and the server's tools join the
	// model's list.
	d.shown(`#servers li[data-server="demo"][data-state="connected"]`)
	d.shown(`#catalog-tools li[data-name="demo_add"]`)
	for _, line := range strings.Split(d.logLines(), "\n") {
		if strings.HasPrefix(line, "error ") {
			t.Errorf("the event log has an error line after signing in: %q", line)
		}
	}
	d.checkPage()
}

// bootedWebDir is the build of web/ as the devserver command's -web
// directory, with the demo page given /e2e/boot.js first,
// as newDemoWorld serves it; boot.js sets the runtime mode itself when
// the engine preloaded nothing.
func bootedWebDir(t *testing.T, preloaded bool) string {
	t.Helper()
	dir := t.TempDir()
	link := func(from, to string, skip func(string) bool) {
		entries, err := os.ReadDir(from)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			if !skip(e.Name()) {
				if err := os.Symlink(filepath.Join(from, e.Name()), filepath.Join(to, e.Name())); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	link(webDir, dir, func(n string) bool { return n == "demo" })
	if err := os.MkdirAll(filepath.Join(dir, "demo"), 0o755); err != nil {
		t.Fatal(err)
	}
	link(filepath.Join(webDir, "demo"), filepath.Join(dir, "demo"), func(n string) bool { return strings.HasPrefix(n, "index.html") })
	site, err := withBoot(os.DirFS(webDir), "demo/index.html")
	if err != nil {
		t.Fatal(err)
	}
	index, err := fs.ReadFile(site, "demo/index.html")
	if err != nil {
		t.Fatal(err)
	}
	boot := bootJS
	if !preloaded {
		boot += fmt.Sprintf("globalThis.__mcpwasmRuntime = %q;\n", runtimeMode())
	}
	if err := os.MkdirAll(filepath.Join(dir, "e2e"), 0o755); err != nil {
		t.Fatal(err)
	}
	for name, body := range map[string]string{"demo/index.html": string(index), "e2e/boot.js": boot} {
		if err := os.WriteFile(filepath.Join(dir, filepath.FromSlash(name)), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// freeAddrs returns n loopback addresses with ports reserved for the test
// (reservePort).
func freeAddrs(t *testing.T, n int) []string {
	t.Helper()
	var addrs []string
	for _, p := range reservePorts(t, n) {
		addrs = append(addrs, "127.0.0.1:"+strconv.Itoa(p))
	}
	return addrs
}

// waitServing waits until url answers 200.
func waitServing(t *testing.T, url string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := http.Get(url)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s not serving after 30s: %v", url, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
