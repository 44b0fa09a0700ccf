package jsapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/mcpwasm/mcpwasm/mcperr"
)

// ClientOptions are the options of mcp.client(url, options), as JSON. A
// function-valued option (accessToken, identityAssertion) arrives as true:
// mcp.js keeps the function and tells Go that there is one.
type ClientOptions struct {
	ClientName            string            `json:"clientName,omitempty"`
	RedirectURI           string            `json:"redirectUri,omitempty"`
	Scopes                []string          `json:"scopes,omitempty"`
	ClientID              string            `json:"clientId,omitempty"`
	ClientMetadataURL     string            `json:"clientMetadataUrl,omitempty"`
	ClientSecret          string            `json:"clientSecret,omitempty"`
	Headers               map[string]string `json:"headers,omitempty"`
	AccessToken           bool              `json:"accessToken,omitempty" js:"function"`
	Storage               string            `json:"storage,omitempty"`
	Interactive           bool              `json:"interactive,omitempty"`
	AuthMode              string            `json:"authMode,omitempty"`
	AuthTimeoutMs         *float64          `json:"authTimeoutMs,omitempty"`
	SeveredPopupTimeoutMs *float64          `json:"severedPopupTimeoutMs,omitempty"`
	Transport             string            `json:"transport,omitempty"`
	// DPoP is "auto", true or false (see [ClientOptions.DPoPMode]).
	DPoP json.RawMessage `json:"dpop,omitempty" js:"string|boolean"`
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
}

// DPoPMode returns the dpop option as an oauth.DPoPMode value: "auto"
// (also when unset), "on" (true) or "off" (false). Validate has checked it.
func (o *ClientOptions) DPoPMode() string {
	switch string(bytes.TrimSpace(o.DPoP)) {
	case "true":
		return "on"
	case "false":
		return "off"
	}
	return "auto"
}

// optionKind is what JS type an option has: "string", "boolean", "number",
// "array", "object" or "function".
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
	case reflect.Float64, reflect.Int:
		return "number"
	case reflect.Slice:
		return "array"
	}
	return "object"
}

// Option is one option name with its JS kind.
type Option struct {
	Name string
	Kind string
}

// OptionsOf lists the options of an options struct (ClientOptions, …), in
// declaration order.
func OptionsOf(v any) []Option {
	t := reflect.TypeOf(v)
	var out []Option
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		out = append(out, Option{name, optionKind(f)})
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

// Decode reads what options into v (a pointer to an options struct): an
// unknown option, or a value of the wrong type, is an invalid_argument
// error that names the option and what it must be.
func Decode(what string, data []byte, v any) error {
	if len(bytes.TrimSpace(data)) == 0 || string(bytes.TrimSpace(data)) == "null" {
		return nil
	}
	opts := OptionsOf(reflect.ValueOf(v).Elem().Interface())
	// encoding/json matches names without regard to case; an option
	// spelt differently is a mistake to report, not to accept.
	var keys map[string]json.RawMessage
	if err := json.Unmarshal(data, &keys); err != nil {
		return invalid("%s: options must be an object", what)
	}
	for k := range keys {
		if !slices.Contains(names(opts), k) {
			return invalid("%s: unknown option %q; known: %s", what, k, strings.Join(names(opts), ", "))
		}
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	err := dec.Decode(v)
	if err == nil {
		return nil
	}
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &te):
		name, _, _ := strings.Cut(te.Field, ".")
		for _, o := range opts {
			if o.Name == name {
				return invalid("%s: %s must be %s", what, name, article(o.Kind))
			}
		}
		return invalid("%s: %s has the wrong type", what, te.Field)
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		field := strings.Trim(strings.TrimPrefix(err.Error(), "json: unknown field "), `"`)
		return invalid("%s: unknown option %q; known: %s", what, field, strings.Join(names(opts), ", "))
	}
	return invalid("%s: %v", what, err)
}

func article(kind string) string {
	switch kind {
	case "array":
		return "an array"
	case "object":
		return "an object"
	case "function":
		return "a function"
	}
	return "a " + kind
}

func invalid(format string, args ...any) error {
	return mcperr.New(mcperr.InvalidArgument, format, args...)
}

// Validate checks the values of the options (their types were checked by
// Decode) and fills in defaults that do not depend on the page.
func (o *ClientOptions) Validate() error {
	oneOf := func(name, v string, allowed ...string) error {
		if v != "" && !slices.Contains(allowed, v) {
			return invalid("client(): %s must be %s", name, quoteList(allowed))
		}
		return nil
	}
	positive := func(name string, v *float64) error {
		if v != nil && !(*v > 0) {
			return invalid("client(): %s must be a positive number of milliseconds", name)
		}
		return nil
	}
	for _, err := range []error{
		oneOf("storage", o.Storage, "indexeddb", "memory"),
		oneOf("authMode", o.AuthMode, "popup", "redirect"),
		oneOf("transport", o.Transport, "auto", "streamable", "sse"),
		positive("authTimeoutMs", o.AuthTimeoutMs),
		positive("severedPopupTimeoutMs", o.SeveredPopupTimeoutMs),
	} {
		if err != nil {
			return err
		}
	}
	if d := string(bytes.TrimSpace(o.DPoP)); d != "" && d != `"auto"` && d != "true" && d != "false" {
		return invalid(`client(): dpop must be "auto", true or false`)
	}
	if o.AuthMode == "redirect" && o.Storage == "memory" {
		return invalid(`client(): authMode "redirect" needs storage "indexeddb": the page is gone while the user signs in`)
	}
	if o.ClientSecret != "" && o.ClientID == "" {
		return invalid("client(): clientSecret needs clientId (a secret belongs to a pre-registered client)")
	}
	return o.validateGrant()
}

// validateGrant checks the options of the sign-in without a popup
// (identityAssertion and the idp… options) and refuses the grants a page
// must not run (grant "client_credentials", "workload_identity").
func (o *ClientOptions) validateGrant() error {
	switch o.Grant {
	case "", "authorization_code":
	case "client_credentials":
		return invalid(`client(): grant "client_credentials" is refused in a page: its client secret or private key would be public to everyone who loads the page. Run that grant on a server (the Go package oauth, Config.ClientCredentials) and hand the page its tokens through accessToken`)
	case "workload_identity":
		return invalid(`client(): grant "workload_identity" is refused in a page: a workload identity belongs to a server, and its credential would be public to everyone who loads the page. Run that grant on a server (the Go package oauth, Config.WorkloadIdentity) and hand the page its tokens through accessToken`)
	default:
		return invalid(`client(): grant must be "authorization_code" (refused in a page: "client_credentials", "workload_identity")`)
	}
	if !o.IdentityAssertion {
		for _, f := range []struct{ name, v string }{
			{"idpTokenEndpoint", o.IdPTokenEndpoint}, {"idpIssuer", o.IdPIssuer}, {"idpClientId", o.IdPClientID},
			{"idpClientSecret", o.IdPClientSecret}, {"idpSubjectTokenType", o.IdPSubjectTokenType},
		} {
			if f.v != "" {
				return invalid("client(): %s needs identityAssertion (the function returning the user's ID token)", f.name)
			}
		}
		return nil
	}
	switch {
	case o.AccessToken:
		return invalid("client(): identityAssertion and accessToken exclude each other: the page supplies either its tokens or the user's ID token")
	case o.Grant != "":
		return invalid("client(): identityAssertion signs in by enterprise-managed authorization; leave grant unset")
	case o.IdPTokenEndpoint == "" && o.IdPIssuer == "":
		return invalid("client(): identityAssertion needs idpTokenEndpoint or idpIssuer (the identity provider that exchanges the ID token)")
	case o.IdPClientID == "":
		return invalid("client(): identityAssertion needs idpClientId (this app's client ID at the identity provider)")
	case o.ClientID == "":
		return invalid("client(): identityAssertion needs clientId (this app's client ID at the MCP server's authorization server)")
	case o.ClientMetadataURL != "":
		return invalid("client(): clientMetadataUrl is for the popup sign-in; leave it unset with identityAssertion")
	}
	return nil
}

func quoteList(l []string) string {
	q := make([]string, len(l))
	for i, s := range l {
		q[i] = fmt.Sprintf("%q", s)
	}
	if len(q) == 1 {
		return q[0]
	}
	return strings.Join(q[:len(q)-1], ", ") + " or " + q[len(q)-1]
}
