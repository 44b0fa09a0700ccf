package xengine

import (
	"fmt"
	"strings"
	"testing"
)

// TestDemoServers drives the Servers panel (the catalog): it starts with
// the dev server's two demo servers, the protected one waits for a
// sign-in without opening a window by itself, Sign in goes through the
// real popup and adds its tools, a pasted mcpServers configuration loads
// its HTTP entries and leaves out a command entry with the catalog's
// warning, each format's export shows, and Disable / Enable / Remove
// work.
func TestDemoServers(t *testing.T) {
	eitherRuntime(t)
	parallel(t)
	d := newDemoWorld(t, true)
	row := func(id string) string { return fmt.Sprintf(`#servers li.server[data-server=%q]`, id) }
	tool := func(name string) string { return fmt.Sprintf(`#catalog-tools li[data-name=%q]`, name) }

	d.openDemo("/")
	d.shown(row("demo") + `[data-state="needs_auth"]`)
	d.shown(row("notes") + `[data-state="connected"]`)
	d.shown(tool("notes_weather"))
	if got := d.text(row("demo")); !strings.Contains(got, "Sign in required") || !strings.Contains(got, d.MCPURL) {
		t.Errorf("the demo server's row says %q; want its URL %s and Sign in required", got, d.MCPURL)
	}
	if got := d.text(row("notes")); !strings.Contains(got, "8 tools") {
		t.Errorf("the notes server's row says %q; want 8 tools", got)
	}
	if got := d.text(tool("notes_weather")); !strings.Contains(got, "notes") {
		t.Errorf("notes_weather's entry says %q; want its server, notes", got)
	}
	if got := d.js(`document.querySelectorAll('#catalog-tools li[data-server="demo"]').length`); got != "0" {
		t.Errorf("%s tools of the demo server listed before signing in", got)
	}
	// The chat says why the model cannot use the demo server yet.
	d.shown(`#chat-auth [data-server="demo"] button.sign-in`)
	if n, auth := d.opens(), d.snapshot()["authorize"]; n != 0 || auth != 0 {
		t.Errorf("before any click the page opened %d windows and the authorization server saw %d authorization requests; want none", n, auth)
	}

	// Sign in from the Servers panel: the real popup, then the tools.
	d.signIn(row("demo")+` button.sign-in`, "#approve")
	d.shown(row("demo") + `[data-state="connected"]`)
	d.shown(tool("demo_add"))
	d.hidden("#chat-auth")
	if got := d.text(tool("demo_add")); !strings.Contains(got, "demo") {
		t.Errorf("demo_add's entry says %q; want its server, demo", got)
	}
	if n := d.opens(); n != 1 {
		t.Errorf("signing in opened %d windows; want 1", n)
	}
	// Its row counts the tools the list shows. From then on the row does
	// not change: the panel must keep its controls rather than redraw them
	// on other servers' events, or a click that lands during a redraw is
	// lost.
	d.until("the demo server's row to count its listed tools", `document.querySelector('`+row("demo")+` .tools-chip')?.textContent === document.querySelectorAll('#catalog-tools li[data-server="demo"]').length + " tools"`)
	d.js(`void (document.querySelector('` + row("demo") + ` button.remove').e2eKept = "1")`)

	// Paste an mcpServers configuration: the command entry is left out
	// with the catalog's warning, the HTTP one loads.
	config := fmt.Sprintf(`{"mcpServers": {"local": {"command": "npx", "args": ["-y", "some-server"]}, "more": {"type": "http", "url": %q}}}`, d.MCP2URL)
	d.click(`.add-servers summary`)
	d.fill("#servers-json", config)
	d.click("#add-json")
	d.shown(row("more") + `[data-state="connected"]`)
	d.shown(tool("more_weather"))
	msgs := d.text("#servers-messages")
	if !strings.Contains(strings.ToLower(msgs), `server "local" is a local command (stdio) server`) {
		t.Errorf("after pasting a command entry the panel says %q; want the catalog's warning about \"local\"", msgs)
	}
	if got := d.js(`document.querySelectorAll('#servers li.server[data-server="local"]').length`); got != "0" {
		t.Error("the command entry was added as a server")
	}

	// The exported tool list, in each format.
	d.click("#export-toggle")
	d.shown(`#export-json[data-format="openai"]`)
	for _, f := range []struct{ format, want string }{
		{"anthropic", `"input_schema"`},
		{"gemini", `"functionDeclarations"`},
		{"openai-responses", `"strict"`},
		{"openai", `"function"`},
	} {
		d.click(fmt.Sprintf(`#export-formats button[data-format=%q]`, f.format))
		d.shown(fmt.Sprintf(`#export-json[data-format=%q]`, f.format))
		got := d.text("#export-json")
		if !strings.Contains(got, f.want) || !strings.Contains(got, "demo_add") || !strings.Contains(got, "more_weather") {
			t.Errorf("the %s export lacks %s, demo_add or more_weather:\n%.400s", f.format, f.want, got)
		}
		if pressed := d.js(fmt.Sprintf(`document.querySelector('#export-formats button[data-format=%q]').getAttribute("aria-pressed")`, f.format)); pressed != "true" {
			t.Errorf("the %s button is not marked pressed", f.format)
		}
	}

	// The demo server is required: its switch is locked and says why.
	if got := d.js(`(() => { const b = document.querySelector('` + row("demo") + ` button.disable'); return b.disabled + " " + b.title; })()`); got != "true Required by this app: it stays on" {
		t.Errorf("the demo server's Disable button: %q; want disabled, saying it is required", got)
	}
	if got := d.text(row("demo")); !strings.Contains(got, "required") {
		t.Errorf("the demo server's row says %q; want the required chip", got)
	}
	// Disable takes a server's tools out; Enable brings them back; Remove
	// drops it.
	d.click(row("notes") + ` button.disable`)
	d.shown(row("notes") + `[data-state="disabled"]`)
	d.until("notes_weather to leave the list", `!document.querySelector('`+tool("notes_weather")+`')`)
	d.click(row("notes") + ` button.enable`)
	d.shown(tool("notes_weather"))
	d.click(row("more") + ` button.remove`)
	d.until("the removed server and its tools to leave the lists", `!document.querySelector('`+row("more")+`') && !document.querySelector('`+tool("more_weather")+`')`)
	if got := d.js(`document.querySelector('` + row("demo") + ` button.remove').e2eKept ?? "redrawn"`); got != "1" {
		t.Error("the demo server's row was drawn again though it did not change (a click on it at that moment would be lost)")
	}
	d.checkPage()
}
