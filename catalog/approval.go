package catalog

import (
	"context"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpwasm/mcpwasm/mcperr"
)

// Answer is the host's answer to one [ApprovalRequest] ([Config.Approve]).
type Answer int

// The answers of [Config.Approve]; in JavaScript false, true, "always" and
// "server".
const (
	// Refuse: the call does not run; the model is told the user refused.
	Refuse Answer = iota
	// AllowOnce: this call runs.
	AllowOnce
	// AllowAlways: this call runs, and so does every later call of the
	// same tool of the same server in the scope of the [Approvals] (an
	// agent's conversation, else the catalog's life) without asking.
	AllowAlways
	// AllowServer: as AllowAlways, for every tool of the server.
	AllowServer
)

// Level is what an [ApprovalPolicy] does with a call.
type Level string

// The levels of an [ApprovalPolicy].
const (
	LevelAllow Level = "allow" // runs without asking
	LevelAsk   Level = "ask"   // runs if Config.Approve says so (without Approve: runs)
	LevelDeny  Level = "deny"  // never runs; Approve is not asked
)

// ApprovalPolicy decides which calls [Config.Approve] is asked about. Its
// zero value is the default: read-only tools run, every other tool is
// asked.
//
// Tool annotations (readOnlyHint, destructiveHint) are the server's claims
// about its own tools, so they only ever decide about the tools of the
// server that makes them, and a host's word about a server comes before
// them. For a call of tool t of server s, in this order:
//
//  1. Deny wins: Servers[s] is "deny", or Destructive is "deny" and t is
//     destructive.
//  2. Servers[s], when set ("allow" or "ask"), decides: a tool claiming
//     readOnlyHint on a server set to "ask" is asked.
//  3. Otherwise the annotations: a read-only tool gets ReadOnly; any other
//     tool gets Destructive, except that Destructive "deny" asks about a
//     tool that says destructiveHint: false.
//
// A tool is read-only when it says readOnlyHint: true, and destructive when
// it is not read-only and does not say destructiveHint: false (MCP's
// default for destructiveHint is true). The meta tools belong to no server
// (ServerID ""); Servers never names them.
type ApprovalPolicy struct {
	ReadOnly    Level            // read-only tools: "allow" (default) or "ask"
	Destructive Level            // every other tool: "ask" (default), "allow" or "deny"
	Servers     map[string]Level // by server id: "allow", "ask" or "deny"
}

// zero reports whether p is the default policy with nothing set.
func (p *ApprovalPolicy) zero() bool {
	return p.ReadOnly == "" && p.Destructive == "" && len(p.Servers) == 0
}

// validate checks p; asking needs someone to ask (hasApprove).
func (p *ApprovalPolicy) validate(hasApprove bool) error {
	bad := func(format string, args ...any) error {
		return mcperr.New(mcperr.InvalidArgument, "catalog: "+format, args...)
	}
	switch p.ReadOnly {
	case "", LevelAllow, LevelAsk:
	default:
		return bad(`Config.ApprovalPolicy.ReadOnly must be "allow" or "ask", not %q`, p.ReadOnly)
	}
	switch p.Destructive {
	case "", LevelAsk, LevelAllow, LevelDeny:
	default:
		return bad(`Config.ApprovalPolicy.Destructive must be "ask", "allow" or "deny", not %q`, p.Destructive)
	}
	asks := p.ReadOnly == LevelAsk || p.Destructive == LevelAsk
	for id, l := range p.Servers {
		switch l {
		case LevelAllow, LevelDeny:
		case LevelAsk:
			asks = true
		default:
			return bad(`Config.ApprovalPolicy.Servers[%q] must be "allow", "ask" or "deny", not %q`, id, l)
		}
	}
	if asks && !hasApprove {
		return bad(`Config.ApprovalPolicy says "ask", but there is no Config.Approve to ask`)
	}
	return nil
}

// The rules of an [ApprovalPolicy] that can decide a call
// (ApprovalDecision.Policy).
const (
	PolicyServer      = "server"
	PolicyReadOnly    = "readOnly"
	PolicyDestructive = "destructive"
)

// level is what p says of a call of t on server id, and the rule that
// says it.
func (p *ApprovalPolicy) level(id string, t *mcp.Tool) (Level, string) {
	ro := readOnly(t)
	destructive := !ro && (t.Annotations == nil || t.Annotations.DestructiveHint == nil || *t.Annotations.DestructiveHint)
	d := p.Destructive
	if d == "" {
		d = LevelAsk
	}
	server := p.Servers[id]
	switch {
	case server == LevelDeny:
		return LevelDeny, PolicyServer
	case destructive && d == LevelDeny:
		return LevelDeny, PolicyDestructive
	case server != "":
		return server, PolicyServer
	case ro && p.ReadOnly == "":
		return LevelAllow, PolicyReadOnly
	case ro:
		return p.ReadOnly, PolicyReadOnly
	case d == LevelDeny: // not destructive: deny is for destructive tools
		return LevelAsk, PolicyDestructive
	}
	return d, PolicyDestructive
}

// How an [ApprovalDecision] was reached.
const (
	DecidedByHost       = "host"       // Config.Approve answered
	DecidedByPolicy     = "policy"     // the ApprovalPolicy, without asking
	DecidedByRemembered = "remembered" // an earlier "always" or "server" answer
)

// The scopes of a remembered answer (ApprovalDecision.Scope).
const (
	ScopeTool   = "tool"   // AllowAlways: this tool of this server
	ScopeServer = "server" // AllowServer: every tool of this server
)

// ApprovalDecision is how the approval of one call was decided
// ([CallOptions.OnApproval]).
type ApprovalDecision struct {
	Approved  bool   `json:"approved"`
	DecidedBy string `json:"decidedBy"` // DecidedByHost, DecidedByPolicy or DecidedByRemembered
	// Scope is ScopeTool or ScopeServer when the host's answer holds for
	// later calls too ("always", "server"), or a remembered one decided.
	Scope string `json:"scope,omitempty"`
	// Policy is the rule that decided (PolicyServer, PolicyReadOnly,
	// PolicyDestructive) when DecidedBy is DecidedByPolicy.
	Policy string `json:"policy,omitempty"`
}

// Approvals remembers the host's AllowAlways and AllowServer answers for
// one scope: an agent's conversation (each agent.Agent has its own and
// passes it in [CallOptions.Approvals]) or, for calls without one, the
// catalog's life. It also keeps one question per server open at a time: a
// call that needs the host's answer while another call of the same server
// waits for one waits too, then runs on a remembered answer when that one
// was AllowAlways (for its tool) or AllowServer, or asks in turn. Two
// parallel calls of one tool answered "always" are asked once.
//
// A server is known by its id and URL: one removed and added again under
// the same id with another URL is asked anew. The zero value is ready;
// an Approvals is safe for concurrent use.
type Approvals struct {
	mu      sync.Mutex
	tools   map[toolKey]bool         // AllowAlways, by server key and tool
	servers map[string]bool          // AllowServer, by server key
	asking  map[string]chan struct{} // by server key: closed when its open question ends
}

// ask decides req (whose server is known by key) with the host's approve,
// unless a remembered answer does. Its only error is ctx's.
func (a *Approvals) ask(ctx context.Context, key string, req ApprovalRequest, approve func(context.Context, ApprovalRequest) (Answer, error)) (ApprovalDecision, error) {
	tk := toolKey{key, req.Tool}
	for {
		a.mu.Lock()
		switch {
		case a.servers[key]:
			a.mu.Unlock()
			return ApprovalDecision{Approved: true, DecidedBy: DecidedByRemembered, Scope: ScopeServer}, nil
		case a.tools[tk]:
			a.mu.Unlock()
			return ApprovalDecision{Approved: true, DecidedBy: DecidedByRemembered, Scope: ScopeTool}, nil
		}
		if open, busy := a.asking[key]; busy {
			a.mu.Unlock()
			select {
			case <-open:
				continue
			case <-ctx.Done():
				return ApprovalDecision{}, ctx.Err()
			}
		}
		if a.asking == nil {
			a.asking = map[string]chan struct{}{}
		}
		open := make(chan struct{})
		a.asking[key] = open
		a.mu.Unlock()

		ans, err := approve(ctx, req)
		d := ApprovalDecision{DecidedBy: DecidedByHost}
		if err == nil && ctx.Err() == nil {
			switch ans {
			case AllowOnce:
				d.Approved = true
			case AllowAlways:
				d.Approved, d.Scope = true, ScopeTool
			case AllowServer:
				d.Approved, d.Scope = true, ScopeServer
			}
		}
		a.mu.Lock()
		switch d.Scope {
		case ScopeTool:
			if a.tools == nil {
				a.tools = map[toolKey]bool{}
			}
			a.tools[tk] = true
		case ScopeServer:
			if a.servers == nil {
				a.servers = map[string]bool{}
			}
			a.servers[key] = true
		}
		delete(a.asking, key)
		close(open)
		a.mu.Unlock()
		if err := ctx.Err(); err != nil {
			return ApprovalDecision{}, err
		}
		return d, nil
	}
}

// approve decides whether a call of t on server id (at url; "" for the
// meta tools) may run: by the policy, a remembered answer, or the host's
// Approve. The decision goes to opts.OnApproval, unless the catalog has
// neither Approve nor a policy (then every call runs, unreported). Its
// only error is aborted.
func (c *Catalog) approve(ctx context.Context, req ApprovalRequest, url string, t *mcp.Tool, opts CallOptions) (ApprovalDecision, error) {
	p := &c.cfg.ApprovalPolicy
	if c.cfg.Approve == nil && p.zero() {
		return ApprovalDecision{Approved: true}, nil
	}
	var d ApprovalDecision
	switch level, rule := p.level(req.ID, t); {
	case level == LevelDeny:
		d = ApprovalDecision{DecidedBy: DecidedByPolicy, Policy: rule}
	case level == LevelAllow, c.cfg.Approve == nil:
		d = ApprovalDecision{Approved: true, DecidedBy: DecidedByPolicy, Policy: rule}
	default:
		mem := opts.Approvals
		if mem == nil {
			mem = &c.approvals
		}
		var err error
		if d, err = mem.ask(ctx, req.ID+"\x00"+url, req, c.cfg.Approve); err != nil {
			return d, aborted(err)
		}
	}
	if opts.OnApproval != nil {
		opts.OnApproval(req, d)
	}
	return d, nil
}

// refusalText is what the model reads when d refused the call name of
// the server shown as display: the policy's refusal, or the user's.
func refusalText(d ApprovalDecision, display, name string) string {
	if d.DecidedBy == DecidedByPolicy {
		if d.Policy == PolicyServer {
			return say(textPolicyServer, display, name)
		}
		return say(textPolicyDenied, display, name)
	}
	return say(textRefused, display, name)
}
