package oauth

import (
	"fmt"
	"net/netip"
	"net/url"
	"strings"
)

// isLoopback reports whether host (no port) is localhost or a loopback IP.
func isLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip, err := netip.ParseAddr(strings.Trim(host, "[]"))
	return err == nil && ip.IsLoopback()
}

// CheckEndpoint reports whether raw is an endpoint this package sends
// requests and tokens to: an absolute https URL (http only on a loopback
// host) without fragment or user info. Its error names the endpoint name.
func CheckEndpoint(name, raw string) error { return checkEndpoint(name, raw) }

// checkEndpoint validates a URL from metadata: absolute, https (or http on
// a loopback host), a host, no fragment, no user info. This rejects
// javascript:, data: and relative URLs.
func checkEndpoint(name, raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return fmt.Errorf("%s is not a valid URL", name)
	}
	switch {
	case !u.IsAbs() || u.Host == "" || u.Opaque != "":
		return fmt.Errorf("%s %q is not an absolute URL", name, sanitize(raw))
	case u.Scheme == "https":
	case u.Scheme == "http" && isLoopback(u.Hostname()):
	default:
		return fmt.Errorf("%s %q must use https (or http on a loopback host)", name, sanitize(raw))
	}
	// An empty fragment ("…/token#") parses as none; it is one all the same.
	if u.Fragment != "" || strings.Contains(raw, "#") || u.User != nil {
		u.User = nil // it may hold a password: not repeated
		shown := u.String()
		if u.Fragment == "" && strings.Contains(raw, "#") {
			shown += "#"
		}
		return fmt.Errorf("%s %q must not have a fragment or user info", name, sanitize(shown))
	}
	return nil
}

// sameIssuer reports whether metadata naming issuer got answers for the
// issuer want: identical strings (RFC 8414 §3.3), or, for an issuer without
// a path, the same URL with and without the trailing "/" (RFC 3986 §6.2.3:
// an empty http(s) path is "/"). Deployed servers differ there: Auth0's
// issuer ends in "/", and protected resource metadata built with
// WHATWG URL serialisation ("new URL(issuer).href") adds one to any
// origin. Both spellings fetch the same metadata document; any other
// difference (a path, its trailing "/", case) is refused as RFC 8414
// requires.
func sameIssuer(got, want string) bool {
	if got == want {
		return true
	}
	if strings.TrimSuffix(got, "/") != strings.TrimSuffix(want, "/") {
		return false
	}
	u, err := url.Parse(strings.TrimSuffix(got, "/"))
	return err == nil && u.Path == "" && u.RawQuery == "" && !u.ForceQuery && u.Fragment == ""
}

// sameResource reports whether the resource a protected resource metadata
// document names is the URL the client asked about: the same up to a
// trailing "/" and the case of scheme and host (RFC 3986 §6.2.2.1; a
// resource server that names itself "https://MCP.example/mcp" means the
// same server).
func sameResource(named, asked string) bool {
	a, b := strings.TrimSuffix(named, "/"), strings.TrimSuffix(asked, "/")
	if a == b {
		return true
	}
	ua, err1 := url.Parse(a)
	ub, err2 := url.Parse(b)
	return err1 == nil && err2 == nil && ua.Host != "" && strings.EqualFold(ua.Scheme, ub.Scheme) && strings.EqualFold(ua.Host, ub.Host) &&
		ua.RawPath == ub.RawPath && ua.Path == ub.Path && ua.RawQuery == ub.RawQuery && ua.Fragment == ub.Fragment && ua.User == nil && ub.User == nil
}

// sameOrigin reports whether a and b have the same scheme and host.
func sameOrigin(a, b string) bool {
	ua, err1 := url.Parse(a)
	ub, err2 := url.Parse(b)
	return err1 == nil && err2 == nil && ua.Scheme == ub.Scheme && strings.EqualFold(ua.Host, ub.Host)
}
