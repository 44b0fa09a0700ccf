package catalog

import (
	"strings"
	"testing"
	"time"

	"github.com/mcpwasm/mcpwasm/mcpclient"
	"github.com/mcpwasm/mcpwasm/mcperr"
)

// A server unused for IdleTimeout loses its session and GET stream but not
// its tools; the next call connects it again, and Tools alone does not.
func TestIdleSessionClosesAndTheNextCallReopens(t *testing.T) {
	d := startDemo(t)
	cat, ev := newCatalog(t, Config{Servers: servers("demo", d.URL), Factory: clientFactory(t), IdleTimeout: 200 * time.Millisecond})
	ctx := ctxT(t)
	if r, _ := cat.ModelCall(ctx, "demo_echo", `{"text":"one"}`, CallOptions{}); r.Text != "one" {
		t.Fatalf("first call = %q", r.Text)
	}
	waitFor(t, "the GET stream open", func() bool { return d.open.Load() > 0 })
	waitFor(t, "the session closed for idleness", func() bool {
		st, _ := cat.Status("demo")
		return st.Idle && st.State == string(mcpclient.StateIdle)
	})
	waitFor(t, "no request left open at the server", func() bool { return d.open.Load() == 0 })
	inits := d.count("initialize")
	tools, err := cat.Tools(ctx)
	if err != nil || len(tools) != 7 {
		t.Fatalf("tools while idle = %d, %v; want all 7 still listed", len(tools), err)
	}
	if st, _ := cat.Status("demo"); !st.Idle || st.Tools != 7 {
		t.Errorf("status after Tools while idle = %+v; want idle with 7 tools (Tools must not reconnect)", st)
	}
	if r, _ := cat.ModelCall(ctx, "demo_echo", `{"text":"two"}`, CallOptions{}); r.Text != "two" {
		t.Fatalf("call after the idle close = %q", r.Text)
	}
	if st, _ := cat.Status("demo"); st.Idle || st.State != string(mcpclient.StateConnected) {
		t.Errorf("status after the call = %+v; want connected, not idle", st)
	}
	if got := d.count("initialize"); got != inits+1 {
		t.Errorf("initialize requests: %d more; want one new session", got-inits)
	}
	if n := ev.count(EventAuthRequired); n != 0 {
		t.Errorf("%d authrequired events: reconnecting must not ask for a sign-in", n)
	}
}

// A call keeps its server open however long it runs; Use (the host's
// direct use) reopens a parked session and holds it; a negative IdleTimeout never closes.
func TestIdleCountsCallsAndUse(t *testing.T) {
	d := startDemo(t)
	cat, _ := newCatalog(t, Config{Servers: servers("demo", d.URL), Factory: clientFactory(t), IdleTimeout: 150 * time.Millisecond})
	ctx := ctxT(t)
	r, _ := cat.ModelCall(ctx, "demo_slow", `{"steps":3,"delayMs":200}`, CallOptions{})
	if !strings.Contains(r.Text, "Finished 3 steps") {
		t.Fatalf("a call longer than the idle timeout = %q", r.Text)
	}
	waitFor(t, "idle", func() bool { st, _ := cat.Status("demo"); return st.Idle })
	srv, _ := cat.Server("demo")
	client, _ := ClientOf(srv)
	if _, err := client.ListTools(ctx); mcperr.CodeOf(err, "") != mcperr.Protocol {
		t.Fatalf("a parked client used without Use: %v; want protocol (not connected)", err)
	}
	release, err := cat.Use(ctx, "demo")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := client.ListTools(ctx); err != nil {
		t.Fatalf("after Use: %v", err)
	}
	time.Sleep(400 * time.Millisecond) // held: no close may come, so there is no event to wait for
	if st, _ := cat.Status("demo"); st.Idle {
		t.Error("closed for idleness while the host used it")
	}
	release()
	waitFor(t, "idle once released", func() bool { st, _ := cat.Status("demo"); return st.Idle })
	if _, err := cat.Use(ctx, "nope"); err == nil {
		t.Error("Use of an unknown server: no error")
	}

	d2 := startDemo(t)
	never, _ := newCatalog(t, Config{Servers: servers("demo", d2.URL), Factory: clientFactory(t), IdleTimeout: -1})
	if _, err := never.Tools(ctx); err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond) // a negative timeout: nothing may happen, so there is no event to wait for
	if st, _ := never.Status("demo"); st.Idle || st.State != string(mcpclient.StateConnected) {
		t.Errorf("IdleTimeout -1: status %+v; want connected", st)
	}
}

// A required server cannot be disabled, by the host or by an entry.
func TestRequiredServer(t *testing.T) {
	d := startDemo(t)
	cat, _ := newCatalog(t, Config{Servers: map[string]ServerConfig{"demo": {URL: d.URL, Required: true}}, Factory: clientFactory(t)})
	err := cat.Disable("demo")
	wantCode(t, err, mcperr.InvalidArgument)
	if !strings.Contains(err.Error(), "required") {
		t.Errorf("Disable error %q does not say why", err)
	}
	if st, _ := cat.Status("demo"); !st.Required || st.State == StateDisabled {
		t.Errorf("status = %+v; want required, not disabled", st)
	}
	for _, entry := range []string{`{"url":"http://x.example/mcp","required":true,"enabled":false}`, `{"url":"http://x.example/mcp","required":true,"disabled":true}`} {
		_, err := ParseEntry("r", []byte(entry))
		if err == nil || !strings.Contains(err.Error(), EntryForm.Messages.RequiredOff) {
			t.Errorf("ParseEntry(%s) = %v; want %q", entry, err, EntryForm.Messages.RequiredOff)
		}
	}
	sc, err := ParseEntry("r", []byte(`{"url":"http://x.example/mcp","required":true}`))
	if err != nil || !sc.Required {
		t.Errorf("ParseEntry of a required entry = %+v, %v", sc, err)
	}
	_, err = New(Config{Servers: map[string]ServerConfig{"r": {URL: d.URL, Required: true, Enabled: new(false)}}, Factory: clientFactory(t)})
	if mcperr.CodeOf(err, "") != mcperr.InvalidArgument {
		t.Errorf("New with a required, disabled server: %v; want invalid_argument", err)
	}
}

// Use racing the idle close: whenever it comes, the client it returns is
// connected.
func TestUseRacingTheIdleClose(t *testing.T) {
	d := startDemo(t)
	cat, _ := newCatalog(t, Config{Servers: servers("demo", d.URL), Factory: clientFactory(t), IdleTimeout: 20 * time.Millisecond})
	ctx := ctxT(t)
	if _, err := cat.Tools(ctx); err != nil {
		t.Fatal(err)
	}
	srv, _ := cat.Server("demo")
	client, _ := ClientOf(srv)
	for i := range 60 {
		time.Sleep(time.Duration(i%7) * 5 * time.Millisecond)
		release, err := cat.Use(ctx, "demo")
		if err != nil {
			t.Fatalf("Use %d: %v", i, err)
		}
		_, err = client.ListTools(ctx)
		release()
		if err != nil {
			t.Fatalf("use %d after Use: %v", i, err)
		}
	}
}
