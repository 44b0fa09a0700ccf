package xengine

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/mcpwasm/mcpwasm/devkit/devserver"
)

// TestConnectListCallAbort: connect() says connecting then connected,
// with the server's name and instructions; the server's tools, resources,
// templates and prompts list, read and run; an AbortSignal ends a call in
// flight, the server hears of it, and the client goes on working.
func TestConnectListCallAbort(t *testing.T) {
	w := newWorld(t, devserver.AuthConfig{})
	var got struct {
		States     []string       `json:"states"`
		Server     string         `json:"server"`
		Instr      bool           `json:"instr"`
		Tools      []string       `json:"tools"`
		Structured map[string]any `json:"structured"`
		IsError    bool           `json:"isError"`
		Echo       string         `json:"echo"`
		Resources  int            `json:"resources"`
		Templates  int            `json:"templates"`
		Prompts    int            `json:"prompts"`
		Read       string         `json:"read"`
		Prompt     int            `json:"prompt"`
		Error      jsErr          `json:"error"`
		After      string         `json:"after"`
		State      string         `json:"state"`
	}
	w.eval(fmt.Sprintf(`(async () => {
		const c = mcp.client(%q);
		const states = [];
		c.addEventListener("statechange", (ev) => states.push(ev.detail.state));
		await c.connect();
		const tools = (await c.listTools()).map((t) => t.name);
		const r = await c.callTool("add", { a: 40, b: 2 });
		const echo = (await c.callTool("echo", { text: "héllo" })).content[0].text;
		const res = await c.listResources();
		const tpl = await c.listResourceTemplates();
		const prompts = await c.listPrompts();
		const read = await c.readResource(res[0].uri);
		const p = await c.getPrompt(prompts[0].name, Object.fromEntries((prompts[0].arguments || []).map((a) => [a.name, "x"])));
		await c.ping();
		const ac = new AbortController();
		const aborted = await c.callTool("slow", { steps: 100, delayMs: 50 }, {
			signal: ac.signal, onProgress: () => ac.abort(),
		}).then(() => ({}), %s);
		const after = (await c.callTool("echo", { text: "still alive" })).content[0].text;
		return { states: states.slice(0, 2), server: c.serverInfo.name, instr: !!c.instructions, tools,
			structured: r.structuredContent, isError: !!r.isError, echo,
			resources: res.length, templates: tpl.length, prompts: prompts.length,
			read: read.contents[0].text ?? "", prompt: p.messages.length, ...aborted, after, state: c.state };
	})()`, w.OpenURL, catchJS), &got)
	if want := []string{"connecting", "connected"}; !slices.Equal(got.States, want) {
		t.Errorf("statechange events = %v; want %v", got.States, want)
	}
	if got.Server == "" || !got.Instr {
		t.Errorf("serverInfo.name = %q, instructions %v; want both", got.Server, got.Instr)
	}
	for _, name := range []string{"echo", "add", "slow", "ask_user", "summarize", "add_tool"} {
		if !slices.Contains(got.Tools, name) {
			t.Errorf("listTools() = %v; missing %q", got.Tools, name)
		}
	}
	if got.Structured["sum"] != float64(42) || got.IsError {
		t.Errorf("add(40, 2): structuredContent = %v, isError %v; want sum 42", got.Structured, got.IsError)
	}
	if !strings.Contains(got.Echo, "héllo") {
		t.Errorf("echo = %q; want héllo back", got.Echo)
	}
	if got.Resources < 1 || got.Templates < 1 || got.Prompts < 1 || got.Read == "" || got.Prompt < 1 {
		t.Errorf("resources %d, templates %d, prompts %d, read %q, prompt messages %d; want each", got.Resources, got.Templates, got.Prompts, got.Read, got.Prompt)
	}
	if got.Error.Code != "aborted" || got.Error.Name != "MCPError" {
		t.Errorf("aborted call rejected with %+v; want MCPError aborted", got.Error)
	}
	w.waitFor("the server to observe the cancellation", func() bool { return slices.Contains(w.cancelledTools(), "slow") })
	if !strings.Contains(got.After, "still alive") || got.State != "connected" {
		t.Errorf("after the abort: %q, state %s; want the next call to work", got.After, got.State)
	}
}

// TestClientCallOptions: what a page asks of one call and of its client,
// against the open demo server, on one page: progress reports all arrive
// before the call resolves; timeoutMs ends a call; a server's elicitation
// and sampling reach the client's handlers (a throwing handler fails the
// call, not the client), and without handlers the capability is not
// advertised; a tools change reaches the page as an event; every error is
// an MCPError with its code; a URL with a query connects, and only
// authorize() refuses it.
func TestClientCallOptions(t *testing.T) {
	w := newWorld(t, devserver.AuthConfig{})
	t.Run("progress before result", func(t *testing.T) {
		var runs [][]float64
		w.eval(fmt.Sprintf(`(async () => {
			const c = mcp.client(%q);
			await c.connect();
			const runs = [];
			for (let i = 0; i < 5; i++) {
				const seen = [];
				await c.callTool("slow", { steps: 6, delayMs: 5 }, { onProgress: (p) => seen.push(p.progress) });
				runs.push(seen.slice()); // what had arrived when the call resolved
			}
			await c.close();
			return runs;
		})()`, w.OpenURL), &runs)
		for i, run := range runs {
			if fmt.Sprint(run) != "[1 2 3 4 5 6]" {
				t.Errorf("run %d: progress seen before callTool resolved = %v; want [1 2 3 4 5 6]", i, run)
			}
		}
	})
	t.Run("timeoutMs", func(t *testing.T) {
		var got struct{ Error jsErr }
		w.eval(fmt.Sprintf(`(async () => {
			const c = mcp.client(%q);
			await c.connect();
			return c.callTool("slow", { steps: 100, delayMs: 50 }, { timeoutMs: 200 }).then(() => ({}), %s);
		})()`, w.OpenURL, catchJS), &got)
		if got.Error.Code != "timeout" || got.Error.Name != "MCPError" {
			t.Errorf("timeoutMs: rejected with %+v; want MCPError timeout", got.Error)
		}
	})
	t.Run("elicitation and sampling handlers", func(t *testing.T) { clientHandlers(t, w) })
	t.Run("toolschanged", func(t *testing.T) {
		var got struct {
			Events int      `json:"events"`
			Tools  []string `json:"tools"`
		}
		w.eval(fmt.Sprintf(`(async () => {
			const c = mcp.client(%q);
			await c.connect();
			let events = 0;
			const changed = new Promise((resolve) => c.addEventListener("toolschanged", () => { events++; resolve(); }));
			await c.callTool("add_tool", { name: "fresh_tool" });
			await Promise.race([changed, new Promise((_, rej) => setTimeout(() => rej(new Error("no toolschanged event in 10s")), 10000))]);
			return { events, tools: (await c.listTools()).map((t) => t.name) };
		})()`, w.OpenURL), &got)
		if got.Events < 1 || !slices.Contains(got.Tools, "fresh_tool") {
			t.Errorf("toolschanged events = %d, tools = %v; want the event and fresh_tool", got.Events, got.Tools)
		}
	})
	t.Run("errors are MCPErrors", func(t *testing.T) { clientErrors(t, w) })
	t.Run("URL with a query", func(t *testing.T) {
		var got struct {
			State string `json:"state"`
			Auth  jsErr  `json:"auth"`
		}
		w.eval(fmt.Sprintf(`(async () => {
			const c = mcp.client(%q + "?tenant=acme");
			await c.connect();
			const auth = await c.authorize().then(() => ({ code: "none" }), (e) => ({ code: e.code, message: e.message }));
			return { state: c.state, auth };
		})()`, w.OpenURL), &got)
		if got.State != "connected" {
			t.Errorf("state = %q; want connected (no sign-in needed)", got.State)
		}
		if got.Auth.Code != "invalid_argument" || !strings.Contains(got.Auth.Message, "query") {
			t.Errorf("authorize() = %+v; want invalid_argument naming the query", got.Auth)
		}
	})
}

// clientHandlers: the demo's ask_user and summarize reach onElicitation
// and onSampling; a throwing handler fails the call and not the client;
// a client without handlers does not advertise them.
func clientHandlers(t *testing.T, w *world) {
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
		Plain struct {
			IsError bool   `json:"isError"`
			Error   *jsErr `json:"error"`
		} `json:"plain"`
	}
	w.eval(fmt.Sprintf(`(async () => {
		const c = mcp.client(%[1]q);
		let fail = false, params = null;
		c.onElicitation = async (p) => {
			params = p;
			if (fail) throw new Error("the user's browser exploded");
			const value = (s) => s.enum ? s.enum[0] : s.type === "boolean" ? true : s.type === "number" || s.type === "integer" ? 7 : "Ada";
			const props = Object.entries(p.requestedSchema?.properties ?? {});
			return { action: "accept", content: Object.fromEntries(props.map(([k, s]) => [k, value(s)])) };
		};
		c.onSampling = async () => ({ role: "assistant", content: { type: "text", text: "a short summary" }, model: "test-model", stopReason: "endTurn" });
		await c.connect();
		const el = await c.callTool("ask_user", {});
		const sa = await c.callTool("summarize", { text: "a long text to summarize" });
		fail = true;
		const thrown = await c.callTool("ask_user", {}).then((r) => ({ isError: !!r.isError, text: r.content[0]?.text }), %[2]s);
		fail = false;
		const after = (await c.callTool("echo", { text: "next call works" })).content[0].text;
		const bare = mcp.client(%[1]q);
		await bare.connect();
		const plain = await bare.callTool("ask_user", {}).then((r) => ({ isError: !!r.isError }), %[2]s);
		return { elicit: JSON.stringify(el), params: params?.message ?? "", sample: JSON.stringify(sa), thrown, after, plain };
	})()`, w.OpenURL, catchJS), &got)
	if !strings.Contains(got.Elicit, "accept") || !strings.Contains(got.Elicit, "Ada") {
		t.Errorf("ask_user result = %s; want the accepted answer", got.Elicit)
	}
	if got.Params == "" {
		t.Error("the elicitation handler got no message")
	}
	if !strings.Contains(got.Sample, "a short summary") {
		t.Errorf("summarize result = %s; want the sampled text", got.Sample)
	}
	// The server heard an error, not an answer: the call fails, as a tool
	// error or a rejection.
	thrown := got.Thrown.Text
	if got.Thrown.Error != nil {
		thrown = got.Thrown.Error.Message
	}
	if !(got.Thrown.IsError || got.Thrown.Error != nil) || strings.Contains(thrown, "accept") {
		t.Errorf("a throwing elicitation handler gave %+v; want the call to fail", got.Thrown)
	}
	if !strings.Contains(got.After, "next call works") {
		t.Errorf("a call after a throwing handler = %q", got.After)
	}
	if got.Plain.Error == nil && !got.Plain.IsError {
		t.Errorf("ask_user without a handler = %+v; want an error (the capability is not advertised)", got.Plain)
	}
}

// clientErrors: each way a page can get a call wrong, and each way a
// server can fail it, rejects with an MCPError whose code says which.
func clientErrors(t *testing.T, w *world) {
	var got map[string]struct {
		Name   string `json:"name"`
		Code   string `json:"code"`
		Status int    `json:"status"`
		IsMCP  bool   `json:"isMCP"`
	}
	base := strings.TrimSuffix(w.OpenURL, "/mcp")
	w.eval(fmt.Sprintf(`(async () => {
		const out = {};
		const grab = async (name, f) => {
			try { await f(); out[name] = { code: "none" }; }
			catch (e) { out[name] = { name: e.name, code: e.code, status: e.status ?? 0, isMCP: e instanceof MCPError }; }
		};
		await grab("unreachable", () => mcp.client("http://127.0.0.1:9/mcp").connect());
		await grab("notFound", () => mcp.client(%q).connect());
		await grab("badURL", () => mcp.client("not a url"));
		await grab("badOption", () => mcp.client(%[2]q, { colour: "blue" }));
		const c = mcp.client(%[2]q);
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
	})()`, base+"/missing", w.OpenURL), &got)
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
	for name, wnt := range want {
		g := got[name]
		if g.Code != wnt.code || g.Status != wnt.status || g.Name != "MCPError" || !g.IsMCP {
			t.Errorf("%s: got %+v; want an MCPError with code %q, status %d", name, g, wnt.code, wnt.status)
		}
	}
}
