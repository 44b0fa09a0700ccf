package xengine

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/mcpwasm/mcpwasm/e2e/engine"
)

// The Cloudflare stack (e2e/stacks/cloudflare): @cloudflare/workers-oauth-provider
// in front of an agents McpAgent (the TS SDK 1.x server) and, in a second
// worker, the agents package's createMcpHandler (the TS SDK 2.x server),
// run by wrangler dev (workerd) offline.
func init() {
	stacks = append(stacks,
		stack{name: "cloudflare-mcpagent-sdk1", start: func(t testing.TB, _ string) *stackServer {
			return startWrangler(t, "wrangler.v1.jsonc")
		}},
		stack{name: "cloudflare-createMcpHandler-sdk2", start: func(t testing.TB, _ string) *stackServer {
			return startWrangler(t, "wrangler.v2.jsonc")
		}},
	)
}

// cloudflareTokenTTL is the access token lifetime the workers are given:
// the provider's minimum (it stores tokens in KV, whose shortest
// expiration is 60 s).
const cloudflareTokenTTL = 60 * time.Second

// wranglerRequest is wrangler dev's line for a request the worker served:
// "[wrangler:info] POST /token 200 OK (12ms)".
var wranglerRequest = regexp.MustCompile(`\[wrangler:info\] ([A-Z]+) (/[^ ?]*)\S* (\d{3})`)

// startWrangler runs `wrangler dev` for config in e2e/stacks/cloudflare on
// a reserved loopback port (reservePort), offline (local mode, no metrics, no error reports,
// no Request.cf download, a fresh state and config directory), and stops
// it when the test ends.
func startWrangler(t testing.TB, config string) *stackServer {
	t.Helper()
	dir := filepath.Join(repo, "e2e", "stacks", "cloudflare")
	bin := filepath.Join(dir, "node_modules", "node", "bin")
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "wrangler")); err != nil {
		t.Fatalf("the Cloudflare stack is not installed in %s: run scripts/install-deps.sh (make deps)", dir)
	}
	port := reservePort(t)
	tmp := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, filepath.Join(bin, "node"), filepath.Join("node_modules", "wrangler", "bin", "wrangler.js"), "dev",
		"--config", config, "--local", "--ip", "127.0.0.1", "--port", strconv.Itoa(port), "--inspector-port", "0",
		"--persist-to", filepath.Join(tmp, "state"), "--show-interactive-dev-session=false",
		"--var", "ACCESS_TOKEN_TTL:"+strconv.Itoa(int(cloudflareTokenTTL/time.Second)))
	cmd.Dir = dir
	cmd.Env = append(os.Environ(),
		"PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"),
		"WRANGLER_SEND_METRICS=false", "WRANGLER_SEND_ERROR_REPORTS=false", "DO_NOT_TRACK=1",
		"CLOUDFLARE_CF_FETCH_ENABLED=false", // no download of the Request.cf object
		"CI=1", "WRANGLER_HIDE_BANNER=true", "NO_COLOR=1", "FORCE_COLOR=0",
		"XDG_CONFIG_HOME="+filepath.Join(tmp, "config"), "WRANGLER_LOG_PATH="+filepath.Join(tmp, "logs"),
	)
	// wrangler starts workerd as its child: a group of their own, so
	// stopping the test stops both.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM) }
	cmd.WaitDelay = 5 * time.Second
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = cmd.Stdout
	var mu sync.Mutex
	var log strings.Builder
	var reqs []string
	ready := make(chan struct{})
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting wrangler: %v", err)
	}
	started := time.Now()
	exited := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(out)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		once := sync.Once{}
		for sc.Scan() {
			line := sc.Text()
			mu.Lock()
			log.WriteString(line + "\n")
			if m := wranglerRequest.FindStringSubmatch(line); m != nil {
				reqs = append(reqs, m[1]+" "+m[2]+" "+m[3])
			}
			mu.Unlock()
			if strings.Contains(line, "Ready on http://127.0.0.1:") {
				once.Do(func() { close(ready) })
			}
		}
		_, _ = io.Copy(io.Discard, out)
		close(exited)
	}()
	logText := func() string { mu.Lock(); defer mu.Unlock(); return log.String() }
	t.Cleanup(func() {
		cancel()
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("wrangler dev %s log:\n%s", config, logText())
		}
	})
	select {
	case <-ready:
	case <-exited:
		t.Fatalf("wrangler dev %s exited before it was ready:\n%s", config, logText())
	case <-time.After(3 * time.Minute):
		t.Fatalf("wrangler dev %s was not ready within 3 minutes:\n%s", config, logText())
	}
	base := "http://127.0.0.1:" + strconv.Itoa(port)
	// The worker is loaded on its first request: wait for an answer.
	for {
		resp, err := http.Get(base + "/health")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				break
			}
			t.Fatalf("wrangler dev %s: GET /health = %s:\n%s", config, resp.Status, logText())
		}
		if time.Since(started) > 3*time.Minute {
			t.Fatalf("wrangler dev %s does not answer: %v\n%s", config, err, logText())
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Logf("wrangler dev %s: ready in %v on %s", config, time.Since(started).Round(100*time.Millisecond), base)
	return &stackServer{
		MCPURL:   base + "/mcp",
		Consent:  cloudflareConsent,
		TokenTTL: cloudflareTokenTTL,
		StepUp:   "admin_add",
		Requests: func() []string {
			mu.Lock()
			defer mu.Unlock()
			return append([]string(nil), reqs...)
		},
	}
}

// cloudflareConsent clicks #approve or #deny on the stack's consent page.
func cloudflareConsent(t *testing.T, ctx context.Context, popup engine.Window, approve bool) {
	t.Helper()
	button := "#deny"
	if approve {
		button = "#approve"
	}
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	stackForm(t, ctx, popup, button)
	if err := popup.Click(ctx, button); err != nil {
		t.Fatalf("clicking %s on the consent page: %v", button, err)
	}
}
