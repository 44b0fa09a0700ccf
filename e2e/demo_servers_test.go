package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// TestDemoServers drives the Servers panel (the catalog): it starts with
// the dev server's two demo servers, the protected one waits for a sign-in
// without opening a window by itself, Sign in goes through the real popup
// and adds its tools, a pasted mcpServers configuration loads its HTTP
// entries and leaves out a command entry with the catalog's warning, each
// format's export shows, and Disable / Enable / Remove work.
func TestDemoServers(t *testing.T) {
	onlyInPass(t, "auto", demoInDefaultRuntime)
	t.Parallel()
	e := newDemoEnv(t, true)
	row := func(id string) string { return fmt.Sprintf(`#servers li.server[data-server=%q]`, id) }
	tool := func(name string) string { return fmt.Sprintf(`#catalog-tools li[data-name=%q]`, name) }

	popups := e.ownPopup()
	e.openDemo("/")
	e.do("both demo servers listed",
		chromedp.WaitVisible(chromedp.CSS(row("demo")+`[data-state="needs_auth"]`)),
		chromedp.WaitVisible(chromedp.CSS(row("notes")+`[data-state="connected"]`)),
		chromedp.WaitVisible(chromedp.CSS(tool("notes_weather"))))
	if got := e.text(row("demo")); !strings.Contains(got, "Sign in required") || !strings.Contains(got, e.MCPURL) {
		t.Errorf("the demo server's row says %q; want its URL and Sign in required", got)
	}
	if got := e.text(row("notes")); !strings.Contains(got, "8 tools") {
		t.Errorf("the notes server's row says %q; want 8 tools", got)
	}
	if got := e.text(tool("notes_weather")); !strings.Contains(got, "notes") {
		t.Errorf("notes_weather's entry says %q; want its server, notes", got)
	}
	if got := e.js(`document.querySelectorAll('#catalog-tools li[data-server="demo"]').length`); got != "0" {
		t.Errorf("%s tools of the demo server listed before signing in", got)
	}
	// The chat says why the model cannot use the demo server yet.
	e.do("the chat's sign-in notice", chromedp.WaitVisible(chromedp.CSS(`#chat-auth [data-server="demo"] button.sign-in`)))
	e.noPopup(popups, 300*time.Millisecond)

	// Sign in from the Servers panel: the real popup, then the tools.
	popups = e.ownPopup()
	e.do("click Sign in", chromedp.Click(chromedp.CSS(row("demo")+` button.sign-in`)))
	e.consent(e.popup(popups), "approve")
	e.do("signed in",
		chromedp.WaitVisible(chromedp.CSS(row("demo")+`[data-state="connected"]`)),
		chromedp.WaitVisible(chromedp.CSS(tool("demo_add"))),
		chromedp.WaitNotVisible(chromedp.ID("chat-auth")))
	if got := e.text(tool("demo_add")); !strings.Contains(got, "demo") {
		t.Errorf("demo_add's entry says %q; want its server, demo", got)
	}

	// Paste an mcpServers configuration: the command entry is left out with
	// the catalog's warning, the HTTP one loads.
	config := fmt.Sprintf(`{"mcpServers": {"local": {"command": "npx", "args": ["-y", "some-server"]}, "more": {"type": "http", "url": %q}}}`, e.MCP2URL)
	e.do("paste mcpServers",
		chromedp.Click(chromedp.CSS(`.add-servers summary`)),
		chromedp.WaitVisible(chromedp.ID("servers-json")),
		chromedp.Click(chromedp.ID("servers-json")),
		chromedp.SendKeys(chromedp.ID("servers-json"), config),
		chromedp.Click(chromedp.ID("add-json")),
		chromedp.WaitVisible(chromedp.CSS(row("more")+`[data-state="connected"]`)),
		chromedp.WaitVisible(chromedp.CSS(tool("more_weather"))))
	msgs := e.text("#servers-messages")
	if !strings.Contains(strings.ToLower(msgs), `server "local" is a local command (stdio) server`) {
		t.Errorf("after pasting a command entry the panel says %q; want the catalog's warning about \"local\"", msgs)
	}
	if got := e.js(`document.querySelectorAll('#servers li.server[data-server="local"]').length`); got != "0" {
		t.Error("the command entry was added as a server")
	}

	// The exported tool list, in each format.
	e.do("show the export", chromedp.Click(chromedp.ID("export-toggle")), chromedp.WaitVisible(chromedp.CSS(`#export-json[data-format="openai"]`)))
	for _, f := range []struct{ format, want string }{
		{"anthropic", `"input_schema"`},
		{"gemini", `"functionDeclarations"`},
		{"openai-responses", `"strict"`},
		{"openai", `"function"`},
	} {
		e.do("export as "+f.format,
			chromedp.Click(chromedp.CSS(fmt.Sprintf(`#export-formats button[data-format=%q]`, f.format))),
			chromedp.WaitVisible(chromedp.CSS(fmt.Sprintf(`#export-json[data-format=%q]`, f.format))))
		got := e.text("#export-json")
		if !strings.Contains(got, f.want) || !strings.Contains(got, "demo_add") || !strings.Contains(got, "more_weather") {
			t.Errorf("the %s export lacks %s, demo_add or more_weather:\n%.400s", f.format, f.want, got)
		}
		if pressed := e.js(fmt.Sprintf(`document.querySelector('#export-formats button[data-format=%q]').getAttribute("aria-pressed")`, f.format)); pressed != "true" {
			t.Errorf("the %s button is not marked pressed", f.format)
		}
	}

	// Disable takes a server's tools out; Enable brings them back; Remove drops it.
	e.do("disable notes",
		chromedp.Click(chromedp.CSS(row("notes")+` button.disable`)),
		chromedp.WaitVisible(chromedp.CSS(row("notes")+`[data-state="disabled"]`)),
		chromedp.WaitNotPresent(chromedp.CSS(tool("notes_weather"))))
	e.do("enable notes",
		chromedp.Click(chromedp.CSS(row("notes")+` button.enable`)),
		chromedp.WaitVisible(chromedp.CSS(tool("notes_weather"))))
	e.do("remove more",
		chromedp.Click(chromedp.CSS(row("more")+` button.remove`)),
		chromedp.WaitNotPresent(chromedp.CSS(row("more"))),
		chromedp.WaitNotPresent(chromedp.CSS(tool("more_weather"))))
	e.checkPageErrors()
}
