package xengine

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/mcpwasm/mcpwasm/hostpolicy"
	"github.com/mcpwasm/mcpwasm/internal/devserver"
	"github.com/mcpwasm/mcpwasm/jsapi"
	"github.com/mcpwasm/mcpwasm/mcperr"
)

// policyParityCases: patterns and URLs where URL parsers and globs could
// differ (case, ports, IPv6, dots, escapes, user info).
var policyParityPatterns = [][]string{
	{"https://*.corp.example/*", "https://mcp.example.com/v1/mcp", "http://127.0.0.1:8080", "https://api.example.org:*/tools/*"},
	{"https://[::1]:8443/*", "https://x-[ab].example/m[a-z]p/*", "http://localhost:*/mcp"},
	{},
}

var policyParityURLs = []string{
	"https://a.corp.example/mcp", "https://a.b.corp.example/x/y/mcp", "https://A.CORP.example/mcp", "https://a.corp.example:443/mcp",
	"https://a.corp.example:8443/mcp", "https://corp.example/mcp", "https://evilcorp.example/mcp", "https://a.corp.example.evil.test/mcp",
	"http://a.corp.example/mcp", "https://user@a.corp.example/mcp", "https://mcp.example.com/v1/mcp", "https://mcp.example.com/v1/mcp/more",
	"https://mcp.example.com/v2/mcp", "http://127.0.0.1:8080/mcp", "http://127.0.0.1:8081/mcp", "http://localhost:8080/mcp",
	"https://api.example.org:9000/tools/a/b", "https://api.example.org/tools", "javascript:alert(1)", "not a url",
	"https://[::1]:8443/mcp", "https://[0:0:0:0:0:0:0:1]:8443/mcp", "https://x-a.example/mcp/deep", "https://x-c.example/mcp/deep",
	"https://x-b.example/mxp/a", "https://x-b.example/m%78p/a", "https://x-b.example/m/p/a", "http://localhost:3000/mcp", "http://LOCALHOST:3000/mcp", "http://localhost:3000/mcp/",
}

var policyParityBadPatterns = []string{
	"*.corp.example", "ftp://x.example", "https://*", "https://*.*/", "https://x.example/?q", "https://u@x.example",
	"https://x.example:abc", "https://x.example:", "https://[bad/", "http://corp.example/*", "https://x[.example", "https://x.example/[",
	"https://*.corp.example/*", "https://login.corp.example", "http://127.0.0.1:*/*", "http://[::1]:8080", "https://x.example:8443/mcp",
}

// TestHostPolicyMatchesGo: the page's reading of policy patterns and
// server URLs (web/rules.js) gives Go's hostpolicy answers and messages,
// case by case, so that a factory throws exactly when Go would refuse.
func TestHostPolicyMatchesGo(t *testing.T) {
	w := newWorld(t, devserver.AuthConfig{})
	type refusal struct {
		Patterns []string `json:"patterns"`
		URL      string   `json:"url"`
		Want     string   `json:"want"`
	}
	var refusals []refusal
	for _, pats := range policyParityPatterns {
		p, err := hostpolicy.New(hostpolicy.Config{Servers: pats, Owner: jsapi.PagePolicyOwner})
		if err != nil {
			t.Fatalf("patterns %q: %v", pats, err)
		}
		for _, u := range policyParityURLs {
			want := ""
			if err := p.CheckServer(u); err != nil {
				want = err.Error()
			}
			refusals = append(refusals, refusal{pats, u, want})
		}
	}
	type problem struct {
		Pattern string `json:"pattern"`
		Want    string `json:"want"`
	}
	var problems []problem
	for _, s := range policyParityBadPatterns {
		want := ""
		if _, err := jsapi.PagePolicy(&jsapi.PolicyOptions{Servers: []string{s}}); err != nil {
			if mcperr.CodeOf(err, "") != mcperr.InvalidArgument {
				t.Fatalf("pattern %q: %v; want invalid_argument", s, err)
			}
			want = err.Error()
		}
		problems = append(problems, problem{s, want})
	}
	rj, _ := json.Marshal(refusals)
	pj, _ := json.Marshal(problems)
	var got struct {
		Refusals []string `json:"refusals"`
		Problems []string `json:"problems"`
	}
	w.eval(fmt.Sprintf(`(async () => {
		const { policyRefusal, policyProblem } = await import("/rules.js");
		const { POLICY_OWNERS } = await import("/jsapi.js");
		return {
			refusals: %s.map((c) => policyRefusal([{ options: { servers: c.patterns }, owner: POLICY_OWNERS.page }], "server", c.url) ?? ""),
			problems: %s.map((c) => policyProblem("policy()", { servers: [c.pattern] }) ?? ""),
		};
	})()`, rj, pj), &got)
	for i, c := range refusals {
		if i < len(got.Refusals) && got.Refusals[i] != c.Want {
			t.Errorf("patterns %q, server %q:\n page %q\n   Go %q", c.Patterns, c.URL, got.Refusals[i], c.Want)
		}
	}
	for i, c := range problems {
		if i < len(got.Problems) && got.Problems[i] != c.Want {
			t.Errorf("pattern %q:\n page %q\n   Go %q", c.Pattern, got.Problems[i], c.Want)
		}
	}
	if len(got.Refusals) != len(refusals) || len(got.Problems) != len(problems) {
		t.Errorf("the page answered %d and %d cases; want %d and %d", len(got.Refusals), len(got.Problems), len(refusals), len(problems))
	}
}
