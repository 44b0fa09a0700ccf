package oauth

import (
	"context"
	"testing"

	"github.com/mcpwasm/mcpwasm/mcperr"
)

// onlyIssuer is a TrustIssuer that trusts one issuer and refuses others
// with the code a host policy's refusal has.
func onlyIssuer(trusted string) func(string) error {
	return func(issuer string) error {
		if issuer == trusted {
			return nil
		}
		return mcperr.New(mcperr.Policy, "policy: issuer %s is not trusted", issuer)
	}
}

// TestUntrustedIssuerRefusedBeforeAnyRequest: an issuer the host does not
// trust gets no request at all (no metadata, registration, authorization
// or token request) and no window opens.
func TestUntrustedIssuerRefusedBeforeAnyRequest(t *testing.T) {
	e := newEnv(t)
	h := e.handler(t, func(c *Config) { c.TrustIssuer = onlyIssuer("https://login.corp.example") })
	err := h.Login(context.Background())
	if got := mcperr.CodeOf(err, ""); got != mcperr.Policy {
		t.Fatalf("Login: %v (code %q); want code policy", err, got)
	}
	if n := e.as.req.total(); n != 0 {
		t.Errorf("the untrusted authorization server got %d requests (%v); want none", n, e.as.req.m)
	}
	if n := e.courier.calls.Load(); n != 0 {
		t.Errorf("the courier opened %d windows; want none", n)
	}
}

// TestTrustedIssuerOfSeveral: protected resource metadata naming an
// untrusted issuer first and a trusted one second signs in with the
// trusted one and never asks the other.
func TestTrustedIssuerOfSeveral(t *testing.T) {
	e := newEnv(t)
	other := newFakeAS(t)
	e.rs.prm = func(m map[string]any) { m["authorization_servers"] = []string{other.issuer(), e.as.issuer()} }
	h := e.handler(t, func(c *Config) { c.TrustIssuer = onlyIssuer(e.as.issuer()) })
	if err := h.Login(context.Background()); err != nil {
		t.Fatalf("Login: %v", err)
	}
	if n := other.req.total(); n != 0 {
		t.Errorf("the untrusted authorization server got %d requests; want none", n)
	}
	if g, _ := e.store.GetGrant(context.Background(), h.Resource()); g == nil || g.Issuer != e.as.issuer() {
		t.Errorf("grant %v; want one from %s", g, e.as.issuer())
	}
}

// TestUntrustedIssuerCachedOrStored: metadata cached and a grant stored
// without a policy do not carry a sign-in or a refresh past one.
func TestUntrustedIssuerCachedOrStored(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	if err := e.handler(t, nil).Login(ctx); err != nil {
		t.Fatalf("Login without a policy: %v", err)
	}
	e.as.req.reset()
	h := e.handler(t, func(c *Config) { c.TrustIssuer = onlyIssuer("https://login.corp.example") })
	if err := h.Login(ctx); mcperr.CodeOf(err, "") != mcperr.Policy {
		t.Errorf("Login from cached metadata: %v; want code policy", err)
	}
	g, _ := e.store.GetGrant(ctx, h.Resource())
	if g == nil || g.RefreshToken == "" {
		t.Fatalf("no stored grant with a refresh token: %v", g)
	}
	if _, err := h.refresh(ctx, g); mcperr.CodeOf(err, "") != mcperr.Policy {
		t.Errorf("refresh of a stored grant: %v; want code policy", err)
	}
	if n := e.as.req.total(); n != 0 {
		t.Errorf("the untrusted authorization server got %d requests (%v); want none", n, e.as.req.m)
	}
}

// TestUntrustedStoredGrantIsNotUsed: a grant stored without a policy (or
// by a tab without one: grants are shared by the origin) is taken for none
// by a handler whose host does not trust its issuer: no token source, not
// authorized, and a 401 does not adopt it. A handler trusting the issuer
// uses the same grant.
func TestUntrustedStoredGrantIsNotUsed(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	if err := e.handler(t, nil).Login(ctx); err != nil {
		t.Fatalf("Login without a policy: %v", err)
	}
	h := e.handler(t, func(c *Config) { c.TrustIssuer = onlyIssuer("https://login.corp.example") })
	if ts, err := h.TokenSource(ctx); err != nil || ts != nil {
		t.Errorf("TokenSource = %v, %v; want none (the grant's issuer is not trusted)", ts, err)
	}
	if g, err := h.ReloadGrant(ctx); err != nil || g != nil {
		t.Errorf("ReloadGrant = %v, %v; want none", g, err)
	}
	if s := h.State(); s == StateAuthorized {
		t.Errorf("state %v; want not authorized", s)
	}
	if retry, _ := h.unauthorized(ctx, ""); retry {
		t.Error("a 401 adopted the stored grant of an untrusted issuer")
	}
	trusting := e.handler(t, func(c *Config) { c.TrustIssuer = onlyIssuer(e.as.issuer()) })
	if ts, err := trusting.TokenSource(ctx); err != nil || ts == nil {
		t.Errorf("TokenSource of a handler trusting the issuer = %v, %v; want the stored grant's", ts, err)
	}
}
