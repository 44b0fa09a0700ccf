package hostpolicy

// Forms are the sentences of a refusal (fmt formats, %s each): the page
// checks policies too, synchronously and in every runtime, and writes
// its refusals from these (web/jsapi.js carries them, package jsapi).
var Forms = struct {
	Server  string `json:"server"`  // the URL refused as a server
	Issuer  string `json:"issuer"`  // the URL refused as an issuer
	NotURL  string `json:"notURL"`  // the why of a string that is not a URL the lists could match
	Why     string `json:"why"`     // what, why, owner
	WhyFix  string `json:"whyFix"`  // what, why, owner, fix
	Listed  string `json:"listed"`  // what, owner, list name, the patterns
	Nothing string `json:"nothing"` // the patterns of an empty list
	Sep     string `json:"sep"`     // between patterns
	Entry   string `json:"entry"`   // a bad pattern: list name, %q of the pattern, its problem
	Prefix  string `json:"prefix"`  // before a message of this package
}{
	Server:  "the MCP server %s",
	Issuer:  "the authorization server %s (the server's sign-in)",
	NotURL:  "is not an http(s) URL without user info",
	Why:     "%s %s, so %s refuses it",
	WhyFix:  "%s %s, so %s refuses it; %s",
	Listed:  "%s is not allowed by %s, whose %s list is %s; use a server it lists, or ask whoever maintains the page to add it there",
	Nothing: "nothing",
	Sep:     ", ",
	Entry:   "%s entry %q %s",
	Prefix:  "policy: ",
}

// PlainForm is why a URL not in plain form is refused, and what to write
// instead.
type PlainForm struct {
	Why string `json:"why"`
	Fix string `json:"fix"`
}

// PlainForms are the refusals of a URL that is not in the one form
// patterns are matched against, by the part that is not: its path, its
// host, or its host as an IPv4 address.
//
// Browsers and servers resolve dot segments, and many servers decode %2F
// or %5C before routing or take a backslash for a slash, so
// /team-a/../admin or /team-a/..%2Fadmin reaches /admin while its written
// path looks like /team-a/...; a non-ASCII or percent-encoded host, or an
// IPv4 address written as 127.1 or 0x7f.1, reaches a host other than the
// one written (Go's net/url and the page's URL parser also read such hosts
// differently). Refusing them keeps "the path and host as written" the
// ones requested.
var PlainForms = map[string]PlainForm{
	"path": {
		Why: "has a path that is not in plain form (a . or .. segment, an encoded slash or backslash such as %2F or %5C, or a backslash)",
		Fix: "use its plain URL, with the path as the server resolves it",
	},
	"host": {
		Why: "has a host that is not plain ASCII (letters, digits, -, . and _, or an IPv6 address in brackets)",
		Fix: "write the host in ASCII, an international name in its xn-- (punycode) form",
	},
	"ipv4": {
		Why: "has a numeric host that is not an IPv4 address in dotted decimal",
		Fix: "write the address as four decimal numbers without leading zeros, as in 127.0.0.1",
	},
}
