// Package jws makes and checks compact JSON Web Signatures (RFC 7515)
// signed with ES256 (RFC 7518 §3.4: ECDSA on P-256 over SHA-256, the
// signature r‖s in 64 bytes), and converts P-256 public keys to and from
// their JWK coordinates (RFC 7518 §6.2.1) and RFC 7638 thumbprints.
//
// It knows ES256 only, on purpose: every JWS this module makes or checks
// (DPoP proofs, private_key_jwt client assertions, the demo IdP's ID
// tokens and ID-JAGs) is ES256, and a parser that accepts one algorithm
// cannot be talked into "none", or into HMAC keyed with a public key.
// It is pure Go: package oauth uses it in the browser build too.
package jws

import (
	"bytes"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"encoding/asn1"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"strings"
)

// Alg is the one JWS algorithm made and accepted here.
const Alg = "ES256"

// SignatureSize is the length of an ES256 signature: r‖s, 32 bytes each.
const SignatureSize = 64

// The refusals of [Parse] and [Token.Verify], and of a signature that is
// not r‖s ([ErrNotECDSA], from [Sign] and [Signer]); callers tell them
// apart with errors.Is.
var (
	ErrTooLong      = errors.New("jws: longer than the limit")
	ErrNotCompact   = errors.New("jws: not a compact JWS (three parts separated by dots)")
	ErrHeader       = errors.New("jws: the header is not base64url of a JSON object")
	ErrAlg          = errors.New("jws: alg must be ES256")
	ErrClaims       = errors.New("jws: the claims are not base64url of a JSON object")
	ErrSignature    = errors.New("jws: the signature is not 64 bytes of base64url")
	ErrBadSignature = errors.New("jws: the signature does not verify")
	ErrNotECDSA     = errors.New("jws: the key returned no ECDSA P-256 signature")
)

// b64 is the JWS encoding: base64url without padding; decoding refuses
// non-zero trailing bits, so each part has one spelling.
var b64 = base64.RawURLEncoding.Strict()

// SignFunc signs a JWS signing input with an ES256 key: it returns r‖s,
// [SignatureSize] bytes, over SHA-256 of input.
type SignFunc func(input []byte) ([]byte, error)

// Sign returns the compact JWS of claims under header, each marshalled by
// encoding/json, signed by sign. The header should say alg ES256; Sign
// does not check, so that tests can forge what [Parse] must refuse. An
// error of sign is returned as it is, so a caller's own errors pass
// through.
func Sign(header, claims any, sign SignFunc) (string, error) {
	h, err := json.Marshal(header)
	if err != nil {
		return "", fmt.Errorf("jws: encoding the header: %w", err)
	}
	c, err := json.Marshal(claims)
	if err != nil {
		return "", fmt.Errorf("jws: encoding the claims: %w", err)
	}
	input := b64.EncodeToString(h) + "." + b64.EncodeToString(c)
	sig, err := sign([]byte(input))
	if err != nil {
		return "", err
	}
	if len(sig) != SignatureSize {
		return "", fmt.Errorf("%w: %d bytes", ErrNotECDSA, len(sig))
	}
	return input + "." + b64.EncodeToString(sig), nil
}

// Signer returns the [SignFunc] of key, an ECDSA P-256 crypto.Signer (an
// *ecdsa.PrivateKey, or a key held elsewhere): it hashes with SHA-256 and
// turns the ASN.1 DER signature key returns into r‖s. The key's own
// error is returned wrapped; a signature that is not ECDSA of P-256's
// size fails with [ErrNotECDSA].
func Signer(key crypto.Signer) SignFunc {
	return func(input []byte) ([]byte, error) {
		sum := sha256.Sum256(input)
		der, err := key.Sign(rand.Reader, sum[:], crypto.SHA256)
		if err != nil {
			return nil, fmt.Errorf("jws: signing: %w", err)
		}
		return rawSignature(der)
	}
}

// rawSignature converts an ASN.1 DER ECDSA signature to r‖s.
func rawSignature(der []byte) ([]byte, error) {
	var sig struct{ R, S *big.Int }
	if rest, err := asn1.Unmarshal(der, &sig); err != nil || len(rest) != 0 || sig.R == nil || sig.S == nil ||
		sig.R.Sign() <= 0 || sig.S.Sign() <= 0 || sig.R.BitLen() > 256 || sig.S.BitLen() > 256 {
		return nil, ErrNotECDSA
	}
	raw := make([]byte, SignatureSize)
	sig.R.FillBytes(raw[:32])
	sig.S.FillBytes(raw[32:])
	return raw, nil
}

// Token is a compact JWS that [Parse] accepted: its header says ES256,
// header and claims are JSON objects, the signature is 64 bytes. Nothing
// in it is trusted before [Token.Verify] succeeds.
type Token struct {
	// Header and Claims are the JSON of the first two parts.
	Header, Claims []byte
	// Typ is the header's typ; "" when it has none.
	Typ string
	// Signature is r‖s.
	Signature []byte

	input string // the signing input: the first two parts as received
}

// Parse splits compact, a compact JWS of at most maxLen bytes, and checks
// its form, in this order: the length ([ErrTooLong]), three parts
// ([ErrNotCompact]), the header ([ErrHeader]) and its alg ([ErrAlg]), the
// claims ([ErrClaims]), the signature ([ErrSignature]). Parts are strict
// base64url without padding.
func Parse(compact string, maxLen int) (*Token, error) {
	if len(compact) > maxLen {
		return nil, ErrTooLong
	}
	parts := strings.Split(compact, ".")
	if len(parts) != 3 {
		return nil, ErrNotCompact
	}
	t := &Token{input: parts[0] + "." + parts[1]}
	var err error
	// A map, not a struct: struct fields would also take "ALG" or "Typ".
	var hdr map[string]json.RawMessage
	if t.Header, err = b64.DecodeString(parts[0]); err != nil || !isObject(t.Header) || json.Unmarshal(t.Header, &hdr) != nil {
		return nil, ErrHeader
	}
	if alg, err := member(hdr, "alg"); err != nil || alg != Alg {
		return nil, ErrAlg
	}
	if t.Typ, err = member(hdr, "typ"); err != nil {
		return nil, ErrHeader
	}
	if t.Claims, err = b64.DecodeString(parts[1]); err != nil || !isObject(t.Claims) {
		return nil, ErrClaims
	}
	if t.Signature, err = b64.DecodeString(parts[2]); err != nil || len(t.Signature) != SignatureSize {
		return nil, ErrSignature
	}
	return t, nil
}

// member returns the string member name of obj; "" when absent or null.
func member(obj map[string]json.RawMessage, name string) (string, error) {
	var v string
	if raw, ok := obj[name]; ok {
		if err := json.Unmarshal(raw, &v); err != nil {
			return "", err
		}
	}
	return v, nil
}

// isObject reports whether b is one JSON object, white space aside.
func isObject(b []byte) bool {
	return json.Valid(b) && bytes.HasPrefix(bytes.TrimLeft(b, " \t\r\n"), []byte("{"))
}

// Verify checks t's signature with key; it fails with [ErrBadSignature]
// (also for a nil key, or a Token that [Parse] did not make).
func (t *Token) Verify(key *ecdsa.PublicKey) error {
	if key == nil || len(t.Signature) != SignatureSize || t.input == "" {
		return ErrBadSignature
	}
	sum := sha256.Sum256([]byte(t.input))
	r, s := new(big.Int).SetBytes(t.Signature[:32]), new(big.Int).SetBytes(t.Signature[32:])
	if !ecdsa.Verify(key, sum[:], r, s) {
		return ErrBadSignature
	}
	return nil
}

// DecodeHeader unmarshals the header into v.
func (t *Token) DecodeHeader(v any) error { return json.Unmarshal(t.Header, v) }

// DecodeClaims unmarshals the claims into v.
func (t *Token) DecodeClaims(v any) error { return json.Unmarshal(t.Claims, v) }

// PublicJWK returns the JWK coordinates of pub, a P-256 key: x and y,
// base64url of 32 bytes each.
func PublicJWK(pub *ecdsa.PublicKey) (x, y string, err error) {
	if pub == nil || pub.Curve != elliptic.P256() {
		return "", "", errors.New("jws: not a P-256 public key")
	}
	b, err := pub.Bytes() // 0x04 ‖ X ‖ Y
	if err != nil || len(b) != 65 {
		return "", "", errors.New("jws: not a valid P-256 public key")
	}
	return b64.EncodeToString(b[1:33]), b64.EncodeToString(b[33:]), nil
}

// PublicKey returns the P-256 public key with JWK coordinates x and y
// (strict base64url of 32 bytes each); it fails for a point off the
// curve.
func PublicKey(x, y string) (*ecdsa.PublicKey, error) {
	xb, err1 := b64.DecodeString(x)
	yb, err2 := b64.DecodeString(y)
	if err1 != nil || err2 != nil || len(xb) != 32 || len(yb) != 32 {
		return nil, errors.New("jws: the coordinates are not base64url of 32 bytes")
	}
	pub, err := ecdsa.ParseUncompressedPublicKey(elliptic.P256(), append(append([]byte{4}, xb...), yb...))
	if err != nil {
		return nil, errors.New("jws: the point is not on P-256")
	}
	return pub, nil
}

// Thumbprint returns the RFC 7638 SHA-256 thumbprint, base64url, of the
// P-256 public key with JWK coordinates x and y.
func Thumbprint(x, y string) string {
	// The required members in lexicographic order, no white space.
	sum := sha256.Sum256([]byte(`{"crv":"P-256","kty":"EC","x":"` + x + `","y":"` + y + `"}`))
	return b64.EncodeToString(sum[:])
}
