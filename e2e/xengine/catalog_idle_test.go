package xengine

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/mcpwasm/mcpwasm/catalog"
	"github.com/mcpwasm/mcpwasm/devkit/devserver"
)

// A catalog closes the sessions nobody used for idleTimeoutMs: the
// signed-in demo server and server-everything (whose own counter shows the
// session end); their tools stay listed, tools() does not reconnect them,
// and the next call reconnects without a sign-in. A server holding a
// resource subscription stays open and its updates keep coming.
func TestCatalogClosesIdleSessions(t *testing.T) {
	eitherRuntime(t)
	parallel(t)
	p := startNode(t, []string{"LISTENING", "STATS"}, "run-everything.mjs", "streamableHttp")
	everything := "http://127.0.0.1:" + p["LISTENING"] + "/mcp"
	stats := "http://127.0.0.1:" + p["STATS"] + "/"
	w := newWorld(t, devserver.AuthConfig{})
	w.eval(fmt.Sprintf(watchCatalogJS, fmt.Sprintf(`{ servers: {
		secure: { url: %q }, everything: { url: %q }, held: { url: %q },
	}, idleTimeoutMs: 1500 }`, w.MCPURL, everything, everything)), nil)
	w.catalogTools()
	if r := w.catalogSignIn("#approve"); !r.OK {
		t.Fatalf("signing in: %v", r)
	}
	if r := w.catalogCall("secure_add", `{a: 1, b: 2}`); r.IsError || !strings.Contains(r.Text, "3") {
		t.Fatalf("secure_add = %+v", r)
	}
	if r := w.catalogCall("everything_echo", `{message: "one"}`); r.IsError || !strings.Contains(r.Text, "one") {
		t.Fatalf("everything_echo = %+v", r)
	}
	// held is idle by now, or soon: the page's own use (subscribe())
	// reopens it.
	w.waitFor("held closed for idleness", func() bool { return w.catalogStatus("held").Idle })
	const uri = "demo://resource/dynamic/text/1"
	var step string
	w.eval(fmt.Sprintf(`(async () => {
		window.updates = 0;
		const held = cat.server("held");
		held.addEventListener("resourceupdated", () => { updates++; });
		try { await held.subscribe(%q); } catch (e) { return "subscribe: " + e.message; }
		try { await held.callTool("toggle-subscriber-updates", {}); } catch (e) { return "callTool: " + e.message; }
		return "";
	})()`, uri), &step)
	if step != "" {
		t.Fatalf("the page's own use of an idle server failed: %s", step)
	}
	opened := len(w.opensIn(w.win))
	w.catalogEvents() // from here on, no authrequired may come

	w.waitFor("secure and everything closed for idleness", func() bool {
		return w.catalogStatus("secure").Idle && w.catalogStatus("everything").Idle
	})
	if m, ok := awaitStats(stats, func(m map[string]float64) bool { return m["sessions"] == 1 }); !ok {
		t.Errorf("server-everything's live sessions = %v; want 1 (held's, which subscribes)", m["sessions"])
	}
	for _, id := range []string{"secure", "everything"} {
		if st := w.catalogStatus(id); st.State != "idle" || st.Tools == 0 {
			t.Errorf("%s while idle: %+v; want state idle, its tools still counted", id, st)
		}
	}
	var before int
	w.eval(`updates`, &before)
	w.waitFor("a resource update on the subscribed server after the others closed", func() bool {
		var n int
		w.eval(`updates`, &n)
		return n > before
	})
	if st := w.catalogStatus("held"); st.Idle || st.State != "connected" {
		t.Errorf("held, subscribed: %+v; want connected, not idle", st)
	}
	if names := w.catalogTools(); !anyPrefixed(names, "secure_") || !anyPrefixed(names, "everything_") {
		t.Errorf("tools() while idle = %v; want secure_* and everything_* still listed", names)
	}
	if st := w.catalogStatus("secure"); !st.Idle {
		t.Errorf("tools() reconnected secure: %+v", st)
	}
	// Both are idle from here until a call: a connected event from here
	// on is a reconnect.
	authRequired := countEvents(w.catalogEvents(), "authrequired")

	// Whether a call reconnected its server is read from the statuschange
	// events, not a status read afterwards: the session may close again
	// idleTimeoutMs after the call, sooner than a busy page answers.
	if r := w.catalogCall("secure_add", `{a: 2, b: 40}`); r.IsError || !strings.Contains(r.Text, "42") {
		t.Errorf("secure_add after the idle close = %+v", r)
	}
	if r := w.catalogCall("everything_echo", `{message: "two"}`); r.IsError || !strings.Contains(r.Text, "two") {
		t.Errorf("everything_echo after the idle close = %+v", r)
	}
	var evs []catalogEvent
	w.waitFor("secure and everything connected again by their calls", func() bool {
		evs = append(evs, w.catalogEvents()...)
		return reachedState(evs, "secure", "connected") && reachedState(evs, "everything", "connected")
	})
	if n := len(w.opensIn(w.win)) - opened; n != 0 {
		t.Errorf("%d sign-in windows opened on reconnecting; want none", n)
	}
	if n := authRequired + countEvents(evs, "authrequired"); n != 0 {
		t.Errorf("%d authrequired events on reconnecting; want none", n)
	}
	// The page's own use of a server's client reopens it too.
	w.waitFor("everything idle again", func() bool { return w.catalogStatus("everything").Idle })
	w.catalogEvents()
	var listed int
	w.eval(`cat.server("everything").listTools().then((t) => t.length)`, &listed)
	if listed == 0 {
		t.Errorf("cat.server(id).listTools() while idle listed no tools")
	}
	evs = nil
	w.waitFor("everything connected again by listTools()", func() bool {
		evs = append(evs, w.catalogEvents()...)
		return reachedState(evs, "everything", "connected")
	})
}

// reachedState reports whether evs hold a statuschange of server id to
// state.
func reachedState(evs []catalogEvent, id, state string) bool {
	return slices.ContainsFunc(evs, func(ev catalogEvent) bool {
		return ev.Type == "statuschange" && ev.ID == id && ev.Status.State == state
	})
}

// A required server stays on: disable() refuses it, its status says so,
// and an entry that is both required and disabled is left out.
func TestCatalogRequiredServer(t *testing.T) {
	eitherRuntime(t)
	parallel(t)
	everything := startEverything(t)
	w := newWorld(t, devserver.AuthConfig{})
	var warnings []string
	w.eval(fmt.Sprintf(`(() => {
		%s;
		return cat.warnings;
	})()`, fmt.Sprintf(watchCatalogJS, fmt.Sprintf(`{ servers: {
		everything: { url: %q, required: true }, notes: { url: %q, required: true, disabled: true },
	} }`, everything, w.MCP2URL))), &warnings)
	want := fmt.Sprintf(catalog.EntryForm.Messages.Entry, "notes", catalog.EntryForm.Messages.RequiredOff)
	if len(warnings) != 1 || warnings[0] != want {
		t.Errorf("warnings = %q; want [%q]", warnings, want)
	}
	if names := w.catalogTools(); !anyPrefixed(names, "everything_") {
		t.Fatalf("tools() = %v; want everything_*", names)
	}
	var refused struct {
		Error jsErr `json:"error"`
	}
	w.eval(`cat.disable("everything").then(() => ({}), `+catchJS+`)`, &refused)
	if refused.Error.Code != "invalid_argument" || !strings.Contains(refused.Error.Message, "required") {
		t.Errorf("disable() of a required server: %+v; want invalid_argument, saying it is required", refused.Error)
	}
	if st := w.catalogStatus("everything"); !st.Required || st.State != "connected" {
		t.Errorf("status after the refused disable: %+v; want required and connected", st)
	}
	if r := w.catalogCall("everything_echo", `{message: "still on"}`); r.IsError || !strings.Contains(r.Text, "still on") {
		t.Errorf("a call after the refused disable = %+v", r)
	}
}
