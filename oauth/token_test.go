package oauth

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

// Root protected resource metadata names the origin as the resource: the
// refresh request must repeat the resource of the authorization request
// (RFC 8707), or a strict AS answers invalid_grant and the grant is lost.
func TestRefreshUsesAuthorizationResource(t *testing.T) {
	e := newEnv(t)
	e.rs.prmPath = "/.well-known/oauth-protected-resource"
	e.rs.prm = func(m map[string]any) { m["resource"] = e.rs.srv.URL }
	clk := &fakeClock{t: time.Now()}
	h := e.handler(t, func(c *Config) { c.Clock = clk })
	ctx := context.Background()
	if err := h.Login(ctx); err != nil {
		t.Fatal(err)
	}
	old, _ := e.store.GetGrant(ctx, h.Resource())
	if old.ResourceIndicator != e.rs.srv.URL {
		t.Errorf("grant resource indicator = %q; want %q", old.ResourceIndicator, e.rs.srv.URL)
	}
	clk.advance(2 * time.Hour)
	ts, _ := h.TokenSource(ctx)
	tok, err := ts.Token()
	if err != nil || tok.AccessToken == old.AccessToken {
		t.Fatalf("refresh: %v (new token: %v)", err, tok != nil && tok.AccessToken != old.AccessToken)
	}
	if g, _ := e.store.GetGrant(ctx, h.Resource()); g == nil {
		t.Fatal("grant dropped by the refresh")
	}
}

// The fake AS echoes rejected codes, verifiers and refresh tokens in
// error_description; none may reach an error.
func TestTokenErrorRedactsEchoedSecrets(t *testing.T) {
	e := newEnv(t)
	e.courier.block = make(chan struct{})
	h := e.handler(t, nil)
	done := make(chan error, 1)
	go func() { done <- h.Login(context.Background()) }()
	for e.courier.calls.Load() == 0 {
		time.Sleep(time.Millisecond)
	}
	e.courier.mu.Lock()
	state := stateOf(t, strings.Replace(e.courier.urls[0], "/authorize?", "/x?", 1))
	e.courier.mu.Unlock()
	if err := e.reg.Deliver("http://127.0.0.1:9/callback?code=code-secret-foreign&state=" + state); err != nil {
		t.Fatal(err)
	}
	err := <-done
	if !errors.Is(err, ErrTokenFailed) {
		t.Fatalf("Login: %v; want token_failed", err)
	}
	if s := err.Error(); strings.Contains(s, "code-secret-foreign") || !strings.Contains(s, "[redacted]") {
		t.Errorf("error = %q; want the echoed code redacted", s)
	}
	for _, ev := range e.events.all() {
		if ev.Err != nil && strings.Contains(ev.Err.Error(), "code-secret") {
			t.Errorf("event carries the code: %v", ev.Err)
		}
	}
	// The verifier is echoed too: 43 characters that must not appear.
	if strings.Contains(err.Error(), "for verifier ") && !strings.Contains(err.Error(), "for verifier [redacted]") {
		t.Errorf("verifier not redacted: %q", err)
	}
}
