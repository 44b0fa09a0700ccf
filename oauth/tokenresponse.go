package oauth

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// maxTokenLen bounds access and refresh tokens. A token travels in a request
// header on every MCP request; servers refuse headers far smaller than the
// 1 MiB a token response may be, so a larger token can only be hostile.
const maxTokenLen = 16 << 10

// parseTokenResponse validates a successful token response (RFC 6749 §5.1)
// before anything of it is stored: every field of the right JSON type,
// access_token printable ASCII (VSCHAR, RFC 6749 Appendix A.12) that an
// Authorization header carries unchanged (see [checkAccessToken]),
// refresh_token VSCHAR (Appendix A.17), token_type Bearer or DPoP in any
// case (RFC 9449 §5; whether it fits the request is the caller's check),
// expires_in per [parseExpiresIn], scope NQCHAR words (§3.3) as a string or,
// leniently, a list of them. Members it does not know (resource, id_token,
// refresh_token_expires_in, ...) are ignored. Nothing a server sends can
// reach a request header unless it is a valid header value. Errors are
// [ErrTokenFailed]-coded and never quote a token.
func parseTokenResponse(body []byte, clk Clock) (*tokenResponse, error) {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var fields map[string]any
	if err := dec.Decode(&fields); err != nil || fields == nil {
		return nil, tokenErr("token response is not a JSON object", nil)
	}
	str := func(name string, required bool) (string, error) {
		v, ok := fields[name]
		if !ok || v == nil {
			if required {
				return "", tokenErr("token response has no "+name, nil)
			}
			return "", nil
		}
		s, ok := v.(string)
		if !ok {
			return "", tokenErr(fmt.Sprintf("token response %s is a %s, not a string", name, jsonKind(v)), nil)
		}
		return s, nil
	}
	var tr tokenResponse
	var err error
	if tr.AccessToken, err = str("access_token", true); err != nil {
		return nil, err
	}
	if tr.TokenType, err = str("token_type", true); err != nil {
		return nil, err
	}
	if tr.RefreshToken, err = str("refresh_token", false); err != nil {
		return nil, err
	}
	if tr.Scope, err = scopeField(fields["scope"]); err != nil {
		return nil, err
	}
	if err := checkAccessToken(tr.AccessToken); err != nil {
		return nil, err
	}
	switch {
	case len(tr.RefreshToken) > maxTokenLen:
		return nil, tokenErr(fmt.Sprintf("token response refresh_token is longer than %d bytes", maxTokenLen), nil)
	case !isVSChars(tr.RefreshToken):
		return nil, tokenErr("token response refresh_token has characters outside printable ASCII (RFC 6749 Appendix A.17)", nil)
	case !strings.EqualFold(tr.TokenType, "bearer") && !strings.EqualFold(tr.TokenType, "dpop"):
		return nil, tokenErr(fmt.Sprintf("token response has token_type %q, want Bearer or DPoP", sanitize(tr.TokenType)), nil)
	}
	raw, err := expiresInRaw(fields["expires_in"])
	if err != nil {
		return nil, err
	}
	secs, err := parseExpiresIn(raw)
	if err != nil {
		return nil, tokenErr("token response rejected", err)
	}
	if secs > 0 {
		tr.issued = wallNow(clk)
		tr.expiry = tr.issued.Add(time.Duration(secs) * time.Second)
	}
	return &tr, nil
}

// checkAccessToken accepts what RFC 6749 Appendix A.12 allows an access
// token to be, 1*VSCHAR (printable ASCII, %x20-7E: JWTs, RFC 6750
// b64tokens, and the user:grant:secret tokens of Cloudflare's
// workers-oauth-provider alike), within [maxTokenLen]. It refuses what an
// Authorization header cannot carry (controls, CR LF, NUL, DEL, non-ASCII)
// and a token that begins or ends with a space: HTTP drops those spaces
// from a header value (RFC 9110 §5.5; fetch's Headers does too), so the
// server would receive another token than it issued and refuse every
// request with it. A space inside travels unchanged and is kept.
func checkAccessToken(tok string) error {
	switch {
	case tok == "":
		return tokenErr("token response has an empty access_token", nil)
	case len(tok) > maxTokenLen:
		return tokenErr(fmt.Sprintf("token response access_token is longer than %d bytes", maxTokenLen), nil)
	case !isVSChars(tok):
		return tokenErr("token response access_token has characters an Authorization header cannot carry (only printable ASCII is allowed, RFC 6749 Appendix A.12)", nil)
	case tok[0] == ' ' || tok[len(tok)-1] == ' ':
		return tokenErr("token response access_token begins or ends with a space, which HTTP drops from a header value: the server would receive another token than it issued", nil)
	}
	return nil
}

// scopeField reads scope: absent, null or a space-separated string of
// NQCHAR scope tokens (RFC 6749 §3.3; "" is an empty list). A JSON array of
// scope tokens is not what §5.1 defines, but means the same list and is
// taken as such; anything else is refused.
func scopeField(v any) (string, error) {
	switch v := v.(type) {
	case nil:
		return "", nil
	case string:
		if !isScopeList(v) {
			return "", tokenErr("token response scope has characters outside RFC 6749 §3.3", nil)
		}
		return v, nil
	case []any:
		words := make([]string, 0, len(v))
		for _, e := range v {
			w, ok := e.(string)
			if !ok || w == "" || strings.Contains(w, " ") || !isScopeList(w) {
				return "", tokenErr("token response scope is a list with an entry that is not an RFC 6749 §3.3 scope token", nil)
			}
			words = append(words, w)
		}
		return strings.Join(words, " "), nil
	}
	return "", tokenErr(fmt.Sprintf("token response scope is a %s, not a string", jsonKind(v)), nil)
}

// expiresInRaw gives expires_in back as JSON for [parseExpiresIn]: a
// number, or a string of digits (some servers quote it); anything else
// (an object, a bool, an array) is refused.
func expiresInRaw(v any) (json.RawMessage, error) {
	switch v := v.(type) {
	case nil:
		return nil, nil
	case json.Number:
		return json.RawMessage(v.String()), nil
	case string:
		b, _ := json.Marshal(v)
		return b, nil
	default:
		return nil, tokenErr(fmt.Sprintf("token response expires_in is a %s, not a number", jsonKind(v)), nil)
	}
}

func jsonKind(v any) string {
	switch v.(type) {
	case string:
		return "string"
	case json.Number:
		return "number"
	case bool:
		return "boolean"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return "value"
}

// isB64Token reports whether s is an RFC 6750 §2.1 b64token:
// 1*( ALPHA / DIGIT / "-" / "." / "_" / "~" / "+" / "/" ) *"=".
func isB64Token(s string) bool {
	i := 0
	for ; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' ||
			c == '-' || c == '.' || c == '_' || c == '~' || c == '+' || c == '/') {
			break
		}
	}
	if i == 0 {
		return false
	}
	for ; i < len(s); i++ {
		if s[i] != '=' {
			return false
		}
	}
	return true
}

// isVSChars reports whether s holds only VSCHAR (%x20-7E).
func isVSChars(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] > 0x7e {
			return false
		}
	}
	return true
}

// isScopeList reports whether s is a space-separated list of scope tokens
// (NQCHAR: %x21 / %x23-5B / %x5D-7E).
func isScopeList(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != ' ' && (c < 0x21 || c > 0x7e || c == '"' || c == '\\') {
			return false
		}
	}
	return true
}
