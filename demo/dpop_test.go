package demo_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"golang.org/x/oauth2"

	"github.com/mcpwasm/mcpwasm/demo/authserver"
	"github.com/mcpwasm/mcpwasm/demo/dpopcheck"
	"github.com/mcpwasm/mcpwasm/devkit/authtest"
	"github.com/mcpwasm/mcpwasm/internal/jws"
)

// dpopKey signs RFC 9449 proofs, as a client does.
type dpopKey struct{ k *ecdsa.PrivateKey }

func newDPoPKey(t *testing.T) dpopKey {
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return dpopKey{k}
}

func (d dpopKey) proof(method, htu, token, nonce string) string {
	x, y, _ := jws.PublicJWK(&d.k.PublicKey)
	hdr := map[string]any{"typ": "dpop+jwt", "alg": "ES256", "jwk": map[string]any{"kty": "EC", "crv": "P-256", "x": x, "y": y}}
	cl := map[string]any{"jti": rand.Text(), "htm": method, "htu": htu, "iat": time.Now().Unix()}
	if token != "" {
		cl["ath"] = dpopcheck.ATH(token)
	}
	if nonce != "" {
		cl["nonce"] = nonce
	}
	s, _ := jws.Sign(hdr, cl, jws.Signer(d.k))
	return s
}

type dpopEnv struct {
	t                *testing.T
	asURL, resource  string
	plain            *http.Client
	clientID, verify string
}

func newDPoPEnv(t *testing.T) *dpopEnv {
	servers := authtest.StartWith(t, authtest.Options{DPoP: true})
	e := &dpopEnv{t: t, asURL: servers.AS.Issuer(), resource: servers.URL, plain: &http.Client{
		Timeout:       10 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}}
	res, err := oauthex.RegisterClient(t.Context(), e.asURL+"/register", &oauthex.ClientRegistrationMetadata{
		RedirectURIs: []string{"http://127.0.0.1:9/cb"}, TokenEndpointAuthMethod: "none",
	}, e.plain)
	if err != nil {
		t.Fatal(err)
	}
	e.clientID = res.ClientID
	return e
}

// code runs the authorization request (auto-approved) and returns the
// code.
func (e *dpopEnv) code() string {
	e.verify = oauth2.GenerateVerifier()
	conf := &oauth2.Config{ClientID: e.clientID, RedirectURL: "http://127.0.0.1:9/cb",
		Endpoint: oauth2.Endpoint{AuthURL: e.asURL + "/authorize"}}
	resp, err := e.plain.Get(conf.AuthCodeURL("s", oauth2.S256ChallengeOption(e.verify), oauth2.SetAuthURLParam("resource", e.resource)))
	if err != nil {
		e.t.Fatal(err)
	}
	resp.Body.Close()
	loc, _ := url.Parse(resp.Header.Get("Location"))
	return loc.Query().Get("code")
}

type tokenAnswer struct {
	status       int
	nonce        string
	Error        string `json:"error"`
	AccessToken  string `json:"access_token"`
	TokenType    string `json:"token_type"`
	RefreshToken string `json:"refresh_token"`
}

func (e *dpopEnv) tokenRequest(form url.Values, proof string) tokenAnswer {
	e.t.Helper()
	req, _ := http.NewRequest("POST", e.asURL+"/token", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if proof != "" {
		req.Header.Set("DPoP", proof)
	}
	resp, err := e.plain.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	a := tokenAnswer{status: resp.StatusCode, nonce: resp.Header.Get("DPoP-Nonce")}
	json.NewDecoder(resp.Body).Decode(&a)
	return a
}

func (e *dpopEnv) codeForm() url.Values {
	return url.Values{"grant_type": {"authorization_code"}, "code": {e.code()}, "redirect_uri": {"http://127.0.0.1:9/cb"},
		"code_verifier": {e.verify}, "client_id": {e.clientID}, "resource": {e.resource}}
}

// mcpPost sends initialize with the given Authorization and DPoP headers.
func (e *dpopEnv) mcpPost(authz, proof string) *http.Response {
	e.t.Helper()
	return postMCP(e.t, e.plain, e.resource, initialize, map[string]string{"Authorization": authz, "DPoP": proof})
}

func TestDPoPMetadata(t *testing.T) {
	e := newDPoPEnv(t)
	resp, err := e.plain.Get(e.asURL + authserver.MetadataPath)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var m struct {
		Algs []string `json:"dpop_signing_alg_values_supported"`
	}
	json.NewDecoder(resp.Body).Decode(&m)
	if len(m.Algs) != 1 || m.Algs[0] != "ES256" {
		t.Fatalf("dpop_signing_alg_values_supported = %q", m.Algs)
	}
}

// TestDPoPFlow walks a DPoP sign-in against both demo servers: the
// authorization server's nonce, a bound token, the MCP server's nonce, and
// every way of presenting the token without its key being refused.
func TestDPoPFlow(t *testing.T) {
	e := newDPoPEnv(t)
	key := newDPoPKey(t)
	tokenURL := e.asURL + "/token"

	// No proof: refused.
	if a := e.tokenRequest(e.codeForm(), ""); a.status != 400 || a.Error != "invalid_dpop_proof" {
		t.Fatalf("token request without proof: %d %q", a.status, a.Error)
	}
	// A proof without the nonce: use_dpop_nonce with DPoP-Nonce; the code
	// is not spent, so the retry succeeds.
	form := e.codeForm()
	a := e.tokenRequest(form, key.proof("POST", tokenURL, "", ""))
	if a.status != 400 || a.Error != "use_dpop_nonce" || a.nonce == "" {
		t.Fatalf("token request without nonce: %d %q nonce %q", a.status, a.Error, a.nonce)
	}
	a = e.tokenRequest(form, key.proof("POST", tokenURL, "", a.nonce))
	if a.status != 200 || a.TokenType != "DPoP" || a.AccessToken == "" {
		t.Fatalf("token request with nonce: %d %q token_type %q", a.status, a.Error, a.TokenType)
	}
	at, rt, asNonce := a.AccessToken, a.RefreshToken, a.nonce

	// The MCP server: without a token, a DPoP challenge with
	// resource_metadata.
	resp := e.mcpPost("", "")
	if ch := resp.Header.Get("WWW-Authenticate"); resp.StatusCode != 401 || !strings.HasPrefix(ch, "DPoP ") || !strings.Contains(ch, "resource_metadata=") {
		t.Fatalf("no token: %d %q", resp.StatusCode, ch)
	}
	// A valid proof without the server's nonce: use_dpop_nonce.
	resp = e.mcpPost("DPoP "+at, key.proof("POST", e.resource, at, ""))
	rsNonce := resp.Header.Get("DPoP-Nonce")
	if ch := resp.Header.Get("WWW-Authenticate"); resp.StatusCode != 401 || !strings.Contains(ch, `error="use_dpop_nonce"`) || rsNonce == "" {
		t.Fatalf("proof without nonce: %d %q nonce %q", resp.StatusCode, ch, rsNonce)
	}
	if rsNonce == asNonce {
		t.Fatal("the MCP server uses the authorization server's nonce")
	}
	// With it: accepted.
	if resp = e.mcpPost("DPoP "+at, key.proof("POST", e.resource, at, rsNonce)); resp.StatusCode != 200 {
		t.Fatalf("valid DPoP request: %d %q", resp.StatusCode, resp.Header.Get("WWW-Authenticate"))
	}

	refused := []struct {
		name, authz, proof, want string
	}{
		{"stolen token as Bearer", "Bearer " + at, "", "invalid_token"},
		{"stolen token as Bearer with a proof", "Bearer " + at, key.proof("POST", e.resource, at, rsNonce), "invalid_token"},
		{"stolen token without proof", "DPoP " + at, "", "invalid_dpop_proof"},
		{"proof by another key", "DPoP " + at, newDPoPKey(t).proof("POST", e.resource, at, rsNonce), "invalid_token"},
		{"proof for another token", "DPoP " + at, key.proof("POST", e.resource, "other", rsNonce), "invalid_dpop_proof"},
		{"proof for another URL", "DPoP " + at, key.proof("POST", e.asURL+"/mcp", at, rsNonce), "invalid_dpop_proof"},
		{"proof for another method", "DPoP " + at, key.proof("GET", e.resource, at, rsNonce), "invalid_dpop_proof"},
		{"the AS nonce", "DPoP " + at, key.proof("POST", e.resource, at, asNonce), "use_dpop_nonce"},
	}
	for _, tc := range refused {
		resp := e.mcpPost(tc.authz, tc.proof)
		if ch := resp.Header.Get("WWW-Authenticate"); resp.StatusCode != 401 || !strings.Contains(ch, `error="`+tc.want+`"`) || !strings.Contains(ch, "resource_metadata=") {
			t.Errorf("%s: %d %q, want 401 %s", tc.name, resp.StatusCode, ch, tc.want)
		}
	}
	// A replayed proof (same jti) is refused.
	p := key.proof("POST", e.resource, at, rsNonce)
	e.mcpPost("DPoP "+at, p)
	if resp := e.mcpPost("DPoP "+at, p); resp.StatusCode != 401 {
		t.Errorf("replayed proof: %d", resp.StatusCode)
	}

	// Refresh: only with the same key.
	rform := url.Values{"grant_type": {"refresh_token"}, "refresh_token": {rt}, "client_id": {e.clientID}}
	for name, k := range map[string]dpopKey{"another key": newDPoPKey(t)} {
		if a := e.tokenRequest(rform, k.proof("POST", tokenURL, "", asNonce)); a.status != 400 || a.Error != "invalid_grant" {
			t.Errorf("refresh with %s: %d %q", name, a.status, a.Error)
		}
	}
	if a := e.tokenRequest(rform, ""); a.status != 400 || a.Error != "invalid_dpop_proof" {
		t.Errorf("refresh without proof: %d %q", a.status, a.Error)
	}
	if a := e.tokenRequest(rform, key.proof("POST", tokenURL, "", asNonce)); a.status != 200 || a.TokenType != "DPoP" {
		t.Errorf("refresh with the key: %d %q %q", a.status, a.Error, a.TokenType)
	}
}
