package oauth

import (
	"crypto"
	"crypto/rand"
	"crypto/sha256"
	"encoding/asn1"
	"encoding/base64"
	"encoding/json"
	"math/big"
	"time"

	"github.com/mcpwasm/mcpwasm/mcperr"
)

// assertionLifetime is how long a private_key_jwt client assertion is
// valid (RFC 7523 §3: short; at most 5 minutes here).
const assertionLifetime = 5 * time.Minute

// clientAssertion makes the private_key_jwt client assertion (RFC 7523
// §2.2 and §3): iss = sub = clientID, aud = the authorization server's
// issuer, iat, exp (iat + 5 min), a random jti; signed ES256 with key.
func clientAssertion(key crypto.Signer, kid, clientID, issuer string, now time.Time) (string, error) {
	hdr := map[string]string{"alg": "ES256", "typ": "JWT"}
	if kid != "" {
		hdr["kid"] = kid
	}
	claims := map[string]any{
		"iss": clientID,
		"sub": clientID,
		"aud": issuer,
		"iat": now.Unix(),
		"exp": now.Add(assertionLifetime).Unix(),
		"jti": rand.Text(),
	}
	return signES256(key, hdr, claims)
}

// signES256 returns the compact JWS of claims under hdr, signed by key
// (an ECDSA P-256 crypto.Signer): the signature is r‖s, 64 bytes
// (RFC 7518 §3.4).
func signES256(key crypto.Signer, hdr map[string]string, claims map[string]any) (string, error) {
	h, err := json.Marshal(hdr)
	if err != nil {
		return "", err
	}
	c, err := json.Marshal(claims)
	if err != nil {
		return "", err
	}
	b64 := base64.RawURLEncoding.EncodeToString
	input := b64(h) + "." + b64(c)
	sum := sha256.Sum256([]byte(input))
	der, err := key.Sign(rand.Reader, sum[:], crypto.SHA256)
	if err != nil {
		// The key's own error may say anything; it is not quoted.
		return "", newErr(mcperr.TokenFailed, "signing the client assertion failed", nil)
	}
	var sig struct{ R, S *big.Int }
	if rest, err := asn1.Unmarshal(der, &sig); err != nil || len(rest) != 0 || sig.R == nil || sig.S == nil ||
		sig.R.Sign() <= 0 || sig.S.Sign() <= 0 || sig.R.BitLen() > 256 || sig.S.BitLen() > 256 {
		return "", newErr(mcperr.TokenFailed, "the signing key returned no ECDSA signature", nil)
	}
	raw := make([]byte, 64)
	sig.R.FillBytes(raw[:32])
	sig.S.FillBytes(raw[32:])
	return input + "." + b64(raw), nil
}
