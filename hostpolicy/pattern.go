package hostpolicy

import (
	"errors"
	"net/netip"
	"net/url"
	"path"
	"strings"
)

// pattern is one parsed entry of a list.
type pattern struct {
	scheme string
	host   string   // a path.Match pattern, or an IPv6 literal in brackets
	port   string   // "" (the scheme's default), "*" or digits
	path   []string // nil: any path; else path.Match patterns per segment
}

// patternParts is a pattern cut into its parts, before any is checked.
type patternParts struct {
	hasScheme bool   // it has "://"
	scheme    string // lower case
	rest      string // what follows "://"
	host      string // lower case; in brackets for an IPv6 address
	port      string
	hasColon  bool     // the authority (not in brackets) has a ":"
	bracketed bool     // the host starts with "["
	unclosed  bool     // a "[" without its "]"
	segments  []string // the path's, unless it is empty or "*"
}

// PatternForbidden are the characters a pattern cannot have after its
// scheme (a "?" would start a query).
const PatternForbidden = "?#@\\ \t\r\n"

// PatternCheck is one check of a pattern, in the order of PatternChecks:
// the first whose bad holds refuses the pattern with Problem. The page's
// copy of these checks (web/rules.js) has a test of the same Name each.
type PatternCheck struct {
	Name    string `json:"name"`
	Problem string `json:"problem"`
	bad     func(*patternParts) bool
}

// PatternChecks are the checks of a pattern, in order.
var PatternChecks = []PatternCheck{
	{"form", "must look like https://host/path", func(p *patternParts) bool { return !p.hasScheme }},
	{"scheme", "must start with https:// (or http:// for a loopback host)", func(p *patternParts) bool { return p.scheme != "https" && p.scheme != "http" }},
	{"chars", "must not have a query, fragment, user info, space or backslash", func(p *patternParts) bool { return strings.ContainsAny(p.rest, PatternForbidden) }},
	{"bracket", "has an unclosed [ in its host", func(p *patternParts) bool { return p.unclosed }},
	{"ipv6", "has an invalid IPv6 host", func(p *patternParts) bool { return p.bracketed && !isIPv6Literal(p.host) }},
	{"emptyPort", "has an empty port", func(p *patternParts) bool { return p.hasColon && p.port == "" }},
	{"noHost", "must name a host (a * alone would allow any)", func(p *patternParts) bool { return strings.Trim(p.host, "*.") == "" }},
	// A URL's host is matched as written and must be ASCII (PlainChecks),
	// so this pattern could never match.
	{"ascii", "has a non-ASCII host; write it in its xn-- (punycode) form", func(p *patternParts) bool { return !isASCII(p.host) }},
	{"hostGlob", "has a host that is not a valid glob pattern", func(p *patternParts) bool { return !p.bracketed && !validGlob(p.host) }},
	{"port", "has a port that is neither a number nor *", func(p *patternParts) bool {
		return p.port != "" && p.port != "*" && strings.Trim(p.port, "0123456789") != ""
	}},
	{"http", "uses http, which is only for a loopback host (localhost, 127.0.0.1, [::1]); use https", func(p *patternParts) bool {
		return p.scheme == "http" && !isLoopback(strings.Trim(p.host, "[]"))
	}},
	{"pathGlob", "has a path that is not a valid glob pattern", func(p *patternParts) bool { return !all(p.segments, validGlob) }},
	// Such a segment could never match: PlainChecks refuse every URL
	// whose path has one.
	{"dots", "has a . or .. segment or an encoded slash in its path; write the path as the server resolves it", func(p *patternParts) bool {
		return !all(p.segments, func(seg string) bool {
			l := strings.ReplaceAll(strings.ToLower(seg), "%2e", ".")
			return l != "." && l != ".." && !strings.Contains(l, "%2f") && !strings.Contains(l, "%5c")
		})
	}},
}

func parsePattern(s string) (pattern, error) {
	p := cutPattern(s)
	for _, c := range PatternChecks {
		if c.bad(&p) {
			return pattern{}, errors.New(c.Problem)
		}
	}
	return pattern{scheme: p.scheme, host: p.host, port: p.port, path: p.segments}, nil
}

// cutPattern cuts s into scheme://host[:port][/path].
func cutPattern(s string) patternParts {
	var p patternParts
	p.scheme, p.rest, p.hasScheme = strings.Cut(s, "://")
	p.scheme = strings.ToLower(p.scheme)
	authority, pathPart, _ := strings.Cut(p.rest, "/")
	p.host = authority
	p.bracketed = strings.HasPrefix(authority, "[")
	if end := strings.Index(authority, "]"); p.bracketed && end >= 0 {
		p.host, p.port = authority[:end+1], strings.TrimPrefix(authority[end+1:], ":")
	} else if p.bracketed {
		p.unclosed = true
	} else if i := strings.LastIndex(authority, ":"); i >= 0 {
		p.host, p.port, p.hasColon = authority[:i], authority[i+1:], true
	}
	p.host = strings.ToLower(p.host)
	if pathPart != "" && pathPart != "*" {
		p.segments = strings.Split(pathPart, "/")
	}
	return p
}

// isIPv6Literal reports an IPv6 address in brackets, without a zone.
func isIPv6Literal(host string) bool {
	a, err := netip.ParseAddr(strings.TrimSuffix(strings.TrimPrefix(host, "["), "]"))
	return err == nil && a.Zone() == "" && strings.HasSuffix(host, "]")
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// validGlob reports whether p is a path.Match pattern.
func validGlob(p string) bool {
	_, err := path.Match(p, "")
	return err == nil
}

func all(l []string, ok func(string) bool) bool {
	for _, s := range l {
		if !ok(s) {
			return false
		}
	}
	return true
}

func (pt pattern) matches(u *url.URL) bool {
	if strings.ToLower(u.Scheme) != pt.scheme {
		return false
	}
	return pt.matchesHost(strings.ToLower(u.Hostname())) && pt.matchesPort(u.Port()) && pt.matchesPath(u.Path)
}

func (pt pattern) matchesHost(host string) bool {
	if strings.HasPrefix(pt.host, "[") {
		a, err1 := netip.ParseAddr(strings.Trim(pt.host, "[]"))
		b, err2 := netip.ParseAddr(host)
		return err1 == nil && err2 == nil && a == b
	}
	ok, _ := path.Match(pt.host, host)
	return ok && !strings.ContainsAny(host, "[]")
}

func (pt pattern) matchesPort(port string) bool {
	def := map[string]string{"https": "443", "http": "80"}[pt.scheme]
	if port == "" {
		port = def
	}
	want := pt.port
	if want == "" {
		want = def
	}
	return want == "*" || strings.TrimLeft(want, "0") == strings.TrimLeft(port, "0")
}

// matchesPath: a last segment "*" covers the rest, at any depth.
func (pt pattern) matchesPath(p string) bool {
	if pt.path == nil {
		return true
	}
	segs := strings.Split(strings.TrimPrefix(p, "/"), "/")
	last := len(pt.path) - 1
	for i, want := range pt.path {
		if i >= len(segs) {
			return false
		}
		if i == last && want == "*" {
			return true
		}
		if ok, _ := path.Match(want, segs[i]); !ok {
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
