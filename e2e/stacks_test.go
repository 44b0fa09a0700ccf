package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/mcpwasm/mcpwasm/internal/devserver"
	"github.com/mcpwasm/mcpwasm/internal/webserve"
)

// A stack is a real authorization server and MCP server nobody here wrote
// (pinned under e2e/stacks/<name>), which TestStacks signs in to and uses
// as a person would. Files that add a stack append it to stacks in an
// init function.
type stack struct {
	name string
	// start runs the stack once for the test binary's pass and returns it;
	// pageOrigin is the origin of the page that signs in (for stacks that
	// allow-list redirect URIs or CORS origins). It fails the test, with
	// the stack's log, when the stack does not start.
	start func(t *testing.T, pageOrigin string) *stackServer
}

// stackServer is a running stack, as the scenario runner needs it.
type stackServer struct {
	MCPURL     string                                                  // the MCP endpoint the page connects to
	ClientOpts string                                                  // extra client() options as a JS object literal body ("" for none), e.g. `scopes: ["openid"]`
	Consent    func(t *testing.T, popup context.Context, approve bool) // log in and approve/deny in the popup tab (chromedp)
	TokenTTL   time.Duration                                           // access token lifetime; the runner waits past it to see a refresh
	StepUp     string                                                  // "" when the stack has no step-up; else the tool that needs a higher scope
	Requests   func() []string                                         // optional: requests the AS saw ("POST /token", ...) for zero-request assertions; nil when unknown
	// JWTAccessTokens: the AS cannot revoke its access tokens (RFC 7009
	// unsupported_token_type), so the old one works until it expires.
	JWTAccessTokens bool
}

var stacks []stack

// stackPage is the page server every stack test's tab loads: one origin
// for the test binary, so a stack started once can allow-list it.
var stackPage = sync.OnceValue(func() *httptest.Server {
	mux := http.NewServeMux()
	mux.HandleFunc("/e2e/blank.html", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, blankPage)
	})
	mux.Handle("/", webserve.Handler(devserver.Site(os.DirFS(webDir))))
	return httptest.NewServer(mux)
})

// newStackEnv opens a tab on the stack page server with mcp.js loaded (as
// newEnv does, without a demo server).
func newStackEnv(t *testing.T) *env {
	t.Helper()
	e := &env{t: t, PageURL: stackPage().URL}
	e.openTab()
	// The scenario outlives openTab's limit: it waits for a token to expire.
	ctx, cancel := context.WithTimeout(e.tab, 10*time.Minute)
	t.Cleanup(cancel)
	e.ctx = ctx
	e.loadMCP()
	return e
}

// loadMCP imports mcp.js into the tab's page as window.mcp. Before it, the
// page's fetch is wrapped to keep the last bearer token sent
// (window.lastBearer): on the main thread the client's requests go through
// it, which lets the logout step replay the old token; in a worker runtime
// the token never reaches the page.
func (e *env) loadMCP() {
	e.t.Helper()
	e.eval(`(async () => {
		const f = window.fetch;
		window.fetch = (input, init) => {
			const h = new Headers(init?.headers ?? (input instanceof Request ? input.headers : undefined));
			const a = h.get("authorization");
			if (a) window.lastBearer = a;
			return f(input, init);
		};
		const m = await import("/mcp.js");
		window.MCPError = m.MCPError;
		window.mcp = await m.load();
	})()`, nil)
}

// TestStacks runs one scenario against every stack, a subtest per step
// (TestStacks/<stack>/<step>), so the table stack × step reads off the
// output. The steps build on each other: the first that fails ends the
// stack's run. Stacks run in parallel with each other; each is started
// once for the pass. TestStacks runs in parallel with the other parallel
// tests.
func TestStacks(t *testing.T) {
	if runtimeMode() == "main" {
		// Four stacks (two workerd instances, Hydra, oidc-provider and
		// their MCP servers) in both passes at once overload 2 cores.
		t.Skip("the stacks run in the auto pass (the default runtime); too heavy to run in both passes at once on 2 cores")
	}
	// Parallel with the other parallel tests: most of a stack's run is
	// waiting (for its start, for its token to expire).
	t.Parallel()
	sort.Slice(stacks, func(i, j int) bool { return stacks[i].name < stacks[j].name })
	for _, s := range stacks {
		t.Run(s.name, func(t *testing.T) {
			t.Parallel()
			begin := time.Now()
			srv := s.start(t, stackPage().URL)
			t.Logf("%s started in %v", s.name, time.Since(begin).Round(100*time.Millisecond))
			runStack(t, srv)
			t.Logf("%s: whole run %v", s.name, time.Since(begin).Round(100*time.Millisecond))
		})
	}
}

// stackRun is one stack's scenario state.
type stackRun struct {
	srv      *stackServer
	e        *env
	issued   time.Time // when the page last got a new token from a sign-in
	reqsMark int       // len(srv.Requests()) at the last mark
	ep       asEndpoints
}

// since returns the requests the AS saw since the last mark and moves the
// mark; nil when the stack does not report its requests.
func (r *stackRun) since() []string {
	if r.srv.Requests == nil {
		return nil
	}
	all := r.srv.Requests()
	got := append([]string(nil), all[min(r.reqsMark, len(all)):]...)
	r.reqsMark = len(all)
	return got
}

// countPrefix is how many of reqs start with prefix (such as "POST /token").
func countPrefix(reqs []string, prefix string) int {
	n := 0
	for _, r := range reqs {
		if strings.HasPrefix(r, prefix) {
			n++
		}
	}
	return n
}

// settle waits briefly for the AS's request log to catch up (a stack that
// reads its server's log sees a request a moment after its response).
func (r *stackRun) settle() {
	if r.srv.Requests != nil {
		time.Sleep(300 * time.Millisecond)
	}
}

func runStack(t *testing.T, srv *stackServer) {
	r := &stackRun{srv: srv, e: newStackEnv(t), ep: endpointsOf(t, srv.MCPURL)}
	steps := []struct {
		name string
		run  func(t *testing.T, r *stackRun)
	}{
		{"discovery", stepDiscovery},
		{"deny", stepDeny},
		{"sign-in", stepSignIn},
		{"tool-call", stepToolCall},
		{"step-up", stepStepUp},
		{"reload", stepReload},
		{"refresh", stepRefresh},
		{"logout", stepLogout},
	}
	for _, s := range steps {
		if !t.Run(s.name, func(t *testing.T) { s.run(t, r) }) {
			t.Fatalf("step %s failed: the later steps depend on it", s.name)
		}
	}
}

// clientJS creates window.c for the stack; interactive, a call that needs
// more scope may open the popup (as a call from a click does).
func (r *stackRun) clientJS(interactive bool) string {
	opts := fmt.Sprintf("interactive: %v", interactive)
	if r.srv.ClientOpts != "" {
		opts += ", " + r.srv.ClientOpts
	}
	return fmt.Sprintf(`window.c = mcp.client(%q, { %s });`, r.srv.MCPURL, opts)
}

// stepDiscovery: connect() without a grant finds the server wants a
// sign-in (the 401 challenge and the metadata behind it).
func stepDiscovery(t *testing.T, r *stackRun) {
	r.e.t = t
	r.since()
	var got struct {
		Error *jsErr `json:"error"`
		State string `json:"state"`
	}
	r.e.eval(`(async () => {
		`+r.clientJS(false)+`
		const x = await c.connect().then(() => ({}), `+catchJS+`);
		return { ...x, state: c.state };
	})()`, &got)
	r.e.eval(r.clientJS(true), nil)
	if got.Error == nil || got.Error.Code != "auth_required" || got.State != "needs_auth" {
		t.Fatalf("connect() without a grant: %+v, state %q; want auth_required, needs_auth", got.Error, got.State)
	}
	r.settle()
	t.Logf("requests: %v", r.since())
}

// login starts c.authorize() in a click and returns the popup.
func (r *stackRun) login() context.Context {
	r.e.t.Helper()
	popups := r.e.expectPopup()
	r.e.gesture(`void (window.result = null, c.authorize().then(() => { result = { ok: true, state: c.state }; },
		(e) => { result = { error: { name: e.name, code: e.code, status: e.status ?? 0, message: e.message + " — " + (e.detail ?? "") }, state: c.state }; }))`)
	return r.e.popup(popups)
}

// awaitResult waits (bounded) for window[name] and decodes it into out.
func (r *stackRun) awaitResult(name string, out any) {
	r.e.t.Helper()
	r.e.eval(fmt.Sprintf(`(async () => {
		for (let i = 0; i < 1200 && !window.%[1]s; i++) await new Promise((r) => setTimeout(r, 50));
		return window.%[1]s ?? { state: c.state, error: { code: "test_timeout", message: "did not settle in 60s" } };
	})()`, name), out)
}

// stepDeny: Deny on the consent page rejects authorize() with declined.
func stepDeny(t *testing.T, r *stackRun) {
	r.e.t = t
	popup := r.login()
	r.srv.Consent(t, popup, false)
	var got loginResult
	r.awaitResult("result", &got)
	if got.Error == nil || got.Error.Code != "declined" || got.State != "declined" {
		t.Fatalf("authorize() after Deny: %+v; want declined, state declined", got)
	}
	r.settle()
	t.Logf("requests: %v", r.since())
}

// stepSignIn: a new authorize() from a click, Approve, connected.
func stepSignIn(t *testing.T, r *stackRun) {
	r.e.t = t
	popup := r.login()
	r.srv.Consent(t, popup, true)
	var got loginResult
	r.awaitResult("result", &got)
	if !got.OK || got.State != "connected" {
		t.Fatalf("authorize() after Approve: %+v; want connected", got)
	}
	r.issued = time.Now()
	r.settle()
	reqs := r.since()
	t.Logf("requests: %v", reqs)
	if tok := "POST " + r.ep.Token; reqs != nil && countPrefix(reqs, tok) != 1 {
		t.Errorf("token requests during the sign-in = %d; want 1 (the code exchange)", countPrefix(reqs, tok))
	}
}

// callAdd calls tool(a, b) and returns the sum.
func (r *stackRun) callAdd(tool string, a, b int) (float64, *jsErr) {
	r.e.t.Helper()
	var got struct {
		Sum   float64 `json:"sum"`
		Error *jsErr  `json:"error"`
	}
	r.e.eval(fmt.Sprintf(`c.callTool(%q, { a: %d, b: %d }).then((x) => ({ sum: x.structuredContent?.sum ?? Number(x.content?.[0]?.text) }), %s)`, tool, a, b, catchJS), &got)
	return got.Sum, got.Error
}

func stepToolCall(t *testing.T, r *stackRun) {
	r.e.t = t
	if sum, err := r.callAdd("add", 1, 2); err != nil || sum != 3 {
		t.Fatalf("add(1, 2) = %v, %+v; want 3", sum, err)
	}
	r.settle()
	r.since()
}

// stepStepUp: the tool that needs more scope answers 403
// insufficient_scope; the client asks for consent again (in a click) and
// retries the call.
func stepStepUp(t *testing.T, r *stackRun) {
	r.e.t = t
	if r.srv.StepUp == "" {
		t.Skip("the stack has no step-up (no tool needs a higher scope)")
	}
	popups := r.e.expectPopup()
	t.Cleanup(func() {
		if t.Failed() {
			var s any
			_ = r.e.tryEval(`({ stepped: window.stepped, state: c.state })`, &s)
			t.Logf("the call that needed more scope: %v", s)
		}
	})
	r.e.gesture(fmt.Sprintf(`void (window.stepped = null, c.callTool(%q, { a: 20, b: 22 }).then(
		(x) => { stepped = { sum: x.structuredContent?.sum ?? Number(x.content?.[0]?.text) }; }, (e) => { stepped = { error: { code: e.code, message: e.message } }; }))`, r.srv.StepUp))
	r.srv.Consent(t, r.e.popup(popups), true)
	var got struct {
		Sum   float64 `json:"sum"`
		Error *jsErr  `json:"error"`
	}
	r.awaitResult("stepped", &got)
	if got.Sum != 42 {
		t.Fatalf("%s after step-up = %+v; want sum 42", r.srv.StepUp, got)
	}
	r.issued = time.Now()
	r.settle()
	t.Logf("requests: %v", r.since())
}

// stepReload: after a reload the page connects from the grant in
// IndexedDB: no popup, no authorization, token or registration request.
func stepReload(t *testing.T, r *stackRun) {
	r.e.t = t
	r.settle()
	r.since()
	if err := chromedp.Do(r.e.ctx, chromedp.Navigate(r.e.PageURL+"/e2e/blank.html")); err != nil {
		t.Fatalf("reload: %v", err)
	}
	r.e.loadMCP()
	var got struct {
		Error *jsErr `json:"error"`
		State string `json:"state"`
	}
	r.e.eval(`(async () => {
		`+r.clientJS(true)+`
		const x = await c.connect().then(() => ({}), `+catchJS+`);
		return { ...x, state: c.state };
	})()`, &got)
	if got.Error != nil || got.State != "connected" {
		t.Fatalf("connect() after a reload: %+v, state %q; want connected", got.Error, got.State)
	}
	if sum, err := r.callAdd("add", 2, 3); err != nil || sum != 5 {
		t.Fatalf("add(2, 3) after a reload = %v, %+v; want 5", sum, err)
	}
	r.settle()
	reqs := r.since()
	t.Logf("requests: %v", reqs)
	for _, p := range []string{"GET " + r.ep.Authorization, "POST " + r.ep.Authorization, "POST " + r.ep.Token, "POST " + r.ep.Registration} {
		if strings.HasSuffix(p, " ") {
			continue // the server has no such endpoint
		}
		if n := countPrefix(reqs, p); n != 0 {
			t.Errorf("the reload made %d %q requests; want none", n, p)
		}
	}
}

// stepRefresh: once the access token has expired, a call still works
// (the client refreshed it), with one refresh request.
func stepRefresh(t *testing.T, r *stackRun) {
	r.e.t = t
	wait := time.Until(r.issued.Add(r.srv.TokenTTL + time.Second))
	t.Logf("waiting %v for the access token (%v) to expire", wait.Round(time.Second), r.srv.TokenTTL)
	time.Sleep(wait)
	r.since()
	r.e.eval(`void (window.refreshed = 0, c.addEventListener("tokenrefreshed", () => refreshed++))`, nil)
	if sum, err := r.callAdd("add", 4, 5); err != nil || sum != 9 {
		t.Fatalf("add(4, 5) after the token expired = %v, %+v; want 9", sum, err)
	}
	r.settle()
	reqs := r.since()
	t.Logf("requests: %v", reqs)
	if tok := "POST " + r.ep.Token; reqs != nil && countPrefix(reqs, tok) != 1 {
		t.Errorf("token requests for the call after expiry = %d; want 1 (one refresh)", countPrefix(reqs, tok))
	}
	if slices.ContainsFunc(reqs, func(s string) bool {
		return strings.HasSuffix(s, " "+r.ep.Authorization) || strings.Contains(s, " "+r.ep.Authorization+"?")
	}) {
		t.Errorf("the refresh went through the authorization endpoint: %v", reqs)
	}
}

// stepLogout: logout() revokes the grant; the server refuses the page's
// old token afterwards, and the next connect needs a sign-in.
func stepLogout(t *testing.T, r *stackRun) {
	r.e.t = t
	r.since()
	var got struct {
		Error *jsErr `json:"error"`
		State string `json:"state"`
		Again string `json:"again"`
	}
	var bearer string
	r.e.eval(`window.lastBearer ?? ""`, &bearer)
	revocation := r.ep.Revocation
	r.e.eval(`(async () => {
		const x = await c.logout().then(() => ({}), `+catchJS+`);
		const d = mcp.client(`+fmt.Sprintf("%q", r.srv.MCPURL)+`);
		const again = await d.connect().then(() => "connected", (e) => e.code);
		return { ...x, state: c.state, again };
	})()`, &got)
	if got.Error != nil {
		t.Fatalf("logout(): %+v", got.Error)
	}
	if got.Again != "auth_required" {
		t.Errorf("a new client's connect() after logout = %q; want auth_required", got.Again)
	}
	r.settle()
	reqs := r.since()
	t.Logf("state after logout %q; requests: %v", got.State, reqs)
	if reqs != nil && revocation != "" && countPrefix(reqs, "POST "+revocation) == 0 {
		t.Errorf("logout sent no revocation request (POST %s): %v", revocation, reqs)
	}
	if bearer == "" {
		t.Logf("the old token is not replayed: in a worker runtime it never reaches the page")
		return
	}
	// The server's answer to the old token, sent again as the page sent it.
	req, _ := http.NewRequest("POST", r.srv.MCPURL, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"add","arguments":{"a":1,"b":1}}}`))
	req.Header.Set("Authorization", bearer)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("replaying the old token: %v", err)
	}
	resp.Body.Close()
	t.Logf("the old token after logout: %s, WWW-Authenticate: %s", resp.Status, resp.Header.Get("WWW-Authenticate"))
	switch {
	case r.srv.JWTAccessTokens:
		t.Logf("the AS cannot revoke its JWT access tokens: the old one works until it expires")
	case resp.StatusCode != http.StatusUnauthorized:
		t.Errorf("the server answered the old token after logout with %s; want 401", resp.Status)
	}
}

// asEndpoints are the paths of the endpoints of the authorization server
// that protects mcpURL (RFC 9728 metadata, then RFC 8414 or OpenID
// metadata), as the AS's request log names them; "" for one it lacks.
type asEndpoints struct {
	Authorization string `json:"authorization_endpoint"`
	Token         string `json:"token_endpoint"`
	Registration  string `json:"registration_endpoint"`
	Revocation    string `json:"revocation_endpoint"`
}

func endpointsOf(t *testing.T, mcpURL string) asEndpoints {
	t.Helper()
	get := func(u string, out any) bool {
		resp, err := http.Get(u)
		for try := 1; err != nil && try < 4; try++ {
			// A server under load may drop a connection (EOF): try again.
			time.Sleep(time.Duration(try) * 500 * time.Millisecond)
			resp, err = http.Get(u)
		}
		if err != nil {
			t.Fatalf("GET %s: %v", u, err)
		}
		defer resp.Body.Close()
		return resp.StatusCode == http.StatusOK && json.NewDecoder(resp.Body).Decode(out) == nil
	}
	mu, err := url.Parse(mcpURL)
	if err != nil {
		t.Fatal(err)
	}
	var prm struct {
		AS []string `json:"authorization_servers"`
	}
	if !get(mu.Scheme+"://"+mu.Host+"/.well-known/oauth-protected-resource"+mu.Path, &prm) || len(prm.AS) == 0 {
		t.Fatalf("%s has no protected resource metadata naming its authorization server", mcpURL)
	}
	as, err := url.Parse(prm.AS[0])
	if err != nil {
		t.Fatal(err)
	}
	var md asEndpoints
	path := strings.TrimSuffix(as.Path, "/")
	if !get(as.Scheme+"://"+as.Host+"/.well-known/oauth-authorization-server"+path, &md) &&
		!get(as.Scheme+"://"+as.Host+path+"/.well-known/openid-configuration", &md) {
		t.Fatalf("no metadata for the authorization server %s", prm.AS[0])
	}
	for _, p := range []*string{&md.Authorization, &md.Token, &md.Registration, &md.Revocation} {
		if *p == "" {
			continue
		}
		u, err := url.Parse(*p)
		if err != nil {
			t.Fatalf("authorization server metadata endpoint %q: %v", *p, err)
		}
		*p = u.Path
	}
	return md
}
