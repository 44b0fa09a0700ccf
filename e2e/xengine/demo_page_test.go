package xengine

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/mcpwasm/mcpwasm/demo"
)

// TestDemoPage drives the demo page's "Explore one server" panels the way
// a person does, reading what the page shows: loading (the ready line
// says what was downloaded, once), the default server from the dev
// server's config, a failed connect shown as an error, connecting (button
// and Enter), the generated form of "add" (empty fields send the
// defaults, the placeholders show them), the result, progress and
// cancellation of "slow", elicitation (Enter accepts, Escape cancels),
// sampling and list_changed.
func TestDemoPage(t *testing.T) {
	parallel(t)
	d := newDemoWorld(t, false)

	// Load: the progress area ends as "ready", with the bytes that went
	// over the network (the gzip-compressed module), not the module's size.
	d.openDemo("/")
	d.shown(`#load-progress[data-state="done"]`)
	d.enabled("#connect")
	ready := d.text("#load-progress")
	gz, err := os.Stat(filepath.Join(webDir, "mcp.wasm.gz"))
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.Stat(filepath.Join(webDir, "mcp.wasm"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(ready, demoMB(raw.Size())+" downloaded") {
		t.Errorf("#load-progress says %q: the uncompressed size as downloaded", ready)
	}
	// The module is downloaded once, by whoever runs the Go runtime.
	if n := d.snapshot()["wasm"]; n != 1 {
		t.Errorf("the module was requested %d times; want once", n)
	}
	if runtimeMode() == "main" {
		// The page downloaded it: the ready line says how much went over
		// the network, the gzip body plus its headers (which can round
		// to the next tenth of a megabyte).
		n, _ := strconv.ParseInt(d.js(`document.querySelector("#load-progress").dataset.transferredBytes`), 10, 64)
		if n < gz.Size() || n > gz.Size()+8192 {
			t.Errorf("transferred bytes = %d; want the gzip size %d plus headers", n, gz.Size())
		}
		if !strings.Contains(ready, "ready") || !strings.Contains(ready, demoMB(n)+" downloaded") || !strings.Contains(ready, " in ") {
			t.Errorf("#load-progress says %q; want ready, %s downloaded (the gzip size %d plus headers) and the load time", ready, demoMB(n), gz.Size())
		}
	} else {
		// A worker downloaded it: the page's own network saw no module,
		// and the ready line gives the load time without a size it
		// cannot know.
		if n := d.js(`performance.getEntriesByType("resource").filter((r) => r.name.endsWith(".wasm")).length`); n != "0" {
			t.Errorf("the page itself fetched the module %s times in a worker runtime; want none (the worker fetches it)", n)
		}
		if !strings.Contains(ready, "ready") || !strings.Contains(ready, " in ") || strings.Contains(ready, "downloaded") {
			t.Errorf("#load-progress says %q; want ready and the load time", ready)
		}
	}

	// The URL field holds the dev server's demo server (from its config).
	if got := d.value("#server-url"); got != d.MCPURL {
		t.Errorf("server URL field = %q; want the dev server's demo server %q", got, d.MCPURL)
	}

	// A real failure is an error: the red banner and an error in the log.
	d.fill("#server-url", "http://127.0.0.1:1/mcp")
	d.click("#connect")
	d.shown(`#state[data-state="failed"]`)
	d.shown("#state-error")
	if got := d.logLines(); !strings.Contains(got, "error ") {
		t.Errorf("the event log after a failed connect has no error line:\n%s", got)
	}

	// Connect with the button.
	d.fill("#server-url", d.MCPURL)
	d.click("#connect")
	d.shown(`#state[data-state="connected"]`)
	d.shown(`#tools button[data-tool="add"]`)
	if got := d.text("#state"); !strings.Contains(got, "Connected") {
		t.Errorf("state badge = %q; want Connected", got)
	}
	if got := d.js(`document.querySelector("#state-error").hidden`); got != "true" {
		t.Errorf("the error banner still shows once connected: %q", d.text("#state-error"))
	}
	if got := d.text("#server-name"); !strings.Contains(got, "mcpwasm-demo") {
		t.Errorf("server name shown = %q; want mcpwasm-demo", got)
	}
	if got := d.text("#instructions"); !strings.Contains(got, "demo server") {
		t.Errorf("instructions shown = %q", got)
	}
	d.shown(`#resources button[data-uri]`)
	d.shown(`#prompts button[data-prompt]`)

	// The server's skill is listed; Load shows its SKILL.md, verified.
	d.click(`#skills button[data-skill="` + demo.SkillURI + `"]`)
	d.until("the loaded skill", `document.querySelector("#skill-view pre[data-skill-text]")?.textContent.includes("# Arithmetic")`)

	// The server's icon shows by its name; the prompt form offers the
	// server's completions of what is typed (completion/complete).
	d.shown(`#server-name img.icon`)
	d.click(`#prompts button[data-prompt="explain"]`)
	d.fill(`#prompt-fields input[name="audience"]`, "a c")
	d.until("the audience's suggestions", `[...document.querySelectorAll("#prompt-fields datalist option")].map((o) => o.value).join("|") === "a curious beginner|a child"`)

	// add: the defaults are placeholders, not values; an empty form sends
	// them.
	a, b := `#tool-form input[name="a"]`, `#tool-form input[name="b"]`
	d.click(`#tools button[data-tool="add"]`)
	d.shown(a)
	if got := d.value(a); got != "" {
		t.Errorf("a = %q before typing; want empty (the default 2 as the placeholder)", got)
	}
	if got := d.js(`document.querySelector('` + a + `').placeholder`); !strings.Contains(got, "2") {
		t.Errorf("a's placeholder = %q; want the schema default 2", got)
	}
	d.click("#call")
	d.shown(`#result[data-state="ok"]`)
	if got := d.text("#result"); !strings.Contains(got, "2 + 3 = 5") {
		t.Errorf("#result with empty fields = %q; want the defaults' 2 + 3 = 5", got)
	}
	d.fill(a, "2")
	d.fill(b, "40")
	if got := d.nextTabStop(b); got != "call" {
		t.Errorf("Tab from the last field goes to %s; want #call", got)
	}
	d.click("#call")
	d.until("the 42 result", `document.querySelector("#result").textContent.includes("2 + 40 = 42")`)
	if res := d.text("#result"); !strings.Contains(res, `"sum": 42`) {
		t.Errorf("#result shows %q; want the structured {\"sum\": 42}", res)
	}

	// slow: progress shows while it runs (Cancel enabled), and at the end.
	// The page records what #progress showed as it changed: a busy
	// browser may answer a poll only after the 1.2 s call has ended.
	d.click(`#tools button[data-tool="slow"]`)
	d.fill(`#tool-form input[name="steps"]`, "4")
	d.fill(`#tool-form input[name="delayMs"]`, "300")
	d.eval(`void (window.progressSeen = [], new MutationObserver(() => {
		const p = document.querySelector("#progress");
		progressSeen.push(p.dataset.state + (document.querySelector("#cancel").disabled ? "" : " (cancel enabled)") + ": " + p.textContent);
	}).observe(document.querySelector("#progress"), { attributes: true, childList: true, subtree: true, characterData: true }))`, nil)
	d.click("#call")
	d.shown(`#result[data-state="ok"]`)
	var seen []string
	d.eval(`progressSeen`, &seen)
	if !slices.ContainsFunc(seen, func(s string) bool {
		return strings.HasPrefix(s, "running (cancel enabled): ") && strings.Contains(s, "of 4")
	}) {
		t.Errorf("progress while slow ran: %q; want a running \"Step n of 4\" with Cancel enabled", seen)
	}
	if got := d.text("#progress"); !strings.Contains(got, "Step 4 of 4") || !strings.Contains(got, "100%") {
		t.Errorf("progress after slow = %q; want Step 4 of 4 · 100%%", got)
	}
	if got := d.js(`document.querySelector("#cancel").disabled`); got != "true" {
		t.Error("Cancel stays enabled after the call ended")
	}

	// Cancel a long slow call: the page says cancelled, the server sees it.
	d.fill(`#tool-form input[name="steps"]`, "50")
	d.click("#call")
	d.shown(`#progress[data-state="running"]`)
	d.click("#cancel")
	d.shown(`#result[data-state="cancelled"]`)
	d.waitFor("the server to observe the cancellation", func() bool { return slices.Contains(d.cancelledTools(), "slow") })

	// Disconnect, then connect again from the keyboard: Enter in the URL
	// field.
	d.click("#connect")
	d.shown(`#state[data-state="closed"]`)
	d.enter("#server-url")
	d.shown(`#state[data-state="connected"]`)

	// Elicitation: the dialog's generated form, Enter accepts, Escape
	// cancels.
	d.click(`#tools button[data-tool="ask_user"]`)
	d.shown(`#tool-form input[name="message"]`)
	d.click("#call")
	d.fill(`#elicit-dialog input[name="name"]`, "Ada")
	d.enter(`#elicit-dialog input[name="name"]`)
	d.shown(`#result[data-state="ok"]`)
	if got := d.text("#result"); !strings.Contains(got, "name: Ada") || !strings.Contains(got, "color: blue") {
		t.Errorf("ask_user result = %q; want the answers (name: Ada, default color: blue)", got)
	}
	d.click("#call")
	d.shown(`#elicit-dialog input[name="name"]`)
	d.escape()
	d.hidden("#elicit-dialog")
	d.shown(`#result[data-state="ok"]`)
	d.until("the cancelled answer", `document.querySelector("#result").textContent.includes("cancelled")`)

	// Sampling: the canned reply goes back as the model's answer.
	d.click(`#tools button[data-tool="summarize"]`)
	d.shown(`#tool-form input[name="text"]`)
	d.click("#call")
	d.click("#sampling-canned")
	d.click("#sampling-send")
	d.shown(`#result[data-state="ok"]`)
	if got := d.text("#result"); !strings.Contains(got, "human-in-the-loop") {
		t.Errorf("summarize result = %q; want the reply's model human-in-the-loop", got)
	}

	// list_changed: add_tool makes the new tool appear in the list.
	d.click(`#tools button[data-tool="add_tool"]`)
	d.shown(`#tool-form input[name="name"]`)
	d.click("#call")
	d.shown(`#tools button[data-tool="dynamic_hello"]`)

	// Enter in a generated field submits the tool form.
	d.click(`#tools button[data-tool="add"]`)
	d.fill(a, "2")
	d.fill(b, "40")
	d.enter(b)
	d.until("add's result after Enter", `document.querySelector('#result[data-state="ok"]')?.textContent.includes("2 + 40 = 42")`)
	if got := d.text("#log"); !strings.Contains(got, "connected") {
		t.Errorf("event log = %q; want the state changes", got)
	}
	d.checkPage()
}

// demoMB formats n as the page does for megabytes ("4.1 MB").
func demoMB(n int64) string {
	return fmt.Sprintf("%.1f MB", float64(n)/(1<<20))
}
