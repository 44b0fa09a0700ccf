package e2e

import (
	"context"
	"net"
	"net/http"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// TestDemoCommandOnOtherPorts is `make run ADDR=… MCP_ADDR=… AS_ADDR=…
// MCP2_ADDR=… MODEL_ADDR=… SANDBOX_ADDR=…`: the real devserver command with every origin
// moved off its default port. The page offers the moved MCP server, the
// way to a sign-in shows no error (no red banner, no error in the log),
// and a real sign-in through the popup connects and lists the tools.
func TestDemoCommandOnOtherPorts(t *testing.T) {
	onlyInPass(t, "auto", "the devserver command on other ports and the page it serves, in the default runtime")
	t.Parallel()
	bin := filepath.Join(t.TempDir(), "devserver")
	build := exec.Command("go", "build", "-o", bin, "./cmd/devserver")
	build.Dir = repoRoot
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/devserver: %v\n%s", err, out)
	}
	addrs := freeAddrs(t, 6)
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, bin, "-web", webDir, "-addr", addrs[0], "-mcp-addr", addrs[1],
		"-as-addr", addrs[2], "-mcp2-addr", addrs[3], "-model-addr", addrs[4],
		"-sandbox-addr", addrs[5])
	cmd.Dir = repoRoot
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
	page := "http://" + addrs[0]
	waitServing(t, page+"/devserver/config.json")

	e := &demoEnv{env: &env{t: t}}
	e.PageURL, e.MCPURL = page, "http://"+addrs[1]+"/mcp"
	e.openTab()
	e.watchPageErrors()
	waitState := func(want string) {
		t.Helper()
		e.waitJS("state "+want, `document.querySelector("#state").dataset.state === "`+want+`"`)
	}
	e.openDemo("/")
	if got := e.value("#server-url"); got != e.MCPURL {
		t.Fatalf("server URL field = %q; want the moved demo server %q", got, e.MCPURL)
	}
	e.do("connect", chromedp.Click(chromedp.ID("connect")))
	waitState("needs_auth")
	e.do("sign-in notice", chromedp.WaitVisible(chromedp.ID("auth-notice")), chromedp.WaitVisible(chromedp.ID("sign-in")))
	if got := e.text("#auth-notice"); !strings.Contains(got, "Sign in required") {
		t.Errorf("the sign-in notice says %q; want Sign in required", got)
	}
	if got := e.js(`document.querySelector("#state-error").hidden`); got != "true" {
		t.Errorf("the red error banner shows %q on the way to signing in", e.text("#state-error"))
	}
	for _, line := range strings.Split(e.logLines(), "\n") {
		if strings.HasPrefix(line, "error ") || strings.Contains(line, " error ") {
			t.Errorf("the event log has an error line on the way to signing in: %q", line)
		}
	}
	e.shot("demo-needs-sign-in.png", "")

	popups := e.ownPopup()
	e.do("click Sign in", chromedp.Click(chromedp.ID("sign-in")))
	e.consent(e.popup(popups), "approve")
	waitState("connected")
	e.do("tools listed", chromedp.WaitVisible(chromedp.CSS(`#tools [data-tool="add"]`)))
	if got := e.js(`document.querySelector("#state-error").hidden`); got != "true" {
		t.Errorf("the red error banner shows %q once connected", e.text("#state-error"))
	}
	// The Servers panel's catalog holds its own client of the same server:
	// the sign-in reaches it, and the server's tools join the model's list.
	e.do("the catalog's demo server lists its tools",
		chromedp.WaitVisible(chromedp.CSS(`#servers li[data-server="demo"][data-state="connected"]`)),
		chromedp.WaitVisible(chromedp.CSS(`#catalog-tools li[data-name="demo_add"]`)))
	for _, line := range strings.Split(e.logLines(), "\n") {
		if strings.HasPrefix(line, "error ") {
			t.Errorf("the event log has an error line after signing in: %q", line)
		}
	}
	e.shot("demo-connected.png", "")
	e.checkPageErrors()
}

// freeAddrs returns n loopback addresses with ports that were free a
// moment ago (each listened on, then closed).
func freeAddrs(t *testing.T, n int) []string {
	t.Helper()
	var addrs []string
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addrs = append(addrs, l.Addr().String())
		defer l.Close()
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
