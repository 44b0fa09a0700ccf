package e2e

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"

	"github.com/mcpwasm/mcpwasm/demo"
	"github.com/mcpwasm/mcpwasm/demo/authserver"
	"github.com/mcpwasm/mcpwasm/demo/cors"
	"github.com/mcpwasm/mcpwasm/devkit/devserver"
)

// authEnv is the dev server in auth mode: page, protected MCP server and
// authorization server, each on its own loopback origin, with every request
// to the MCP and AS origins counted by kind.
type authEnv struct {
	*env
	AS    *authserver.Server
	ASURL string
	// MCP2URL is the second demo server (no sign-in); ModelURL the
	// stand-in model's base URL.
	MCP2URL, ModelURL string
	cmu               sync.Mutex
	counts            map[string]int // "prm", "asmeta", "register", "token", "revoke", "mcp", "authorize", "mcp2", "model"
	creds             map[string][]string
	state             string // state of the last authorization request
}

// lastState returns the state parameter of the last authorization request.
func (e *authEnv) lastState() string {
	e.cmu.Lock()
	defer e.cmu.Unlock()
	return e.state
}

// delegate lets a server's handler be set after its address is known.
type delegate struct{ h http.Handler }

func (d *delegate) ServeHTTP(w http.ResponseWriter, r *http.Request) { d.h.ServeHTTP(w, r) }

func newAuthEnv(t *testing.T, ac devserver.AuthConfig) *authEnv {
	t.Helper()
	return newAuthEnvWith(t, ac, nil)
}

// newAuthEnvWith is newAuthEnv with wrap, when not nil, given the handler
// of each origin ("page", "mcp", "as") to wrap before the servers start
// (inside the request counting); the origins' URLs are already set in e
// when it is called.
func newAuthEnvWith(t *testing.T, ac devserver.AuthConfig, wrap func(e *authEnv, name string, h http.Handler) http.Handler) *authEnv {
	t.Helper()
	ac.Enabled = true
	e := &authEnv{env: &env{t: t}, counts: map[string]int{}}
	var dPage, dMCP, dAS, dMCP2, dModel delegate
	page := httptest.NewUnstartedServer(&dPage)
	mcpSrv := httptest.NewUnstartedServer(&dMCP)
	asSrv := httptest.NewUnstartedServer(&dAS)
	mcp2Srv := httptest.NewUnstartedServer(&dMCP2)
	modelSrv := httptest.NewUnstartedServer(&dModel)
	base := func(s *httptest.Server) string { return "http://" + s.Listener.Addr().String() }
	pc := devserver.PageConfig{
		MCPURL:   base(mcpSrv) + demo.StreamablePath,
		SSEURL:   base(mcpSrv) + demo.SSEPath,
		ASURL:    base(asSrv),
		MCP2URL:  base(mcp2Srv) + demo.StreamablePath,
		ModelURL: base(modelSrv) + "/v1",
	}
	e.PageURL, e.MCPURL, e.MCPBase, e.ASURL = base(page), pc.MCPURL, base(mcpSrv), pc.ASURL
	if wrap == nil {
		wrap = func(_ *authEnv, _ string, h http.Handler) http.Handler { return h }
	}
	cfg := devserver.Config{
		Web: os.DirFS(webDir), Demo: true, Auth: ac,
		DemoOptions: demo.Options{OnCancelled: func(tool string) {
			e.mu.Lock()
			defer e.mu.Unlock()
			e.canceled = append(e.canceled, tool)
		}, CORS: cors.Options{AllowHeaders: []string{"X-Api-Key"}}},
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
			mux.Handle("/", o.Handler)
			dPage.h = wrap(e, o.Name, mux)
		case "mcp":
			dMCP.h = e.counting("mcp", wrap(e, o.Name, o.Handler))
		case "as":
			dAS.h = e.counting("as", wrap(e, o.Name, o.Handler))
			e.AS = o.AuthServer
		case "mcp2":
			dMCP2.h = e.countingAs("mcp2", o.Handler)
		case "model":
			dModel.h = e.countingAs("model", o.Handler)
		}
	}
	for _, s := range []*httptest.Server{page, mcpSrv, asSrv, mcp2Srv, modelSrv} {
		s.Start()
		t.Cleanup(s.Close)
	}
	e.MCP2URL, e.ModelURL = pc.MCP2URL, pc.ModelURL
	e.openTab()
	e.eval(`(async () => {
		const m = await import("/mcp.js");
		window.MCPError = m.MCPError;
		window.mcp = await m.load();
	})()`, nil)
	e.eval(openDB, nil)
	return e
}

// countingAs counts every request but preflights as kind.
func (e *authEnv) countingAs(kind string, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodOptions {
			e.cmu.Lock()
			e.counts[kind]++
			e.cmu.Unlock()
			e.sawCredentials(kind, r)
		}
		h.ServeHTTP(w, r)
	})
}

// sawCredentials records the Authorization and X-Api-Key headers an origin
// received.
func (e *authEnv) sawCredentials(origin string, r *http.Request) {
	e.cmu.Lock()
	defer e.cmu.Unlock()
	if e.creds == nil {
		e.creds = map[string][]string{}
	}
	for _, h := range []string{"Authorization", "X-Api-Key"} {
		if v := r.Header.Get(h); v != "" {
			e.creds[origin] = append(e.creds[origin], h+": "+v)
		}
	}
}

// credentials returns the credential headers origin ("mcp", "mcp2", "as")
// received.
func (e *authEnv) credentials(origin string) []string {
	e.cmu.Lock()
	defer e.cmu.Unlock()
	return append([]string(nil), e.creds[origin]...)
}

// counting counts the requests of origin ("mcp" or "as") by kind
// (preflights excluded).
func (e *authEnv) counting(origin string, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodOptions {
			kind := "other"
			p := r.URL.Path
			switch {
			case strings.HasPrefix(p, "/.well-known/oauth-protected-resource"):
				kind = "prm"
			case strings.HasPrefix(p, "/.well-known/"):
				kind = "asmeta"
			case p == "/register":
				kind = "register"
			case p == "/token":
				kind = "token"
			case p == "/revoke":
				kind = "revoke"
			case p == "/authorize" || p == "/consent":
				kind = "authorize"
				if s := r.URL.Query().Get("state"); s != "" {
					e.cmu.Lock()
					e.state = s
					e.cmu.Unlock()
				}
			case p == demo.StreamablePath || p == demo.SSEPath:
				kind = "mcp"
			}
			e.cmu.Lock()
			e.counts[kind]++
			e.cmu.Unlock()
			e.sawCredentials(origin, r)
		}
		h.ServeHTTP(w, r)
	})
}

// console collects the tab's console messages from now on; the returned
// function gives them so far, one per line.
func (e *env) console() func() string {
	var mu sync.Mutex
	var lines []string
	_ = chromedp.Listen(e.ctx, func(ev any) {
		if c, ok := ev.(*runtime.EventConsoleAPICalled); ok {
			var parts []string
			for _, a := range c.Args {
				parts = append(parts, string(a.Value))
			}
			mu.Lock()
			lines = append(lines, string(c.Type)+": "+strings.Join(parts, " "))
			mu.Unlock()
		}
	})
	return func() string {
		mu.Lock()
		defer mu.Unlock()
		return strings.Join(lines, "\n")
	}
}

// snapshot returns the request counts so far.
func (e *authEnv) snapshot() map[string]int {
	e.cmu.Lock()
	defer e.cmu.Unlock()
	out := make(map[string]int, len(e.counts))
	for k, v := range e.counts {
		out[k] = v
	}
	return out
}

// diff returns the requests made since before.
func (e *authEnv) diff(before map[string]int) map[string]int {
	out := map[string]int{}
	for k, v := range e.snapshot() {
		if d := v - before[k]; d != 0 {
			out[k] = d
		}
	}
	return out
}

// gesture evaluates expr as if a person clicked (transient user
// activation, so window.open is allowed), without waiting for a promise.
func (e *env) gesture(expr string) {
	e.t.Helper()
	userGesture := func(p *runtime.EvaluateParams) { t := true; p.UserGesture = &t }
	if _, err := chromedp.Run(e.ctx, chromedp.Evaluate[json0](expr, userGesture)); err != nil && err != chromedp.ErrJSUndefined {
		e.t.Fatalf("gesture: %v\n%s", err, expr)
	}
}

// json0 is a throwaway result type for expressions whose value is ignored.
type json0 = any

// expectPopup returns a channel that yields the next window opened in the
// tab's browser context (the tab or a sibling tab of the test; parallel
// tests have contexts of their own).
func (e *env) expectPopup() <-chan target.ID {
	e.t.Helper()
	bc := chromedp.FromContext(e.ctx).BrowserContextID
	return newWindow(e.t, e.ctx, func(info *target.Info) bool { return bc == "" || info.BrowserContextID == bc })
}

// newWindow returns a channel that yields the next page target matching
// match that opens after the call. chromedp.WaitNewTarget alone also
// reports changes of windows that exist already: an earlier popup that
// closes (after a Deny) would be taken for the next one, and is gone
// ("No target with given id found") by the time the test looks at it.
func newWindow(t testing.TB, ctx context.Context, match func(*target.Info) bool) <-chan target.ID {
	t.Helper()
	existing, err := chromedp.Targets(ctx)
	if err != nil {
		t.Fatalf("listing the open windows: %v", err)
	}
	known := map[target.ID]bool{}
	for _, info := range existing {
		known[info.TargetID] = true
	}
	return chromedp.WaitNewTarget(ctx, func(info *target.Info) bool {
		return info.Type == "page" && !known[info.TargetID] && match(info)
	})
}

// popup attaches to a window the tab opened.
func (e *env) popup(ch <-chan target.ID) context.Context {
	e.t.Helper()
	select {
	case id, ok := <-ch:
		if !ok {
			e.t.Fatal("no popup target")
		}
		ctx, cancel := chromedp.NewContext(e.ctx, chromedp.WithTargetID(id))
		e.t.Cleanup(cancel)
		return ctx
	case <-time.After(20 * time.Second):
		e.t.Fatal("no login popup opened within 20s")
	}
	return nil
}

// consent clicks a button (#approve or #deny) on the consent page in the
// popup, once the page has loaded.
func (e *env) consent(popup context.Context, button string) {
	e.t.Helper()
	clickLoaded(e.t, popup, button, "the consent page")
}

// clickLoaded clicks the element with the given id once the document that
// holds it has loaded: a button visible while the page still lays out can
// move before the click lands, and the click is then lost. A popup opens on
// about:blank and then navigates (through an authorization endpoint's
// redirects) to its page; a check that runs in a document the navigation
// replaces fails with a lost execution context, so the check is asked
// again in the new document until the page itself answers.
func clickLoaded(t testing.TB, ctx context.Context, id, page string) {
	t.Helper()
	ready := fmt.Sprintf(`document.readyState === "complete" && !!document.getElementById(%q)`, id)
	deadline := time.Now().Add(20 * time.Second)
	for {
		ok, err := chromedp.Run(ctx, chromedp.Evaluate[bool](ready))
		if err == nil && ok {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("#%s on %s did not load within 20s (last check: %v)", id, page, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := chromedp.Do(ctx, chromedp.WaitVisible(chromedp.ID(id)), chromedp.Click(chromedp.ID(id))); err != nil {
		t.Fatalf("clicking #%s on %s: %v", id, page, err)
	}
}

// personSeverWindow is a short severance window (web/auth.js
// SEVER_WINDOW_MS, 3 s, set through its test hook): a sign-in window that
// closes sooner after its navigation is taken for severed by COOP, later
// for closed by a person; a short window lets the person read briefly.
const personSeverWindow = 250 * time.Millisecond

// setSeverWindow sets the severance window of e's page to d.
func (e *env) setSeverWindow(d time.Duration) {
	e.t.Helper()
	e.eval(fmt.Sprintf(`void (globalThis.__mcpwasmSeverWindowMs = %d)`, d.Milliseconds()), nil)
}

// personReads is a person reading the consent page before closing the
// window, in a page with personSeverWindow: long enough for a person's
// close, counted from the consent page showing (after the navigation).
func personReads() { time.Sleep(personSeverWindow + 150*time.Millisecond) }

// refreshTTL is the access-token life of the refresh tests: the client
// refreshes at half a token's life when that is later than its margin
// (10 s before expiry), so a short life makes a short wait.
const refreshTTL = 4 * time.Second

// awaitTokenDue waits until the access token issued last is due for
// refresh, as the client reckons it from when it read the token response
// (a moment after the authorization server issued it), and returns that
// token's rotation: the refreshes granted before it (0: the sign-in's; a
// setup slower than half a token's life refreshes on its own).
func (e *authEnv) awaitTokenDue(ttl time.Duration) (rotation int) {
	e.t.Helper()
	var issued time.Time
	for _, ev := range e.AS.Events() {
		if ev.Err == "" && (ev.Kind == authserver.EventTokenCode || ev.Kind == authserver.EventTokenRefresh) {
			issued = ev.Time
		}
		if ev.Err == "" && ev.Kind == authserver.EventTokenRefresh {
			rotation++
		}
	}
	if issued.IsZero() {
		e.t.Fatal("the authorization server issued no token")
	}
	e.t.Logf("token of rotation %d issued %v ago; due at half its %v life", rotation, time.Since(issued).Round(time.Millisecond), ttl)
	time.Sleep(time.Until(issued.Add(ttl/2 + 500*time.Millisecond)))
	return rotation
}

// startLogin creates window.c for the MCP server and starts c.authorize()
// in a user gesture; the outcome lands in window.result.
func (e *authEnv) startLogin(clientOpts string) {
	e.t.Helper()
	e.eval(fmt.Sprintf(`(() => {
		window.c = mcp.client(%q, %s);
		window.states = [];
		c.addEventListener("statechange", (ev) => states.push(ev.detail.state));
		window.result = null;
	})()`, e.MCPURL, clientOpts), nil)
	e.gesture(`void (c.authorize().then(() => { result = { ok: true, state: c.state }; },
		(e) => { result = { error: { name: e.name, code: e.code, status: e.status ?? 0, message: e.message + " — " + (e.detail ?? "") }, state: c.state }; }))`)
}

// openDB is page-side JavaScript that opens the client's IndexedDB
// database as it is, for tests that inspect what is stored.
const openDB = `void (window.openDB = () => new Promise((res, rej) => {
	const r = indexedDB.open("mcpwasm"); r.onsuccess = () => res(r.result); r.onerror = () => rej(r.error); }))`

// openConsent creates window.c with clientOpts, starts authorize() in a
// gesture and returns the popup once it shows the consent page.
func (e *authEnv) openConsent(clientOpts string) context.Context {
	e.t.Helper()
	popups := e.expectPopup()
	e.startLogin(clientOpts)
	popup := e.popup(popups)
	if err := chromedp.Do(popup, chromedp.WaitVisible(chromedp.ID("approve"))); err != nil {
		e.t.Fatalf("the consent page: %v", err)
	}
	return popup
}

// signIn creates window.c with clientOpts and signs in through the popup
// (Approve), failing the test unless it ends connected.
func (e *authEnv) signIn(clientOpts string) {
	e.t.Helper()
	popups := e.expectPopup()
	e.startLogin(clientOpts)
	e.consent(e.popup(popups), "approve")
	if r := e.awaitLogin(); !r.OK || r.State != "connected" {
		e.t.Fatalf("sign-in: %+v; want connected", r)
	}
}

// loginResult waits for window.result.
type loginResult struct {
	OK    bool   `json:"ok"`
	State string `json:"state"`
	Error *jsErr `json:"error"`
}

func (e *authEnv) awaitLogin() loginResult {
	e.t.Helper()
	var r loginResult
	e.eval(`(async () => {
		for (let i = 0; i < 600 && !window.result; i++) await new Promise((r) => setTimeout(r, 50));
		return window.result ?? { state: c.state, error: { code: "test_timeout", message: "authorize() did not settle in 30s" } };
	})()`, &r)
	return r
}
