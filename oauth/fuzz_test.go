package oauth

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/oauthex"

	"github.com/mcpwasm/mcpwasm/internal/httpguard"
)

// FuzzParseCallback checks that ParseCallback never panics, never accepts a
// callback without state or with both/neither code and error, and never
// puts the code into an error message. Seeds: testdata/fuzz/FuzzParseCallback.
func FuzzParseCallback(f *testing.F) {
	f.Add("http://127.0.0.1/cb?code=abc&state=xyz&iss=https%3A%2F%2Fas.example")
	f.Add("http://127.0.0.1/cb?error=access_denied&error_description=no&state=s")
	f.Fuzz(func(t *testing.T, raw string) {
		cb, err := ParseCallback(raw)
		if err != nil {
			if cb != nil {
				t.Fatal("result and error")
			}
			if c := codeParam(raw); len(c) > 3 && strings.Contains(err.Error(), c) && !inFixedText(raw, c) {
				t.Fatalf("error %q contains the code %q", err, c)
			}
			return
		}
		if cb.State == "" || (cb.Code == "") == (cb.Error == "") {
			t.Fatalf("accepted invalid callback %+v", cb)
		}
		if len(cb.ErrorDescription) > 4*maxDescription+8 {
			t.Fatalf("description not bounded: %d bytes", len(cb.ErrorDescription))
		}
		if strings.ContainsAny(cb.ErrorDescription, "\x00\x1b\n\r") {
			t.Fatalf("description not sanitised: %q", cb.ErrorDescription)
		}
	})
}

// inFixedText reports whether the code c is also in the error of the same
// callback with another code of its length: then the error's own words
// contain it (a code "stat" in "no state"), not the code.
func inFixedText(raw, c string) bool {
	fill := "Z"
	if strings.Contains(c, fill) {
		fill = "Y"
	}
	other := strings.Replace(raw, "code="+c, "code="+strings.Repeat(fill, len(c)), 1)
	_, err := ParseCallback(other)
	return err != nil && strings.Contains(err.Error(), c)
}

func codeParam(raw string) string {
	_, after, ok := strings.Cut(raw, "code=")
	if !ok {
		return ""
	}
	v, _, _ := strings.Cut(after, "&")
	return v
}

// FuzzValidateAuthServerMeta checks that metadata accepted by validation
// has https-or-loopback endpoints, the expected issuer and S256.
// Seeds: testdata/fuzz/FuzzValidateAuthServerMeta.
func FuzzValidateAuthServerMeta(f *testing.F) {
	f.Add(`{"issuer":"https://as.example","authorization_endpoint":"https://as.example/a","token_endpoint":"https://as.example/t","code_challenge_methods_supported":["S256"]}`, "https://as.example")
	f.Add(`{"issuer":"http://127.0.0.1:8080/","authorization_endpoint":"javascript:alert(1)","token_endpoint":"/t","code_challenge_methods_supported":["plain"]}`, "http://127.0.0.1:8080")
	f.Fuzz(func(t *testing.T, doc, issuer string) {
		var m oauthex.AuthServerMeta
		if json.Unmarshal([]byte(doc), &m) != nil {
			return
		}
		if err := ValidateAuthServerMeta(&m, issuer); err != nil {
			if !isCode(err, "discovery_failed") {
				t.Fatalf("error %v has the wrong code", err)
			}
			return
		}
		for _, u := range []string{m.Issuer, m.AuthorizationEndpoint, m.TokenEndpoint} {
			if checkEndpoint("x", u) != nil {
				t.Fatalf("accepted bad endpoint %q", u)
			}
		}
		if m.Issuer != issuer {
			// The one equivalence taken: an issuer without a path, with
			// and without its "/".
			u, err := url.Parse(strings.TrimSuffix(issuer, "/"))
			if strings.TrimSuffix(m.Issuer, "/") != strings.TrimSuffix(issuer, "/") || err != nil || u.Path != "" {
				t.Fatalf("accepted issuer %q for %q", m.Issuer, issuer)
			}
		}
	})
}

// FuzzValidateResourceMeta: accepted PRM names the resource and only
// https-or-loopback authorization servers.
func FuzzValidateResourceMeta(f *testing.F) {
	f.Add(`{"resource":"https://mcp.example/mcp","authorization_servers":["https://as.example"]}`, "https://mcp.example/mcp", false)
	f.Add(`{"resource":"https://mcp.example","authorization_servers":["data:text/html,x"]}`, "https://mcp.example/mcp", true)
	f.Fuzz(func(t *testing.T, doc, resource string, root bool) {
		var m oauthex.ProtectedResourceMetadata
		if json.Unmarshal([]byte(doc), &m) != nil {
			return
		}
		if ValidateResourceMeta(&m, resource, root) != nil {
			return
		}
		if len(m.AuthorizationServers) == 0 {
			t.Fatal("accepted PRM without authorization servers")
		}
		for _, as := range m.AuthorizationServers {
			if checkEndpoint("x", as) != nil {
				t.Fatalf("accepted authorization server %q", as)
			}
		}
	})
}

// FuzzParseTokenResponse: whatever a token endpoint sends, parsing never
// panics, and an accepted response yields an access token that a request
// header carries unchanged (printable ASCII, no space at either end,
// bounded), a printable bounded refresh token, scope words and an expiry
// within range. Seeds: testdata/fuzz/FuzzParseTokenResponse.
func FuzzParseTokenResponse(f *testing.F) {
	f.Add(`{"access_token":"abc","token_type":"Bearer","expires_in":3600,"refresh_token":"r","scope":"a b"}`)
	f.Add(`{"access_token":"abc\r\nX: 1","token_type":"Bearer","expires_in":"-1"}`)
	f.Add(`{"access_token":"a","token_type":"bearer","expires_in":1e308}`)
	f.Add(`{"access_token":"alice:6YKn06W2SZ9t274e:MxMYQXVUL1jJ","token_type":"bearer","expires_in":3600,"scope":"","resource":"https://mcp.example"}`)
	f.Add(`{"access_token":" a b ","token_type":"DPoP","expires_in":59.9,"scope":["a","b"]}`)
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, body string) {
		tr, err := parseTokenResponse([]byte(body), fixedClock{now})
		if err != nil {
			if !isCode(err, "token_failed") {
				t.Fatalf("error %v has the wrong code", err)
			}
			return
		}
		at := tr.AccessToken
		if at == "" || len(at) > maxTokenLen || !httpguard.ValidHeaderValue(at) ||
			strings.TrimSpace(at) != at || strings.ContainsFunc(at, func(r rune) bool { return r < 0x20 || r > 0x7e }) {
			t.Fatalf("accepted access token %q", at)
		}
		if !isVSChars(tr.RefreshToken) || len(tr.RefreshToken) > maxTokenLen {
			t.Fatalf("accepted refresh token %q", tr.RefreshToken)
		}
		if strings.ContainsFunc(tr.Scope, func(r rune) bool { return r <= 0x20 && r != ' ' || r > 0x7e || r == '"' || r == '\\' }) {
			t.Fatalf("accepted scope %q", tr.Scope)
		}
		if !tr.expiry.IsZero() && (tr.expiry.Before(now) || tr.expiry.After(now.Add(maxExpiresIn*time.Second))) {
			t.Fatalf("expiry %v out of range", tr.expiry)
		}
	})
}

// FuzzParseChallenge: any WWW-Authenticate header parses without a panic,
// and what is taken from it is bounded by the header itself.
func FuzzParseChallenge(f *testing.F) {
	f.Add(`Bearer resource_metadata="https://mcp.example/.well-known/oauth-protected-resource", scope="a b", error="insufficient_scope"`)
	f.Add(`Bearer realm="x", error="invalid_token", DPoP algs="ES256"`)
	f.Add(`Basic, Bearer scope=`)
	f.Fuzz(func(t *testing.T, header string) {
		resp := &http.Response{Header: http.Header{"Www-Authenticate": {header}}}
		ch := parseChallenge(resp)
		if len(ch.prmURL) > len(header) || len(ch.err) > len(header) {
			t.Fatalf("challenge %+v larger than the header %q", ch, header)
		}
		for _, s := range ch.scopes {
			if s == "" || strings.ContainsAny(s, " \t") {
				t.Fatalf("scope %q from %q", s, header)
			}
		}
	})
}
