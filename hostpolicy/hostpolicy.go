package hostpolicy

import (
	"fmt"
	"net/netip"
	"net/url"
	"path"
	"strings"

	"github.com/mcpwasm/mcpwasm/mcperr"
)

// Policy is one host policy. Make it with [New]; the nil *Policy allows
// everything. A Policy is immutable and safe for concurrent use.
type Policy struct {
	servers, issuers     []pattern
	hasServers, hasIssue bool
	rawServers           []string
	rawIssuers           []string
	loopback             bool
	owner                string
}

// Config is what [New] makes a Policy of.
type Config struct {
	// Servers lists the MCP server URLs allowed; nil allows any.
	Servers []string
	// Issuers lists the authorization server issuers trusted; nil trusts
	// any.
	Issuers []string
	// AllowHTTPLoopback also allows any server and issuer on a loopback
	// host (localhost, 127.0.0.0/8, [::1]), listed or not: for development.
	AllowHTTPLoopback bool
	// Owner names the policy and who sets it in refusals, e.g. "the page's
	// policy (mcp.policy(), set by the page's code)".
	Owner string
}

// New checks every pattern of cfg and returns the Policy. An error is
// coded invalid_argument and names the pattern.
func New(cfg Config) (*Policy, error) {
	p := &Policy{loopback: cfg.AllowHTTPLoopback, owner: cfg.Owner, hasServers: cfg.Servers != nil, hasIssue: cfg.Issuers != nil}
	if p.owner == "" {
		p.owner = "the host policy"
	}
	for _, l := range []struct {
		name string
		raw  []string
		out  *[]pattern
	}{{"servers", cfg.Servers, &p.servers}, {"issuers", cfg.Issuers, &p.issuers}} {
		for _, r := range l.raw {
			pt, err := parsePattern(r)
			if err != nil {
				return nil, mcperr.New(mcperr.InvalidArgument, "policy: %s entry %q %v", l.name, r, err)
			}
			*l.out = append(*l.out, pt)
		}
	}
	p.rawServers = append([]string(nil), cfg.Servers...)
	p.rawIssuers = append([]string(nil), cfg.Issuers...)
	return p, nil
}

// CheckPattern reports why s is not a valid pattern of a policy's list,
// or nil.
func CheckPattern(s string) error {
	_, err := parsePattern(s)
	return err
}

// CheckServer returns nil when the policy allows the MCP server at raw,
// else a [*Refused].
func (p *Policy) CheckServer(raw string) error {
	if p == nil || !p.hasServers {
		return nil
	}
	return p.check("server", raw, p.servers, p.rawServers, "servers")
}

// CheckIssuer returns nil when the policy trusts the authorization server
// whose issuer identifier is raw, else a [*Refused].
func (p *Policy) CheckIssuer(raw string) error {
	if p == nil || !p.hasIssue {
		return nil
	}
	return p.check("issuer", raw, p.issuers, p.rawIssuers, "issuers")
}

func (p *Policy) check(kind, raw string, list []pattern, rawList []string, listName string) error {
	notURL := &Refused{Kind: kind, URL: raw, Owner: p.owner, List: listName, Patterns: rawList, Why: "is not an http(s) URL without user info"}
	bad, why, fix := plainProblem(raw)
	if bad {
		return notURL
	}
	if why != "" {
		return &Refused{Kind: kind, URL: raw, Owner: p.owner, List: listName, Patterns: rawList, Why: why, Fix: fix}
	}
	u, err := url.Parse(raw)
	if err != nil || u.Hostname() == "" || (u.Scheme != "http" && u.Scheme != "https") || u.User != nil {
		return notURL
	}
	if strings.HasPrefix(u.Host, "[") {
		// net/url does not check what is in the brackets; a browser does.
		if _, err := netip.ParseAddr(u.Hostname()); err != nil {
			return notURL
		}
	}
	if p.loopback && isLoopback(u.Hostname()) {
		return nil
	}
	for _, pt := range list {
		if pt.matches(u) {
			return nil
		}
	}
	return &Refused{Kind: kind, URL: raw, Owner: p.owner, List: listName, Patterns: rawList}
}

// Chain is policies applied together (the page's, then a catalog's): a
// URL must pass each. Nil entries allow everything.
type Chain []*Policy

// CheckServer returns the first refusal of the server at raw, or nil.
func (c Chain) CheckServer(raw string) error {
	for _, p := range c {
		if err := p.CheckServer(raw); err != nil {
			return err
		}
	}
	return nil
}

// CheckIssuer returns the first refusal of the issuer raw, or nil.
func (c Chain) CheckIssuer(raw string) error {
	for _, p := range c {
		if err := p.CheckIssuer(raw); err != nil {
			return err
		}
	}
	return nil
}

// Refused is a server or issuer a policy does not allow. Its code is
// [mcperr.Policy].
type Refused struct {
	Kind     string   // "server" or "issuer"
	URL      string   // what was refused
	Owner    string   // the policy and who sets it
	List     string   // "servers" or "issuers"
	Patterns []string // the list that refused it
	Why      string   // set when URL could not be matched at all
	Fix      string   // with Why: what to write instead, when there is a plain form
}

func (e *Refused) Error() string {
	what := "the MCP server " + e.URL
	if e.Kind == "issuer" {
		what = "the authorization server " + e.URL + " (the server's sign-in)"
	}
	if e.Why != "" && e.Fix != "" {
		return fmt.Sprintf("policy: %s %s, so %s refuses it; %s", what, e.Why, e.Owner, e.Fix)
	}
	if e.Why != "" {
		return fmt.Sprintf("policy: %s %s, so %s refuses it", what, e.Why, e.Owner)
	}
	listed := "nothing"
	if len(e.Patterns) > 0 {
		listed = strings.Join(e.Patterns, ", ")
	}
	return fmt.Sprintf("policy: %s is not allowed by %s, whose %s list is %s; use a server it lists, or ask whoever maintains the page to add it there", what, e.Owner, e.List, listed)
}

// MCPErrorCode implements [mcperr.Coder].
func (e *Refused) MCPErrorCode() mcperr.Code { return mcperr.Policy }

var _ mcperr.Coder = (*Refused)(nil)

// pattern is one parsed entry of a list.
type pattern struct {
	scheme string
	host   string   // a path.Match pattern, or an IPv6 literal in brackets
	port   string   // "" (the scheme's default), "*" or digits
	path   []string // nil: any path; else path.Match patterns per segment
}

func parsePattern(s string) (pattern, error) {
	scheme, rest, ok := strings.Cut(s, "://")
	if !ok {
		return pattern{}, fmt.Errorf("must look like https://host/path")
	}
	scheme = strings.ToLower(scheme)
	if scheme != "https" && scheme != "http" {
		return pattern{}, fmt.Errorf("must start with https:// (or http:// for a loopback host)")
	}
	if strings.ContainsAny(rest, "?#@\\ \t\r\n") {
		return pattern{}, fmt.Errorf("must not have a query, fragment, user info, space or backslash")
	}
	authority, p, hasPath := strings.Cut(rest, "/")
	var pt pattern
	pt.scheme = scheme
	host, port := authority, ""
	if strings.HasPrefix(authority, "[") {
		end := strings.Index(authority, "]")
		if end < 0 {
			return pattern{}, fmt.Errorf("has an unclosed [ in its host")
		}
		host, port = authority[:end+1], strings.TrimPrefix(authority[end+1:], ":")
		if a, err := netip.ParseAddr(host[1 : len(host)-1]); err != nil || a.Zone() != "" {
			return pattern{}, fmt.Errorf("has an invalid IPv6 host")
		}
	} else if i := strings.LastIndex(authority, ":"); i >= 0 {
		host, port = authority[:i], authority[i+1:]
		if port == "" {
			return pattern{}, fmt.Errorf("has an empty port")
		}
	}
	host = strings.ToLower(host)
	if host == "" || strings.Trim(host, "*.") == "" {
		return pattern{}, fmt.Errorf("must name a host (a * alone would allow any)")
	}
	for i := 0; i < len(host); i++ {
		if host[i] >= 0x80 {
			// A URL's host is matched as written and must be ASCII
			// (plainProblem), so this pattern could never match.
			return pattern{}, fmt.Errorf("has a non-ASCII host; write it in its xn-- (punycode) form")
		}
	}
	if !strings.HasPrefix(host, "[") {
		if _, err := path.Match(host, ""); err != nil {
			return pattern{}, fmt.Errorf("has a host that is not a valid glob pattern")
		}
	}
	if port != "" && port != "*" && strings.Trim(port, "0123456789") != "" {
		return pattern{}, fmt.Errorf("has a port that is neither a number nor *")
	}
	if scheme == "http" && !isLoopback(strings.Trim(host, "[]")) {
		return pattern{}, fmt.Errorf("uses http, which is only for a loopback host (localhost, 127.0.0.1, [::1]); use https")
	}
	pt.host, pt.port = host, port
	if hasPath && p != "" && p != "*" {
		for _, seg := range strings.Split(p, "/") {
			if _, err := path.Match(seg, ""); err != nil {
				return pattern{}, fmt.Errorf("has a path that is not a valid glob pattern")
			}
			// Such a segment could never match: plainProblem refuses
			// every URL whose path has one.
			if l := strings.ReplaceAll(strings.ToLower(seg), "%2e", "."); l == "." || l == ".." || strings.Contains(l, "%2f") || strings.Contains(l, "%5c") {
				return pattern{}, fmt.Errorf("has a . or .. segment or an encoded slash in its path; write the path as the server resolves it")
			}
			pt.path = append(pt.path, seg)
		}
	}
	return pt, nil
}

func (pt pattern) matches(u *url.URL) bool {
	if strings.ToLower(u.Scheme) != pt.scheme {
		return false
	}
	host := strings.ToLower(u.Hostname())
	if strings.HasPrefix(pt.host, "[") {
		a, err1 := netip.ParseAddr(strings.Trim(pt.host, "[]"))
		b, err2 := netip.ParseAddr(host)
		if err1 != nil || err2 != nil || a != b {
			return false
		}
	} else if ok, _ := path.Match(pt.host, host); !ok || strings.ContainsAny(host, "[]") {
		return false
	}
	port := u.Port()
	if port == "" {
		port = map[string]string{"https": "443", "http": "80"}[pt.scheme]
	}
	want := pt.port
	if want == "" {
		want = map[string]string{"https": "443", "http": "80"}[pt.scheme]
	}
	if want != "*" && strings.TrimLeft(want, "0") != strings.TrimLeft(port, "0") {
		return false
	}
	if pt.path == nil {
		return true
	}
	segs := strings.Split(strings.TrimPrefix(u.Path, "/"), "/")
	last := len(pt.path) - 1
	for i, p := range pt.path {
		if i >= len(segs) {
			return false
		}
		if i == last && p == "*" {
			return true // the rest, at any depth
		}
		if ok, _ := path.Match(p, segs[i]); !ok {
			return false
		}
	}
	return len(segs) == len(pt.path)
}

// isLoopback reports whether host (no port, no brackets) is localhost or a
// loopback IP.
func isLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.IsLoopback()
}

// The refusals of a URL that is not in the one form patterns are matched
// against. Browsers and servers resolve dot segments, and many servers
// decode %2F or %5C before routing or take a backslash for a slash, so
// /team-a/../admin or /team-a/..%2Fadmin reaches /admin while its written
// path looks like /team-a/...; a non-ASCII or percent-encoded host, or an
// IPv4 address written as 127.1 or 0x7f.1, reaches a host other than the
// one written (Go's net/url and the page's URL parser also read such hosts
// differently). Refusing them keeps "the path and host as written" the
// ones requested, and the page's check (web/rules.js plainProblem) the
// same as this one.
const (
	whyPath = "has a path that is not in plain form (a . or .. segment, an encoded slash or backslash such as %2F or %5C, or a backslash)"
	fixPath = "use its plain URL, with the path as the server resolves it"
	whyHost = "has a host that is not plain ASCII (letters, digits, -, . and _, or an IPv6 address in brackets)"
	fixHost = "write the host in ASCII, an international name in its xn-- (punycode) form"
	whyIPv4 = "has a numeric host that is not an IPv4 address in dotted decimal"
	fixIPv4 = "write the address as four decimal numbers without leading zeros, as in 127.0.0.1"
)

// plainProblem reads raw as written, before any URL parser resolves it:
// notURL when it is not an http(s) URL without user info, else the why and
// fix of a URL not in plain form, else "". web/rules.js plainProblem is
// this function in JavaScript; the two must stay identical.
func plainProblem(raw string) (notURL bool, why, fix string) {
	for i := 0; i < len(raw); i++ {
		if raw[i] <= ' ' || raw[i] == 0x7f {
			return true, "", ""
		}
	}
	scheme, rest, ok := strings.Cut(raw, "://")
	if scheme = strings.ToLower(scheme); !ok || (scheme != "http" && scheme != "https") {
		return true, "", ""
	}
	beforeFragment, fragment, _ := strings.Cut(rest, "#")
	pre, _, _ := strings.Cut(beforeFragment, "?")
	if badEscape(pre) || badEscape(fragment) {
		return true, "", ""
	}
	if strings.Contains(pre, "\\") {
		return false, whyPath, fixPath
	}
	authority, p, _ := strings.Cut(pre, "/")
	if strings.Contains(authority, "@") {
		return true, "", ""
	}
	host, port := authority, ""
	if strings.HasPrefix(authority, "[") {
		end := strings.Index(authority, "]")
		if end < 0 {
			return true, "", ""
		}
		host, port = authority[:end+1], authority[end+1:]
		if port != "" && !strings.HasPrefix(port, ":") {
			return true, "", ""
		}
		port = strings.TrimPrefix(port, ":")
		if strings.Trim(host[1:end], "0123456789abcdefABCDEF:.") != "" {
			return false, whyHost, fixHost
		}
	} else {
		if i := strings.LastIndex(authority, ":"); i >= 0 {
			host, port = authority[:i], authority[i+1:]
		}
		if host == "" {
			return true, "", ""
		}
		for i := 0; i < len(host); i++ {
			if c := host[i]; !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '.' || c == '_') {
				return false, whyHost, fixHost
			}
		}
	}
	if strings.Trim(port, "0123456789") != "" || len(strings.TrimLeft(port, "0")) > 5 || (port != "" && atoi(port) > 65535) {
		return true, "", ""
	}
	if !strings.HasPrefix(host, "[") && endsInNumber(host) {
		if a, err := netip.ParseAddr(host); err != nil || !a.Is4() || a.String() != host {
			return false, whyIPv4, fixIPv4
		}
	}
	lower := strings.ToLower(p)
	if strings.Contains(lower, "%2f") || strings.Contains(lower, "%5c") {
		return false, whyPath, fixPath
	}
	for _, seg := range strings.Split(lower, "/") {
		if seg = strings.ReplaceAll(seg, "%2e", "."); seg == "." || seg == ".." {
			return false, whyPath, fixPath
		}
	}
	return false, "", ""
}

// badEscape reports a % not followed by two hex digits, which Go's
// net/url refuses in a path and a fragment and a browser's URL keeps.
func badEscape(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] == '%' && (i+2 >= len(s) || !isHex(s[i+1]) || !isHex(s[i+2])) {
			return true
		}
	}
	return false
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// atoi is the value of a string of at most 5 digits (after leading zeros).
func atoi(s string) int {
	n := 0
	for i := 0; i < len(s); i++ {
		n = n*10 + int(s[i]-'0')
	}
	return n
}

// endsInNumber is the URL Standard's "ends in a number": a browser takes
// such a host for an IPv4 address in any of its forms (127.1, 0x7f.1,
// 2130706433, 0177.0.0.1), where net/url sees a name.
func endsInNumber(host string) bool {
	labels := strings.Split(host, ".")
	if len(labels) > 1 && labels[len(labels)-1] == "" {
		labels = labels[:len(labels)-1]
	}
	last := strings.ToLower(labels[len(labels)-1])
	if last == "" {
		return false
	}
	if strings.Trim(last, "0123456789") == "" {
		return true
	}
	return strings.HasPrefix(last, "0x") && strings.Trim(last[2:], "0123456789abcdef") == ""
}
