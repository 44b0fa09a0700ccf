package xengine

import (
	"fmt"
	"strings"
	"testing"

	"github.com/mcpwasm/mcpwasm/devkit/devserver"
)

// TestAgentSignInThroughAStack: the model asks for a server behind a stack
// we did not write (Ory Hydra, with the mcp-front gateway) that needs a
// sign-in; the catalog's status says the sign-in is pending while the
// turn waits, the person signs in through Hydra's own login and consent
// pages from a click, and the turn resumes with the tool's answer.
func TestAgentSignInThroughAStack(t *testing.T) {
	eitherRuntime(t)
	parallel(t)
	w := newWorld(t, devserver.AuthConfig{})
	srv := startHydra(t, w.PageURL, false)
	w.eval(standinAgentJS(fmt.Sprintf(`{ hydra: { url: %q } }`, srv.MCPURL), w.ModelURL, "serverTools: true"), nil)
	w.startRun("add 2 and 40")
	w.waitFor("authrequired", func() bool { return w.countRunEvents("authrequired") == 1 })
	if st := w.catalogStatus("hydra"); !st.PendingSignIn || st.State != "needs_auth" {
		t.Errorf("status while the turn waits: %+v; want needs_auth with a sign-in pending", st)
	}
	wait, err := w.win.ExpectPopup(w.ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.win.Gesture(w.ctx, `void cat.authorize("hydra").catch(() => {})`); err != nil {
		t.Fatal(err)
	}
	srv.Consent(t, w.ctx, w.popup(wait, "Hydra's sign-in popup"), true)
	o := w.awaitRun()
	t.Logf("the turn's answer: %q", o.Text)
	if o.Error != "" || !strings.Contains(o.Text, "42") {
		t.Errorf("the turn after signing in = %+v; want the sum, 42, passed on", o)
	}
	if st := w.catalogStatus("hydra"); st.PendingSignIn || st.State != "connected" {
		t.Errorf("status after the turn: %+v; want connected, no sign-in pending", st)
	}
	if n := len(w.opensIn(w.win)); n != 1 {
		t.Errorf("sign-in windows = %d; want 1", n)
	}
}
