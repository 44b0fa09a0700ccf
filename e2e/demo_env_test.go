package e2e

import (
	"fmt"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"

	"github.com/mcpwasm/mcpwasm/demo"
	"github.com/mcpwasm/mcpwasm/demo/authserver"
	"github.com/mcpwasm/mcpwasm/devkit/devserver"
)

// demoEnv is what `make run` starts, on loopback ports of the test's
// choosing: the page (web/demo/ over web/, with /devserver/config.json),
// the demo MCP server (with -auth: protected by the demo authorization
// server), the second demo MCP server without sign-in, and the scripted
// stand-in model, and the MCP Apps sandbox proxy's origin.
type demoEnv struct {
	*env
	AS       *authserver.Server // nil without auth
	ASURL    string
	SSEURL   string
	MCP2URL  string
	ModelURL string
	// SandboxURL is the MCP Apps sandbox proxy page (sandbox.html), on an
	// origin of its own, where the chat shows servers' views.
	SandboxURL string

	emu      sync.Mutex
	pageErrs []string
	requests []string // "METHOD origin-name path" of the page and MCP origins (newSiteEnv)
}

// newDemoEnv starts the dev server's origins and opens a tab on a blank
// page of the page origin; the page's uncaught exceptions and
// console.error calls are collected for checkPageErrors.
func newDemoEnv(t *testing.T, auth bool) *demoEnv {
	t.Helper()
	return newSiteEnv(t, auth, os.DirFS(webDir), nil)
}

// newSiteEnv is newDemoEnv with the page origin serving site (through
// devserver.Site, as the dev server does) and, when routes is not nil, the
// routes it adds to the page origin's mux first. The requests of the page
// and MCP origins are recorded (e.requestLog), and the demo servers' JSON-RPC
// methods (e.methods).
func newSiteEnv(t *testing.T, auth bool, site fs.FS, routes func(*http.ServeMux)) *demoEnv {
	t.Helper()
	e := &demoEnv{env: &env{t: t}}
	var dPage, dMCP, dAS, dMCP2, dModel, dSandbox delegate
	page := httptest.NewUnstartedServer(&dPage)
	mcpSrv := httptest.NewUnstartedServer(&dMCP)
	asSrv := httptest.NewUnstartedServer(&dAS)
	mcp2 := httptest.NewUnstartedServer(&dMCP2)
	model := httptest.NewUnstartedServer(&dModel)
	sandbox := httptest.NewUnstartedServer(&dSandbox)
	base := func(s *httptest.Server) string { return "http://" + s.Listener.Addr().String() }
	pc := devserver.PageConfig{
		MCPURL:     base(mcpSrv) + demo.StreamablePath,
		SSEURL:     base(mcpSrv) + demo.SSEPath,
		MCP2URL:    base(mcp2) + demo.StreamablePath,
		ModelURL:   base(model) + "/v1",
		SandboxURL: base(sandbox) + devserver.SandboxPath,
	}
	if auth {
		pc.ASURL = base(asSrv)
	}
	cfg := devserver.Config{
		Web: site, Demo: true, Auth: devserver.AuthConfig{Enabled: auth},
		DemoOptions: demo.Options{
			OnRequest: func(method string) {
				e.mu.Lock()
				defer e.mu.Unlock()
				e.methods = append(e.methods, method)
			},
			OnCancelled: func(tool string) {
				e.mu.Lock()
				defer e.mu.Unlock()
				e.canceled = append(e.canceled, tool)
			},
		},
	}
	origins, err := devserver.Handlers(cfg, pc)
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range origins {
		switch o.Name {
		case "page":
			mux := http.NewServeMux()
			mux.HandleFunc("/e2e/blank.html", func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "text/html; charset=utf-8")
				fmt.Fprint(w, blankPage)
			})
			if routes != nil {
				routes(mux)
			}
			mux.Handle("/", o.Handler)
			dPage.h = e.record("page", mux)
		case "mcp":
			dMCP.h = e.record("mcp", o.Handler)
		case "as":
			dAS.h = o.Handler
			e.AS = o.AuthServer
		case "mcp2":
			dMCP2.h = e.record("mcp2", o.Handler)
		case "model":
			dModel.h = o.Handler
		case "sandbox":
			dSandbox.h = o.Handler
		}
	}
	servers := []*httptest.Server{page, mcpSrv, mcp2, model, sandbox}
	if auth {
		servers = append(servers, asSrv)
	}
	for _, s := range servers {
		s.Start()
		t.Cleanup(s.Close)
	}
	e.PageURL, e.MCPURL, e.MCPBase = base(page), pc.MCPURL, base(mcpSrv)
	e.ASURL, e.SSEURL, e.MCP2URL, e.ModelURL, e.SandboxURL = pc.ASURL, pc.SSEURL, pc.MCP2URL, pc.ModelURL, pc.SandboxURL
	e.openTab()
	e.watchPageErrors()
	return e
}

// record wraps an origin's handler to note each request in e.requests.
func (e *demoEnv) record(origin string, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		e.emu.Lock()
		e.requests = append(e.requests, r.Method+" "+origin+" "+r.URL.Path)
		e.emu.Unlock()
		h.ServeHTTP(w, r)
	})
}

// requestLog is a copy of the requests recorded so far.
func (e *demoEnv) requestLog() []string {
	e.emu.Lock()
	defer e.emu.Unlock()
	return append([]string(nil), e.requests...)
}

// watchPageErrors collects uncaught exceptions and console.error calls.
func (e *demoEnv) watchPageErrors() {
	_ = chromedp.Listen(e.ctx, func(ev any) {
		e.emu.Lock()
		defer e.emu.Unlock()
		switch ev := ev.(type) {
		case *runtime.EventExceptionThrown:
			d := ev.ExceptionDetails
			msg := d.Text
			if d.Exception != nil {
				msg += " " + d.Exception.Description
			}
			e.pageErrs = append(e.pageErrs, "exception: "+msg)
		case *runtime.EventConsoleAPICalled:
			if ev.Type == runtime.ConsoleAPICalledTypeError {
				var parts []string
				for _, a := range ev.Args {
					parts = append(parts, string(a.Value)+a.Description)
				}
				e.pageErrs = append(e.pageErrs, "console.error: "+strings.Join(parts, " "))
			}
		}
	})
}

// checkPageErrors fails the test for every page error so far and for
// Content-Security-Policy violations.
func (e *demoEnv) checkPageErrors() {
	e.t.Helper()
	if got := e.js(`document.body.dataset.cspViolations || "0"`); got != "0" {
		e.t.Errorf("%s Content-Security-Policy violations on the page; see the event log:\n%s", got, e.text("#log"))
	}
	time.Sleep(50 * time.Millisecond) // let late console events arrive
	e.emu.Lock()
	defer e.emu.Unlock()
	for _, msg := range e.pageErrs {
		e.t.Errorf("page error: %s", msg)
	}
}

// openDemo navigates to the demo page (path and query, e.g. "/" or
// "/?server=…") and waits until the module is loaded and the panels are
// wired.
func (e *demoEnv) openDemo(pathAndQuery string) {
	e.t.Helper()
	e.do("open the demo page "+pathAndQuery,
		chromedp.Navigate(e.PageURL+pathAndQuery),
		chromedp.WaitVisible(chromedp.CSS(`body[data-ready]`)))
}

func (e *demoEnv) do(what string, actions ...chromedp.Action[chromedp.Void]) {
	e.t.Helper()
	if err := chromedp.Do(e.ctx, actions...); err != nil {
		e.t.Fatalf("%s: %v", what, err)
	}
}

// text is the rendered text of the first element sel matches.
func (e *demoEnv) text(sel string) string {
	e.t.Helper()
	s, err := chromedp.Run(e.ctx, chromedp.Text(chromedp.CSS(sel)))
	if err != nil {
		e.t.Fatalf("text of %s: %v", sel, err)
	}
	return s
}

func (e *demoEnv) value(sel string) string {
	e.t.Helper()
	s, err := chromedp.Run(e.ctx, chromedp.Value(chromedp.CSS(sel)))
	if err != nil {
		e.t.Fatalf("value of %s: %v", sel, err)
	}
	return s
}

// js evaluates an expression whose value is turned into a string.
func (e *demoEnv) js(expr string) string {
	e.t.Helper()
	var s string
	e.eval(`String(`+expr+`)`, &s)
	return s
}

// waitJS polls a JavaScript condition until it is true, for at most 30 s;
// then it fails the test with the page's state and event log.
func (e *demoEnv) waitJS(what, cond string) {
	e.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		var ok bool
		if e.tryEval(`Boolean(`+cond+`)`, &ok) == nil && ok {
			return
		}
		if time.Now().After(deadline) {
			var state string
			_ = e.tryEval(`JSON.stringify({href: location.href, state: document.querySelector("#state")?.dataset.state, ready: document.body.dataset.ready, load: document.querySelector("#load-text")?.textContent, scrollY, active: document.activeElement?.id || document.activeElement?.className})`, &state)
			e.t.Fatalf("timed out waiting for %s (%s); event log:\n%s", what, state, e.logLines())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// logLines is the event log, one "level kind text" line per entry.
func (e *demoEnv) logLines() string {
	e.t.Helper()
	return e.js(`[...document.querySelectorAll("#log li")].map((li) => li.dataset.level + " " + li.dataset.kind + " " + li.querySelector(".log-text").textContent).join("\n")`)
}

// shot saves a screenshot of the element sel (the full page when sel is
// "") as e2e/artifacts/name.
func (e *demoEnv) shot(name, sel string) {
	e.t.Helper()
	var b []byte
	var err error
	if sel == "" {
		b, err = chromedp.Run(e.ctx, chromedp.FullScreenshot(100))
	} else {
		b, err = chromedp.Run(e.ctx, chromedp.Screenshot(chromedp.CSS(sel)))
	}
	if err != nil {
		e.t.Fatalf("screenshot %s: %v", name, err)
	}
	dir := filepath.Join(repoRoot, "e2e", "artifacts")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		e.t.Fatal(err)
	}
	if mode := runtimeMode(); mode != "" {
		name = strings.TrimSuffix(name, ".png") + "-" + mode + ".png" // the passes of each mode run at once
	}
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, b, 0o644); err != nil {
		e.t.Fatal(err)
	}
	e.t.Logf("screenshot: %s", path)
}

// ownPopup returns a channel that yields the next window this tab opens.
// (expectPopup's chromedp.WaitNewTarget also reports windows other tabs
// open, which parallel tests do.)
func (e *demoEnv) ownPopup() <-chan target.ID {
	e.t.Helper()
	me := chromedp.FromContext(e.ctx).Target.TargetID
	return newWindow(e.t, e.ctx, func(info *target.Info) bool { return info.OpenerID == me })
}

// noPopup fails the test if the tab opened the window popups reports
// (from e.ownPopup()), waiting d for a late one.
func (e *demoEnv) noPopup(popups <-chan target.ID, d time.Duration) {
	e.t.Helper()
	select {
	case id, ok := <-popups:
		if ok {
			e.t.Fatalf("the page opened a window (%s) without a click", id)
		}
	case <-time.After(d):
	}
}
