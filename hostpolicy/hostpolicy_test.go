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
		"https://bücher.example/*", "https://x.example/a/../b", "https://x.example/a/%2E%2e", "https://x.example/./b", "https://x.example/a%2Fb", "https://x.example/a%5cb",
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

// TestRefusesPathsNotInPlainForm: a URL whose path a browser or server
// resolves to another one than written (dot segments, encoded separators,
// a backslash) is refused even where the written path would match.
func TestRefusesPathsNotInPlainForm(t *testing.T) {
	p, err := New(Config{Servers: []string{"https://api.example.com/team-a/*", "http://127.0.0.1:*/*"}, Issuers: []string{"https://login.example.com/realms/a"}, AllowHTTPLoopback: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, u := range []string{
		"https://api.example.com/team-a/../admin",
		"https://api.example.com/team-a/%2e%2e/admin",
		"https://api.example.com/team-a/%2E%2E/admin",
		"https://api.example.com/team-a/.%2e/admin",
		"https://api.example.com/team-a/./x",
		"https://api.example.com/team-a/%2e/x",
		"https://api.example.com/team-a/..",
		"https://api.example.com/team-a/..%5Cadmin",
		"https://api.example.com/team-a/..%5cadmin",
		"https://api.example.com/team-a/x/..%2F..%2Fadmin",
		"https://api.example.com/team-a/x%2fy",
		"https://api.example.com/team-a/..\\admin",
		"https://api.example.com\\team-a/x",
		"http://127.0.0.1:8080/x/../y", // loopback allowed, still refused
	} {
		err := p.CheckServer(u)
		if err == nil || mcperr.CodeOf(err, "") != mcperr.Policy || !strings.Contains(err.Error(), "not in plain form") || !strings.Contains(err.Error(), "use its plain URL") {
			t.Errorf("CheckServer(%q) = %v; want a policy refusal of a path not in plain form", u, err)
		}
	}
	for _, u := range []string{"https://login.example.com/realms/a/../b", "https://login.example.com/realms/a%2F..%2Fb"} {
		if err := p.CheckIssuer(u); err == nil || !strings.Contains(err.Error(), "not in plain form") {
			t.Errorf("CheckIssuer(%q) = %v; want a refusal of a path not in plain form", u, err)
		}
	}
	for _, u := range []string{
		"https://api.example.com/team-a/x", "https://api.example.com/team-a/x/y", "https://api.example.com/team-a/",
		"https://api.example.com/team-a/..x", "https://api.example.com/team-a/x..", "https://api.example.com/team-a/.well-known",
		"https://api.example.com/team-a/a%20b", "https://api.example.com/team-a/x?next=../admin", "https://api.example.com/team-a/x#..",
		"https://api.example.com/team-a/x?q=%2f", "http://127.0.0.1:9/mcp",
	} {
		if err := p.CheckServer(u); err != nil {
			t.Errorf("CheckServer(%q) = %v; want allowed", u, err)
		}
	}
	want := `policy: the MCP server https://api.example.com/team-a/../admin has a path that is not in plain form (a . or .. segment, an encoded slash or backslash such as %2F or %5C, or a backslash), so the host policy refuses it; use its plain URL, with the path as the server resolves it`
	if err := p.CheckServer("https://api.example.com/team-a/../admin"); err == nil || err.Error() != want {
		t.Errorf("message:\n got %v\nwant %s", err, want)
	}
}

// TestRefusesHostsNotInPlainForm: hosts a browser reads as another host
// than written (a non-ASCII or percent-encoded name, an IPv4 address in a
// form other than dotted decimal) are refused, listed or not.
func TestRefusesHostsNotInPlainForm(t *testing.T) {
	p, err := New(Config{Servers: []string{"https://*.example/*", "http://127.0.0.1:*/*", "https://xn--bcher-kva.example/*"}, AllowHTTPLoopback: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ url, says string }{
		{"https://bücher.example/mcp", "not plain ASCII"},
		{"https://b%C3%BCcher.example/mcp", "not plain ASCII"},
		{"https://a%2eexample/mcp", "not plain ASCII"},
		{"https://[fe80::1%25eth0]/mcp", "not plain ASCII"},
		{"http://127.1:8080/mcp", "dotted decimal"},
		{"http://0x7f.1:8080/mcp", "dotted decimal"},
		{"http://0x7f.0.0.1:8080/mcp", "dotted decimal"},
		{"http://2130706433:8080/mcp", "dotted decimal"},
		{"http://0177.0.0.1:8080/mcp", "dotted decimal"},
		{"http://127.0.0.01:8080/mcp", "dotted decimal"},
		{"http://127.0.0.1.:8080/mcp", "dotted decimal"},
		{"http://1.2.3.4.5/mcp", "dotted decimal"},
		{"https://a.example:99999/mcp", "not an http(s) URL"},
		{"https://:443/mcp", "not an http(s) URL"},
		{"https://@a.example/mcp", "not an http(s) URL"},
		{"https://a.example/mcp ", "not an http(s) URL"},
		{" https://a.example/mcp", "not an http(s) URL"},
		{"https://a.example/.\t./mcp", "not an http(s) URL"},
		{"https:/\\a.example/mcp", "not an http(s) URL"},
		{"https:a.example/mcp", "not an http(s) URL"},
		{"https://a.example/%zz", "not an http(s) URL"},
	} {
		err := p.CheckServer(tc.url)
		if err == nil || mcperr.CodeOf(err, "") != mcperr.Policy || !strings.Contains(err.Error(), tc.says) {
			t.Errorf("CheckServer(%q) = %v; want a policy refusal that says %q", tc.url, err, tc.says)
		}
	}
	for _, u := range []string{"https://xn--bcher-kva.example/mcp", "https://a_b.example/mcp", "http://127.0.0.1:8080/mcp", "http://[::1]:8080/mcp", "https://a1.example/mcp", "http://localhost:3000/mcp"} {
		if err := p.CheckServer(u); err != nil {
			t.Errorf("CheckServer(%q) = %v; want allowed", u, err)
		}
	}
	// A trailing dot names the same host to DNS but not to the pattern.
	if err := p.CheckServer("https://a.example./mcp"); err == nil {
		t.Errorf("CheckServer(trailing dot) allowed; want refused")
	}
}

// TestPathStarNeedsTheSlash: /mcp/* covers /mcp/ and below, not /mcp.
func TestPathStarNeedsTheSlash(t *testing.T) {
	p, _ := New(Config{Servers: []string{"https://x.example/mcp/*"}})
	for u, want := range map[string]bool{"https://x.example/mcp": false, "https://x.example/mcp/": true, "https://x.example/mcp/a/b": true, "https://x.example/mcpx": false} {
		if got := p.CheckServer(u) == nil; got != want {
			t.Errorf("CheckServer(%q) allowed %v; want %v", u, got, want)
		}
	}
}

// TestEachCheckRefuses: every check of the tables is the first to refuse
// its example, so none is dead or shadowed by one before it (the page's
// copy, web/rules.js, runs the same tables: e2e/xengine's parity test
// holds these examples too).
func TestEachCheckRefuses(t *testing.T) {
	patterns := map[string]string{
		"form": "*.corp.example", "scheme": "ftp://x.example", "chars": "https://x.example/?q", "bracket": "https://[bad/",
		"ipv6": "http://[::1%eth0]", "emptyPort": "https://x.example:", "noHost": "https://*", "ascii": "https://bücher.example/*",
		"hostGlob": "https://x[.example", "port": "https://x.example:abc", "http": "http://corp.example/*",
		"pathGlob": "https://x.example/[", "dots": "https://x.example/a/../b",
	}
	for _, c := range PatternChecks {
		ex, ok := patterns[c.Name]
		if !ok {
			t.Errorf("pattern check %s has no example", c.Name)
			continue
		}
		if _, err := parsePattern(ex); err == nil || err.Error() != c.Problem {
			t.Errorf("pattern %q: %v; want check %s: %s", ex, err, c.Name, c.Problem)
		}
	}
	urls := map[string]string{
		"control": " https://a.corp.example/mcp", "scheme": "javascript:alert(1)", "escape": "https://a.corp.example/%zz",
		"backslash": `https://api.example.com/team-a/..\admin`, "userinfo": "https://user@a.corp.example/mcp", "bracket": "https://[::1]x/mcp",
		"ipv6": "https://[fe80::1%25eth0]:8443/mcp", "noHost": "https://:443/mcp", "hostChars": "https://bücher.example/mcp",
		"port": "https://a.corp.example:99999/mcp", "ipv4": "http://127.1:8080/mcp", "encodedSlash": "https://api.example.com/team-a/x%2fy",
		"dots": "https://api.example.com/team-a/../admin",
	}
	for _, c := range PlainChecks {
		ex, ok := urls[c.Name]
		if !ok {
			t.Errorf("URL check %s has no example", c.Name)
			continue
		}
		u := cutURL(ex)
		for _, first := range PlainChecks {
			if first.bad(&u) {
				if first.Name != c.Name {
					t.Errorf("URL %q: refused by check %s first; want %s", ex, first.Name, c.Name)
				}
				break
			}
		}
		if notURL, form := plainProblem(ex); notURL != (c.Form == "") || form != PlainForms[c.Form] {
			t.Errorf("URL %q: notURL %v, %+v; want check %s", ex, notURL, form, c.Name)
		}
	}
	for _, c := range PlainChecks {
		if _, ok := PlainForms[c.Form]; c.Form != "" && !ok {
			t.Errorf("URL check %s: form %q is not in PlainForms", c.Name, c.Form)
		}
	}
}
