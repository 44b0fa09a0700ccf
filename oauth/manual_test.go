package oauth

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/mcpwasm/mcpwasm/mcperr"
)

// An authorization server that publishes no metadata, behind an MCP server
// that publishes none either, is signed in to at the endpoints given by
// hand, with nothing fetched but them, and a sign-out revokes there.
func TestManualEndpointsSignInWithoutMetadata(t *testing.T) {
	e := newEnv(t)
	e.as.metaPath = "/not-published"
	e.as.clientID = "pre-registered"
	e.rs.noPRM = true
	h := e.handler(t, func(c *Config) {
		c.ClientID = "pre-registered"
		c.Endpoints = &Endpoints{
			Authorization: e.as.srv.URL + "/authorize",
			Token:         e.as.srv.URL + "/token",
			Revocation:    e.as.srv.URL + "/revoke",
		}
	})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := connect(ctx, e.rs.url(), h); err != nil {
		t.Fatalf("the sign-in at the endpoints given by hand failed: %v", err)
	}
	for _, c := range []struct {
		on   *counter
		path string
		want int
	}{
		{&e.as.req, "/authorize", 0}, // the courier's fetch is not counted as a client request
		{&e.as.req, "/token", 1},
		{&e.as.req, "/register", 0},
		{&e.as.req, "/.well-known/oauth-authorization-server", 0},
		{&e.as.req, "/.well-known/openid-configuration", 0},
		{&e.rs.req, "/.well-known/oauth-protected-resource/mcp", 0},
		{&e.rs.req, "/.well-known/oauth-protected-resource", 0},
		{&e.rs.req, "/.well-known/oauth-authorization-server", 0},
	} {
		if c.path == "/authorize" {
			continue
		}
		if got := c.on.get(c.path); got != c.want {
			t.Errorf("%s was requested %d times, want %d", c.path, got, c.want)
		}
	}
	if got := e.as.lastAuthQuery.Get("client_id"); got != "pre-registered" {
		t.Errorf("the authorization request's client_id is %q, want the one given", got)
	}
	if got := e.as.lastAuthQuery.Get("code_challenge_method"); got != "S256" {
		t.Errorf("the authorization request's code_challenge_method is %q, want S256", got)
	}
	if err := h.Logout(ctx); err != nil {
		t.Fatalf("Logout: %v", err)
	}
	if got := e.as.req.get("/revoke"); got == 0 {
		t.Error("a sign-out did not revoke at the revocation endpoint given by hand")
	}
}

// The policy is asked about the origin of every endpoint given by hand
// before any request reaches one.
func TestManualEndpointsAskThePolicy(t *testing.T) {
	e := newEnv(t)
	e.as.clientID = "pre-registered"
	e.rs.noPRM = true
	var asked []string
	refusal := &Error{Code: mcperr.Policy, Msg: "oauth: not on this page's list"}
	h := e.handler(t, func(c *Config) {
		c.ClientID = "pre-registered"
		c.Endpoints = &Endpoints{Authorization: e.as.srv.URL + "/authorize", Token: "http://localhost:1/token"}
		c.TrustIssuer = func(issuer string) error {
			asked = append(asked, issuer)
			if strings.Contains(issuer, "localhost") {
				return refusal
			}
			return nil
		}
	})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	err := connect(ctx, e.rs.url(), h)
	if !errors.Is(err, refusal) && !strings.Contains(errString(err), refusal.Msg) {
		t.Fatalf("the sign-in's error is %v, want the policy's refusal of the token endpoint's origin", err)
	}
	// Each sign-in attempt asks about both origins, in the endpoints' order.
	if want := []string{e.as.srv.URL, "http://localhost:1"}; len(asked) < 2 || strings.Join(asked[:2], " ") != strings.Join(want, " ") {
		t.Errorf("the policy was asked about %q, want %q first", asked, want)
	}
	if n := e.courier.calls.Load(); n != 0 {
		t.Errorf("the sign-in window opened %d times after the policy refused", n)
	}
	if n := e.as.req.total(); n != 0 {
		t.Errorf("the authorization server got %d requests after the policy refused", n)
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// A server whose metadata is missing fails the sign-in with an error that
// names the options that configure it by hand.
func TestMissingMetadataNamesTheManualOptions(t *testing.T) {
	for _, c := range []struct {
		name  string
		setup func(e *env)
		want  string
	}{
		{"no metadata anywhere", func(e *env) { e.rs.noPRM = true }, "2025-03-26 default endpoints on its origin failed"},
		{"resource metadata naming an issuer without metadata", func(e *env) { e.as.metaPath = "/not-published" }, "no authorization server metadata found for issuer"},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t)
			c.setup(e)
			h := e.handler(t, nil)
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			err := connect(ctx, e.rs.url(), h)
			if err == nil {
				t.Fatal("the sign-in succeeded without any authorization server metadata")
			}
			for _, w := range []string{c.want, "authorizationEndpoint, tokenEndpoint and clientId", "Config.Endpoints"} {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("the error %q does not say %q", err, w)
				}
			}
		})
	}
}

func TestEndpointsConfigChecked(t *testing.T) {
	e := newEnv(t)
	good := func() *Endpoints {
		return &Endpoints{Authorization: "https://as.example/authorize", Token: "https://as.example/token"}
	}
	for _, c := range []struct {
		name string
		edit func(*Config)
		want string // "" when New takes it
	}{
		{"the whole set", func(c *Config) { c.ClientID = "c"; c.Endpoints = good() }, ""},
		{"with revocation", func(c *Config) {
			c.ClientID = "c"
			c.Endpoints = good()
			c.Endpoints.Revocation = "http://127.0.0.1:8/revoke"
		}, ""},
		{"no client ID", func(c *Config) { c.Endpoints = good() }, ManualSetMessage},
		{"no token endpoint", func(c *Config) { c.ClientID = "c"; c.Endpoints = &Endpoints{Authorization: "https://as.example/a"} }, ManualSetMessage},
		{"no authorization endpoint", func(c *Config) { c.ClientID = "c"; c.Endpoints = &Endpoints{Token: "https://as.example/t"} }, ManualSetMessage},
		{"plain http", func(c *Config) {
			c.ClientID = "c"
			c.Endpoints = good()
			c.Endpoints.Token = "http://as.example/token"
		}, `Config.Endpoints.Token "http://as.example/token" must use https`},
		{"relative", func(c *Config) {
			c.ClientID = "c"
			c.Endpoints = good()
			c.Endpoints.Authorization = "/authorize"
		}, `Config.Endpoints.Authorization "/authorize" is not an absolute URL`},
		{"revocation with user info", func(c *Config) {
			c.ClientID = "c"
			c.Endpoints = good()
			c.Endpoints.Revocation = "https://u:p@as.example/revoke"
		}, "Config.Endpoints.Revocation"},
		{"an empty fragment", func(c *Config) {
			c.ClientID = "c"
			c.Endpoints = good()
			c.Endpoints.Token = "https://as.example/token#"
		}, `Config.Endpoints.Token "https://as.example/token#" must not have a fragment`},
		{"with a client ID metadata document", func(c *Config) {
			c.ClientID = "c"
			c.Endpoints = good()
			c.ClientMetadataURL = "https://app.example/client.json"
		}, "Config.ClientMetadataURL needs the authorization server's metadata"},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg := e.config()
			c.edit(&cfg)
			_, err := New(cfg)
			switch {
			case c.want == "" && err != nil:
				t.Fatalf("New refused it: %v", err)
			case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
				t.Fatalf("New's error is %v, want one saying %q", err, c.want)
			case c.want != "" && mcperr.CodeOf(err, "") != mcperr.InvalidArgument:
				t.Fatalf("New's error %v is not invalid_argument", err)
			}
			if err != nil && strings.Contains(err.Error(), "u:p@") {
				t.Errorf("the error repeats the user info: %v", err)
			}
		})
	}
}
