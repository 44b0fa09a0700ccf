package xengine

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpwasm/mcpwasm/demo"
	"github.com/mcpwasm/mcpwasm/demo/cors"
	"github.com/mcpwasm/mcpwasm/devkit/devserver"
)

// elicitDemo starts a demo server with open_link (URL-mode elicitation)
// for one scenario, over Streamable HTTP twice: without sessions, where
// go-sdk speaks protocol 2026-07-28 and a tool asks through an
// input_required result (modern), and with sessions, where it speaks
// 2025-11-25 and asks through an elicitation/create request (legacy).
func elicitDemo(t *testing.T) (modern, legacy string) {
	t.Helper()
	s := demo.NewServer(demo.Options{OpenLink: true})
	stateless := cors.Wrap(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, &mcp.StreamableHTTPOptions{Stateless: true}), cors.Options{})
	m := serve(t, stateless)
	l := serve(t, demo.Handler(demo.Options{OpenLink: true}))
	return m.URL + demo.StreamablePath, l.URL + demo.StreamablePath
}

// elicitTurn is what one agent turn over a catalog with onElicitation
// showed the page.
type elicitTurn struct {
	Text     string            `json:"text"`
	Protocol string            `json:"protocol"`
	Asked    []json.RawMessage `json:"asked"` // [request, context] per onElicitation call
	Events   []map[string]any  `json:"events"`
	CallID   string            `json:"callId"`
	Warnings []string          `json:"warnings"`
}

// runElicitTurnJS runs one turn of the stand-in model over a new catalog
// of one server "demo" (entry: its JSON), whose onElicitation records what
// it is asked and answers with answer (a JS expression of request); the
// result is an elicitTurn.
func runElicitTurnJS(entry, modelURL, prompt, answer string) string {
	return fmt.Sprintf(`(async () => {
		const asked = [], events = [], warnings = [];
		const cat = mcp.catalog({
			servers: { demo: %s },
			onElicitation: async (request, context) => { asked.push([request, context]); return %s; },
		});
		cat.server("demo").addEventListener("warning", (e) => warnings.push(e.detail.message));
		const agent = cat.agent({ model: mcp.models.openai({ baseURL: %q, model: "mcpwasm-standin" }) });
		let callId = "";
		const { text } = await agent.run(%q, { onEvent: (ev) => {
			if (ev.type === "elicitation") events.push(ev);
			if (ev.type === "toolcall") callId = ev.id;
		} }).done;
		const protocol = cat.server("demo").protocolVersion;
		await cat.close();
		return { text, protocol, asked, events, callId, warnings };
	})()`, entry, answer, modelURL, prompt)
}

// TestCatalogAgentTurnElicitsForm: in an agent's turn a tool asks the user
// a form (the demo's ask_user), over protocol 2026-07-28 (an
// input_required result) and 2025-11-25 (an elicitation/create request).
// The turn shows an elicitation event tied to the call and to
// the catalog's onElicitation request; the page's answer reaches the
// server and, in the tool's result, the model.
func TestCatalogAgentTurnElicitsForm(t *testing.T) {
	eitherRuntime(t)
	w := newWorld(t, devserver.AuthConfig{})
	modern, legacy := elicitDemo(t)
	for _, c := range []struct{ name, entry, protocol string }{
		{"2026-07-28", fmt.Sprintf(`{ url: %q }`, modern), "2026-07-28"},
		{"2025-11-25", fmt.Sprintf(`{ url: %q }`, legacy), "2025-11-25"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var got elicitTurn
			w.eval(runElicitTurnJS(c.entry, w.ModelURL, "ask me who I am",
				`{ action: "accept", content: { name: "Ada", color: "green" } }`), &got)
			if want := "Results: The user answered: color: green, name: Ada, subscribe: false"; got.Text != want {
				t.Errorf("the turn answered %q; want %q (the page's answer, through the server)", got.Text, want)
			}
			if got.Protocol != c.protocol {
				t.Errorf("protocol = %q; want %q", got.Protocol, c.protocol)
			}
			if len(got.Asked) != 1 || len(got.Events) != 1 {
				t.Fatalf("onElicitation asked %d times, elicitation events %d; want 1 and 1", len(got.Asked), len(got.Events))
			}
			var pair []map[string]any
			_ = json.Unmarshal(got.Asked[0], &pair)
			req, ctx, ev := pair[0], pair[1], got.Events[0]
			if req["message"] != "who I am" || req["requestedSchema"] == nil || ctx["serverId"] != "demo" {
				t.Errorf("onElicitation got %v, %v; want the server's form and serverId demo", req, ctx)
			}
			if ev["id"] != got.CallID || ev["elicitationId"] != ctx["elicitationId"] || ev["serverId"] != "demo" ||
				ev["mode"] != "form" || ev["message"] != "who I am" || ev["requestedSchema"] == nil {
				t.Errorf("elicitation event = %v; want the call %s's form, elicitationId %v", ev, got.CallID, ctx["elicitationId"])
			}
		})
	}
}

// TestCatalogURLElicitation: a server's URL-mode request reaches the
// catalog's onElicitation with its URL (nothing opens by itself) and the
// agent's event; the page's decline reaches the server. A URL that is not
// https (or http on loopback) is declined without asking the page, which
// hears why from the server's client (a warning). The single client's
// onElicitation gets URL mode too.
func TestCatalogURLElicitation(t *testing.T) {
	eitherRuntime(t)
	w := newWorld(t, devserver.AuthConfig{})
	modern, legacy := elicitDemo(t)
	const page = "https://example.com/consent?step=1"
	for _, c := range []struct{ name, entry string }{
		{"2026-07-28", fmt.Sprintf(`{ url: %q }`, modern)},
		{"2025-11-25", fmt.Sprintf(`{ url: %q }`, legacy)},
	} {
		t.Run(c.name, func(t *testing.T) {
			var got elicitTurn
			w.eval(runElicitTurnJS(c.entry, w.ModelURL, "open link "+page, `{ action: "decline" }`), &got)
			if want := "Results: The user declined to open the page."; got.Text != want {
				t.Errorf("the turn answered %q; want %q", got.Text, want)
			}
			if len(got.Asked) != 1 || len(got.Events) != 1 {
				t.Fatalf("onElicitation asked %d times, elicitation events %d; want 1 and 1", len(got.Asked), len(got.Events))
			}
			var pair []map[string]any
			_ = json.Unmarshal(got.Asked[0], &pair)
			if req := pair[0]; req["mode"] != "url" || req["url"] != page || req["elicitationId"] == "" {
				t.Errorf("onElicitation got %v; want URL mode with the URL and its elicitationId", req)
			}
			if ev := got.Events[0]; ev["mode"] != "url" || ev["url"] != page || ev["id"] != got.CallID || ev["requestedSchema"] != nil {
				t.Errorf("elicitation event = %v; want URL mode with the URL, for call %s", ev, got.CallID)
			}
			for _, bad := range []string{"http://example.com/consent", "javascript:alert(1)"} {
				var refused elicitTurn
				w.eval(runElicitTurnJS(c.entry, w.ModelURL, "open link "+bad, `{ action: "accept" }`), &refused)
				if want := "Results: The user declined to open the page."; refused.Text != want {
					t.Errorf("%s: the turn answered %q; want %q (declined without asking)", bad, refused.Text, want)
				}
				if len(refused.Asked) != 0 || len(refused.Events) != 0 {
					t.Errorf("%s: onElicitation asked %d times, events %d; want none", bad, len(refused.Asked), len(refused.Events))
				}
				if len(refused.Warnings) != 1 || !strings.Contains(refused.Warnings[0], "declined") {
					t.Errorf("%s: warnings %q; want one saying the page was declined", bad, refused.Warnings)
				}
			}
		})
	}
	var single struct {
		Text    string         `json:"text"`
		Request map[string]any `json:"request"`
	}
	w.eval(fmt.Sprintf(`(async () => {
		const c = mcp.client(%q);
		let request = null;
		c.onElicitation = async (p) => { request = p; return { action: "accept" }; };
		await c.connect();
		const r = await c.callTool("open_link", { url: %q });
		await c.close();
		return { text: r.content[0].text, request };
	})()`, modern, page), &single)
	if single.Text != "The user agreed to open "+page+"." || single.Request["mode"] != "url" || single.Request["url"] != page {
		t.Errorf("client.onElicitation in URL mode: %+v; want the URL passed through and the accept at the server", single)
	}
}

// TestCatalogWithoutElicitation: a catalog without onElicitation tells its
// servers elicitation is not supported: a tool that would ask says so at
// once, and the turn goes on.
func TestCatalogWithoutElicitation(t *testing.T) {
	eitherRuntime(t)
	w := newWorld(t, devserver.AuthConfig{})
	modern, legacy := elicitDemo(t)
	for _, entry := range []string{fmt.Sprintf(`{ url: %q }`, modern), fmt.Sprintf(`{ url: %q }`, legacy)} {
		var got struct {
			Text   string `json:"text"`
			Events int    `json:"events"`
		}
		w.eval(fmt.Sprintf(`(async () => {
			const cat = mcp.catalog({ servers: { demo: %s } });
			let events = 0;
			const agent = cat.agent({ model: mcp.models.openai({ baseURL: %q, model: "mcpwasm-standin" }) });
			const { text } = await agent.run("ask me who I am", { onEvent: (ev) => { if (ev.type === "elicitation") events++; } }).done;
			await cat.close();
			return { text, events };
		})()`, entry, w.ModelURL), &got)
		if !strings.Contains(got.Text, "This client does not handle elicitation") || got.Events != 0 {
			t.Errorf("%s: the turn answered %q with %d elicitation events; want the server's answer that the client cannot elicit, no event", entry, got.Text, got.Events)
		}
	}
}

// TestCatalogElicitationServerEverything: the reference TypeScript server, which
// offers its elicitation tools only to a client that advertises them,
// offers both modes to a catalog with onElicitation (and neither without);
// its form request (which names no mode: the handler sees "form") and its
// URL-mode request reach the handler with the server's id, the form's
// answer and the URL's decline reach the server.
func TestCatalogElicitationServerEverything(t *testing.T) {
	eitherRuntime(t)
	url := everythingServer(t)
	w := newWorld(t, devserver.AuthConfig{})
	var got struct {
		With    []string            `json:"with"`
		Without []string            `json:"without"`
		Form    string              `json:"form"`
		Link    string              `json:"link"`
		Asked   []map[string]string `json:"asked"`
	}
	w.eval(fmt.Sprintf(`(async () => {
		const asked = [];
		const cat = mcp.catalog({
			servers: { everything: { url: %[1]q } },
			onElicitation: async (request, context) => {
				asked.push({ mode: request.mode, url: request.url ?? "", serverId: context.serverId });
				return request.mode === "url" ? { action: "decline" } : { action: "accept", content: { name: "Ada", check: true } };
			},
		});
		const with_ = (await cat.tools()).map((t) => t.tool.name);
		const text = (r) => r.content.map((c) => c.text).join("\n");
		const form = text(await cat.callTool("everything_trigger-elicitation-request", {}));
		const link = text(await cat.callTool("everything_trigger-url-elicitation", { url: "https://example.com/consent" }));
		await cat.close();
		const bare = mcp.catalog({ servers: { everything: { url: %[1]q } } });
		const without = (await bare.tools()).map((t) => t.tool.name);
		await bare.close();
		return { with: with_, without, form, link, asked };
	})()`, url), &got)
	for _, tool := range []string{"trigger-elicitation-request", "trigger-url-elicitation"} {
		if !slices.Contains(got.With, tool) {
			t.Errorf("tools with onElicitation = %v; want %s (the server saw the capability)", got.With, tool)
		}
		if slices.Contains(got.Without, tool) {
			t.Errorf("tools without onElicitation include %s; want it left out (no capability advertised)", tool)
		}
	}
	if !strings.Contains(got.Form, "User provided the requested information") || !strings.Contains(got.Form, "- Name: Ada") {
		t.Errorf("form elicitation result = %q; want the accepted answer at the server", got.Form)
	}
	if !strings.Contains(got.Link, "User declined to open the URL") {
		t.Errorf("URL elicitation result = %q; want the decline at the server", got.Link)
	}
	want := []map[string]string{{"mode": "form", "url": "", "serverId": "everything"}, {"mode": "url", "url": "https://example.com/consent", "serverId": "everything"}}
	if fmt.Sprint(got.Asked) != fmt.Sprint(want) {
		t.Errorf("onElicitation asked %v; want %v", got.Asked, want)
	}
}
