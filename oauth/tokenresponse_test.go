package oauth

import (
	"strings"
	"testing"
	"time"

	"github.com/mcpwasm/mcpwasm/mcperr"
)

type fixedClock struct{ t time.Time }

func (c fixedClock) Now() time.Time { return c.t }

// TestTokenResponseValidation: a token response is taken when every field
// is what RFC 6749 §5.1 allows and deployed servers send (VSCHAR tokens,
// any case of Bearer, quoted or float expires_in); no value a request
// header cannot carry, or would carry changed, ever becomes a token.
func TestTokenResponseValidation(t *testing.T) {
	now := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	long := strings.Repeat("a", maxTokenLen+1)
	for _, tc := range []struct {
		name, body string
		want       string // "" accepts; else a part of the error
		expiry     time.Duration
	}{
		{"minimal", `{"access_token":"abc","token_type":"Bearer"}`, "", 0},
		{"lower-case type", `{"access_token":"abc","token_type":"bearer","expires_in":3600}`, "", time.Hour},
		{"jwt with padding", `{"access_token":"eyJ.eyJ-_~+/x==","token_type":"Bearer","refresh_token":"r !~","scope":"a b:c"}`, "", 0},
		// @cloudflare/workers-oauth-provider: user:grant:secret tokens,
		// lower-case bearer, an empty scope and RFC 8707's resource.
		{"cloudflare workers-oauth-provider", `{"access_token":"alice:6YKn06W2SZ9t274e:MxMYQXVUL1jJ","token_type":"bearer","expires_in":3600,` +
			`"refresh_token":"alice:6YKn06W2SZ9t274e:Rk2xYbq0","scope":"","resource":"https://mcp.example/mcp"}`, "", time.Hour},
		{"every VSCHAR", `{"access_token":"a !\"#$%&'()*+,-./09:;<=>?@AZ[\\]^_` + "`" + `az{|}~z","token_type":"Bearer"}`, "", 0},
		{"OpenID and provider extras", `{"access_token":"abc","token_type":"Bearer","id_token":"eyJ.e.s","refresh_token_expires_in":86400,` +
			`"ext_expires_in":3600,"not-before-policy":0,"session_state":"x","scope":"openid profile"}`, "", 0},
		{"DPoP in capitals", `{"access_token":"abc","token_type":"DPOP"}`, "", 0},
		{"numeric string expires_in", `{"access_token":"abc","token_type":"Bearer","expires_in":"60"}`, "", time.Minute},
		{"float expires_in", `{"access_token":"abc","token_type":"Bearer","expires_in":3600.0}`, "", time.Hour},
		{"exponent expires_in", `{"access_token":"abc","token_type":"Bearer","expires_in":3.6e3}`, "", time.Hour},
		{"fractional expires_in rounds down", `{"access_token":"abc","token_type":"Bearer","expires_in":60.9}`, "", time.Minute},
		{"zero expires_in is unknown", `{"access_token":"abc","token_type":"Bearer","expires_in":0}`, "", 0},
		{"int32 max expires_in is unknown", `{"access_token":"abc","token_type":"Bearer","expires_in":2147483647}`, "", 0},
		{"huge expires_in is unknown", `{"access_token":"abc","token_type":"Bearer","expires_in":1e300}`, "", 0},
		{"huge digits expires_in is unknown", `{"access_token":"abc","token_type":"Bearer","expires_in":"99999999999999999999999"}`, "", 0},
		{"null fields", `{"access_token":"abc","token_type":"Bearer","refresh_token":null,"expires_in":null,"scope":null}`, "", 0},
		{"scope list", `{"access_token":"abc","token_type":"Bearer","scope":["a","b:c"]}`, "", 0},
		{"CR LF in token", `{"access_token":"abc\r\nX-Injected: 1","token_type":"Bearer"}`, "Authorization header cannot carry", 0},
		{"tab in token", `{"access_token":"abc\tdef","token_type":"Bearer"}`, "Authorization header cannot carry", 0},
		{"NUL in token", `{"access_token":"abc\u0000def","token_type":"Bearer"}`, "Authorization header cannot carry", 0},
		{"DEL in token", `{"access_token":"abc\u007fdef","token_type":"Bearer"}`, "Authorization header cannot carry", 0},
		{"non-ASCII token", `{"access_token":"abc-€✓","token_type":"Bearer"}`, "Authorization header cannot carry", 0},
		{"space inside token", `{"access_token":"abc def","token_type":"Bearer"}`, "", 0},
		{"leading space", `{"access_token":" abc","token_type":"Bearer"}`, "begins or ends with a space", 0},
		{"trailing space", `{"access_token":"abc ","token_type":"Bearer"}`, "begins or ends with a space", 0},
		{"only a space", `{"access_token":" ","token_type":"Bearer"}`, "begins or ends with a space", 0},
		{"control in refresh token", `{"access_token":"abc","token_type":"Bearer","refresh_token":"r\u0000"}`, "refresh_token", 0},
		{"non-ASCII refresh token", `{"access_token":"abc","token_type":"Bearer","refresh_token":"ré"}`, "refresh_token", 0},
		{"huge token", `{"access_token":"` + long + `","token_type":"Bearer"}`, "longer than", 0},
		{"huge refresh token", `{"access_token":"a","token_type":"Bearer","refresh_token":"` + long + `"}`, "longer than", 0},
		{"missing access_token", `{"token_type":"Bearer"}`, "no access_token", 0},
		{"empty access_token", `{"access_token":"","token_type":"Bearer"}`, "empty access_token", 0},
		{"numeric access_token", `{"access_token":42,"token_type":"Bearer"}`, "is a number", 0},
		{"object refresh_token", `{"access_token":"a","token_type":"Bearer","refresh_token":{}}`, "is a object", 0},
		{"missing token_type", `{"access_token":"abc"}`, "no token_type", 0},
		{"unknown token_type", `{"access_token":"abc","token_type":"mac"}`, "want Bearer or DPoP", 0},
		{"dpop token_type", `{"access_token":"abc","token_type":"DPoP","expires_in":3600}`, "", time.Hour},
		{"negative expires_in", `{"access_token":"abc","token_type":"Bearer","expires_in":-1}`, "out of range", 0},
		{"negative fraction expires_in", `{"access_token":"abc","token_type":"Bearer","expires_in":-0.5}`, "out of range", 0},
		{"word expires_in", `{"access_token":"abc","token_type":"Bearer","expires_in":"soon"}`, "not a number", 0},
		{"NaN expires_in", `{"access_token":"abc","token_type":"Bearer","expires_in":"NaN"}`, "not a number", 0},
		{"bool expires_in", `{"access_token":"abc","token_type":"Bearer","expires_in":true}`, "is a boolean", 0},
		{"quote in scope", `{"access_token":"abc","token_type":"Bearer","scope":"a\"b"}`, "scope", 0},
		{"number in scope list", `{"access_token":"abc","token_type":"Bearer","scope":["a",1]}`, "scope", 0},
		{"space in scope list entry", `{"access_token":"abc","token_type":"Bearer","scope":["a b"]}`, "scope", 0},
		{"object scope", `{"access_token":"abc","token_type":"Bearer","scope":{}}`, "scope is a object", 0},
		{"array", `[{"access_token":"abc","token_type":"Bearer"}]`, "not a JSON object", 0},
		{"html", `<html>hi</html>`, "not a JSON object", 0},
		{"null", `null`, "not a JSON object", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr, err := parseTokenResponse([]byte(tc.body), fixedClock{now})
			if tc.want == "" {
				if err != nil {
					t.Fatalf("rejected: %v", err)
				}
				if got := tr.expiry; (tc.expiry == 0 && !got.IsZero()) || (tc.expiry != 0 && !got.Equal(now.Add(tc.expiry))) {
					t.Errorf("expiry = %v; want now+%v", got, tc.expiry)
				}
				return
			}
			if err == nil {
				t.Fatalf("accepted %+v; want an error saying %q", tr, tc.want)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q; want it to say %q", err, tc.want)
			}
			if c := mcperr.CodeOf(err, ""); c != mcperr.TokenFailed {
				t.Errorf("code = %q; want token_failed", c)
			}
			if strings.Contains(err.Error(), "X-Injected") || strings.Contains(err.Error(), long[:100]) {
				t.Errorf("error %q quotes the token", err)
			}
		})
	}
}
