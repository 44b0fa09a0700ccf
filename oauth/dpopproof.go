package oauth

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/mcpwasm/mcpwasm/internal/jws"
	"github.com/mcpwasm/mcpwasm/mcperr"
)

// dpopAlg is the one proof algorithm this package signs with.
const dpopAlg = jws.Alg

// dpopKeyID names the proof key of a client registration: one key per
// authorization server and client ID, shared by every grant of that
// client, reused for its refreshes.
func dpopKeyID(issuer, clientID string) string { return "dpop " + issuer + " " + clientID }

// keysOr returns keys, or the process's in-memory keys when nil.
func keysOr(keys DPoPKeys) DPoPKeys {
	if keys != nil {
		return keys
	}
	return defaultDPoPKeys
}

// dpopKey returns the key named id, checked to be a P-256 public key in
// JWK form (the browser's comes from outside Go).
func dpopKey(ctx context.Context, keys DPoPKeys, id string) (DPoPKey, error) {
	k, err := keysOr(keys).Key(ctx, id)
	if err != nil {
		return nil, newErr(mcperr.Storage, "reading the DPoP key", err)
	}
	if k == nil {
		return nil, newErr(mcperr.Storage, "the DPoP key store returned no key", nil)
	}
	x, y := k.PublicJWK()
	if !isCoord(x) || !isCoord(y) {
		return nil, newErr(mcperr.Storage, "the DPoP key's public coordinates are not base64url of 32 bytes", nil)
	}
	return k, nil
}

// storedDPoPKey is dpopKey read from storage, past any in-memory copy
// ([DPoPKeyCopies]): the key of a token request, whose grant another page
// may have bound to a key that replaced the copied one. An authorization
// server refusing a stale key would cost the grant (a refused refresh
// drops it, for every tab); token requests are few, so the read is cheap.
func storedDPoPKey(ctx context.Context, keys DPoPKeys, id string) (DPoPKey, error) {
	if copies, ok := keys.(DPoPKeyCopies); ok {
		copies.ForgetCopy(id)
	}
	return dpopKey(ctx, keys, id)
}

func isCoord(s string) bool {
	b, err := base64.RawURLEncoding.DecodeString(s)
	return err == nil && len(b) == 32
}

// dpopThumbprint is the RFC 7638 JWK SHA-256 thumbprint of key's public
// key, as sent in dpop_jkt (RFC 9449 §10) and bound as cnf.jkt.
func dpopThumbprint(key DPoPKey) string {
	return jws.Thumbprint(key.PublicJWK())
}

// dpopHTU is the htu claim of a request to u: the URI without query and
// fragment (RFC 9449 §4.2), scheme and host in lower case.
func dpopHTU(u *url.URL) string {
	return strings.ToLower(u.Scheme) + "://" + strings.ToLower(u.Host) + u.EscapedPath()
}

type dpopJWK struct {
	Kty string `json:"kty"`
	Crv string `json:"crv"`
	X   string `json:"x"`
	Y   string `json:"y"`
}

type dpopHeader struct {
	Typ string  `json:"typ"`
	Alg string  `json:"alg"`
	JWK dpopJWK `json:"jwk"`
}

type dpopClaims struct {
	JTI   string `json:"jti"`
	HTM   string `json:"htm"`
	HTU   string `json:"htu"`
	IAT   int64  `json:"iat"`
	ATH   string `json:"ath,omitempty"`
	Nonce string `json:"nonce,omitempty"`
}

// dpopProof builds a DPoP proof JWT (RFC 9449 §4.2) for a request of
// method to u, signed by key: a fresh jti (130 random bits) each time,
// iat from the real clock (the server compares it with its own), ath when
// an access token is presented with it, nonce when the server gave one.
func dpopProof(ctx context.Context, key DPoPKey, method string, u *url.URL, accessToken, nonce string) (string, error) {
	x, y := key.PublicJWK()
	hdr := dpopHeader{Typ: "dpop+jwt", Alg: dpopAlg, JWK: dpopJWK{Kty: "EC", Crv: "P-256", X: x, Y: y}}
	c := dpopClaims{JTI: rand.Text(), HTM: method, HTU: dpopHTU(u), IAT: time.Now().Unix(), Nonce: nonce}
	if accessToken != "" {
		sum := sha256.Sum256([]byte(accessToken))
		c.ATH = base64.RawURLEncoding.EncodeToString(sum[:])
	}
	return jws.Sign(hdr, c, func(input []byte) ([]byte, error) {
		sig, err := key.Sign(ctx, input)
		if err != nil {
			return nil, newErr(mcperr.TokenFailed, "signing a DPoP proof failed", err)
		}
		if len(sig) != jws.SignatureSize {
			return nil, newErr(mcperr.TokenFailed, fmt.Sprintf("the DPoP key returned a %d-byte signature, not r‖s of 64 bytes", len(sig)), nil)
		}
		return sig, nil
	})
}

// maxNonce bounds a DPoP-Nonce kept from a server.
const maxNonce = 1024

// nonceCache keeps the newest DPoP-Nonce (RFC 9449 §8, §9) each server
// gave, by origin, in memory.
type nonceCache struct {
	mu sync.Mutex
	m  map[string]string
}

// The nonces of authorization servers (token endpoints) and of resource
// servers are kept apart: one origin may serve both roles with different
// nonces.
var asNonces, rsNonces nonceCache

// maxNonceOrigins bounds a nonceCache; past it, it starts over.
const maxNonceOrigins = 256

func originKey(u *url.URL) string { return strings.ToLower(u.Scheme) + "://" + strings.ToLower(u.Host) }

func (c *nonceCache) get(u *url.URL) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.m[originKey(u)]
}

// saw keeps the DPoP-Nonce of resp, an answer from u's origin, when it
// has a valid one (1*NQCHAR, bounded), and reports it.
func (c *nonceCache) saw(u *url.URL, resp *http.Response) string {
	n := resp.Header.Get("DPoP-Nonce")
	if n == "" || len(n) > maxNonce || !isNonce(n) {
		return ""
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil || len(c.m) >= maxNonceOrigins {
		c.m = map[string]string{}
	}
	c.m[originKey(u)] = n
	return n
}

// isNonce reports whether s is 1*NQCHAR (RFC 9449 §8.1).
func isNonce(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x21 || c > 0x7e || c == '"' || c == '\\' {
			return false
		}
	}
	return s != ""
}

// useDPoP decides whether a flow with the authorization server whose
// dpop_signing_alg_values_supported is algs asks for DPoP-bound tokens.
func useDPoP(mode DPoPMode, issuer string, algs []string) (bool, error) {
	supported := false
	for _, a := range algs {
		supported = supported || a == dpopAlg
	}
	switch mode {
	case DPoPOff:
		return false, nil
	case DPoPOn:
		if !supported {
			return false, discoveryErr(fmt.Sprintf("authorization server %q does not advertise DPoP with ES256 (dpop_signing_alg_values_supported=%q) and this client requires DPoP (dpop: true, Config.DPoP on); set it to \"auto\" to accept Bearer tokens from this server", sanitize(issuer), sanitizeList(algs)), nil)
		}
		return true, nil
	}
	return supported, nil
}

// grantTokenType checks a token response's token_type against whether a
// proof was sent (dpop) and whether DPoP is required, and returns how
// the access token is presented: "DPoP" or "Bearer".
func grantTokenType(tokenType string, dpop, required bool) (string, error) {
	switch {
	case strings.EqualFold(tokenType, "DPoP"):
		if !dpop {
			return "", tokenErr("token response has token_type DPoP, but the request carried no DPoP proof", nil)
		}
		return "DPoP", nil
	case required:
		return "", tokenErr("the authorization server issued a Bearer token though this client requires DPoP (dpop: true, Config.DPoP on): the token is not bound to the key; set dpop to \"auto\" to accept Bearer tokens from this server", nil)
	}
	return "Bearer", nil
}

// isNonceChallenge reports a resource server's 401 asking for a DPoP nonce
// (RFC 9449 §9): WWW-Authenticate DPoP error="use_dpop_nonce".
func isNonceChallenge(resp *http.Response) bool {
	if resp.StatusCode != http.StatusUnauthorized {
		return false
	}
	for _, c := range parseWWWAuthenticate(resp.Header.Values("WWW-Authenticate")) {
		if c.scheme == "dpop" && c.params["error"] == "use_dpop_nonce" {
			return true
		}
	}
	return false
}
