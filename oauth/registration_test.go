package oauth

import (
	"context"
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
// kind of client registers: "web" when the host says so (the browser
// module does), otherwise "native" for a loopback or private-use-scheme
// redirect URI and "web" for another https one.
func TestApplicationType(t *testing.T) {
	tests := []struct {
		name, appType, redirect, want string
	}{
		{"loopback redirect", "", "http://127.0.0.1:9/callback", "native"},
		{"private-use scheme", "", "com.example.app:/oauth/callback", "native"},
		{"https redirect", "", "https://app.example/callback", "web"},
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
