// Package hostpolicy is the host's rule of which MCP servers and which
// authorization servers a page may use: mcp.policy() for the whole page
// and a catalog's policy option, which can only narrow it
// (docs/JSAPI.md, "Host policy").
//
// A [Policy] holds two lists of URL patterns, one for servers and one for
// issuers (RFC 8414 §2), and a switch for loopback hosts. A pattern is
// scheme://host[:port][/path] where host and each path segment are
// [path.Match] patterns (the glob syntax of a catalog's allowTools; no
// "?", which would start a query), a
// port is a number or "*", and a pattern without a path, or a last path
// segment "*", covers everything below. A list left unset does not
// restrict; an empty list refuses everything. [Chain] applies several
// policies at once: a URL must pass each.
//
// A URL is matched as written, its path percent-decoded once; one a
// browser or server would read as another URL (a . or .. segment, an
// encoded slash or backslash, a backslash, a host that is not plain ASCII,
// an IPv4 address not in dotted decimal) is refused whatever the lists say.
//
// A refusal is a [*Refused], whose code is [mcperr.Policy] and whose
// message says which list refused what and who sets that list.
package hostpolicy
