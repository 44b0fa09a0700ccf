package xengine

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcpwasm/mcpwasm/demo/cors"
	"github.com/mcpwasm/mcpwasm/demo/model"
	"github.com/mcpwasm/mcpwasm/devkit/devserver"
)

// streamingModel serves the stand-in model with a pause between its
// chunks, so that a page sees an answer arrive in pieces.
func streamingModel(t *testing.T) string {
	t.Helper()
	return serve(t, model.New(model.Options{CORS: cors.Options{}, ChunkDelay: 5 * time.Millisecond})).URL + "/v1"
}

// TestAgentTurnEvents: one message makes the stand-in model call tools on
// two servers in one step, and the answer, built from both results,
// streams in pieces; in the next turn a tool that is not read-only asks
// the host, whose refusal reaches the model, while a read-only one runs
// by the policy; each call's approval event says who decided.
func TestAgentTurnEvents(t *testing.T) {
	eitherRuntime(t)
	w := newWorld(t, devserver.AuthConfig{})
	modelURL := streamingModel(t)
	w.eval(`window.asked = []`, nil)
	w.eval(standinAgentJS(fmt.Sprintf(`{ demo: { url: %q }, notes: { url: %q } }`, w.OpenURL, w.MCP2URL), modelURL,
		`approve: async (req) => { asked.push(req.name); return false; }`), nil)
	w.startRun("add 2 and 40 and reverse hello")
	o := w.awaitRun()
	if o.Text != "Results: 2 + 40 = 42; olleh" || o.FinishReason != "stop" {
		t.Fatalf("the turn = %+v; want both results", o)
	}
	var steps, texts int
	var calls []string
	for _, ev := range w.runEvents() {
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

	// A new conversation over the same catalog.
	w.eval(fmt.Sprintf(`void (window.agent = cat.agent({ model: mcp.models.openai({ baseURL: %q, model: "mcpwasm-standin" }) }))`, modelURL), nil)
	w.startRun("note buy milk and reverse abc")
	o = w.awaitRun()
	var asked []string
	w.eval(`asked`, &asked)
	if !slices.Equal(asked, []string{"notes_note_add"}) {
		t.Errorf("approval asked for %v; want only notes_note_add", asked)
	}
	if !strings.Contains(o.Text, "The user refused to run notes_note_add") || !strings.Contains(o.Text, "cba") {
		t.Errorf("the answer = %+v; want the refusal and the reversed text", o)
	}
	var approvals []string
	for _, ev := range w.runEvents() {
		if ev.Type == "approval" {
			approvals = append(approvals, fmt.Sprintf("%s %v by %s", ev.Name, ev.Approved, ev.DecidedBy))
		}
	}
	slices.Sort(approvals)
	if want := []string{"notes_note_add false by host", "notes_reverse true by policy"}; !slices.Equal(approvals, want) {
		t.Errorf("approval events = %q; want %q", approvals, want)
	}
}

// TestAgentNeedsSignIn: a turn that needs the protected server (its tools
// are not listed before a sign-in; the model finds it through the
// catalog's meta tools and asks to turn it on) asks the host to sign in
// (authrequired), waits for the real popup sign-in and then answers; with
// the popup closed instead, the model's answer says the user declined,
// and no second popup opens.
func TestAgentNeedsSignIn(t *testing.T) {
	eitherRuntime(t)
	for _, approve := range []bool{true, false} {
		t.Run(map[bool]string{true: "signed in", false: "popup closed"}[approve], func(t *testing.T) {
			w := newWorld(t, devserver.AuthConfig{})
			w.eval(fmt.Sprintf(`void (globalThis.__mcpwasmSeverWindowMs = %d)`, severWindowMs), nil)
			w.eval(standinAgentJS(fmt.Sprintf(`{ secure: { url: %q } }`, w.MCPURL), w.ModelURL, "serverTools: true"), nil)
			w.startRun("add 2 and 40")
			w.waitFor("authrequired", func() bool { return w.countRunEvents("authrequired") == 1 })
			if st := w.catalogStatus("secure"); !st.PendingSignIn || st.State != "needs_auth" {
				t.Errorf("status while the turn waits: %+v; want needs_auth with a sign-in pending", st)
			}
			wait, err := w.win.ExpectPopup(w.ctx)
			if err != nil {
				t.Fatal(err)
			}
			if err := w.win.Gesture(w.ctx, `void cat.authorize("secure").catch(() => {})`); err != nil {
				t.Fatal(err)
			}
			popup := w.popup(wait, "the sign-in popup")
			if approve {
				w.consentShown(popup)
				if err := popup.Click(w.ctx, "#approve"); err != nil {
					t.Fatalf("approving: %v", err)
				}
			} else {
				w.closeAsAPerson(popup)
			}
			o := w.awaitRun()
			opened := len(w.opensIn(w.win))
			if approve {
				if o.Text != "Results: 2 + 40 = 42" {
					t.Errorf("the answer after signing in = %+v", o)
				}
			} else if !strings.Contains(o.Text, "was declined or cancelled") {
				t.Errorf("the answer after a closed popup = %+v; want the declined text passed on", o)
			}
			if opened != 1 {
				t.Errorf("popups = %d; want 1", opened)
			}
			if st := w.catalogStatus("secure"); st.PendingSignIn {
				t.Errorf("status after the turn: %+v; want no sign-in pending", st)
			}
		})
	}
}

// TestAgentStop: Stop during a slow tool ends the run as aborted, and the
// server sees the call cancelled.
func TestAgentStop(t *testing.T) {
	eitherRuntime(t)
	w := newWorld(t, devserver.AuthConfig{})
	d := newDemoRecorder(t)
	w.eval(standinAgentJS(fmt.Sprintf(`{ demo: { url: %q } }`, d.URL), w.ModelURL), nil)
	w.startRun("slow 40")
	w.waitFor("the slow tool call", func() bool { return w.countRunEvents("toolcall") == 1 })
	w.waitFor("the call to reach the server", func() bool { return d.saw("tools/call") })
	w.eval(`ctl.abort()`, nil)
	if o := w.awaitRun(); o.Error != "aborted" {
		t.Errorf("the run after Stop = %+v; want aborted", o)
	}
	w.waitFor("the server to see the cancellation", func() bool { return d.cancelledTool("slow") })
}

// TestAgentServesSampling: a server's sampling request during a tool call
// goes to the agent's model when approve allows it, and is refused when
// it does not.
func TestAgentServesSampling(t *testing.T) {
	eitherRuntime(t)
	w := newWorld(t, devserver.AuthConfig{})
	for _, allow := range []bool{true, false} {
		t.Run(fmt.Sprint("allow=", allow), func(t *testing.T) {
			w.eval(standinAgentJS(fmt.Sprintf(`{ demo: { url: %q } }`, w.OpenURL), w.ModelURL,
				fmt.Sprintf(`approve: async (req) => req.tool === "sampling/createMessage" ? %v : true`, allow)), nil)
			r := w.catalogCall("demo_summarize", `{ text: "one two three four five six", maxWords: 3 }`)
			switch {
			case allow && (r.IsError || r.Text != "Summary: one two three"):
				t.Errorf("summarize with sampling allowed = %+v; want the stand-in's summary", r)
			case !allow && !r.IsError:
				t.Errorf("summarize with sampling refused = %+v; want an error result", r)
			}
			w.eval(`cat.close()`, nil)
		})
	}
}
