package oauth

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mcpwasm/mcpwasm/mcperr"
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

func TestSecretTypesPrintRedacted(t *testing.T) {
	g := &Grant{Resource: "https://mcp.example/mcp", AccessToken: "at-SECRET", RefreshToken: "rt-SECRET", ClientSecret: "cs-SECRET"}
	c := &ClientRegistration{ClientID: "id", ClientSecret: "cs-SECRET"}
	p := &PendingFlow{State: "st-SECRET", Verifier: "v-SECRET"}
	cb := &Callback{State: "st-SECRET", Code: "code-SECRET"}
	var out strings.Builder
	for _, v := range []any{g, *g, c, *c, p, *p, cb, *cb} {
		for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%d", "%x", "%q"} {
			fmt.Fprintf(&out, verb+"\n", v)
		}
	}
	var logBuf bytes.Buffer
	slog.New(slog.NewJSONHandler(&logBuf, nil)).Info("x", "grant", g, "client", c, "pending", p, "callback", cb)
	out.WriteString(logBuf.String())
	if strings.Contains(out.String(), "SECRET") {
		t.Errorf("a secret was printed:\n%s", out.String())
	}
	if !strings.Contains(out.String(), "https://mcp.example/mcp") {
		t.Error("redaction hid the non-secret fields too")
	}
}

// blockingCourier ignores its context and never returns until released.
type blockingCourier struct{ release chan struct{} }

func (c blockingCourier) Open(context.Context, string) error { <-c.release; return nil }

// Every wait ends: a courier that ignores ctx ends as a timeout, which
// latches like a dismissal (no new courier call until Login).
func TestStuckCourierTimesOut(t *testing.T) {
	e := newEnv(t)
	bc := blockingCourier{release: make(chan struct{})}
	t.Cleanup(func() { close(bc.release) })
	h := e.handler(t, func(c *Config) { c.Courier = bc; c.AuthTimeout = 200 * time.Millisecond })
	start := time.Now()
	err := h.Login(context.Background())
	if mcperr.CodeOf(err, "") != mcperr.Timeout || time.Since(start) > 5*time.Second {
		t.Fatalf("Login with a stuck courier: %v after %v; want timeout", err, time.Since(start))
	}
	req, resp := unauthorized401(e.rs.url(), "")
	if err := h.Authorize(context.Background(), req, resp); !errors.Is(err, ErrDeclined) {
		t.Errorf("Authorize after the timeout: %v; want ErrDeclined (latched)", err)
	}
	if h.State() != StateDeclined {
		t.Errorf("state = %q; want declined", h.State())
	}
}

// Discovery against a server that never answers ends at AuthTimeout as a
// failure (not a decline: the user was never asked), so the next 401 may
// try again.
func TestHangingDiscoveryTimesOut(t *testing.T) {
	e := newEnv(t)
	hang := make(chan struct{})
	inner := e.as.srv.Config.Handler
	e.as.srv.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/.well-known/") {
			select {
			case <-hang:
			case <-r.Context().Done():
				return
			}
		}
		inner.ServeHTTP(w, r)
	})
	h := e.handler(t, func(c *Config) {
		c.AuthTimeout = 200 * time.Millisecond
		c.HTTPClient = &http.Client{Transport: http.DefaultTransport} // no client timeout: only ctx ends it
	})
	req, resp := unauthorized401(e.rs.url(), "")
	err := h.Authorize(context.Background(), req, resp)
	if mcperr.CodeOf(err, "") != mcperr.Timeout || errors.Is(err, ErrDeclined) {
		t.Fatalf("Authorize with hanging discovery: %v; want a timeout that is not a decline", err)
	}
	if h.State() != StateFailed {
		t.Errorf("state = %q; want failed", h.State())
	}
	close(hang)
	h.cfg.AuthTimeout = 10 * time.Second
	req, resp = unauthorized401(e.rs.url(), "")
	if err := h.Authorize(context.Background(), req, resp); err != nil {
		t.Errorf("next attempt: %v; want a completed flow", err)
	}
}

// A public client's registration is reused whatever
// client_secret_expires_at says (here: in the past): no registration leak.
func TestPublicClientRegistrationReusedDespiteSecretExpiry(t *testing.T) {
	e := newEnv(t)
	e.as.regResp = func(m map[string]any) { m["client_secret_expires_at"] = 1 }
	ctx := context.Background()
	for i := 0; i < 3; i++ {
		h := e.handler(t, nil)
		if err := h.Login(ctx); err != nil {
			t.Fatalf("Login %d: %v", i, err)
		}
	}
	if got := e.as.req.get("/register"); got != 1 {
		t.Errorf("registrations = %d; want 1", got)
	}
}
