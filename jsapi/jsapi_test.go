package jsapi

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/mcpwasm/mcpwasm/mcperr"
)

func readWeb(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "web", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestGeneratedJSIsCurrent(t *testing.T) {
	if got := readWeb(t, "jsapi.js"); got != string(RenderJS()) {
		t.Error("web/jsapi.js is stale: run make generate (or go generate ./jsapi)")
	}
}

// TestMCPJSUsesTheTable: every operation the page's modules invoke is in
// the table, and every operation of the table is invoked.
func TestMCPJSUsesTheTable(t *testing.T) {
	var src string
	for _, f := range []string{"mcp.js", "client.js", "catalog.js", "agent.js", "conversation.js"} {
		src += readWeb(t, f)
	}
	used := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?:_invoke|_invokeSync|#call)\("([a-zA-Z.]+)"`).FindAllStringSubmatch(src, -1) {
		used[m[1]] = true
	}
	for name := range used {
		if _, ok := OpNamed(name); !ok {
			t.Errorf("mcp.js invokes %q, which is not in the table", name)
		}
	}
	for _, o := range Ops {
		if !used[o.Name] {
			t.Errorf("operation %q of the table is not used by mcp.js", o.Name)
		}
	}
}

// unionOf returns the string literals of a TypeScript union type.
func unionOf(t *testing.T, dts, name string) []string {
	t.Helper()
	m := regexp.MustCompile(`(?s)export type ` + name + ` =(.*?);`).FindStringSubmatch(dts)
	if m == nil {
		t.Fatalf("mcp.d.ts has no type %s", name)
	}
	var out []string
	for _, q := range regexp.MustCompile(`"([^"]+)"`).FindAllStringSubmatch(m[1], -1) {
		out = append(out, q[1])
	}
	return out
}

// fieldsOf returns the field names of a TypeScript interface.
func fieldsOf(t *testing.T, dts, name string) []string {
	t.Helper()
	m := regexp.MustCompile(`(?s)export interface ` + name + ` \{(.*?)\n\}`).FindStringSubmatch(dts)
	if m == nil {
		t.Fatalf("mcp.d.ts has no interface %s", name)
	}
	var out []string
	for _, f := range regexp.MustCompile(`(?m)^  (\w+)\??:`).FindAllStringSubmatch(m[1], -1) {
		out = append(out, f[1])
	}
	return out
}

// TestTypeScriptAgrees: mcp.d.ts declares the same codes, states and
// options as Go and jsapi.js.
func TestTypeScriptAgrees(t *testing.T) {
	dts := readWeb(t, "mcp.d.ts")
	var codes []string
	for _, c := range Codes {
		codes = append(codes, string(c))
	}
	sorted := func(s []string) []string { s = slices.Clone(s); slices.Sort(s); return s }
	if got := unionOf(t, dts, "MCPErrorCode"); !slices.Equal(sorted(got), sorted(codes)) {
		t.Errorf("MCPErrorCode = %v; Go has %v", got, codes)
	}
	if got := unionOf(t, dts, "ClientState"); !slices.Equal(sorted(got), sorted(States)) {
		t.Errorf("ClientState = %v; Go has %v", got, States)
	}
	if got, want := fieldsOf(t, dts, "ClientOptions"), names(OptionsOf(ClientOptions{})); !slices.Equal(sorted(got), sorted(want)) {
		t.Errorf("ClientOptions fields = %v; Go has %v", got, want)
	}
}

// TestCodesAreEveryCode: the table's codes are exactly mcperr's.
func TestCodesAreEveryCode(t *testing.T) {
	src, err := os.ReadFile(filepath.Join("..", "mcperr", "mcperr.go"))
	if err != nil {
		t.Fatal(err)
	}
	var all []mcperr.Code
	for _, m := range regexp.MustCompile(`(?m)^\t\w+\s+Code = "(\w+)"`).FindAllStringSubmatch(string(src), -1) {
		all = append(all, mcperr.Code(m[1]))
	}
	if !slices.Equal(all, Codes) {
		t.Errorf("mcperr declares %v; the table lists %v", all, Codes)
	}
}

func TestDPoPMode(t *testing.T) {
	for in, want := range map[string]string{`{}`: "auto", `{"dpop":"auto"}`: "auto", `{"dpop":true}`: "on", `{"dpop":false}`: "off"} {
		var o ClientOptions
		if err := Decode("client()", []byte(in), &o); err != nil {
			t.Fatal(err)
		}
		if got := o.DPoPMode(); got != want {
			t.Errorf("%s: DPoPMode() = %q, want %q", in, got, want)
		}
	}
}

func TestClientOptions(t *testing.T) {
	for _, tc := range []struct{ json, want string }{
		{`{}`, ""},
		{`{"storage":"memory","authTimeoutMs":1000,"accessToken":true,"headers":{"X-Key":"v"}}`, ""},
		{`{"storage":"disk"}`, `storage must be "indexeddb" or "memory"`},
		{`{"authMode":"tab"}`, `authMode must be "popup" or "redirect"`},
		{`{"transport":"ws"}`, `transport must be "auto", "streamable" or "sse"`},
		{`{"authTimeoutMs":0}`, "authTimeoutMs must be a positive number"},
		{`{"severedPopupTimeoutMs":-5}`, "severedPopupTimeoutMs must be a positive number"},
		{`{"authMode":"redirect","storage":"memory"}`, `needs storage "indexeddb"`},
		{`{"clientSecret":"s"}`, "clientSecret needs clientId"},
		{`{"dpop":"auto"}`, ""},
		{`{"dpop":true}`, ""},
		{`{"dpop":false}`, ""},
		{`{"dpop":"on"}`, `dpop must be "auto", true or false`},
		{`{"dpop":null}`, ""}, // null leaves an option unset, as everywhere
		{`{"dpop":1}`, `dpop must be "auto", true or false`},
		{`{"storage":5}`, "storage must be a string"},
		{`{"scopes":"a b"}`, "scopes must be an array"},
		{`{"accessToken":{}}`, "accessToken must be a function"},
		{`{"headers":[]}`, "headers must be an object"},
		{`{"clientname":"x"}`, `unknown option "clientname"; known: clientName, redirectUri`},
		{`{"identityAssertion":true,"idpTokenEndpoint":"https://idp.example/token","idpClientId":"i","clientId":"c"}`, ""},
		{`{"identityAssertion":true,"idpIssuer":"https://idp.example","idpClientId":"i","clientId":"c","idpClientSecret":"s"}`, ""},
		{`{"identityAssertion":"x"}`, "identityAssertion must be a function"},
		{`{"identityAssertion":true,"idpClientId":"i","clientId":"c"}`, "needs idpTokenEndpoint or idpIssuer"},
		{`{"identityAssertion":true,"idpIssuer":"https://idp.example","clientId":"c"}`, "needs idpClientId"},
		{`{"identityAssertion":true,"idpIssuer":"https://idp.example","idpClientId":"i"}`, "needs clientId"},
		{`{"identityAssertion":true,"accessToken":true,"idpIssuer":"https://idp.example","idpClientId":"i","clientId":"c"}`, "exclude each other"},
		{`{"idpTokenEndpoint":"https://idp.example/token"}`, "idpTokenEndpoint needs identityAssertion"},
		{`{"grant":"client_credentials","clientId":"c","clientSecret":"s"}`, `grant "client_credentials" is refused in a page: its client secret or private key would be public`},
		{`{"grant":"workload_identity"}`, `grant "workload_identity" is refused in a page: a workload identity belongs to a server`},
		{`{"grant":"password"}`, `grant must be "authorization_code"`},
		{`{"grant":"authorization_code"}`, ""},
		{`{"clientId":"c","authorizationEndpoint":"https://as.example/a","tokenEndpoint":"https://as.example/t"}`, ""},
		{`{"clientId":"c","authorizationEndpoint":"https://as.example/a","tokenEndpoint":"http://127.0.0.1:9/t","revocationEndpoint":"https://as.example/r"}`, ""},
		{`{"clientId":"c","authorizationEndpoint":"https://as.example/a"}`, "authorizationEndpoint, tokenEndpoint and clientId configure the authorization server by hand and go together"},
		{`{"clientId":"c","tokenEndpoint":"https://as.example/t"}`, "go together"},
		{`{"authorizationEndpoint":"https://as.example/a","tokenEndpoint":"https://as.example/t"}`, "go together"},
		{`{"clientId":"c","revocationEndpoint":"https://as.example/r"}`, "revocationEndpoint needs authorizationEndpoint"},
		{`{"clientId":"c","authorizationEndpoint":"https://as.example/a","tokenEndpoint":"https://as.example/t","clientMetadataUrl":"https://app.example/c.json"}`, "clientMetadataUrl needs the authorization server's metadata"},
		{`{"clientId":"c","authorizationEndpoint":"https://as.example/a","tokenEndpoint":"http://as.example/t"}`, "tokenEndpoint must be an absolute https URL (http only on a loopback host)"},
		{`{"clientId":"c","authorizationEndpoint":"/authorize","tokenEndpoint":"https://as.example/t"}`, "authorizationEndpoint must be an absolute https URL"},
		{`{"clientId":"c","authorizationEndpoint":"https://u:secret@as.example/a","tokenEndpoint":"https://as.example/t"}`, "authorizationEndpoint must be an absolute https URL (http only on a loopback host) without fragment or user info"},
		{`{"identityAssertion":true,"idpIssuer":"https://idp.example","idpClientId":"i","clientId":"c","authorizationEndpoint":"https://as.example/a","tokenEndpoint":"https://as.example/t"}`, "are for the popup sign-in"},
	} {
		var o ClientOptions
		err := Decode("client()", []byte(tc.json), &o)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: %v", tc.json, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s: error %v; want one saying %q", tc.json, err, tc.want)
		case err != nil && mcperr.CodeOf(err, "") != mcperr.InvalidArgument:
			t.Errorf("%s: code %q; want invalid_argument", tc.json, mcperr.CodeOf(err, ""))
		}
	}
}

// TestAgentModelOptions: the model kinds mcp.models makes, and the
// Responses API's reasoning values.
func TestAgentModelOptions(t *testing.T) {
	for _, tc := range []struct{ json, want string }{
		{`{"model":{"kind":"openai-responses","model":"gpt-5-mini","reasoningEffort":"low","reasoningSummary":"auto"}}`, ""},
		{`{"model":{"kind":"gemini","model":"gemini-2.5-flash","includeThoughts":true}}`, ""},
		{`{"model":{"kind":"vertex"}}`, "mcp.models.openaiResponses(…), mcp.models.gemini(…) or an async function"},
		{`{"model":{"kind":"openai-responses","reasoningSummary":"long"}}`, `model.reasoningSummary must be "auto", "concise" or "detailed"`},
		{`{"model":{"kind":"openai-responses","reasoningEffort":"max"}}`, `model.reasoningEffort must be`},
		{`{"model":{"kind":"gemini","includeThoughts":"yes"}}`, "model.includeThoughts must be a boolean"},
		{`{"model":{"kind":"custom"},"contextLimit":128000,"prices":{"input":2.5,"output":10,"cachedInput":0}}`, ""},
		{`{"model":{"kind":"custom"},"contextLimit":0}`, "contextLimit must be a positive number"},
		{`{"model":{"kind":"custom"},"contextLimit":1.5}`, "contextLimit must be a whole number"},
		{`{"model":{"kind":"custom"},"contextLimit":2000000000}`, "contextLimit must be at most 1073741824"},
		{`{"model":{"kind":"custom"},"prices":{"input":1}}`, "prices needs input and output"},
		{`{"model":{"kind":"custom"},"prices":{"input":-1,"output":1}}`, "prices needs input and output"},
		{`{"model":{"kind":"custom"},"prices":{"input":1,"output":1,"cachedInput":-0.5}}`, "each a price of 0 or more"},
		{`{"model":{"kind":"custom"},"prices":{"input":"1","output":1}}`, "prices.input must be a number"},
	} {
		var o AgentOptions
		err := Decode("agent()", []byte(tc.json), &o)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: %v", tc.json, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s: error %v; want one saying %q", tc.json, err, tc.want)
		}
	}
}
