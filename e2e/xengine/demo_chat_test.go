package xengine

import (
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/mcpwasm/mcpwasm/demo"
	"github.com/mcpwasm/mcpwasm/devkit/devserver"
)

// TestDemoChat drives the Chat panel with the dev server's scripted
// stand-in model over the Servers panel's catalog: one message calls
// tools on both demo servers, a tool that is not read-only asks Approve /
// Deny (Deny: the model is told the user refused; Approve: it runs; Allow
// for this chat: the chat's later calls run, until New chat), a tool with
// a view (note_list) shows the server's view under its call, from the
// sandbox origin, which adds a note, Stop ends a run during a slow tool,
// and an OpenAI-compatible endpoint with an API key works without the key
// reaching storage, the log or the page.
func TestDemoChat(t *testing.T) {
	eitherRuntime(t)
	parallel(t)
	d := newDemoWorld(t, false)
	call := func(server, tool string) string {
		return fmt.Sprintf(`#chat-log li.chat-tool[data-server=%q][data-tool=%q]`, server, tool)
	}
	answers := func() int {
		t.Helper()
		var n int
		d.eval(`document.querySelectorAll("#chat-log li.chat-msg.assistant").length`, &n)
		return n
	}
	lastAnswer := func() string {
		return d.js(`[...document.querySelectorAll("#chat-log li.chat-msg.assistant")].at(-1).querySelector(".chat-text").textContent`)
	}
	// send types a message and presses Enter; waitIdle waits for its run
	// to end (the chat log counts the runs that ended).
	runs := 0
	send := func(msg string) {
		t.Helper()
		d.fill("#chat-input", msg)
		d.enter("#chat-input")
		runs++
	}
	waitIdle := func() {
		t.Helper()
		d.shown(fmt.Sprintf(`#chat-log[data-runs="%d"]`, runs))
		if got := d.js(`document.querySelector("#chat-send").disabled`); got != "false" {
			t.Error("Send stays disabled after the run ended")
		}
	}
	asking := `#chat-log li.chat-approval[data-state="asking"]`

	// ?server= (the explorer's server) wins over the dev server's default.
	d.openDemo("/?server=" + url.QueryEscape(strings.Replace(d.MCPURL, demo.StreamablePath, demo.SSEPath, 1)))
	if got, want := d.value("#server-url"), strings.Replace(d.MCPURL, demo.StreamablePath, demo.SSEPath, 1); got != want {
		t.Errorf("server URL field = %q; want the ?server= parameter %q", got, want)
	}
	d.shown(`#servers li[data-server="demo"][data-state="connected"]`)
	d.shown(`#servers li[data-server="notes"][data-state="connected"]`)
	d.enabled("#chat-send")
	if got := d.js(`document.querySelector("#model-choice").selectedOptions[0].textContent`); !strings.Contains(got, "scripted stand-in, not a real model") {
		t.Errorf("the default model is labelled %q; want it to say it is a scripted stand-in, not a real model", got)
	}
	if got := d.js(`document.querySelector("#chat-log").getAttribute("aria-live")`); got != "polite" {
		t.Errorf("the chat log's aria-live = %q; want polite", got)
	}

	// One message, tools on two servers, one answer.
	send("add 2 and 40 and reverse hello")
	waitIdle()
	d.shown(call("demo", "add") + `[data-state="ok"]`)
	d.shown(call("notes", "reverse") + `[data-state="ok"]`)
	if got := d.text(call("demo", "add")); !strings.Contains(got, "Demo server · add") || !strings.Contains(got, `"a": 2`) || !strings.Contains(got, "2 + 40 = 42") {
		t.Errorf("the add call shows %q; want its server, arguments and result", got)
	}
	if got := d.text(call("notes", "reverse")); !strings.Contains(got, "Notes server · reverse") || !strings.Contains(got, `"text": "hello"`) || !strings.Contains(got, "olleh") {
		t.Errorf("the reverse call shows %q; want its server, arguments and result", got)
	}
	if got := lastAnswer(); !strings.HasPrefix(got, "Results:") || !strings.Contains(got, "42") || !strings.Contains(got, "olleh") {
		t.Errorf("the answer is %q; want Results: with 42 and olleh", got)
	}
	// The model's work: its reasoning (folded) and the turn's tokens.
	if got := d.js(`[...document.querySelectorAll("#chat-log li.chat-reasoning")].map((li) => li.textContent).join(" | ")`); !strings.Contains(got, "matches my script for demo_add and notes_reverse") || !strings.Contains(got, "pass their results on") {
		t.Errorf("the reasoning shown is %q; want the stand-in's reasoning of both steps", got)
	}
	if got := d.js(`document.querySelector('#chat-log li.chat-note[data-kind="usage"]')?.textContent`); !strings.Contains(got, "Tokens this turn:") || !strings.Contains(got, "cached") || !strings.Contains(got, "reasoning") || !strings.Contains(got, "over 2 model responses") || !regexp.MustCompile(`Context: [0-9,]+ tokens of 128,000 \([0-9]+%\)\.`).MatchString(got) {
		t.Errorf("the turn's tokens read %q; want the totals over its 2 model responses, cached and reasoning tokens included, and how full the stand-in's context of 128,000 is", got)
	}

	// A tool that is not read-only asks first. Deny: the model hears it.
	before := answers()
	send("note buy milk")
	d.shown(`#chat-log li.chat-approval[data-tool="note_add"] button.deny`)
	if got := d.text(`#chat-log li.chat-approval[data-tool="note_add"]`); !strings.Contains(got, "note_add") || !strings.Contains(got, "buy milk") {
		t.Errorf("the approval prompt says %q; want the tool and its arguments", got)
	}
	d.click(`#chat-log li.chat-approval[data-tool="note_add"] button.deny`)
	waitIdle()
	if answers() != before+1 || !strings.Contains(lastAnswer(), "refused") {
		t.Errorf("the answer after Deny is %q; want it to say the user refused", lastAnswer())
	}
	d.shown(call("notes", "note_add") + `[data-state="denied"]`)

	// Approve: the note is saved.
	send("note remember the eggs")
	d.click(asking + ` button.approve`)
	waitIdle()
	if got := lastAnswer(); !strings.Contains(got, "Saved note 1") {
		t.Errorf("the answer after Approve is %q; want Saved note 1", got)
	}

	// Allow for this chat: the next note of the conversation runs without
	// asking, marked so; after New chat it asks again.
	prompts := func() string { return d.js(`document.querySelectorAll("#chat-log li.chat-approval").length`) }
	send("note remember the bread")
	d.click(asking + ` button.allow-chat`)
	waitIdle()
	asked := prompts()
	send("note remember the jam")
	waitIdle()
	if got := lastAnswer(); !strings.Contains(got, "Saved note 3") || prompts() != asked {
		t.Errorf("after Allow for this chat: %q, %s prompts (were %s); want Saved note 3 without a prompt", got, prompts(), asked)
	}
	if got := d.text(`#chat-log li.chat-tool[data-approval="remembered"]`); !strings.Contains(got, "allowed for this chat") {
		t.Errorf("the remembered call shows %q; want \"allowed for this chat\"", got)
	}

	// A tool with a view (MCP Apps): the notes server's note_list shows
	// its view under the call, framed from the sandbox origin (the page's
	// policy frames that origin only; checkPage finds no violation), and
	// the view starts (the host's ready: the chat marks the call
	// data-view="ready") and sizes itself. The stand-in streams the call,
	// so the view was shown as the model wrote it (data-live), then got
	// the input and the result.
	send("list notes")
	waitIdle()
	listCall := call("notes", "note_list")
	d.shown(listCall + `[data-state="ok"][data-view="ready"] .chat-tool-view[data-live="true"] iframe`)
	if got := d.text(listCall + " .chat-tool-result"); !strings.Contains(got, "3. ") || !strings.Contains(got, "jam") {
		t.Errorf("the note_list call shows %q; want the three notes as text", got)
	}
	frame := `document.querySelector('` + listCall + ` .chat-tool-view iframe')`
	if got := d.js(frame + `.src`); got != d.SandboxURL {
		t.Errorf("the view's frame is %q; want the sandbox proxy %q", got, d.SandboxURL)
	}
	if got := d.js(frame + `.dataset.mcpView`); got != demo.NotesViewURI {
		t.Errorf("the view's frame shows %q; want %s", got, demo.NotesViewURI)
	}
	d.until("the view to report its height", frame+`.style.height !== "150px"`)
	// Into the view (the sandbox proxy's frame, and the view's inside it):
	// add a note. The view's note_add asks Approve / Deny in the chat as
	// the view's call, without Allow for this chat; its note_list
	// (read-only) does not ask; the view lists the new note.
	view := []string{listCall + " .chat-tool-view iframe", "iframe"}
	d.waitFor("the view's form", func() bool {
		var ok bool
		_ = d.win.EvalIn(d.ctx, view, `!!document.getElementById("note-text")`, &ok)
		return ok
	})
	if err := d.win.EvalIn(d.ctx, view, `(() => { const e = document.getElementById("note-text"); e.value = "from the view"; e.dispatchEvent(new Event("input", { bubbles: true })); return true; })()`, nil); err != nil {
		t.Fatalf("filling the view's field: %v", err)
	}
	if err := d.win.ClickIn(d.ctx, view, "#note-add"); err != nil {
		t.Fatalf("clicking Add in the view: %v", err)
	}
	d.shown(`#chat-log li.chat-approval[data-tool="note_add"][data-state="asking"] button.approve`)
	if got := d.text(asking); !strings.Contains(got, "The view of Notes server wants to run note_add") || !strings.Contains(got, "from the view") {
		t.Errorf("the view's approval prompt says %q; want the view, the tool and its arguments", got)
	}
	if got := d.js(`!!document.querySelector('` + asking + ` button.allow-chat')`); got != "false" {
		t.Error("the view's approval prompt offers Allow for this chat, which only the agent's calls remember")
	}
	d.click(asking + ` button.approve`)
	var viewShows struct {
		Notes  string `json:"notes"`
		Listed string `json:"listed"`
		Status string `json:"status"`
		Error  string `json:"error"`
	}
	d.waitFor("the view to list the note it added", func() bool {
		_ = d.win.EvalIn(d.ctx, view, `({ notes: document.getElementById("view").dataset.notes ?? "", listed: document.getElementById("notes").textContent,
			status: document.getElementById("status").textContent, error: document.getElementById("error").textContent })`, &viewShows)
		return viewShows.Notes == "4"
	})
	if !strings.Contains(viewShows.Listed, "from the view") {
		t.Errorf("the view lists %q; want the note added from it", viewShows.Listed)
	}
	if got := d.js(`document.querySelectorAll('#chat-log li.chat-approval[data-tool="note_list"]').length`); got != "0" {
		t.Errorf("the view's note_list (read-only) asked for approval %s times; want never", got)
	}
	if got := d.js(`document.querySelector('meta[http-equiv="Content-Security-Policy"]').content`); !strings.Contains(got, "frame-src "+strings.TrimSuffix(d.SandboxURL, devserver.SandboxPath)+";") {
		t.Errorf("the page's policy is %q; want frame-src of the sandbox origin only", got)
	}

	d.click("#chat-new")
	send("note remember the tea")
	d.click(asking + ` button.deny`)
	waitIdle()

	// Stop during a slow tool: the run ends as stopped, the server is told.
	send("slow")
	d.until("slow's progress", `/of 20/.test(document.querySelector('`+call("demo", "slow")+` .chat-tool-state')?.textContent ?? "")`)
	d.click("#chat-stop")
	waitIdle()
	d.shown(`#chat-log li.chat-note[data-kind="stopped"]`)
	if got := d.js(`document.querySelector('` + call("demo", "slow") + `').dataset.state`); got != "stopped" {
		t.Errorf("the slow call's state after Stop = %q; want stopped", got)
	}
	d.waitFor("the server to observe the cancellation", func() bool { return slices.Contains(d.cancelledTools(), "slow") })

	// Any OpenAI-compatible endpoint (here the stand-in's own), with a key
	// that stays in memory.
	const key = "sk-e2e-not-a-real-key-4242"
	d.fill("#model-choice", "custom")
	d.fill("#model-base-url", d.ModelURL)
	d.fill("#model-name", "mcpwasm-standin")
	d.fill("#model-key", key)
	send("echo over an endpoint")
	waitIdle()
	if got := lastAnswer(); !strings.Contains(got, "over an endpoint") {
		t.Errorf("the answer through the endpoint is %q; want the echo", got)
	}
	if got := d.js(`JSON.stringify({...localStorage}) + JSON.stringify({...sessionStorage}) + document.body.innerText + document.querySelector("#log").textContent`); strings.Contains(got, key) {
		t.Error("the API key reached storage, the log or the page's text")
	}
	d.checkPage()
}

// TestDemoChatAfterAReload: the demo's chat is a stored conversation. A
// tool's view shown live as the model wrote the call keeps the note being
// written in its localStorage (the host keeps the view's state); after a
// reload the chat shows the conversation as it was, the call's view
// rendered again from what the conversation kept, with the note being
// written back in its field; the conversation goes on; New chat deletes
// it, so the next reload starts empty.
func TestDemoChatAfterAReload(t *testing.T) {
	eitherRuntime(t)
	parallel(t)
	d := newDemoWorld(t, false)
	d.openDemo("/")
	d.shown(`#servers li[data-server="notes"][data-state="connected"]`)
	d.enabled("#chat-send")
	d.fill("#chat-input", "list notes")
	d.enter("#chat-input")
	d.shown(`#chat-log[data-runs="1"]`)
	listCall := `#chat-log li.chat-tool[data-server="notes"][data-tool="note_list"]`
	d.shown(listCall + `[data-state="ok"][data-view="ready"] .chat-tool-view[data-live="true"] iframe`)
	view := []string{listCall + " .chat-tool-view iframe", "iframe"}
	var shows struct {
		Notes string `json:"notes"`
		Draft string `json:"draft"`
	}
	viewShows := func() bool {
		shows.Notes, shows.Draft = "", ""
		_ = d.win.EvalIn(d.ctx, view, `({ notes: document.getElementById("view")?.dataset.notes ?? "", draft: document.getElementById("note-text")?.value ?? "" })`, &shows)
		return shows.Notes != ""
	}
	d.waitFor("the view to list the notes", viewShows)
	notes := shows.Notes
	const draft = "half a thought"
	if err := d.win.EvalIn(d.ctx, view, `(() => { const e = document.getElementById("note-text"); e.value = "`+draft+`"; e.dispatchEvent(new Event("input", { bubbles: true })); return true; })()`, nil); err != nil {
		t.Fatalf("writing in the view's field: %v", err)
	}
	// Kept: the view's storage holds "draft" and the note, 19 characters.
	d.shown(listCall + fmt.Sprintf(` .chat-tool-view[data-kept="%d"]`, len("draft")+len(draft)))
	// The answer, without who gave it (a label the restored chat words
	// otherwise).
	answerOf := func() string {
		return d.js(`document.querySelector("#chat-log li.chat-msg.assistant .chat-text").textContent`)
	}
	answer := answerOf()

	if err := d.win.Reload(d.ctx); err != nil {
		t.Fatalf("reload: %v", err)
	}
	d.until("the demo page to be ready after the reload", `document.body.dataset.ready === "true"`)
	d.shown(`#chat-log[data-restored="true"]`)
	if got := d.text(`#chat-log li.chat-note[data-kind="info"]`); !strings.Contains(got, "as you left it") {
		t.Errorf("the restored chat says %q; want that it is the conversation as left", got)
	}
	if got := d.text(`#chat-log li.chat-msg.user`); !strings.Contains(got, "list notes") {
		t.Errorf("the restored chat's message is %q; want list notes", got)
	}
	if got := answerOf(); got != answer || got == "" {
		t.Errorf("the restored answer is %q; want the one given before the reload, %q", got, answer)
	}
	d.shown(listCall + `[data-state="ok"][data-view="ready"] .chat-tool-view[data-live="false"] iframe`)
	d.waitFor("the restored view to show the notes and the note being written", func() bool { return viewShows() && shows.Draft == draft })
	if shows.Notes != notes {
		t.Errorf("the restored view lists %s notes; want %s", shows.Notes, notes)
	}

	// The conversation goes on from where it was.
	d.fill("#chat-input", "add 2 and 40")
	d.enter("#chat-input")
	d.shown(`#chat-log[data-runs="1"]`)
	if got := d.js(`[...document.querySelectorAll("#chat-log li.chat-msg.assistant")].at(-1).querySelector(".chat-text").textContent`); !strings.Contains(got, "42") {
		t.Errorf("the next answer is %q; want 42", got)
	}

	// New chat deletes the stored conversation, and what its views kept:
	// IndexedDB holds neither; a reload starts empty.
	d.click("#chat-new")
	var left struct {
		Conversations int `json:"conversations"`
		Views         int `json:"views"`
	}
	d.eval(`(async () => {
		const count = (store) => new Promise((res, rej) => {
			const r = indexedDB.open("mcpwasm");
			r.onerror = () => rej(r.error);
			r.onsuccess = () => { const db = r.result; const q = db.transaction(store).objectStore(store).count(); q.onsuccess = () => { db.close(); res(q.result); }; q.onerror = () => rej(q.error); };
		});
		let n = {};
		for (let i = 0; i < 100; i++) {
			n = { conversations: await count("conversations"), views: await count("views") };
			if (n.conversations === 0 && n.views === 0) break;
			await new Promise((ok) => setTimeout(ok, 100));
		}
		return n;
	})()`, &left)
	if left.Conversations != 0 || left.Views != 0 {
		t.Errorf("after New chat IndexedDB holds %d conversations and %d views' states; want none", left.Conversations, left.Views)
	}
	if err := d.win.Reload(d.ctx); err != nil {
		t.Fatalf("reload: %v", err)
	}
	d.until("the demo page to be ready after the reload", `document.body.dataset.ready === "true"`)
	d.shown(`#chat-log[data-restored="true"]`)
	if got := d.js(`document.querySelectorAll("#chat-log li.chat-tool, #chat-log li.chat-msg").length`); got != "0" {
		t.Errorf("after New chat and a reload the chat shows %s messages and calls; want none", got)
	}
	d.checkPage()
}
