package oauth

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/oauthex"
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
			if c := codeParam(raw); len(c) > 3 && strings.Contains(err.Error(), c) {
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
		if !issuersEqual(m.Issuer, issuer) {
			t.Fatalf("accepted issuer %q for %q", m.Issuer, issuer)
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
