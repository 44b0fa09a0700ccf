package xengine

import (
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/mcpwasm/mcpwasm/demo"
	"github.com/mcpwasm/mcpwasm/devkit/devserver"
	"github.com/mcpwasm/mcpwasm/devkit/npmapp"
)

var (
	appOnce  sync.Once
	appBuild *npmapp.Build // examples/react-vite built from the packed npm package
	appErr   error
)

// reactApp is examples/react-vite built from the packed npm package, in
// production and in React's development build (where StrictMode runs
// every effect twice): the one MCPWASM_E2E_APP names, else built now
// (once per test binary).
func reactApp(t *testing.T) *npmapp.Build {
	t.Helper()
	appOnce.Do(func() {
		if appDir != "" {
			tgz, _ := filepath.Glob(filepath.Join(appDir, "*.tgz"))
			appBuild = &npmapp.Build{Pkg: filepath.Join(appDir, "npm"), App: filepath.Join(repo, "examples", "react-vite"),
				Prod: filepath.Join(appDir, "prod"), Dev: filepath.Join(appDir, "dev")}
			if len(tgz) != 1 {
				appErr = fmt.Errorf("MCPWASM_E2E_APP=%s holds %d tarballs; want the one npm pack made", appDir, len(tgz))
				return
			}
			appBuild.Tarball = tgz[0]
			return
		}
		dir, err := os.MkdirTemp("", "xengine-app-")
		if err != nil {
			appErr = err
			return
		}
		t.Logf("building the React example app from the packed npm package (set MCPWASM_E2E_APP to reuse a build)")
		appBuild, appErr = npmapp.Make(repo, webDir, dir, true)
	})
	if appErr != nil {
		t.Fatalf("building the React example app: %v", appErr)
	}
	return appBuild
}

// appWorld serves the app's production build as the page origin, with the
// SPA fallback every single-page app host has (the app's route
// /oauth/callback answers with its index.html), under the strict
// Content-Security-Policy of docs/JSAPI.md; its index.html gets boot.js
// first.
func appWorld(t *testing.T) *demoWorld {
	t.Helper()
	return appWorldOf(t, reactApp(t).Prod)
}

// appWorldOf is appWorld for the build in dist.
func appWorldOf(t *testing.T, dist string) *demoWorld {
	t.Helper()
	app, err := withBoot(os.DirFS(dist), "index.html")
	if err != nil {
		t.Fatal(err)
	}
	index, err := fs.ReadFile(app, "index.html")
	if err != nil {
		t.Fatal(err)
	}
	// The app's build, and the package's apps/ for the sandbox origin (an
	// app serves the sandbox proxy from the package on an origin of its own).
	return newSiteWorld(t, true, withApps{app, os.DirFS(webDir)}, func(w *world, mux *http.ServeMux) {
		serveIndex := func(rw http.ResponseWriter, r *http.Request) {
			rw.Header().Set("Content-Type", "text/html; charset=utf-8")
			rw.Header().Set("Cache-Control", "no-cache")
			rw.Header().Set("Content-Security-Policy", appCSP(w))
			rw.Write(index)
		}
		mux.HandleFunc("GET /{$}", serveIndex)
		mux.HandleFunc("GET /oauth/callback", serveIndex)
	})
}

// appCSP is the smallest policy docs/JSAPI.md documents for a page of
// w's origin that uses its servers, model and sandbox.
func appCSP(w *world) string {
	return "default-src 'none'; script-src 'self' 'wasm-unsafe-eval'; style-src 'self'; connect-src 'self' " +
		strings.TrimSuffix(w.MCPURL, demo.StreamablePath) + " " + strings.TrimSuffix(w.MCP2URL, demo.StreamablePath) + " " + w.ASURL + " " +
		strings.TrimSuffix(w.ModelURL, "/v1") + "; frame-src " + strings.TrimSuffix(w.SandboxURL, devserver.SandboxPath)
}

// appState is the state the app's #server section shows.
func (w *world) appState(want string) {
	w.t.Helper()
	w.waitFor("the app to show state "+want, func() bool {
		var s string
		_ = w.win.Eval(w.ctx, `document.querySelector("#server")?.dataset.state ?? ""`, &s)
		return s == want
	})
}

// TestReactAppFromTarball: the production build of the Vite + React
// example app, built from the packed npm package: the module is one
// content-hashed asset served as application/wasm and downloaded once
// (by the page on the main thread, else by the worker, through the
// bundle's worker chunk); the page opens no window by itself; the app
// survives a Deny on the consent page and signs in again through a popup
// that returns to the app's own /oauth/callback route, calls a tool and
// shows its result; after a reload it is still signed in; unmounting
// the hook ends the session at the server; no page error and no
// Content-Security-Policy violation on the way.
func TestReactAppFromTarball(t *testing.T) {
	dist := reactApp(t).Prod
	asset := wasmAsset(t, dist)
	w := appWorldOf(t, dist)
	resp, err := http.Get(w.PageURL + "/assets/" + asset)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); resp.StatusCode != 200 || ct != "application/wasm" {
		t.Fatalf("GET /assets/%s: %d %q; want 200 application/wasm", asset, resp.StatusCode, ct)
	}
	gets := w.requests("page GET /assets/" + asset) // the check above
	w.navigate(w.win, w.PageURL+"/")
	w.appState("needs_auth")
	if n := w.requests("page GET /assets/"+asset) - gets; n != 1 {
		t.Errorf("/assets/%s was requested %d times; want once", asset, n)
	}
	want := "0"
	if runtimeMode() == "main" {
		want = "1"
	}
	if got := w.js(`performance.getEntriesByType("resource").filter((r) => r.name.endsWith("/assets/` + asset + `")).length`); got != want {
		t.Errorf("the page itself fetched /assets/%s %s times; want %s", asset, got, want)
	}
	if n, auth := w.opens(), w.snapshot()["authorize"]; n != 0 || auth != 0 {
		t.Errorf("before any click the app opened %d windows and the authorization server saw %d authorization requests; want none", n, auth)
	}
	// A Deny first: the app shows it and offers the sign-in again, with
	// no uncaught rejection of authorize() (checked at the end).
	w.appSignIn("#deny")
	w.appState("declined")
	var shown string
	_ = w.win.Eval(w.ctx, `document.querySelector("#error")?.textContent ?? ""`, &shown)
	if !strings.Contains(strings.ToLower(shown), "declined") {
		t.Errorf("after Deny the app shows %q; want the decline said", shown)
	}
	w.appSignIn("#approve")
	w.appState("connected")
	if n := w.requests("page GET /oauth/callback"); n != 2 {
		t.Errorf("the app's /oauth/callback route was loaded %d times; want twice (the popups' redirects, Deny and Approve)", n)
	}
	// As a person would: the tools are listed, then Add is pressed.
	w.shown(`#tools li[data-tool="add"]`)
	w.click("#add")
	w.until("the tool's result", `document.querySelector("#result")?.textContent !== ""`)
	if result := w.text("#result"); !strings.Contains(result, "42") {
		t.Errorf("add(2, 40) shows %q; want 42", result)
	}
	before := w.snapshot()
	if err := w.win.Reload(w.ctx); err != nil {
		t.Fatalf("reload: %v", err)
	}
	w.appState("connected")
	for _, k := range []string{"authorize", "token", "register"} {
		if n := w.diff(before)[k]; n != 0 {
			t.Errorf("the reload made %d %s requests; want 0 (it stays signed in)", n, k)
		}
	}
	t.Logf("measure: React app (production build, after reload, signed in, %s): navigation → first connected %s ms", browser.Name(), w.js(`window.__connectedAt.toFixed(0)`))
	deletes := w.requests("mcp DELETE /mcp")
	w.click("#toggle")
	w.until("the hook's section to go", `document.querySelector("#server") === null`)
	w.waitFor("the session's end at the server (DELETE)", func() bool { return w.requests("mcp DELETE /mcp") > deletes })
	w.checkPage()
}

// appSignIn clicks the app's Sign in button and the consent page's
// button (#approve or #deny) in the popup it opens.
func (w *world) appSignIn(button string) {
	w.t.Helper()
	wait, err := w.win.ExpectPopup(w.ctx)
	if err != nil {
		w.t.Fatal(err)
	}
	if err := w.win.Click(w.ctx, "#sign-in"); err != nil {
		w.t.Fatalf("clicking Sign in: %v", err)
	}
	popup := w.popup(wait, "the sign-in popup")
	if err := popup.Click(w.ctx, button); err != nil {
		w.t.Fatalf("clicking %s on the consent page: %v", button, err)
	}
}

// noPageErrors fails the test for the window's uncaught exceptions,
// unhandled rejections and console errors so far (the example app logs
// each Content-Security-Policy violation as one; pageErrors leaves out
// the browser's own favicon request, which WebKit reports as one too).
func (w *world) noPageErrors() {
	w.t.Helper()
	errs, err := w.win.Errors(w.ctx)
	if err != nil {
		w.t.Fatalf("reading the page's errors: %v", err)
	}
	for _, e := range pageErrors(errs) {
		w.t.Errorf("page error: %s", e)
	}
}

// chatTurn is what the example app's chat shows of its last assistant
// message.
type chatTurn struct {
	State     string `json:"state"`
	Text      string `json:"text"`
	Reasoning bool   `json:"reasoning"`
	Tools     []struct {
		Name   string `json:"name"`
		State  string `json:"state"`
		Result string `json:"result"`
	} `json:"tools"`
	Status string `json:"status"`
	Users  int    `json:"users"`
	Usage  string `json:"usage"`
	Error  string `json:"error"`
}

func (w *world) chatTurn() chatTurn {
	w.t.Helper()
	var c chatTurn
	_ = w.win.Eval(w.ctx, `(() => {
		const li = [...document.querySelectorAll('#messages li[data-role="assistant"]')].at(-1);
		return {
			state: li?.dataset.state ?? "",
			text: li ? [...li.querySelectorAll('[data-part="text"]')].map((e) => e.textContent).join("") : "",
			reasoning: li?.querySelector('[data-part="reasoning"]') != null,
			tools: li ? [...li.querySelectorAll('[data-part="tool"]')].map((e) => ({ name: e.dataset.name, state: e.dataset.state, result: e.querySelector(".result")?.textContent ?? "" })) : [],
			status: document.querySelector("#chat")?.dataset.status ?? "",
			users: document.querySelectorAll('#messages li[data-role="user"]').length,
			usage: document.querySelector("#usage")?.textContent ?? "",
			error: document.querySelector("#chat-error")?.textContent ?? "",
		};
	})()`, &c)
	return c
}

// chatSay clicks the chat's suggestion button that sends text.
func (w *world) chatSay(text string) {
	w.t.Helper()
	sel := fmt.Sprintf(`[data-say=%q]`, text)
	w.waitFor("the chat to accept "+text, func() bool {
		var ok bool
		_ = w.win.Eval(w.ctx, fmt.Sprintf(`document.querySelector(%q)?.disabled === false`, sel), &ok)
		return ok
	})
	if err := w.win.Click(w.ctx, sel); err != nil {
		w.t.Fatalf("clicking %q: %v", text, err)
	}
}

// waitTurn waits for the last assistant message to end in state.
func (w *world) waitTurn(users int, state string) chatTurn {
	w.t.Helper()
	var c chatTurn
	w.waitFor(fmt.Sprintf("turn %d to end %s", users, state), func() bool {
		c = w.chatTurn()
		if c.Users == users && c.State != state && c.State != "" && c.State != "streaming" && (c.Status == "idle" || c.Status == "error") {
			w.t.Fatalf("turn %d ended %s (chat %s), not %s: it shows %q, tools %+v, error %q", users, c.State, c.Status, state, c.Text, c.Tools, c.Error)
		}
		return c.Users == users && c.State == state && c.Status == "idle"
	})
	return c
}

// TestReactAgentChat drives the example app's chat (useAgent over a
// useCatalog of the notes server, the stand-in model), in React's
// development build under StrictMode (every effect runs twice): a turn
// streams its reasoning, calls a tool and shows its result and the
// answer; a tool that is not read-only waits for Approve in the chat;
// Stop ends a turn that waits for approval; Allow for this chat holds for
// the conversation's later turns; the conversation is stored, so a
// reload shows it and the next turn goes on. Each turn makes exactly one
// model request per step (no second run from StrictMode), and the page
// logs no error.
func TestReactAgentChat(t *testing.T) {
	eitherRuntime(t)
	w := appWorldOf(t, reactApp(t).Dev)
	w.navigate(w.win, w.PageURL+"/?view=chat")
	chats := func() int { return w.snapshot()["chat"] }

	before := chats()
	w.chatSay("reverse hello")
	c := w.waitTurn(1, "done")
	var effects int
	_ = w.win.Eval(w.ctx, `window.__appEffects ?? 0`, &effects)
	if effects != 2 {
		t.Errorf("the app's mount effect ran %d times; want 2 (React's development build under StrictMode)", effects)
	}
	if c.Text != "Results: olleh" {
		t.Errorf("the answer shows %q; want %q", c.Text, "Results: olleh")
	}
	if len(c.Tools) != 1 || c.Tools[0].Name != "notes_reverse" || c.Tools[0].State != "done" || c.Tools[0].Result != "olleh" {
		t.Errorf("the tool calls show %+v; want notes_reverse done with result olleh", c.Tools)
	}
	if !c.Reasoning {
		t.Error("the stand-in's streamed reasoning is not shown")
	}
	if !strings.Contains(c.Usage, " in, ") || !strings.Contains(c.Usage, " of 128000") || strings.Contains(c.Usage, "undefined") {
		t.Errorf("the conversation's usage shows %q; want its token totals and its context of 128000", c.Usage)
	}
	if n := chats() - before; n != 2 {
		t.Errorf("a turn of 2 steps made %d model requests; want 2", n)
	}

	// A tool that is not read-only asks first; the question is answered
	// in the chat.
	before = chats()
	w.chatSay("note buy milk and reverse abc")
	w.waitFor("the approval question", func() bool {
		c = w.chatTurn()
		var asking bool
		_ = w.win.Eval(w.ctx, `document.querySelector('.approval[data-tool="notes_note_add"] .approve') !== null`, &asking)
		return asking && c.Status == "awaiting-approval"
	})
	for _, tool := range c.Tools {
		if tool.Name == "notes_note_add" && tool.State != "awaiting-approval" {
			t.Errorf("while asked, the call of notes_note_add shows %q; want awaiting-approval", tool.State)
		}
	}
	if err := w.win.Click(w.ctx, `.approval[data-tool="notes_note_add"] .approve`); err != nil {
		t.Fatalf("clicking Approve: %v", err)
	}
	c = w.waitTurn(2, "done")
	if !strings.Contains(c.Text, "Saved note") || !strings.Contains(c.Text, "cba") {
		t.Errorf("the approved turn answers %q; want the saved note and the reversed text", c.Text)
	}
	for _, tool := range c.Tools {
		if tool.State != "done" {
			t.Errorf("after Approve, %s shows %q (%q); want done", tool.Name, tool.State, tool.Result)
		}
	}
	if n := chats() - before; n != 2 {
		t.Errorf("the approved turn of 2 steps made %d model requests; want 2", n)
	}

	// Stop while the chat waits for an answer: the turn ends stopped, the
	// question goes away, and nothing more is asked of the model.
	before = chats()
	w.chatSay("note call mom")
	w.waitFor("the second approval question", func() bool {
		return w.chatTurn().Status == "awaiting-approval"
	})
	if err := w.win.Click(w.ctx, "#stop"); err != nil {
		t.Fatalf("clicking Stop: %v", err)
	}
	c = w.waitTurn(3, "stopped")
	if len(c.Tools) != 1 || c.Tools[0].State == "done" {
		t.Errorf("after Stop the call shows %+v; want it not done", c.Tools)
	}
	var questions int
	_ = w.win.Eval(w.ctx, `document.querySelectorAll(".approval").length`, &questions)
	if questions != 0 {
		t.Errorf("after Stop %d approval questions are shown; want none", questions)
	}
	if n := chats() - before; n != 1 {
		t.Errorf("the stopped turn made %d model requests; want 1", n)
	}

	// "Allow for this chat" holds for the later turns of the conversation:
	// the next turn's call of the same tool runs without asking.
	w.chatSay("note call mom")
	w.waitFor("the third approval question", func() bool {
		return w.chatTurn().Status == "awaiting-approval"
	})
	if err := w.win.Click(w.ctx, `.approval[data-tool="notes_note_add"] .always`); err != nil {
		t.Fatalf("clicking Allow for this chat: %v", err)
	}
	if c = w.waitTurn(4, "done"); !strings.Contains(c.Text, "Saved note") {
		t.Errorf("the turn allowed for this chat answers %q; want the saved note", c.Text)
	}
	w.chatSay("note buy milk and reverse abc")
	asked := false
	w.waitFor("turn 5 to end done", func() bool {
		var n int
		_ = w.win.Eval(w.ctx, `document.querySelectorAll(".approval").length`, &n)
		asked = asked || n > 0
		c = w.chatTurn()
		return c.Users == 5 && c.State == "done" && c.Status == "idle"
	})
	if asked || !strings.Contains(c.Text, "Saved note") {
		t.Errorf("the next turn's note (allowed for this chat): asked again %v, answer %q; want no question and the saved note", asked, c.Text)
	}

	// The conversation is stored: after a reload the chat shows its five
	// turns (the last one's answer too) and goes on with them.
	w.navigate(w.win, w.PageURL+"/?view=chat")
	w.waitFor("the stored chat after the reload", func() bool {
		c = w.chatTurn()
		return c.Users == 5 && c.Status == "idle"
	})
	if c.State != "done" || !strings.Contains(c.Text, "Saved note") || len(c.Tools) == 0 || c.Tools[0].State != "done" {
		t.Errorf("after the reload the last turn shows %+v; want the stored answer and its calls", c)
	}
	before = chats()
	w.chatSay("reverse hello")
	if c = w.waitTurn(6, "done"); c.Text != "Results: olleh" {
		t.Errorf("the turn after the reload answers %q; want %q", c.Text, "Results: olleh")
	}
	if n := chats() - before; n != 2 {
		t.Errorf("the turn after the reload made %d model requests; want 2", n)
	}

	// Unmounting the chat ends its catalog; nothing fails on the way.
	if err := w.win.Click(w.ctx, "#toggle"); err != nil {
		t.Fatalf("unmounting: %v", err)
	}
	w.waitFor("the chat to unmount", func() bool {
		var gone bool
		_ = w.win.Eval(w.ctx, `document.querySelector("#chat") === null`, &gone)
		return gone
	})
	w.noPageErrors()
}

// TestReactChatShowsAView: in the React example's chat (built from the
// packed npm package, development build: StrictMode mounts every effect
// twice), "list notes" calls the notes server's note_list, whose view
// (MCP Apps) McpAppView renders under the call from the sandbox origin:
// one frame, ready, listing the note the turn before saved. Unmounting
// the chat closes the view.
func TestReactChatShowsAView(t *testing.T) {
	eitherRuntime(t)
	w := appWorldOf(t, reactApp(t).Dev)
	w.navigate(w.win, w.PageURL+"/?view=chat")
	w.chatSay("note call mom")
	w.waitFor("the approval question", func() bool {
		var asking bool
		_ = w.win.Eval(w.ctx, `document.querySelector('.approval[data-tool="notes_note_add"] .approve') !== null`, &asking)
		return asking
	})
	if err := w.win.Click(w.ctx, `.approval[data-tool="notes_note_add"] .approve`); err != nil {
		t.Fatalf("clicking Approve: %v", err)
	}
	w.waitTurn(1, "done")
	w.chatSay("list notes")
	w.waitTurn(2, "done")
	w.waitFor("the view under note_list to be ready", func() bool {
		var state string
		_ = w.win.Eval(w.ctx, `document.querySelector('[data-part="tool"][data-name="notes_note_list"] .view-state')?.dataset.view ?? ""`, &state)
		if state == "failed" {
			t.Fatal("the view failed")
		}
		return state == "ready"
	})
	var frames []string
	w.eval(`[...document.querySelectorAll("iframe")].map((f) => f.src)`, &frames)
	if len(frames) != 1 || !strings.HasPrefix(frames[0], w.SandboxURL) {
		t.Errorf("frames %v; want one, the sandbox proxy %s (StrictMode's double mount leaves none behind)", frames, w.SandboxURL)
	}
	frames2 := []string{`[data-name="notes_note_list"] [data-mcp-app-view] iframe`, "iframe"}
	w.waitFor("the view to list the note", func() bool {
		var shown string
		_ = w.win.EvalIn(w.ctx, frames2, `document.getElementById("notes")?.textContent ?? ""`, &shown)
		return strings.Contains(shown, "call mom")
	})
	if err := w.win.Click(w.ctx, "#toggle"); err != nil {
		t.Fatal(err)
	}
	w.waitFor("the view to close with the chat", func() bool {
		var n int
		_ = w.win.Eval(w.ctx, `document.querySelectorAll("iframe").length`, &n)
		return n == 0
	})
}

// TestReactChatElicitation: in the React example's chat (development
// build, StrictMode), after signing in to the demo server from the chat,
// the stand-in model calls its ask_user, whose question (a form
// elicitation, routed by askUser to useAgent's pending list) the chat
// shows as a form built from the requested schema; the person fills and
// submits it, and the answers reach the server and, in the tool's result,
// the model's answer. In the next turn the person declines, and the model
// is told so. A URL-mode question (open_link) shows as a link card, and
// Done reaches the server. The question goes away with each answer; the
// page logs no error.
func TestReactChatElicitation(t *testing.T) {
	eitherRuntime(t)
	w := appWorldOf(t, reactApp(t).Dev)
	w.navigate(w.win, w.PageURL+"/?view=chat")
	demoState := func(want string) {
		t.Helper()
		w.waitFor("the chat to show the demo server "+want, func() bool {
			var s string
			_ = w.win.Eval(w.ctx, `document.querySelector('#chat-servers li[data-server="demo"]')?.dataset.state ?? ""`, &s)
			return s == want
		})
	}
	demoState("needs_auth")
	wait, err := w.win.ExpectPopup(w.ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.win.Click(w.ctx, `[data-sign-in="demo"]`); err != nil {
		t.Fatalf("clicking Sign in: %v", err)
	}
	popup := w.popup(wait, "the sign-in popup")
	if err := popup.Click(w.ctx, "#approve"); err != nil {
		t.Fatalf("clicking Approve on the consent page: %v", err)
	}
	demoState("connected")

	// What the chat's question shows: its mode, message and fields.
	type question struct {
		Mode    string   `json:"mode"`
		Text    string   `json:"text"`
		Fields  []string `json:"fields"`
		Status  string   `json:"status"`
		Buttons []string `json:"buttons"`
	}
	ask := func(turn int) question {
		t.Helper()
		var q question
		w.waitFor(fmt.Sprintf("turn %d's question", turn), func() bool {
			_ = w.win.Eval(w.ctx, `(() => {
				const f = document.querySelector(".elicitation");
				return {
					mode: f?.dataset.mode ?? "", text: f?.querySelector("p")?.textContent ?? "",
					fields: f ? [...f.querySelectorAll("[data-field]")].map((e) => e.dataset.field) : [],
					status: document.querySelector("#chat")?.dataset.status ?? "",
					buttons: f ? [...f.querySelectorAll("button")].map((b) => b.textContent) : [],
				};
			})()`, &q)
			return q.Mode != "" && q.Status == "awaiting-input"
		})
		return q
	}

	// ask_user is not read-only: allowed for the chat first.
	w.chatSay("ask me who I am")
	w.waitFor("the approval of demo_ask_user", func() bool {
		var asking bool
		_ = w.win.Eval(w.ctx, `document.querySelector('.approval[data-tool="demo_ask_user"] .always') !== null`, &asking)
		return asking
	})
	if err := w.win.Click(w.ctx, `.approval[data-tool="demo_ask_user"] .always`); err != nil {
		t.Fatalf("clicking Allow for this chat: %v", err)
	}
	q := ask(1)
	want := question{Mode: "form", Text: "demo asks: who I am", Fields: []string{"age", "color", "name", "subscribe"}, Status: "awaiting-input", Buttons: []string{"Submit", "Decline", "Cancel"}}
	slices.Sort(q.Fields)
	if !slices.Equal(q.Fields, want.Fields) || q.Mode != want.Mode || q.Text != want.Text || !slices.Equal(q.Buttons, want.Buttons) {
		t.Errorf("the question shows %+v; want %+v", q, want)
	}
	// As a person fills it: a name, a colour, an age, the box ticked.
	w.eval(`(() => {
		const f = document.querySelector(".elicitation");
		f.elements.name.value = "Ada";
		f.elements.color.value = "green";
		f.elements.age.value = "36";
		return true;
	})()`, nil)
	if err := w.win.Click(w.ctx, `.elicitation input[name="subscribe"]`); err != nil {
		t.Fatalf("ticking Subscribe: %v", err)
	}
	if err := w.win.Click(w.ctx, ".elicitation .submit"); err != nil {
		t.Fatalf("clicking Submit: %v", err)
	}
	const answered = "The user answered: age: 36, color: green, name: Ada, subscribe: true"
	c := w.waitTurn(1, "done")
	if c.Text != "Results: "+answered {
		t.Errorf("the answered turn says %q; want %q", c.Text, "Results: "+answered)
	}
	if len(c.Tools) != 1 || c.Tools[0].Name != "demo_ask_user" || c.Tools[0].State != "done" || c.Tools[0].Result != answered {
		t.Errorf("the tool calls show %+v; want demo_ask_user done with the server's %q", c.Tools, answered)
	}
	var left int
	w.eval(`document.querySelectorAll(".elicitation").length`, &left)
	if left != 0 {
		t.Errorf("after Submit %d questions are shown; want none", left)
	}

	// Declined: the server hears it, and so does the model.
	w.chatSay("ask me who I am")
	ask(2)
	if err := w.win.Click(w.ctx, ".elicitation .decline"); err != nil {
		t.Fatalf("clicking Decline: %v", err)
	}
	c = w.waitTurn(2, "done")
	if c.Text != "Results: The user declined to answer." {
		t.Errorf("the declined turn says %q; want %q", c.Text, "Results: The user declined to answer.")
	}
	if len(c.Tools) != 1 || c.Tools[0].State != "done" || c.Tools[0].Result != "The user declined to answer." {
		t.Errorf("the declined turn's tool calls show %+v; want demo_ask_user done, declined", c.Tools)
	}
	w.eval(`document.querySelectorAll(".elicitation").length`, &left)
	if left != 0 {
		t.Errorf("after Decline %d questions are shown; want none", left)
	}

	// URL mode: a link card the person opens (the page opens nothing by
	// itself), then Done. Typed into the chat: the demo's open_link is a
	// test tool, not one of the example's suggestions.
	const page = "https://modelcontextprotocol.io/welcome"
	w.eval(fmt.Sprintf(`(() => {
		const input = document.querySelector("#chat-input");
		Object.getOwnPropertyDescriptor(HTMLInputElement.prototype, "value").set.call(input, %q);
		input.dispatchEvent(new Event("input", { bubbles: true }));
		return true;
	})()`, "open link "+page), nil)
	if err := w.win.Click(w.ctx, "#send"); err != nil {
		t.Fatalf("clicking Send: %v", err)
	}
	w.waitFor("the approval of demo_open_link", func() bool {
		var asking bool
		_ = w.win.Eval(w.ctx, `document.querySelector('.approval[data-tool="demo_open_link"] .approve') !== null`, &asking)
		return asking
	})
	if err := w.win.Click(w.ctx, `.approval[data-tool="demo_open_link"] .approve`); err != nil {
		t.Fatalf("clicking Approve: %v", err)
	}
	q = ask(3)
	var link struct{ Href, Target, Rel string }
	w.eval(`(() => { const a = document.querySelector(".elicitation a"); return { href: a?.href ?? "", target: a?.target ?? "", rel: a?.rel ?? "" }; })()`, &link)
	if q.Mode != "url" || q.Text != "demo asks: Please open this page to continue." || !slices.Equal(q.Buttons, []string{"Done", "Cancel"}) ||
		link.Href != page || link.Target != "_blank" || !strings.Contains(link.Rel, "noopener") {
		t.Errorf("the URL question shows %+v with link %+v; want a card linking %s (new tab, noopener) with Done and Cancel", q, link, page)
	}
	if err := w.win.Click(w.ctx, ".elicitation .done"); err != nil {
		t.Fatalf("clicking Done: %v", err)
	}
	if c = w.waitTurn(3, "done"); c.Text != "Results: The user agreed to open "+page+"." {
		t.Errorf("the URL turn says %q; want the server's agreement passed on", c.Text)
	}
	w.noPageErrors()
}

// withApps is an app's build with the npm package's apps/ directory.
type withApps struct{ app, pkg fs.FS }

func (f withApps) Open(name string) (fs.File, error) {
	if name == "apps" || strings.HasPrefix(name, "apps/") {
		return f.pkg.Open(name)
	}
	return f.app.Open(name)
}
