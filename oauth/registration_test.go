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
