// Package dpopcheck is the server side of DPoP (RFC 9449): it verifies the
// proof a request carries in its DPoP header (§4.3), including the access
// token hash of a resource request (§7.1), issues the server's rotating
// nonces (§8, §9), and returns the RFC 7638 thumbprint of the proof's key,
// which a server compares with the key a token is bound to.
//
// Only ES256 proofs are accepted (never none, HS* or another curve). The
// demo servers and the tests use it; it is not an API.
package dpopcheck

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mcpwasm/mcpwasm/internal/jws"
)

// The error codes of [Error] (RFC 9449 §7.1, §8, §9, §12.2).
const (
	// CodeInvalidProof: the proof is missing, malformed or does not match
	// the request.
	CodeInvalidProof = "invalid_dpop_proof"
	// CodeUseNonce: the proof lacks the server's current nonce; the client
	// retries with the nonce of the DPoP-Nonce response header.
	CodeUseNonce = "use_dpop_nonce"
)

// Defaults of [Options].
const (
	DefaultWindow   = 5 * time.Minute
	DefaultNonceTTL = 5 * time.Minute
	DefaultMaxJTIs  = 10000
	maxProofLen     = 8 << 10
	maxJTILen       = 256
)

// Error is a refused proof. Code is [CodeInvalidProof] or [CodeUseNonce];
// Description says why, without echoing the proof or a token.
type Error struct {
	Code        string
	Description string
}

func (e *Error) Error() string { return e.Code + ": " + e.Description }

func invalid(format string, args ...any) *Error {
	return &Error{Code: CodeInvalidProof, Description: fmt.Sprintf(format, args...)}
}

// Options configures [New]. The zero value checks proofs without nonces.
type Options struct {
	// RequireNonce makes every proof carry a nonce this checker issued
	// (see [Checker.Nonce]) and not yet expired; a proof without one fails
	// with [CodeUseNonce].
	RequireNonce bool
	// Window is how far a proof's iat may lie from the server's clock, in
	// either direction. Zero means [DefaultWindow].
	Window time.Duration
	// NonceTTL is how long a nonce is the current one; it is accepted for
	// twice as long. Zero means [DefaultNonceTTL].
	NonceTTL time.Duration
	// MaxJTIs bounds the replay cache: when it holds that many unexpired
	// proof ids, new proofs are refused until some expire. Zero means
	// [DefaultMaxJTIs].
	MaxJTIs int
	// Now is the clock; nil means time.Now. For tests.
	Now func() time.Time
}

// Checker verifies DPoP proofs and issues nonces. It is safe for
// concurrent use.
type Checker struct {
	opts Options

	mu      sync.Mutex
	jtis    map[[32]byte]time.Time // hash of a seen jti -> when it may be forgotten
	nonces  map[string]time.Time   // issued nonce -> when it stops being accepted
	current string
	issued  time.Time
}

// New returns a checker for opts.
func New(opts Options) *Checker {
	if opts.Window <= 0 {
		opts.Window = DefaultWindow
	}
	if opts.NonceTTL <= 0 {
		opts.NonceTTL = DefaultNonceTTL
	}
	if opts.MaxJTIs <= 0 {
		opts.MaxJTIs = DefaultMaxJTIs
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	return &Checker{opts: opts, jtis: make(map[[32]byte]time.Time), nonces: make(map[string]time.Time)}
}

// Nonce returns the server's current nonce, for the DPoP-Nonce response
// header. A new one replaces it every NonceTTL; the previous ones stay
// accepted for another NonceTTL.
func (c *Checker) Nonce() string {
	now := c.opts.Now()
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.current == "" || now.Sub(c.issued) >= c.opts.NonceTTL {
		b := make([]byte, 16)
		rand.Read(b) // never fails (crypto/rand)
		c.current, c.issued = base64.RawURLEncoding.EncodeToString(b), now
		c.nonces[c.current] = now.Add(2 * c.opts.NonceTTL)
		for n, exp := range c.nonces {
			if now.After(exp) {
				delete(c.nonces, n)
			}
		}
	}
	return c.current
}

// Check verifies the DPoP proof of r, a request received by a server, for
// the URL the request was sent to (scheme from r.TLS, host from r.Host,
// path from r.URL) and, when accessToken is not empty, for that token
// (ath). It returns the thumbprint of the proof's key.
func (c *Checker) Check(r *http.Request, accessToken string) (jkt string, err error) {
	vals := r.Header.Values("DPoP")
	if len(vals) == 0 {
		return "", invalid("the request has no DPoP header")
	}
	if len(vals) > 1 || strings.Contains(vals[0], ",") {
		return "", invalid("the request has more than one DPoP header")
	}
	return c.Verify(vals[0], r.Method, RequestURL(r), accessToken)
}

// RequestURL returns the URL a server request was sent to, without query
// and fragment: http or https (by r.TLS), r.Host and r.URL's path.
func RequestURL(r *http.Request) string {
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	u := url.URL{Scheme: scheme, Host: r.Host, Path: r.URL.Path, RawPath: r.URL.RawPath}
	return u.String()
}

type header struct {
	JWK  json.RawMessage `json:"jwk"`
	Crit json.RawMessage `json:"crit"`
}

type jwk struct {
	Kty string  `json:"kty"`
	Crv string  `json:"crv"`
	X   string  `json:"x"`
	Y   string  `json:"y"`
	D   *string `json:"d"`
}

type claims struct {
	JTI   string          `json:"jti"`
	HTM   string          `json:"htm"`
	HTU   string          `json:"htu"`
	IAT   json.RawMessage `json:"iat"`
	ATH   *string         `json:"ath"`
	Nonce *string         `json:"nonce"`
}

// Verify checks proof, the value of a DPoP header, against the request's
// method and target URL and, when accessToken is not empty, the token it
// presents. It returns the RFC 7638 thumbprint of the proof's key.
func (c *Checker) Verify(proof, method, target, accessToken string) (jkt string, err error) {
	tok, err := jws.Parse(proof, maxProofLen)
	switch {
	case errors.Is(err, jws.ErrTooLong):
		return "", invalid("the proof is too long")
	case errors.Is(err, jws.ErrNotCompact):
		return "", invalid("the proof is not a compact JWS")
	case errors.Is(err, jws.ErrAlg):
		return "", invalid("alg must be ES256")
	case errors.Is(err, jws.ErrClaims):
		return "", invalid("the proof claims are not base64url JSON")
	case errors.Is(err, jws.ErrSignature):
		return "", invalid("the signature is not 64 bytes of base64url")
	case err != nil:
		return "", invalid("the proof header is not base64url JSON")
	}
	var h header
	if err := tok.DecodeHeader(&h); err != nil {
		return "", invalid("the proof header is not base64url JSON")
	}
	if tok.Typ != "dpop+jwt" {
		return "", invalid("typ must be dpop+jwt")
	}
	if len(h.Crit) > 0 {
		return "", invalid("crit is not supported")
	}
	var k jwk
	if len(h.JWK) == 0 || json.Unmarshal(h.JWK, &k) != nil {
		return "", invalid("the proof header has no jwk object")
	}
	if k.D != nil {
		return "", invalid("the jwk holds a private key")
	}
	if k.Kty != "EC" || k.Crv != "P-256" {
		return "", invalid("the jwk must be an EC P-256 key")
	}
	pub, err := jws.PublicKey(k.X, k.Y)
	if err != nil {
		return "", invalid("the jwk is not a P-256 public key")
	}
	if tok.Verify(pub) != nil {
		return "", invalid("the signature does not verify with the jwk")
	}

	var cl claims
	if err := tok.DecodeClaims(&cl); err != nil {
		return "", invalid("the proof claims are not base64url JSON")
	}
	if cl.JTI == "" || len(cl.JTI) > maxJTILen {
		return "", invalid("jti is missing or too long")
	}
	if cl.HTM != method {
		return "", invalid("htm does not match the request method")
	}
	if !sameURL(cl.HTU, target) {
		return "", invalid("htu does not match the request URL")
	}
	iat, err := strconv.ParseInt(string(cl.IAT), 10, 64)
	if err != nil {
		return "", invalid("iat is missing or not an integer")
	}
	now := c.opts.Now()
	issued := time.Unix(iat, 0)
	if issued.Before(now.Add(-c.opts.Window)) || issued.After(now.Add(c.opts.Window)) {
		return "", invalid("iat is outside the accepted window")
	}
	if accessToken != "" {
		want := ATH(accessToken)
		if cl.ATH == nil || subtle.ConstantTimeCompare([]byte(*cl.ATH), []byte(want)) != 1 {
			return "", invalid("ath does not match the access token")
		}
	}
	if c.opts.RequireNonce {
		if cl.Nonce == nil {
			return "", &Error{Code: CodeUseNonce, Description: "the server requires a nonce in the DPoP proof"}
		}
		if !c.nonceValid(*cl.Nonce, now) {
			return "", &Error{Code: CodeUseNonce, Description: "the DPoP nonce is unknown or expired"}
		}
	}
	if err := c.remember(cl.JTI, now); err != nil {
		return "", err
	}
	return Thumbprint(k.X, k.Y), nil
}

func (c *Checker) nonceValid(n string, now time.Time) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	exp, ok := c.nonces[n]
	return ok && !now.After(exp)
}

// remember records jti in the replay cache, refusing one seen before.
func (c *Checker) remember(jti string, now time.Time) error {
	key := sha256.Sum256([]byte(jti))
	c.mu.Lock()
	defer c.mu.Unlock()
	if exp, ok := c.jtis[key]; ok && now.Before(exp) {
		return invalid("jti was used before (replayed proof)")
	}
	if len(c.jtis) >= c.opts.MaxJTIs {
		for k, exp := range c.jtis {
			if !now.Before(exp) {
				delete(c.jtis, k)
			}
		}
		if len(c.jtis) >= c.opts.MaxJTIs {
			return invalid("too many recent proofs; retry later")
		}
	}
	// A proof is refused by its iat after 2×Window at the latest.
	c.jtis[key] = now.Add(2 * c.opts.Window)
	return nil
}

// ATH returns the ath claim for accessToken: base64url(SHA-256(token)).
func ATH(accessToken string) string {
	h := sha256.Sum256([]byte(accessToken))
	return base64.RawURLEncoding.EncodeToString(h[:])
}

// Thumbprint returns the RFC 7638 SHA-256 thumbprint (base64url) of the EC
// P-256 public key with coordinates x and y (base64url).
func Thumbprint(x, y string) string { return jws.Thumbprint(x, y) }

// sameURL compares a proof's htu with the request URL: scheme and host
// case-insensitively, default ports dropped, paths exactly. An htu with a
// query or a fragment never matches.
func sameURL(htu, target string) bool {
	if htu == "" || strings.ContainsAny(htu, "?#") {
		return false
	}
	a, ok1 := normalize(htu)
	b, ok2 := normalize(target)
	return ok1 && ok2 && a == b
}

func normalize(raw string) (string, bool) {
	u, err := url.Parse(raw)
	if err != nil || !u.IsAbs() || u.Host == "" || u.User != nil {
		return "", false
	}
	scheme := strings.ToLower(u.Scheme)
	host := strings.ToLower(u.Hostname())
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	port := u.Port()
	if (scheme == "http" && port == "80") || (scheme == "https" && port == "443") {
		port = ""
	}
	if port != "" {
		host += ":" + port
	}
	path := u.EscapedPath()
	if path == "" {
		path = "/"
	}
	return scheme + "://" + host + path, true
}
