package e2e

import (
	"fmt"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
)

// TestDemoChat drives the Chat panel with the dev server's scripted
// stand-in model over the Servers panel's catalog: one message calls tools
// on both demo servers, a tool that is not read-only asks Approve / Deny
// (Deny: the model is told the user refused; Approve: it runs), Stop ends a
// run during a slow tool, and an OpenAI-compatible endpoint with an API key
// works without the key reaching storage, the log or the page.
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
