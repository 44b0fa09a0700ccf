package xengine

import (
	"strings"
	"testing"
)

// TestDemoTaskAfterAReload: the demo page's explorer calls a tool that
// server-everything runs as a task (simulate-research-query), shows its
// stages as progress, and the person reloads while it works; the page
// reconnects and lists the task under "Tasks waiting for you", and Resume
// shows its report as the call's result; then the list is gone.
func TestDemoTaskAfterAReload(t *testing.T) {
	eitherRuntime(t)
	parallel(t)
	everything := startEverything(t)
	d := newDemoWorld(t, false)
	d.openDemo("/")
	d.enabled("#connect")
	d.fill("#server-url", everything)
	d.click("#connect")
	d.shown(`#state[data-state="connected"]`)
	d.click(`#tools button[data-tool="simulate-research-query"]`)
	d.fill(`#tool-form input[name="topic"]`, "demo tasks")
	d.click("#call")
	d.until("the task's first stage as progress", `document.querySelector("#progress-text")?.textContent.includes("...")`)

	if err := d.win.Reload(d.ctx); err != nil {
		t.Fatalf("reload: %v", err)
	}
	d.until("the demo page to be ready", `document.body.dataset.ready === "true"`)
	d.shown(`#state[data-state="connected"]`)
	d.shown(`#tasks-section`)
	item := `#tasks li[data-task]`
	if got := d.text(item); !strings.Contains(got, "simulate-research-query") {
		t.Errorf("the kept task shows %q; want the tool's name", got)
	}
	d.click(item + ` button[data-resume]`)
	d.shown(`#result[data-state="ok"]`)
	if got := d.text("#result"); !strings.Contains(got, "Research Report: demo tasks") {
		t.Errorf("#result after Resume = %q; want the task's report", got)
	}
	d.hidden(`#tasks-section`)
	d.checkPage()
}
