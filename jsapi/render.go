package jsapi

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/mcpwasm/mcpwasm/catalog"
	"github.com/mcpwasm/mcpwasm/hostpolicy"
	"github.com/mcpwasm/mcpwasm/mcpclient"
	"github.com/mcpwasm/mcpwasm/mcperr"
)

// RenderJS returns web/jsapi.js: the codes, states, option kinds, the
// operations and host callbacks, and the sentences and check tables the
// page's modules take from Go, as JavaScript constants.
func RenderJS() []byte {
	var b bytes.Buffer
	w := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	js := func(v any) string {
		out, _ := json.Marshal(v)
		return string(out)
	}
	w("// jsapi.js: the JavaScript API's codes, states, options and the table of\n")
	w("// operations of the wasm module, generated from the Go package jsapi by\n")
	w("// `go generate ./jsapi`. Do not edit: a test fails when it is stale.\n\n")
	w("/** The MCPError codes. */\nexport const CODES = Object.freeze(%s);\n\n", js(Codes))
	w("/** The states of a client. */\nexport const STATES = Object.freeze(%s);\n\n", js(States))
	options := func(name, doc string, v any) {
		w("/** %s */\nexport const %s = Object.freeze({\n", doc, name)
		for _, o := range OptionsOf(v) {
			w("  %s: %s,\n", o.Name, js(o.Kind))
		}
		w("});\n\n")
	}
	options("CLIENT_OPTIONS", "The options of mcp.client() and the JavaScript type of each.", ClientOptions{})
	options("CATALOG_OPTIONS", "The options of mcp.catalog().", CatalogOptions{})
	options("AGENT_OPTIONS", "The options of cat.agent().", AgentOptions{})
	options("POLICY_OPTIONS", "The options of mcp.policy().", PolicyOptions{})
	w("/** Each options object's options, with the fields of object options: what rules.js checks kinds against. */\nexport const OPTION_LISTS = Object.freeze({\n")
	for _, l := range []struct {
		name string
		v    any
	}{{"client", ClientOptions{}}, {"catalog", CatalogOptions{}}, {"agent", AgentOptions{}}, {"policy", PolicyOptions{}}} {
		w("  %s: %s,\n", l.name, js(OptionsOf(l.v)))
	}
	w("});\n\n")
	w("/** The rules of each options object (see Rule in the Go package jsapi), in the order they are checked. */\nexport const RULES = Object.freeze({\n")
	for _, l := range []struct {
		name  string
		rules []Rule
	}{{"client", ClientRules}, {"catalog", CatalogRules}, {"agent", AgentRules}, {"call", CallRules}, {"policy", PolicyRules}} {
		w("  %s: [\n", l.name)
		for _, r := range l.rules {
			w("    %s,\n", js(r))
		}
		w("  ],\n")
	}
	w("});\n\n")
	w("/** mcpclient.New's refusals of a server URL and headers: the headers the transport sets itself, and the messages. */\nexport const CLIENT_NEW = Object.freeze(%s);\n\n", js(map[string]any{"reservedHeaders": mcpclient.ReservedHeaders, "messages": mcpclient.NewMessages}))
	w("/** The refusals of a relay option: not a relay's URL (jsapi.RelayURLMessage), a server entry's relay on another origin (jsapi.EntryRelayMessage); %%q is the value. */\nexport const RELAY_URL = Object.freeze(%s);\n\n", js(map[string]any{"message": RelayURLMessage, "entry": EntryRelayMessage}))
	w("/** The refusal of an authorization server endpoint given by hand (jsapi.EndpointOptions, jsapi.EndpointURLMessage); %%s is the option. */\nexport const ENDPOINT_URL = Object.freeze(%s);\n\n", js(map[string]any{"options": EndpointOptions, "message": EndpointURLMessage}))
	w("/** The owners a policy refusal names (hostpolicy.Refused). */\nexport const POLICY_OWNERS = Object.freeze(%s);\n\n", js(map[string]string{"page": PagePolicyOwner, "catalog": CatalogPolicyOwner}))
	w("/**\n * The host policy's checks, in order, and its sentences (package hostpolicy): patternChecks refuse a\n * pattern with their problem; plainChecks refuse a URL as written, as not a URL (no form) or with\n * plainForms[form]; forms are the refusals' fmt formats. rules.js has a test of each check's name.\n */\nexport const POLICY = Object.freeze(%s);\n\n", js(map[string]any{
		"patternChecks": hostpolicy.PatternChecks, "patternForbidden": hostpolicy.PatternForbidden,
		"plainChecks": hostpolicy.PlainChecks, "plainForms": hostpolicy.PlainForms, "forms": hostpolicy.Forms,
	}))
	w("/** How mcperr.Present makes a sentence of an error's own message (mcperr.Sentences). */\nexport const SENTENCES = Object.freeze(%s);\n\n", js(mcperr.Sentences))
	w("/** handleCallback()'s redirect_unhandled on a redirect sign-in's return no callback module took (jsapi.UnhandledReturn); {url} is the page's address. */\nexport const UNHANDLED_RETURN = Object.freeze(%s);\n\n", js(UnhandledReturn()))
	w("/** How a catalog's server entry is read (catalog.EntryForm): the keys, their aliases and kinds, the transports, the messages. */\nexport const ENTRY_FORM = Object.freeze(%s);\n\n", js(catalog.EntryForm))
	w("/** The operations the wasm module exports (invoke(name, argsJSON, signal, onProgress)); true marks one that answers at once, not with a Promise. */\nexport const OPS = Object.freeze({\n")
	for _, o := range Ops {
		w("  %s: %v,\n", js(o.Name), o.Sync)
	}
	w("});\n\n")
	var hosts []string
	for _, h := range Hosts {
		hosts = append(hosts, h.Name)
	}
	w("/** The callbacks the wasm module calls on the host object. */\nexport const HOSTS = Object.freeze(%s);\n\n", js(hosts))
	w("/**\n * Each host callback's call: target, it names one of the page's objects (its first argument, a\n * target()); reply, its caller waits for the answer (else it is a notice).\n */\nexport const HOST_CALLBACKS = Object.freeze({\n")
	for _, h := range Hosts {
		w("  %s: Object.freeze({ target: %v, reply: %v }),\n", h.Name, h.Targeted(), h.Replies())
	}
	w("});\n\n")
	w("/** The arguments of the operations that carry an id the page chose (jsapi.IDFields): a worker prefixes each with its tab's. */\nexport const ID_FIELDS = Object.freeze(%s);\n\n", js(IDFields()))
	w("/** The kinds of the page's objects a host callback's target names, and the separator of \"<kind>:<id>\" (jsapi.Target). */\nexport const TARGET_KINDS = Object.freeze(%s);\nexport const TARGET_SEP = %s;\n\n", js(TargetKinds), js(TargetSep))
	w("/** The abort reason of the calls of a tab that went away, which keeps their tasks (jsapi.GoneReason). */\nexport const GONE_REASON = %s;\n\n", js(GoneReason))
	w("/** The target of the page's object id of kind (jsapi.Target). */\nexport function target(kind, id) {\n  if (!TARGET_KINDS.includes(kind)) throw new Error(`jsapi.js: unknown target kind ${kind}`);\n  return `${kind}${TARGET_SEP}${id}`;\n}\n")
	return b.Bytes()
}
