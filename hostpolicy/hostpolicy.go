package hostpolicy

import (
	"fmt"
	"net/netip"
	"net/url"
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
				return nil, mcperr.New(mcperr.InvalidArgument, "%s", Forms.Prefix+fmt.Sprintf(Forms.Entry, l.name, r, err))
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
	notURL := &Refused{Kind: kind, URL: raw, Owner: p.owner, List: listName, Patterns: rawList, Why: Forms.NotURL}
	bad, form := plainProblem(raw)
	if bad {
		return notURL
	}
	if form.Why != "" {
		return &Refused{Kind: kind, URL: raw, Owner: p.owner, List: listName, Patterns: rawList, Why: form.Why, Fix: form.Fix}
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
	what := fmt.Sprintf(Forms.Server, e.URL)
	if e.Kind == "issuer" {
		what = fmt.Sprintf(Forms.Issuer, e.URL)
	}
	if e.Why != "" && e.Fix != "" {
		return Forms.Prefix + fmt.Sprintf(Forms.WhyFix, what, e.Why, e.Owner, e.Fix)
	}
	if e.Why != "" {
		return Forms.Prefix + fmt.Sprintf(Forms.Why, what, e.Why, e.Owner)
	}
	listed := Forms.Nothing
	if len(e.Patterns) > 0 {
		listed = strings.Join(e.Patterns, Forms.Sep)
	}
	return Forms.Prefix + fmt.Sprintf(Forms.Listed, what, e.Owner, e.List, listed)
}

// MCPErrorCode implements [mcperr.Coder].
func (e *Refused) MCPErrorCode() mcperr.Code { return mcperr.Policy }

var _ mcperr.Coder = (*Refused)(nil)
