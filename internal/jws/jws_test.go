package jws_test

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/mcpwasm/mcpwasm/internal/jws"
)

var b64 = base64.RawURLEncoding

func newKey(t *testing.T) *ecdsa.PrivateKey {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func sign(t *testing.T, key *ecdsa.PrivateKey, hdr, claims any) string {
	t.Helper()
	s, err := jws.Sign(hdr, claims, jws.Signer(key))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestRoundTrip(t *testing.T) {
	key := newKey(t)
	s := sign(t, key, map[string]string{"alg": "ES256", "typ": "JWT", "kid": "k1"}, map[string]any{"sub": "u", "n": 7})
	tok, err := jws.Parse(s, 1<<10)
	if err != nil {
		t.Fatal(err)
	}
	if err := tok.Verify(&key.PublicKey); err != nil {
		t.Fatal(err)
	}
	if tok.Typ != "JWT" || len(tok.Signature) != jws.SignatureSize {
		t.Errorf("typ %q, signature %d bytes", tok.Typ, len(tok.Signature))
	}
	var h map[string]string
	var c struct {
		Sub string
		N   int
	}
	if err := tok.DecodeHeader(&h); err != nil || h["kid"] != "k1" {
		t.Errorf("header %v, %v", h, err)
	}
	if err := tok.DecodeClaims(&c); err != nil || c.Sub != "u" || c.N != 7 {
		t.Errorf("claims %+v, %v", c, err)
	}
	// A struct header works as well as a map; typ may be absent.
	s = sign(t, key, struct {
		Alg string `json:"alg"`
	}{"ES256"}, map[string]any{})
	if tok, err := jws.Parse(s, 1<<10); err != nil || tok.Typ != "" || tok.Verify(&key.PublicKey) != nil {
		t.Fatalf("struct header: %v", err)
	}
}

// TestSignFuncOfACustomKey: a signer that returns r‖s itself (as a
// WebCrypto key does) fits, and its errors come back unchanged.
func TestSignFuncOfACustomKey(t *testing.T) {
	key := newKey(t)
	raw := func(input []byte) ([]byte, error) {
		sum := sha256.Sum256(input)
		r, s, err := ecdsa.Sign(rand.Reader, key, sum[:])
		if err != nil {
			return nil, err
		}
		return append(r.FillBytes(make([]byte, 32)), s.FillBytes(make([]byte, 32))...), nil
	}
	s, err := jws.Sign(map[string]string{"alg": "ES256"}, map[string]string{"a": "b"}, raw)
	if err != nil {
		t.Fatal(err)
	}
	if tok, err := jws.Parse(s, 1<<10); err != nil || tok.Verify(&key.PublicKey) != nil {
		t.Fatalf("a JWS signed r‖s directly: %v", err)
	}

	mine := errors.New("the key is locked")
	if _, err := jws.Sign(map[string]string{"alg": "ES256"}, nil, func([]byte) ([]byte, error) { return nil, mine }); err != mine {
		t.Errorf("the SignFunc's error came back as %v", err)
	}
	short := func([]byte) ([]byte, error) { return make([]byte, 63), nil }
	if _, err := jws.Sign(map[string]string{"alg": "ES256"}, nil, short); !errors.Is(err, jws.ErrNotECDSA) {
		t.Errorf("a 63-byte signature: %v", err)
	}
}

func TestSignRefusesWhatIsNotJSON(t *testing.T) {
	key := newKey(t)
	if _, err := jws.Sign(map[string]any{"alg": "ES256", "x": func() {}}, map[string]any{}, jws.Signer(key)); err == nil {
		t.Error("a header that is not JSON signed")
	}
	if _, err := jws.Sign(map[string]string{"alg": "ES256"}, func() {}, jws.Signer(key)); err == nil {
		t.Error("claims that are not JSON signed")
	}
}

// fakeSigner returns what it is given instead of a signature.
type fakeSigner struct {
	der []byte
	err error
}

func (f fakeSigner) Public() crypto.PublicKey { return nil }
func (f fakeSigner) Sign(io.Reader, []byte, crypto.SignerOpts) ([]byte, error) {
	return f.der, f.err
}

func TestSignerRefusesWhatIsNotAnECDSASignature(t *testing.T) {
	p384, err := ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der256, _ := newKey(t).Sign(rand.Reader, make([]byte, 32), crypto.SHA256)
	for name, s := range map[string]crypto.Signer{
		"not DER":        fakeSigner{der: []byte("signature")},
		"trailing bytes": fakeSigner{der: append(der256, 0)},
		"P-384 sized":    p384,
		"RSA-like bytes": fakeSigner{der: make([]byte, 256)},
	} {
		if _, err := jws.Signer(s)([]byte("input")); !errors.Is(err, jws.ErrNotECDSA) {
			t.Errorf("%s: %v, want ErrNotECDSA", name, err)
		}
	}
	keyErr := errors.New("hsm offline")
	if _, err := jws.Signer(fakeSigner{err: keyErr})([]byte("input")); !errors.Is(err, keyErr) || errors.Is(err, jws.ErrNotECDSA) {
		t.Errorf("the key's error: %v", err)
	}
}

func TestParseRefusals(t *testing.T) {
	key := newKey(t)
	good := sign(t, key, map[string]string{"alg": "ES256", "typ": "JWT"}, map[string]any{"sub": "u"})
	parts := strings.Split(good, ".")
	enc := b64.EncodeToString
	with := func(i int, v string) string {
		p := append([]string(nil), parts...)
		p[i] = v
		return strings.Join(p, ".")
	}
	for _, tc := range []struct {
		name, jws string
		want      error
	}{
		{"too long", good + strings.Repeat("A", 1<<10), jws.ErrTooLong},
		{"two parts", parts[0] + "." + parts[1], jws.ErrNotCompact},
		{"four parts", good + ".x", jws.ErrNotCompact},
		{"header not base64url", with(0, "eyJ!"), jws.ErrHeader},
		{"header padded", with(0, base64.URLEncoding.EncodeToString([]byte(`{"alg": "ES256"}`))), jws.ErrHeader},
		{"header not JSON", with(0, enc([]byte(`{"alg":"ES256"`))), jws.ErrHeader},
		{"header an array", with(0, enc([]byte(`["ES256"]`))), jws.ErrHeader},
		{"header with trailing data", with(0, enc([]byte(`{"alg":"ES256"} {}`))), jws.ErrHeader},
		{"typ not a string", with(0, enc([]byte(`{"alg":"ES256","typ":1}`))), jws.ErrHeader},
		{"alg none", with(0, enc([]byte(`{"alg":"none"}`))), jws.ErrAlg},
		{"alg none, no signature", enc([]byte(`{"alg":"none"}`)) + "." + parts[1] + ".", jws.ErrAlg},
		{"alg HS256", with(0, enc([]byte(`{"alg":"HS256"}`))), jws.ErrAlg},
		{"alg ES384", with(0, enc([]byte(`{"alg":"ES384"}`))), jws.ErrAlg},
		{"no alg", with(0, enc([]byte(`{"typ":"JWT"}`))), jws.ErrAlg},
		{"alg in other case", with(0, enc([]byte(`{"ALG":"ES256"}`))), jws.ErrAlg},
		{"alg not a string", with(0, enc([]byte(`{"alg":["ES256"]}`))), jws.ErrAlg},
		{"claims not base64url", with(1, "e30="), jws.ErrClaims},
		{"claims not JSON", with(1, enc([]byte(`sub=u`))), jws.ErrClaims},
		{"claims a string", with(1, enc([]byte(`"u"`))), jws.ErrClaims},
		{"claims null", with(1, enc([]byte(`null`))), jws.ErrClaims},
		{"signature not base64url", with(2, "*"), jws.ErrSignature},
		{"signature empty", with(2, ""), jws.ErrSignature},
		{"signature 63 bytes", with(2, enc(make([]byte, 63))), jws.ErrSignature},
		{"signature DER", with(2, enc(make([]byte, 72))), jws.ErrSignature},
	} {
		if _, err := jws.Parse(tc.jws, 1<<10); err != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, err, tc.want)
		}
	}
	if _, err := jws.Parse(good, len(good)); err != nil {
		t.Errorf("a JWS of exactly the limit: %v", err)
	}
}

func TestVerifyRefusals(t *testing.T) {
	key, other := newKey(t), newKey(t)
	good := sign(t, key, map[string]string{"alg": "ES256"}, map[string]any{"sub": "u"})
	parts := strings.Split(good, ".")
	tampered := parts[0] + "." + b64.EncodeToString([]byte(`{"sub":"admin"}`)) + "." + parts[2]
	sig, _ := b64.DecodeString(parts[2])
	sig[5] ^= 1
	flipped := parts[0] + "." + parts[1] + "." + b64.EncodeToString(sig)
	for _, tc := range []struct {
		name string
		jws  string
		key  *ecdsa.PublicKey
	}{
		{"another key", good, &other.PublicKey},
		{"no key", good, nil},
		{"tampered claims", tampered, &key.PublicKey},
		{"flipped signature bit", flipped, &key.PublicKey},
	} {
		tok, err := jws.Parse(tc.jws, 1<<10)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if err := tok.Verify(tc.key); err != jws.ErrBadSignature {
			t.Errorf("%s: %v, want ErrBadSignature", tc.name, err)
		}
	}
	if err := (&jws.Token{Signature: []byte{1}}).Verify(&key.PublicKey); err != jws.ErrBadSignature {
		t.Errorf("a Token not made by Parse: %v", err)
	}
}

func TestJWK(t *testing.T) {
	key := newKey(t)
	x, y, err := jws.PublicJWK(&key.PublicKey)
	if err != nil {
		t.Fatal(err)
	}
	if len(x) != 43 || len(y) != 43 {
		t.Fatalf("x %q, y %q: want 43 characters each", x, y)
	}
	pub, err := jws.PublicKey(x, y)
	if err != nil || !pub.Equal(&key.PublicKey) {
		t.Fatalf("PublicKey(PublicJWK(k)) = %v, %v", pub, err)
	}

	p384, _ := ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
	if _, _, err := jws.PublicJWK(&p384.PublicKey); err == nil {
		t.Error("PublicJWK of a P-384 key succeeded")
	}
	if _, _, err := jws.PublicJWK(nil); err == nil {
		t.Error("PublicJWK(nil) succeeded")
	}
	for name, xy := range map[string][2]string{
		"off the curve":  {x, x},
		"short x":        {x[:42], y},
		"padded y":       {x, y + "="},
		"not base64url":  {x, "+" + y[1:]},
		"33 bytes":       {b64.EncodeToString(make([]byte, 33)), y},
		"non-zero tails": {nonCanonical(x), y},
	} {
		if _, err := jws.PublicKey(xy[0], xy[1]); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

// nonCanonical spells the 32 bytes of s with a non-zero trailing bit.
func nonCanonical(s string) string {
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
	return s[:42] + string(alphabet[strings.IndexByte(alphabet, s[42])+1])
}

// TestThumbprint: RFC 7638 §3: SHA-256 of the required members in
// lexicographic order without white space.
func TestThumbprint(t *testing.T) {
	x, y := "f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU", "x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0"
	sum := sha256.Sum256([]byte(`{"crv":"P-256","kty":"EC","x":"` + x + `","y":"` + y + `"}`))
	if got, want := jws.Thumbprint(x, y), b64.EncodeToString(sum[:]); got != want {
		t.Fatalf("Thumbprint = %q, want %q", got, want)
	}
	if jws.Thumbprint(y, x) == jws.Thumbprint(x, y) {
		t.Error("x and y swapped give the same thumbprint")
	}
}
