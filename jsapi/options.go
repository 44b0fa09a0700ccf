package jsapi

import (
	"bytes"
	"encoding/json"
	"math"
	"net/url"
	"reflect"
	"slices"
	"strings"

	"github.com/mcpwasm/mcpwasm/mcperr"
	"github.com/mcpwasm/mcpwasm/oauth"
	"github.com/mcpwasm/mcpwasm/relay"
)

// ClientOptions are the options of mcp.client(url, options), as JSON. A
// function-valued option (accessToken, identityAssertion) arrives as true:
// mcp.js keeps the function and tells Go that there is one.
type ClientOptions struct {
	ClientName        string   `json:"clientName,omitempty"`
	RedirectURI       string   `json:"redirectUri,omitempty"`
	Scopes            []string `json:"scopes,omitempty"`
	ClientID          string   `json:"clientId,omitempty"`
	ClientMetadataURL string   `json:"clientMetadataUrl,omitempty"`
	ClientSecret      string   `json:"clientSecret,omitempty"`
	// The authorization server's endpoints given by hand, with ClientID
	// (oauth.Config.Endpoints): no metadata is discovered.
	AuthorizationEndpoint string            `json:"authorizationEndpoint,omitempty"`
	TokenEndpoint         string            `json:"tokenEndpoint,omitempty"`
	RevocationEndpoint    string            `json:"revocationEndpoint,omitempty"`
	Headers               map[string]string `json:"headers,omitempty"`
	AccessToken           bool              `json:"accessToken,omitempty" js:"function"`
	Storage               string            `json:"storage,omitempty"`
	Interactive           bool              `json:"interactive,omitempty"`
	AuthMode              string            `json:"authMode,omitempty"`
	AuthTimeoutMs         *float64          `json:"authTimeoutMs,omitempty"`
	SeveredPopupTimeoutMs *float64          `json:"severedPopupTimeoutMs,omitempty"`
	Transport             string            `json:"transport,omitempty"`
	// Apps: the page renders the server's views (MCP Apps); initialize
	// says so.
	Apps bool `json:"apps,omitempty"`
	// DPoP is "auto", true or false (see [ClientOptions.DPoPMode]).
	DPoP json.RawMessage `json:"dpop,omitempty" js:"any"`
	// Enterprise-managed authorization (ID-JAG): the page's SSO ID token,
	// exchanged at its identity provider; no popup.
	IdentityAssertion   bool   `json:"identityAssertion,omitempty" js:"function"`
	IdPTokenEndpoint    string `json:"idpTokenEndpoint,omitempty"`
	IdPIssuer           string `json:"idpIssuer,omitempty"`
	IdPClientID         string `json:"idpClientId,omitempty"`
	IdPClientSecret     string `json:"idpClientSecret,omitempty"`
	IdPSubjectTokenType string `json:"idpSubjectTokenType,omitempty"`
	// Grant names a non-interactive grant a page asks for: only to be
	// refused with the reason (see validateGrant).
	Grant string `json:"grant,omitempty"`
	// Relay is the URL of a relay (package relay) the requests of this
	// client (MCP and OAuth) may travel through; RelayMode says when:
	// "fallback" (the default) or "always".
	Relay     string `json:"relay,omitempty"`
	RelayMode string `json:"relayMode,omitempty"`
}

// EndpointOptions are the options that give an authorization server's
// endpoints by hand; EndpointURLMessage is the refusal of one that
// requests and tokens may not be sent to, after the caller's prefix, with
// the option's name as %s (the value is not repeated: it may hold a
// password). web/rules.js checks the same syntax with the same message.
var EndpointOptions = []string{"authorizationEndpoint", "tokenEndpoint", "revocationEndpoint"}

// EndpointURLMessage: see EndpointOptions.
const EndpointURLMessage = "%s must be an absolute https URL (http only on a loopback host) without fragment or user info"

// checkEndpoints refuses an authorization server endpoint given by hand
// that requests and tokens may not be sent to (oauth.CheckEndpoint).
func (o *ClientOptions) checkEndpoints(what string) error {
	for i, v := range []string{o.AuthorizationEndpoint, o.TokenEndpoint, o.RevocationEndpoint} {
		if v != "" && oauth.CheckEndpoint(EndpointOptions[i], v) != nil {
			return invalid("%s: "+EndpointURLMessage, what, EndpointOptions[i])
		}
	}
	return nil
}

// RelayURLMessage is the refusal of a relay option that is not a relay's
// URL (relay.CheckURL): after the caller's prefix, with the value as %q.
// web/rules.js checks the same syntax with the same message.
const RelayURLMessage = `relay %q must be an absolute https URL (http only on a loopback host) without query, fragment or user info, such as "https://app.example/mcp-relay"`

// EntryRelayMessage is the refusal of a relay that a catalog's server
// entry names on another origin than the page's: after the caller's
// prefix, with the relay as %q. web/rules.js says the same.
const EntryRelayMessage = `relay %q is not on this page's origin: a server entry (which may come from a pasted configuration) may name only a relay of the page's own origin, since a relay sees the server's tokens; give another origin's relay in code, with load({ relay }), catalog({ relay }) or mcp.client(url, { relay })`

// checkRelay refuses a relay option that is not a relay's URL.
func checkRelay(what, r string) error {
	if r != "" && relay.CheckURL(r) != nil {
		return invalid("%s: "+RelayURLMessage, what, r)
	}
	return nil
}

// CheckEntryRelay refuses a relay that a catalog's server entry names on
// another origin than pageOrigin (the page's, as "scheme://host[:port]").
func CheckEntryRelay(what, r, pageOrigin string) error {
	if r == "" {
		return nil
	}
	u, err := url.Parse(r)
	if err != nil {
		return invalid("%s: "+EntryRelayMessage, what, r)
	}
	o, err := relay.NormalizeOrigin(u.Scheme + "://" + u.Host)
	po, perr := relay.NormalizeOrigin(pageOrigin)
	if err != nil || perr != nil || o != po {
		return invalid("%s: "+EntryRelayMessage, what, r)
	}
	return nil
}

// DPoPMode returns the dpop option as an oauth.DPoPMode value: "auto"
// (also when unset), "on" (true) or "off" (false). Decode has checked it.
func (o *ClientOptions) DPoPMode() string {
	switch string(bytes.TrimSpace(o.DPoP)) {
	case "true":
		return "on"
	case "false":
		return "off"
	}
	return "auto"
}

// optionKind is what JS type an option has: "string", "boolean",
// "number", "integer", "array" (of strings), "record" (an object of
// strings), "object", or from a js tag "function" or "any" (its rules
// check it).
func optionKind(f reflect.StructField) string {
	if k := f.Tag.Get("js"); k != "" {
		return k
	}
	t := f.Type
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.String:
		return "string"
	case reflect.Bool:
		return "boolean"
	case reflect.Float64:
		return "number"
	case reflect.Int:
		return "integer"
	case reflect.Slice:
		return "array"
	case reflect.Map:
		return "record"
	}
	return "object"
}

// Option is one option name with its JS kind; an object option made of
// options of its own (breaker, model) lists them in Fields.
type Option struct {
	Name   string   `json:"name"`
	Kind   string   `json:"kind"`
	Fields []Option `json:"fields,omitempty"`
}

// OptionsOf lists the options of an options struct (ClientOptions, …), in
// declaration order.
func OptionsOf(v any) []Option {
	return optionsOf(reflect.TypeOf(v))
}

func optionsOf(t reflect.Type) []Option {
	var out []Option
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		o := Option{Name: name, Kind: optionKind(f)}
		ft := f.Type
		if ft.Kind() == reflect.Pointer {
			ft = ft.Elem()
		}
		if o.Kind == "object" && ft.Kind() == reflect.Struct {
			o.Fields = optionsOf(ft)
		}
		out = append(out, o)
	}
	return out
}

func names(opts []Option) []string {
	var n []string
	for _, o := range opts {
		n = append(n, o.Name)
	}
	return n
}

// Decode reads what options into v (a pointer to an options struct) and
// checks them: an unknown option, a value of the wrong type, or one that
// breaks a rule of the struct's Rules is an invalid_argument error that
// names the option and what it must be. web/rules.js makes the same
// checks in the same order, from the same tables.
func Decode(what string, data []byte, v any) error {
	var rules []Rule
	if r, ok := v.(ruled); ok {
		rules = r.Rules()
	}
	if len(bytes.TrimSpace(data)) == 0 || string(bytes.TrimSpace(data)) == "null" {
		return CheckDecoded(what, rules, nil)
	}
	var o map[string]any
	if err := json.Unmarshal(data, &o); err != nil || o == nil {
		return invalid("%s: options must be an object", what)
	}
	if err := checkKinds(what, OptionsOf(reflect.ValueOf(v).Elem().Interface()), o, ""); err != nil {
		return err
	}
	if err := json.Unmarshal(data, v); err != nil {
		return invalid("%s: %v", what, err)
	}
	if err := CheckDecoded(what, rules, o); err != nil {
		return err
	}
	switch c := v.(type) {
	case *ClientOptions:
		if err := c.checkEndpoints(what); err != nil {
			return err
		}
		return checkRelay(what, c.Relay)
	case *CatalogOptions:
		return checkRelay(what, c.Relay)
	}
	return nil
}

// checkKinds reports the first unknown option (in name order: encoding/json
// matches names without regard to case, and an option spelt differently is
// a mistake to report, not to accept), then the first option of the wrong
// kind (in declaration order).
func checkKinds(what string, opts []Option, o map[string]any, prefix string) error {
	keys := make([]string, 0, len(o))
	for k := range o {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		if !slices.Contains(names(opts), k) {
			return invalid("%s: unknown option %q; known: %s", what, prefix+k, strings.Join(names(opts), ", "))
		}
	}
	for _, opt := range opts {
		v, ok := o[opt.Name]
		if !ok || v == nil {
			continue
		}
		if !fits(opt.Kind, v) {
			return invalid("%s: %s must be %s", what, prefix+opt.Name, article(opt.Kind))
		}
		if m, isObj := v.(map[string]any); isObj && opt.Fields != nil {
			if err := checkKinds(what, opt.Fields, m, prefix+opt.Name+"."); err != nil {
				return err
			}
		}
	}
	return nil
}

// fits says whether v, decoded from JSON, has the JS kind.
func fits(kind string, v any) bool {
	switch kind {
	case "string":
		_, ok := v.(string)
		return ok
	case "boolean", "function": // a function crosses as true
		_, ok := v.(bool)
		return ok
	case "number":
		_, ok := v.(float64)
		return ok
	case "integer":
		n, ok := v.(float64)
		return ok && n == math.Trunc(n) && math.Abs(n) < 1<<53
	case "array":
		l, ok := v.([]any)
		return ok && !slices.ContainsFunc(l, func(e any) bool { _, s := e.(string); return !s })
	case "record":
		m, ok := v.(map[string]any)
		if !ok {
			return false
		}
		for _, e := range m {
			if _, s := e.(string); !s {
				return false
			}
		}
		return true
	case "object":
		_, ok := v.(map[string]any)
		return ok
	case "any": // a rule checks the value
		return true
	}
	panic("jsapi: unknown option kind " + kind)
}

// ruled is an options struct with rules (see Rule).
type ruled interface{ Rules() []Rule }

// Rules are ClientRules.
func (*ClientOptions) Rules() []Rule { return ClientRules }

func article(kind string) string {
	switch kind {
	case "array":
		return "an array"
	case "object", "record":
		return "an object"
	case "integer":
		return "a whole number"
	case "function":
		return "a function"
	}
	return "a " + kind
}

func invalid(format string, args ...any) error {
	return mcperr.New(mcperr.InvalidArgument, format, args...)
}
