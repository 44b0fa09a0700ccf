package xengine

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
	return authTamper{AS: func(_ *hostileWorld, hd http.Handler) http.Handler {
		return hostile.Tamper(hd, authserver.RegisterPath, edit)
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
			h := newHostileWorld(t, devserver.AuthConfig{}, c.tamper)
			wantErr(t, h.login(`{ authTimeoutMs: 8000 }`), "registration_failed")
			h.popupsClosed()
			h.popupStayedBlank()
			if n := h.AS.Count("authorize"); n != 0 {
				t.Errorf("%d authorization request(s); want 0", n)
			}
			h.noGrant(false)
			if n := h.storeCounts()["clients"]; n != 0 {
				t.Errorf("a failed registration stored %d client(s); want 0", n)
			}
			h.noScript()
			h.stillUsable()
		})
	}
}

// TestHostileRegistrationSecretForPublicClient: the AS hands a
// client_secret to a client that registered with token_endpoint_auth_method
// "none" (and its response says "none"). The client must stay a public
// client: the sign-in works and the secret goes nowhere, the token
// request included, and IndexedDB does not hold it in plaintext.
func TestHostileRegistrationSecretForPublicClient(t *testing.T) {
	const secret = "reg-secret-hostile-5e8b"
	h := newHostileWorld(t, devserver.AuthConfig{AutoApprove: true}, tamperRegister(hostile.EditJSON(func(m map[string]any) {
		m["client_secret"] = secret
		m["client_secret_expires_at"] = 0
		m["token_endpoint_auth_method"] = "none"
	})))
	if r := h.login(`{}`); !r.OK || r.State != "connected" {
		t.Errorf("authorize() = %s; want connected as a public client", r)
	}
	var tokenReqs int
	for _, q := range h.ASRec.Requests() {
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
	secretsOnlyAt(t, []string{secret}, map[string]*hostile.Recorder{
		"MCP": h.MCP, "page": h.Page, "attacker": h.Attacker.Recorder, "AS": h.ASRec,
	})
	if strings.Contains(h.dumpDB(), secret) {
		t.Errorf("IndexedDB holds the client secret in plaintext")
	}
	h.popupsClosed()
	h.noScript()
	h.stillUsable()
}
