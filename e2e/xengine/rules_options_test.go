package xengine

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/mcpwasm/mcpwasm/catalog"
	"github.com/mcpwasm/mcpwasm/devkit/devserver"
	"github.com/mcpwasm/mcpwasm/jsapi"
	"github.com/mcpwasm/mcpwasm/mcperr"
)

// ruleCase is one generated input: the options (JSON) of kind ("client",
// "catalog", "agent", "call") and the sentence Go gives for it.
type ruleCase struct {
	Kind    string          `json:"kind"`
	Name    string          `json:"name"`
	Options json.RawMessage `json:"options"`
	Want    string          `json:"want"`
}

// ruleKinds are the options objects with rules, their struct and their
// name in Go's messages.
var ruleKinds = []struct {
	kind, what string
	rules      []jsapi.Rule
	opts       []jsapi.Option
	decode     func([]byte) error
}{
	{"client", "client()", jsapi.ClientRules, jsapi.OptionsOf(jsapi.ClientOptions{}), func(b []byte) error {
		return jsapi.Decode("client()", b, &jsapi.ClientOptions{})
	}},
	{"catalog", "catalog()", jsapi.CatalogRules, jsapi.OptionsOf(jsapi.CatalogOptions{}), func(b []byte) error {
		return jsapi.Decode("catalog()", b, &jsapi.CatalogOptions{})
	}},
	{"agent", "agent()", jsapi.AgentRules, jsapi.OptionsOf(jsapi.AgentOptions{}), func(b []byte) error {
		return jsapi.Decode("agent()", b, &jsapi.AgentOptions{})
	}},
	{"call", "callTool()", jsapi.CallRules, []jsapi.Option{{Name: "timeoutMs", Kind: "number"}}, func(b []byte) error {
		return jsapi.Check("callTool()", jsapi.CallRules, b)
	}},
}

// ruleCases makes, for every rule of every options object, an input that
// breaks that rule and no rule before it, and for every option a value of
// the wrong kind: a new rule or option is tested without anyone writing
// its case.
func ruleCases(t *testing.T) []ruleCase {
	var out []ruleCase
	add := func(kind, name string, o map[string]any, decode func([]byte) error) {
		b, _ := json.Marshal(o)
		msg, _ := mcperr.Present(decode(b))
		out = append(out, ruleCase{Kind: kind, Name: name, Options: b, Want: msg})
	}
	for _, k := range ruleKinds {
		for i, r := range k.rules {
			o := ruleBreaking(t, k.kind, k.opts, k.rules, i, k.decode)
			add(k.kind, fmt.Sprintf("rule %d (%s)", i, r.Message), o, k.decode)
		}
		if k.kind == "call" {
			continue
		}
		for _, opt := range k.opts {
			if opt.Kind == "function" || opt.Kind == "any" {
				continue // the page keeps functions; a rule checks "any"
			}
			o := ruleBase(k.kind)
			o[opt.Name] = ruleWrongKind(opt.Kind)
			add(k.kind, fmt.Sprintf("%s of the wrong kind", opt.Name), o, k.decode)
		}
		o := ruleBase(k.kind)
		o["colour"] = "blue"
		add(k.kind, "an unknown option", o, k.decode)
	}
	return out
}

// ruleBase is the smallest valid options of kind.
func ruleBase(kind string) map[string]any {
	if kind == "agent" {
		return map[string]any{"model": map[string]any{"kind": "openai"}}
	}
	return map[string]any{}
}

// ruleBreaking returns options that break rule i of rules and pass every rule
// before it: its If conditions met, its Then conditions broken, and the
// earlier rules that fire made to pass one by one.
func ruleBreaking(t *testing.T, kind string, opts []jsapi.Option, rules []jsapi.Rule, i int, decode func([]byte) error) map[string]any {
	t.Helper()
	r := rules[i]
	o := ruleBase(kind)
	for _, c := range r.If {
		rulePut(o, c.Option, ruleMeeting(c, ruleKindOf(opts, c.Option)))
	}
	for _, c := range r.Then {
		ruleBreakCond(o, c)
	}
	for range len(rules) {
		b, _ := json.Marshal(o)
		err := decode(b)
		if err == nil {
			t.Fatalf("%s rule %d (%s): no case breaks it: %s passes", kind, i, r.Message, b)
		}
		if strings.HasSuffix(err.Error(), r.Message) {
			return o
		}
		fixed := false
		for j := range i {
			if !strings.HasSuffix(err.Error(), rules[j].Message) || len(rules[j].Then) == 0 {
				continue
			}
			c := rules[j].Then[0]
			rulePut(o, c.Option, ruleMeeting(c, ruleKindOf(opts, c.Option)))
			fixed = true
		}
		if !fixed {
			t.Fatalf("%s rule %d (%s): its case %s fails another way: %v", kind, i, r.Message, b, err)
		}
	}
	t.Fatalf("%s rule %d (%s): no case found", kind, i, r.Message)
	return nil
}

// ruleMeeting is a value of kind that meets c.
func ruleMeeting(c jsapi.Cond, kind string) any {
	switch {
	case c.In != nil:
		return c.In[0]
	case c.Above != nil:
		return *c.Above + 1
	case c.AtLeast != nil:
		return *c.AtLeast
	case c.AtMost != nil:
		return *c.AtMost
	case c.Every != nil:
		return map[string]any{"x": c.Every[0]}
	case c.Some != nil:
		return map[string]any{"x": c.Some[0]}
	case c.Set != nil && !*c.Set:
		return nil
	}
	switch kind {
	case "boolean", "function":
		return true
	case "number":
		return 1000.0
	case "integer":
		return 2.0
	case "array":
		return []any{"a"}
	case "record":
		return map[string]any{"X-A": "v"}
	case "object":
		return map[string]any{}
	case "any":
		return "auto"
	}
	return "https://x.example/" + c.Option
}

// ruleBreakCond changes o so that c does not hold.
func ruleBreakCond(o map[string]any, c jsapi.Cond) {
	switch {
	case c.In != nil:
		rulePut(o, c.Option, "not-one-of-them")
	case c.Above != nil:
		rulePut(o, c.Option, *c.Above)
	case c.AtLeast != nil:
		rulePut(o, c.Option, *c.AtLeast-1)
	case c.AtMost != nil:
		rulePut(o, c.Option, *c.AtMost+1)
	case c.Every != nil, c.Some != nil:
		rulePut(o, c.Option, map[string]any{"x": "not-one-of-them"})
	case c.Set != nil && *c.Set:
		rulePut(o, c.Option, nil)
	}
}

func ruleWrongKind(kind string) any {
	switch kind {
	case "string":
		return 5.0
	case "boolean":
		return "yes"
	case "number":
		return "5"
	case "integer":
		return 2.5
	case "array":
		return "a b"
	case "record":
		return map[string]any{"X-A": 1.0}
	}
	return "x" // object
}

// ruleKindOf finds a dotted option's kind.
func ruleKindOf(opts []jsapi.Option, path string) string {
	head, rest, nested := strings.Cut(path, ".")
	for _, o := range opts {
		if o.Name == head {
			if nested {
				return ruleKindOf(o.Fields, rest)
			}
			return o.Kind
		}
	}
	return "string"
}

// rulePut sets a dotted option (nil deletes it).
func rulePut(o map[string]any, path string, v any) {
	head, rest, nested := strings.Cut(path, ".")
	if nested {
		m, _ := o[head].(map[string]any)
		if m == nil {
			m = map[string]any{}
			o[head] = m
		}
		rulePut(m, rest, v)
		return
	}
	if v == nil {
		delete(o, head)
		return
	}
	o[head] = v
}

// TestOptionRulesMatchGo: for every rule and option kind of package jsapi,
// the page (rules.js) throws, in each runtime and engine, the sentence Go gives, and
// Go in the page's wasm refuses the same input with the same sentence.
func TestOptionRulesMatchGo(t *testing.T) {
	if runtimeMode() == "main" {
		t.Skip("loads mcp.js in both runtimes itself (main and worker); runs in each engine's auto pass")
	}
	e := newWorld(t, devserver.AuthConfig{})
	for name, runtime := range map[string]string{"onMain": "main", "inWorker": "worker"} {
		e.eval(fmt.Sprintf(`(async () => {
			const m = await import("/mcp.js?%s");
			window[%q] = await m.load({ runtime: %q });
			return window[%q].runtime;
		})()`, name, name, runtime, name), nil)
	}
	cases := ruleCases(t)
	b, _ := json.Marshal(cases)
	var got []struct {
		Main, Worker, Go string
	}
	e.eval(fmt.Sprintf(`(async () => {
		const URL = %q;
		const cases = %s;
		// What the page sends for a function option: the function.
		const fns = (o, kinds) => Object.fromEntries(Object.entries(o).map(([k, v]) => [k, kinds.includes(k) && v === true ? async () => "t" : v]));
		const catalogs = [onMain, inWorker].map((m) => m.catalog({}));
		const clients = [onMain, inWorker].map((m) => m.client(URL));
		const text = (e) => e ? e.code + ": " + e.message : "no error";
		const attempt = async (i, c) => {
			try {
				switch (c.kind) {
				case "client": [onMain, inWorker][i].client(URL, fns(c.options, ["accessToken", "identityAssertion"])); break;
				case "catalog": [onMain, inWorker][i].catalog(fns(c.options, ["approve"])); break;
				case "agent": catalogs[i].agent(c.options); break;
				case "call": await clients[i].callTool("echo", {}, c.options); break;
				}
				return "no error";
			} catch (e) { return text(e); }
		};
		// Go in wasm, asked directly (the main-thread runtime's operations).
		const goCat = "direct-catalog", goClient = "direct-client";
		onMain._invokeSync("catalog.new", { id: goCat, options: {} });
		const RU = new globalThis.URL("/oauth/callback.html", location.href).href;
		onMain._invokeSync("client.new", { id: goClient, url: URL, options: { redirectUri: RU } });
		let n = 0;
		const direct = async (c) => {
			const id = "direct-" + ++n;
			try {
				switch (c.kind) {
				case "client": onMain._invokeSync("client.new", { id, url: URL, options: { redirectUri: RU, ...c.options } }); break;
				case "catalog": onMain._invokeSync("catalog.new", { id, options: c.options }); break;
				case "agent": onMain._invokeSync("agent.new", { id, catalog: goCat, options: c.options }); break;
				case "call": await onMain._invoke("client.callTool", { id: goClient, name: "echo", ...c.options }); break;
				}
				return "no error";
			} catch (e) { return text(e); }
		};
		const out = [];
		for (const c of cases) out.push({ Main: await attempt(0, c), Worker: await attempt(1, c), Go: await direct(c) });
		return out;
	})()`, e.MCPURL, b), &got)
	if len(got) != len(cases) {
		t.Fatalf("got %d results for %d cases", len(got), len(cases))
	}
	for i, c := range cases {
		want := "invalid_argument: " + c.Want
		g := got[i]
		if c.Want == "" || g.Main != want || g.Worker != want || g.Go != want {
			t.Errorf("%s %s %s:\n  want:   %s\n  main:   %s\n  worker: %s\n  go:     %s", c.Kind, c.Name, c.Options, want, g.Main, g.Worker, g.Go)
		}
	}
	t.Logf("%d generated cases", len(cases))

	// Every key, alias, negation and transport of catalog.EntryForm, broken,
	// given to catalog.add(): the page refuses as Go does.
	entries := entryCases()
	b, _ = json.Marshal(entries)
	var gotAdd []struct{ Main, Worker, Go string }
	e.eval(fmt.Sprintf(`(() => {
		const URL = %q;
		const RU = new globalThis.URL("/oauth/callback.html", location.href).href;
		const cats = [onMain, inWorker].map((m) => m.catalog({}));
		onMain._invokeSync("catalog.new", { id: "direct-entries", options: {} });
		const text = (f) => { try { f(); return "no error"; } catch (e) { return e.code + ": " + e.message; } };
		return %s.map(([id, entry]) => {
			const withURL = (o) => (o !== null && typeof o === "object" && !Array.isArray(o) ? { redirectUri: RU, ...o } : o);
			return {
				Main: text(() => cats[0].add(id, entry)),
				Worker: text(() => cats[1].add(id, entry)),
				Go: text(() => onMain._invokeSync("catalog.add", { id: "direct-entries", server: id, config: withURL(entry) })),
			};
		});
	})()`, e.MCPURL, b), &gotAdd)
	for i, g := range gotAdd {
		if !strings.HasPrefix(g.Go, "invalid_argument: ") || g.Main != g.Go || g.Worker != g.Go {
			t.Errorf("catalog.add%s:\n  main:   %s\n  worker: %s\n  go:     %s", entries[i], g.Main, g.Worker, g.Go)
		}
	}
	t.Logf("%d generated entries", len(entries))

	// The servers a catalog leaves out are known at once, in every
	// runtime, in Go's words.
	var warnings [2][]string
	e.eval(fmt.Sprintf(`[onMain, inWorker].map((m) => [...m.catalog({ mcpServers: {
		local: { command: "npx" }, ftp: { url: "ftp://example.com/mcp" }, glob: { url: %[1]q, allowTools: ["[a-"] }, ok: { url: %[1]q },
	} }).warnings])`, e.MCPURL), &warnings)
	if len(warnings[0]) != 3 || !slices.Equal(warnings[0], warnings[1]) {
		t.Errorf("catalog warnings:\n  main:   %q\n  worker: %q\nwant the same three", warnings[0], warnings[1])
	}
}

// entryCases makes, from catalog.EntryForm, an entry that each of its keys
// refuses ([id, entry] pairs, the URL filled in by the page as URL).
func entryCases() [][2]any {
	f := catalog.EntryForm
	const url = "http://127.0.0.1:1/mcp"
	var out [][2]any
	add := func(entry any) { out = append(out, [2]any{fmt.Sprintf("t%d", len(out)), entry}) }
	add("not an object")
	add(map[string]any{f.LocalKey: "npx"})
	add(map[string]any{})
	add(map[string]any{"url": "ftp://example.com/mcp"})
	// The relay option's URL syntax is code on both sides (relay.CheckURL).
	add(map[string]any{"url": url, "relay": "http://app.example/mcp-relay"})
	add(map[string]any{"url": url, "relay": "https://app.example/mcp-relay?x=1"})
	add(map[string]any{"url": url, "relay": "http://127.0.0.1.evil.example/mcp-relay"}) // not loopback
	add(map[string]any{"url": url, "relay": "https://relay.example/mcp-relay"})         // not the page's origin
	add(map[string]any{"url": url, "webmcp": true})                                     // the page's own tools have no url
	add(map[string]any{"url": url, "required": true, "enabled": false})                 // a required server is on
	add(map[string]any{"url": url, "required": true, "disabled": true})
	// So is an authorization server endpoint's (oauth.CheckEndpoint).
	byHand := func(k, v string) map[string]any {
		o := map[string]any{"url": url, "clientId": "c", "authorizationEndpoint": "https://as.example/a", "tokenEndpoint": "https://as.example/t"}
		o[k] = v
		return o
	}
	add(byHand("authorizationEndpoint", "http://as.example/a"))
	add(byHand("tokenEndpoint", "http://127.0.0.1.evil.example/t")) // not loopback
	add(byHand("tokenEndpoint", "https://as.example/t#x"))
	add(byHand("tokenEndpoint", "https://as.example/t#")) // an empty fragment is one too
	add(byHand("authorizationEndpoint", "https://u:p@as.example/a"))
	add(byHand("revocationEndpoint", "/revoke"))
	add(byHand("revocationEndpoint", "javascript:alert(1)"))
	for _, a := range f.Aliases {
		add(map[string]any{a[0]: "not a url"})
	}
	for _, n := range f.Negations {
		add(map[string]any{"url": url, n.Key: "yes"})
	}
	for _, k := range f.TransportKeys {
		add(map[string]any{"url": url, k: 5})
		add(map[string]any{"url": url, k: "ws"})
		for name, t := range f.Transports {
			if t == "" {
				add(map[string]any{"url": url, k: strings.ToUpper(name)})
			}
		}
	}
	for _, fd := range f.Fields {
		wrong := map[string]any{"string": 5, "boolean": "yes", "array": "a b"}[fd.Kind]
		add(map[string]any{"url": url, fd.Name: wrong})
		if fd.Kind == "array" {
			add(map[string]any{"url": url, fd.Name: []any{1}})
		}
		if fd.Globs {
			add(map[string]any{"url": url, fd.Name: []any{"[a-"}})
			add(map[string]any{"url": url, fd.Name: []any{`x\`}})
		}
	}
	return out
}
