package xengine

import (
	"bytes"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"testing/fstest"
	"time"

	"github.com/mcpwasm/mcpwasm/devkit/devserver"
	"github.com/mcpwasm/mcpwasm/e2e/engine"
)

// demoWorld is a world whose page origin serves a whole site, as `make
// run` does (the demo page at the root) or as an app's host does: the
// demo servers' JSON-RPC methods are recorded, and the dev server's demo
// server reports the calls it saw cancelled into the world's list.
//
// The engines drive pages with clicks and script only: e2e/engine has no
// key input, so where a person would type or press a key, the helpers
// below do what the browser would do with it (set the value and fire
// input; for Enter, the page's keydown and then the form's implicit
// submission; for Escape, the dialog's cancel).
type demoWorld struct {
	*world
	mu      sync.Mutex
	methods []string
}

// newDemoWorld serves the demo page (web/demo/ over web/) with boot.js
// as its first script; auth puts the demo server behind
// the demo authorization server, else it needs no sign-in.
func newDemoWorld(t *testing.T, auth bool) *demoWorld {
	t.Helper()
	site, err := withBoot(os.DirFS(webDir), "demo/index.html")
	if err != nil {
		t.Fatal(err)
	}
	return newSiteWorld(t, auth, site, nil)
}

// newSiteWorld starts the servers with the page origin serving site (and
// routes first), and opens the window on about:blank.
func newSiteWorld(t *testing.T, auth bool, site fs.FS, routes func(w *world, mux *http.ServeMux)) *demoWorld {
	t.Helper()
	d := &demoWorld{}
	w := newServersWith(t, devserver.AuthConfig{}, site, func(w *world, mux *http.ServeMux) {
		if routes != nil {
			routes(w, mux)
		}
	}, func(cfg *devserver.Config, pc *devserver.PageConfig, _ string) {
		if !auth {
			cfg.Auth.Enabled = false
			pc.ASURL = ""
		}
		cfg.DemoOptions.OnRequest = func(method string) {
			d.mu.Lock()
			defer d.mu.Unlock()
			d.methods = append(d.methods, method)
		}
		cfg.DemoOptions.OnCancelled = func(tool string) {
			d.world.mu.Lock()
			defer d.world.mu.Unlock()
			d.world.cancelled = append(d.world.cancelled, tool)
		}
	})
	d.world = w
	w.open()
	return d
}

// withBoot is site with the page at name (and its precompressed
// siblings hidden) given /e2e/boot.js as its first script: WebKit's classic WebDriver preloads nothing, so the page
// itself must load the error collector and the runtime mode.
func withBoot(site fs.FS, name string) (fs.FS, error) {
	b, err := fs.ReadFile(site, name)
	if err != nil {
		return nil, err
	}
	if !bytes.Contains(b, []byte("<head>")) {
		return nil, fmt.Errorf("%s has no <head> to put boot.js in", name)
	}
	b = bytes.Replace(b, []byte("<head>"), []byte(`<head><script src="/e2e/boot.js"></script>`), 1)
	return booted{site, name, fstest.MapFS{name: {Data: b, Mode: 0o644, ModTime: time.Now()}}}, nil
}

type booted struct {
	fs.FS
	name string
	page fstest.MapFS
}

func (b booted) Open(name string) (fs.File, error) {
	switch name {
	case b.name:
		return b.page.Open(name)
	case b.name + ".br", b.name + ".gz":
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrNotExist}
	}
	return b.FS.Open(name)
}

// rpcMethods is a copy of the JSON-RPC methods the demo servers saw.
func (d *demoWorld) rpcMethods() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]string(nil), d.methods...)
}

// requests counts the requests whose trace line reads what ("mcp DELETE
// /mcp": origin, method, path).
func (d *demoWorld) requests(what string) int {
	d.world.mu.Lock()
	defer d.world.mu.Unlock()
	n := 0
	for _, l := range d.trace {
		if _, rest, ok := strings.Cut(l, "s "+what); ok && strings.HasSuffix(rest, " began") && (rest == " began" || rest[0] == ' ') {
			n++
		}
	}
	return n
}

// openDemo navigates to the demo page (path and query) and waits until
// its module is loaded and its panels are wired.
func (d *demoWorld) openDemo(pathAndQuery string) {
	d.t.Helper()
	d.navigate(d.win, d.PageURL+pathAndQuery)
	d.until("the demo page to be ready", `document.body.dataset.ready === "true"`)
}

// until waits for the JavaScript condition cond; a failure shows the
// page's state and its event log.
func (d *demoWorld) until(what, cond string) {
	d.t.Helper()
	limit := time.After(time.Minute)
	for {
		var ok bool
		if err := d.win.Eval(d.ctx, `Boolean(`+cond+`)`, &ok); err == nil && ok {
			return
		}
		select {
		case <-d.ctx.Done():
		case <-limit:
		case <-time.After(50 * time.Millisecond):
			continue
		}
		var state string
		_ = d.win.Eval(d.ctx, `JSON.stringify({href: location.href, state: document.querySelector("#state")?.dataset.state, ready: document.body?.dataset.ready, load: document.querySelector("#load-text")?.textContent, active: document.activeElement?.id || document.activeElement?.className})`, &state)
		d.t.Fatalf("timed out waiting for %s (%s); the page's event log:\n%s", what, state, d.logLines())
	}
}

// visibleJS is true when the element sel matches is rendered.
func visibleJS(sel string) string {
	return fmt.Sprintf(`((e) => !!e && e.getClientRects().length > 0 && getComputedStyle(e).visibility !== "hidden")(document.querySelector(%q))`, sel)
}

// shown waits until an element matching sel is rendered.
func (d *demoWorld) shown(sel string) { d.t.Helper(); d.until(sel+" to show", visibleJS(sel)) }

// hidden waits until no element matching sel is rendered.
func (d *demoWorld) hidden(sel string) { d.t.Helper(); d.until(sel+" to go", "!"+visibleJS(sel)) }

// enabled waits until the control sel matches is rendered and enabled.
func (d *demoWorld) enabled(sel string) {
	d.t.Helper()
	d.until(sel+" to be enabled", visibleJS(sel)+fmt.Sprintf(` && !document.querySelector(%q).disabled`, sel))
}

// click waits for sel to show, then clicks it as a person does. The
// page may render the control again between the driver finding it and
// clicking it (classic WebDriver then says "stale element"), or move it
// between the driver measuring it and the click landing (WebKit's
// Element Click then clicks what is now at that point): to a person it
// is the same button, missed, so the click is tried again.
func (d *demoWorld) click(sel string) {
	d.t.Helper()
	// Which element the next click lands in: the last listener armed
	// runs last, so its answer is the one read.
	arm := fmt.Sprintf(`void (window.__e2eClickHit = undefined, addEventListener("click", (e) => {
		window.__e2eClickHit = !!e.target?.closest?.(%q) || (e.target?.tagName ?? "?") + (e.target?.id ? "#" + e.target.id : "");
	}, { capture: true, once: true }))`, sel)
	for attempt := 1; ; attempt++ {
		d.shown(sel)
		d.eval(arm, nil)
		err := d.win.Click(d.ctx, sel)
		if err == nil {
			var hit any
			// Undefined or no answer: the click navigated, or no click
			// event came; what follows shows whether it worked.
			_ = d.win.Eval(d.ctx, `window.__e2eClickHit`, &hit)
			if missed, ok := hit.(string); ok && attempt < 3 {
				d.t.Logf("the click on %s landed on %s (the page moved under it); clicking again", sel, missed)
				continue
			}
			return
		}
		if attempt == 3 || !strings.Contains(err.Error(), "stale element") {
			d.t.Fatalf("clicking %s: %v", sel, err)
		}
	}
}

// js is the value of a JavaScript expression as a string.
func (d *demoWorld) js(expr string) string {
	d.t.Helper()
	var s string
	d.eval(`String(`+expr+`)`, &s)
	return s
}

// text is the rendered text of the first element sel matches.
func (d *demoWorld) text(sel string) string {
	d.t.Helper()
	var s *string
	d.eval(fmt.Sprintf(`((e) => e ? e.innerText : null)(document.querySelector(%q))`, sel), &s)
	if s == nil {
		d.t.Fatalf("no element %s on the page", sel)
	}
	return *s
}

// value is the value of the form field sel matches.
func (d *demoWorld) value(sel string) string {
	d.t.Helper()
	return d.js(fmt.Sprintf(`document.querySelector(%q).value`, sel))
}

// fill gives the field sel matches the value v as typing would: focus,
// the new value, an input event.
func (d *demoWorld) fill(sel, v string) {
	d.t.Helper()
	d.shown(sel)
	d.eval(fmt.Sprintf(`((e, v) => {
		e.focus();
		const proto = e instanceof HTMLTextAreaElement ? HTMLTextAreaElement.prototype : e instanceof HTMLSelectElement ? HTMLSelectElement.prototype : HTMLInputElement.prototype;
		Object.getOwnPropertyDescriptor(proto, "value").set.call(e, v);
		e.dispatchEvent(new Event("input", { bubbles: true }));
		e.dispatchEvent(new Event("change", { bubbles: true }));
	})(document.querySelector(%q), %q)`, sel, v), nil)
}

// enter focuses the field sel matches and presses Enter there, as a
// person does: the page's handlers and then the browser's implicit
// submission of the field's form.
func (d *demoWorld) enter(sel string) {
	d.t.Helper()
	d.shown(sel)
	d.eval(fmt.Sprintf(`document.querySelector(%q).focus()`, sel), nil)
	d.press("Enter")
}

// escape presses Escape where the focus is: the page's handlers, then
// the browser's close watcher of an open modal dialog.
func (d *demoWorld) escape() {
	d.t.Helper()
	d.press("Escape")
}

// nextTabStop focuses the element sel matches, presses Tab and returns
// the id of the element the browser moved the focus to.
func (d *demoWorld) nextTabStop(sel string) string {
	d.t.Helper()
	d.eval(fmt.Sprintf(`document.querySelector(%q).focus()`, sel), nil)
	d.press("Tab")
	return d.js(`document.activeElement ? document.activeElement.id || document.activeElement.outerHTML.slice(0, 80) : "none"`)
}

// press presses key in the window (engine.Window.Press).
func (d *demoWorld) press(key string) {
	d.t.Helper()
	if err := d.win.Press(d.ctx, key); err != nil {
		d.t.Fatalf("pressing %s: %v", key, err)
	}
}

// logLines is the demo page's event log, one "level kind text" a line.
func (d *demoWorld) logLines() string {
	var s string
	_ = d.win.Eval(d.ctx, `[...document.querySelectorAll("#log li")].map((li) => li.dataset.level + " " + li.dataset.kind + " " + li.querySelector(".log-text")?.textContent).join("\n")`, &s)
	return s
}

// opens is how many windows the page asked for so far.
func (d *demoWorld) opens() int {
	d.t.Helper()
	var n int
	d.eval(`globalThis.__e2eOpens?.length ?? -1`, &n)
	return n
}

// signIn clicks sel, which opens the sign-in popup, and clicks button
// (#approve or #deny) on its consent page; it returns the popup.
func (d *demoWorld) signIn(sel, button string) engine.Window {
	d.t.Helper()
	wait, err := d.win.ExpectPopup(d.ctx)
	if err != nil {
		d.t.Fatal(err)
	}
	d.click(sel)
	popup := d.popup(wait, "the sign-in popup")
	if err := popup.Click(d.ctx, button); err != nil {
		d.t.Fatalf("clicking %s on the consent page: %v", button, err)
	}
	return popup
}

// checkPage fails the test for Content-Security-Policy violations (the
// demo page and the example app count them in body[data-csp-violations])
// and for the page's errors so far.
//
// WebKit fetches a page's /favicon.ico by itself and reports the strict
// policy's refusal of it as the page's violation: that one says nothing
// of the code under test (pageErrors leaves it out the same way).
func (d *demoWorld) checkPage() {
	d.t.Helper()
	var v struct {
		Count  string   `json:"count"`
		Errors []string `json:"errors"`
	}
	d.eval(`({ count: document.body.dataset.cspViolations || "0", errors: globalThis.__e2eErrors ?? [] })`, &v)
	total, _ := strconv.Atoi(v.Count)
	favicon := 0
	for _, e := range v.Errors {
		if strings.Contains(e, "CSP violation: img-src") && strings.HasSuffix(e, "/favicon.ico") {
			favicon++
		}
	}
	if total != favicon {
		d.t.Errorf("%d Content-Security-Policy violations on the page (%d of them the browser's own favicon request); its event log:\n%s", total, favicon, d.logLines())
	}
	d.noPageErrors()
}

// countOf is how many items equal want.
func countOf(items []string, want string) int {
	n := 0
	for _, s := range items {
		if s == want {
			n++
		}
	}
	return n
}
