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

// signedInRotating signs in with an authorization server that rotates
// refresh tokens, and returns the handler, its clock and the first grant.
func signedInRotating(t *testing.T) (*env, *Handler, *fakeClock, *Grant) {
	t.Helper()
	e := newEnv(t)
	e.as.rotate = true
	clk := &fakeClock{t: time.Now()}
	h := e.handler(t, func(c *Config) { c.Clock = clk })
	if err := h.Login(context.Background()); err != nil {
		t.Fatal(err)
	}
	first, _ := e.store.GetGrant(context.Background(), h.Resource())
	return e, h, clk, first
}

// A refresh whose caller gives up once the request is out still reads
// the answer and stores it: the server rotated the refresh token, and
// keeping the spent one would end the grant at the next refresh.
func TestRefreshOutlivesItsCaller(t *testing.T) {
	e, h, clk, first := signedInRotating(t)
	ctx := context.Background()
	clk.advance(2 * time.Hour)
	e.as.refreshDelay = 300 * time.Millisecond
	cctx, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	defer cancel()
	if _, err := h.refresh(cctx, first); err != nil {
		t.Fatalf("refresh whose caller gave up after 100 ms: %v; want it carried to its end", err)
	}
	stored, _ := e.store.GetGrant(ctx, h.Resource())
	if stored == nil || stored.RefreshToken == first.RefreshToken {
		t.Fatalf("stored refresh token after the rotation: %v; want the new one", stored != nil && stored.RefreshToken == first.RefreshToken)
	}
	e.as.refreshDelay = 0
	clk.advance(2 * time.Hour)
	if _, err := h.refresh(ctx, stored); err != nil {
		t.Fatalf("the next refresh: %v; want it to work with the rotated refresh token", err)
	}
}

// A closed handler (its client ends its session, maybe as its page goes
// away) hands out the token it holds, expired or not, and never starts a
// refresh that the page's end could cut short.
func TestClosedHandlerNeverRefreshes(t *testing.T) {
	e, h, clk, first := signedInRotating(t)
	ctx := context.Background()
	ts, _ := h.TokenSource(ctx)
	clk.advance(2 * time.Hour)
	before := e.as.req.get("/token")
	h.Close()
	tok, err := ts.Token()
	if err != nil || tok.AccessToken != first.AccessToken {
		t.Fatalf("Token() after Close: %v, the held token %v; want the held token", err, tok != nil && tok.AccessToken == first.AccessToken)
	}
	if n := e.as.req.get("/token") - before; n != 0 {
		t.Errorf("token requests after Close = %d; want none", n)
	}
	if g, _ := e.store.GetGrant(ctx, h.Resource()); g == nil || g.RefreshToken != first.RefreshToken {
		t.Errorf("the stored grant changed after Close; want it kept for the next page to refresh")
	}
}
