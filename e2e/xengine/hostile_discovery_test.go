package xengine

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/mcpwasm/mcpwasm/demo"
	"github.com/mcpwasm/mcpwasm/demo/authserver"
	"github.com/mcpwasm/mcpwasm/devkit/devserver"
	"github.com/mcpwasm/mcpwasm/devkit/hostile"
)

// Paths of the metadata the cases tamper with.
var (
	prmPaths = []string{demo.ProtectedResourceMetadataPath + demo.StreamablePath, demo.ProtectedResourceMetadataPath}
	asmPath  = authserver.MetadataPath
)

// editASM rewrites the authorization server metadata document.
func editASM(fn func(h *hostileWorld, m map[string]any)) func(*hostileWorld, http.Handler) http.Handler {
	return func(h *hostileWorld, hd http.Handler) http.Handler {
		return hostile.Tamper(hd, asmPath, hostile.EditJSON(func(m map[string]any) { fn(h, m) }))
	}
}

// editPRM rewrites both protected resource metadata documents (the
// path-inserted one and the root one), so that no probe finds a good one.
func editPRM(fn func(h *hostileWorld, m map[string]any)) func(*hostileWorld, http.Handler) http.Handler {
	return func(h *hostileWorld, hd http.Handler) http.Handler {
		for _, p := range prmPaths {
			hd = hostile.Tamper(hd, p, hostile.EditJSON(func(m map[string]any) { fn(h, m) }))
		}
		return hd
	}
}

// rawASM replaces the authorization server metadata response.
func rawASM(edit func(status int, header http.Header, body []byte) (int, []byte)) func(*hostileWorld, http.Handler) http.Handler {
	return func(_ *hostileWorld, hd http.Handler) http.Handler { return hostile.Tamper(hd, asmPath, edit) }
}

// TestHostileDiscovery: the MCP server answers 401 and its metadata (or
// its authorization server's) is hostile. authorize() must reject
// discovery_failed with the popup closed and never sent anywhere, nothing
// stored, no script run, nothing sent to the attacker, and the runtime
// still usable.
func TestHostileDiscovery(t *testing.T) {
	goCoreOnly(t)
	for _, c := range []struct {
		name   string
		tamper authTamper
		msg    string // part of the message
	}{
		{name: "authorization_endpoint javascript: → discovery_failed",
			tamper: authTamper{AS: editASM(func(_ *hostileWorld, m map[string]any) {
				m["authorization_endpoint"] = "javascript:window.opener&&(window.opener.__pwned=1);window.__pwned=1//"
			})}, msg: "authorization_endpoint"},
		{name: "token_endpoint data: → discovery_failed",
			tamper: authTamper{AS: editASM(func(_ *hostileWorld, m map[string]any) {
				m["token_endpoint"] = "data:application/json,{\"access_token\":\"x\",\"token_type\":\"Bearer\"}"
			})}, msg: "token_endpoint"},
		{name: "authorization_endpoint file: → discovery_failed",
			tamper: authTamper{AS: editASM(func(_ *hostileWorld, m map[string]any) {
				m["authorization_endpoint"] = "file:///etc/passwd"
			})}, msg: "authorization_endpoint"},
		{name: "authorization_endpoint http on a public host → discovery_failed",
			tamper: authTamper{AS: editASM(func(_ *hostileWorld, m map[string]any) {
				m["authorization_endpoint"] = "http://example.com/authorize"
			})}, msg: "https"},
		{name: "AS metadata issuer names another server → discovery_failed",
			tamper: authTamper{AS: editASM(func(h *hostileWorld, m map[string]any) {
				m["issuer"] = h.Attacker.URL
			})}, msg: "issuer"},
		{name: "AS metadata of 2 MiB → discovery_failed",
			tamper: authTamper{AS: editASM(func(_ *hostileWorld, m map[string]any) {
				m["padding"] = strings.Repeat("x", 2<<20)
			})}, msg: "larger"},
		{name: "AS metadata truncated JSON → discovery_failed",
			tamper: authTamper{AS: rawASM(func(status int, _ http.Header, body []byte) (int, []byte) {
				return status, body[:len(body)/2]
			})}, msg: "JSON"},
		{name: "AS metadata as an HTML page → discovery_failed",
			tamper: authTamper{AS: rawASM(func(_ int, hd http.Header, _ []byte) (int, []byte) {
				hd.Set("Content-Type", "text/html; charset=utf-8")
				return http.StatusOK, []byte(`<!doctype html><title>metadata</title><script>window.opener&&(window.opener.__pwned=1);window.__pwned=1</script>`)
			})}, msg: "content type"},
		{name: "PRM resource names another server → discovery_failed",
			tamper: authTamper{MCP: editPRM(func(h *hostileWorld, m map[string]any) {
				m["resource"] = h.Attacker.URL + demo.StreamablePath
			})}, msg: "resource"},
		{name: "AS metadata without S256 in code_challenge_methods_supported → discovery_failed",
			tamper: authTamper{AS: editASM(func(_ *hostileWorld, m map[string]any) {
				m["code_challenge_methods_supported"] = []string{"plain"}
			})}, msg: "S256"},
		{name: "PRM URL redirected to the attacker origin → discovery_failed",
			tamper: authTamper{MCP: func(h *hostileWorld, hd http.Handler) http.Handler {
				for _, p := range prmPaths {
					hd = hostile.Redirect(hd, p, http.StatusFound, func(r *http.Request) string { return h.Attacker.URL + r.URL.Path })
				}
				return hd
			}}},
		{name: "AS metadata URL redirected to the attacker origin → discovery_failed",
			tamper: authTamper{AS: func(h *hostileWorld, hd http.Handler) http.Handler {
				return hostile.Redirect(hd, asmPath, http.StatusFound, func(r *http.Request) string { return h.Attacker.URL + r.URL.Path })
			}}},
		{name: "PRM scopes_supported with 100000 entries → discovery_failed",
			tamper: authTamper{MCP: editPRM(func(_ *hostileWorld, m map[string]any) {
				scopes := make([]string, 100000)
				for i := range scopes {
					scopes[i] = fmt.Sprint("s", i)
				}
				m["scopes_supported"] = scopes
			})}, msg: "scopes_supported"},
		{name: "PRM authorization_servers with 10000 entries → discovery_failed",
			tamper: authTamper{MCP: editPRM(func(h *hostileWorld, m map[string]any) {
				as := make([]string, 10000)
				as[0] = h.ASURL
				for i := 1; i < len(as); i++ {
					as[i] = fmt.Sprintf("%s/as%d", h.Attacker.URL, i)
				}
				m["authorization_servers"] = as
			})}, msg: "authorization_servers"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			h := newHostileWorld(t, devserver.AuthConfig{}, c.tamper)
			// A bounded sign-in: a defect that lets the flow go on ends
			// as a timeout instead of hanging the case.
			wantErr(t, h.login(`{ authTimeoutMs: 8000 }`), "discovery_failed", c.msg)
			h.popupsClosed()
			h.popupStayedBlank()
			if n := h.AS.Count("authorize"); n != 0 {
				t.Errorf("%d authorization request(s) reached the AS; want 0", n)
			}
			h.noGrant(true)
			h.noScript()
			h.attackerSawNothing()
			h.stillUsable()
		})
	}
}
