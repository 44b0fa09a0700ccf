// Package headless starts the headless Chromium that the e2e tests, the
// benchmark and the browser conformance client drive, with the flags this
// closed network needs (no background networking, no QUIC, no component
// updates, no sync) and a fresh profile.
package headless

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/chromedp/chromedp"
)

// Path is the browser to run: $CHROMIUM, else Debian's /usr/bin/chromium.
func Path() string {
	if p := os.Getenv("CHROMIUM"); p != "" {
		return p
	}
	return "/usr/bin/chromium"
}

// Browser is a running headless Chromium.
type Browser struct {
	// Ctx is the browser's first tab; chromedp.NewContext(Ctx) opens more.
	Ctx context.Context
	// Version is what the browser says of itself.
	Version string

	cancel  func()
	profile string
}

// Start starts Chromium at Path() with a fresh profile; extra flags follow
// the defaults (for example chromedp.Flag("disable-web-security", true)).
// Cancelling ctx stops the browser; the caller must Close it either way.
func Start(ctx context.Context, extra ...chromedp.ExecAllocatorOption) (*Browser, error) {
	path := Path()
	if _, err := os.Stat(path); err != nil {
		return nil, fmt.Errorf("headless: Chromium not found at %s (set CHROMIUM, or run scripts/install-deps.sh)", path)
	}
	profile, err := os.MkdirTemp("", "mcpwasm-chromium-")
	if err != nil {
		return nil, err
	}
	opts := append([]chromedp.ExecAllocatorOption{
		chromedp.ExecPath(path),
		chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck, chromedp.UserDataDir(profile),
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.Flag("disable-extensions", true),
		chromedp.Flag("disable-default-apps", true),
		chromedp.Flag("disable-features", "Translate,MediaRouter,OptimizationHints"),
		chromedp.WindowSize(1280, 900),
	}, extra...)
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(ctx, opts...)
	tab, cancel := chromedp.NewContext(allocCtx)
	// Start the browser; no timeout on the first Do (it would kill it).
	if err := chromedp.Do(tab); err != nil {
		cancel()
		cancelAlloc()
		os.RemoveAll(profile)
		return nil, fmt.Errorf("headless: starting %s: %w", path, err)
	}
	out, _ := exec.Command(path, "--version").Output()
	return &Browser{
		Ctx:     tab,
		Version: strings.TrimSpace(string(out)),
		cancel:  func() { cancel(); cancelAlloc() },
		profile: profile,
	}, nil
}

// DevToolsURL is the browser's DevTools WebSocket URL, for another process
// to drive it (chromedp.NewRemoteAllocator), read from the
// DevToolsActivePort file Chromium writes into its profile.
func (b *Browser) DevToolsURL() (string, error) {
	raw, err := os.ReadFile(filepath.Join(b.profile, "DevToolsActivePort"))
	if err != nil {
		return "", fmt.Errorf("headless: the DevTools port: %w", err)
	}
	port, path, ok := strings.Cut(strings.TrimSpace(string(raw)), "\n")
	if !ok || port == "" || !strings.HasPrefix(path, "/devtools/browser/") {
		return "", fmt.Errorf("headless: unexpected DevToolsActivePort %q", raw)
	}
	return "ws://127.0.0.1:" + port + path, nil
}

// Close stops the browser and removes its profile.
func (b *Browser) Close() {
	b.cancel()
	os.RemoveAll(b.profile)
}
