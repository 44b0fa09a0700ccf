package xengine

import (
	"fmt"
	"net/http/httptest"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/mcpwasm/mcpwasm/demo"
	"github.com/mcpwasm/mcpwasm/devkit/devserver"
	"github.com/mcpwasm/mcpwasm/devkit/faultrig"
)

// faultWorld is newWorld with the protected demo MCP server behind a
// fault proxy (the page knows only the proxy's address: the server's
// resource URL is the proxy's) and restartable.
func faultWorld(t *testing.T) (*world, *faultrig.Proxy, *devserver.Restarter) {
	t.Helper()
	var fp *faultrig.Proxy
	var front string
	rs := &devserver.Restarter{}
	w := newServersWith(t, devserver.AuthConfig{}, os.DirFS(webDir), nil, func(cfg *devserver.Config, pc *devserver.PageConfig, _ string) {
		cfg.MCPRestart = rs
		u, err := url.Parse(pc.MCPURL)
		if err != nil {
			t.Fatal(err)
		}
		fp = faultrig.Start(t, u.Host)
		pc.MCPURL = fp.Front(pc.MCPURL)
		front = pc.MCPURL
	})
	w.MCPURL = front
	w.open()
	w.navigate(w.win, w.PageURL+"/e2e/blank.html")
	w.load(w.win)
	return w, fp, rs
}

// watchStates makes the page record c's statechange events (state and
// error code) in window.states.
const watchStates = `void (window.states = [], c.addEventListener("statechange", (e) => states.push({ state: e.detail.state, code: e.detail.error?.code ?? "", message: e.detail.error?.message ?? "" })))`

type stateSeen struct {
	State   string `json:"state"`
	Code    string `json:"code"`
	Message string `json:"message"`
}

func (w *world) states() []stateSeen {
	w.t.Helper()
	var s []stateSeen
	w.eval(`window.states`, &s)
	return s
}

func (w *world) waitClientState(want string) {
	w.t.Helper()
	w.waitFor("client state "+want, func() bool {
		var s string
		w.eval(`c.state`, &s)
		return s == want
	})
}

// TestNetworkDownAndBack: the network between the page and a signed-in
// server goes (the proxy refuses connections and cuts the open ones): the
// client goes reconnecting with a network reason, a call meanwhile fails
// network within its timeoutMs; the network returns (and the browser says
// online): connected again, a call works, without a second sign-in. The
// browser's offline event moves a connected client to reconnecting at once.
func TestNetworkDownAndBack(t *testing.T) {
	eitherRuntime(t)
	w, fp, _ := faultWorld(t)
	if !w.signedIn(w.popupSignIn(`{}`)) {
		return
	}
	w.eval(watchStates, nil)
	signIns := w.snapshot()["authorize"]

	fp.Down()
	w.waitClientState("reconnecting")
	if s := w.states(); len(s) == 0 || s[0].State != "reconnecting" || s[0].Code != "network" {
		t.Errorf("statechange events = %+v; want reconnecting with code network first", s)
	}
	var during struct {
		Error jsErr  `json:"error"`
		State string `json:"state"`
	}
	w.eval(fmt.Sprintf(`(async () => {
		const r = await c.callTool("add", { a: 1, b: 2 }, { timeoutMs: 1500 }).then(() => ({}), %s);
		return { ...r, state: c.state };
	})()`, catchJS), &during)
	if during.Error.Code != "network" || during.State != "reconnecting" {
		t.Errorf("callTool during the outage: %+v in state %s; want network while reconnecting", during.Error, during.State)
	}
	t.Logf("the call during the outage said: %s", during.Error.Message)

	fp.Up()
	w.eval(`void dispatchEvent(new Event("online"))`, nil)
	w.waitClientState("connected")
	var sum float64
	w.eval(`(async () => (await c.callTool("add", { a: 40, b: 2 })).structuredContent.sum)()`, &sum)
	if sum != 42 {
		t.Errorf("add(40, 2) after the network returned = %v; want 42", sum)
	}

	w.eval(`void dispatchEvent(new Event("offline"))`, nil)
	w.waitClientState("reconnecting")
	w.eval(`void dispatchEvent(new Event("online"))`, nil)
	w.waitClientState("connected")
	w.eval(`(async () => (await c.callTool("add", { a: 1, b: 1 })).structuredContent.sum)()`, &sum)
	if sum != 2 {
		t.Errorf("add(1, 1) after offline and online = %v; want 2", sum)
	}
	if n := w.snapshot()["authorize"] - signIns; n != 0 {
		t.Errorf("authorization requests after the sign-in = %d; want 0 (no second sign-in)", n)
	}
	var last string
	w.eval(`states.map((s) => s.state).join(" ")`, &last)
	t.Logf("states: %s", last)
}

// TestConnectionFaultsDuringCalls: a slow network (latency) only slows a
// call; a connection reset during a call, and an answer cut short (in its
// head, or inside its event stream's message), each fail that call with an
// honest error; the next call works.
func TestConnectionFaultsDuringCalls(t *testing.T) {
	eitherRuntime(t)
	w, fp, _ := faultWorld(t)
	if !w.signedIn(w.popupSignIn(`{}`)) {
		return
	}
	call := func(what string) (jsErr, float64) {
		var r struct {
			Error jsErr   `json:"error"`
			Sum   float64 `json:"sum"`
		}
		w.eval(fmt.Sprintf(`c.callTool("add", { a: 20, b: 22 }, { timeoutMs: 20000 }).then((r) => ({ sum: r.structuredContent.sum }), %s)`, catchJS), &r)
		t.Logf("%s: %+v", what, r)
		return r.Error, r.Sum
	}
	// A long echo: its answer's event stream is 6 kB past its head, so a
	// cut after 2,500 bytes falls inside the message's data line.
	long := strings.Repeat("x", 6000)
	echoLong := func(what string) (jsErr, int) {
		var r struct {
			Error jsErr `json:"error"`
			Len   int   `json:"len"`
		}
		w.eval(fmt.Sprintf(`c.callTool("echo", { text: %q }, { timeoutMs: 20000 }).then((r) => ({ len: r.content[0].text.length }), %s)`, long, catchJS), &r)
		t.Logf("%s: %+v", what, r)
		return r.Error, r.Len
	}
	if _, n := echoLong("a long echo before any fault"); n != len(long) {
		t.Fatalf("echo of %d characters came back with %d", len(long), n)
	}
	remove := fp.LimitData(2500)
	e, n := echoLong("a long echo cut inside its event stream")
	remove()
	if e.Code != "network" || !strings.Contains(e.Message, "ended in the middle of its answer") {
		t.Errorf("a long echo cut inside its event stream: %+v, %d of %d characters; want a network error that says the answer was cut", e, n, len(long))
	}
	if _, n := echoLong("a long echo after the cut"); n != len(long) {
		t.Errorf("the echo after the cut came back with %d characters; want %d", n, len(long))
	}
	for _, fault := range []struct {
		name   string
		slow   bool // the call must succeed
		inject func() func()
	}{
		{"slow network (300 ms latency)", true, func() func() { return fp.Latency(300 * time.Millisecond) }},
		{"connection reset", false, func() func() { return fp.ResetPeer(0) }},
		// 40 bytes: the cut falls inside the answer's head.
		{"answer cut after 40 bytes", false, func() func() { return fp.LimitData(40) }},
	} {
		remove := fault.inject()
		e, sum := call("during " + fault.name)
		remove()
		if fault.slow {
			if e.Code != "" || sum != 42 {
				t.Errorf("%s: %+v, sum %v; want 42: a slow answer is still an answer", fault.name, e, sum)
			}
			continue
		}
		if e.Code == "" {
			t.Errorf("%s: the call succeeded; want an error", fault.name)
		} else if e.Code != "network" && e.Code != "protocol" {
			t.Errorf("%s: %+v; want a network (or protocol) error that says what happened", fault.name, e)
		}
		if _, sum := call("after " + fault.name); sum != 42 {
			t.Errorf("the call after the %s = %v; want 42", fault.name, sum)
		}
	}
}

// TestServerRestartFreshSession: the server restarts (forgets its
// sessions, ends its streams): the client gets a fresh session by itself
// through its event stream, the next call works, and a notification the
// new server sends (tools changed) reaches the page.
func TestServerRestartFreshSession(t *testing.T) {
	eitherRuntime(t)
	w, _, rs := faultWorld(t)
	if !w.signedIn(w.popupSignIn(`{}`)) {
		return
	}
	w.eval(watchStates, nil)
	w.eval(`void (window.changed = 0, c.addEventListener("toolschanged", () => changed++))`, nil)
	signIns := w.snapshot()["authorize"]
	rs.Restart()
	w.waitFor("a fresh session after the restart", func() bool {
		var n int
		w.eval(`states.filter((s) => s.state === "connected").length`, &n)
		return n > 0
	})
	s := w.states()
	if len(s) < 2 || s[0].State != "reconnecting" {
		t.Errorf("statechange events = %+v; want reconnecting, then connected", s)
	}
	var sum float64
	w.eval(`(async () => (await c.callTool("add", { a: 40, b: 2 })).structuredContent.sum)()`, &sum)
	if sum != 42 {
		t.Errorf("add(40, 2) after the restart = %v; want 42", sum)
	}
	w.eval(`(async () => { await c.callTool("add_tool", { name: "greet" }); })()`, nil)
	w.waitFor("toolschanged from the restarted server", func() bool {
		var n int
		w.eval(`changed`, &n)
		return n > 0
	})
	if n := w.snapshot()["authorize"] - signIns; n != 0 {
		t.Errorf("authorization requests after the restart = %d; want 0", n)
	}
	if rs.Restarts() != 1 {
		t.Errorf("restarts = %d", rs.Restarts())
	}
}

// TestAgentTurnWithAServerDown: a catalog of three servers, one of which
// becomes unreachable after its tools were listed: the model's call of
// that server's tool gets an honest result, the turn goes on to its
// answer, and the other servers' tools still work in the same turn.
func TestAgentTurnWithAServerDown(t *testing.T) {
	eitherRuntime(t)
	w := newWorld(t, devserver.AuthConfig{})
	// The window goes first: its event streams would hold the servers'
	// Close.
	down := httptest.NewServer(demo.Handler(demo.Options{}))
	t.Cleanup(func() { w.closeWindows(); down.Close() })
	fp := faultrig.Start(t, down.Listener.Addr().String())
	notes2 := httptest.NewServer(demo.SecondHandler(demo.Options{}))
	t.Cleanup(func() { w.closeWindows(); notes2.Close() })

	w.eval(fmt.Sprintf(`void (window.cat = mcp.catalog({ servers: { demo: { url: %q }, notes: { url: %q }, notes2: { url: %q } } }))`,
		fp.Front(down.URL+demo.StreamablePath), w.MCP2URL, notes2.URL+demo.StreamablePath), nil)
	var names []string
	w.eval(`(async () => (await cat.tools()).map((t) => t.name))()`, &names)
	if !strings.Contains(strings.Join(names, " "), "demo_echo") {
		t.Fatalf("tools = %v; want demo_echo among them", names)
	}
	fp.Down()
	var got struct {
		Text    string   `json:"text"`
		Results []string `json:"results"`
		Error   *jsErr   `json:"error"`
	}
	w.eval(fmt.Sprintf(`(async () => {
		const results = [];
		const agent = cat.agent({ model: mcp.models.openai({ baseURL: %q, model: "mcpwasm-standin" }) });
		try {
			const res = await agent.run("echo hello there", { onEvent: (ev) => { if (ev.type === "toolresult") results.push(JSON.stringify(ev)); } }).done;
			return { text: res.text, results };
		} catch (e) {
			return { results, ...(%s)(e) };
		}
	})()`, w.ModelURL, catchJS), &got)
	t.Logf("the turn: %+v", got)
	if got.Error != nil {
		t.Fatalf("the turn failed: %+v; want it to go on with an honest tool result", got.Error)
	}
	if !strings.HasPrefix(got.Text, "Results: ") || strings.Contains(got.Text, "hello there") {
		t.Errorf("the model's answer = %q; want Results: with the honest error of the unreachable server, not an echo", got.Text)
	}
	if !strings.Contains(strings.ToLower(got.Text), "demo") {
		t.Errorf("the model's answer = %q; want it to name the demo server", got.Text)
	}
	var more []string
	w.eval(`(async () => (await cat.callTool("notes_reverse", { text: "abc" })).content.map((c) => c.text))()`, &more)
	if len(more) != 1 || more[0] != "cba" {
		t.Errorf("notes_reverse after the turn = %v; want [cba] (the other servers work on)", more)
	}
}
