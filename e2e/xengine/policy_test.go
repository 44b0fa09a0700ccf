package xengine

import (
	"fmt"
	"net/url"
	"strings"
	"testing"

	"github.com/mcpwasm/mcpwasm/devkit/devserver"
)

// requestsTo counts the requests the servers' trace recorded for the
// server named name ("mcp2", "as", …), preflights included: what left the
// page for it.
func (w *world) requestsTo(name string) (n int, lines []string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, l := range w.trace {
		if _, rest, ok := strings.Cut(l, "s "+name+" "); ok && strings.HasSuffix(rest, " began") {
			n++
			lines = append(lines, l)
		}
	}
	return n, lines
}

func originOf(t *testing.T, raw string) string {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	return u.Scheme + "://" + u.Host
}

// TestHostPolicy: with mcp.policy() listing the protected demo server, the
// open one and the demo authorization server, a server it does not list
// is refused (mcp.client(), a pasted mcpServers configuration, cat.add())
// and a server whose authorization server a catalog's narrower policy
// does not trust is refused at sign-in, with code policy, and neither
// gets a single request; the policy cannot be set again; the listed
// server still signs in through a popup and calls a tool.
func TestHostPolicy(t *testing.T) {
	eitherRuntime(t)
	w := newWorld(t, devserver.AuthConfig{})
	policy := fmt.Sprintf(`{ servers: [%q, %q], issuers: [%q] }`,
		originOf(t, w.MCPURL)+"/*", originOf(t, w.OpenURL)+"/*", originOf(t, w.ASURL))
	var got struct {
		Client  jsErr    `json:"client"`
		Again   jsErr    `json:"again"`
		Warn    []string `json:"warnings"`
		Add     jsErr    `json:"add"`
		Tools   []string `json:"tools"`
		Servers []string `json:"servers"`
	}
	w.eval(fmt.Sprintf(`(async () => {
		const caught = (f) => { try { f(); return { name: "none" }; } catch (e) { return { name: e.name, code: e.code, message: e.message }; } };
		mcp.policy(%s);
		const client = caught(() => mcp.client(%q));
		const again = caught(() => mcp.policy({ servers: ["https://*/*"] }));
		const cat = mcp.catalog({ mcpServers: { open: { url: %q }, other: { url: %q } } });
		const add = caught(() => cat.add("other2", { url: %q }));
		const tools = (await cat.tools()).map((t) => t.serverId + ":" + t.name);
		window.narrow = mcp.catalog({ servers: { prot: { url: %q } }, policy: { issuers: ["https://login.corp.example"] } });
		return { client, again, warnings: cat.warnings, add, tools, servers: Object.keys(cat.status()) };
	})()`, policy, w.MCP2URL, w.OpenURL, w.MCP2URL, w.MCP2URL, w.MCPURL), &got)

	wantRefusal := func(what string, e jsErr) {
		t.Helper()
		if e.Name != "MCPError" || e.Code != "policy" || !strings.Contains(e.Message, "is not allowed by the page's policy (mcp.policy(), set by the page's code)") || !strings.Contains(e.Message, w.MCP2URL) {
			t.Errorf("%s: %+v; want MCPError policy naming the server and the page's policy", what, e)
		}
	}
	wantRefusal("mcp.client(unlisted)", got.Client)
	wantRefusal("cat.add(unlisted)", got.Add)
	if got.Again.Code != "invalid_argument" || !strings.Contains(got.Again.Message, "set already") {
		t.Errorf("a second mcp.policy(): %+v; want invalid_argument saying it is set already", got.Again)
	}
	if len(got.Warn) != 1 || !strings.Contains(got.Warn[0], `server "other"`) || !strings.Contains(got.Warn[0], "not allowed by the page's policy") {
		t.Errorf("catalog warnings = %q; want one for the unlisted server \"other\"", got.Warn)
	}
	if strings.Join(got.Servers, ",") != "open" {
		t.Errorf("catalog servers = %v; want only open", got.Servers)
	}
	if len(got.Tools) == 0 || !strings.HasPrefix(got.Tools[0], "open:") {
		t.Errorf("catalog tools = %v; want the open server's", got.Tools)
	}

	// The narrower catalog does not trust the demo authorization server:
	// its sign-in ends with policy before any request reaches it.
	if err := w.win.Gesture(w.ctx, `narrow.authorize("prot").then(() => { window.result = { ok: true }; },
		(e) => { window.result = { error: { name: e.name, code: e.code, message: e.message } }; })`); err != nil {
		t.Fatalf("gesture: %v", err)
	}
	var signIn loginResult
	w.eval(`(async () => {
		for (let i = 0; i < 600 && !window.result; i++) await new Promise((r) => setTimeout(r, 50));
		return window.result ?? { error: { code: "test_timeout", message: "authorize() did not settle in 30s" } };
	})()`, &signIn)
	if signIn.Error == nil || signIn.Error.Code != "policy" || !strings.Contains(signIn.Error.Message, "the catalog's policy") || !strings.Contains(signIn.Error.Message, "issuers list is https://login.corp.example") {
		t.Errorf("sign-in through the narrower catalog: %+v; want policy naming the catalog's issuers list", signIn)
	}
	if n, lines := w.requestsTo("mcp2"); n != 0 {
		t.Errorf("the unlisted server got %d requests; want none:\n%s", n, strings.Join(lines, "\n"))
	}
	if n, lines := w.requestsTo("as"); n != 0 {
		t.Errorf("the untrusted authorization server got %d requests before the allowed sign-in; want none:\n%s", n, strings.Join(lines, "\n"))
	}

	// The listed server, under the page's policy alone, signs in and
	// answers a tool call.
	if !w.signedIn(w.popupSignIn(`{}`)) {
		return
	}
	var sum float64
	w.eval(`(async () => (await c.callTool("add", { a: 40, b: 2 })).structuredContent.sum)()`, &sum)
	if sum != 42 {
		t.Errorf("add(40, 2) after sign-in = %v; want 42", sum)
	}
	w.noPageErrors()
}

// TestHostPolicyPerTab: two tabs of one origin (one SharedWorker runtime
// where the engine has one) keep their own policies. Tab A lists only the
// open demo server: Go itself refuses the second server for it, even when
// asked past the page's check (client.new straight to the runtime). Tab B
// has no policy and calls a tool of that second server in the same
// runtime.
func TestHostPolicyPerTab(t *testing.T) {
	w := newWorld(t, devserver.AuthConfig{})
	tabB := w.newTab()
	w.navigate(tabB, w.PageURL+"/e2e/blank.html")
	w.load(tabB)

	var a struct {
		Runtime string `json:"runtime"`
		Go      jsErr  `json:"go"`
		Sum     float64
	}
	w.eval(fmt.Sprintf(`(async () => {
		mcp.policy({ servers: [%q] });
		const go = await mcp._invoke("client.new", { id: "past-the-page", url: %q, options: {}, policy: mcp.currentPolicy })
			.then(() => ({ name: "none" }), (e) => ({ name: e.name, code: e.code, message: e.message }));
		const c = mcp.client(%q);
		await c.connect();
		const r = await c.callTool("add", { a: 2, b: 3 });
		return { runtime: String(mcp._runtimeId), go, Sum: r.structuredContent.sum };
	})()`, originOf(t, w.OpenURL)+"/*", w.MCP2URL, w.OpenURL), &a)
	if a.Go.Code != "policy" || !strings.Contains(a.Go.Message, w.MCP2URL) {
		t.Errorf("tab A, client.new past the page's check: %+v; want Go's policy refusal", a.Go)
	}
	if a.Sum != 5 {
		t.Errorf("tab A, the listed server's add(2, 3) = %v; want 5", a.Sum)
	}
	if n, lines := w.requestsTo("mcp2"); n != 0 {
		t.Errorf("the server tab A's policy refuses got %d requests from tab A; want none:\n%s", n, strings.Join(lines, "\n"))
	}

	var b struct {
		Runtime string `json:"runtime"`
		Text    string `json:"text"`
	}
	w.evalIn(tabB, fmt.Sprintf(`(async () => {
		const c = mcp.client(%q);
		await c.connect();
		const r = await c.callTool("reverse", { text: "abc" });
		return { runtime: String(mcp._runtimeId), text: r.content[0].text };
	})()`, w.MCP2URL), &b)
	if b.Text != "cba" {
		t.Errorf("tab B (no policy), reverse(abc) = %q; want cba", b.Text)
	}
	t.Logf("runtimes: tab A %s, tab B %s", a.Runtime, b.Runtime)
	if runtimeMode() == "auto" && browser.Name() == "chromium" && a.Runtime != b.Runtime {
		t.Errorf("in Chromium's auto runtime the tabs ran in runtimes %s and %s; want one SharedWorker", a.Runtime, b.Runtime)
	}
	w.noPageErrors()
}
