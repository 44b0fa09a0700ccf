package idp_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/mcpwasm/mcpwasm/demo/idp"
)

func start(t *testing.T) (*idp.IdP, string) {
	t.Helper()
	var h http.Handler
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { h.ServeHTTP(w, r) }))
	t.Cleanup(ts.Close)
	p, err := idp.New(idp.Config{Issuer: ts.URL, Clients: []idp.Client{
		{ID: "public-app", MCPClientID: "mcp-public"},
		{ID: "confidential-app", Secret: "s3cret", MCPClientID: "mcp-confidential"},
	}})
	if err != nil {
		t.Fatal(err)
	}
	h = p.Handler()
	return p, ts.URL
}

func post(t *testing.T, u string, form url.Values, basic []string) (int, map[string]any) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, u, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if basic != nil {
		req.SetBasicAuth(basic[0], basic[1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var m map[string]any
	json.NewDecoder(resp.Body).Decode(&m)
	return resp.StatusCode, m
}

func exchangeForm(subject string) url.Values {
	return url.Values{
		"grant_type": {idp.GrantTokenExchange}, "requested_token_type": {idp.TokenTypeIDJAG},
		"subject_token": {subject}, "subject_token_type": {idp.TokenTypeIDToken},
		"audience": {"https://as.example"}, "resource": {"https://mcp.example/mcp"}, "scope": {"mcp:tools"},
	}
}

func TestExchange(t *testing.T) {
	p, base := start(t)
	// Single sign-on: an ID token for the confidential app.
	status, sso := post(t, base+"/sso", url.Values{"client_id": {"confidential-app"}}, nil)
	if status != 200 {
		t.Fatalf("sso: %d %v", status, sso)
	}
	idt := sso["id_token"].(string)
	if _, c, err := idp.Verify(idt, p.PublicKey(), time.Now()); err != nil || c["aud"] != "confidential-app" || c["iss"] != p.Issuer() {
		t.Fatalf("ID token %v: %v", c, err)
	}
	// Without its secret the app is refused; with it (Basic) it gets an ID-JAG.
	f := exchangeForm(idt)
	f.Set("client_id", "confidential-app")
	if status, m := post(t, p.TokenEndpoint(), f, nil); status != 401 || m["error"] != "invalid_client" {
		t.Errorf("without the secret: %d %v", status, m)
	}
	status, m := post(t, p.TokenEndpoint(), exchangeForm(idt), []string{"confidential-app", "s3cret"})
	if status != 200 || m["issued_token_type"] != idp.TokenTypeIDJAG || m["token_type"] != "N_A" {
		t.Fatalf("exchange: %d %v", status, m)
	}
	hdr, c, err := idp.Verify(m["access_token"].(string), p.PublicKey(), time.Now())
	if err != nil || hdr["typ"] != idp.TypIDJAG {
		t.Fatalf("ID-JAG header %v: %v", hdr, err)
	}
	for k, want := range map[string]any{"iss": p.Issuer(), "sub": "demo-user", "aud": "https://as.example", "resource": "https://mcp.example/mcp",
		"client_id": "mcp-confidential", "scope": "mcp:tools"} {
		if c[k] != want {
			t.Errorf("ID-JAG %s = %v; want %v", k, c[k], want)
		}
	}
	if exp, iat := c["exp"].(float64), c["iat"].(float64); exp-iat != idp.IDJAGTTL.Seconds() || c["jti"] == "" {
		t.Errorf("ID-JAG exp-iat %v, jti %v", exp-iat, c["jti"])
	}
}

func TestExchangeRefusals(t *testing.T) {
	p, _ := start(t)
	idt, _ := p.IDToken("public-app")
	other, _ := p.IDToken("confidential-app")
	for _, tc := range []struct {
		name string
		edit func(url.Values)
		code string
	}{
		{"ID token of another app", func(f url.Values) { f.Set("subject_token", other) }, "invalid_grant"},
		{"not an ID token", func(f url.Values) { f.Set("subject_token", "a.b.c") }, "invalid_grant"},
		{"another requested type", func(f url.Values) { f.Set("requested_token_type", "urn:ietf:params:oauth:token-type:access_token") }, "invalid_request"},
		{"no audience", func(f url.Values) { f.Del("audience") }, "invalid_request"},
		{"another grant", func(f url.Values) { f.Set("grant_type", "client_credentials") }, "unsupported_grant_type"},
		{"unknown client", func(f url.Values) { f.Set("client_id", "nobody") }, "invalid_client"},
	} {
		f := exchangeForm(idt)
		f.Set("client_id", "public-app")
		tc.edit(f)
		if _, m := post(t, p.TokenEndpoint(), f, nil); m["error"] != tc.code {
			t.Errorf("%s: %v; want %s", tc.name, m, tc.code)
		}
	}
	if n := p.Count("exchange"); n != 0 {
		t.Errorf("%d exchanges succeeded; want none", n)
	}
}
