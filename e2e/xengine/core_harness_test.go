package xengine

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/mcpwasm/mcpwasm/demo"
	"github.com/mcpwasm/mcpwasm/devkit/devserver"
	"github.com/mcpwasm/mcpwasm/e2e/engine"
)

// The helpers of the client, catalog, agent and runtime scenarios.

// blankWorld is newWorld without mcp.js loaded: the scenario loads it
// itself (its own options, its own module URL).
func blankWorld(t *testing.T, ac devserver.AuthConfig) *world {
	t.Helper()
	w := newServers(t, ac, os.DirFS(webDir), nil)
	w.open()
	w.navigate(w.win, w.PageURL+"/e2e/blank.html")
	return w
}

// loadRuntime imports a module instance of mcp.js of its own (its own
// URL: a load() of its own) into win as window[name], in runtime, and
// returns the runtime it picked.
func (w *world) loadRuntime(win engine.Window, name, runtime string) string {
	w.t.Helper()
	var got string
	w.evalIn(win, fmt.Sprintf(`(async () => {
		const m = await import("/mcp.js?%s");
		window.MCPError ??= m.MCPError;
		window[%q] = await m.load({ runtime: %q });
		return window[%[2]q].runtime;
	})()`, name, name, runtime), &got)
	return got
}

// loadShared is loadRuntime in the shared-worker runtime; it skips the
// scenario in an engine where load() runs Go elsewhere (WebKit: its
// SharedWorker cannot keep the non-extractable WebCrypto keys a sign-in
// stores, so load() takes a dedicated Worker and there is no runtime for
// tabs to share).
func (w *world) loadShared(t *testing.T, win engine.Window, name string) {
	t.Helper()
	skipUnlessShared(t, w.loadRuntime(win, name, "shared-worker"))
}

// skipUnlessShared skips t when load({ runtime: "shared-worker" })
// picked got instead.
func skipUnlessShared(t *testing.T, got string) {
	t.Helper()
	if got != "shared-worker" {
		t.Skipf("load({ runtime: \"shared-worker\" }) runs Go in %q in %s: its SharedWorker cannot keep the WebCrypto keys a sign-in stores (web/mcp.js), so no runtime is shared", got, browser.Name())
	}
}

// withWorkers skips a scenario that chooses worker runtimes itself in
// the main pass, which would run it again as it is.
func withWorkers(t *testing.T) {
	t.Helper()
	if runtimeMode() == "main" {
		t.Skip("it chooses its runtimes itself (workers among them); it runs in the auto pass")
	}
}

// demoRecorder is a demo MCP server without sign-in of the scenario's
// own, which records the JSON-RPC methods it receives, the tools whose
// calls were cancelled and the sessions ended (DELETE).
type demoRecorder struct {
	URL       string
	mu        sync.Mutex
	methods   []string
	cancelled []string
	deletes   int
}

func newDemoRecorder(t *testing.T) *demoRecorder {
	t.Helper()
	d := &demoRecorder{}
	h := demo.Handler(demo.Options{
		OnRequest:   func(m string) { d.mu.Lock(); d.methods = append(d.methods, m); d.mu.Unlock() },
		OnCancelled: func(tool string) { d.mu.Lock(); d.cancelled = append(d.cancelled, tool); d.mu.Unlock() },
	})
	s := serve(t, http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodDelete {
			d.mu.Lock()
			d.deletes++
			d.mu.Unlock()
		}
		h.ServeHTTP(rw, r)
	}))
	d.URL = s.URL + demo.StreamablePath
	return d
}

func (d *demoRecorder) saw(method string) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return slices.Contains(d.methods, method)
}

func (d *demoRecorder) cancelledTool(tool string) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return slices.Contains(d.cancelled, tool)
}

func (d *demoRecorder) sessionsEnded() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.deletes
}

// everythingServer runs the pinned reference TypeScript server
// (@modelcontextprotocol/server-everything, e2e/node) on loopback over
// Streamable HTTP and returns its MCP URL.
func everythingServer(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(repo, "e2e", "node")
	p := startStackProc(t, "server-everything", dir, nil, "LISTENING ", "node", "run-everything.mjs", "streamableHttp")
	for _, l := range p.lines() {
		if port, ok := strings.CutPrefix(l, "LISTENING "); ok {
			return "http://127.0.0.1:" + strings.TrimSpace(port) + "/mcp"
		}
	}
	t.Fatalf("server-everything said no port:\n%s", strings.Join(p.lines(), "\n"))
	return ""
}

// watchCatalogJS makes window.cat over servers (a JS object literal of
// catalog options) and records its events in window.catEvents.
const watchCatalogJS = `(() => {
	window.catEvents = [];
	window.cat = mcp.catalog(%s);
	for (const t of ["statuschange", "toolschanged", "authrequired", "warning"]) {
		cat.addEventListener(t, (ev) => catEvents.push({ type: t, ...ev.detail }));
	}
})()`

type catalogEvent struct {
	Type   string `json:"type"`
	ID     string `json:"id"`
	Status struct {
		State   string `json:"state"`
		Breaker string `json:"breaker"`
	} `json:"status"`
}

// catalogEvents returns and clears window.cat's events.
func (w *world) catalogEvents() []catalogEvent {
	w.t.Helper()
	var evs []catalogEvent
	w.eval(`(() => { const v = catEvents; catEvents = []; return v; })()`, &evs)
	return evs
}

func countEvents(evs []catalogEvent, typ string) int {
	n := 0
	for _, ev := range evs {
		if ev.Type == typ {
			n++
		}
	}
	return n
}

// catalogStatus is one server's cat.status(id).
type catalogStatus struct {
	State    string `json:"state"`
	Tools    int    `json:"tools"`
	Idle     bool   `json:"idle"`
	Required bool   `json:"required"`

	PendingSignIn bool `json:"pendingSignIn"`
}

func (w *world) catalogStatus(id string) catalogStatus {
	w.t.Helper()
	var st catalogStatus
	w.eval(fmt.Sprintf(`cat.status(%q)`, id), &st)
	return st
}

// catalogTools lists the names of window.cat's tools().
func (w *world) catalogTools() []string {
	w.t.Helper()
	var names []string
	w.eval(`(async () => (await cat.tools()).map((t) => t.name))()`, &names)
	return names
}

func anyPrefixed(names []string, prefix string) bool {
	return slices.ContainsFunc(names, func(n string) bool { return strings.HasPrefix(n, prefix) })
}

// pageToolResult is a tool result as the page reads it.
type pageToolResult struct {
	IsError bool   `json:"isError"`
	Text    string `json:"text"`
}

// catalogCall runs window.cat.callTool(name, args).
func (w *world) catalogCall(name, args string) pageToolResult {
	w.t.Helper()
	var r pageToolResult
	w.eval(fmt.Sprintf(`(async () => {
		const r = await cat.callTool(%q, %s);
		return { isError: !!r.isError, text: r.content.map((c) => c.text ?? "").join("\n") };
	})()`, name, args), &r)
	return r
}

// standinAgentJS makes window.cat over servers (a JS object literal) and
// window.agent over the stand-in model at modelURL; more are further
// catalog options ("approve: …").
func standinAgentJS(servers, modelURL string, more ...string) string {
	opt := ""
	for _, m := range more {
		opt += ", " + m
	}
	return fmt.Sprintf(`(() => {
		window.cat = mcp.catalog({ servers: %s%s });
		window.agent = cat.agent({ model: mcp.models.openai({ baseURL: %q, model: "mcpwasm-standin" }) });
	})()`, servers, opt, modelURL)
}

// startRun starts window.agent.run(input), recording its events in
// window.runEvents and its outcome in window.outcome; window.ctl aborts it.
func (w *world) startRun(input string) {
	w.t.Helper()
	w.eval(fmt.Sprintf(`void (() => {
		window.runEvents = [];
		window.outcome = null;
		window.ctl = new AbortController();
		const turn = agent.run(%q, { signal: ctl.signal, onEvent: (ev) => runEvents.push(ev) });
		turn.done.then((r) => { outcome = { text: r.text, finishReason: r.finishReason }; },
			(e) => { outcome = { error: e.code, message: e.message }; });
	})()`, input), nil)
}

type runOutcome struct {
	Text         string `json:"text"`
	FinishReason string `json:"finishReason"`
	Error        string `json:"error"`
	Message      string `json:"message"`
}

// awaitRun waits for the run startRun started to end.
func (w *world) awaitRun() runOutcome {
	w.t.Helper()
	var o *runOutcome
	w.waitFor("the agent's run to end", func() bool {
		_ = w.win.Eval(w.ctx, `window.outcome`, &o)
		return o != nil
	})
	return *o
}

type runEvent struct {
	Type      string `json:"type"`
	Name      string `json:"name"`
	ServerID  string `json:"serverId"`
	Approved  bool   `json:"approved"`
	DecidedBy string `json:"decidedBy"`
}

func (w *world) runEvents() []runEvent {
	w.t.Helper()
	var evs []runEvent
	w.eval(`runEvents`, &evs)
	return evs
}

// countRunEvents counts window.runEvents of type typ.
func (w *world) countRunEvents(typ string) int {
	var n int
	_ = w.win.Eval(w.ctx, fmt.Sprintf(`runEvents.filter((e) => e.type === %q).length`, typ), &n)
	return n
}

// consentShown waits until popup shows the consent page.
func (w *world) consentShown(popup engine.Window) {
	w.t.Helper()
	w.waitFor("the consent page", func() bool {
		var shown bool
		_ = popup.Eval(w.ctx, `document.readyState === "complete" && !!document.querySelector("#approve")`, &shown)
		return shown
	})
}

// closeAsAPerson closes the sign-in popup as a person does after reading
// the consent page: later than the severance window the page's test hook
// shortened to severWindowMs (a sooner close is taken for a
// Cross-Origin-Opener-Policy severance, web/auth.js). The page must have
// set globalThis.__mcpwasmSeverWindowMs = severWindowMs before its sign-in.
func (w *world) closeAsAPerson(popup engine.Window) {
	w.t.Helper()
	w.consentShown(popup)
	var waited bool
	w.evalIn(popup, fmt.Sprintf(`new Promise((r) => setTimeout(() => r(true), %d))`, severWindowMs+150), &waited)
	if err := popup.Close(); err != nil {
		w.t.Logf("closing the popup: %v", err)
	}
}

// severWindowMs is the severance window the catalog scenarios set.
const severWindowMs = 250
