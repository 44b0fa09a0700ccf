package xengine

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/mcpwasm/mcpwasm/devkit/devserver"
)

// busyWorld is newWorld with the dev server's busy switches (429, 503)
// in front of the demo MCP servers and the token endpoint, all off until
// a scenario sets one.
func busyWorld(t *testing.T, ac devserver.AuthConfig) (*world, devserver.BusyConfig) {
	t.Helper()
	sw := devserver.BusyConfig{MCP: &devserver.Busy{}, MCP2: &devserver.Busy{}, Token: &devserver.Busy{}}
	w := newServersWith(t, ac, os.DirFS(webDir), nil, func(cfg *devserver.Config, _ *devserver.PageConfig, _ string) {
		cfg.Busy = sw
	})
	w.open()
	w.navigate(w.win, w.PageURL+"/e2e/blank.html")
	w.load(w.win)
	return w, sw
}

// calls are the attempts of tools/call among hits.
func calls(hits []devserver.BusyHit) []devserver.BusyHit {
	var out []devserver.BusyHit
	for _, h := range hits {
		if h.Method == "tools/call" {
			out = append(out, h)
		}
	}
	return out
}

// connectSecond connects window.c to the second demo server (no sign-in).
func (w *world) connectSecond() {
	w.t.Helper()
	var state string
	w.eval(fmt.Sprintf(`(async () => { window.c = mcp.client(%q); await c.connect(); return c.state; })()`, w.MCP2URL), &state)
	if state != "connected" {
		w.t.Fatalf("connecting to the second demo server: state %s; want connected", state)
	}
}

// busyCall is what a page sees of a call: its text, or its error.
type busyCall struct {
	Text  string `json:"text"`
	State string `json:"state"`
	Error *struct {
		Code    string `json:"code"`
		Status  int    `json:"status"`
		Message string `json:"message"`
	} `json:"error"`
}

func (c busyCall) String() string {
	if c.Error != nil {
		return fmt.Sprintf("rejected %s (status %d): %s; state %s", c.Error.Code, c.Error.Status, c.Error.Message, c.State)
	}
	return fmt.Sprintf("resolved %q; state %s", c.Text, c.State)
}

const busyCatchJS = `(e) => ({ error: { code: e.code, status: e.status ?? 0, message: e.message }, state: c.state })`

// TestBusyRetryAfterThenSuccess: a server that answers a call 429 with
// Retry-After: 1 twice gets the call a third time, each after the wait it
// asked for (by the server's own clock), and the page sees the result.
func TestBusyRetryAfterThenSuccess(t *testing.T) {
	eitherRuntime(t)
	w, sw := busyWorld(t, devserver.AuthConfig{})
	w.connectSecond()
	before := len(sw.MCP2.Hits())
	sw.MCP2.Set(2, 429, 1)
	var got busyCall
	w.eval(`c.callTool("reverse", { text: "busy" }).then((r) => ({ text: r.content[0].text, state: c.state }), `+busyCatchJS+`)`, &got)
	if got.Error != nil || got.Text != "ysub" {
		t.Fatalf("callTool after two 429s: %v; want the result ysub", got)
	}
	hits := calls(sw.MCP2.Hits()[before:])
	if len(hits) != 3 {
		t.Fatalf("the server saw %d attempts of the call; want 3 (two 429s, then the call): %+v", len(hits), hits)
	}
	for i, h := range hits {
		if want := map[bool]int{true: 429, false: 0}[i < 2]; h.Status != want {
			t.Errorf("attempt %d answered %d; want %d", i+1, h.Status, want)
		}
		if i > 0 && h.Time.Sub(hits[i-1].Time) < time.Second {
			t.Errorf("attempt %d came %v after the 429 that asked for Retry-After: 1; want at least 1 s", i+1, h.Time.Sub(hits[i-1].Time))
		}
	}
}

// TestBusyRetryAfterPastTheCap: a Retry-After longer than the client
// waits (30 s) ends the call at once with an http error whose status is
// the server's and whose message says when to try again; the client stays
// connected.
func TestBusyRetryAfterPastTheCap(t *testing.T) {
	eitherRuntime(t)
	w, sw := busyWorld(t, devserver.AuthConfig{})
	w.connectSecond()
	before := len(sw.MCP2.Hits())
	sw.MCP2.Set(1, 429, 120)
	var got busyCall
	w.eval(`c.callTool("reverse", { text: "busy" }).then((r) => ({ text: r.content[0].text, state: c.state }), `+busyCatchJS+`)`, &got)
	if got.Error == nil || got.Error.Code != "http" || got.Error.Status != 429 ||
		!strings.Contains(got.Error.Message, "is busy (HTTP 429); try again in 120 s") {
		t.Errorf("callTool with Retry-After: 120: %v; want http, status 429, a message saying to try again in 120 s", got)
	}
	if got.State != "connected" {
		t.Errorf("state after the busy answer: %s; want connected", got.State)
	}
	if n := len(calls(sw.MCP2.Hits()[before:])); n != 1 {
		t.Errorf("the server saw %d attempts; want 1 (no retry past the cap)", n)
	}
}

// TestBusyAbortDuringWait: aborting a call while it waits out a
// Retry-After rejects it aborted, and the wait ends with it: the server
// never hears the call again.
func TestBusyAbortDuringWait(t *testing.T) {
	eitherRuntime(t)
	const retryAfter = 2
	w, sw := busyWorld(t, devserver.AuthConfig{})
	w.connectSecond()
	before := len(sw.MCP2.Hits())
	sw.MCP2.Set(1, 503, retryAfter)
	w.eval(`(() => {
		window.ac = new AbortController();
		window.pending = c.callTool("reverse", { text: "busy" }, { signal: ac.signal })
			.then((r) => ({ text: r.content[0].text, state: c.state }), `+busyCatchJS+`);
		return null;
	})()`, nil)
	w.waitFor("the server's 503", func() bool { return len(calls(sw.MCP2.Hits()[before:])) > 0 })
	var got busyCall
	w.eval(`(async () => { ac.abort(); return await pending; })()`, &got)
	if got.Error == nil || got.Error.Code != "aborted" {
		t.Fatalf("callTool aborted during the Retry-After wait: %v; want aborted", got)
	}
	// Past the Retry-After, an unabortable wait would have sent the call
	// again.
	first := calls(sw.MCP2.Hits()[before:])[0].Time
	time.Sleep(time.Until(first.Add(retryAfter*time.Second + 500*time.Millisecond)))
	if n := len(calls(sw.MCP2.Hits()[before:])); n != 1 {
		t.Errorf("the server saw %d attempts of the aborted call; want 1", n)
	}
}

// TestBusyTokenEndpointDuringRefresh: the token endpoint answers a
// refresh with a burst of 503s without Retry-After; the refresh backs off
// and succeeds after the burst, once, without a second sign-in, and the
// call that needed it gets its result.
func TestBusyTokenEndpointDuringRefresh(t *testing.T) {
	eitherRuntime(t)
	// Long enough that a sign-in and the first connect on a loaded
	// 2-core machine (7 s from token to first call was seen) end before
	// half of it, when the client would refresh before the burst.
	const ttl = 20 * time.Second
	w, sw := busyWorld(t, devserver.AuthConfig{TokenTTL: ttl})
	if !w.signedIn(w.popupSignIn(`{}`)) {
		return
	}
	if n := w.refreshes(); n != 0 {
		t.Fatalf("%d refreshes before the burst: the sign-in took more than half the token's %v lifetime; raise ttl", n, ttl)
	}
	signIns := w.snapshot()["authorize"]
	before := len(sw.Token.Hits())
	sw.Token.Set(2, 503, -1)
	// The client refreshes a token in the second half of its life.
	w.waitFor("the access token to pass half its life", func() bool { return time.Since(w.tokenIssued()) > ttl/2+time.Second })
	var sum float64
	w.eval(`(async () => (await c.callTool("add", { a: 40, b: 2 })).structuredContent.sum)()`, &sum)
	if sum != 42 {
		t.Errorf("add(40, 2) with the refresh = %v; want 42", sum)
	}
	if n := w.refreshes(); n != 1 {
		t.Errorf("refresh grants = %d; want 1 (after the burst)", n)
	}
	hits := sw.Token.Hits()[before:]
	if len(hits) != 3 || hits[0].Status != 503 || hits[1].Status != 503 || hits[2].Status != 0 {
		t.Errorf("token requests during the burst: %+v; want two 503s, then the refresh", hits)
	}
	if n := w.snapshot()["authorize"]; n != signIns {
		t.Errorf("sign-in requests: %d after the burst, %d before; want no second sign-in", n, signIns)
	}
	var state string
	w.eval(`c.state`, &state)
	if state != "connected" {
		t.Errorf("state after the refresh: %s; want connected", state)
	}
}
