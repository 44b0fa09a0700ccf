package hostpolicy

import (
	"net/netip"
	"strings"
)

// urlParts is a URL cut into its parts as written, before any URL parser
// resolves it.
type urlParts struct {
	raw       string
	hasScheme bool
	scheme    string // lower case
	pre       string // between "://" and the query or fragment
	fragment  string
	authority string
	path      string // lower case, without its leading "/"
	host      string // in brackets for an IPv6 address
	port      string
	bracketed bool
	unclosed  bool // a "[" without its "]"
	portJunk  bool // something other than ":port" after "]"
}

// PlainCheck is one check of a URL as written, in the order of
// PlainChecks: the first whose bad holds refuses the URL, as not a URL
// (Form "") or with the PlainForms entry Form. The page's copy of these
// checks (web/rules.js) has a test of the same Name each.
type PlainCheck struct {
	Name string `json:"name"`
	Form string `json:"form,omitempty"`
	bad  func(*urlParts) bool
}

// PlainChecks read a URL as written, before any URL parser resolves it.
var PlainChecks = []PlainCheck{
	{"control", "", func(u *urlParts) bool {
		return strings.ContainsFunc(u.raw, func(r rune) bool { return r <= ' ' || r == 0x7f })
	}},
	{"scheme", "", func(u *urlParts) bool { return !u.hasScheme || (u.scheme != "http" && u.scheme != "https") }},
	// A % not followed by two hex digits: Go's net/url refuses it in a
	// path and a fragment, a browser's URL keeps it.
	{"escape", "", func(u *urlParts) bool { return badEscape(u.pre) || badEscape(u.fragment) }},
	{"backslash", "path", func(u *urlParts) bool { return strings.Contains(u.pre, "\\") }},
	{"userinfo", "", func(u *urlParts) bool { return strings.Contains(u.authority, "@") }},
	{"bracket", "", func(u *urlParts) bool { return u.unclosed || u.portJunk }},
	{"ipv6", "host", func(u *urlParts) bool {
		return u.bracketed && strings.Trim(u.host[1:len(u.host)-1], "0123456789abcdefABCDEF:.") != ""
	}},
	{"noHost", "", func(u *urlParts) bool { return u.host == "" }},
	{"hostChars", "host", func(u *urlParts) bool {
		return !u.bracketed && strings.ContainsFunc(u.host, func(c rune) bool {
			return !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '.' || c == '_')
		})
	}},
	{"port", "", func(u *urlParts) bool {
		return strings.Trim(u.port, "0123456789") != "" || len(strings.TrimLeft(u.port, "0")) > 5 || (u.port != "" && atoi(u.port) > 65535)
	}},
	{"ipv4", "ipv4", func(u *urlParts) bool {
		if u.bracketed || !endsInNumber(u.host) {
			return false
		}
		a, err := netip.ParseAddr(u.host)
		return err != nil || !a.Is4() || a.String() != u.host
	}},
	{"encodedSlash", "path", func(u *urlParts) bool { return strings.Contains(u.path, "%2f") || strings.Contains(u.path, "%5c") }},
	{"dots", "path", func(u *urlParts) bool {
		return hasDotSegment(u.path)
	}},
}

// plainProblem reads raw as written: notURL when it is not an http(s)
// URL without user info, else the PlainForms entry of a URL not in plain
// form, else neither.
func plainProblem(raw string) (notURL bool, form PlainForm) {
	u := cutURL(raw)
	for _, c := range PlainChecks {
		if c.bad(&u) {
			return c.Form == "", PlainForms[c.Form]
		}
	}
	return false, PlainForm{}
}

// cutURL cuts raw into its parts as written.
func cutURL(raw string) urlParts {
	u := urlParts{raw: raw}
	var rest string
	u.scheme, rest, u.hasScheme = strings.Cut(raw, "://")
	u.scheme = strings.ToLower(u.scheme)
	beforeFragment, fragment, _ := strings.Cut(rest, "#")
	u.pre, _, _ = strings.Cut(beforeFragment, "?")
	u.fragment = fragment
	var p string
	u.authority, p, _ = strings.Cut(u.pre, "/")
	u.path = strings.ToLower(p)
	u.host = u.authority
	u.bracketed = strings.HasPrefix(u.authority, "[")
	if end := strings.Index(u.authority, "]"); u.bracketed && end >= 0 {
		u.host, u.port = u.authority[:end+1], u.authority[end+1:]
		u.portJunk = u.port != "" && !strings.HasPrefix(u.port, ":")
		u.port = strings.TrimPrefix(u.port, ":")
	} else if u.bracketed {
		u.unclosed = true
	} else if i := strings.LastIndex(u.authority, ":"); i >= 0 {
		u.host, u.port = u.authority[:i], u.authority[i+1:]
	}
	return u
}

// hasDotSegment reports a . or .. segment of p (lower case), %2e read as
// a dot.
func hasDotSegment(p string) bool {
	for _, seg := range strings.Split(p, "/") {
		if seg = strings.ReplaceAll(seg, "%2e", "."); seg == "." || seg == ".." {
			return true
		}
	}
	return false
}

// badEscape reports a % not followed by two hex digits.
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
