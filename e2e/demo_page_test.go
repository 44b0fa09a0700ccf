package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
)

// TestDemoPage drives the demo page's "Explore one server" panels the way a
// person does: real clicks and key presses, reading what the page shows. It
// covers loading (the ready line says what was downloaded), the default
// server from the dev server's config, connecting (button and Enter), the
// generated form of "add" (typing replaces, an empty field sends the
// default), the result, progress and cancellation of "slow", elicitation,
// sampling, list_changed, and keeps a full-page screenshot as an artifact.
func TestDemoPage(t *testing.T) {
	onlyInPass(t, "auto", demoInDefaultRuntime)
	t.Parallel()
	e := newDemoEnv(t, false)

	// Load: the progress area ends as "ready", with the bytes that went over
	// the network (the gzip-compressed module), not the module's size.
	e.openDemo("/")
	e.do("loaded", chromedp.WaitVisible(chromedp.CSS(`#load-progress[data-state="done"]`)), chromedp.WaitEnabled(chromedp.ID("connect")))
	ready := e.text("#load-progress")
	gz, err := os.Stat(filepath.Join(webDir, "mcp.wasm.gz"))
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.Stat(filepath.Join(webDir, "mcp.wasm"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(ready, mib(raw.Size())+" downloaded") {
		t.Errorf("#load-progress says %q: the uncompressed size as downloaded", ready)
	}
	// The module is downloaded once, by whoever runs the Go runtime.
	var wasmGets int
	wasm := builtWasm(t)
	for _, r := range e.requestLog() {
		if r == "GET page "+wasm {
			wasmGets++
		}
	}
	if wasmGets != 1 {
		t.Errorf("mcp.wasm was requested %d times; want once", wasmGets)
	}
	if onMainThread() {
		// The page downloaded it: the ready line says how much went over the network.
		if !strings.Contains(ready, "ready") || !strings.Contains(ready, mib(gz.Size())+" downloaded") || !strings.Contains(ready, " in ") {
			t.Errorf("#load-progress says %q; want ready, %s downloaded (the gzip size) and the load time", ready, mib(gz.Size()))
		}
		if n, _ := strconv.ParseInt(e.js(`document.querySelector("#load-progress").dataset.transferredBytes`), 10, 64); n < gz.Size() || n > gz.Size()+8192 {
			t.Errorf("transferred bytes = %d; want the gzip size %d plus headers", n, gz.Size())
		}
	} else {
		// The worker downloaded it: the page's own network saw no module,
		// and the ready line gives the load time without a size it cannot know.
		if n := e.js(`performance.getEntriesByType("resource").filter((r) => r.name.endsWith(".wasm")).length`); n != "0" {
			t.Errorf("the page itself fetched mcp.wasm %s times in a worker runtime; want none (the worker fetches it)", n)
		}
		if !strings.Contains(ready, "ready") || !strings.Contains(ready, " in ") || strings.Contains(ready, "downloaded") {
			t.Errorf("#load-progress says %q; want ready and the load time", ready)
		}
	}

	// The URL field holds the dev server's demo server (from its config).
	if got := e.value("#server-url"); got != e.MCPURL {
		t.Errorf("server URL field = %q; want the dev server's demo server %q", got, e.MCPURL)
	}

	// A real failure is an error: the red banner and an error in the log.
	e.fill("#server-url", "http://127.0.0.1:1/mcp")
	e.do("connect to a closed port",
		chromedp.Click(chromedp.ID("connect")),
		chromedp.WaitVisible(chromedp.CSS(`#state[data-state="failed"]`)),
		chromedp.WaitVisible(chromedp.ID("state-error")))
	if got := e.logLines(); !strings.Contains(got, "error ") {
		t.Errorf("the event log after a failed connect has no error line:\n%s", got)
	}

	// Connect with the button.
	e.fill("#server-url", e.MCPURL)
	e.do("connect", chromedp.Click(chromedp.ID("connect")))
	e.do("connected", chromedp.WaitVisible(chromedp.CSS(`#state[data-state="connected"]`)))
	e.do("tool list", chromedp.WaitVisible(chromedp.CSS(`#tools button[data-tool="add"]`)))
	if got := e.text("#state"); !strings.Contains(got, "Connected") {
		t.Errorf("state badge = %q; want Connected", got)
	}
	if got := e.js(`document.querySelector("#state-error").hidden`); got != "true" {
		t.Errorf("the error banner still shows once connected: %q", e.text("#state-error"))
	}
	if got := e.text("#server-name"); !strings.Contains(got, "mcpwasm-demo") {
		t.Errorf("server name shown = %q; want mcpwasm-demo", got)
	}
	if got := e.text("#instructions"); !strings.Contains(got, "demo server") {
		t.Errorf("instructions shown = %q", got)
	}
	e.do("resources and prompts listed",
		chromedp.WaitVisible(chromedp.CSS(`#resources button[data-uri]`)),
		chromedp.WaitVisible(chromedp.CSS(`#prompts button[data-prompt]`)))

	// add: the defaults are placeholders, not values; an empty form sends them.
	a, b := `#tool-form input[name="a"]`, `#tool-form input[name="b"]`
	e.do("select add",
		chromedp.Click(chromedp.CSS(`#tools button[data-tool="add"]`)),
		chromedp.WaitVisible(chromedp.CSS(a)))
	if got := e.value(a); got != "" {
		t.Errorf("a = %q before typing; want empty (the default 2 as the placeholder)", got)
	}
	if got := e.js(`document.querySelector('` + a + `').placeholder`); !strings.Contains(got, "2") {
		t.Errorf("a's placeholder = %q; want the schema default 2", got)
	}
	e.do("call add with the defaults",
		chromedp.Click(chromedp.ID("call")),
		chromedp.WaitVisible(chromedp.CSS(`#result[data-state="ok"]`)))
	if got := e.text("#result"); !strings.Contains(got, "2 + 3 = 5") {
		t.Errorf("#result with empty fields = %q; want the defaults' 2 + 3 = 5", got)
	}
	// Typing into a field gives what was typed: 2 and 40, not 22 and 340.
	e.do("type 2 and 40",
		chromedp.Click(chromedp.CSS(a)), chromedp.KeyEvent("2"),
		chromedp.Click(chromedp.CSS(b)), chromedp.KeyEvent("40"))
	if ga, gb := e.value(a), e.value(b); ga != "2" || gb != "40" {
		t.Errorf("after typing 2 and 40: a = %q, b = %q", ga, gb)
	}
	e.do("tab from b", chromedp.Focus(chromedp.CSS(b)), chromedp.KeyEvent(kb.Tab))
	if got := e.js(`document.activeElement.id`); got != "call" {
		t.Errorf("Tab from the last field focused #%s; want #call", got)
	}
	e.do("call add",
		chromedp.Click(chromedp.ID("call")),
		chromedp.WaitVisible(chromedp.CSS(`#result[data-state="ok"]`)))
	e.waitJS("the 42 result", `document.querySelector("#result").textContent.includes("2 + 40 = 42")`)
	if res := e.text("#result"); !strings.Contains(res, `"sum": 42`) {
		t.Errorf("#result shows %q; want the structured {\"sum\": 42}", res)
	}

	// slow: progress shows while it runs (Cancel enabled), and at the end.
	e.do("select slow",
		chromedp.Click(chromedp.CSS(`#tools button[data-tool="slow"]`)),
		chromedp.WaitVisible(chromedp.CSS(`#tool-form input[name="steps"]`)))
	e.fill(`#tool-form input[name="steps"]`, "4")
	e.fill(`#tool-form input[name="delayMs"]`, "300")
	e.do("call slow",
		chromedp.Click(chromedp.ID("call")),
		chromedp.WaitVisible(chromedp.CSS(`#progress[data-state="running"]`)),
		chromedp.WaitEnabled(chromedp.ID("cancel")))
	if got := e.text("#progress"); !strings.Contains(got, "of 4") {
		t.Errorf("progress while slow runs = %q; want \"Step n of 4\"", got)
	}
	e.do("slow finishes", chromedp.WaitVisible(chromedp.CSS(`#result[data-state="ok"]`)))
	if got := e.text("#progress"); !strings.Contains(got, "Step 4 of 4") || !strings.Contains(got, "100%") {
		t.Errorf("progress after slow = %q; want Step 4 of 4 · 100%%", got)
	}
	if got := e.js(`document.querySelector("#cancel").disabled`); got != "true" {
		t.Error("Cancel stays enabled after the call ended")
	}

	// Cancel a long slow call: the page says cancelled, the server sees it.
	e.fill(`#tool-form input[name="steps"]`, "50")
	e.do("cancel slow",
		chromedp.Click(chromedp.ID("call")),
		chromedp.WaitVisible(chromedp.CSS(`#progress[data-state="running"]`)),
		chromedp.Click(chromedp.ID("cancel")),
		chromedp.WaitVisible(chromedp.CSS(`#result[data-state="cancelled"]`)))
	e.waitFor("the server to observe the cancellation", func() bool {
		return slices.Contains(e.cancelledTools(), "slow")
	})

	// Disconnect, then connect again from the keyboard: Enter in the URL field.
	e.do("disconnect", chromedp.Click(chromedp.ID("connect")))
	e.do("closed", chromedp.WaitVisible(chromedp.CSS(`#state[data-state="closed"]`)))
	e.do("enter connects",
		chromedp.Focus(chromedp.ID("server-url")),
		chromedp.KeyEvent(kb.Enter),
		chromedp.WaitVisible(chromedp.CSS(`#state[data-state="connected"]`)))

	// Elicitation: the dialog's generated form, Enter accepts, Escape cancels.
	e.do("ask_user",
		chromedp.Click(chromedp.CSS(`#tools button[data-tool="ask_user"]`)),
		chromedp.WaitVisible(chromedp.CSS(`#tool-form input[name="message"]`)),
		chromedp.Click(chromedp.ID("call")),
		chromedp.WaitVisible(chromedp.CSS(`#elicit-dialog input[name="name"]`)),
		chromedp.SendKeys(chromedp.CSS(`#elicit-dialog input[name="name"]`), "Ada"+kb.Enter),
		chromedp.WaitVisible(chromedp.CSS(`#result[data-state="ok"]`)))
	if got := e.text("#result"); !strings.Contains(got, "name: Ada") || !strings.Contains(got, "color: blue") {
		t.Errorf("ask_user result = %q; want the answers (name: Ada, default color: blue)", got)
	}
	e.do("ask_user, escape",
		chromedp.Click(chromedp.ID("call")),
		chromedp.WaitVisible(chromedp.CSS(`#elicit-dialog input[name="name"]`)),
		chromedp.KeyEvent(kb.Escape),
		chromedp.WaitNotVisible(chromedp.ID("elicit-dialog")),
		chromedp.WaitVisible(chromedp.CSS(`#result[data-state="ok"]`)))
	if got := e.text("#result"); !strings.Contains(got, "cancelled") {
		t.Errorf("ask_user after Escape = %q; want cancelled", got)
	}

	// Sampling: the canned reply goes back as the model's answer.
	e.do("summarize",
		chromedp.Click(chromedp.CSS(`#tools button[data-tool="summarize"]`)),
		chromedp.WaitVisible(chromedp.CSS(`#tool-form input[name="text"]`)),
		chromedp.Click(chromedp.ID("call")),
		chromedp.WaitVisible(chromedp.ID("sampling-canned")),
		chromedp.Click(chromedp.ID("sampling-canned")),
		chromedp.Click(chromedp.ID("sampling-send")),
		chromedp.WaitVisible(chromedp.CSS(`#result[data-state="ok"]`)))
	if got := e.text("#result"); !strings.Contains(got, "human-in-the-loop") {
		t.Errorf("summarize result = %q; want the reply's model human-in-the-loop", got)
	}

	// list_changed: add_tool makes the new tool appear in the list.
	e.do("add_tool",
		chromedp.Click(chromedp.CSS(`#tools button[data-tool="add_tool"]`)),
		chromedp.WaitVisible(chromedp.CSS(`#tool-form input[name="name"]`)),
		chromedp.Click(chromedp.ID("call")),
		chromedp.WaitVisible(chromedp.CSS(`#tools button[data-tool="dynamic_hello"]`)))

	// Enter in a generated field submits the tool form.
	e.do("select add again",
		chromedp.WaitVisible(chromedp.CSS(`#tools button[data-tool="add"]`)),
		chromedp.Click(chromedp.CSS(`#tools button[data-tool="add"]`)),
		chromedp.WaitVisible(chromedp.CSS(a)))
	e.fill(a, "2")
	e.fill(b, "40")
	e.do("enter calls add",
		chromedp.KeyEvent(kb.Enter),
		chromedp.WaitVisible(chromedp.CSS(`#result[data-state="ok"]`)))
	if got := e.text("#result"); !strings.Contains(got, "42") {
		t.Errorf("#result after Enter = %q; want 42", got)
	}
	if got := e.text("#log"); !strings.Contains(got, "connected") {
		t.Errorf("event log = %q; want the state changes", got)
	}

	e.shot("demo-page.png", "")
	e.checkPageErrors()
}

// fill replaces a field's value by typing: focus, select all, type.
func (e *demoEnv) fill(sel, v string) {
	e.t.Helper()
	e.do("fill "+sel,
		chromedp.Focus(chromedp.CSS(sel)),
		chromedp.KeyEvent("a", chromedp.KeyModifiers(chromedp.ModifierCtrl)),
		chromedp.KeyEvent(v))
	if got := e.value(sel); got != v {
		e.t.Fatalf("%s = %q after typing; want %q", sel, got, v)
	}
}

// mib formats n as the page does for megabytes ("4.1 MB").
func mib(n int64) string {
	return fmt.Sprintf("%.1f MB", float64(n)/(1<<20))
}
