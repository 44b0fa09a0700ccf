package e2e

import (
	"context"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/mcpwasm/mcpwasm/demo"
	"github.com/mcpwasm/mcpwasm/devkit/devserver"
)

// TestDemoChat drives the Chat panel with the dev server's scripted
// stand-in model over the Servers panel's catalog: one message calls tools
// on both demo servers, a tool that is not read-only asks Approve / Deny
// (Deny: the model is told the user refused; Approve: it runs), Stop ends a
// run during a slow tool, a tool with a view (note_list) shows the server's
// view under its call, from the sandbox origin, which adds a note, and an
// OpenAI-compatible endpoint with an API key works without the key
// reaching storage, the log or the page.
func TestDemoChat(t *testing.T) {
	onlyInPass(t, "auto", demoInDefaultRuntime)
	t.Parallel()
	e := newDemoEnv(t, false)
	call := func(server, tool string) string {
		return fmt.Sprintf(`#chat-log li.chat-tool[data-server=%q][data-tool=%q]`, server, tool)
	}
	answers := func() int {
		t.Helper()
		var n int
		e.eval(`document.querySelectorAll("#chat-log li.chat-msg.assistant").length`, &n)
		return n
	}
	lastAnswer := func() string {
		return e.js(`[...document.querySelectorAll("#chat-log li.chat-msg.assistant")].at(-1).querySelector(".chat-text").textContent`)
	}
	// send types a message and presses Enter; waitIdle waits for its run
	// to end (the chat log counts the runs that ended).
	runs := 0
	send := func(msg string) {
		t.Helper()
		e.do("send "+msg,
			chromedp.Click(chromedp.ID("chat-input")),
			chromedp.SendKeys(chromedp.ID("chat-input"), msg+kb.Enter))
		runs++
	}
	waitIdle := func() {
		t.Helper()
		e.do("the run ends", chromedp.WaitVisible(chromedp.CSS(fmt.Sprintf(`#chat-log[data-runs="%d"]`, runs))))
		if got := e.js(`document.querySelector("#chat-send").disabled`); got != "false" {
			t.Error("Send stays disabled after the run ended")
		}
	}

	// ?server= (the explorer's server) wins over the dev server's default.
	e.openDemo("/?server=" + url.QueryEscape(e.SSEURL))
	if got := e.value("#server-url"); got != e.SSEURL {
		t.Errorf("server URL field = %q; want the ?server= parameter %q", got, e.SSEURL)
	}
	e.do("both servers connected",
		chromedp.WaitVisible(chromedp.CSS(`#servers li[data-server="demo"][data-state="connected"]`)),
		chromedp.WaitVisible(chromedp.CSS(`#servers li[data-server="notes"][data-state="connected"]`)),
		chromedp.WaitEnabled(chromedp.ID("chat-send")))
	if got := e.js(`document.querySelector("#model-choice").selectedOptions[0].textContent`); !strings.Contains(got, "scripted stand-in, not a real model") {
		t.Errorf("the default model is labelled %q; want it to say it is a scripted stand-in, not a real model", got)
	}
	if got := e.js(`document.querySelector("#chat-log").getAttribute("aria-live")`); got != "polite" {
		t.Errorf("the chat log's aria-live = %q; want polite", got)
	}

	// One message, tools on two servers, one answer.
	send("add 2 and 40 and reverse hello")
	waitIdle()
	e.do("both tool calls shown",
		chromedp.WaitVisible(chromedp.CSS(call("demo", "add")+`[data-state="ok"]`)),
		chromedp.WaitVisible(chromedp.CSS(call("notes", "reverse")+`[data-state="ok"]`)))
	if got := e.text(call("demo", "add")); !strings.Contains(got, "Demo server · add") || !strings.Contains(got, `"a": 2`) || !strings.Contains(got, "2 + 40 = 42") {
		t.Errorf("the add call shows %q; want its server, arguments and result", got)
	}
	if got := e.text(call("notes", "reverse")); !strings.Contains(got, "Notes server · reverse") || !strings.Contains(got, `"text": "hello"`) || !strings.Contains(got, "olleh") {
		t.Errorf("the reverse call shows %q; want its server, arguments and result", got)
	}
	if got := lastAnswer(); !strings.HasPrefix(got, "Results:") || !strings.Contains(got, "42") || !strings.Contains(got, "olleh") {
		t.Errorf("the answer is %q; want Results: with 42 and olleh", got)
	}
	// The model's work: its reasoning (folded) and the turn's tokens.
	if got := e.js(`[...document.querySelectorAll("#chat-log li.chat-reasoning")].map((li) => li.textContent).join(" | ")`); !strings.Contains(got, "matches my script for demo_add and notes_reverse") || !strings.Contains(got, "pass their results on") {
		t.Errorf("the reasoning shown is %q; want the stand-in's reasoning of both steps", got)
	}
	if got := e.text(`#chat-log li.chat-note[data-kind="usage"]`); !strings.Contains(got, "Tokens this turn:") || !strings.Contains(got, "cached") || !strings.Contains(got, "reasoning") || !strings.Contains(got, "over 2 model responses") {
		t.Errorf("the turn's tokens read %q; want the totals over its 2 model responses, cached and reasoning tokens included", got)
	}

	// A tool that is not read-only asks first. Deny: the model hears it.
	before := answers()
	send("note buy milk")
	e.do("the approval prompt", chromedp.WaitVisible(chromedp.CSS(`#chat-log li.chat-approval[data-tool="note_add"] button.deny`)))
	if got := e.text(`#chat-log li.chat-approval[data-tool="note_add"]`); !strings.Contains(got, "note_add") || !strings.Contains(got, "buy milk") {
		t.Errorf("the approval prompt says %q; want the tool and its arguments", got)
	}
	e.do("deny", chromedp.Click(chromedp.CSS(`#chat-log li.chat-approval[data-tool="note_add"] button.deny`)))
	waitIdle()
	if answers() != before+1 || !strings.Contains(lastAnswer(), "refused") {
		t.Errorf("the answer after Deny is %q; want it to say the user refused", lastAnswer())
	}
	e.do("the call shows denied", chromedp.WaitVisible(chromedp.CSS(call("notes", "note_add")+`[data-state="denied"]`)))

	// Approve: the note is saved.
	send("note remember the eggs")
	e.do("approve",
		chromedp.WaitVisible(chromedp.CSS(`#chat-log li.chat-approval[data-state="asking"] button.approve`)),
		chromedp.Click(chromedp.CSS(`#chat-log li.chat-approval[data-state="asking"] button.approve`)))
	waitIdle()
	if got := lastAnswer(); !strings.Contains(got, "Saved note 1") {
		t.Errorf("the answer after Approve is %q; want Saved note 1", got)
	}

	// Allow for this chat: the next note of the conversation runs without
	// asking, marked so; after New chat it asks again.
	prompts := func() string { return e.js(`String(document.querySelectorAll("#chat-log li.chat-approval").length)`) }
	send("note remember the bread")
	e.do("allow for this chat",
		chromedp.WaitVisible(chromedp.CSS(`#chat-log li.chat-approval[data-state="asking"] button.allow-chat`)),
		chromedp.Click(chromedp.CSS(`#chat-log li.chat-approval[data-state="asking"] button.allow-chat`)))
	waitIdle()
	asked := prompts()
	send("note remember the jam")
	waitIdle()
	if got := lastAnswer(); !strings.Contains(got, "Saved note 3") || prompts() != asked {
		t.Errorf("after Allow for this chat: %q, %s prompts (were %s); want Saved note 3 without a prompt", got, prompts(), asked)
	}
	if got := e.text(`#chat-log li.chat-tool[data-approval="remembered"]`); !strings.Contains(got, "allowed for this chat") {
		t.Errorf("the remembered call shows %q; want \"allowed for this chat\"", got)
	}
	// A tool with a view (MCP Apps): the notes server's note_list shows
	// its view under the call, framed from the sandbox origin (the page's
	// policy frames that origin only; checkPageErrors finds no violation),
	// and the view starts (the host's ready: the chat marks the call
	// data-view="ready") and sizes itself.
	send("list notes")
	waitIdle()
	listCall := call("notes", "note_list")
	e.do("the notes view is ready under its call", chromedp.WaitVisible(chromedp.CSS(listCall+`[data-state="ok"][data-view="ready"] .chat-tool-view iframe`)))
	if got := e.text(listCall + " .chat-tool-result"); !strings.Contains(got, "3. ") || !strings.Contains(got, "jam") {
		t.Errorf("the note_list call shows %q; want the three notes as text", got)
	}
	frame := `document.querySelector('` + listCall + ` .chat-tool-view iframe')`
	if got := e.js(frame + `.src`); got != e.SandboxURL {
		t.Errorf("the view's frame is %q; want the sandbox proxy %q", got, e.SandboxURL)
	}
	if got := e.js(frame + `.dataset.mcpView`); got != demo.NotesViewURI {
		t.Errorf("the view's frame shows %q; want %s", got, demo.NotesViewURI)
	}
	e.waitJS("the view to report its height", frame+`.style.height !== "150px"`)
	// Into the view (its frame is a target of its own): add a note. The
	// view's note_add asks Approve / Deny in the chat as the view's call,
	// without Allow for this chat; its note_list (read-only) does not ask;
	// the view lists the new note. The field is filled and Add clicked by
	// script in the view's document (input events through the frame's
	// target were not tried): the view's own click handler runs.
	viewCtx := e.viewTarget("#note-add")
	e.doIn(viewCtx, "fill the view's field", chromedp.SetValue(chromedp.CSS("#note-text"), "from the view"))
	if _, err := chromedp.Run(viewCtx, chromedp.Evaluate[any](`document.getElementById("note-add").click(), null`)); err != nil {
		t.Fatalf("clicking Add in the view: %v", err)
	}
	e.do("the view's call asks first",
		chromedp.WaitVisible(chromedp.CSS(`#chat-log li.chat-approval[data-tool="note_add"][data-state="asking"] button.approve`)))
	if got := e.text(`#chat-log li.chat-approval[data-state="asking"]`); !strings.Contains(got, "The view of Notes server wants to run note_add") || !strings.Contains(got, "from the view") {
		t.Errorf("the view's approval prompt says %q; want the view, the tool and its arguments", got)
	}
	if got := e.js(`String(!!document.querySelector('#chat-log li.chat-approval[data-state="asking"] button.allow-chat'))`); got != "false" {
		t.Error("the view's approval prompt offers Allow for this chat, which only the agent's calls remember")
	}
	e.do("approve the view's call", chromedp.Click(chromedp.CSS(`#chat-log li.chat-approval[data-state="asking"] button.approve`)))
	viewState := func() string {
		got, err := chromedp.Run(viewCtx, chromedp.Evaluate[string](`JSON.stringify({notes: document.getElementById("view").dataset.notes, status: document.getElementById("status").textContent, error: document.getElementById("error").textContent})`))
		if err != nil {
			return err.Error()
		}
		return got
	}
	for start := time.Now(); !strings.Contains(viewState(), `"notes":"4"`); time.Sleep(200 * time.Millisecond) {
		if time.Since(start) > 30*time.Second {
			t.Fatalf("the view does not list the note it added: %s", viewState())
		}
	}
	listed, err := chromedp.Run(viewCtx, chromedp.Text(chromedp.CSS("#notes")))
	if err != nil {
		t.Fatalf("the view's list: %v", err)
	}
	if got := e.js(`String(document.querySelectorAll('#chat-log li.chat-approval[data-tool="note_list"]').length)`); got != "0" {
		t.Errorf("the view's note_list (read-only) asked for approval %s times; want never", got)
	}
	if !strings.Contains(listed, "from the view") {
		t.Errorf("the view lists %q; want the note added from it", listed)
	}
	e.shot("demo-notes-view.png", listCall)
	if got := e.js(`document.querySelector('meta[http-equiv="Content-Security-Policy"]').content`); !strings.Contains(got, "frame-src "+strings.TrimSuffix(e.SandboxURL, devserver.SandboxPath)+";") {
		t.Errorf("the page's policy is %q; want frame-src of the sandbox origin only", got)
	}

	e.do("new chat", chromedp.Click(chromedp.ID("chat-new")))
	send("note remember the tea")
	e.do("asked again in a new chat",
		chromedp.WaitVisible(chromedp.CSS(`#chat-log li.chat-approval[data-state="asking"] button.deny`)),
		chromedp.Click(chromedp.CSS(`#chat-log li.chat-approval[data-state="asking"] button.deny`)))
	waitIdle()

	// Stop during a slow tool: the run ends as stopped, the server is told.
	send("slow")
	e.waitJS("slow's progress", `/of 20/.test(document.querySelector('`+call("demo", "slow")+` .chat-tool-state')?.textContent ?? "")`)
	e.do("stop", chromedp.WaitVisible(chromedp.ID("chat-stop")), chromedp.Click(chromedp.ID("chat-stop")))
	waitIdle()
	e.do("stopped", chromedp.WaitVisible(chromedp.CSS(`#chat-log li.chat-note[data-kind="stopped"]`)))
	if got := e.js(`document.querySelector('` + call("demo", "slow") + `').dataset.state`); got != "stopped" {
		t.Errorf("the slow call's state after Stop = %q; want stopped", got)
	}
	e.waitFor("the server to observe the cancellation", func() bool { return slices.Contains(e.cancelledTools(), "slow") })
	e.shot("demo-servers-chat.png", ".agent")

	// Any OpenAI-compatible endpoint (here the stand-in's own), with a key
	// that stays in memory.
	const key = "sk-e2e-not-a-real-key-4242"
	e.do("pick an endpoint",
		chromedp.Click(chromedp.ID("model-choice")),
		chromedp.KeyEvent(kb.ArrowDown), chromedp.KeyEvent(kb.Enter),
		chromedp.WaitVisible(chromedp.ID("model-base-url")),
		chromedp.SendKeys(chromedp.ID("model-base-url"), e.ModelURL),
		chromedp.SendKeys(chromedp.ID("model-name"), "mcpwasm-standin"),
		chromedp.SendKeys(chromedp.ID("model-key"), key))
	send("echo over an endpoint")
	waitIdle()
	if got := lastAnswer(); !strings.Contains(got, "over an endpoint") {
		t.Errorf("the answer through the endpoint is %q; want the echo", got)
	}
	if got := e.js(`JSON.stringify({...localStorage}) + JSON.stringify({...sessionStorage}) + document.body.innerText + document.querySelector("#log").textContent`); strings.Contains(got, key) {
		t.Error("the API key reached storage, the log or the page's text")
	}
	e.checkPageErrors()
}

// viewTarget attaches to the frame of a server's view that has an element
// matching sel: Chrome runs a sandboxed frame (an opaque origin) in a
// process of its own, as a target of type "iframe" at about:srcdoc, which
// queries from the page's DOM do not reach.
func (e *demoEnv) viewTarget(sel string) context.Context {
	e.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		infos, err := chromedp.Targets(e.ctx)
		if err != nil {
			e.t.Fatalf("listing the targets: %v", err)
		}
		for _, info := range infos {
			if info.Type != "iframe" || info.URL != "about:srcdoc" {
				continue
			}
			ctx, cancel := chromedp.NewContext(e.ctx, chromedp.WithTargetID(info.TargetID))
			e.t.Cleanup(cancel)
			// Attach with ctx itself: the first run's context is the
			// attachment's lifetime, so it must not be the probe's.
			if err := chromedp.Do(ctx); err != nil {
				continue
			}
			probe, done := context.WithTimeout(ctx, 2*time.Second)
			_, err := chromedp.Run(probe, chromedp.Nodes(chromedp.CSS(sel)))
			done()
			if err == nil {
				return ctx
			}
		}
		time.Sleep(200 * time.Millisecond)
	}
	e.t.Fatalf("no view's frame with %s", sel)
	return nil
}

// doIn runs actions in ctx (a frame's target), within 30 s.
func (e *demoEnv) doIn(ctx context.Context, what string, actions ...chromedp.Action[chromedp.Void]) {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := chromedp.Do(ctx, actions...); err != nil {
		e.t.Fatalf("%s: %v", what, err)
	}
}
