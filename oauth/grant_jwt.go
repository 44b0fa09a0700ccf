package oauth

import (
	"crypto"
	"crypto/rand"
	"errors"
	"time"

	"github.com/mcpwasm/mcpwasm/internal/jws"
	"github.com/mcpwasm/mcpwasm/mcperr"
)

// assertionLifetime is how long a private_key_jwt client assertion is
// valid (RFC 7523 §3: short; at most 5 minutes here).
const assertionLifetime = 5 * time.Minute

// clientAssertion makes the private_key_jwt client assertion (RFC 7523
// §2.2 and §3): iss = sub = clientID, aud = the authorization server's
// issuer, iat, exp (iat + 5 min), a random jti; signed ES256 with key
// (an ECDSA P-256 crypto.Signer).
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
	jwt, err := jws.Sign(hdr, claims, jws.Signer(key))
	switch {
	case errors.Is(err, jws.ErrNotECDSA):
		return "", newErr(mcperr.TokenFailed, "the signing key returned no ECDSA signature", nil)
	case err != nil:
		// The key's own error may say anything; it is not quoted.
		return "", newErr(mcperr.TokenFailed, "signing the client assertion failed", nil)
	}
	return jwt, nil
}
