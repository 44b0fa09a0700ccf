package xengine

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/mcpwasm/mcpwasm/demo"
	"github.com/mcpwasm/mcpwasm/devkit/devserver"
)

// TestCompletions asks two servers for argument completions through
// client.complete(): the reference server-everything (a prompt whose
// second argument's values depend on the first, sent as context) and the
// demo server (a prompt's argument and a resource template's). A server
// without completions (the catalog's second demo server) is refused with
// a sentence, and a bad reference
// never leaves the page.
func TestCompletions(t *testing.T) {
	eitherRuntime(t)
	parallel(t)
	everything := startEverything(t)
	w := newWorld(t, devserver.AuthConfig{})
	var got struct {
		Department []string `json:"department"`
		Names      []string `json:"names"`
		Audience   []string `json:"audience"`
		Total      int      `json:"total"`
		Greeting   []string `json:"greeting"`
		Bad        jsErr    `json:"bad"`
		Unoffered  jsErr    `json:"unoffered"`
	}
	w.eval(fmt.Sprintf(`(async () => {
		const ev = mcp.client(%q), d = mcp.client(%q), plain = mcp.client(%q);
		await Promise.all([ev.connect(), d.connect(), plain.connect()]);
		const prompt = { type: "ref/prompt", name: "completable-prompt" };
		const department = (await ev.complete(prompt, { name: "department", value: "E" })).values;
		const names = (await ev.complete(prompt, { name: "name", value: "" }, { context: { department: "Engineering" } })).values;
		const aud = await d.complete({ type: "ref/prompt", name: %q }, { name: "audience", value: "a c" });
		const greeting = (await d.complete({ type: "ref/resource", uri: %q }, { name: "name", value: "gr" })).values;
		const bad = await d.complete({ type: "ref/tool", name: "echo" }, { name: "x", value: "" }).then(() => ({}), %s);
		const unoffered = await plain.complete(prompt, { name: "department", value: "" }).then(() => ({}), %s);
		return { department, names, audience: aud.values, total: aud.total ?? 0, greeting, bad: bad.error, unoffered: unoffered.error };
	})()`, everything, w.OpenURL, w.MCP2URL, demo.PromptExplain, demo.GreetingTemplate, catchJS, catchJS), &got)
	if !reflect.DeepEqual(got.Department, []string{"Engineering"}) {
		t.Errorf("server-everything's departments for %q = %q; want [Engineering]", "E", got.Department)
	}
	if !reflect.DeepEqual(got.Names, []string{"Alice", "Bob", "Charlie"}) {
		t.Errorf("server-everything's names in Engineering = %q; want [Alice Bob Charlie] (the context did not reach it?)", got.Names)
	}
	if !reflect.DeepEqual(got.Audience, []string{"a curious beginner", "a child"}) || got.Total != 2 {
		t.Errorf("the demo server's audiences for %q = %q, total %d; want [a curious beginner, a child], 2", "a c", got.Audience, got.Total)
	}
	if !reflect.DeepEqual(got.Greeting, []string{"Grace"}) {
		t.Errorf("the demo server's greeting names for %q = %q; want [Grace]", "gr", got.Greeting)
	}
	if got.Bad.Code != "invalid_argument" || !strings.Contains(got.Bad.Message, "ref/prompt") {
		t.Errorf("a ref/tool reference: %+v; want invalid_argument naming the kinds of reference", got.Bad)
	}
	if got.Unoffered.Code != "protocol" || !strings.Contains(got.Unoffered.Message, "does not offer completions") {
		t.Errorf("complete() on a server without completions: %+v; want protocol, saying so", got.Unoffered)
	}
}

// TestResourceSubscriptions subscribes to a resource of server-everything
// (whose toggle-subscriber-updates tool sends an update every 5 s for what
// a session subscribed to): resourceupdated events come for it; after the
// worker runtime ends and connect() makes the client again, the page's
// subscription is made again and the events go on; after unsubscribe()
// none come. A server without subscriptions refuses subscribe().
func TestResourceSubscriptions(t *testing.T) {
	eitherRuntime(t)
	parallel(t)
	everything := startEverything(t)
	w := newWorld(t, devserver.AuthConfig{})
	const uri, other = "demo://resource/dynamic/text/1", "demo://resource/dynamic/text/2"
	var refused jsErr
	w.eval(fmt.Sprintf(`(async () => {
		window.ev = mcp.client(%q);
		window.updates = [];
		ev.addEventListener("resourceupdated", (e) => updates.push(e.detail.uri));
		await ev.connect();
		await ev.subscribe(%q);
		await ev.subscribe(%q);
		await ev.callTool("toggle-subscriber-updates", {});
		const plain = mcp.client(%q);
		await plain.connect();
		return await plain.subscribe(%q).then(() => ({}), %s).then((r) => r.error);
	})()`, everything, uri, other, w.OpenURL, demo.ReadmeURI, catchJS), &refused)
	if refused.Code != "protocol" || !strings.Contains(refused.Message, "does not offer resource subscriptions") {
		t.Errorf("subscribe() on a server without subscriptions: %+v; want protocol, saying so", refused)
	}
	updates := func() []string {
		var u []string
		_ = w.win.Eval(w.ctx, `updates`, &u)
		return u
	}
	w.waitFor("a resourceupdated event", func() bool { return len(updates()) > 1 })
	if u := updates(); u[0] != uri || u[1] != other {
		t.Errorf("resourceupdated for %q; want %q then %q", u, uri, other)
	}

	var mode string
	w.eval(`mcp.runtime`, &mode)
	if mode == "main" {
		t.Logf("runtime main: no worker runtime to end; the subscription across a new runtime is checked in the worker runtimes")
	} else {
		// The runtime ends (a test hook closes the worker); connect()
		// makes the client again in a new one, which knows nothing of
		// the subscription until the page makes it again.
		w.eval(`new Promise((gone) => {
			ev.addEventListener("statechange", (e) => { if (e.detail.state === "failed") gone(); });
			mcp._killWorkerForTest();
		})`, nil)
		w.eval(`(async () => { await ev.connect(); updates.length = 0; await ev.callTool("toggle-subscriber-updates", {}); })()`, nil)
		w.waitFor("resourceupdated events in the new runtime", func() bool { return len(updates()) > 1 })
		if u := updates(); u[0] != uri || u[1] != other {
			t.Errorf("resourceupdated in the new runtime for %q; want %q then %q", u, uri, other)
		}
	}

	// After unsubscribe, the server sends nothing for the URI. Each of its
	// ticks sends an update per subscribed URI, in the order subscribed:
	// the tick after the first one for the other URI would name this one
	// first if it were still subscribed.
	w.eval(fmt.Sprintf(`(async () => { await ev.unsubscribe(%q); updates.length = 0; })()`, uri), nil)
	w.waitFor("two ticks of updates for the other resource", func() bool {
		n := 0
		for _, u := range updates() {
			if u == other {
				n++
			}
		}
		return n >= 2
	})
	u := updates()
	first := 0
	for u[first] != other {
		first++
	}
	for _, x := range u[first:] {
		if x == uri {
			t.Errorf("resourceupdated for %q after unsubscribe (updates %q); want none", uri, u)
			break
		}
	}
}

// TestIcons: the icons of the demo server and of its prompt reach the
// page as the server sent them (an image data: URI), and an <img> of the
// server's icon loads under the page's rules.
func TestIcons(t *testing.T) {
	eitherRuntime(t)
	parallel(t)
	w := newWorld(t, devserver.AuthConfig{})
	var got struct {
		Server []demoIcon `json:"server"`
		Prompt []demoIcon `json:"prompt"`
		Shown  bool       `json:"shown"`
	}
	w.eval(fmt.Sprintf(`(async () => {
		const c = mcp.client(%q);
		await c.connect();
		const prompt = (await c.listPrompts()).find((p) => p.name === %q);
		const img = new Image();
		const shown = await new Promise((r) => { img.onload = () => r(img.naturalWidth > 0); img.onerror = () => r(false); img.src = c.serverInfo.icons[0].src; });
		return { server: c.serverInfo.icons, prompt: prompt.icons, shown };
	})()`, w.OpenURL, demo.PromptExplain), &got)
	want := demoIcon{Src: demo.Icon.Source, MIMEType: "image/svg+xml", Sizes: []string{"any"}}
	if len(got.Server) != 1 || !reflect.DeepEqual(got.Server[0], want) {
		t.Errorf("serverInfo.icons = %+v; want [%+v]", got.Server, want)
	}
	if len(got.Prompt) != 1 || !reflect.DeepEqual(got.Prompt[0], want) {
		t.Errorf("the prompt's icons = %+v; want [%+v]", got.Prompt, want)
	}
	if !got.Shown {
		t.Errorf("an <img> of the server's icon did not load")
	}
}

type demoIcon struct {
	Src      string   `json:"src"`
	MIMEType string   `json:"mimeType"`
	Sizes    []string `json:"sizes"`
}
