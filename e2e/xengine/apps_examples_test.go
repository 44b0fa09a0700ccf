package xengine

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcpwasm/mcpwasm/devkit/devserver"
)

// viewFrames are the frames of a rendered view: the sandbox proxy's
// iframe in the page, then the view's iframe in the proxy.
var viewFrames = []string{"iframe[data-mcp-view]", "iframe"}

// evalView evaluates expr in the view's document.
func (w *world) evalView(expr string, out any) {
	w.t.Helper()
	if err := w.win.EvalIn(w.ctx, viewFrames, expr, out); err != nil {
		w.t.Fatalf("evaluating JS in the view: %v\n%s", err, expr)
	}
}

// appViewJS renders the view of tool of the client at url into a div,
// keeping what the host hears in globalThis.__app: events, messages,
// links and model contexts. Resolves {state, time} once the view is
// ready (time: the result's structuredContent.time, if any).
const appViewJS = `(async () => {
	const app = globalThis.__app = { events: [], messages: [], links: [], contexts: [], errors: [] };
	const client = app.client = mcp.client(%[1]q);
	await client.connect();
	const result = await client.callTool(%[2]q, %[3]s);
	const div = document.createElement("div");
	document.body.appendChild(div);
	const view = app.view = await mcp.apps.render(div, {
		client, tool: %[2]q, arguments: %[3]s, result, sandboxUrl: %[4]q, theme: "dark",
		onMessage: (m) => { app.messages.push(m); },
		onOpenLink: (url) => { app.links.push(url); },
		onModelContext: (c) => { app.contexts.push(c); },
	});
	for (const t of ["ready", "sizechange", "message", "openlink", "modelcontext", "log", "warning", "error"]) {
		view.addEventListener(t, (e) => app.events.push(t));
	}
	if (view.state !== "ready") await new Promise((ok) => view.addEventListener("ready", ok, { once: true }));
	return { state: view.state, time: result.structuredContent?.time ?? result.content[0]?.text ?? "" };
})()`

// TestAppViewOfTheBasicServers: the official MCP Apps example servers
// (@modelcontextprotocol/server-basic-vanillajs and server-basic-react,
// pinned in e2e/node) each get their get-time view rendered under the
// call: it reaches ready, shows the call's result, its button calls the
// server's tool through the page (counted at the server), its message and
// link go to the page's handlers, and close() tears it down.
func TestAppViewOfTheBasicServers(t *testing.T) {
	for _, which := range []string{"vanillajs", "react"} {
		t.Run(which, func(t *testing.T) {
			url, stats := appsServer(t, which)
			w := newWorld(t, devserver.AuthConfig{})
			var got struct {
				State string `json:"state"`
				Time  string `json:"time"`
			}
			w.eval(fmt.Sprintf(appViewJS, url, "get-time", "{}", w.SandboxURL), &got)
			if got.State != "ready" || got.Time == "" {
				t.Fatalf("render: %+v; want a ready view and a time from the call", got)
			}
			shown := func() string {
				var s string
				w.evalView(`document.getElementById("server-time")?.textContent ?? document.body.innerText`, &s)
				return s
			}
			w.waitFor("the view to show the call's time", func() bool { return strings.Contains(shown(), got.Time) })
			calls, _ := stats()
			before := calls["get-time"]

			// The vanillajs view's buttons have ids and get a real click from
			// the engine; the react one's only labels, clicked from JS. A
			// capturing listener in the view records which buttons a click
			// reached, so a click the engine's automation lost (seen in
			// WebKit on a loaded machine) is told apart from a click the
			// view or the page did not act on, and only the former is sent
			// again.
			w.evalView(`(() => { if (!globalThis.__clicked) { globalThis.__clicked = []; document.addEventListener("click", (e) => { const b = e.target.closest?.("button"); if (b) __clicked.push(b.id || b.textContent.trim()); }, true); } return true; })()`, new(bool))
			clicked := func(key string) int {
				var n int
				w.evalView(fmt.Sprintf(`__clicked.filter((k) => k === %q).length`, key), &n)
				return n
			}
			press := func(id, label string) {
				t.Helper()
				if which != "vanillajs" {
					var ok bool
					w.evalView(fmt.Sprintf(`(() => { const b = [...document.querySelectorAll("button")].find((b) => b.textContent.trim() === %q); b?.click(); return !!b; })()`, label), &ok)
					if !ok {
						t.Fatalf("the %s view has no button %q", which, label)
					}
					return
				}
				seen := clicked(id)
				for attempt := 1; ; attempt++ {
					if err := w.win.ClickIn(w.ctx, viewFrames, "#"+id); err != nil {
						t.Fatal(err)
					}
					for start := time.Now(); time.Since(start) < 15*time.Second; time.Sleep(50 * time.Millisecond) {
						if clicked(id) > seen {
							return
						}
					}
					if attempt == 3 {
						t.Fatalf("three clicks on #%s never reached the button in the view", id)
					}
					t.Logf("the engine's click on #%s did not reach the button; clicking again", id)
				}
			}
			var heard struct {
				Messages []json.RawMessage `json:"messages"`
				Links    []string          `json:"links"`
				Events   []string          `json:"events"`
			}
			hear := func(what string, done func() bool) {
				t.Helper()
				for start := time.Now(); ; time.Sleep(100 * time.Millisecond) {
					w.eval(`({ messages: __app.messages, links: __app.links, events: __app.events })`, &heard)
					if done() {
						return
					}
					if time.Since(start) > time.Minute {
						var page string
						w.evalView(`document.body.innerText`, &page)
						t.Fatalf("waiting for %s, the page heard %d messages, %d links, events %v; the view shows %q", what, len(heard.Messages), len(heard.Links), heard.Events, page)
					}
				}
			}
			press("get-time-btn", "Get Server Time")
			w.waitFor("the view's call to reach the server", func() bool { c, _ := stats(); return c["get-time"] == before+1 })
			w.waitFor("the view to show a new time", func() bool { return !strings.Contains(shown(), got.Time) && strings.Contains(shown(), "T") })

			press("send-message-btn", "Send Message")
			hear("the view's message", func() bool { return len(heard.Messages) == 1 })
			press("open-link-btn", "Open Link")
			hear("the view's link", func() bool { return len(heard.Links) == 1 })
			if len(heard.Messages) != 1 {
				t.Errorf("the page heard %d messages for one click; want 1", len(heard.Messages))
			}
			if !strings.Contains(string(heard.Messages[0]), `"role":"user"`) || !strings.Contains(string(heard.Messages[0]), "This is message text.") {
				t.Errorf("ui/message reached the page as %s", heard.Messages[0])
			}
			if heard.Links[0] != "https://modelcontextprotocol.io/" {
				t.Errorf("ui/open-link reached the page as %q", heard.Links[0])
			}

			var closed struct {
				State  string   `json:"state"`
				Frames int      `json:"frames"`
				Events []string `json:"events"`
			}
			w.eval(`(async () => { await __app.view.close(); return { state: __app.view.state, frames: document.querySelectorAll("iframe").length, events: __app.events }; })()`, &closed)
			if closed.State != "closed" || closed.Frames != 0 {
				t.Errorf("after close(): %+v; want state closed and no frame", closed)
			}
			for _, e := range closed.Events {
				if e == "error" {
					t.Errorf("the view did not answer its teardown: events %v", closed.Events)
				}
			}
			t.Logf("%s: events %v", which, closed.Events)
		})
	}
}

// TestAgentCallsAToolWithAView: an agent over a catalog of the vanillajs
// example server and the probe server calls get-time; its toolresult
// event names the view and carries the result, and the page renders the
// view under the call from the catalog. A tool only views may call (the
// probe's bump) is not offered to the model; the probe view's calls are
// the catalog's (approve asked with via "app", the model's tools refused
// to the view, its tools/list the catalog's). A view's model context
// reaches the catalog's next model request once, with the user's message.
func TestAgentCallsAToolWithAView(t *testing.T) {
	url, _ := appsServer(t, "vanillajs")
	p := newProbeServer(t) // first: they close after the window, which holds streams to them
	w := newWorld(t, devserver.AuthConfig{})
	var got struct {
		Exported []string          `json:"exported"`
		App      map[string]string `json:"app"`
		Time     string            `json:"time"`
		Text     string            `json:"text"`
		State    string            `json:"state"`
		Shown    bool              `json:"shown"`
		Asked    [][]string        `json:"asked"`
		Found    map[string]string `json:"found"`
		Approved []struct {
			ID   string `json:"id"`
			Tool string `json:"tool"`
			Via  string `json:"via"`
		} `json:"approved"`
	}
	w.eval(fmt.Sprintf(`(async () => {
		const approved = [];
		const cat = mcp.catalog({ servers: { clock: { url: %[1]q }, probe: { url: %[2]q } }, apps: true,
			approve: (req) => { approved.push({ id: req.id, tool: req.tool, via: req.via ?? "" }); return "always"; } });
		const exported = (await cat.toolsFor("openai")).map((t) => t.function.name).sort();
		const agent = cat.agent({ model: mcp.models.openai({ baseURL: %[3]q, model: "mcpwasm-standin" }) });
		const events = [];
		const res = await agent.run("What time is it?", { onEvent: (e) => events.push(e) }).done;
		const call = events.find((e) => e.type === "toolcall");
		const tr = events.find((e) => e.type === "toolresult");
		const div = document.createElement("div");
		document.body.appendChild(div);
		const view = await mcp.apps.render(div, { catalog: cat, serverId: tr.app.serverId, tool: tr.app.tool,
			arguments: JSON.parse(call.arguments || "{}"), result: tr.result, sandboxUrl: %[4]q });
		if (view.state !== "ready") await new Promise((ok) => view.addEventListener("ready", ok, { once: true }));
		globalThis.__clockView = view;

		// The probe's view sets a model context; a model function sees it once.
		const asked = [];
		const spy = cat.agent({ model: async (req) => { asked.push(req.messages.filter((m) => m.role === "user").map((m) => String(m.content))); return { role: "assistant", content: "ok" }; } });
		const div2 = document.createElement("div");
		document.body.appendChild(div2);
		const found = (await new Promise((ok) => mcp.apps.render(div2, { catalog: cat, serverId: "probe", tool: "probe", sandboxUrl: %[4]q, onModelContext: ok }))).structuredContent;
		await spy.run("first").done;
		await spy.run("second").done;
		return { exported, app: tr.app, time: tr.result?.structuredContent?.time ?? "", text: res.text, state: view.state, asked, found, approved };
	})()`, url, p.URL, w.ModelURL, w.SandboxURL), &got)

	if !slices.Contains(got.Exported, "clock_get-time") || slices.Contains(got.Exported, "probe_bump") || !slices.Contains(got.Exported, "probe_probe") {
		t.Errorf("offered to the model: %v; want clock_get-time and probe_probe, never probe_bump (views only)", got.Exported)
	}
	if got.App["serverId"] != "clock" || got.App["tool"] != "get-time" || got.App["resourceUri"] != "ui://get-time/mcp-app.html" || got.Time == "" {
		t.Errorf("toolresult: app %v, result time %q; want clock's get-time view and its result", got.App, got.Time)
	}
	if got.State != "ready" {
		t.Errorf("the view rendered from the agent's event is %q; want ready", got.State)
	}
	w.waitFor("the view to show the agent's call's time", func() bool {
		var s string
		w.evalView(`document.getElementById("server-time")?.textContent ?? ""`, &s)
		return s == got.Time
	})
	// The probe view's calls are the catalog's: approve is asked with via
	// "app"; the model's tools are refused as a JSON-RPC error.
	if f := got.Found; f["bump"] != "ran" || p.bumps.Load() != 1 || f["secret"] != "rpc error -32602" || f["hidden"] != "rpc error -32602" || p.secrets.Load() != 0 || f["tools"] != "bump,probe,wander" {
		t.Errorf("the probe view through the catalog found bump %q (%d at the server), secret %q, hidden %q (%d at the server), tools %q; want bump ran once, the model's tools refused, tools bump,probe,wander",
			f["bump"], p.bumps.Load(), f["secret"], f["hidden"], p.secrets.Load(), f["tools"])
	}
	if ext, _ := p.apps.Load().(string); ext != `{"mimeTypes":["text/html;profile=mcp-app"]}` {
		t.Errorf("the probe server saw the MCP Apps extension %s from a catalog made with apps: true; want its view type", ext)
	}
	var viaApp bool
	for _, a := range got.Approved {
		viaApp = viaApp || a.ID == "probe" && a.Tool == "bump" && a.Via == "app"
	}
	if !viaApp {
		t.Errorf("approve was asked %+v; want the view's call of probe's bump, via app", got.Approved)
	}
	if len(got.Asked) != 2 {
		t.Fatalf("the spy model was asked %d times; want 2", len(got.Asked))
	}
	first, second := strings.Join(got.Asked[0], "\n"), strings.Join(got.Asked[1], "\n")
	if !strings.Contains(first, `From the view of probe's tool "probe"`) || !strings.Contains(first, `allowed: declared`) || !strings.Contains(first, "[End of the views' context]") || !strings.HasSuffix(first, "first") {
		t.Errorf("the first request's user messages: %q; want the probe view's context, then the user's message", first)
	}
	if strings.Contains(second, "From the view of") {
		t.Errorf("the second request's user messages: %q; want the context sent once, with the first message only", second)
	}
}

// TestAppViewTrust: the official threejs example (server-threejs, pinned
// in e2e/node) runs the scene code its tool is given as a function made
// from a string, which the specification's default policy refuses. Under
// the default its view says so and the code does not run; with the page's
// trust: ["eval"] for the server the code runs, the policy the view got
// has 'unsafe-eval', and the grant is in the view's warnings.
func TestAppViewTrust(t *testing.T) {
	parallel(t)
	url, _ := appsServer(t, "threejs")
	w := newWorld(t, devserver.AuthConfig{})
	const code = `document.body.dataset.scene = "ran";`
	render := func(trust string) (policy string, warnings []string) {
		t.Helper()
		var got struct {
			Policy   string   `json:"policy"`
			Warnings []string `json:"warnings"`
		}
		w.eval(fmt.Sprintf(`(async () => {
			await globalThis.__threejs?.close();
			const client = globalThis.__threejsClient ??= mcp.client(%q);
			await client.connect();
			const div = document.createElement("div");
			document.body.appendChild(div);
			const args = { code: %q, height: 200 };
			const view = globalThis.__threejs = await mcp.apps.render(div, { client, tool: "show_threejs_scene", arguments: args, sandboxUrl: %q%s });
			if (view.state !== "ready") await new Promise((ok) => view.addEventListener("ready", ok, { once: true }));
			return { policy: view.policy, warnings: view.warnings };
		})()`, url, code, w.SandboxURL, trust), &got)
		return got.Policy, got.Warnings
	}
	policy, warnings := render("")
	if strings.Contains(policy, "unsafe-eval") || len(warnings) != 0 {
		t.Errorf("without trust: policy %q, warnings %q; want the default policy and no warning", policy, warnings)
	}
	var shown string
	w.waitFor("the view to say the scene failed", func() bool {
		w.evalView(`document.body.innerText`, &shown)
		return strings.Contains(strings.ToLower(shown), "error")
	})
	var ran string
	w.evalView(`document.body.dataset.scene ?? ""`, &ran)
	if ran != "" {
		t.Errorf("under the default policy the scene code ran; want it refused (the view shows %q)", shown)
	}
	t.Logf("without trust the view shows %q", shown)

	policy, warnings = render(`, trust: ["eval"]`)
	if !strings.Contains(policy, "script-src 'self' 'unsafe-inline' 'unsafe-eval'") || strings.Contains(policy, "blob:") {
		t.Errorf("with trust [eval]: policy %q; want 'unsafe-eval' in script-src and nothing else widened", policy)
	}
	if len(warnings) != 1 || !strings.Contains(warnings[0], `trust "eval"`) {
		t.Errorf("with trust [eval]: warnings %q; want one naming the grant", warnings)
	}
	w.waitFor("the scene code to run", func() bool {
		w.evalView(`document.body.dataset.scene ?? ""`, &ran)
		return ran == "ran"
	})

	var refused jsErr
	w.eval(fmt.Sprintf(`mcp.apps.render(document.body, { client: __threejsClient, tool: "show_threejs_scene", sandboxUrl: %q, trust: ["eval", "everything"] }).then(() => ({}), %s).then((r) => r.error)`, w.SandboxURL, catchJS), &refused)
	if refused.Code != "invalid_argument" || !strings.Contains(refused.Message, `"everything", which is not one of eval, wasm, blob`) {
		t.Errorf("trust naming no grant: %+v; want invalid_argument naming it", refused)
	}
}
