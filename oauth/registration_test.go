package oauth

import (
	"context"
	"testing"
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
