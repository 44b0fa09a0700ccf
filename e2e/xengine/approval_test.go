package xengine

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/mcpwasm/mcpwasm/devkit/devserver"
)

// approvalEvent is an agent's approval event as the page hears it.
type approvalEvent struct {
	Name      string `json:"name"`
	ServerID  string `json:"serverId"`
	Approved  bool   `json:"approved"`
	DecidedBy string `json:"decidedBy"`
	Scope     string `json:"scope"`
	Policy    string `json:"policy"`
}

// TestAgentAlwaysApprovalAskedOnce: the person answers "always" (Allow
// for this chat) to the stand-in model's note_add; the next turn of the
// same conversation saves another note without asking, and says it was
// remembered; a new conversation (another agent) asks again.
func TestAgentAlwaysApprovalAskedOnce(t *testing.T) {
	eitherRuntime(t)
	w := newWorld(t, devserver.AuthConfig{})
	var got struct {
		Texts  []string          `json:"texts"`
		Asked  []string          `json:"asked"`
		Events [][]approvalEvent `json:"events"`
	}
	w.eval(fmt.Sprintf(`(async () => {
		const asked = [];
		const cat = mcp.catalog({
			servers: { demo: { url: %q }, notes: { url: %q } },
			approve: async (req) => { asked.push(req.name); return "always"; },
		});
		const model = () => mcp.models.openai({ baseURL: %q, model: "mcpwasm-standin" });
		const texts = [], events = [];
		const turn = async (agent, history, text) => {
			const evs = [];
			const res = await agent.run([...history, { role: "user", content: text }], { onEvent: (e) => { if (e.type === "approval") evs.push(e); } }).done;
			texts.push(res.text);
			events.push(evs);
			return res.messages;
		};
		const chat = cat.agent({ model: model() });
		let history = await turn(chat, [], "note buy milk");
		history = await turn(chat, history, "note buy bread");
		await turn(cat.agent({ model: model() }), [], "note buy eggs");
		return { texts, asked, events };
	})()`, w.OpenURL, w.MCP2URL, w.ModelURL), &got)
	if want := []string{"notes_note_add", "notes_note_add"}; !slices.Equal(got.Asked, want) {
		t.Errorf("approve asked for %v; want %v (once per conversation)", got.Asked, want)
	}
	for i, text := range got.Texts {
		if !strings.HasPrefix(text, "Results: Saved note") {
			t.Errorf("turn %d answered %q; want the note saved", i, text)
		}
	}
	want := [][]approvalEvent{
		{{Name: "notes_note_add", ServerID: "notes", Approved: true, DecidedBy: "host", Scope: "tool"}},
		{{Name: "notes_note_add", ServerID: "notes", Approved: true, DecidedBy: "remembered", Scope: "tool"}},
		{{Name: "notes_note_add", ServerID: "notes", Approved: true, DecidedBy: "host", Scope: "tool"}},
	}
	if fmt.Sprint(got.Events) != fmt.Sprint(want) {
		t.Errorf("approval events per turn = %+v; want %+v", got.Events, want)
	}
}

// TestAgentPolicyDeniesServer: approvalPolicy denies every tool of the
// notes server: a turn that needs one of its tools and one of the demo
// server's runs the demo's, never asks about the notes server's, and the
// model is told the app's settings refused it. A policy with a value it
// does not know throws invalid_argument at once.
func TestAgentPolicyDeniesServer(t *testing.T) {
	eitherRuntime(t)
	w := newWorld(t, devserver.AuthConfig{})
	var got struct {
		Text   string          `json:"text"`
		Asked  []string        `json:"asked"`
		Events []approvalEvent `json:"events"`
		Bad    string          `json:"bad"`
	}
	w.eval(fmt.Sprintf(`(async () => {
		const asked = [];
		let bad = "no error";
		try {
			mcp.catalog({ servers: {}, approvalPolicy: { servers: { notes: "sometimes" } } });
		} catch (e) { bad = e.code + ": " + e.message; }
		const cat = mcp.catalog({
			servers: { demo: { url: %q }, notes: { url: %q } },
			approve: async (req) => { asked.push(req.name); return true; },
			approvalPolicy: { servers: { notes: "deny" } },
		});
		const events = [];
		const res = await cat.agent({ model: mcp.models.openai({ baseURL: %q, model: "mcpwasm-standin" }) })
			.run("add 2 and 40 and reverse hello", { onEvent: (e) => { if (e.type === "approval") events.push(e); } }).done;
		return { text: res.text, asked, events, bad };
	})()`, w.OpenURL, w.MCP2URL, w.ModelURL), &got)
	refusal := "This app's settings do not allow the tools of the notes server to run, so notes_reverse was not run."
	if !strings.Contains(got.Text, "2 + 40 = 42") || !strings.Contains(got.Text, refusal) || strings.Contains(got.Text, "olleh") {
		t.Errorf("the turn answered %q; want the sum and %q", got.Text, refusal)
	}
	if len(got.Asked) != 0 {
		t.Errorf("approve asked for %v; want nothing (add is read-only, notes is denied)", got.Asked)
	}
	wantEvents := []approvalEvent{
		{Name: "demo_add", ServerID: "demo", Approved: true, DecidedBy: "policy", Policy: "readOnly"},
		{Name: "notes_reverse", ServerID: "notes", Approved: false, DecidedBy: "policy", Policy: "server"},
	}
	slices.SortFunc(got.Events, func(a, b approvalEvent) int { return strings.Compare(a.Name, b.Name) })
	if fmt.Sprint(got.Events) != fmt.Sprint(wantEvents) {
		t.Errorf("approval events = %+v; want %+v", got.Events, wantEvents)
	}
	if want := `invalid_argument: catalog(): approvalPolicy.servers must map server ids to "allow", "ask" or "deny".`; got.Bad != want {
		t.Errorf("a bad approvalPolicy: %s; want %s", got.Bad, want)
	}
}

// TestDeclinedServerAsksAgain: the person declines the protected
// server's sign-in (Deny on the consent page); later the model calls that
// server's tool twice in one answer: each call emits authrequired again
// (the catalog's event and the agent's, declined), no window opens by
// itself, and the model reads that the user can still sign in from the
// app. A Sign in from a click then works, and the next turn's call runs.
func TestDeclinedServerAsksAgain(t *testing.T) {
	eitherRuntime(t)
	w := newWorld(t, devserver.AuthConfig{})
	w.eval(fmt.Sprintf(`void (() => {
		window.cat = mcp.catalog({ servers: { secure: { url: %q } } });
		window.catAuth = [];
		cat.addEventListener("authrequired", (e) => catAuth.push(e.detail));
		// A model that calls secure_add, twice in its first answer, and
		// answers with the results.
		window.model = async ({ messages }) => {
			const last = messages[messages.length - 1];
			if (last.role === "tool") return { role: "assistant", content: "Results: " + messages.filter((m) => m.role === "tool").map((m) => m.content).join(" | ") };
			const call = (id) => ({ id, type: "function", function: { name: "secure_add", arguments: "{\"a\":2,\"b\":40}" } });
			return { role: "assistant", content: "", tool_calls: [call("a"), call("b")] };
		};
		window.turn = async () => {
			const evs = [];
			const res = await cat.agent({ model, authWaitMs: 60000 }).run("add 2 and 40 on the secure server", { onEvent: (e) => { if (e.type === "authrequired") evs.push(e); } }).done;
			return { text: res.text, events: evs };
		};
		window.result = null;
	})()`, w.MCPURL), nil)
	var tools []string
	w.eval(`(async () => (await cat.tools()).map((t) => t.name))()`, &tools)
	if len(tools) != 0 {
		t.Fatalf("tools before sign-in = %v; want none", tools)
	}

	// The person declines.
	if r := w.catalogSignIn("#deny"); r.Error == nil || r.Error.Code != "declined" || r.State != "declined" {
		t.Fatalf("Deny: %s; want declined", r)
	}
	w.eval(`void (catAuth.length = 0)`, nil)

	var got struct {
		Text   string `json:"text"`
		Events []struct {
			ServerID string `json:"serverId"`
			ID       string `json:"id"`
			Declined bool   `json:"declined"`
		} `json:"events"`
		CatAuth []struct {
			ID       string `json:"id"`
			Declined bool   `json:"declined"`
		} `json:"catAuth"`
		Opened int    `json:"opened"`
		State  string `json:"state"`
	}
	w.eval(`(async () => {
		const r = await turn();
		// The catalog's events cross on their own.
		for (let i = 0; i < 300 && catAuth.length < 2; i++) await new Promise((res) => setTimeout(res, 50));
		await new Promise((res) => setTimeout(res, 100)); // and no third one
		return { ...r, catAuth, opened: __e2eOpens.length, state: cat.status("secure").state };
	})()`, &got)
	say := "The sign-in to secure was declined or cancelled, so its tools cannot be used now. The user can still sign in to secure from the app"
	if strings.Count(got.Text, say) != 2 {
		t.Errorf("the model read %q; want %q for each call", got.Text, say)
	}
	if len(got.Events) != 2 || got.Events[0].ServerID != "secure" || !got.Events[0].Declined || !got.Events[1].Declined || got.Events[0].ID == got.Events[1].ID {
		t.Errorf("agent authrequired events = %+v; want one per call, declined", got.Events)
	}
	if len(got.CatAuth) != 2 || got.CatAuth[0].ID != "secure" || !got.CatAuth[0].Declined || !got.CatAuth[1].Declined {
		t.Errorf("catalog authrequired events = %+v; want two, declined", got.CatAuth)
	}
	if got.Opened != 1 || got.State != "declined" {
		t.Errorf("after the calls: %d windows opened, state %s; want only the person's one, declined", got.Opened, got.State)
	}

	// The person signs in from the page; the next turn's calls run.
	if !w.signedIn(w.catalogSignIn("#approve")) {
		return
	}
	w.eval(`(async () => { const r = await turn(); return { ...r, catAuth: [], opened: __e2eOpens.length, state: cat.status("secure").state }; })()`, &got)
	if got.Text != "Results: 2 + 40 = 42 | 2 + 40 = 42" || len(got.Events) != 0 || got.Opened != 2 {
		t.Errorf("after signing in: %q, authrequired %+v, %d windows; want both sums, none, 2", got.Text, got.Events, got.Opened)
	}
}

// catalogSignIn signs in to window.cat's server "secure" from a click,
// and answers the consent page with the button (#approve or #deny).
func (w *world) catalogSignIn(button string) loginResult {
	w.t.Helper()
	wait, err := w.win.ExpectPopup(w.ctx)
	if err != nil {
		w.t.Fatal(err)
	}
	w.eval(`void (window.result = null)`, nil)
	// The status follows the catalog's statuschange events, which may
	// cross after authorize() settles.
	if err := w.win.Gesture(w.ctx, `(() => {
		const settled = async (want) => {
			for (let i = 0; i < 300 && cat.status("secure").state !== want; i++) await new Promise((r) => setTimeout(r, 50));
			return cat.status("secure").state;
		};
		cat.authorize("secure").then(async () => { result = { ok: true, state: await settled("connected") }; },
			async (e) => { result = { error: { name: e.name, code: e.code, message: e.message }, state: await settled(e.code) }; });
	})()`); err != nil {
		w.t.Fatalf("gesture: %v", err)
	}
	popup := w.popup(wait, "no sign-in popup")
	var shown bool
	w.waitFor("the consent page", func() bool {
		_ = popup.Eval(w.ctx, `document.readyState === "complete" && !!document.querySelector("#approve")`, &shown)
		return shown
	})
	if err := popup.Click(w.ctx, button); err != nil {
		w.t.Fatalf("clicking %s on the consent page: %v", button, err)
	}
	var r loginResult
	w.eval(`(async () => {
		for (let i = 0; i < 600 && !window.result; i++) await new Promise((r) => setTimeout(r, 50));
		return window.result ?? { error: { code: "test_timeout", message: "authorize() did not settle in 30s" } };
	})()`, &r)
	return r
}
