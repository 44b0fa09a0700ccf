package xengine

import (
	"encoding/json"
	"fmt"
	"path"
	"testing"

	"github.com/mcpwasm/mcpwasm/devkit/devserver"
	"github.com/mcpwasm/mcpwasm/hostpolicy"
	"github.com/mcpwasm/mcpwasm/jsapi"
	"github.com/mcpwasm/mcpwasm/mcperr"
)

// policyParityCases: patterns and URLs where URL parsers and globs could
// differ (case, ports, IPv6, dots, escapes, user info, hosts a browser
// rewrites, paths it or a server resolves).
var policyParityPatterns = [][]string{
	{"https://*.corp.example/*", "https://mcp.example.com/v1/mcp", "http://127.0.0.1:8080", "https://api.example.org:*/tools/*"},
	{"https://[::1]:8443/*", "https://x-[ab].example/m[a-z]p/*", "http://localhost:*/mcp"},
	{"https://api.example.com/team-a/*", "https://xn--bcher-kva.example/*", "http://127.0.0.1:*/*", "https://x.example/mcp/*", "https://*.dot.example./*"},
	{},
}

// policyParityLoopback: the patterns applied again with allowHttpLoopback.
var policyParityLoopback = []string{"https://api.example.com/team-a/*"}

var policyParityURLs = []string{
	"https://a.corp.example/mcp", "https://a.b.corp.example/x/y/mcp", "https://A.CORP.example/mcp", "https://a.corp.example:443/mcp",
	"https://a.corp.example:8443/mcp", "https://corp.example/mcp", "https://evilcorp.example/mcp", "https://a.corp.example.evil.test/mcp",
	"http://a.corp.example/mcp", "https://user@a.corp.example/mcp", "https://mcp.example.com/v1/mcp", "https://mcp.example.com/v1/mcp/more",
	"https://mcp.example.com/v2/mcp", "http://127.0.0.1:8080/mcp", "http://127.0.0.1:8081/mcp", "http://localhost:8080/mcp",
	"https://api.example.org:9000/tools/a/b", "https://api.example.org/tools", "javascript:alert(1)", "not a url",
	"https://[::1]:8443/mcp", "https://[0:0:0:0:0:0:0:1]:8443/mcp", "https://x-a.example/mcp/deep", "https://x-c.example/mcp/deep",
	"https://x-b.example/mxp/a", "https://x-b.example/m%78p/a", "https://x-b.example/m/p/a", "http://localhost:3000/mcp", "http://LOCALHOST:3000/mcp", "http://localhost:3000/mcp/",
	// paths a browser or server resolves to another one than written
	"https://api.example.com/team-a/x", "https://api.example.com/team-a", "https://api.example.com/team-a/",
	"https://api.example.com/team-a/../admin", "https://api.example.com/team-a/%2e%2e/admin", "https://api.example.com/team-a/%2E%2E/admin",
	"https://api.example.com/team-a/.%2e/admin", "https://api.example.com/team-a/./x", "https://api.example.com/team-a/..",
	"https://api.example.com/team-a/..%5Cadmin", "https://api.example.com/team-a/x/..%2F..%2Fadmin", "https://api.example.com/team-a/x%2fy",
	"https://api.example.com/team-a/..\\admin", "https://api.example.com\\team-a/x", "https://api.example.com/team-a/..x",
	"https://api.example.com/team-a/x?next=../admin", "https://api.example.com/team-a/x#..", "https://api.example.com/team-a/a%20b",
	"http://127.0.0.1:8080/x/../y", "http://localhost:3000/mcp/x/../y",
	// hosts a browser reads as another host than written
	"https://bücher.example/mcp", "https://xn--bcher-kva.example/mcp", "https://b%C3%BCcher.example/mcp", "https://a%2ecorp.example/mcp",
	"http://127.1:8080/mcp", "http://0x7f.1:8080/mcp", "http://0x7f.0.0.1:8080/mcp", "http://2130706433:8080/mcp", "http://0177.0.0.1:8080/mcp",
	"http://127.0.0.01:8080/mcp", "http://127.0.0.1.:8080/mcp", "http://1.2.3.4.5/mcp", "http://[::ffff:127.0.0.1]:8080/mcp",
	"https://a.corp.example./mcp", "https://api.example.com./team-a/x", "https://a.dot.example./mcp", "https://a.dot.example/mcp",
	"https://[fe80::1%25eth0]:8443/mcp", "https://[1:2]:8443/mcp", "https://[]:8443/mcp", "https://a_b.corp.example/mcp",
	// what Go's net/url and a browser's URL parse differently
	"https://a.corp.example:99999/mcp", "https://a.corp.example:0443/mcp", "https://:443/mcp", "https://@a.corp.example/mcp",
	"https://a.corp.example/mcp ", " https://a.corp.example/mcp", "https://a.corp.example/.\t./mcp", "https:/\\a.corp.example/mcp",
	"https:a.corp.example/mcp", "https://a.corp.example/%zz", "https://a.corp.example/#%zz", "HTTPS://A.CORP.EXAMPLE/mcp",
	"https://[::1]x/mcp", "https://[::1/mcp", "https://[::1]:8443x/mcp",
	// a last segment * covers what is below the segment before it, not that segment itself
	"https://x.example/mcp", "https://x.example/mcp/", "https://x.example/mcp/a",
}

var policyParityBadPatterns = []string{
	"*.corp.example", "ftp://x.example", "https://*", "https://*.*/", "https://x.example/?q", "https://u@x.example",
	"https://x.example:abc", "https://x.example:", "https://[bad/", "http://corp.example/*", "https://x[.example", "https://x.example/[",
	"https://*.corp.example/*", "https://login.corp.example", "http://127.0.0.1:*/*", "http://[::1]:8080", "https://x.example:8443/mcp",
	"https://bücher.example/*", "https://x.example/a/../b", "https://x.example/a/%2E%2e", "https://x.example/./b", "https://x.example/a%2Fb",
	"https://x.example/a%5cb", "http://127.0.0.01", "http://127.0.0.256", "http://127.1", "http://[::ffff:127.0.0.1]:8080", "http://[::1%eth0]",
	"https://x.example/mcp/*",
}

// TestHostPolicyMatchesGo: the page's reading of policy patterns and
// server URLs (web/rules.js) gives Go's hostpolicy answers and messages,
// case by case, so that a factory throws exactly when Go would refuse.
func TestHostPolicyMatchesGo(t *testing.T) {
	eitherRuntime(t)
	w := newWorld(t, devserver.AuthConfig{})
	type refusal struct {
		Patterns []string `json:"patterns"`
		Loopback bool     `json:"loopback"`
		URL      string   `json:"url"`
		Want     string   `json:"want"`
	}
	type config struct {
		patterns []string
		loopback bool
	}
	configs := []config{{policyParityLoopback, true}}
	for _, pats := range policyParityPatterns {
		configs = append(configs, config{pats, false})
	}
	var refusals []refusal
	for _, c := range configs {
		p, err := hostpolicy.New(hostpolicy.Config{Servers: c.patterns, AllowHTTPLoopback: c.loopback, Owner: jsapi.PagePolicyOwner})
		if err != nil {
			t.Fatalf("patterns %q: %v", c.patterns, err)
		}
		for _, u := range policyParityURLs {
			want := ""
			if err := p.CheckServer(u); err != nil {
				want = err.Error()
			}
			refusals = append(refusals, refusal{c.patterns, c.loopback, u, want})
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
			refusals: %s.map((c) => policyRefusal([{ options: { servers: c.patterns, allowHttpLoopback: c.loopback }, owner: POLICY_OWNERS.page }], "server", c.url) ?? ""),
			problems: %s.map((c) => policyProblem("policy()", { servers: [c.pattern] }) ?? ""),
		};
	})()`, rj, pj), &got)
	for i, c := range refusals {
		if i < len(got.Refusals) && got.Refusals[i] != c.Want {
			t.Errorf("patterns %q (allowHttpLoopback %v), server %q:\n page %q\n   Go %q", c.Patterns, c.Loopback, c.URL, got.Refusals[i], c.Want)
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

// TestGlobAndSentenceParity: the page's glob (rules.js globRegExp, for
// policy patterns and a catalog's tool names) matches what Go's
// path.Match matches, a "/" included, and its sentence() of a message is
// mcperr.Present's.
func TestGlobAndSentenceParity(t *testing.T) {
	eitherRuntime(t)
	w := newWorld(t, devserver.AuthConfig{})
	type globCase struct {
		Pattern string `json:"pattern"`
		Name    string `json:"name"`
		Want    bool   `json:"want"`
	}
	var globs []globCase
	for _, p := range []string{"*", "notes_*", "*_list", "a?c", "*/b", "a/*", "[a-c]*", "[^a]?", `x\*y`, "*.*"} {
		for _, n := range []string{"notes_list", "a/b", "team/notes_list", "abc", "a/c", "x*y", "xzy", "b", "", "a.b", "a/b.c"} {
			ok, err := path.Match(p, n)
			if err != nil {
				t.Fatalf("pattern %q: %v", p, err)
			}
			globs = append(globs, globCase{p, n, ok})
		}
	}
	type sentenceCase struct {
		Msg  string `json:"msg"`
		Want string `json:"want"`
	}
	var sentences []sentenceCase
	for _, m := range []string{
		"policy: the MCP server x is not allowed", "mcp: oauth: token refused", "client(): url must be a string", "catalog: server \"a\": url is wrong",
		"  spaced out  ", "is this a question?", "agent(): done.", "wow!", "a.b is an identifier", "mcp.client: x", "", "policy: ", "x",
	} {
		msg, _ := mcperr.Present(mcperr.New(mcperr.InvalidArgument, "%s", m))
		sentences = append(sentences, sentenceCase{m, msg})
	}
	gj, _ := json.Marshal(globs)
	sj, _ := json.Marshal(sentences)
	var got struct {
		Globs     []bool   `json:"globs"`
		Sentences []string `json:"sentences"`
	}
	w.eval(fmt.Sprintf(`(async () => {
		const { globRegExp, sentence } = await import("/rules.js");
		return { globs: %s.map((c) => globRegExp(c.pattern).test(c.name)), sentences: %s.map((c) => sentence(c.msg)) };
	})()`, gj, sj), &got)
	if len(got.Globs) != len(globs) || len(got.Sentences) != len(sentences) {
		t.Fatalf("the page answered %d and %d cases; want %d and %d", len(got.Globs), len(got.Sentences), len(globs), len(sentences))
	}
	for i, c := range globs {
		if got.Globs[i] != c.Want {
			t.Errorf("pattern %q, name %q: the page matches %v; Go's path.Match %v", c.Pattern, c.Name, got.Globs[i], c.Want)
		}
	}
	for i, c := range sentences {
		if got.Sentences[i] != c.Want {
			t.Errorf("sentence(%q) = %q; mcperr.Present says %q", c.Msg, got.Sentences[i], c.Want)
		}
	}
}
