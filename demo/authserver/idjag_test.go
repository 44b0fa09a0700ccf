package authserver_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcpwasm/mcpwasm/demo/authserver"
	"github.com/mcpwasm/mcpwasm/demo/idp"
)

// idjagEnv is the authorization server trusting a demo IdP, with the
// pre-registered client mcp-app (client_secret_basic) that the IdP's
// application corp-app maps to.
// signer is a second trusted identity provider whose key the tests hold,
// to forge ID-JAGs of every shape.
var signer, _ = ecdsa.GenerateKey(elliptic.P256(), rand.Reader)

const signerIssuer = "https://idp2.example"

func idjagEnv(t *testing.T) (*env, *idp.IdP) {
	t.Helper()
	var h http.Handler
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { h.ServeHTTP(w, r) }))
	t.Cleanup(ts.Close)
	p, err := idp.New(idp.Config{Issuer: ts.URL, Clients: []idp.Client{{ID: "corp-app", MCPClientID: "mcp-app"}}})
	if err != nil {
		t.Fatal(err)
	}
	h = p.Handler()
	e := newEnv(t, func(c *authserver.Config) {
		c.IdentityProviders = []authserver.IdentityProvider{{Issuer: p.Issuer(), Key: p.PublicKey()}, {Issuer: signerIssuer, Key: &signer.PublicKey}}
		c.Clients = []authserver.Client{{ID: "mcp-app", Secret: "app-secret", AuthMethod: authserver.AuthClientSecretBasic, RedirectURIs: []string{redirectURI}}}
	})
	return e, p
}

// exchange trades an ID token at the IdP for an ID-JAG.
func exchange(t *testing.T, p *idp.IdP, idToken, audience, res string) (int, map[string]any) {
	t.Helper()
	form := url.Values{
		"grant_type": {idp.GrantTokenExchange}, "requested_token_type": {idp.TokenTypeIDJAG},
		"subject_token": {idToken}, "subject_token_type": {idp.TokenTypeIDToken},
		"audience": {audience}, "resource": {res}, "client_id": {"corp-app"},
	}
	resp, err := http.PostForm(p.TokenEndpoint(), form)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var m map[string]any
	json.Unmarshal(b, &m)
	return resp.StatusCode, m
}

func (e *env) bearerGrant(assertion string) (*http.Response, map[string]any) {
	return e.postForm("/token", url.Values{"grant_type": {authserver.GrantJWTBearer}, "assertion": {assertion}}, func(r *http.Request) {
		r.SetBasicAuth("mcp-app", "app-secret")
	})
}

func TestIDJAGGrant(t *testing.T) {
	e, p := idjagEnv(t)
	idt, err := p.IDToken("corp-app")
	if err != nil {
		t.Fatal(err)
	}
	status, ex := exchange(t, p, idt, e.as.Issuer(), resource)
	if status != 200 || ex["issued_token_type"] != idp.TokenTypeIDJAG || ex["token_type"] != "N_A" {
		t.Fatalf("exchange: %d %v", status, ex)
	}
	jag := ex["access_token"].(string)
	hdr, claims, err := idp.Verify(jag, p.PublicKey(), time.Now())
	if err != nil || hdr["typ"] != idp.TypIDJAG || claims["client_id"] != "mcp-app" || claims["aud"] != e.as.Issuer() || claims["resource"] != resource {
		t.Fatalf("ID-JAG %v %v: %v", hdr, claims, err)
	}
	resp, tok := e.bearerGrant(jag)
	if resp.StatusCode != 200 || tok["token_type"] != "Bearer" {
		t.Fatalf("JWT bearer grant: %d %v", resp.StatusCode, tok)
	}
	info, err := e.as.Verifier(resource)(context.Background(), tok["access_token"].(string), nil)
	if err != nil || !slices.Contains(info.Scopes, authserver.ScopeTools) {
		t.Fatalf("the token does not verify for the resource: %v %v", info, err)
	}
	if !slices.Contains(metaGrantTypes(t, e), authserver.GrantJWTBearer) {
		t.Errorf("metadata does not list the JWT bearer grant")
	}
	// The same ID-JAG again: replay.
	if resp, m := e.bearerGrant(jag); resp.StatusCode != 400 || m["error"] != "invalid_grant" {
		t.Errorf("replayed ID-JAG: %d %v; want invalid_grant", resp.StatusCode, m)
	}
}

func metaGrantTypes(t *testing.T, e *env) []string {
	resp, body := e.get(e.url + "/.well-known/oauth-authorization-server")
	resp.Body.Close()
	var m struct {
		G []string `json:"grant_types_supported"`
	}
	json.Unmarshal([]byte(body), &m)
	return m.G
}

func TestIDJAGRefusals(t *testing.T) {
	e, p := idjagEnv(t)
	idt, _ := p.IDToken("corp-app")
	other, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	now := time.Now()
	claims := func(edit func(map[string]any)) map[string]any {
		c := map[string]any{"iss": signerIssuer, "sub": "u", "aud": e.as.Issuer(), "resource": resource, "client_id": "mcp-app",
			"jti": rand.Text(), "iat": now.Unix(), "exp": now.Add(5 * time.Minute).Unix()}
		if edit != nil {
			edit(c)
		}
		return c
	}
	jagHdr := map[string]string{"alg": "ES256", "typ": idp.TypIDJAG}
	if resp, m := e.bearerGrant(mustSign(t, jagHdr, claims(nil))); resp.StatusCode != 200 {
		t.Fatalf("a well-formed ID-JAG of the second provider: %d %v", resp.StatusCode, m)
	}
	for _, tc := range []struct {
		name      string
		assertion func() string
		want      string
	}{
		{"the ID token itself (typ JWT)", func() string { return idt }, "not an ID-JAG"},
		{"signed by another key", func() string { s, _ := idp.Sign(other, jagHdr, claims(nil)); return s }, "signature"},
		{"for another server", func() string {
			s, _ := idp.Sign(signer, jagHdr, claims(func(c map[string]any) { c["aud"] = "https://elsewhere.example" }))
			return s
		}, "another authorization server"},
		{"for another client", func() string {
			s, _ := idp.Sign(signer, jagHdr, claims(func(c map[string]any) { c["client_id"] = "someone-else" }))
			return s
		}, "another client"},
		{"expired", func() string {
			s, _ := idp.Sign(signer, jagHdr, claims(func(c map[string]any) { c["exp"] = now.Add(-time.Minute).Unix() }))
			return s
		}, "expired"},
		{"for another resource", func() string {
			s, _ := idp.Sign(signer, jagHdr, claims(func(c map[string]any) { c["resource"] = "http://127.0.0.1:9/elsewhere" }))
			return s
		}, "resource"},
	} {
		resp, m := e.bearerGrant(tc.assertion())
		if desc, _ := m["error_description"].(string); resp.StatusCode != 400 || !strings.Contains(desc, tc.want) {
			t.Errorf("%s: %d %v; want 400 saying %q", tc.name, resp.StatusCode, m, tc.want)
		}
	}
	// The IdP refuses an ID token it did not issue.
	if status, m := exchange(t, p, "not.an.idtoken", e.as.Issuer(), resource); status != 400 || m["error"] != "invalid_grant" {
		t.Errorf("exchange of a forged ID token: %d %v", status, m)
	}
}

func mustSign(t *testing.T, hdr map[string]string, claims map[string]any) string {
	t.Helper()
	s, err := idp.Sign(signer, hdr, claims)
	if err != nil {
		t.Fatal(err)
	}
	return s
}
