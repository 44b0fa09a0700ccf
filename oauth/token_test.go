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

// A short-lived access token (a provider's 10-second token) is used for
// half its life, not refreshed before every request because it expires
// within RefreshMargin; a token of an hour is refreshed RefreshMargin
// before its expiry.
func TestRefreshMarginForShortLivedTokens(t *testing.T) {
	for _, tc := range []struct {
		name      string
		expiresIn int
		before    time.Duration // still the first token here
		after     time.Duration // refreshed here
	}{
		{"10 s token", 10, 4 * time.Second, 6 * time.Second},
		{"1 h token", 3600, 58 * time.Minute, 59*time.Minute + 30*time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			e.as.expiresIn = tc.expiresIn
			clk := &fakeClock{t: time.Now()}
			h := e.handler(t, func(c *Config) { c.Clock = clk })
			ctx := context.Background()
			if err := h.Login(ctx); err != nil {
				t.Fatal(err)
			}
			first, _ := e.store.GetGrant(ctx, h.Resource())
			ts, _ := h.TokenSource(ctx)
			clk.advance(tc.before)
			if tok, err := ts.Token(); err != nil || tok.AccessToken != first.AccessToken {
				t.Fatalf("at %v of a %d s token: %v, refreshed %v; want the first token", tc.before, tc.expiresIn, err, tok != nil && tok.AccessToken != first.AccessToken)
			}
			clk.advance(tc.after - tc.before)
			if tok, err := ts.Token(); err != nil || tok.AccessToken == first.AccessToken {
				t.Fatalf("at %v of a %d s token: %v, refreshed %v; want a new token", tc.after, tc.expiresIn, err, tok != nil && tok.AccessToken != first.AccessToken)
			}
		})
	}
}
