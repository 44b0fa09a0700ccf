package e2e

import (
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
)

// TestDemoPage drives web/index.html the way a person does: real clicks and
// key presses, reading what the page shows. It covers loading, connecting
// (button and Enter), the generated form of "add", the result, progress and
// cancellation of "slow", and keeps a full-page screenshot as an artifact.
func TestDemoPage(t *testing.T) {
	e := newEnv(t)
	ctx := e.ctx

	// Uncaught exceptions and console errors on the page fail the test.
	var mu sync.Mutex
	var pageErrors []string
	if err := chromedp.Listen(ctx, func(ev any) {
		mu.Lock()
		defer mu.Unlock()
		switch ev := ev.(type) {
		case *runtime.EventExceptionThrown:
			d := ev.ExceptionDetails
			msg := d.Text
			if d.Exception != nil {
				msg += " " + d.Exception.Description
			}
			pageErrors = append(pageErrors, "exception: "+msg)
		case *runtime.EventConsoleAPICalled:
			if ev.Type == runtime.ConsoleAPICalledTypeError {
				var parts []string
				for _, a := range ev.Args {
					parts = append(parts, string(a.Value)+a.Description)
				}
				pageErrors = append(pageErrors, "console.error: "+strings.Join(parts, " "))
			}
		}
	}); err != nil {
		t.Fatal(err)
	}

	do := func(what string, actions ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		if err := chromedp.Do(ctx, actions...); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	text := func(sel string) string {
		t.Helper()
		s, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(sel)))
		if err != nil {
			t.Fatalf("text of %s: %v", sel, err)
		}
		return s
	}
	value := func(sel string) string {
		t.Helper()
		s, err := chromedp.Run(ctx, chromedp.Value(chromedp.CSS(sel)))
		if err != nil {
			t.Fatalf("value of %s: %v", sel, err)
		}
		return s
	}
	js := func(expr string) string {
		t.Helper()
		var s string
		e.eval(expr, &s)
		return s
	}
	// fill replaces a field's value by typing: focus, select all, type.
	fill := func(sel, v string) {
		t.Helper()
		do("fill "+sel,
			chromedp.Focus(chromedp.CSS(sel)),
			chromedp.KeyEvent("a", chromedp.KeyModifiers(chromedp.ModifierCtrl)),
			chromedp.KeyEvent(v))
		if got := value(sel); got != v {
			t.Fatalf("%s = %q after typing; want %q", sel, got, v)
		}
	}
	waitState := func(state string) {
		t.Helper()
		do("wait for state "+state, chromedp.WaitVisible(chromedp.CSS(`#state[data-state="`+state+`"]`)))
	}

	// Load: the progress area ends as "ready", and the URL comes from ?server=.
	do("open the demo page",
		chromedp.Navigate(e.PageURL+"/?server="+url.QueryEscape(e.MCPURL)),
		chromedp.WaitVisible(chromedp.CSS(`#load-progress[data-state="done"]`)),
		chromedp.WaitEnabled(chromedp.ID("connect")))
	if got := text("#load-progress"); !strings.Contains(got, "ready") {
		t.Errorf("#load-progress says %q after loading; want it to say ready", got)
	}
	if got := value("#server-url"); got != e.MCPURL {
		t.Errorf("server URL field = %q; want the ?server= parameter %q", got, e.MCPURL)
	}

	// Connect with the button.
	do("connect", chromedp.Click(chromedp.ID("connect")))
	waitState("connected")
	do("tool list", chromedp.WaitVisible(chromedp.CSS(`#tools button[data-tool="add"]`)))
	if got := text("#state"); !strings.Contains(got, "Connected") {
		t.Errorf("state badge = %q; want Connected", got)
	}
	if got := text("#server-name"); !strings.Contains(got, "mcpwasm-demo") {
		t.Errorf("server name shown = %q; want mcpwasm-demo", got)
	}
	if got := text("#instructions"); !strings.Contains(got, "demo server") {
		t.Errorf("instructions shown = %q", got)
	}
	do("resources and prompts listed",
		chromedp.WaitVisible(chromedp.CSS(`#resources button[data-uri]`)),
		chromedp.WaitVisible(chromedp.CSS(`#prompts button[data-prompt]`)))

	// add: type into the generated inputs, check Tab reaches Call, click Call.
	do("select add",
		chromedp.Click(chromedp.CSS(`#tools button[data-tool="add"]`)),
		chromedp.WaitVisible(chromedp.CSS(`#tool-form input[name="a"]`)))
	if got := value(`#tool-form input[name="a"]`); got != "2" {
		t.Errorf("a's default = %q; want the schema default 2", got)
	}
	fill(`#tool-form input[name="a"]`, "2")
	fill(`#tool-form input[name="b"]`, "40")
	do("tab from b", chromedp.Focus(chromedp.CSS(`#tool-form input[name="b"]`)), chromedp.KeyEvent(kb.Tab))
	if got := js(`document.activeElement.id`); got != "call" {
		t.Errorf("Tab from the last field focused #%s; want #call", got)
	}
	do("call add",
		chromedp.Click(chromedp.ID("call")),
		chromedp.WaitVisible(chromedp.CSS(`#result[data-state="ok"]`)))
	res := text("#result")
	if !strings.Contains(res, "2 + 40 = 42") || !strings.Contains(res, `"sum": 42`) {
		t.Errorf("#result shows %q; want the text 2 + 40 = 42 and the structured {\"sum\": 42}", res)
	}

	// slow: progress shows while it runs (Cancel enabled), and at the end.
	do("select slow",
		chromedp.Click(chromedp.CSS(`#tools button[data-tool="slow"]`)),
		chromedp.WaitVisible(chromedp.CSS(`#tool-form input[name="steps"]`)))
	fill(`#tool-form input[name="steps"]`, "4")
	fill(`#tool-form input[name="delayMs"]`, "300")
	do("call slow",
		chromedp.Click(chromedp.ID("call")),
		chromedp.WaitVisible(chromedp.CSS(`#progress[data-state="running"]`)),
		chromedp.WaitEnabled(chromedp.ID("cancel")))
	if got := text("#progress"); !strings.Contains(got, "of 4") {
		t.Errorf("progress while slow runs = %q; want \"Step n of 4\"", got)
	}
	do("slow finishes", chromedp.WaitVisible(chromedp.CSS(`#result[data-state="ok"]`)))
	if got := text("#progress"); !strings.Contains(got, "Step 4 of 4") || !strings.Contains(got, "100%") {
		t.Errorf("progress after slow = %q; want Step 4 of 4 · 100%%", got)
	}
	if got := js(`String(document.querySelector("#cancel").disabled)`); got != "true" {
		t.Error("Cancel stays enabled after the call ended")
	}

	// Cancel a long slow call: the page says cancelled, the server sees it.
	fill(`#tool-form input[name="steps"]`, "50")
	do("cancel slow",
		chromedp.Click(chromedp.ID("call")),
		chromedp.WaitVisible(chromedp.CSS(`#progress[data-state="running"]`)),
		chromedp.Click(chromedp.ID("cancel")),
		chromedp.WaitVisible(chromedp.CSS(`#result[data-state="cancelled"]`)))
	e.waitFor("the server to observe the cancellation", func() bool {
		return slices.Contains(e.cancelledTools(), "slow")
	})

	// Disconnect, then connect again from the keyboard: Enter in the URL field.
	do("disconnect", chromedp.Click(chromedp.ID("connect")))
	waitState("closed")
	do("enter connects",
		chromedp.Focus(chromedp.ID("server-url")),
		chromedp.KeyEvent(kb.Enter))
	waitState("connected")

	// Elicitation: the dialog's generated form, Enter accepts, Escape cancels.
	do("ask_user",
		chromedp.Click(chromedp.CSS(`#tools button[data-tool="ask_user"]`)),
		chromedp.WaitVisible(chromedp.CSS(`#tool-form input[name="message"]`)),
		chromedp.Click(chromedp.ID("call")),
		chromedp.WaitVisible(chromedp.CSS(`#elicit-dialog input[name="name"]`)),
		chromedp.SendKeys(chromedp.CSS(`#elicit-dialog input[name="name"]`), "Ada"+kb.Enter),
		chromedp.WaitVisible(chromedp.CSS(`#result[data-state="ok"]`)))
	if got := text("#result"); !strings.Contains(got, "name: Ada") || !strings.Contains(got, "color: blue") {
		t.Errorf("ask_user result = %q; want the answers (name: Ada, default color: blue)", got)
	}
	do("ask_user, escape",
		chromedp.Click(chromedp.ID("call")),
		chromedp.WaitVisible(chromedp.CSS(`#elicit-dialog input[name="name"]`)),
		chromedp.KeyEvent(kb.Escape),
		chromedp.WaitNotVisible(chromedp.ID("elicit-dialog")),
		chromedp.WaitVisible(chromedp.CSS(`#result[data-state="ok"]`)))
	if got := text("#result"); !strings.Contains(got, "cancelled") {
		t.Errorf("ask_user after Escape = %q; want cancelled", got)
	}

	// Sampling: the canned reply goes back as the model's answer.
	do("summarize",
		chromedp.Click(chromedp.CSS(`#tools button[data-tool="summarize"]`)),
		chromedp.WaitVisible(chromedp.CSS(`#tool-form input[name="text"]`)),
		chromedp.Click(chromedp.ID("call")),
		chromedp.WaitVisible(chromedp.ID("sampling-canned")),
		chromedp.Click(chromedp.ID("sampling-canned")),
		chromedp.Click(chromedp.ID("sampling-send")),
		chromedp.WaitVisible(chromedp.CSS(`#result[data-state="ok"]`)))
	if got := text("#result"); !strings.Contains(got, "human-in-the-loop") {
		t.Errorf("summarize result = %q; want the reply's model human-in-the-loop", got)
	}

	// list_changed: add_tool makes the new tool appear in the list.
	do("add_tool",
		chromedp.Click(chromedp.CSS(`#tools button[data-tool="add_tool"]`)),
		chromedp.WaitVisible(chromedp.CSS(`#tool-form input[name="name"]`)),
		chromedp.Click(chromedp.ID("call")),
		chromedp.WaitVisible(chromedp.CSS(`#tools button[data-tool="dynamic_hello"]`)))

	// Enter in a generated field submits the tool form.
	do("select add again",
		chromedp.WaitVisible(chromedp.CSS(`#tools button[data-tool="add"]`)),
		chromedp.Click(chromedp.CSS(`#tools button[data-tool="add"]`)),
		chromedp.WaitVisible(chromedp.CSS(`#tool-form input[name="a"]`)))
	fill(`#tool-form input[name="a"]`, "2")
	fill(`#tool-form input[name="b"]`, "40")
	do("enter calls add",
		chromedp.KeyEvent(kb.Enter),
		chromedp.WaitVisible(chromedp.CSS(`#result[data-state="ok"]`)))
	if got := text("#result"); !strings.Contains(got, "42") {
		t.Errorf("#result after Enter = %q; want 42", got)
	}
	if got := text("#log"); !strings.Contains(got, "connected") {
		t.Errorf("event log = %q; want the state changes", got)
	}

	// The screenshot, after the tool call.
	dir := filepath.Join(repoRoot, "e2e", "artifacts")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	shot, err := chromedp.Run(ctx, chromedp.FullScreenshot(100)) // 100: PNG
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	path := filepath.Join(dir, "demo-page.png")
	if err := os.WriteFile(path, shot, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot of the demo page after a tool call: %s", path)

	if got := js(`document.body.dataset.cspViolations || "0"`); got != "0" {
		t.Errorf("%s Content-Security-Policy violations on the page; see the event log:\n%s", got, text("#log"))
	}
	time.Sleep(50 * time.Millisecond) // let late console events arrive
	mu.Lock()
	defer mu.Unlock()
	for _, msg := range pageErrors {
		t.Errorf("page error: %s", msg)
	}
}
