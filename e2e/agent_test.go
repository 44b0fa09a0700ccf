package e2e

import (
	"fmt"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/mcpwasm/mcpwasm/demo"
	"github.com/mcpwasm/mcpwasm/demo/cors"
	"github.com/mcpwasm/mcpwasm/demo/model"
	"github.com/mcpwasm/mcpwasm/devkit/devserver"
)

// startModel serves the scripted stand-in model on its own origin and
// returns its base URL.
func startModel(t *testing.T) string {
	t.Helper()
	srv := httptest.NewServer(model.New(model.Options{CORS: cors.Options{}, ChunkDelay: 5 * time.Millisecond}))
	closeLive(t, srv)
	return srv.URL + "/v1"
}

// closeLive closes srv when the test ends, ending the streams a tab may
// still hold open to it (httptest's Close alone would wait for them).
func closeLive(t *testing.T, srv *httptest.Server) {
	t.Cleanup(func() {
		srv.CloseClientConnections()
		srv.Close()
	})
}

// startNotes serves the second demo server (no sign-in).
func startNotes(t *testing.T) string {
	t.Helper()
	srv := httptest.NewServer(demo.SecondHandler(demo.Options{}))
	closeLive(t, srv)
	return srv.URL + demo.StreamablePath
}

// runJS starts window.turn = agent.run(input) on window.agent, recording
// the run's events in window.runEvents and its outcome in window.outcome.
const runJS = `(() => {
	window.runEvents = [];
	window.outcome = null;
	window.ctl = new AbortController();
	window.turn = agent.run(%q, { signal: ctl.signal, onEvent: (ev) => runEvents.push(ev) });
	turn.done.then((r) => { outcome = { text: r.text, finishReason: r.finishReason }; },
		(e) => { outcome = { error: e.code, message: e.message }; });
})()`

type runOutcome struct {
	Text         string `json:"text"`
	FinishReason string `json:"finishReason"`
	Error        string `json:"error"`
	Message      string `json:"message"`
}

func awaitRun(e *env) runOutcome {
	e.t.Helper()
	var o runOutcome
	e.waitFor("the run to end", func() bool {
		var done bool
		_ = e.tryEval(`window.outcome !== null`, &done)
		return done
	})
	e.eval(`outcome`, &o)
	return o
}

type runEvent struct {
	Type      string `json:"type"`
	Name      string `json:"name"`
	ServerID  string `json:"serverId"`
	Arguments string `json:"arguments"`
	Text      string `json:"text"`
	IsError   bool   `json:"isError"`
	Approved  bool   `json:"approved"`
	DecidedBy string `json:"decidedBy"`
	Index     int    `json:"index"`
}

func runEvents(e *env) []runEvent {
	var evs []runEvent
	e.eval(`runEvents`, &evs)
	return evs
}

// agentJS makes window.cat over servers and window.agent with the
// stand-in model at modelURL; approve, when not empty, is the catalog's
// approve function.
func agentJS(servers, modelURL, approve string, more ...string) string {
	opt := ""
	if approve != "" {
		opt = ", approve: " + approve
	}
	for _, m := range more {
		opt += ", " + m
	}
	return fmt.Sprintf(`(() => {
		window.opened = 0;
		const open = window.open.bind(window);
		window.open = (...a) => { opened++; return open(...a); };
		window.cat = mcp.catalog({ servers: %s%s });
		window.agent = cat.agent({ model: mcp.models.openai({ baseURL: %q, model: "mcpwasm-standin" }) });
	})()`, servers, opt, modelURL)
}

// TestAgentTurnAcrossTwoServers: one message makes the stand-in model call
// tools on two servers in one step; the answer is built from both results,
// streamed as text.
func TestAgentTurnAcrossTwoServers(t *testing.T) {
	e := newEnv(t)
	e.eval(agentJS(fmt.Sprintf(`{ demo: { url: %q }, notes: { url: %q } }`, e.MCPURL, startNotes(t)), startModel(t), ""), nil)
	e.eval(fmt.Sprintf(runJS, "add 2 and 40 and reverse hello"), nil)
	o := awaitRun(e)
	if o.Text != "Results: 2 + 40 = 42; olleh" || o.FinishReason != "stop" {
		t.Fatalf("the turn = %+v; want both results", o)
	}
	var steps, texts int
	var calls []string
	for _, ev := range runEvents(e) {
		switch ev.Type {
		case "step":
			steps++
		case "text":
			texts++
		case "toolcall":
			calls = append(calls, fmt.Sprintf("%d:%s@%s", steps, ev.Name, ev.ServerID))
		}
	}
	if !slices.Equal(calls, []string{"1:demo_add@demo", "1:notes_reverse@notes"}) && !slices.Equal(calls, []string{"0:demo_add@demo", "0:notes_reverse@notes"}) {
		t.Errorf("tool calls = %v; want demo_add and notes_reverse in the same step", calls)
	}
	if texts < 3 {
		t.Errorf("%d text events; want the answer streamed in pieces", texts)
	}
}

// TestAgentNeedsSignIn: a turn that needs the protected server (its tools
// are not listed before a sign-in; the model finds it through the
// catalog's meta tools and asks to turn it on) asks the host to sign in
// (authrequired), waits for the real popup sign-in and then answers; with
// the popup closed instead, the model's answer says the user declined, and
// no second popup opens.
func TestAgentNeedsSignIn(t *testing.T) {
	for _, approve := range []bool{true, false} {
		t.Run(map[bool]string{true: "signed in", false: "popup closed"}[approve], func(t *testing.T) {
			e := newAuthEnv(t, devserver.AuthConfig{})
			e.setSeverWindow(personSeverWindow)
			e.eval(agentJS(fmt.Sprintf(`{ secure: { url: %q } }`, e.MCPURL), e.ModelURL, "", "serverTools: true"), nil)
			e.eval(fmt.Sprintf(runJS, "add 2 and 40"), nil)
			e.waitFor("authrequired", func() bool {
				var n int
				_ = e.tryEval(`runEvents.filter((e) => e.type === "authrequired").length`, &n)
				return n == 1
			})
			popups := e.expectPopup()
			e.gesture(`void cat.authorize("secure").catch(() => {})`)
			popup := e.popup(popups)
			if approve {
				e.consent(popup, "approve")
			} else {
				if err := chromedp.Do(popup, chromedp.WaitVisible(chromedp.ID("approve"))); err != nil {
					t.Fatal(err)
				}
				personReads()
				_, _ = chromedp.Run(popup, chromedp.Evaluate[any](`window.close()`))
			}
			o := awaitRun(e.env)
			var opened int
			e.eval(`opened`, &opened)
			if approve {
				if o.Text != "Results: 2 + 40 = 42" {
					t.Errorf("the answer after signing in = %+v", o)
				}
			} else if !strings.Contains(o.Text, "declined to sign in") {
				t.Errorf("the answer after a closed popup = %+v; want the declined text passed on", o)
			}
			if opened != 1 {
				t.Errorf("popups = %d; want 1", opened)
			}
		})
	}
}

// TestAgentApproval: a tool that is not read-only asks the host; a Deny
// reaches the model as the user's refusal; a read-only tool is not asked.
func TestAgentApproval(t *testing.T) {
	e := newEnv(t)
	e.eval(`window.asked = []`, nil)
	e.eval(agentJS(fmt.Sprintf(`{ notes: { url: %q } }`, startNotes(t)), startModel(t), `async (req) => { asked.push(req.name); return false; }`), nil)
	e.eval(fmt.Sprintf(runJS, "note buy milk and reverse abc"), nil)
	o := awaitRun(e)
	var asked []string
	e.eval(`asked`, &asked)
	if !slices.Equal(asked, []string{"notes_note_add"}) {
		t.Errorf("approval asked for %v; want only notes_note_add", asked)
	}
	if !strings.Contains(o.Text, "The user refused to run notes_note_add") || !strings.Contains(o.Text, "cba") {
		t.Errorf("the answer = %+v; want the refusal and the reversed text", o)
	}
	// Each call's event says how it was decided: the host refused one,
	// the policy let the read-only one run.
	var approvals []string
	for _, ev := range runEvents(e) {
		if ev.Type == "approval" {
			approvals = append(approvals, fmt.Sprintf("%s %v by %s", ev.Name, ev.Approved, ev.DecidedBy))
		}
	}
	slices.Sort(approvals)
	if want := []string{"notes_note_add false by host", "notes_reverse true by policy"}; !slices.Equal(approvals, want) {
		t.Errorf("approval events = %q; want %q", approvals, want)
	}
}

// TestAgentStop: Stop during a slow tool ends the run as aborted, and the
// server sees the call cancelled.
func TestAgentStop(t *testing.T) {
	e := newEnv(t)
	e.eval(agentJS(fmt.Sprintf(`{ demo: { url: %q } }`, e.MCPURL), startModel(t), ""), nil)
	e.eval(fmt.Sprintf(runJS, "slow 40"), nil)
	e.waitFor("the slow tool call", func() bool {
		var n int
		_ = e.tryEval(`runEvents.filter((e) => e.type === "toolcall").length`, &n)
		return n == 1
	})
	e.waitFor("the call to reach the server", func() bool {
		e.mu.Lock()
		defer e.mu.Unlock()
		return slices.Contains(e.methods, "tools/call")
	})
	e.eval(`ctl.abort()`, nil)
	o := awaitRun(e)
	if o.Error != "aborted" {
		t.Errorf("the run after Stop = %+v; want aborted", o)
	}
	e.waitFor("the server to see the cancellation", func() bool { return slices.Contains(e.cancelledTools(), "slow") })
}

// TestAgentServesSampling: a server's sampling request during a tool call
// goes to the agent's model when approve allows it, and is refused when it
// does not.
func TestAgentServesSampling(t *testing.T) {
	modelURL := startModel(t)
	for _, allow := range []bool{true, false} {
		t.Run(fmt.Sprint("allow=", allow), func(t *testing.T) {
			e := newEnv(t)
			e.eval(agentJS(fmt.Sprintf(`{ demo: { url: %q } }`, e.MCPURL), modelURL, fmt.Sprintf(`async (req) => req.tool === "sampling/createMessage" ? %v : true`, allow)), nil)
			r := catCall(e, "demo_summarize", `{ text: "one two three four five six", maxWords: 3 }`)
			switch {
			case allow && (r.IsError || r.Text != "Summary: one two three"):
				t.Errorf("summarize with sampling allowed = %+v; want the stand-in's summary", r)
			case !allow && !r.IsError:
				t.Errorf("summarize with sampling refused = %+v; want an error result", r)
			}
		})
	}
}
