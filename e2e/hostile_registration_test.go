package e2e

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/mcpwasm/mcpwasm/demo/authserver"
	"github.com/mcpwasm/mcpwasm/devkit/devserver"
	"github.com/mcpwasm/mcpwasm/devkit/hostile"
)

// tamperRegister rewrites the AS's dynamic client registration responses.
func tamperRegister(edit func(status int, header http.Header, body []byte) (int, []byte)) authTamper {
	return authTamper{AS: func(_ *hostileAuthEnv, h http.Handler) http.Handler {
		return hostile.Tamper(h, authserver.RegisterPath, edit)
	}}
}

// TestHostileRegistration: dynamic client registration answers badly.
// authorize() rejects registration_failed before the popup goes anywhere,
// and nothing is stored.
func TestHostileRegistration(t *testing.T) {
	for _, c := range []struct {
		name   string
		tamper authTamper
	}{
		{name: "registration response without client_id → registration_failed",
			tamper: tamperRegister(hostile.EditJSON(func(m map[string]any) { delete(m, "client_id") }))},
		{name: "registration answers 500 → registration_failed",
			tamper: tamperRegister(func(int, http.Header, []byte) (int, []byte) {
				return http.StatusInternalServerError, []byte(`{"error":"server_error"}`)
			})},
		{name: "registration answers garbage JSON → registration_failed",
			tamper: tamperRegister(func(status int, _ http.Header, _ []byte) (int, []byte) {
				return status, []byte(`{"client_id": "abc", ]]] <html>`)
			})},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			e := newHostileAuthEnv(t, devserver.AuthConfig{}, c.tamper)
			r := e.login(`{ authTimeoutMs: 8000 }`)
			wantErr(t, r, "registration_failed")
			e.popupsClosed()
			for _, u := range e.popups.URLs() {
				if u != "about:blank" && u != "" {
					t.Errorf("the sign-in window left about:blank for %q", u)
				}
			}
			if n := e.AS.Count("authorize"); n != 0 {
				t.Errorf("%d authorization request(s); want 0", n)
			}
			e.noGrant(false)
			if n := e.storeCounts()["clients"]; n != 0 {
				t.Errorf("a failed registration stored %d client(s); want 0", n)
			}
			e.noScript()
			e.stillUsable(e.Good)
		})
	}
}

// TestHostileRegistrationSecretForPublicClient: the AS hands a
// client_secret to a client that registered with token_endpoint_auth_method
// "none" (and its response says "none"). The client must stay a public
// client: the sign-in works and the secret goes nowhere, the token
// request included.
func TestHostileRegistrationSecretForPublicClient(t *testing.T) {
	t.Run("client_secret handed to a \"none\" client → signs in as a public client, the secret is never sent", func(t *testing.T) {
		t.Parallel()
		const secret = "reg-secret-hostile-5e8b"
		e := newHostileAuthEnv(t, devserver.AuthConfig{AutoApprove: true}, tamperRegister(hostile.EditJSON(func(m map[string]any) {
			m["client_secret"] = secret
			m["client_secret_expires_at"] = 0
			m["token_endpoint_auth_method"] = "none"
		})))
		r := e.login(`{}`)
		if !r.OK || r.State != "connected" {
			t.Errorf("authorize() = %+v; want connected as a public client", r)
		}
		var tokenReqs int
		for _, q := range e.ASRec.Requests() {
			if q.Path != authserver.TokenPath || q.Method != http.MethodPost {
				continue
			}
			tokenReqs++
			form, _ := url.ParseQuery(q.Body)
			if form.Has("client_secret") || strings.Contains(q.Body, secret) || q.Header.Get("Authorization") != "" {
				t.Errorf("the token request carries client credentials (body %q, Authorization %q)", q.Body, q.Header.Get("Authorization"))
			}
		}
		if tokenReqs != 1 {
			t.Errorf("%d token requests; want 1", tokenReqs)
		}
		secretsOnlyAt(t, []string{secret}, nil, map[string]*hostile.Recorder{
			"MCP": e.MCP, "page": e.Page, "attacker": e.Attacker.Recorder, "AS": e.ASRec,
		})
		if strings.Contains(e.dumpDB(), secret) {
			t.Errorf("IndexedDB holds the client secret in plaintext")
		}
		e.popupsClosed()
		e.noScript()
		e.stillUsable(e.Good)
	})
}
