package catalog

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpwasm/mcpwasm/mcpclient"
)

func TestBreakerTransitions(t *testing.T) {
	clock := newFakeClock()
	b := newBreaker(BreakerConfig{Failures: 3, Cooldown: 30 * time.Second})
	step := func(k outcomeKind) {
		t.Helper()
		p, ok := b.allow(clock.Now())
		if !ok {
			t.Fatalf("allow refused in state %s", b.state)
		}
		b.report(p, k, clock.Now())
	}
	step(failure)
	step(failure)
	step(neutral) // tool errors, auth, bad arguments: not counted
	step(success) // resets the count
	step(failure)
	step(failure)
	if b.state != BreakerClosed {
		t.Fatalf("state after 2 consecutive failures = %s; want closed", b.state)
	}
	step(failure)
	if b.state != BreakerOpen || !b.retryAt.Equal(clock.Now().Add(30*time.Second)) {
		t.Fatalf("state = %s, retryAt %v; want open until +30s", b.state, b.retryAt)
	}
	if _, ok := b.allow(clock.Now().Add(29 * time.Second)); ok {
		t.Fatal("open breaker allowed a request before the cooldown ended")
	}
	clock.Add(30 * time.Second)
	probe, ok := b.allow(clock.Now())
	if !ok || b.state != BreakerHalfOpen {
		t.Fatalf("after the cooldown: allowed %v, state %s; want a probe in half_open", ok, b.state)
	}
	if _, ok := b.allow(clock.Now()); ok {
		t.Fatal("half-open breaker allowed a second request while its probe ran")
	}
	b.report(probe, failure, clock.Now())
	if b.state != BreakerOpen {
		t.Fatalf("failed probe left state %s; want open", b.state)
	}
	clock.Add(30 * time.Second)
	probe, _ = b.allow(clock.Now())
	stale := permit{generation: probe.generation - 1}
	b.report(stale, failure, clock.Now()) // from before the transition: ignored
	b.report(probe, success, clock.Now())
	if b.state != BreakerClosed {
		t.Fatalf("successful probe left state %s; want closed", b.state)
	}
}

// Against a real server that answers 503 (busy: each call is sent again
// a few times, then fails saying so): three failed calls open the
// breaker (status and event say until when); calls then fail fast with the
// breaker's text and no request reaches the server; after the cooldown one
// probe goes out: a failure reopens, a success closes.
func TestBreakerAgainstServer(t *testing.T) {
	d := startDemo(t)
	clock := newFakeClock()
	cat, ev := newCatalog(t, Config{Servers: servers("demo", d.URL), Factory: clientFactory(t), Clock: clock})
	ctx := ctxT(t)
	call := func() ToolResult {
		t.Helper()
		r, err := cat.ModelCall(ctx, "demo_echo", `{"text":"hi"}`, CallOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	if r := call(); r.IsError || r.Text != "hi" {
		t.Fatalf("first call = %+v", r)
	}
	d.down.Store(true)
	for i := range 3 {
		r := call()
		want := say(textBusy, "demo", "demo_echo", 503, "later")
		if !r.IsError || r.Text != want {
			t.Fatalf("failing call %d = %q; want %q", i, r.Text, want)
		}
	}
	st, _ := cat.Status("demo")
	retryAt := clock.Now().Add(DefaultBreakerCooldown)
	if st.Breaker != BreakerOpen || st.RetryAt != retryAt.UnixMilli() {
		t.Fatalf("status = %+v; want breaker open, retryAt %d", st, retryAt.UnixMilli())
	}
	waitFor(t, "statuschange open", func() bool {
		for _, e := range ev.of(EventStatusChange) {
			if sc := e.Data.(StatusChange); sc.Status.Breaker == BreakerOpen && sc.Status.RetryAt == retryAt.UnixMilli() {
				return true
			}
		}
		return false
	})
	before := d.requests.Load()
	clock.Add(10 * time.Second)
	r := call()
	if want := say(textBreakerOpen, "demo", "demo_echo", 3, "20 s"); r.Text != want {
		t.Errorf("fast-fail text = %q; want %q", r.Text, want)
	}
	tools, err := cat.Tools(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(tools) != 0 {
		t.Errorf("Tools while open = %v; want none", names(tools))
	}
	if got := d.requests.Load(); got != before {
		t.Errorf("requests while open = %d; want 0", got-before)
	}
	// Cooldown over, server still down: the probe fails, the breaker reopens.
	clock.Add(20 * time.Second)
	r = call()
	if r.Text != say(textBusy, "demo", "demo_echo", 503, "later") {
		t.Errorf("probe = %q", r.Text)
	}
	if d.requests.Load() == before {
		t.Error("the probe sent no request")
	}
	if st, _ := cat.Status("demo"); st.Breaker != BreakerOpen {
		t.Errorf("after a failed probe breaker = %s; want open", st.Breaker)
	}
	// Cooldown over, server back: the probe succeeds and closes it.
	clock.Add(30 * time.Second)
	d.down.Store(false)
	if r := call(); r.IsError || r.Text != "hi" {
		t.Fatalf("call after recovery = %+v", r)
	}
	if st, _ := cat.Status("demo"); st.Breaker != BreakerClosed || st.State != string(mcpclient.StateConnected) {
		t.Errorf("after a good probe status = %+v; want closed, connected", st)
	}
	var seen []string
	for _, e := range ev.of(EventStatusChange) {
		b := e.Data.(StatusChange).Status.Breaker
		if len(seen) == 0 || seen[len(seen)-1] != b {
			seen = append(seen, b)
		}
	}
	want := []string{BreakerClosed, BreakerOpen, BreakerHalfOpen, BreakerOpen, BreakerHalfOpen, BreakerClosed}
	if diff := cmp.Diff(want, seen); diff != "" {
		t.Errorf("breaker states announced (-want +got):\n%s", diff)
	}
}
