package xengine

import (
	"encoding/json"
	"fmt"
	"maps"
	"path/filepath"
	"regexp"
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
	eitherRuntime(t)
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
	eitherRuntime(t)
	url, _ := appsServer(t, "vanillajs")
	p := newProbeServer(t) // first: they close after the window, which holds streams to them
	w := newWorld(t, devserver.AuthConfig{})
	var got struct {
		Exported []string          `json:"exported"`
		App      map[string]string `json:"app"`
		Early    struct {
			Call   map[string]string `json:"call"`
			Delta  map[string]string `json:"delta"`
			Deltas int               `json:"deltas"`
		} `json:"early"`
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
		const early = { call: call.app, delta: events.find((e) => e.type === "toolcalldelta" && e.id === call.id)?.app ?? null, deltas: events.filter((e) => e.type === "toolcalldelta" && e.app).length };
		return { exported, app: tr.app, early, time: tr.result?.structuredContent?.time ?? "", text: res.text, state: view.state, asked, found, approved };
	})()`, url, p.URL, w.ModelURL, w.SandboxURL), &got)

	if !slices.Contains(got.Exported, "clock_get-time") || slices.Contains(got.Exported, "probe_bump") || !slices.Contains(got.Exported, "probe_probe") {
		t.Errorf("offered to the model: %v; want clock_get-time and probe_probe, never probe_bump (views only)", got.Exported)
	}
	if got.App["serverId"] != "clock" || got.App["tool"] != "get-time" || got.App["resourceUri"] != "ui://get-time/mcp-app.html" || got.Time == "" {
		t.Errorf("toolresult: app %v, result time %q; want clock's get-time view and its result", got.App, got.Time)
	}
	// The view is known as the model writes the call (its first
	// toolcalldelta, once) and when the call starts.
	if !maps.Equal(got.Early.Call, got.App) || !maps.Equal(got.Early.Delta, got.App) || got.Early.Deltas != 1 {
		t.Errorf("the view in the toolcall event %v, in the call's first toolcalldelta %v (%d deltas with it); want %v in both, once in the deltas", got.Early.Call, got.Early.Delta, got.Early.Deltas, got.App)
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

// TestAppViewTrust: two official examples pinned in e2e/node need more
// than the specification's default policy: threejs makes its scene from
// a string (new Function), pdf runs pdf.js in a blob: worker (its
// fallback imports a data: module). Under the default each view says
// why it cannot and shows nothing; with the one grant it needs in the
// page's trust the scene code runs and the fixture PDF's page shows its
// text, the view's policy has exactly that grant's sources, and the grant
// is in the view's warnings. The pdf view's download button reaches the
// page's onDownloadFile with a PDF. A trust naming no grant is refused.
func TestAppViewTrust(t *testing.T) {
	eitherRuntime(t)
	parallel(t)
	fixture := filepath.Join(repo, "e2e", "node", "testdata", "fixture.pdf")
	examples := []struct {
		server, tool, args string
		grant, adds        string         // the grant it needs, and a source it adds
		refused            *regexp.Regexp // what the view shows under the default, in every engine's words
		shown              string         // a check in the view, true once it rendered
	}{
		{"threejs", "show_threejs_scene", `{"code": "document.body.dataset.scene = 'ran';", "height": 200}`, "eval", "'unsafe-eval'", regexp.MustCompile(`Content Security Policy|\bCSP\b`),
			`document.body.dataset.scene === "ran"`},
		{"pdf", "display_pdf", fmt.Sprintf(`{"url": %q}`, fixture), "blob", "worker-src 'self' blob: data:", regexp.MustCompile(`fake worker failed`),
			`document.body.innerText.includes("of 1") && document.body.innerText.includes("mcpwasm fixture page")`},
	}
	w := newWorld(t, devserver.AuthConfig{})
	for _, ex := range examples {
		url, _ := appsServer(t, ex.server)
		render := func(trust string) (policy string, warnings []string) {
			t.Helper()
			var got struct {
				Policy   string   `json:"policy"`
				Warnings []string `json:"warnings"`
			}
			w.eval(fmt.Sprintf(`(async () => {
				await globalThis.__trusted?.close();
				const client = mcp.client(%q);
				await client.connect();
				const args = %s;
				const result = await client.callTool(%q, args);
				const div = document.createElement("div");
				document.body.appendChild(div);
				globalThis.__downloads = [];
				const onDownloadFile = async (files) => { for (const f of files) __downloads.push({ name: f.name, mimeType: f.mimeType, head: await f.blob.slice(0, 5).text(), size: f.blob.size }); };
				const view = globalThis.__trusted = await mcp.apps.render(div, { client, tool: %[3]q, arguments: args, result, sandboxUrl: %q, trust: %s, onDownloadFile });
				if (view.state !== "ready") await new Promise((ok) => view.addEventListener("ready", ok, { once: true }));
				return { policy: view.policy, warnings: view.warnings };
			})()`, url, ex.args, ex.tool, w.SandboxURL, trust), &got)
			return got.Policy, got.Warnings
		}
		policy, warnings := render("[]")
		if strings.Contains(policy, ex.adds) || len(warnings) != 0 {
			t.Errorf("%s without trust: policy %q, warnings %q; want the default policy and no warning", ex.server, policy, warnings)
		}
		var shown string
		w.waitFor(ex.server+"'s view to say why it cannot render", func() bool {
			w.evalView(`document.body.innerText`, &shown)
			return ex.refused.MatchString(shown)
		})
		var rendered bool
		w.evalView(ex.shown, &rendered)
		if rendered {
			t.Errorf("%s rendered under the default policy; want it refused (the view shows %q)", ex.server, shown)
		}
		t.Logf("%s without trust shows %.160q", ex.server, shown)

		policy, warnings = render(fmt.Sprintf("[%q]", ex.grant))
		if !strings.Contains(policy, ex.adds) {
			t.Errorf("%s with trust [%s]: policy %q; want %s", ex.server, ex.grant, policy, ex.adds)
		}
		for g, src := range map[string]string{"eval": "'unsafe-eval'", "wasm": "'wasm-unsafe-eval'", "blob": "blob:"} {
			if g != ex.grant && strings.Contains(policy, src) {
				t.Errorf("%s with trust [%s]: policy %q has %s, which that grant does not add", ex.server, ex.grant, policy, src)
			}
		}
		if len(warnings) != 1 || !strings.Contains(warnings[0], fmt.Sprintf("trust %q", ex.grant)) {
			t.Errorf("%s with trust [%s]: warnings %q; want one naming the grant", ex.server, ex.grant, warnings)
		}
		w.waitFor(ex.server+"'s view to render", func() bool {
			w.evalView(ex.shown, &rendered)
			return rendered
		})
		if ex.server != "pdf" {
			continue
		}
		type download struct {
			Name, MIMEType, Head string
			Size                 int64
		}
		var got []download
		w.evalView(`document.getElementById("download-btn").click(), true`, new(bool))
		w.waitFor("the pdf view's download to reach the page", func() bool {
			w.eval(`__downloads.map((d) => ({ Name: d.name, MIMEType: d.mimeType, Head: d.head, Size: d.size }))`, &got)
			return len(got) > 0
		})
		// The view saves the document as it shows it (rewritten by its own
		// PDF library, named from its title): a PDF, not the fixture's bytes.
		if len(got) != 1 || !strings.HasSuffix(got[0].Name, ".pdf") || strings.Contains(got[0].Name, "/") || got[0].MIMEType != "application/pdf" || got[0].Head != "%PDF-" || got[0].Size < 100 {
			t.Errorf("the pdf view's download reached the page as %+v; want one PDF file, named *.pdf", got)
		}
	}

	var refused jsErr
	w.eval(fmt.Sprintf(`mcp.apps.render(document.body, { client: mcp.client(%q), tool: "get-time", sandboxUrl: %q, trust: ["eval", "everything"] }).then(() => ({}), %s).then((r) => r.error)`, w.OpenURL, w.SandboxURL, catchJS), &refused)
	if refused.Code != "invalid_argument" || !strings.Contains(refused.Message, `"everything", which is not one of eval, wasm, blob`) {
		t.Errorf("trust naming no grant: %+v; want invalid_argument naming it", refused)
	}
}

// TestAppViewOwnTools: the official threejs view registers tools of its
// own (the App SDK's registerTool); the page lists them and calls
// get-scene-info, which answers with the scene the view runs, from the
// view itself. A view without tools (basic-vanillajs) says so; an unknown
// tool, an aborted call and a closed view reject as documented.
func TestAppViewOwnTools(t *testing.T) {
	eitherRuntime(t)
	parallel(t)
	w := newWorld(t, devserver.AuthConfig{})
	threejs, _ := appsServer(t, "threejs")
	basic, _ := appsServer(t, "vanillajs")
	type failure struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	}
	var got struct {
		Offers bool     `json:"offers"`
		Names  []string `json:"names"`
		Info   struct {
			Code        string `json:"code"`
			Error       any    `json:"error"`
			IsRendering *bool  `json:"isRendering"`
		} `json:"info"`
		InfoText   string    `json:"infoText"`
		Unknown    failure   `json:"unknown"`
		Aborted    []failure `json:"aborted"`
		Plain      bool      `json:"plain"`
		PlainList  failure   `json:"plainList"`
		AfterClose failure   `json:"afterClose"`
		Bad        failure   `json:"bad"`
	}
	const code = "document.body.dataset.scene = 'ran';"
	w.eval(fmt.Sprintf(`(async () => {
		const fail = (e) => ({ code: e?.code ?? "", message: String(e?.message ?? e) });
		const show = async (url, tool, args, trust) => {
			const client = mcp.client(url);
			await client.connect();
			const result = await client.callTool(tool, args);
			const div = document.body.appendChild(document.createElement("div"));
			return mcp.apps.render(div, { client, tool, arguments: args, result, sandboxUrl: %[3]q, trust });
		};
		const args = { code: %[4]q, height: 200 };
		const view = await show(%[1]q, "show_threejs_scene", args, ["eval"]);
		// listTools waits for the view to be ready.
		const names = (await view.listTools()).map((t) => t.name).sort();
		const info = await view.callTool("get-scene-info");
		const unknown = await view.callTool("no-such-tool", {}).then(() => ({}), fail);
		// Aborted before the request goes, and once it went: the view's
		// answer needs a message event, which no microtask precedes.
		const ac = new AbortController();
		const before = view.callTool("get-scene-info", {}, { signal: ac.signal });
		ac.abort();
		const ac2 = new AbortController();
		const inFlight = view.callTool("get-scene-info", {}, { signal: ac2.signal });
		for (let i = 0; i < 20; i++) await null;
		ac2.abort();
		const aborted = [await before.then(() => ({}), fail), await inFlight.then(() => ({}), fail)];
		const bad = await view.callTool("get-scene-info", "not an object").then(() => ({}), fail);
		const offers = view.offersTools;
		await view.close();
		const afterClose = await view.listTools().then(() => ({}), fail);
		const plainView = await show(%[2]q, "get-time", {}, []);
		const plainList = await plainView.listTools().then(() => ({}), fail);
		const plain = plainView.offersTools;
		await plainView.close();
		return { offers, names, info: info.structuredContent, infoText: info.content?.[0]?.text ?? "", unknown, aborted, bad, afterClose, plain, plainList };
	})()`, threejs, basic, w.SandboxURL, code), &got)
	if !got.Offers || !slices.Contains(got.Names, "get-scene-info") || !slices.Contains(got.Names, "set-scene-source") {
		t.Errorf("the threejs view: offersTools %v, tools %v; want true and its get-scene-info and set-scene-source", got.Offers, got.Names)
	}
	if got.Info.Code != code || got.Info.Error != nil || got.Info.IsRendering == nil || !strings.Contains(got.InfoText, "scene = 'ran'") {
		t.Errorf("get-scene-info from the view = %+v (text %q); want the scene's code %q, no error, its rendering state", got.Info, got.InfoText, code)
	}
	if got.Unknown.Code != "protocol" || !strings.Contains(got.Unknown.Message, "the view answered") {
		t.Errorf("a tool the view does not have: %+v; want protocol, the view's answer", got.Unknown)
	}
	if len(got.Aborted) != 2 || got.Aborted[0].Code != "aborted" || got.Aborted[1].Code != "aborted" {
		t.Errorf("calls of the view's tool aborted before they went and in flight: %+v; want aborted both", got.Aborted)
	}
	if got.Bad.Code != "invalid_argument" {
		t.Errorf("arguments that are not an object: %+v; want invalid_argument", got.Bad)
	}
	if got.AfterClose.Code != "closed" {
		t.Errorf("listTools() of a closed view: %+v; want closed", got.AfterClose)
	}
	if got.Plain || got.PlainList.Code != "protocol" || !strings.Contains(got.PlainList.Message, "offers no tools") {
		t.Errorf("the basic view (no tools of its own): offersTools %v, listTools %+v; want false and protocol, offers no tools", got.Plain, got.PlainList)
	}
	t.Logf("the threejs view's tools: %v; get-scene-info: %.200s", got.Names, got.InfoText)
	w.noPageErrors()
}

// TestAppViewToolsOfferedToTheModel: a view rendered with offerTools
// gives a catalog's model its own tools (the official threejs view's
// get-scene-info): the agent's model calls it, the catalog asks approve()
// first, the answer comes from the view, and the tools leave the catalog
// when the view closes.
func TestAppViewToolsOfferedToTheModel(t *testing.T) {
	eitherRuntime(t)
	parallel(t)
	w := newWorld(t, devserver.AuthConfig{})
	threejs, _ := appsServer(t, "threejs")
	var got struct {
		Offered   string   `json:"offered"`
		Tools     []string `json:"tools"`
		Status    string   `json:"status"`
		Approvals []struct {
			ServerID string `json:"serverId"`
			Tool     string `json:"tool"`
		} `json:"approvals"`
		ToolMsg string   `json:"toolMsg"`
		Text    string   `json:"text"`
		Removed bool     `json:"removed"`
		After   []string `json:"after"`
		NoCat   string   `json:"noCat"`
	}
	const code = "document.body.dataset.scene = 'offered';"
	w.eval(fmt.Sprintf(`(async () => {
		const approvals = [];
		const cat = mcp.catalog({ servers: { scene: { url: %[1]q } }, apps: true,
			approve: (req) => { approvals.push({ serverId: req.id, tool: req.tool }); return true; } });
		const args = { code: %[3]q, height: 200 };
		const listed = await cat.tools();
		const show = listed.find((t) => t.serverId === "scene" && t.tool.name === "show_threejs_scene");
		const result = await cat.callTool(show.name, args);
		approvals.length = 0;
		const div = document.body.appendChild(document.createElement("div"));
		const view = await mcp.apps.render(div, { catalog: cat, serverId: "scene", tool: "show_threejs_scene", arguments: args, result,
			sandboxUrl: %[2]q, trust: ["eval"], offerTools: true });
		if (view.state !== "ready") await new Promise((ok) => view.addEventListener("ready", ok, { once: true }));
		const tools = await cat.tools(); // connects the view's server, as an agent's turn does
		const info = tools.find((t) => t.serverId === view.offeredAs && t.tool.name === "get-scene-info");
		let toolMsg = "";
		const agent = cat.agent({ model: async (req) => {
			const answer = req.messages.find((m) => m.role === "tool");
			if (!answer) return { role: "assistant", content: null, tool_calls: [{ id: "c1", type: "function", function: { name: info.name, arguments: "{}" } }] };
			toolMsg = typeof answer.content === "string" ? answer.content : JSON.stringify(answer.content);
			return { role: "assistant", content: "the scene runs: " + toolMsg };
		} });
		const res = await agent.run("What does the scene run?").done;
		const status = cat.status(view.offeredAs).state;
		const gone = new Promise((ok) => cat.addEventListener("toolschanged", ok, { once: true }));
		await view.close();
		const removed = await Promise.race([gone.then(() => true), new Promise((ok) => setTimeout(() => ok(false), 30000))]);
		const after = (await cat.tools()).filter((t) => t.serverId === view.offeredAs).map((t) => t.name);
		const noCat = await mcp.apps.render(document.createElement("div"), { client: cat.server("scene"), tool: "show_threejs_scene", sandboxUrl: %[2]q, offerTools: true })
			.then(() => "rendered", (e) => e.code + ": " + e.message);
		return { offered: view.offeredAs, tools: tools.filter((t) => t.serverId === view.offeredAs).map((t) => t.tool.name).sort(), status, approvals, toolMsg, text: res.text, removed, after, noCat };
	})()`, threejs, w.SandboxURL, code), &got)
	if got.Offered != "scene-view-1" || !slices.Contains(got.Tools, "get-scene-info") || !slices.Contains(got.Tools, "set-scene-source") {
		t.Errorf("offered as %q with tools %v; want scene-view-1 with the view's get-scene-info and set-scene-source", got.Offered, got.Tools)
	}
	if got.Status != "connected" {
		t.Errorf("the view's server's status while offered: %q; want connected", got.Status)
	}
	if len(got.Approvals) != 1 || got.Approvals[0].ServerID != got.Offered || got.Approvals[0].Tool != "get-scene-info" {
		t.Errorf("approve() was asked %+v; want once, for get-scene-info of %s", got.Approvals, got.Offered)
	}
	if !strings.Contains(got.ToolMsg, "scene = 'offered'") || !strings.Contains(got.Text, "scene = 'offered'") {
		t.Errorf("the model got %q and said %q; want the view's answer with the scene's code", got.ToolMsg, got.Text)
	}
	if !got.Removed || len(got.After) != 0 {
		t.Errorf("after the view closed: toolschanged within 30 s %v, the catalog still offers %v; want the event and none", got.Removed, got.After)
	}
	if !strings.HasPrefix(got.NoCat, "invalid_argument: ") || !strings.Contains(got.NoCat, "pass catalog") {
		t.Errorf("offerTools without a catalog: %q; want invalid_argument asking for a catalog", got.NoCat)
	}
	t.Logf("the model read: %.200s", got.ToolMsg)
	w.noPageErrors()
}

// TestAppViewOfTheOfficialExamples: the other official MCP Apps example
// servers pinned in e2e/node, each rendered under the call of its tool
// with the specification's default policy (no trust), as a new user of
// the package would: the view reaches ready, tells its size, shows its
// content (a chart, a score, a shader's canvas, a form) and leaves the
// page's console clean. system-monitor is live: its view polls the
// server through its view-only tool. An example that cannot render here
// says why: map loads CesiumJS from its CDN, which this closed network
// cannot reach, so its view never initializes and must end failed,
// saying so, within the bound the page set; shadertoy draws with WebGL
// 2, which headless Firefox lacks.
func TestAppViewOfTheOfficialExamples(t *testing.T) {
	eitherRuntime(t)
	parallel(t)
	examples := []struct {
		server, tool, args string
		shown              string // in the view: true once its content is there
		needs              string // in the view: "" when the engine has what it needs, else why not
		live               string // a tool the view calls by itself, again and again
		offline            string // why it cannot initialize on this network
	}{
		{server: "budget-allocator", tool: "get-budget-data", args: `{}`,
			shown: `document.body.innerText.includes("Budget Allocator") && [...document.querySelectorAll("canvas")].some((c) => c.width > 0)`},
		{server: "cohort-heatmap", tool: "get-cohort-data", args: `{"metric": "retention", "cohortCount": 6, "maxPeriods": 6}`,
			shown: `document.body.innerText.includes("Cohort Retention Analysis") && /\d%/.test(document.body.innerText)`},
		{server: "customer-segmentation", tool: "get-customer-data", args: `{}`,
			shown: `document.body.innerText.includes("Customer Segmentation") && [...document.querySelectorAll("canvas")].some((c) => c.width > 0)`},
		{server: "map", tool: "show-map", args: `{}`,
			offline: "it loads CesiumJS from cesium.com's CDN, which this closed network cannot reach"},
		{server: "scenario-modeler", tool: "get-scenario-data", args: `{}`,
			shown: `document.body.innerText.includes("SaaS Scenario Modeler") && [...document.querySelectorAll("canvas")].some((c) => c.width > 0)`},
		{server: "shadertoy", tool: "render-shadertoy", args: `{"fragmentShader": "void mainImage(out vec4 fragColor, in vec2 fragCoord) { fragColor = vec4(fragCoord / iResolution.xy, 0.5, 1.0); }"}`,
			shown: `[...document.querySelectorAll("canvas")].some((c) => c.width > 0 && c.getContext("webgl2"))`,
			needs: `document.createElement("canvas").getContext("webgl2") ? "" : "this engine has no WebGL 2 here (headless, no GPU)"`},
		{server: "sheet-music", tool: "play-sheet-music", args: `{"abcNotation": "X:1\nT:Scale\nM:4/4\nL:1/4\nK:C\nC D E F | G A B c |"}`,
			shown: `document.querySelectorAll("svg path").length > 8`},
		{server: "system-monitor", tool: "get-system-info", args: `{}`, live: "poll-system-stats",
			shown: `document.body.innerText.includes("System Monitor") && [...document.querySelectorAll("canvas")].some((c) => c.width > 0)`},
		{server: "transcript", tool: "transcribe", args: `{}`,
			shown: `document.body.innerText.includes("Your speech will appear here") && [...document.querySelectorAll("button")].some((b) => b.innerText.includes("Start"))`},
	}
	w := newWorld(t, devserver.AuthConfig{})
	outer := w.t
	defer func() { w.t = outer }()
	for _, ex := range examples {
		t.Run(ex.server, func(t *testing.T) {
			w.t = t
			url, stats := appsServer(t, ex.server)
			// The view and its client end before their server does (the
			// server stops at the subtest's cleanup, after this).
			defer w.eval(`(async () => { await globalThis.__example?.view.close(); await globalThis.__example?.client.close(); })()`, nil)
			initMs := 30000
			if ex.offline != "" {
				initMs = 5000
			}
			var got struct {
				State    string   `json:"state"`
				Warnings []string `json:"warnings"`
				IsError  bool     `json:"isError"`
			}
			w.eval(fmt.Sprintf(`(async () => {
				document.body.replaceChildren();
				const ex = globalThis.__exampleSeen = { events: [], error: null };
				const client = mcp.client(%q);
				await client.connect();
				const args = %s;
				const result = await client.callTool(%q, args);
				const div = document.createElement("div");
				document.body.appendChild(div);
				const view = await mcp.apps.render(div, { client, tool: %[3]q, arguments: args, result, sandboxUrl: %q, initTimeoutMs: %d });
				globalThis.__example = { view, client };
				for (const t of ["ready", "sizechange", "error"]) view.addEventListener(t, (e) => { ex.events.push(t); if (t === "error") ex.error = { code: e.detail?.code, message: e.detail?.message }; });
				return { state: view.state, warnings: view.warnings, isError: !!result.isError };
			})()`, url, ex.args, ex.tool, w.SandboxURL, initMs), &got)
			if got.IsError || len(got.Warnings) != 0 {
				t.Errorf("%s's call and view: %+v; want a result, and no warning under the default policy", ex.tool, got)
			}
			seen := func() (events []string, err *jsErr, state string) {
				var s struct {
					Events []string `json:"events"`
					Error  *jsErr   `json:"error"`
					State  string   `json:"state"`
				}
				w.eval(`({ ...__exampleSeen, state: __example.view.state })`, &s)
				return s.Events, s.Error, s.State
			}
			if ex.offline != "" {
				var shows string
				w.waitFor("the map view to end", func() bool {
					if _, _, state := seen(); state != "loading" {
						return true
					}
					_ = w.win.EvalIn(w.ctx, viewFrames, `document.body.innerText`, &shows)
					return false
				})
				_, err, state := seen()
				if state != "failed" || err == nil || err.Code != "timeout" || !strings.Contains(err.Message, "did not initialize within 5 s") {
					t.Errorf("the %s view: state %q, error %+v; want failed, a timeout saying it did not initialize within 5 s", ex.server, state, err)
				}
				t.Logf("not rendered: %s; the view showed %q and ended %s: %s", ex.offline, strings.TrimSpace(shows), state, err.Message)
				w.noConsoleErrors(w.win)
				return
			}
			w.waitFor(ex.server+"'s view to be ready and sized", func() bool {
				events, err, state := seen()
				if err != nil || state == "failed" {
					t.Fatalf("the %s view failed: %+v", ex.server, err)
				}
				return state == "ready" && slices.Contains(events, "sizechange")
			})
			var missing string
			if ex.needs != "" {
				w.evalView(ex.needs, &missing)
			}
			if missing != "" {
				t.Logf("ready and sized; its content is not checked: %s", missing)
			} else {
				w.waitFor(ex.server+"'s view to show its content", func() bool {
					var ok bool
					w.evalView(ex.shown, &ok)
					return ok
				})
			}
			if ex.live != "" {
				w.waitFor(ex.server+"'s view to call "+ex.live+" by itself, twice", func() bool {
					calls, _ := stats()
					return calls[ex.live] >= 2
				})
			}
			w.noConsoleErrors(w.win)
		})
	}
}
