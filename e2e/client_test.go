package e2e

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

func TestLoadReportsProgressAndIsIdempotent(t *testing.T) {
	e := newEnv(t)
	var got struct {
		Same     bool      `json:"same"`
		Version  string    `json:"version"`
		Calls    int       `json:"calls"`
		Loaded   []float64 `json:"loaded"`
		Total    float64   `json:"total"`
		WasmSize float64   `json:"wasmSize"`
		Encoding string    `json:"encoding"`
	}
	// A fresh module in an iframe-free way: load() was already called by
	// newEnv, so a second call must return the same instance without
	// downloading again; progress is checked on a fresh tab below.
	e.eval(`(async () => {
		const again = await loadMCP({ onProgress: () => { throw new Error("must not download again"); } });
		return { same: again === mcp, version: mcp.version };
	})()`, &got)
	if !got.Same {
		t.Error("load() twice returned different instances")
	}
	if got.Version != "e2e" {
		t.Errorf("version = %q; want e2e (set by -ldflags)", got.Version)
	}

	// Progress: a new tab with a cold module (in a browser context of its
	// own: in this one a shared-worker runtime is already warm).
	e2 := &env{t: t, PageURL: e.PageURL}
	e2.openTab()
	e2.eval(`(async () => {
		const m = await import("/mcp.js");
		const loaded = []; let total = 0;
		await m.load({ onProgress: (l, t) => { loaded.push(l); total = t; } });
		const r = await fetch("/mcp.wasm");
		const size = (await r.arrayBuffer()).byteLength;
		return { calls: loaded.length, loaded, total, wasmSize: size, encoding: r.headers.get("Content-Encoding") };
	})()`, &got)
	if got.Calls < 3 {
		t.Errorf("onProgress called %d times; want a stream of reports", got.Calls)
	}
	last := got.Loaded[len(got.Loaded)-1]
	if last != got.WasmSize {
		t.Errorf("last progress loaded = %v bytes; want the module's %v bytes", last, got.WasmSize)
	}
	if !slices.IsSorted(got.Loaded) {
		t.Errorf("progress went backwards: %v", got.Loaded)
	}
	if got.Encoding != "gzip" {
		t.Errorf("mcp.wasm served with Content-Encoding %q; want the precompressed gzip", got.Encoding)
	}
	if got.Total != got.WasmSize {
		t.Errorf("progress total = %v; want the decoded size %v", got.Total, got.WasmSize)
	}
}

func TestConnectListAndCall(t *testing.T) {
	e := newEnv(t)
	var got struct {
		States     []string       `json:"states"`
		State      string         `json:"state"`
		Server     string         `json:"server"`
		Instr      bool           `json:"instr"`
		Tools      []string       `json:"tools"`
		Structured map[string]any `json:"structured"`
		Text       string         `json:"text"`
		IsError    bool           `json:"isError"`
		Echo       string         `json:"echo"`
		Resources  int            `json:"resources"`
		Templates  int            `json:"templates"`
		Prompts    int            `json:"prompts"`
		Read       string         `json:"read"`
		Prompt     int            `json:"prompt"`
	}
	e.eval(fmt.Sprintf(`(async () => {
		const c = mcp.client(%q);
		const states = [];
		c.addEventListener("statechange", (ev) => states.push(ev.detail.state));
		await c.connect();
		const tools = (await c.listTools()).map((t) => t.name);
		const r = await c.callTool("add", { a: 2, b: 40 });
		const echo = await c.callTool("echo", { text: "héllo" });
		const res = await c.listResources();
		const tpl = await c.listResourceTemplates();
		const prompts = await c.listPrompts();
		const read = await c.readResource(res[0].uri);
		const p = await c.getPrompt(prompts[0].name, Object.fromEntries((prompts[0].arguments || []).map((a) => [a.name, "x"])));
		await c.ping();
		return { states, state: c.state, server: c.serverInfo.name, instr: !!c.instructions, tools,
			structured: r.structuredContent, text: r.content[0].text, isError: r.isError,
			echo: echo.content[0].text, resources: res.length, templates: tpl.length, prompts: prompts.length,
			read: read.contents[0].text ?? "", prompt: p.messages.length };
	})()`, e.MCPURL), &got)
	if want := []string{"connecting", "connected"}; !slices.Equal(got.States, want) {
		t.Errorf("statechange events = %v; want %v", got.States, want)
	}
	if got.State != "connected" || got.Server == "" || !got.Instr {
		t.Errorf("state=%q serverInfo.name=%q instructions=%v", got.State, got.Server, got.Instr)
	}
	for _, name := range []string{"echo", "add", "slow", "ask_user", "summarize", "add_tool"} {
		if !slices.Contains(got.Tools, name) {
			t.Errorf("listTools = %v; missing %q", got.Tools, name)
		}
	}
	if got.Structured["sum"] != float64(42) || got.IsError {
		t.Errorf("add: structuredContent = %v isError=%v; want sum 42", got.Structured, got.IsError)
	}
	if !strings.Contains(got.Echo, "héllo") {
		t.Errorf("echo = %q", got.Echo)
	}
	if got.Resources < 1 || got.Templates < 1 || got.Prompts < 1 || got.Read == "" || got.Prompt < 1 {
		t.Errorf("resources=%d templates=%d prompts=%d read=%q promptMessages=%d", got.Resources, got.Templates, got.Prompts, got.Read, got.Prompt)
	}
}

func TestProgressArrivesBeforeResult(t *testing.T) {
	e := newEnv(t)
	var got struct {
		Runs [][]float64 `json:"runs"`
	}
	e.eval(fmt.Sprintf(`(async () => {
		const c = mcp.client(%q);
		await c.connect();
		const runs = [];
		for (let i = 0; i < 5; i++) {
			const seen = [];
			await c.callTool("slow", { steps: 6, delayMs: 5 }, { onProgress: (p) => seen.push(p.progress) });
			runs.push(seen.slice()); // what had arrived when the call resolved
		}
		return { runs };
	})()`, e.MCPURL), &got)
	for i, run := range got.Runs {
		if fmt.Sprint(run) != "[1 2 3 4 5 6]" {
			t.Errorf("run %d: progress seen before callTool resolved = %v; want [1 2 3 4 5 6]", i, run)
		}
	}
}

func TestAbortCancelsOnServer(t *testing.T) {
	e := newEnv(t)
	var got struct {
		Error  jsErr  `json:"error"`
		After  string `json:"after"`
		Before []float64
	}
	e.eval(fmt.Sprintf(`(async () => {
		const c = mcp.client(%q);
		await c.connect();
		const ac = new AbortController();
		const r = await c.callTool("slow", { steps: 100, delayMs: 50 }, {
			signal: ac.signal, onProgress: () => ac.abort(),
		}).then(() => ({}), %s);
		const after = await c.callTool("echo", { text: "still alive" });
		return { ...r, after: after.content[0].text };
	})()`, e.MCPURL, catchJS), &got)
	if got.Error.Code != "aborted" || got.Error.Name != "MCPError" {
		t.Errorf("aborted call rejected with %+v; want MCPError aborted", got.Error)
	}
	e.waitFor("the server to observe the cancellation", func() bool {
		return slices.Contains(e.cancelledTools(), "slow")
	})
	if !strings.Contains(got.After, "still alive") {
		t.Errorf("call after abort = %q", got.After)
	}
}

func TestTimeoutMs(t *testing.T) {
	e := newEnv(t)
	var got struct{ Error jsErr }
	e.eval(fmt.Sprintf(`(async () => {
		const c = mcp.client(%q);
		await c.connect();
		return c.callTool("slow", { steps: 100, delayMs: 50 }, { timeoutMs: 200 }).then(() => ({}), %s);
	})()`, e.MCPURL, catchJS), &got)
	if got.Error.Code != "timeout" {
		t.Errorf("timeoutMs: rejected with %+v; want timeout", got.Error)
	}
}

func TestElicitationAndSamplingHandlers(t *testing.T) {
	e := newEnv(t)
	var got struct {
		Elicit string `json:"elicit"`
		Params string `json:"params"`
		Sample string `json:"sample"`
		Thrown struct {
			IsError bool   `json:"isError"`
			Text    string `json:"text"`
			Error   *jsErr `json:"error"`
		} `json:"thrown"`
		After string `json:"after"`
	}
	e.eval(fmt.Sprintf(`(async () => {
		const c = mcp.client(%q);
		let fail = false, params = null;
		c.onElicitation = async (p) => {
			params = p;
			if (fail) throw new Error("the user's browser exploded");
			const value = (s) => s.enum ? s.enum[0] : s.type === "boolean" ? true : s.type === "number" || s.type === "integer" ? 7 : "Ada";
			const props = Object.entries(p.requestedSchema?.properties ?? {});
			return { action: "accept", content: Object.fromEntries(props.map(([k, s]) => [k, value(s)])) };
		};
		c.onSampling = async (p) => ({ role: "assistant", content: { type: "text", text: "a short summary" }, model: "test-model", stopReason: "endTurn" });
		await c.connect();
		const el = await c.callTool("ask_user", {});
		const sa = await c.callTool("summarize", { text: "a long text to summarize" });
		fail = true;
		const thrown = await c.callTool("ask_user", {}).then((r) => ({ isError: r.isError, text: r.content[0]?.text }), %s);
		fail = false;
		const after = await c.callTool("echo", { text: "next call works" });
		return { elicit: JSON.stringify(el), params: params.message ?? "", sample: JSON.stringify(sa), thrown, after: after.content[0].text };
	})()`, e.MCPURL, catchJS), &got)
	if !strings.Contains(got.Elicit, "accept") || !strings.Contains(got.Elicit, "Ada") {
		t.Errorf("ask_user result = %s; want the accepted answer", got.Elicit)
	}
	if got.Params == "" {
		t.Error("elicitation handler got no message")
	}
	if !strings.Contains(got.Sample, "a short summary") {
		t.Errorf("summarize result = %s; want the sampled text", got.Sample)
	}
	// The server heard an error, not an answer: the call fails, as a tool
	// error or a rejection, and says why.
	thrown := got.Thrown.Text
	if got.Thrown.Error != nil {
		thrown = got.Thrown.Error.Message
	}
	if !(got.Thrown.IsError || got.Thrown.Error != nil) || strings.Contains(thrown, "accept") {
		t.Errorf("a throwing elicitation handler gave %+v; want the call to fail", got.Thrown)
	}
	if !strings.Contains(got.After, "next call works") {
		t.Errorf("call after a throwing handler = %q", got.After)
	}

	// Without handlers the capabilities are not advertised: the server's
	// tool reports that the client cannot elicit.
	var plain struct {
		Text    string `json:"text"`
		IsError bool   `json:"isError"`
		Err     *jsErr `json:"error"`
	}
	e.eval(fmt.Sprintf(`(async () => {
		const c = mcp.client(%q);
		await c.connect();
		return c.callTool("ask_user", {}).then((r) => ({ text: r.content[0]?.text ?? "", isError: r.isError }), %s);
	})()`, e.MCPURL, catchJS), &plain)
	if plain.Err == nil && !plain.IsError {
		t.Errorf("ask_user without a handler = %+v; want an error (capability not advertised)", plain)
	}
}

func TestToolsChangedEvent(t *testing.T) {
	e := newEnv(t)
	var got struct {
		Events int      `json:"events"`
		Tools  []string `json:"tools"`
	}
	e.eval(fmt.Sprintf(`(async () => {
		const c = mcp.client(%q);
		await c.connect();
		let events = 0;
		const changed = new Promise((resolve) => c.addEventListener("toolschanged", () => { events++; resolve(); }));
		await c.callTool("add_tool", { name: "fresh_tool" });
		await Promise.race([changed, new Promise((_, rej) => setTimeout(() => rej(new Error("no toolschanged event in 10s")), 10000))]);
		const tools = (await c.listTools()).map((t) => t.name);
		return { events, tools };
	})()`, e.MCPURL), &got)
	if got.Events < 1 || !slices.Contains(got.Tools, "fresh_tool") {
		t.Errorf("toolschanged events = %d, tools = %v; want the event and fresh_tool", got.Events, got.Tools)
	}
}

func TestErrorsAreMCPErrors(t *testing.T) {
	e := newEnv(t)
	var got map[string]jsErr
	e.eval(fmt.Sprintf(`(async () => {
		const out = {};
		const grab = async (name, f) => {
			try { await f(); out[name] = { code: "none" }; }
			catch (e) { out[name] = { name: e.name, code: e.code, status: e.status ?? 0, message: e.message, isMCP: e instanceof MCPError }; }
		};
		await grab("unreachable", () => mcp.client("http://127.0.0.1:9/mcp").connect());
		await grab("notFound", () => mcp.client(%q).connect());
		await grab("badURL", () => mcp.client("not a url"));
		await grab("badOption", () => mcp.client(%q, { colour: "blue" }));
		const c = mcp.client(%q);
		await c.connect();
		await grab("arrayArgs", () => c.callTool("add", [1, 2]));
		await grab("stringArgs", () => c.callTool("add", "1 2"));
		await grab("unknownTool", () => c.callTool("no_such_tool", {}));
		await grab("cyclicArgs", () => { const o = {}; o.o = o; return c.callTool("add", o); });
		await grab("badSignal", () => c.callTool("add", { a: 1, b: 2 }, { signal: "stop" }));
		await c.close();
		await grab("afterClose", () => c.callTool("add", { a: 1, b: 2 }));
		await grab("listAfterClose", () => c.listTools());
		return out;
	})()`, e.MCPBase+"/missing", e.MCPURL, e.MCPURL), &got)
	want := map[string]struct {
		code   string
		status int
	}{
		"unreachable":    {"network", 0},
		"notFound":       {"http", 404},
		"badURL":         {"invalid_argument", 0},
		"badOption":      {"invalid_argument", 0},
		"arrayArgs":      {"invalid_argument", 0},
		"stringArgs":     {"invalid_argument", 0},
		"unknownTool":    {"invalid_argument", 0},
		"cyclicArgs":     {"invalid_argument", 0},
		"badSignal":      {"invalid_argument", 0},
		"afterClose":     {"closed", 0},
		"listAfterClose": {"closed", 0},
	}
	for name, w := range want {
		g := got[name]
		if g.Code != w.code || g.Status != w.status || g.Name != "MCPError" {
			t.Errorf("%s: got %+v; want MCPError code %q status %d", name, g, w.code, w.status)
		}
	}
}

// TestURLWithQueryWorksWithoutSignIn: a server URL OAuth cannot serve (it
// has a query) still connects; only authorize() refuses, saying why.
func TestURLWithQueryWorksWithoutSignIn(t *testing.T) {
	e := newEnv(t)
	var got struct {
		State string `json:"state"`
		Auth  jsErr  `json:"auth"`
	}
	e.eval(fmt.Sprintf(`(async () => {
		const c = mcp.client(%q + "?tenant=acme");
		await c.connect();
		const auth = await c.authorize().then(() => ({ code: "none" }), (e) => ({ code: e.code, message: e.message }));
		return { state: c.state, auth };
	})()`, e.MCPURL), &got)
	if got.State != "connected" {
		t.Errorf("state = %q; want connected", got.State)
	}
	if got.Auth.Code != "invalid_argument" || !strings.Contains(got.Auth.Message, "query") {
		t.Errorf("authorize() = %+v; want invalid_argument naming the query", got.Auth)
	}
}
