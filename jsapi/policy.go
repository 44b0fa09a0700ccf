package jsapi

import (
	"errors"
	"strings"

	"github.com/mcpwasm/mcpwasm/hostpolicy"
	"github.com/mcpwasm/mcpwasm/mcperr"
)

// PolicyOptions are the options of mcp.policy() and of a catalog's
// policy option (hostpolicy.Config): an unset list does not restrict,
// an empty one refuses everything.
type PolicyOptions struct {
	Servers           []string `json:"servers,omitempty"`
	Issuers           []string `json:"issuers,omitempty"`
	AllowHTTPLoopback bool     `json:"allowHttpLoopback,omitempty"`
}

// Rules are PolicyRules.
func (*PolicyOptions) Rules() []Rule { return PolicyRules }

// PolicyRules are the rules of mcp.policy()'s options.
var PolicyRules = []Rule{
	{Then: []Cond{set("servers"), set("issuers")}, Message: `give servers or issuers (or both): lists of URL patterns such as "https://*.corp.example/*"`},
}

// The owners a refusal names: who sets the policy that refused.
const (
	PagePolicyOwner    = "the page's policy (mcp.policy(), set by the page's code)"
	CatalogPolicyOwner = "the catalog's policy (the policy option of mcp.catalog(), set by the page's code)"
)

// Policy checks every pattern of o and returns its hostpolicy.Policy; a
// nil o is no policy (nil). what and prefix name the option in an
// invalid_argument error ("policy()", "" or "catalog()", "policy.").
func (o *PolicyOptions) Policy(what, prefix, owner string) (*hostpolicy.Policy, error) {
	if o == nil {
		return nil, nil
	}
	p, err := hostpolicy.New(hostpolicy.Config{Servers: o.Servers, Issuers: o.Issuers, AllowHTTPLoopback: o.AllowHTTPLoopback, Owner: owner})
	if err != nil {
		var e *mcperr.Error
		if errors.As(err, &e) {
			return nil, invalid("%s: %s%s", what, prefix, strings.TrimPrefix(e.Msg, "policy: "))
		}
		return nil, invalid("%s: %s%v", what, prefix, err)
	}
	return p, nil
}

// PagePolicy is the page's policy as mcp.js sends it with client.new and
// catalog.new (checked again: it crossed a MessagePort in a worker).
func PagePolicy(o *PolicyOptions) (*hostpolicy.Policy, error) {
	if o == nil {
		return nil, nil
	}
	if err := CheckDecoded("policy()", PolicyRules, policyMap(o)); err != nil {
		return nil, err
	}
	return o.Policy("policy()", "", PagePolicyOwner)
}

// policyMap is o as Check sees decoded options.
func policyMap(o *PolicyOptions) map[string]any {
	m := map[string]any{}
	list := func(l []string) []any {
		out := make([]any, len(l))
		for i, s := range l {
			out[i] = s
		}
		return out
	}
	if o.Servers != nil {
		m["servers"] = list(o.Servers)
	}
	if o.Issuers != nil {
		m["issuers"] = list(o.Issuers)
	}
	return m
}
