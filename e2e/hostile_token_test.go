package e2e

import (
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"unicode"

	"github.com/mcpwasm/mcpwasm/demo/authserver"
	"github.com/mcpwasm/mcpwasm/internal/devserver"
	"github.com/mcpwasm/mcpwasm/internal/hostile"
)

// xssPayload is markup that, if any page inserted it as HTML, would set
// the traps of the page and of its popup.
const xssPayload = `<img src=x onerror="window.opener&&(window.opener.__pwned=1);window.__pwned=1">`

// tamperToken rewrites the demo AS's token responses.
func tamperToken(edit func(status int, header http.Header, body []byte) (int, []byte)) authTamper {
	return authTamper{AS: func(_ *hostileAuthEnv, h http.Handler) http.Handler {
		return hostile.Tamper(h, authserver.TokenPath, edit)
	}}
}

func editToken(fn func(m map[string]any)) authTamper { return tamperToken(hostile.EditJSON(fn)) }

// sanitised fails when a message a page shows holds control characters or
// is unbounded.
func sanitised(t *testing.T, msg string) {
	t.Helper()
	if strings.IndexFunc(msg, func(r rune) bool { return unicode.IsControl(r) || unicode.Is(unicode.Bidi_Control, r) }) >= 0 {
		t.Errorf("the message holds control characters: %q", msg)
	}
	if len(msg) > 1000 {
		t.Errorf("the message is %d bytes long; want it bounded", len(msg))
	}
}

// TestHostileToken: the sign-in is approved at once (AutoApprove) and the
// token endpoint's answer is hostile. authorize() rejects token_failed
// after one token request; no grant is stored, the bad token is never sent
// anywhere, no script runs, the popup is closed.
func TestHostileToken(t *testing.T) {
	for _, c := range []struct {
		name   string
		tamper authTamper
		bad    string // the token that must never be sent, if any
		msg    string
	}{
		{name: "token response without access_token → token_failed",
			tamper: editToken(func(m map[string]any) { delete(m, "access_token") }), msg: "access_token"},
		{name: "access_token a number → token_failed",
			tamper: editToken(func(m map[string]any) { m["access_token"] = 98765432123456789 }), bad: "98765432123456789", msg: "access_token"},
		{name: "access_token with CR LF (header injection) → token_failed",
			tamper: editToken(func(m map[string]any) { m["access_token"] = "hostile-crlf\r\nX-Injected: 1" }), bad: "hostile-crlf", msg: "access_token"},
		{name: "access_token non-ASCII → token_failed",
			tamper: editToken(func(m map[string]any) { m["access_token"] = "hostile-utf8-€✓" }), bad: "hostile-utf8", msg: "access_token"},
		{name: "token_type mac → token_failed",
			tamper: editToken(func(m map[string]any) { m["token_type"] = "mac" }), bad: authserver.AccessTokenPrefix, msg: "token_type"},
		{name: "token_type missing → token_failed",
			tamper: editToken(func(m map[string]any) { delete(m, "token_type") }), bad: authserver.AccessTokenPrefix, msg: "token_type"},
		{name: "expires_in negative → token_failed",
			tamper: editToken(func(m map[string]any) { m["expires_in"] = -3600 }), bad: authserver.AccessTokenPrefix, msg: "expires_in"},
		{name: "expires_in 1e300 → token_failed",
			tamper: editToken(func(m map[string]any) { m["expires_in"] = 1e300 }), bad: authserver.AccessTokenPrefix, msg: "expires_in"},
		{name: `expires_in "soon" → token_failed`,
			tamper: editToken(func(m map[string]any) { m["expires_in"] = "soon" }), bad: authserver.AccessTokenPrefix, msg: "expires_in"},
		{name: "access_token of 100 kB → token_failed",
			tamper: editToken(func(m map[string]any) { m["access_token"] = "hostile-big-" + strings.Repeat("A", 100<<10) }), bad: "hostile-big-", msg: "longer"},
		{name: "token error whose error_description holds markup → token_failed, shown as text",
			tamper: tamperToken(func(int, http.Header, []byte) (int, []byte) {
				return http.StatusBadRequest, []byte(mustJSON(map[string]string{"error": "invalid_grant", "error_description": xssPayload}))
			}), msg: "invalid_grant"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			e := newHostileAuthEnv(t, devserver.AuthConfig{AutoApprove: true}, c.tamper)
			r := e.login(`{ authTimeoutMs: 15000 }`)
			wantErr(t, r, "token_failed", c.msg)
			if r.Error != nil {
				sanitised(t, r.Error.Message)
			}
			if n := e.snapshot()["token"]; n != 1 {
				t.Errorf("%d token requests; want exactly 1", n)
			}
			// Nothing held: a later connect needs a sign-in and sends no token.
			var next string
			e.eval(`c.connect().then(() => "ok", (e) => e.code)`, &next)
			if next != "auth_required" {
				t.Errorf("connect() after the failed sign-in = %q; want auth_required", next)
			}
			if c.bad != "" {
				for name, rec := range map[string]*hostile.Recorder{"MCP": e.MCP, "page": e.Page, "attacker": e.Attacker.Recorder} {
					if rec.Contains(c.bad) {
						t.Errorf("the %s origin received the rejected token", name)
					}
				}
			}
			for _, q := range e.MCP.Requests() {
				if q.Header.Get("X-Injected") != "" || q.Header.Get("Authorization") != "" {
					t.Errorf("the MCP server got Authorization %q X-Injected %q", q.Header.Get("Authorization"), q.Header.Get("X-Injected"))
				}
			}
			e.noGrant(false)
			e.noScript()
			e.popupsClosed()
			e.attackerSawNothing()
			e.stillUsable(e.Good)
		})
	}
}

// TestHostileTokenEndpointNeverAnswers: the first token request is held
// open forever; with authTimeoutMs 3000 authorize() rejects timeout, and
// the next authorize() signs in.
func TestHostileTokenEndpointNeverAnswers(t *testing.T) {
	t.Run("token endpoint never answers, authTimeoutMs 3000 → timeout, the next authorize() works", func(t *testing.T) {
		t.Parallel()
		done := make(chan struct{})
		var held atomic.Bool
		e := newHostileAuthEnv(t, devserver.AuthConfig{AutoApprove: true}, authTamper{AS: func(_ *hostileAuthEnv, h http.Handler) http.Handler {
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path == authserver.TokenPath && r.Method == http.MethodPost && held.CompareAndSwap(false, true) {
					hostile.Hang(r, done)
					return
				}
				h.ServeHTTP(w, r)
			})
		}})
		t.Cleanup(func() { close(done) })
		r := e.login(`{ authTimeoutMs: 3000 }`)
		wantErr(t, r, "timeout")
		e.popupsClosed()
		e.noGrant(false)
		popups := e.expectPopup()
		e.gesture(`void (result = null, c.authorize().then(() => { result = { ok: true, state: c.state }; },
			(e) => { result = { error: { code: e.code, message: e.message + " — " + (e.detail ?? "") }, state: c.state }; }))`)
		<-popups
		if r := e.awaitLogin(); !r.OK || r.State != "connected" {
			t.Errorf("the next authorize() = %+v (error %+v); want connected", r, r.Error)
		}
		if n := e.snapshot()["token"]; n != 2 {
			t.Errorf("%d token requests; want 2 (the held one and the next sign-in's)", n)
		}
		e.noScript()
		e.stillUsable(e.Good)
	})
}
