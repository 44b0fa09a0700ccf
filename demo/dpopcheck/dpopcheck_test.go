package dpopcheck_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/mcpwasm/mcpwasm/demo/dpopcheck"
	"github.com/mcpwasm/mcpwasm/internal/jws"
)

const target = "http://127.0.0.1:8081/mcp"

var b64 = base64.RawURLEncoding

// proof builds a signed proof; edit changes header and claims before
// signing.
type proof struct {
	key    *ecdsa.PrivateKey
	header map[string]any
	claims map[string]any
}

func newProof(t *testing.T, key *ecdsa.PrivateKey, now time.Time) *proof {
	t.Helper()
	if key == nil {
		var err error
		if key, err = ecdsa.GenerateKey(elliptic.P256(), rand.Reader); err != nil {
			t.Fatal(err)
		}
	}
	jti := make([]byte, 16)
	rand.Read(jti)
	return &proof{
		key: key,
		header: map[string]any{"typ": "dpop+jwt", "alg": "ES256", "jwk": map[string]any{
			"kty": "EC", "crv": "P-256", "x": xOf(key), "y": yOf(key)}},
		claims: map[string]any{"jti": b64.EncodeToString(jti), "htm": "POST", "htu": target, "iat": now.Unix()},
	}
}

func xOf(k *ecdsa.PrivateKey) string {
	x, _, _ := jws.PublicJWK(&k.PublicKey)
	return x
}
func yOf(k *ecdsa.PrivateKey) string {
	_, y, _ := jws.PublicJWK(&k.PublicKey)
	return y
}

func (p *proof) String() string {
	s, err := jws.Sign(p.header, p.claims, jws.Signer(p.key))
	if err != nil {
		panic(err)
	}
	return s
}

func clock(t time.Time) func() time.Time { return func() time.Time { return t } }

func wantCode(t *testing.T, err error, code, about string) {
	t.Helper()
	var e *dpopcheck.Error
	if !errors.As(err, &e) || e.Code != code {
		t.Fatalf("error = %v, want %s", err, code)
	}
	if about != "" && !strings.Contains(e.Description, about) {
		t.Fatalf("description %q does not mention %q", e.Description, about)
	}
}

func TestValidProofReturnsThumbprint(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	c := dpopcheck.New(dpopcheck.Options{Now: clock(now)})
	p := newProof(t, nil, now)
	p.claims["ath"] = dpopcheck.ATH("tok")
	jkt, err := c.Verify(p.String(), "POST", target, "tok")
	if err != nil {
		t.Fatal(err)
	}
	if want := dpopcheck.Thumbprint(xOf(p.key), yOf(p.key)); jkt != want {
		t.Fatalf("jkt = %q, want %q", jkt, want)
	}
}

// TestThumbprintRFC7638 checks the thumbprint against RFC 7638 §3.1's
// construction on a fixed key: the canonical JSON, hashed.
func TestThumbprintRFC7638(t *testing.T) {
	x, y := "f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU", "x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0"
	sum := sha256.Sum256([]byte(`{"crv":"P-256","kty":"EC","x":"` + x + `","y":"` + y + `"}`))
	if got, want := dpopcheck.Thumbprint(x, y), b64.EncodeToString(sum[:]); got != want {
		t.Fatalf("Thumbprint = %q, want %q", got, want)
	}
}

func TestEquivalentURLs(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	c := dpopcheck.New(dpopcheck.Options{Now: clock(now)})
	for _, htu := range []string{"HTTP://127.0.0.1:8081/mcp", "http://LOCALHOST:80/mcp"} {
		p := newProof(t, nil, now)
		p.claims["htu"] = htu
		tgt := target
		if strings.Contains(htu, "LOCALHOST") {
			tgt = "http://localhost/mcp"
		}
		if _, err := c.Verify(p.String(), "POST", tgt, ""); err != nil {
			t.Errorf("htu %q: %v", htu, err)
		}
	}
}

func TestEachRuleRefuses(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	other, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	cases := []struct {
		name  string
		edit  func(p *proof)
		raw   func(p *proof) string
		token string
		about string
	}{
		{name: "typ", edit: func(p *proof) { p.header["typ"] = "JWT" }, about: "typ"},
		{name: "alg none", raw: func(p *proof) string {
			p.header["alg"] = "none"
			s := p.String()
			return s[:strings.LastIndex(s, ".")+1]
		}, about: "alg"},
		{name: "alg HS256", edit: func(p *proof) { p.header["alg"] = "HS256" }, about: "alg"},
		{name: "private key in jwk", edit: func(p *proof) {
			p.header["jwk"].(map[string]any)["d"] = b64.EncodeToString(p.key.D.FillBytes(make([]byte, 32)))
		}, about: "private"},
		{name: "no jwk", edit: func(p *proof) { delete(p.header, "jwk") }, about: "jwk"},
		{name: "other curve", edit: func(p *proof) { p.header["jwk"].(map[string]any)["crv"] = "P-384" }, about: "P-256"},
		{name: "point off the curve", edit: func(p *proof) { p.header["jwk"].(map[string]any)["y"] = xOf(p.key) }, about: "public key"},
		{name: "signed by another key", raw: func(p *proof) string {
			p.header["jwk"] = map[string]any{"kty": "EC", "crv": "P-256", "x": xOf(other), "y": yOf(other)}
			return p.String()
		}, about: "signature"},
		{name: "tampered claims", raw: func(p *proof) string {
			s := strings.Split(p.String(), ".")
			c, _ := json.Marshal(map[string]any{"jti": "x", "htm": "POST", "htu": target, "iat": now.Unix()})
			return s[0] + "." + b64.EncodeToString(c) + "." + s[2]
		}, about: "signature"},
		{name: "not a JWS", raw: func(*proof) string { return "abc.def" }, about: "compact JWS"},
		{name: "too long", edit: func(p *proof) { p.claims["pad"] = strings.Repeat("x", 8<<10) }, about: "too long"},
		{name: "header not base64url", raw: func(p *proof) string { return "*" + p.String() }, about: "header"},
		{name: "header not JSON", raw: func(p *proof) string {
			return b64.EncodeToString([]byte(`{"typ":"dpop+jwt",`)) + p.String()[strings.Index(p.String(), "."):]
		}, about: "header"},
		{name: "claims not JSON", raw: func(p *proof) string {
			s := strings.Split(p.String(), ".")
			return s[0] + "." + b64.EncodeToString([]byte("jti=x")) + "." + s[2]
		}}, // refused for its form or its signature, whichever is checked first
		{name: "signature not 64 bytes", raw: func(p *proof) string {
			s := p.String()
			return s[:strings.LastIndex(s, ".")+1] + b64.EncodeToString(make([]byte, 72))
		}, about: "64 bytes"},
		{name: "crit", edit: func(p *proof) { p.header["crit"] = []string{"exp"} }, about: "crit"},
		{name: "htm", edit: func(p *proof) { p.claims["htm"] = "GET" }, about: "htm"},
		{name: "htu path", edit: func(p *proof) { p.claims["htu"] = "http://127.0.0.1:8081/other" }, about: "htu"},
		{name: "htu port", edit: func(p *proof) { p.claims["htu"] = "http://127.0.0.1:9999/mcp" }, about: "htu"},
		{name: "htu query", edit: func(p *proof) { p.claims["htu"] = target + "?a=b" }, about: "htu"},
		{name: "htu fragment", edit: func(p *proof) { p.claims["htu"] = target + "#f" }, about: "htu"},
		{name: "iat old", edit: func(p *proof) { p.claims["iat"] = now.Add(-6 * time.Minute).Unix() }, about: "iat"},
		{name: "iat future", edit: func(p *proof) { p.claims["iat"] = now.Add(6 * time.Minute).Unix() }, about: "iat"},
		{name: "iat string", edit: func(p *proof) { p.claims["iat"] = "now" }, about: "iat"},
		{name: "no jti", edit: func(p *proof) { delete(p.claims, "jti") }, about: "jti"},
		{name: "no ath", token: "tok", about: "ath"},
		{name: "wrong ath", edit: func(p *proof) { p.claims["ath"] = dpopcheck.ATH("other") }, token: "tok", about: "ath"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := dpopcheck.New(dpopcheck.Options{Now: clock(now)})
			p := newProof(t, nil, now)
			var s string
			if tc.raw != nil {
				s = tc.raw(p)
			} else {
				if tc.edit != nil {
					tc.edit(p)
				}
				s = p.String()
			}
			_, err := c.Verify(s, "POST", target, tc.token)
			wantCode(t, err, dpopcheck.CodeInvalidProof, tc.about)
		})
	}
}

func TestReplayedJTI(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	c := dpopcheck.New(dpopcheck.Options{Now: clock(now)})
	p := newProof(t, nil, now)
	if _, err := c.Verify(p.String(), "POST", target, ""); err != nil {
		t.Fatal(err)
	}
	// The same jti in a freshly signed proof is still a replay.
	_, err := c.Verify(p.String(), "POST", target, "")
	wantCode(t, err, dpopcheck.CodeInvalidProof, "jti")
}

func TestReplayCacheIsBounded(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	cur := now
	c := dpopcheck.New(dpopcheck.Options{Now: func() time.Time { return cur }, MaxJTIs: 2})
	for range 2 {
		if _, err := c.Verify(newProof(t, nil, now).String(), "POST", target, ""); err != nil {
			t.Fatal(err)
		}
	}
	_, err := c.Verify(newProof(t, nil, now).String(), "POST", target, "")
	wantCode(t, err, dpopcheck.CodeInvalidProof, "too many")
	// Once the entries expire (2×Window), there is room again.
	cur = now.Add(11 * time.Minute)
	if _, err := c.Verify(newProof(t, nil, cur).String(), "POST", target, ""); err != nil {
		t.Fatalf("after expiry: %v", err)
	}
}

func TestNonces(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	cur := now
	c := dpopcheck.New(dpopcheck.Options{RequireNonce: true, NonceTTL: time.Minute, Now: func() time.Time { return cur }})

	_, err := c.Verify(newProof(t, nil, now).String(), "POST", target, "")
	wantCode(t, err, dpopcheck.CodeUseNonce, "requires a nonce")

	p := newProof(t, nil, now)
	p.claims["nonce"] = "made-up"
	_, err = c.Verify(p.String(), "POST", target, "")
	wantCode(t, err, dpopcheck.CodeUseNonce, "unknown")

	n1 := c.Nonce()
	if c.Nonce() != n1 {
		t.Fatal("the nonce changed within its TTL")
	}
	p = newProof(t, nil, now)
	p.claims["nonce"] = n1
	if _, err := c.Verify(p.String(), "POST", target, ""); err != nil {
		t.Fatal(err)
	}

	// After a TTL a fresh nonce is issued; the old one is still accepted
	// for one more TTL, then refused.
	cur = now.Add(61 * time.Second)
	n2 := c.Nonce()
	if n2 == n1 {
		t.Fatal("the nonce did not rotate")
	}
	p = newProof(t, nil, cur)
	p.claims["nonce"] = n1
	if _, err := c.Verify(p.String(), "POST", target, ""); err != nil {
		t.Fatalf("previous nonce refused within its grace: %v", err)
	}
	cur = now.Add(121 * time.Second)
	p = newProof(t, nil, cur)
	p.claims["nonce"] = n1
	_, err = c.Verify(p.String(), "POST", target, "")
	wantCode(t, err, dpopcheck.CodeUseNonce, "expired")
}

func TestCheckReadsTheRequest(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	c := dpopcheck.New(dpopcheck.Options{Now: clock(now)})
	var got error
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, got = c.Check(r, "")
	}))
	defer srv.Close()

	send := func(proofs ...string) error {
		req, _ := http.NewRequest("POST", srv.URL+"/mcp?x=1", nil)
		for _, p := range proofs {
			req.Header.Add("DPoP", p)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return got
	}
	mk := func() string {
		p := newProof(t, nil, now)
		p.claims["htu"] = srv.URL + "/mcp"
		return p.String()
	}
	if err := send(mk()); err != nil {
		t.Fatalf("valid proof (query ignored): %v", err)
	}
	wantCode(t, send(), dpopcheck.CodeInvalidProof, "no DPoP header")
	wantCode(t, send(mk(), mk()), dpopcheck.CodeInvalidProof, "more than one")
	wantCode(t, send(mk()+","+mk()), dpopcheck.CodeInvalidProof, "more than one")
}
