package hostpolicy

import (
	"errors"
	"strings"
	"testing"

	"github.com/mcpwasm/mcpwasm/mcperr"
)

func TestCheckServer(t *testing.T) {
	p, err := New(Config{Servers: []string{"https://*.corp.example/*", "https://mcp.example.com/v1/mcp", "http://127.0.0.1:8080", "https://api.example.org:*/tools/*"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		url  string
		want bool
	}{
		{"https://a.corp.example/mcp", true},
		{"https://a.b.corp.example/x/y/mcp", true},
		{"https://A.CORP.example/mcp", true},
		{"https://a.corp.example:443/mcp", true},
		{"https://a.corp.example:8443/mcp", false}, // no port in the pattern: the default one
		{"https://corp.example/mcp", false},        // *. needs a subdomain
		{"https://evilcorp.example/mcp", false},
		{"https://a.corp.example.evil.test/mcp", false},
		{"http://a.corp.example/mcp", false},
		{"https://user@a.corp.example/mcp", false},
		{"https://mcp.example.com/v1/mcp", true},
		{"https://mcp.example.com/v1/mcp/more", false},
		{"https://mcp.example.com/v2/mcp", false},
		{"http://127.0.0.1:8080/mcp", true},
		{"http://127.0.0.1:8081/mcp", false},
		{"http://localhost:8080/mcp", false},
		{"https://api.example.org:9000/tools/a/b", true},
		{"https://api.example.org/tools", false},
		{"javascript:alert(1)", false},
		{"not a url", false},
	} {
		err := p.CheckServer(tc.url)
		if got := err == nil; got != tc.want {
			t.Errorf("CheckServer(%q) = %v; want allowed %v", tc.url, err, tc.want)
		}
		if err != nil && mcperr.CodeOf(err, "") != mcperr.Policy {
			t.Errorf("CheckServer(%q): code %q; want policy", tc.url, mcperr.CodeOf(err, ""))
		}
	}
}

func TestCheckIssuerAndLoopback(t *testing.T) {
	p, err := New(Config{Issuers: []string{"https://login.corp.example"}, AllowHTTPLoopback: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		issuer string
		want   bool
	}{
		{"https://login.corp.example", true},
		{"https://login.corp.example/", true},
		{"https://login.corp.example/realms/staff", true},
		{"https://login.corp.example.evil.test", false},
		{"https://evil.test/login.corp.example", false},
		{"http://login.corp.example", false},
		{"http://127.0.0.1:9000", true}, // allowHttpLoopback
		{"http://localhost:9000/oauth", true},
		{"http://[::1]:9000", true},
		{"http://10.0.0.1:9000", false},
	} {
		if got := p.CheckIssuer(tc.issuer) == nil; got != tc.want {
			t.Errorf("CheckIssuer(%q) allowed %v; want %v", tc.issuer, got, tc.want)
		}
	}
	if err := p.CheckServer("https://anything.example/mcp"); err != nil {
		t.Errorf("servers unset: CheckServer = %v; want nil", err)
	}
}

func TestEmptyListRefusesAll(t *testing.T) {
	p, err := New(Config{Servers: []string{}})
	if err != nil {
		t.Fatal(err)
	}
	err = p.CheckServer("https://a.example/mcp")
	if err == nil || !strings.Contains(err.Error(), "servers list is nothing") {
		t.Errorf("CheckServer with servers: [] = %v; want a refusal that says the list is empty", err)
	}
	var nilPolicy *Policy
	if err := nilPolicy.CheckServer("https://a.example/mcp"); err != nil {
		t.Errorf("nil policy: %v", err)
	}
}

func TestChainNarrows(t *testing.T) {
	page, _ := New(Config{Servers: []string{"https://*.corp.example/*"}, Owner: "the page's policy"})
	cat, _ := New(Config{Servers: []string{"https://tools.corp.example/*", "https://other.example/*"}, Owner: "the catalog's policy"})
	c := Chain{page, cat}
	if err := c.CheckServer("https://tools.corp.example/mcp"); err != nil {
		t.Errorf("in both: %v", err)
	}
	err := c.CheckServer("https://other.example/mcp")
	if err == nil || !strings.Contains(err.Error(), "the page's policy") {
		t.Errorf("only in the catalog's: %v; want the page's refusal", err)
	}
	err = c.CheckServer("https://hr.corp.example/mcp")
	if err == nil || !strings.Contains(err.Error(), "the catalog's policy") {
		t.Errorf("only in the page's: %v; want the catalog's refusal", err)
	}
}

func TestRefusedMessage(t *testing.T) {
	p, _ := New(Config{Servers: []string{"https://*.corp.example/*"}, Owner: "the page's policy (mcp.policy(), set by the page's code)"})
	err := p.CheckServer("https://evil.example/mcp")
	var r *Refused
	if !errors.As(err, &r) {
		t.Fatalf("err = %T; want *Refused", err)
	}
	want := "policy: the MCP server https://evil.example/mcp is not allowed by the page's policy (mcp.policy(), set by the page's code), whose servers list is https://*.corp.example/*; use a server it lists, or ask whoever maintains the page to add it there"
	if err.Error() != want {
		t.Errorf("message:\n got %s\nwant %s", err, want)
	}
}

func TestBadPatterns(t *testing.T) {
	for _, s := range []string{
		"*.corp.example", "ftp://x.example", "https://*", "https://*.*/", "https://x.example/?q", "https://u@x.example",
		"https://x.example:abc", "https://x.example:", "https://[bad/", "http://corp.example/*", "https://x[.example", "https://x.example/[",
	} {
		if err := CheckPattern(s); err == nil {
			t.Errorf("CheckPattern(%q) = nil; want an error", s)
		}
		if _, err := New(Config{Issuers: []string{s}}); mcperr.CodeOf(err, "") != mcperr.InvalidArgument {
			t.Errorf("New(issuers %q): %v; want invalid_argument", s, err)
		}
	}
	for _, s := range []string{"https://*.corp.example/*", "https://login.corp.example", "http://127.0.0.1:*/*", "http://[::1]:8080", "https://x.example:8443/mcp"} {
		if err := CheckPattern(s); err != nil {
			t.Errorf("CheckPattern(%q) = %v; want nil", s, err)
		}
	}
}
