package oauth

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/mcpwasm/mcpwasm/mcperr"
)

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

// TestApplicationType (SEP-837): every dynamic registration says what
// kind of client registers: what the host says, otherwise "native" for an
// http loopback or private-use-scheme redirect URI (a page on http
// loopback during development too) and "web" for an https one.
func TestApplicationType(t *testing.T) {
	tests := []struct {
		name, appType, redirect, want string
	}{
		{"loopback redirect", "", "http://127.0.0.1:9/callback", "native"},
		{"private-use scheme", "", "com.example.app:/oauth/callback", "native"},
		{"https redirect", "", "https://app.example/callback", "web"},
		{"https loopback redirect", "", "https://localhost:8443/oauth/callback.html", "web"},
		{"browser page", "web", "https://app.example/oauth/callback.html", "web"},
		{"native, said so", "native", "https://app.example/callback", "native"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			h := e.handler(t, func(c *Config) { c.ApplicationType, c.RedirectURL = tt.appType, tt.redirect })
			if err := h.Login(context.Background()); err != nil {
				t.Fatalf("Login: %v", err)
			}
			e.as.mu.Lock()
			got := e.as.lastReg["application_type"]
			e.as.mu.Unlock()
			if got != tt.want {
				t.Errorf("application_type = %v; want %q", got, tt.want)
			}
		})
	}
	e := newEnv(t)
	_, err := New(func() Config { c := e.config(); c.ApplicationType = "desktop"; return c }())
	if mcperr.CodeOf(err, "") != mcperr.InvalidArgument {
		t.Errorf("New with application type \"desktop\" = %v; want invalid_argument", err)
	}
}

// TestRegistrationResponseShapes: a registration response is read for what
// this client uses (client_id, client_secret, token_endpoint_auth_method,
// client_secret_expires_at); what servers echo or add in other shapes does
// not fail the sign-in, and a credential of the wrong type does.
func TestRegistrationResponseShapes(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(m map[string]any)
		want mcperr.Code // "" for a sign-in
	}{
		{"redirect_uris as one string (IBM Verify Access)", func(m map[string]any) { m["redirect_uris"] = "http://127.0.0.1:9/callback" }, ""},
		{"jwks as an object (RFC 7591 §2)", func(m map[string]any) { m["jwks"] = map[string]any{"keys": []any{}} }, ""},
		{"client_id_issued_at as a float", func(m map[string]any) { m["client_id_issued_at"] = 1.7e9 }, ""},
		{"client_id_issued_at as a string", func(m map[string]any) { m["client_id_issued_at"] = "1700000000" }, ""},
		{"client_secret_expires_at 0 as a string", func(m map[string]any) { m["client_secret_expires_at"] = "0" }, ""},
		{"registration_access_token and extensions", func(m map[string]any) {
			m["registration_access_token"] = "rat"
			m["registration_client_uri"] = "https://as.example/register/x"
			m["logo_uri"] = "javascript:alert(1)" // never used, never shown
			m["backchannel_logout_session_required"] = true
		}, ""},
		{"client_id a number", func(m map[string]any) { m["client_id"] = 42 }, mcperr.RegistrationFailed},
		{"client_id empty", func(m map[string]any) { m["client_id"] = "" }, mcperr.RegistrationFailed},
		{"client_id with a control character", func(m map[string]any) { m["client_id"] = "a\nb" }, mcperr.RegistrationFailed},
		{"token_endpoint_auth_method a list", func(m map[string]any) { m["token_endpoint_auth_method"] = []string{"none"} }, mcperr.RegistrationFailed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			e.as.regResp = tc.edit
			err := e.handler(t, nil).Login(context.Background())
			if got := mcperr.CodeOf(err, ""); got != tc.want {
				t.Fatalf("Login: %v (code %q); want code %q", err, got, tc.want)
			}
		})
	}
}

// TestRegistrationScope (RFC 7591 §2): a registration asks for the scopes
// the sign-in will request, and those of the resource's metadata the
// authorization server lists; a later sign-in that needs a scope outside
// them registers once more, asking for both, and then reuses that.
func TestRegistrationScope(t *testing.T) {
	e := newEnv(t)
	asked := e.registeredScopes()
	login := func(scopes ...string) { t.Helper(); e.loginWith(t, scopes...) }
	login("read")
	login("read")
	login("read", "write")
	login("write")
	want := []string{"read", "read write"}
	if !slices.Equal(*asked, want) {
		t.Errorf("registrations asked for scopes %q; want %q", *asked, want)
	}
}

// TestRegistrationWithoutScope: a server that refuses the client's
// metadata when it carries a scope is asked once more without one, and
// the registration is then reused (no registration on every sign-in).
func TestRegistrationWithoutScope(t *testing.T) {
	e := newEnv(t)
	e.as.regRefuse = func(m map[string]any) string {
		if _, ok := m["scope"]; ok {
			return "invalid_client_metadata"
		}
		return ""
	}
	for i := range 3 {
		h := e.handler(t, nil)
		if err := h.Login(context.Background()); err != nil {
			t.Fatalf("Login %d: %v", i, err)
		}
	}
	if got := e.as.req.get("/register"); got != 2 {
		t.Errorf("registration requests = %d; want 2 (with a scope, then without)", got)
	}
}

// TestRegistrationRefusalNamesTheFix: a refused registration says which
// field of the client's metadata the server refused and what to change.
func TestRegistrationRefusalNamesTheFix(t *testing.T) {
	for _, tc := range []struct{ code, want string }{
		{"invalid_redirect_uri", `it refused the redirect URI http://127.0.0.1`},
		{"invalid_client_metadata", `it refused this client's metadata (application_type "native"`},
	} {
		t.Run(tc.code, func(t *testing.T) {
			e := newEnv(t)
			e.as.regRefuse = func(map[string]any) string { return tc.code }
			err := e.handler(t, nil).Login(context.Background())
			if mcperr.CodeOf(err, "") != mcperr.RegistrationFailed {
				t.Fatalf("Login = %v; want registration_failed", err)
			}
			for _, w := range []string{tc.want, "pass its clientId", `error "` + tc.code + `"`} {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("Login = %q; want it to say %q", err, w)
				}
			}
		})
	}
}

// TestRegistrationScopesListedByTheServer: a first registration asks for
// the resource's other scopes only where the authorization server lists
// them; a resource that names a new scope on every sign-in costs new
// registrations only until the registration would ask for more than
// maxRegisteredScopes.
func TestRegistrationScopesListedByTheServer(t *testing.T) {
	e := newEnv(t)
	e.rs.prm = func(m map[string]any) { m["scopes_supported"] = []string{"read", "write", "unlisted"} }
	asked := e.registeredScopes()
	login := func(scopes ...string) { t.Helper(); e.loginWith(t, scopes...) }
	login("read")
	if want := []string{"read write"}; !slices.Equal(*asked, want) {
		t.Fatalf("the first registration asked for %q; want %q", *asked, want)
	}
	for i := range 2 * maxRegisteredScopes {
		login("read", fmt.Sprintf("new%d", i))
	}
	if got, want := len(*asked), maxRegisteredScopes-1; got != want {
		t.Errorf("registrations = %d; want %d (until one would ask for more than %d scopes)", got, want, maxRegisteredScopes)
	}
}

// TestRegistrationRedirectRefusalNotRetried: a refused redirect URI is
// not a scope's fault: no second registration request.
func TestRegistrationRedirectRefusalNotRetried(t *testing.T) {
	e := newEnv(t)
	e.as.regRefuse = func(map[string]any) string { return "invalid_redirect_uri" }
	if err := e.handler(t, func(c *Config) { c.Scopes = []string{"read"} }).Login(context.Background()); err == nil {
		t.Fatal("Login succeeded; want registration_failed")
	}
	if got := e.as.req.get("/register"); got != 1 {
		t.Errorf("registration requests = %d; want 1", got)
	}
}

// registeredScopes records the scope each registration request asks for.
func (e *env) registeredScopes() *[]string {
	var asked []string
	e.as.regRefuse = func(m map[string]any) string {
		s, _ := m["scope"].(string)
		asked = append(asked, s)
		return ""
	}
	return &asked
}

// loginWith signs in with a handler of e configured with scopes.
func (e *env) loginWith(t *testing.T, scopes ...string) {
	t.Helper()
	if err := e.handler(t, func(c *Config) { c.Scopes = scopes }).Login(context.Background()); err != nil {
		t.Fatalf("Login with %v: %v", scopes, err)
	}
}
