package xengine

import (
	"io"
	"net/http"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/mcpwasm/mcpwasm/demo/authserver"
	"github.com/mcpwasm/mcpwasm/devkit/devserver"
	"github.com/mcpwasm/mcpwasm/devkit/hostile"
)

// tamperToken rewrites the demo AS's token responses.
func tamperToken(edit func(status int, header http.Header, body []byte) (int, []byte)) authTamper {
	return authTamper{AS: func(_ *hostileWorld, hd http.Handler) http.Handler {
		return hostile.Tamper(hd, authserver.TokenPath, edit)
	}}
}

func editToken(fn func(m map[string]any)) authTamper { return tamperToken(hostile.EditJSON(fn)) }

// TestHostileToken: the sign-in is approved at once (AutoApprove) and the
// token endpoint's answer is hostile. authorize() rejects token_failed
// after one token request; no grant is stored, the bad token is never sent
// anywhere, no script runs, the popup is closed.
func TestHostileToken(t *testing.T) {
	goCoreOnly(t)
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
		{name: "access_token with a trailing space (HTTP would drop it) → token_failed",
			tamper: editToken(func(m map[string]any) {
				if at, ok := m["access_token"].(string); ok {
					m["access_token"] = at + " "
				}
			}), bad: authserver.AccessTokenPrefix, msg: "access_token"},
		{name: "access_token with DEL → token_failed",
			tamper: editToken(func(m map[string]any) { m["access_token"] = "hostile-del\x7f" }), bad: "hostile-del", msg: "access_token"},
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
			h := newHostileWorld(t, devserver.AuthConfig{AutoApprove: true}, c.tamper)
			r := h.login(`{ authTimeoutMs: 15000 }`)
			wantErr(t, r, "token_failed", c.msg)
			if r.Error != nil {
				sanitised(t, r.Error.Message)
			}
			if n := h.snapshot()["token"]; n != 1 {
				t.Errorf("%d token requests; want exactly 1", n)
			}
			// Nothing held: a later connect needs a sign-in and sends no token.
			var next string
			h.eval(`c.connect().then(() => "ok", (e) => e.code)`, &next)
			if next != "auth_required" {
				t.Errorf("connect() after the failed sign-in = %q; want auth_required", next)
			}
			if c.bad != "" {
				for name, rec := range map[string]*hostile.Recorder{"MCP": h.MCP, "page": h.Page, "attacker": h.Attacker.Recorder} {
					if rec.Contains(c.bad) {
						t.Errorf("the %s origin received the rejected token", name)
					}
				}
			}
			for _, q := range h.MCP.Requests() {
				if q.Header.Get("X-Injected") != "" || q.Header.Get("Authorization") != "" {
					t.Errorf("the MCP server got Authorization %q X-Injected %q", q.Header.Get("Authorization"), q.Header.Get("X-Injected"))
				}
			}
			h.noGrant(false)
			h.noScript()
			h.popupsClosed()
			h.attackerSawNothing()
			h.stillUsable()
		})
	}
}

// TestHostileTokenEndpointNeverAnswers: the first token request is held
// open forever; with authTimeoutMs 12000 authorize() rejects timeout, and
// the next authorize() from a click signs in.
func TestHostileTokenEndpointNeverAnswers(t *testing.T) {
	eitherRuntime(t)
	done := make(chan struct{})
	var held atomic.Bool
	h := newHostileWorld(t, devserver.AuthConfig{AutoApprove: true}, authTamper{AS: func(_ *hostileWorld, hd http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == authserver.TokenPath && r.Method == http.MethodPost && held.CompareAndSwap(false, true) {
				hostile.Hang(r, done)
				return
			}
			hd.ServeHTTP(w, r)
		})
	}})
	t.Cleanup(func() { close(done) })
	// Long enough for the popup to reach the token request on 2 busy cores.
	wantErr(t, h.login(`{ authTimeoutMs: 12000 }`), "timeout")
	h.popupsClosed()
	h.noGrant(false)
	h.startAuthorize()
	if r := h.awaitLogin(); !r.OK || r.State != "connected" {
		t.Errorf("the next authorize() = %s; want connected", r)
	}
	if n := h.snapshot()["token"]; n != 2 {
		t.Errorf("%d token requests; want 2 (the held one and the next sign-in's)", n)
	}
	h.noScript()
	h.stillUsable()
}

// cfPrefix makes the demo authorization server's tokens look like those of
// Cloudflare's workers-oauth-provider (user:grant:secret).
const cfPrefix = "alice:6YKn06W2SZ9t274e:"

// colonTokens rewrites the demo servers so that they speak in
// user:grant:secret tokens: the token endpoint's answers get cfPrefix on
// both tokens, a lower-case "bearer", an empty scope and RFC 8707's
// resource, as workers-oauth-provider sends them; the prefix comes off
// again where a token comes back (refresh, revocation, the MCP server's
// Authorization header), so the demo servers see their own tokens.
func colonTokens() authTamper {
	unprefix := func(s string) string { return strings.TrimPrefix(s, cfPrefix) }
	return authTamper{
		AS: func(h *hostileWorld, hd http.Handler) http.Handler {
			hd = hostile.Tamper(hd, authserver.TokenPath, hostile.EditJSON(func(m map[string]any) {
				if at, ok := m["access_token"].(string); ok {
					m["access_token"] = cfPrefix + at
					m["token_type"] = "bearer"
					m["scope"] = ""
					m["resource"] = h.MCPURL
				}
				if rt, ok := m["refresh_token"].(string); ok {
					m["refresh_token"] = cfPrefix + rt
				}
			}))
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.Method == http.MethodPost && (r.URL.Path == authserver.TokenPath || r.URL.Path == authserver.RevokePath) {
					if err := r.ParseForm(); err == nil {
						for _, k := range []string{"refresh_token", "token"} {
							if v := r.PostForm.Get(k); v != "" {
								r.PostForm.Set(k, unprefix(v))
							}
						}
						body := r.PostForm.Encode()
						r.Body = io.NopCloser(strings.NewReader(body))
						r.ContentLength = int64(len(body))
						r.Form, r.PostForm = nil, nil
					}
				}
				hd.ServeHTTP(w, r)
			})
		},
		MCP: func(_ *hostileWorld, hd http.Handler) http.Handler {
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if a := r.Header.Get("Authorization"); strings.HasPrefix(a, "Bearer "+cfPrefix) {
					r.Header.Set("Authorization", "Bearer "+unprefix(strings.TrimPrefix(a, "Bearer ")))
				}
				hd.ServeHTTP(w, r)
			})
		},
	}
}

// TestHostileTokenShapesThatSignIn: token responses that deployed
// authorization servers send, and that a reading of RFC 6750 stricter
// than RFC 6749 would refuse, sign in end to end: the tokens of
// workers-oauth-provider (user:grant:secret, printable ASCII that RFC 6749
// Appendix A.12 allows) reach the MCP server unchanged, tools are listed,
// and logout revokes them; an expires_in past any sane lifetime reads as
// "unknown", not as hostile.
func TestHostileTokenShapesThatSignIn(t *testing.T) {
	for _, c := range []struct {
		name   string
		tamper authTamper
		prefix string // what the MCP server's Authorization header starts with
	}{
		{name: "user:grant:secret tokens, token_type bearer, scope \"\", resource → connected, tools listed, logout revokes",
			tamper: colonTokens(), prefix: "Bearer " + cfPrefix},
		{name: "expires_in 1e300 → connected (lifetime unknown)",
			tamper: editToken(func(m map[string]any) { m["expires_in"] = 1e300 }), prefix: "Bearer " + authserver.AccessTokenPrefix},
		{name: `expires_in "3600.0" → connected`,
			tamper: editToken(func(m map[string]any) { m["expires_in"] = "3600.0" }), prefix: "Bearer " + authserver.AccessTokenPrefix},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			h := newHostileWorld(t, devserver.AuthConfig{AutoApprove: true}, c.tamper)
			if r := h.login(`{ authTimeoutMs: 15000 }`); !r.OK || r.State != "connected" {
				t.Fatalf("authorize() = %s; want connected", r)
			}
			var got struct {
				Tools []string `json:"tools"`
				Error *jsErr   `json:"error"`
				State string   `json:"state"`
			}
			h.eval(`(async () => {
				try {
					const tools = (await c.listTools()).map((t) => t.name);
					await c.logout();
					return { tools, state: c.state };
				} catch (e) { return { error: { code: e.code, message: e.message }, state: c.state }; }
			})()`, &got)
			if got.Error != nil || !slices.Contains(got.Tools, "add") {
				t.Errorf("listTools() then logout(): tools %v, error %+v; want the demo tools and no error", got.Tools, got.Error)
			}
			if got.State != "needs_auth" {
				t.Errorf("state after logout() = %q; want needs_auth", got.State)
			}
			sent := 0
			for _, q := range h.MCP.Requests() {
				if a := q.Header.Get("Authorization"); a != "" {
					sent++
					if !strings.HasPrefix(a, c.prefix) {
						t.Errorf("the MCP server got Authorization %.40q…; want it to start %q", a, c.prefix)
					}
				}
			}
			if sent == 0 {
				t.Error("no MCP request carried the token")
			}
			// The first revocation (the refresh token) revokes the whole
			// grant at the demo server; the access token's finds nothing.
			revoked := 0
			for _, ev := range h.AS.Events() {
				if ev.Kind == authserver.EventRevoke && ev.Detail == "revoked" {
					revoked++
				}
			}
			if revoked == 0 {
				t.Error("logout() revoked nothing at the authorization server; want the grant revoked (the token the server issued, without the prefix)")
			}
			h.noScript()
			h.popupsClosed()
			h.attackerSawNothing()
		})
	}
}
