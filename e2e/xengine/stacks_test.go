package xengine

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpwasm/mcpwasm/devkit/devserver"
	"github.com/mcpwasm/mcpwasm/devkit/webserve"
	"github.com/mcpwasm/mcpwasm/e2e/engine"
)

// A stack is a real authorization server and MCP server nobody here wrote
// (pinned under e2e/stacks/<name>, or built from the Go module proxy),
// which TestStacks signs in to and uses as a person would, in every engine
// and runtime. Files that add a stack append it to stacks in an init
// function.
type stack struct {
	name string
	// start runs the stack for the test binary's pass and returns it;
	// pageOrigin is the origin of the page that signs in (for stacks that
	// allow-list redirect URIs or CORS origins). It fails the test, with
	// the stack's log, when the stack does not start.
	start func(t testing.TB, pageOrigin string) *stackServer
}

// stackServer is a running stack, as the scenario runner needs it.
type stackServer struct {
	MCPURL     string // the MCP endpoint the page connects to
	ClientOpts string // extra client() options as a JS object literal body ("" for none), e.g. `clientId: "x"`
	// Consent signs in and approves or denies in the popup, which shows
	// the stack's first page of the sign-in.
	Consent  func(t *testing.T, ctx context.Context, popup engine.Window, approve bool)
	TokenTTL time.Duration // access token lifetime; the runner waits past it to see a refresh
	StepUp   string        // "" when the stack has no step-up; else the tool that needs a higher scope
	Requests func() []string
	// JWTAccessTokens: the AS cannot revoke its access tokens (RFC 7009
	// unsupported_token_type), so the old one works until it expires.
	JWTAccessTokens bool
	// Refused, when set, is how the client refuses the stack's sign-in
	// by design; its later steps are then not run.
	Refused *refusal
	// Endpoints, when set, are the authorization server's endpoint paths
	// the page is given by hand (in ClientOpts); else they are read from
	// the metadata the MCP server leads to.
	Endpoints *asEndpoints
	// Facts are what the stack's documentation leads a deployer to,
	// logged beside the run (its protocol era, its token format).
	Facts string
}

var stacks []stack

// refusal is a sign-in the client must refuse: its error code, words of
// its message, and why it must.
type refusal struct{ Code, Says, Why string }

// stackBootPath is blankPage's boot.js on the stack page: it sets the
// runtime mode always (where a preload script set it too, to the same).
const stackBootPath = "/e2e/boot.js"

// stackPage is the page server of the stacks: one origin for the test
// binary's pass, so a stack started once can allow-list it.
var stackPage = sync.OnceValue(func() *httptest.Server {
	mux := http.NewServeMux()
	mux.HandleFunc("/e2e/blank.html", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Cache-Control", "no-store")
		fmt.Fprint(w, blankPage)
	})
	mux.HandleFunc(stackBootPath, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/javascript; charset=utf-8")
		w.Header().Set("Cache-Control", "no-store")
		fmt.Fprint(w, bootJS)
		fmt.Fprintf(w, "globalThis.__mcpwasmRuntime = %q;\n", runtimeMode())
	})
	mux.Handle("/", webserve.Handler(devserver.Site(os.DirFS(webDir))))
	return httptest.NewServer(mux)
})

// stackSteps are the steps of a stack's scenario, in order; each builds
// on the ones before. Steps of the second phase run once every stack's
// access token has expired (one wait for all).
var stackSteps = []struct {
	name   string
	run    func(t *testing.T, r *stackRun)
	phase2 bool
	// everyPass: when TestStacks runs in both runtimes of an engine
	// (E2E_PLAN=full), the step runs in both; the others run in the
	// default runtime's pass only (the full matrix in both costs more than
	// it finds: the runtime changes where requests are made, which
	// sign-in, a call and a reload exercise). Under the pairwise plan
	// TestStacks has one pass per engine, which runs every step.
	everyPass bool
}{
	{"discovery", stepDiscovery, false, true},
	{"deny", stepDeny, false, false},
	{"sign-in", stepSignIn, false, true},
	{"tool-call", stepToolCall, false, true},
	{"step-up", stepStepUp, false, false},
	{"reload", stepReload, false, true},
	{"refresh", stepRefresh, true, false},
	{"logout", stepLogout, true, false},
}

// TestStacks runs one scenario against every stack, a subtest per stack
// and step (TestStacks/<stack>/<step>), so the table stack × step reads
// off the output. The stacks start at once; then each runs its steps in
// turn in one window (WebKit's driver has one session at a time; grants
// are kept per server, so the stacks do not see each other's), with one
// wait for every stack's token to expire before the refresh steps. The
// first step of a stack that fails ends that stack's run.
func TestStacks(t *testing.T) {
	// Under the pairwise plan this is the scenario's one pass in this
	// engine, which runs every step.
	allSteps := eitherRuntime(t) || runtimeMode() == "auto"
	sort.Slice(stacks, func(i, j int) bool { return stacks[i].name < stacks[j].name })
	page := stackPage()
	t.Cleanup(page.Close)

	// The stacks start at once, each in a goroutine of its own whose
	// failure fails TestStacks and leaves that stack out; what a start
	// leaves running lasts until TestStacks ends.
	servers := make([]*stackServer, len(stacks))
	var started sync.WaitGroup
	for i, s := range stacks {
		started.Go(func() {
			begin := time.Now()
			servers[i] = s.start(&starter{TB: t, name: s.name}, page.URL)
			t.Logf("%s started in %v", s.name, time.Since(begin).Round(100*time.Millisecond))
		})
	}
	started.Wait()

	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	t.Cleanup(cancel)
	w := &world{t: t, ctx: ctx, counts: map[string]int{}, start: time.Now(), PageURL: page.URL}
	w.open()
	w.navigate(w.win, page.URL+"/e2e/blank.html")
	loadStackPage(w)

	var runs []*stackRun
	for i, s := range stacks {
		if servers[i] == nil {
			continue
		}
		ep := servers[i].Endpoints
		if ep == nil {
			e := endpointsOf(t, servers[i].MCPURL)
			ep = &e
		}
		runs = append(runs, &stackRun{name: s.name, srv: servers[i], w: w, ep: *ep})
	}
	phase := func(second bool) {
		for _, r := range runs {
			for _, s := range stackSteps {
				if s.phase2 != second || r.failed {
					continue
				}
				t.Run(r.name+"/"+s.name, func(t *testing.T) {
					if r.refused != "" {
						t.Skipf("not run: the client refused %s's sign-in by design (%s)", r.name, r.refused)
					}
					if !s.everyPass && !allSteps {
						t.Skipf("runs in the default runtime's pass only; this pass (%s) runs %s", runtimeMode(), everyPassSteps())
					}
					r.w.t = t
					defer func() {
						r.w.t = w.t
						if t.Failed() {
							r.failed = true
							t.Logf("%s's later steps are not run: they depend on this one", r.name)
						}
					}()
					s.run(t, r)
				})
			}
		}
	}
	phase(false)
	var expire time.Time
	for _, r := range runs {
		if !r.failed && !r.issued.IsZero() {
			if e := r.issued.Add(r.srv.TokenTTL + time.Second); e.After(expire) {
				expire = e
			}
		}
	}
	if allSteps && time.Until(expire) > 0 {
		t.Logf("waiting %v for every stack's access token to expire", time.Until(expire).Round(time.Second))
		time.Sleep(time.Until(expire))
	}
	phase(true)
}

// everyPassSteps names the steps that run in every runtime's pass.
func everyPassSteps() string {
	var names []string
	for _, s := range stackSteps {
		if s.everyPass {
			names = append(names, s.name)
		}
	}
	return strings.Join(names, ", ")
}

// loadStackPage imports mcp.js into the stack window as window.mcp. Before
// it, the page's fetch is wrapped to keep the last bearer token sent to
// each origin (window.lastBearer): on the main thread the client's
// requests go through it, which lets the logout step replay the old
// token; in a worker runtime the token never reaches the page.
func loadStackPage(w *world) {
	w.t.Helper()
	w.eval(`(async () => {
		const f = window.fetch;
		window.lastBearer = {};
		window.fetch = (input, init) => {
			const h = new Headers(init?.headers ?? (input instanceof Request ? input.headers : undefined));
			const a = h.get("authorization");
			if (a) window.lastBearer[new URL(input instanceof Request ? input.url : String(input), location.href).origin] = a;
			return f(input, init);
		};
		const m = await import("/mcp.js");
		window.MCPError = m.MCPError;
		window.mcp = await m.load();
		window.stackClients = {};
	})()`, nil)
}

// stackRun is one stack's scenario state.
type stackRun struct {
	name   string
	srv    *stackServer
	w      *world
	issued time.Time // when the page last got a new token from a sign-in
	// asked is when the sign-in that got that token began: the token is
	// no older than this.
	asked    time.Time
	reqsMark int // len(srv.Requests()) at the last mark
	ep       asEndpoints
	failed   bool
	refused  string // why the client refused the stack's sign-in, by design
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

// settle waits until the AS's request log has stopped growing (a stack
// that reads its server's log sees a request a moment after its
// response): two reads 150 ms apart that agree.
func (r *stackRun) settle() {
	if r.srv.Requests == nil {
		return
	}
	n := len(r.srv.Requests())
	for range 20 {
		time.Sleep(150 * time.Millisecond)
		m := len(r.srv.Requests())
		if m == n {
			return
		}
		n = m
	}
}

// use makes window.c this stack's client, creating one when the page has
// none (as after a reload) and, with connect, connecting it from the
// stored grant; interactive, a call that needs more scope may open the
// popup (as a call from a click does).
func (r *stackRun) use(connect bool) {
	r.w.t.Helper()
	var got struct {
		Error *jsErr `json:"error"`
	}
	r.w.eval(fmt.Sprintf(`(async () => {
		if (stackClients[%[1]q]) return (window.c = stackClients[%[1]q], {});
		window.c = stackClients[%[1]q] = mcp.client(%[2]q, { %[3]s });
		return %[4]v ? c.connect().then(() => ({}), `+catchJS+`) : {};
	})()`, r.name, r.srv.MCPURL, r.clientOpts(true), connect), &got)
	if got.Error != nil {
		r.w.t.Fatalf("connecting the page's new client from the stored grant: %+v", got.Error)
	}
}

func (r *stackRun) clientOpts(interactive bool) string {
	opts := fmt.Sprintf("interactive: %v", interactive)
	if r.srv.ClientOpts != "" {
		opts += ", " + r.srv.ClientOpts
	}
	return opts
}

// stepDiscovery: connect() without a grant finds the server wants a
// sign-in (the 401 challenge and the metadata behind it), with no error in
// the page's console.
func stepDiscovery(t *testing.T, r *stackRun) {
	r.since()
	r.w.eval(fmt.Sprintf(`void delete stackClients[%q]`, r.name), nil)
	var got struct {
		Error *jsErr `json:"error"`
		State string `json:"state"`
	}
	r.w.eval(fmt.Sprintf(`(async () => {
		const c = mcp.client(%q, { %s });
		const x = await c.connect().then(() => ({}), `+catchJS+`);
		return { ...x, state: c.state };
	})()`, r.srv.MCPURL, r.clientOpts(false)), &got)
	if got.Error == nil || got.Error.Code != "auth_required" || got.State != "needs_auth" {
		t.Fatalf("connect() without a grant: %+v, state %q; want auth_required, needs_auth", got.Error, got.State)
	}
	r.settle()
	t.Logf("requests: %v", r.since())
	if r.srv.Facts != "" {
		t.Logf("the stack: %s", r.srv.Facts)
	}
	r.w.noConsoleErrors(r.w.win)
}

// noConsoleErrors fails the test for any error the window's console or
// page reported so far.
func (w *world) noConsoleErrors(win engine.Window) {
	w.t.Helper()
	errs, err := win.Errors(w.ctx)
	if err != nil {
		w.t.Fatalf("reading the page's errors: %v", err)
	}
	if errs = pageErrors(errs); len(errs) > 0 {
		w.t.Errorf("the page's console has errors:\n  %s", strings.Join(errs, "\n  "))
	}
}

// signIn starts c.authorize() (or start, when not nil) in a click and
// returns the popup.
func (r *stackRun) signIn(start string) engine.Window {
	r.w.t.Helper()
	wait, err := r.w.win.ExpectPopup(r.w.ctx)
	if err != nil {
		r.w.t.Fatal(err)
	}
	if start == "" {
		start = `void (window.result = null, c.authorize().then(() => { result = { ok: true, state: c.state }; },
			(e) => { result = { error: { name: e.name, code: e.code, message: e.message + " — " + (e.detail ?? "") }, state: c.state }; }))`
	}
	if err := r.w.win.Gesture(r.w.ctx, start); err != nil {
		r.w.t.Fatalf("gesture: %v", err)
	}
	return r.w.popup(wait, "the sign-in popup of "+r.name)
}

// awaitResult waits (bounded) for window[name] and decodes it into out.
func (r *stackRun) awaitResult(name string, out any) {
	r.w.t.Helper()
	r.w.eval(fmt.Sprintf(`(async () => {
		for (let i = 0; i < 1200 && !window.%[1]s; i++) await new Promise((r) => setTimeout(r, 50));
		return window.%[1]s ?? { state: c.state, error: { code: "test_timeout", message: "did not settle in 60s" } };
	})()`, name), out)
}

// stepDeny: Deny on the consent page rejects authorize() with declined.
func stepDeny(t *testing.T, r *stackRun) {
	r.use(false)
	popup := r.signIn("")
	r.srv.Consent(t, r.w.ctx, popup, false)
	var got loginResult
	r.awaitResult("result", &got)
	if got.Error == nil || got.Error.Code != "declined" || got.State != "declined" {
		t.Fatalf("authorize() after Deny: %+v; want declined, state declined", got)
	}
	r.settle()
	t.Logf("requests: %v", r.since())
}

// stepSignIn: a new authorize() from a click, Approve, connected; or,
// for a stack the client refuses by design, that refusal.
func stepSignIn(t *testing.T, r *stackRun) {
	r.use(false)
	asked := time.Now()
	popup := r.signIn("")
	r.srv.Consent(t, r.w.ctx, popup, true)
	var got loginResult
	r.awaitResult("result", &got)
	if want := r.srv.Refused; want != nil {
		if got.Error == nil || got.Error.Code != want.Code || !strings.Contains(got.Error.Message, want.Says) {
			t.Fatalf("authorize() after Approve: %+v; want %s saying %q (%s)", got, want.Code, want.Says, want.Why)
		}
		r.refused = want.Why
		t.Logf("refused as it must be: %s: %s", got.Error.Code, got.Error.Message)
		return
	}
	if !got.OK || got.State != "connected" {
		t.Fatalf("authorize() after Approve: %+v; want connected (requests: %v)", got, r.since())
	}
	r.issued, r.asked = time.Now(), asked
	r.settle()
	reqs := r.since()
	t.Logf("requests: %v", reqs)
	if tok := "POST " + r.ep.Token; reqs != nil && countPrefix(reqs, tok) != 1 {
		t.Errorf("token requests during the sign-in = %d; want 1 (the code exchange)", countPrefix(reqs, tok))
	}
	r.w.noConsoleErrors(r.w.win)
}

// callAdd calls tool(a, b) and returns the sum.
func (r *stackRun) callAdd(tool string, a, b int) (float64, *jsErr) {
	r.w.t.Helper()
	var got struct {
		Sum   float64 `json:"sum"`
		Error *jsErr  `json:"error"`
	}
	r.w.eval(fmt.Sprintf(`c.callTool(%q, { a: %d, b: %d }).then((x) => ({ sum: x.structuredContent?.sum ?? Number(x.content?.[0]?.text) }), %s)`, tool, a, b, catchJS), &got)
	return got.Sum, got.Error
}

func stepToolCall(t *testing.T, r *stackRun) {
	r.use(true)
	if sum, err := r.callAdd("add", 1, 2); err != nil || sum != 3 {
		t.Fatalf("add(1, 2) = %v, %+v; want 3", sum, err)
	}
	r.settle()
	r.since()
}

// stepStepUp: the tool that needs more scope answers 403
// insufficient_scope; the client asks for consent again (in a click) and
// retries the call. A stack whose sign-in already granted that scope
// answers the call at once, with no popup.
func stepStepUp(t *testing.T, r *stackRun) {
	if r.srv.StepUp == "" {
		t.Skip("the stack has no step-up (no tool needs a higher scope)")
	}
	r.use(true)
	asked := time.Now()
	t.Cleanup(func() {
		if t.Failed() {
			var s any
			_ = r.w.win.Eval(r.w.ctx, `({ stepped: window.stepped, state: c.state })`, &s)
			t.Logf("the call that needed more scope: %v", s)
		}
	})
	wait, err := r.w.win.ExpectPopup(r.w.ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.w.win.Gesture(r.w.ctx, fmt.Sprintf(`void (window.stepped = null, c.callTool(%q, { a: 20, b: 22 }).then(
		(x) => { stepped = { sum: x.structuredContent?.sum ?? Number(x.content?.[0]?.text) }; }, (e) => { stepped = { error: { code: e.code, message: e.message } }; }))`, r.srv.StepUp)); err != nil {
		t.Fatalf("gesture: %v", err)
	}
	popups := make(chan engine.Window, 1)
	waitCtx, stop := context.WithCancel(r.w.ctx)
	defer stop()
	go func() {
		p, _ := wait(waitCtx)
		popups <- p
	}()
	var popup engine.Window
	r.w.waitFor("the step-up popup or the call's answer", func() bool {
		select {
		case popup = <-popups:
			return popup != nil
		default:
		}
		var settled bool
		_ = r.w.win.Eval(r.w.ctx, `!!window.stepped`, &settled)
		return settled
	})
	consented := popup != nil
	if consented {
		r.w.track(popup)
		r.srv.Consent(t, r.w.ctx, popup, true)
	}
	var got struct {
		Sum   float64 `json:"sum"`
		Error *jsErr  `json:"error"`
	}
	r.awaitResult("stepped", &got)
	if popup == nil && got.Error != nil && got.Error.Code == "popup_blocked" {
		// Firefox opens no window once the click's event has been
		// handled: the call's 403 comes later. The page then does what
		// the error says: authorize() from a click, and the call again.
		t.Logf("%s: the call's step-up could not open a window (%s); authorize() from a click", browser.Name(), got.Error.Message)
		var state string
		r.w.waitFor("the client to leave authorizing after the blocked window", func() bool {
			_ = r.w.win.Eval(r.w.ctx, `c.state`, &state)
			return state != "authorizing"
		})
		if state != "connected" {
			t.Errorf("state after the blocked step-up = %q; want connected (the grant still works for what it covers)", state)
		}
		r.srv.Consent(t, r.w.ctx, r.signIn(""), true)
		var li loginResult
		r.awaitResult("result", &li)
		if !li.OK {
			t.Fatalf("authorize() for the step-up: %+v", li)
		}
		sum, err := r.callAdd(r.srv.StepUp, 20, 22)
		got.Sum, got.Error = sum, err
		consented = true
	}
	if got.Sum != 42 {
		t.Fatalf("%s after step-up = %+v; want sum 42", r.srv.StepUp, got)
	}
	r.settle()
	if !consented {
		t.Logf("the sign-in's token already carried the scope %s needs: no step-up; requests: %v", r.srv.StepUp, r.since())
		return
	}
	r.issued, r.asked = time.Now(), asked
	t.Logf("requests: %v", r.since())
}

// stepReload: after a reload the page connects from the grant in
// IndexedDB: no popup, no authorization, token or registration request.
func stepReload(t *testing.T, r *stackRun) {
	began := time.Now()
	r.settle()
	r.since()
	if err := r.w.win.Reload(r.w.ctx); err != nil {
		t.Fatalf("reload: %v", err)
	}
	loadStackPage(r.w)
	r.use(false)
	var got struct {
		Error *jsErr `json:"error"`
		State string `json:"state"`
	}
	r.w.eval(`(async () => {
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
		n := countPrefix(reqs, p)
		// A token past half its life is refreshed before it is used:
		// on a busy machine the steps since the sign-in can take that
		// long, and then one refresh is what the client must do.
		if p == "POST "+r.ep.Token && n == 1 && time.Since(r.asked) > r.srv.TokenTTL/2 {
			t.Logf("the reload refreshed the token: %v since the sign-in began, past half the token's life (%v)", time.Since(r.asked).Round(time.Second), r.srv.TokenTTL)
			r.issued, r.asked = time.Now(), began
			continue
		}
		if n != 0 {
			t.Errorf("the reload made %d %q requests; want none", n, p)
		}
	}
	r.w.noConsoleErrors(r.w.win)
}

// stepRefresh: once the access token has expired, a call still works
// (the client refreshed it), with one refresh request.
func stepRefresh(t *testing.T, r *stackRun) {
	if wait := time.Until(r.issued.Add(r.srv.TokenTTL + time.Second)); wait > 0 {
		t.Logf("waiting %v more for the access token (%v) to expire", wait.Round(time.Second), r.srv.TokenTTL)
		time.Sleep(wait)
	}
	r.since()
	r.use(true)
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
	r.use(true)
	r.since()
	var got struct {
		Error *jsErr `json:"error"`
		State string `json:"state"`
		Again string `json:"again"`
	}
	mcpOrigin := r.srv.MCPURL
	if u, err := url.Parse(r.srv.MCPURL); err == nil {
		mcpOrigin = u.Scheme + "://" + u.Host
	}
	var bearer string
	r.w.eval(fmt.Sprintf(`window.lastBearer[%q] ?? ""`, mcpOrigin), &bearer)
	revocation := r.ep.Revocation
	r.w.eval(fmt.Sprintf(`(async () => {
		const x = await c.logout().then(() => ({}), `+catchJS+`);
		const d = mcp.client(%q, { %s });
		const again = await d.connect().then(() => "connected", (e) => e.code);
		return { ...x, state: c.state, again };
	})()`, r.srv.MCPURL, r.clientOpts(false)), &got)
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
	if !get(mu.Scheme+"://"+mu.Host+"/.well-known/oauth-protected-resource"+mu.Path, &prm) &&
		!get(mu.Scheme+"://"+mu.Host+"/.well-known/oauth-protected-resource", &prm) || len(prm.AS) == 0 {
		t.Fatalf("%s has no protected resource metadata naming its authorization server", mcpURL)
	}
	as, err := url.Parse(prm.AS[0])
	if err != nil {
		t.Fatal(err)
	}
	var md asEndpoints
	path := strings.TrimSuffix(as.Path, "/")
	if !get(as.Scheme+"://"+as.Host+"/.well-known/oauth-authorization-server"+path, &md) &&
		!get(as.Scheme+"://"+as.Host+path+"/.well-known/openid-configuration", &md) &&
		!get(as.Scheme+"://"+as.Host+"/.well-known/openid-configuration"+path, &md) {
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

// starter is the testing.TB a stack starts with beside the others: its
// Fatal fails the test and ends only the goroutine of that stack's start.
type starter struct {
	testing.TB
	name string
}

func (s *starter) Fatalf(format string, args ...any) {
	s.TB.Helper()
	s.TB.Errorf("starting %s: "+format, append([]any{s.name}, args...)...)
	runtime.Goexit()
}

func (s *starter) Fatal(args ...any) { s.TB.Helper(); s.Fatalf("%s", fmt.Sprint(args...)) }
