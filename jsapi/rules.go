package jsapi

import (
	"encoding/json"
	"fmt"
	"strings"
)

// A Rule is one check of an options object, declared as data: Go applies
// the rules here (Check), and web/jsapi.js carries them to web/rules.js,
// which applies them in the page so that the factories that answer at
// once (mcp.client(), mcp.catalog(), cat.add(), cat.agent()) throw the
// same error at the same moment in every runtime.
//
// A rule applies when every condition of If holds; it passes when one of
// Then holds. A rule without Then refuses the combination its If names.
type Rule struct {
	If      []Cond `json:"if,omitempty"`
	Then    []Cond `json:"then,omitempty"`
	Message string `json:"message"` // without the caller's prefix ("client(): ")
}

// A Cond is a condition on one option, named by its path ("breaker.failures").
// Exactly one of Set, In, Above, AtLeast, AtMost, Every and Some says what must be
// true of it.
type Cond struct {
	Option  string   `json:"option"`
	Set     *bool    `json:"set,omitempty"`     // set (true) or unset (false); see isSet
	In      []any    `json:"in,omitempty"`      // its JSON value is one of these
	Above   *float64 `json:"above,omitempty"`   // a number greater than this
	AtLeast *float64 `json:"atLeast,omitempty"` // a number at least this
	AtMost  *float64 `json:"atMost,omitempty"`  // a number at most this
	Every   []any    `json:"every,omitempty"`   // an object each of whose values is one of these
	Some    []any    `json:"some,omitempty"`    // an object one of whose values is one of these
}

func set(option string) Cond          { t := true; return Cond{Option: option, Set: &t} }
func in(option string, v ...any) Cond { return Cond{Option: option, In: v} }
func above(option string, n float64) Cond {
	return Cond{Option: option, Above: &n}
}
func atLeast(option string, n float64) Cond { return Cond{Option: option, AtLeast: &n} }
func atMost(option string, n float64) Cond  { return Cond{Option: option, AtMost: &n} }
func every(option string, v ...any) Cond    { return Cond{Option: option, Every: v} }
func some(option string, v ...any) Cond     { return Cond{Option: option, Some: v} }

// oneOf: when option is set, it must be one of values.
func oneOf(option string, values ...any) Rule {
	l := make([]string, len(values))
	for i, v := range values {
		b, _ := json.Marshal(v)
		l[i] = string(b)
	}
	return Rule{If: []Cond{set(option)}, Then: []Cond{in(option, values...)}, Message: option + " must be " + orList(l)}
}

// positiveMs: when option is set, it must be a number above 0.
func positiveMs(option string) Rule {
	return Rule{If: []Cond{set(option)}, Then: []Cond{above(option, 0)}, Message: option + " must be a positive number of milliseconds"}
}

// positiveCount: when option is set, it must be a number above 0.
func positiveCount(option string) Rule {
	return Rule{If: []Cond{set(option)}, Then: []Cond{above(option, 0)}, Message: option + " must be a positive number"}
}

func orList(l []string) string {
	if len(l) == 1 {
		return l[0]
	}
	return strings.Join(l[:len(l)-1], ", ") + " or " + l[len(l)-1]
}

// manualSet is the refusal of a partial manual configuration.
const manualSet = "authorizationEndpoint, tokenEndpoint and clientId configure the authorization server by hand and go together: give all three, or none to discover the server"

const (
	refusedCC = `grant "client_credentials" is refused in a page: its client secret or private key would be public to everyone who loads the page. Run that grant on a server (the Go package oauth, Config.ClientCredentials) and hand the page its tokens through accessToken`
	refusedWI = `grant "workload_identity" is refused in a page: a workload identity belongs to a server, and its credential would be public to everyone who loads the page. Run that grant on a server (the Go package oauth, Config.WorkloadIdentity) and hand the page its tokens through accessToken`
)

// ClientRules are the rules of mcp.client()'s options (and of each catalog
// server's client options), in the order they are checked.
var ClientRules = func() []Rule {
	r := []Rule{
		oneOf("storage", "indexeddb", "memory"),
		oneOf("authMode", "popup", "redirect"),
		oneOf("transport", "auto", "streamable", "sse"),
		positiveMs("authTimeoutMs"),
		positiveMs("severedPopupTimeoutMs"),
		{If: []Cond{set("dpop")}, Then: []Cond{in("dpop", "auto", true)}, Message: `dpop must be "auto", true or false`},
		{If: []Cond{in("authMode", "redirect"), in("storage", "memory")}, Message: `authMode "redirect" needs storage "indexeddb": the page is gone while the user signs in`},
		{If: []Cond{set("clientSecret")}, Then: []Cond{set("clientId")}, Message: "clientSecret needs clientId (a secret belongs to a pre-registered client)"},
		// Coder's rule for a server whose metadata cannot be discovered:
		// all of the manual configuration, or none of it.
		{If: []Cond{set("authorizationEndpoint")}, Then: []Cond{set("tokenEndpoint")}, Message: manualSet},
		{If: []Cond{set("tokenEndpoint")}, Then: []Cond{set("authorizationEndpoint")}, Message: manualSet},
		{If: []Cond{set("authorizationEndpoint")}, Then: []Cond{set("clientId")}, Message: manualSet},
		{If: []Cond{set("revocationEndpoint")}, Then: []Cond{set("authorizationEndpoint")}, Message: "revocationEndpoint needs authorizationEndpoint, tokenEndpoint and clientId (it completes the authorization server configured by hand; a discovered server names its own)"},
		{If: []Cond{set("authorizationEndpoint"), set("clientMetadataUrl")}, Message: "clientMetadataUrl needs the authorization server's metadata, which authorizationEndpoint and tokenEndpoint stand in for: leave one of them unset"},
		{If: []Cond{in("grant", "client_credentials")}, Message: refusedCC},
		{If: []Cond{in("grant", "workload_identity")}, Message: refusedWI},
		{If: []Cond{set("grant")}, Then: []Cond{in("grant", "authorization_code")}, Message: `grant must be "authorization_code" (refused in a page: "client_credentials", "workload_identity")`},
	}
	for _, idp := range []string{"idpTokenEndpoint", "idpIssuer", "idpClientId", "idpClientSecret", "idpSubjectTokenType"} {
		r = append(r, Rule{If: []Cond{set(idp)}, Then: []Cond{set("identityAssertion")}, Message: idp + " needs identityAssertion (the function returning the user's ID token)"})
	}
	r = append(r,
		oneOf("relayMode", "fallback", "always"),
		Rule{If: []Cond{set("relayMode")}, Then: []Cond{set("relay")}, Message: "relayMode needs relay (the URL of the relay the requests travel through)"},
	)
	ia := set("identityAssertion")
	return append(r,
		Rule{If: []Cond{ia, set("authorizationEndpoint")}, Message: "authorizationEndpoint and tokenEndpoint are for the popup sign-in; leave them unset with identityAssertion"},
		Rule{If: []Cond{ia, set("accessToken")}, Message: "identityAssertion and accessToken exclude each other: the page supplies either its tokens or the user's ID token"},
		Rule{If: []Cond{ia, set("grant")}, Message: "identityAssertion signs in by enterprise-managed authorization; leave grant unset"},
		Rule{If: []Cond{ia}, Then: []Cond{set("idpTokenEndpoint"), set("idpIssuer")}, Message: "identityAssertion needs idpTokenEndpoint or idpIssuer (the identity provider that exchanges the ID token)"},
		Rule{If: []Cond{ia}, Then: []Cond{set("idpClientId")}, Message: "identityAssertion needs idpClientId (this app's client ID at the identity provider)"},
		Rule{If: []Cond{ia}, Then: []Cond{set("clientId")}, Message: "identityAssertion needs clientId (this app's client ID at the MCP server's authorization server)"},
		Rule{If: []Cond{ia, set("clientMetadataUrl")}, Message: "clientMetadataUrl is for the popup sign-in; leave it unset with identityAssertion"},
	)
}()

// CatalogRules are the rules of mcp.catalog()'s options.
var CatalogRules = []Rule{
	{If: []Cond{set("servers"), set("mcpServers")}, Message: "give servers or mcpServers, not both"},
	positiveCount("maxServers"),
	positiveCount("maxToolsPerServer"),
	positiveMs("callTimeoutMs"),
	positiveMs("taskWaitMs"),
	{If: []Cond{set("idleTimeoutMs")}, Then: []Cond{atLeast("idleTimeoutMs", 0)}, Message: "idleTimeoutMs must be 0 (never close an idle session) or a positive number of milliseconds"},
	positiveCount("toolBudget"),
	positiveCount("breaker.failures"),
	positiveMs("breaker.cooldownMs"),
	oneOf("approvalPolicy.readOnly", "allow", "ask"),
	oneOf("approvalPolicy.destructive", "ask", "allow", "deny"),
	{If: []Cond{set("approvalPolicy.servers")}, Then: []Cond{every("approvalPolicy.servers", "allow", "ask", "deny")},
		Message: `approvalPolicy.servers must map server ids to "allow", "ask" or "deny"`},
	askNeedsApprove(in("approvalPolicy.readOnly", "ask"), "approvalPolicy.readOnly"),
	askNeedsApprove(in("approvalPolicy.destructive", "ask"), "approvalPolicy.destructive"),
	askNeedsApprove(some("approvalPolicy.servers", "ask"), "approvalPolicy.servers"),
	{If: []Cond{set("policy")}, Then: []Cond{set("policy.servers"), set("policy.issuers")}, Message: "policy needs servers or issuers (or both), as mcp.policy() does"},
	oneOf("relayMode", "fallback", "always"),
	{If: []Cond{set("relayMode")}, Then: []Cond{set("relay")}, Message: "relayMode needs relay (the URL of the relay the requests travel through)"},
}

// askNeedsApprove: a policy that says "ask" (where c holds) needs the
// function that asks.
func askNeedsApprove(c Cond, option string) Rule {
	return Rule{If: []Cond{c}, Then: []Cond{set("approve")},
		Message: option + ` says "ask", which needs approve (the function that asks the user)`}
}

// AgentRules are the rules of cat.agent()'s options (a model function
// arrives as {kind: "custom"}).
var AgentRules = []Rule{
	{Then: []Cond{in("model.kind", "openai", "anthropic", "openai-responses", "gemini", "custom")},
		Message: "model must be mcp.models.openai(…), mcp.models.anthropic(…), mcp.models.openaiResponses(…), mcp.models.gemini(…) or an async function"},
	positiveCount("maxSteps"),
	{If: []Cond{set("authWaitMs")}, Then: []Cond{atLeast("authWaitMs", 0)}, Message: "authWaitMs must be 0 or more"},
	positiveCount("model.maxTokens"),
	{If: []Cond{set("compact")}, Then: []Cond{above("compact.maxTokens", 0)}, Message: "compact.maxTokens must be a positive number of tokens"},
	// 1<<20 is agent.MaxConversationBytes / 4.
	{If: []Cond{set("compact")}, Then: []Cond{atMost("compact.maxTokens", 1<<20)}, Message: "compact.maxTokens must be at most 1048576 (a stored conversation's limit of 4 MiB / 4)"},
	{If: []Cond{set("compact.summarize")}, Then: []Cond{in("compact.summarize", "model", "page")}, Message: `compact.summarize must be "model" or an async function (messages) => summary`},
	{If: []Cond{set("model.thinkingBudget")}, Then: []Cond{atLeast("model.thinkingBudget", 1024)}, Message: "model.thinkingBudget must be at least 1024 (the Anthropic API's smallest thinking budget)"},
	// The Responses API's reasoning.effort and reasoning.summary values.
	oneOf("model.reasoningEffort", "none", "minimal", "low", "medium", "high", "xhigh"),
	oneOf("model.reasoningSummary", "auto", "concise", "detailed"),
	positiveCount("contextLimit"),
	// 1<<30 is agent.MaxTokenCount.
	{If: []Cond{set("contextLimit")}, Then: []Cond{atMost("contextLimit", 1<<30)}, Message: "contextLimit must be at most 1073741824 tokens"},
	{If: []Cond{set("prices")}, Then: []Cond{atLeast("prices.input", 0)}, Message: pricesMessage},
	{If: []Cond{set("prices")}, Then: []Cond{atLeast("prices.output", 0)}, Message: pricesMessage},
	{If: []Cond{set("prices.cachedInput")}, Then: []Cond{atLeast("prices.cachedInput", 0)}, Message: pricesMessage},
}

// pricesMessage refuses prices that are not money.
const pricesMessage = "prices needs input and output (and optionally cachedInput), each a price of 0 or more per million tokens"

// CallRules are the rules of the options of client.callTool() and
// cat.callTool().
var CallRules = []Rule{
	positiveMs("timeoutMs"),
}

// Check applies rules to options (JSON, or nil for none) and returns the
// invalid_argument error of the first rule that fails, its message after
// what ("client()").
func Check(what string, rules []Rule, options []byte) error {
	var o map[string]any
	if len(options) > 0 {
		if err := json.Unmarshal(options, &o); err != nil {
			return invalid("%s: options must be an object", what)
		}
	}
	return CheckDecoded(what, rules, o)
}

// CheckDecoded is Check of options already decoded from JSON (nil for
// none).
func CheckDecoded(what string, rules []Rule, o map[string]any) error {
	for _, r := range rules {
		if !r.passes(o) {
			return invalid("%s: %s", what, r.Message)
		}
	}
	return nil
}

func (r Rule) passes(o map[string]any) bool {
	for _, c := range r.If {
		if !c.holds(o) {
			return true
		}
	}
	for _, c := range r.Then {
		if c.holds(o) {
			return true
		}
	}
	return false
}

func (c Cond) holds(o map[string]any) bool {
	v, ok := lookup(o, c.Option)
	switch {
	case c.Set != nil:
		return isSet(v, ok) == *c.Set
	case c.In != nil:
		return ok && oneOfJSON(v, c.In)
	case c.Above != nil:
		n, isNum := v.(float64)
		return isNum && n > *c.Above
	case c.AtLeast != nil:
		n, isNum := v.(float64)
		return isNum && n >= *c.AtLeast
	case c.AtMost != nil:
		n, isNum := v.(float64)
		return isNum && n <= *c.AtMost
	case c.Every != nil:
		m, isObj := v.(map[string]any)
		if !isObj {
			return false
		}
		for _, e := range m {
			if !oneOfJSON(e, c.Every) {
				return false
			}
		}
		return true
	case c.Some != nil:
		m, _ := v.(map[string]any)
		for _, e := range m {
			if oneOfJSON(e, c.Some) {
				return true
			}
		}
		return false
	}
	panic(fmt.Sprintf("jsapi: condition on %s says nothing", c.Option))
}

// oneOfJSON reports whether v's JSON is one of values'.
func oneOfJSON(v any, values []any) bool {
	got, _ := json.Marshal(v)
	for _, w := range values {
		if want, _ := json.Marshal(w); string(got) == string(want) {
			return true
		}
	}
	return false
}

// isSet: present, and not null, "" or false (an option left at its zero
// value is unset; 0 is set, so that a range check sees it).
func isSet(v any, present bool) bool {
	return present && v != nil && v != "" && v != false
}

// lookup finds a dotted path in decoded JSON.
func lookup(o map[string]any, path string) (any, bool) {
	var cur any = o
	for _, k := range strings.Split(path, ".") {
		m, isObj := cur.(map[string]any)
		if !isObj {
			return nil, false
		}
		v, ok := m[k]
		if !ok {
			return nil, false
		}
		cur = v
	}
	return cur, true
}
