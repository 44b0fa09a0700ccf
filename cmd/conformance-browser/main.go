// Command conformance-browser is the browser client of the official MCP
// conformance suite (@modelcontextprotocol/conformance): the product users
// get, the wasm module with web/mcp.js, its login popup, the callback page
// and fetch, in headless Chromium.
//
// The suite runs it with the server URL as the last argument and the
// scenario in MCP_CONFORMANCE_SCENARIO (context JSON in
// MCP_CONFORMANCE_CONTEXT). It builds (or reuses, keyed by content) the wasm
// module and web/ into a temporary directory, serves that on loopback with
// the harness page of conformance/browser/, starts Chromium, and drives the
// page, which uses only the public JavaScript API (docs/JSAPI.md): connect(), on
// "auth_required"/"popup_blocked" authorize() from a user gesture (the
// suite's authorization endpoint redirects the popup straight to our
// oauth/callback.html, whose relay completes the flow), then the scenario's
// steps (devkit/confsteps: listTools(), callTool(), listResources(), …),
// each from a user gesture as a click would, so a step-up popup may open.
// It exits 0 on success and 1 with the error on failure.
//
// Chromium runs with --disable-web-security: the suite's servers send no
// CORS headers at all. That is for these runs only; the e2e tests keep CORS.
//
//	conformance-browser [-repo DIR] [-timeout D] <server-url>     (Chromium: $CHROMIUM or /usr/bin/chromium)
//	conformance-browser -prepare [-repo DIR]   # build the web bundle, print its directory
package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"log"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/remote"

	"github.com/mcpwasm/mcpwasm/devkit/confsteps"
	"github.com/mcpwasm/mcpwasm/devkit/headless"
	"github.com/mcpwasm/mcpwasm/devkit/webbuild"
	"github.com/mcpwasm/mcpwasm/devkit/webserve"
)

// cimdURL is the client ID metadata document URL the suite's basic-cimd
// scenario expects as client_id (it never fetches it).
const cimdURL = "https://conformance-test.local/client-metadata.json"

func main() {
	log.SetFlags(log.Lmicroseconds)
	log.SetPrefix("conformance-browser: ")
	repo := flag.String("repo", "", "repository root (default: found from the working directory)")
	timeout := flag.Duration("timeout", 80*time.Second, "deadline of the whole run (keep it under the suite's --timeout)")
	prepare := flag.Bool("prepare", false, "only build (or find) the web bundle and print its directory")
	serveBrowser := flag.Bool("serve-browser", false, "start the headless Chromium that runs share, print its DevTools URL (for "+sharedBrowserEnv+") and keep it until SIGTERM or SIGINT")
	flag.Parse()
	if *serveBrowser {
		if err := serveSharedBrowser(); err != nil {
			log.Fatal(err)
		}
		return
	}

	root, err := findRepo(*repo)
	if err != nil {
		log.Fatal(err)
	}
	if *prepare {
		dir, err := webBundle(root)
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(dir)
		return
	}
	if flag.NArg() < 1 {
		log.Fatal("usage: conformance-browser [flags] <server-url>")
	}
	serverURL := flag.Arg(flag.NArg() - 1)
	scenario := os.Getenv("MCP_CONFORMANCE_SCENARIO")
	var cctx map[string]any
	if s := os.Getenv("MCP_CONFORMANCE_CONTEXT"); s != "" {
		if err := json.Unmarshal([]byte(s), &cctx); err != nil {
			log.Fatalf("MCP_CONFORMANCE_CONTEXT: %v", err)
		}
	}
	// The suite kills a client that outlives its --timeout: end first, and
	// on SIGTERM/SIGINT, so that Chromium and the profile go with us.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	start := time.Now()
	err = run(ctx, root, scenario, serverURL, cctx)
	log.Printf("scenario %q finished in %v", scenario, time.Since(start).Round(time.Millisecond))
	if err != nil {
		cancel()
		fmt.Fprintf(os.Stderr, "conformance-browser: scenario %q: %v\n", scenario, err)
		os.Exit(1)
	}
}

// findRepo returns dir, or the nearest parent of the working directory
// holding this module's go.mod.
func findRepo(dir string) (string, error) {
	if dir != "" {
		return filepath.Abs(dir)
	}
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for d := wd; ; d = filepath.Dir(d) {
		if b, err := os.ReadFile(filepath.Join(d, "go.mod")); err == nil && strings.Contains(string(b), "module github.com/mcpwasm/mcpwasm\n") {
			return d, nil
		}
		if filepath.Dir(d) == d {
			return "", fmt.Errorf("no github.com/mcpwasm/mcpwasm go.mod above %s: pass -repo", wd)
		}
	}
}

// clientOptions are the mcp.client() options for the scenario. The
// enterprise-managed authorization scenario signs in with identityAssertion
// (the harness makes the function of "idToken"); the client credentials and
// workload identity scenarios ask for their grant as a page would, which
// client() refuses.
func clientOptions(scenario string, cctx map[string]any) map[string]any {
	str := func(k string) string { s, _ := cctx[k].(string); return s }
	switch scenario {
	case "auth/enterprise-managed-authorization":
		return map[string]any{
			"clientName":       "mcpwasm browser conformance client",
			"clientId":         str("client_id"),
			"clientSecret":     str("client_secret"),
			"idpTokenEndpoint": str("idp_token_endpoint"),
			"idpClientId":      str("idp_client_id"),
			"idToken":          str("idp_id_token"), // harness.js: identityAssertion
		}
	case "auth/client-credentials-basic":
		return map[string]any{"grant": "client_credentials", "clientId": str("client_id"), "clientSecret": str("client_secret")}
	case "auth/client-credentials-jwt":
		return map[string]any{"grant": "client_credentials", "clientId": str("client_id")}
	case "auth/wif-jwt-bearer":
		return map[string]any{"grant": "workload_identity", "clientId": str("client_id")}
	}
	opts := map[string]any{
		"clientName":        "mcpwasm browser conformance client",
		"clientMetadataUrl": cimdURL, // used only where the AS advertises CIMD support
		"interactive":       true,
		"authTimeoutMs":     20000,
	}
	if id, ok := cctx["client_id"].(string); ok {
		opts["clientId"] = id
		// Not secret in a browser; the pre-registration scenario insists.
		if s, ok := cctx["client_secret"].(string); ok {
			opts["clientSecret"] = s
		}
	}
	return opts
}

// result is what a harness step resolves to.
type result struct {
	OK    bool            `json:"ok"`
	Value json.RawMessage `json:"value"`
	State string          `json:"state"`
	Error *struct {
		Name    string `json:"name"`
		Code    string `json:"code"`
		Status  int    `json:"status"`
		Message string `json:"message"`
		Cause   string `json:"cause"`
	} `json:"error"`
}

func (r result) err(step string) error {
	if r.OK {
		return nil
	}
	if r.Error == nil {
		return fmt.Errorf("%s failed (state %s)", step, r.State)
	}
	msg := fmt.Sprintf("%s: %s %s: %s (state %s)", step, r.Error.Name, r.Error.Code, r.Error.Message, r.State)
	if r.Error.Status != 0 {
		msg += fmt.Sprintf(" [HTTP %d]", r.Error.Status)
	}
	if r.Error.Cause != "" {
		msg += " cause: " + r.Error.Cause
	}
	return errors.New(msg)
}

func run(ctx context.Context, root, scenario, serverURL string, cctx map[string]any) error {
	webDir, err := webBundle(root)
	if err != nil {
		return fmt.Errorf("web bundle: %w", err)
	}
	pageURL, closeServer, err := serve(webDir, filepath.Join(root, "conformance", "browser"))
	if err != nil {
		return err
	}
	defer closeServer()

	tab, closeBrowser, err := startChromium(ctx)
	if err != nil {
		return err
	}
	defer closeBrowser()
	watchConsole(tab, "page")
	// Log the popups (the sign-in windows) too: their console and where they went.
	own := chromedp.FromContext(tab).BrowserContextID
	_ = chromedp.ListenBrowser(tab, func(ev any) {
		switch e := ev.(type) {
		case *target.EventTargetCreated:
			if e.TargetInfo.Type == "page" && (own == "" || e.TargetInfo.BrowserContextID == own) {
				log.Printf("window opened: %s %s", e.TargetInfo.TargetID, e.TargetInfo.URL)
			}
		case *target.EventTargetInfoChanged:
			if e.TargetInfo.Type == "page" && (own == "" || e.TargetInfo.BrowserContextID == own) {
				log.Printf("window %s at %s", e.TargetInfo.TargetID, e.TargetInfo.URL)
			}
		case *target.EventTargetDestroyed:
			log.Printf("window closed: %s", e.TargetID)
		}
	})

	if _, err := chromedp.Run(tab, chromedp.Navigate(pageURL+"/conformance/harness.html")); err != nil {
		return fmt.Errorf("opening the harness page: %w", err)
	}
	// Wait for the module script. Not with chromedp.Poll: it evaluates with
	// user activation, which would let connect() below open the popup
	// without the "Sign in" click this run means to exercise.
	ready := `new Promise((resolve) => {
		const t0 = Date.now();
		(function check() {
			if (window.harnessReady === true || Date.now() - t0 > 10000) resolve(window.harnessReady === true);
			else setTimeout(check, 20);
		})();
	})`
	if ok, err := chromedp.Run(tab, chromedp.Evaluate[bool](ready, chromedp.EvalAwaitPromise)); err != nil || !ok {
		return fmt.Errorf("the harness page did not start (ready=%v): %v", ok, err)
	}
	cfg, _ := json.Marshal(map[string]any{"url": serverURL, "options": clientOptions(scenario, cctx)})
	if r, err := step(tab, fmt.Sprintf("harness.setup(%s)", cfg), false); err != nil {
		return err
	} else if err := r.err("setup"); err != nil {
		return err
	}

	// A page load: connect(). A server that wants a sign-in answers
	// auth_required (or popup_blocked, as connect() ran without a gesture):
	// the user clicks "Sign in", which calls authorize().
	r, err := step(tab, "harness.connect()", false)
	if err != nil {
		return err
	}
	if !r.OK && r.Error != nil && (r.Error.Code == "auth_required" || r.Error.Code == "popup_blocked") {
		log.Printf("connect() needs a sign-in (%s): authorize() from a user gesture", r.Error.Code)
		if r, err = step(tab, "harness.authorize()", true); err != nil {
			return err
		}
	}
	if err := r.err("connect"); err != nil {
		return err
	}
	// Operations run from a user gesture, as clicks would: a step-up
	// sign-in may then open its popup.
	for _, st := range confsteps.For(scenario, cctx) {
		what := strings.TrimSpace(string(st.Op) + " " + st.Name)
		arg, _ := json.Marshal(st)
		if r, err = step(tab, fmt.Sprintf("harness.do(%s)", arg), true); err != nil {
			return err
		}
		if st.Fails {
			if r.OK {
				return fmt.Errorf("%s: the client did it; it must refuse", what)
			}
			log.Printf("%s: refused as it must be: %v", what, r.err(what))
			continue
		}
		if err := r.err(what); err != nil {
			return err
		}
		log.Printf("%s: %s", what, r.Value)
		if st.Op == confsteps.CallTool {
			var res struct {
				IsError bool `json:"isError"`
			}
			if json.Unmarshal(r.Value, &res) == nil && res.IsError {
				return fmt.Errorf("%s: the tool answered isError: %s", what, r.Value)
			}
		}
		checkConnected(r, what)
	}
	if r, err = step(tab, "harness.close()", false); err == nil {
		err = r.err("close")
	}
	return err
}

// checkConnected warns when client.state is not "connected" after an
// operation that succeeded (docs/JSAPI.md: the state of a working session). It
// does not fail the run: the suite's checks are about the wire.
func checkConnected(r result, op string) {
	if r.State != "connected" {
		log.Printf("WARNING: client.state is %q after a successful %s; want \"connected\"", r.State, op)
	}
}

// step evaluates a harness call and waits for its promise; with gesture, as
// if a person had clicked (transient user activation: window.open works).
func step(tab context.Context, expr string, gesture bool) (result, error) {
	opts := []chromedp.EvaluateOption{chromedp.EvalAwaitPromise}
	if gesture {
		opts = append(opts, func(p *runtime.EvaluateParams) { t := true; p.UserGesture = &t })
	}
	r, err := chromedp.Run(tab, chromedp.Evaluate[result](expr, opts...))
	if err != nil {
		return r, fmt.Errorf("%s: %w", expr, err)
	}
	return r, nil
}

// sharedBrowserEnv names the DevTools URL of a Chromium that
// -serve-browser started: a run then opens its tab in a browser context of
// its own in that browser instead of starting one (scripts/conformance-
// browser.sh shares one across scenarios: starting Chromium was most of a
// scenario's time).
const sharedBrowserEnv = "MCPWASM_CONFORMANCE_BROWSER"

// startChromium returns a tab in a fresh browser profile: a new browser
// context of the shared browser when $MCPWASM_CONFORMANCE_BROWSER names
// one, else a new headless Chromium. The suite's test servers send no CORS
// headers: for conformance runs only, web security is off.
func startChromium(ctx context.Context) (context.Context, func(), error) {
	if u := os.Getenv(sharedBrowserEnv); u != "" {
		alloc, cancelAlloc := remote.NewAllocator(ctx, u, remote.NoModifyURL)
		tab, cancel := chromedp.NewContext(alloc, chromedp.WithNewBrowserContext())
		if err := chromedp.Do(tab); err != nil {
			cancel()
			cancelAlloc()
			return nil, nil, fmt.Errorf("the shared browser at %s ($%s): %w", u, sharedBrowserEnv, err)
		}
		return tab, func() { cancel(); cancelAlloc() }, nil
	}
	b, err := headless.Start(ctx, chromedp.Flag("disable-web-security", true))
	if err != nil {
		return nil, nil, err
	}
	return b.Ctx, b.Close, nil
}

// serveSharedBrowser is -serve-browser: Chromium as startChromium starts
// it, its DevTools URL on stdout, until SIGTERM or SIGINT.
func serveSharedBrowser() error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	b, err := headless.Start(context.Background(), chromedp.Flag("disable-web-security", true),
		chromedp.Flag("remote-debugging-port", "0"), remote.WebSocket)
	if err != nil {
		return err
	}
	defer b.Close()
	u, err := b.DevToolsURL()
	if err != nil {
		return err
	}
	fmt.Println(u)
	<-ctx.Done()
	return nil
}

// watchConsole copies a target's console messages and exceptions to stderr.
func watchConsole(ctx context.Context, who string) {
	_ = chromedp.Listen(ctx, func(ev any) {
		switch e := ev.(type) {
		case *runtime.EventConsoleAPICalled:
			var parts []string
			for _, a := range e.Args {
				if a.Value != nil {
					var s string
					if json.Unmarshal(a.Value, &s) == nil {
						parts = append(parts, s)
						continue
					}
					parts = append(parts, string(a.Value))
				} else {
					parts = append(parts, a.Description)
				}
			}
			log.Printf("%s console.%s: %s", who, e.Type, strings.Join(parts, " "))
		case *runtime.EventExceptionThrown:
			d := e.ExceptionDetails
			msg := d.Text
			if d.Exception != nil {
				msg += " " + d.Exception.Description
			}
			log.Printf("%s exception: %s", who, msg)
		}
	})
}

// serve serves the web bundle at / and the harness directory at
// /conformance/ on a loopback port; it returns the origin.
func serve(webDir, harnessDir string) (string, func(), error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	mux := http.NewServeMux()
	mux.Handle("/conformance/", http.StripPrefix("/conformance/", noCache(http.FileServer(http.Dir(harnessDir)))))
	mux.Handle("/", webserve.Handler(os.DirFS(webDir)))
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(ln)
	return "http://" + ln.Addr().String(), func() { srv.Close() }, nil
}

func noCache(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "no-store")
		h.ServeHTTP(w, r)
	})
}

// webBundle returns a directory holding web/ with mcp.wasm (and .gz, and
// their hashed copies) and wasm_exec.js built from this tree, reusing one
// built from the same content (Go sources, go.mod/go.sum, web/, toolchain)
// by an earlier run.
func webBundle(root string) (string, error) {
	goroot, err := goEnv(root, "GOROOT")
	if err != nil {
		return "", err
	}
	key, err := contentKey(root, goroot)
	if err != nil {
		return "", err
	}
	base := filepath.Join(os.TempDir(), "mcpwasm-conformance-browser")
	dir := filepath.Join(base, key)
	if reuse(dir) {
		return dir, nil
	}
	if err := os.MkdirAll(base, 0o755); err != nil {
		return "", err
	}
	// One builder at a time; the others wait and reuse its result.
	lock, err := os.OpenFile(filepath.Join(base, ".lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return "", err
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		return "", err
	}
	defer syscall.Flock(int(lock.Fd()), syscall.LOCK_UN)
	if reuse(dir) {
		return dir, nil
	}
	log.Printf("building the web bundle %s", key)
	tmp, err := os.MkdirTemp(base, "build-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp)
	if err := webbuild.Build(root, tmp, "-trimpath", "-ldflags=-s -w -X main.version=conformance-"+key[:12]); err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(tmp, ".complete"), []byte(key+"\n"), 0o644); err != nil {
		return "", err
	}
	os.RemoveAll(dir)
	if err := os.Rename(tmp, dir); err != nil {
		return "", err
	}
	// Keep the cache small: drop bundles of other content that no run has
	// used for an hour (a concurrent run may still be serving a recent one).
	if ents, err := os.ReadDir(base); err == nil {
		for _, e := range ents {
			if !e.IsDir() || e.Name() == key {
				continue
			}
			fi, err := os.Stat(filepath.Join(base, e.Name(), ".complete"))
			if err != nil {
				fi, err = os.Stat(filepath.Join(base, e.Name()))
			}
			if err == nil && time.Since(fi.ModTime()) > time.Hour {
				os.RemoveAll(filepath.Join(base, e.Name()))
			}
		}
	}
	return dir, nil
}

// reuse reports whether dir holds a complete bundle, marking it as used.
func reuse(dir string) bool {
	stamp := filepath.Join(dir, ".complete")
	if _, err := os.Stat(stamp); err != nil {
		return false
	}
	now := time.Now()
	_ = os.Chtimes(stamp, now, now)
	return true
}

func goEnv(root, name string) (string, error) {
	cmd := exec.Command("go", "env", name)
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("go env %s: %w", name, err)
	}
	return strings.TrimSpace(string(out)), nil
}

// contentKey hashes what the bundle is built from: every non-test Go file
// of the module (outside node_modules, testdata and e2e), go.mod, go.sum,
// web/ (without built files), and the toolchain's version and wasm_exec.js.
func contentKey(root, goroot string) (string, error) {
	h := sha256.New()
	ver, _ := os.ReadFile(filepath.Join(goroot, "VERSION"))
	fmt.Fprintf(h, "goroot %s\n%s\n", goroot, ver)
	var files []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		if d.IsDir() {
			switch d.Name() {
			case ".git", "node_modules", "testdata", "e2e", "conformance", "bench":
				if rel != "." {
					return filepath.SkipDir
				}
			}
			return nil
		}
		switch {
		case rel == "go.mod" || rel == "go.sum":
		case strings.HasPrefix(rel, "web"+string(filepath.Separator)):
			if b := filepath.Base(rel); strings.HasPrefix(b, "mcp.wasm") || webbuild.IsHashed(b) || b == "wasm_exec.js" || b == webbuild.WasmModule {
				return nil
			}
		case strings.HasSuffix(rel, ".go") && !strings.HasSuffix(rel, "_test.go"):
		default:
			return nil
		}
		files = append(files, rel)
		return nil
	})
	if err != nil {
		return "", err
	}
	files = append(files, filepath.Join(goroot, "lib", "wasm", "wasm_exec.js"))
	slices.Sort(files)
	for _, f := range files {
		p := f
		if !filepath.IsAbs(p) {
			p = filepath.Join(root, f)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return "", err
		}
		fmt.Fprintf(h, "%s %d\n", f, len(b))
		h.Write(b)
	}
	return hex.EncodeToString(h.Sum(nil))[:32], nil
}
