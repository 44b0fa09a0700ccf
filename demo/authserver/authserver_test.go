package authserver_test

import (
	"context"
	"encoding/base64"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"golang.org/x/oauth2"

	"github.com/mcpwasm/mcpwasm/demo/authserver"
)

func TestMetadata(t *testing.T) {
	e := newEnv(t, nil)
	// go-sdk's own validation (issuer, PKCE, URL schemes) accepts it.
	meta, err := oauthex.GetAuthServerMeta(t.Context(), e.url+"/.well-known/oauth-authorization-server", e.url, e.http)
	if err != nil || meta == nil {
		t.Fatalf("GetAuthServerMeta: %v, %v", meta, err)
	}
	want := &oauthex.AuthServerMeta{
		Issuer:                                     e.url,
		AuthorizationEndpoint:                      e.url + "/authorize",
		TokenEndpoint:                              e.url + "/token",
		RegistrationEndpoint:                       e.url + "/register",
		RevocationEndpoint:                         e.url + "/revoke",
		ScopesSupported:                            []string{"mcp:tools", "mcp:admin"},
		ResponseTypesSupported:                     []string{"code"},
		ResponseModesSupported:                     []string{"query"},
		GrantTypesSupported:                        []string{"authorization_code", "refresh_token"},
		TokenEndpointAuthMethodsSupported:          []string{"none", "client_secret_basic", "client_secret_post"},
		RevocationEndpointAuthMethodsSupported:     []string{"none", "client_secret_basic", "client_secret_post"},
		CodeChallengeMethodsSupported:              []string{"S256"},
		AuthorizationResponseIssParameterSupported: true,
	}
	if diff := cmp.Diff(want, meta); diff != "" {
		t.Errorf("metadata (-want +got):\n%s", diff)
	}

	// CORS on metadata, preflight on token.
	req, _ := http.NewRequest("GET", e.url+"/.well-known/oauth-authorization-server", nil)
	req.Header.Set("Origin", "http://127.0.0.1:8080")
	resp, err := e.http.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if got := resp.Header.Get("Access-Control-Allow-Origin"); got != "http://127.0.0.1:8080" {
		t.Errorf("metadata ACAO = %q", got)
	}
	for _, path := range []string{"/token", "/register", "/revoke"} {
		req, _ = http.NewRequest("OPTIONS", e.url+path, nil)
		req.Header.Set("Origin", "http://127.0.0.1:8080")
		req.Header.Set("Access-Control-Request-Method", "POST")
		resp, err = e.http.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusNoContent || resp.Header.Get("Access-Control-Allow-Origin") == "" {
			t.Errorf("preflight %s: %d %v", path, resp.StatusCode, resp.Header)
		}
	}
	// No CORS on the authorization endpoint.
	req, _ = http.NewRequest("GET", e.url+"/authorize", nil)
	req.Header.Set("Origin", "http://127.0.0.1:8080")
	resp, _ = e.http.Do(req)
	resp.Body.Close()
	if got := resp.Header.Get("Access-Control-Allow-Origin"); got != "" {
		t.Errorf("authorize ACAO = %q, want none", got)
	}

	// OpenID configuration: 404 by default, served on request.
	if resp, _ := e.get(e.url + "/.well-known/openid-configuration"); resp.StatusCode != http.StatusNotFound {
		t.Errorf("openid-configuration: %d, want 404", resp.StatusCode)
	}
	e2 := newEnv(t, func(c *authserver.Config) { c.ServeOpenIDConfiguration = true; c.ClientIDMetadataDocuments = true })
	if resp, body := e2.get(e2.url + "/.well-known/openid-configuration"); resp.StatusCode != http.StatusOK ||
		!strings.Contains(body, `"client_id_metadata_document_supported":true`) {
		t.Errorf("openid-configuration with flag: %d %s", resp.StatusCode, body)
	}
	if _, body := e.get(e.url + "/.well-known/oauth-authorization-server"); !strings.Contains(body, `"client_id_metadata_document_supported":false`) {
		t.Errorf("metadata without CIMD: %s", body)
	}
	if n := e.as.Count(authserver.EventMetadata); n != 3 {
		t.Errorf("metadata events = %d, want 3", n)
	}
}

func TestNewRejectsBadConfig(t *testing.T) {
	for _, cfg := range []authserver.Config{
		{Issuer: "http://example.com", Resources: []string{resource}},      // http, not loopback
		{Issuer: "http://127.0.0.1:1/path", Resources: []string{resource}}, // path
		{Issuer: "http://127.0.0.1:1"},                                     // no resources
		{Issuer: "http://127.0.0.1:1", Resources: []string{resource}, Clients: []authserver.Client{{ID: "c", AuthMethod: "client_secret_basic", RedirectURIs: []string{redirectURI}}}},
		{Issuer: "http://127.0.0.1:1", Resources: []string{resource}, Clients: []authserver.Client{{ID: "c", RedirectURIs: []string{"http://evil.example/cb"}}}},
	} {
		if _, err := authserver.New(cfg); err == nil {
			t.Errorf("New(%+v) succeeded", cfg)
		}
	}
}

// TestFullLogin: register → consent page → approve → code → token →
// verifier → refresh with rotation → replay of a rotated refresh token
// revokes the grant → new login → revoke.
func TestFullLogin(t *testing.T) {
	e := newEnv(t, func(c *authserver.Config) { c.AccessTokenTTL = 10 * time.Minute })
	id, secret := e.register(`{"redirect_uris":["` + redirectURI + `"],"client_name":"<b>Evil & Co</b>"}`)
	if secret != "" {
		t.Errorf("public client got a secret")
	}
	conf := e.oauthConfig(id, "", oauth2.AuthStyleInParams, "mcp:tools")

	// The consent page escapes the client name and has both buttons.
	verifier := oauth2.GenerateVerifier()
	authURL := conf.AuthCodeURL("st-1", oauth2.S256ChallengeOption(verifier), oauth2.SetAuthURLParam("resource", resource))
	resp, page := e.get(authURL)
	if resp.StatusCode != 200 {
		t.Fatalf("authorize: %d %s", resp.StatusCode, page)
	}
	for _, want := range []string{`id="approve"`, `id="deny"`, "&lt;b&gt;Evil &amp; Co&lt;/b&gt;", "mcp:tools", resource, `href="/static/consent.css"`} {
		if !strings.Contains(page, want) {
			t.Errorf("consent page lacks %q", want)
		}
	}
	if strings.Contains(page, "<b>Evil") || strings.Contains(page, "<script") {
		t.Errorf("consent page not escaped / has script")
	}
	if csp := resp.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'none'") {
		t.Errorf("CSP = %q", csp)
	}
	if resp.Header.Get("Cross-Origin-Opener-Policy") != "" {
		t.Errorf("COOP sent without Config.COOP")
	}
	if resp, css := e.get(e.url + "/static/consent.css"); resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/css") || css == "" {
		t.Errorf("stylesheet: %d %q", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	q := e.consent(authURL, "approve")
	if q.Get("state") != "st-1" || q.Get("iss") != e.url || q.Get("code") == "" {
		t.Fatalf("approve redirect: %v", q)
	}
	tok, err := conf.Exchange(e.ctx(), q.Get("code"), oauth2.VerifierOption(verifier), oauth2.SetAuthURLParam("resource", resource))
	if err != nil {
		t.Fatal(err)
	}
	if tok.TokenType != "Bearer" || tok.RefreshToken == "" || tok.Extra("scope") != "mcp:tools" || tok.ExpiresIn != 600 {
		t.Errorf("token: type %q refresh %v scope %v expires_in %d", tok.TokenType, tok.RefreshToken != "", tok.Extra("scope"), tok.ExpiresIn)
	}
	raw, _ := base64.RawURLEncoding.DecodeString(strings.TrimPrefix(tok.AccessToken, authserver.AccessTokenPrefix))
	if len(raw) < 32 {
		t.Errorf("access token has %d random bytes, want ≥ 32", len(raw))
	}

	// The verifier accepts it for its resource only.
	info, err := e.as.Verifier(resource)(t.Context(), tok.AccessToken, nil)
	if err != nil || !cmp.Equal(info.Scopes, []string{"mcp:tools"}) || info.Expiration.IsZero() || info.UserID == "" {
		t.Fatalf("Verifier: %+v, %v", info, err)
	}
	if _, err := e.as.Verifier("http://127.0.0.1:9/other")(t.Context(), tok.AccessToken, nil); !errors.Is(err, auth.ErrInvalidToken) {
		t.Errorf("Verifier(other audience) = %v, want ErrInvalidToken", err)
	}
	if _, err := e.as.Verifier(resource)(t.Context(), "mcpwasm_at_nope", nil); !errors.Is(err, auth.ErrInvalidToken) {
		t.Errorf("Verifier(unknown) = %v", err)
	}

	// Refresh rotates.
	refresh := func(rt string) (*oauth2.Token, error) {
		return conf.TokenSource(e.ctx(), &oauth2.Token{RefreshToken: rt, Expiry: time.Now().Add(-time.Hour)}).Token()
	}
	tok2, err := refresh(tok.RefreshToken)
	if err != nil {
		t.Fatal(err)
	}
	if tok2.RefreshToken == tok.RefreshToken || tok2.AccessToken == tok.AccessToken || tok2.RefreshToken == "" {
		t.Errorf("refresh did not rotate")
	}
	if _, err := e.as.Verifier(resource)(t.Context(), tok2.AccessToken, nil); err != nil {
		t.Errorf("refreshed token: %v", err)
	}
	// Replaying the rotated refresh token revokes the whole grant.
	_, err = refresh(tok.RefreshToken)
	if re := oauthErr(t, err); re.ErrorCode != "invalid_grant" {
		t.Errorf("reuse: %v", err)
	}
	if n := e.as.Count(authserver.EventRefreshReuse); n != 1 {
		t.Errorf("refresh_reuse events = %d", n)
	}
	if _, err := refresh(tok2.RefreshToken); err == nil {
		t.Errorf("the newest refresh token still works after reuse detection")
	}
	for _, at := range []string{tok.AccessToken, tok2.AccessToken} {
		if _, err := e.as.Verifier(resource)(t.Context(), at, nil); !errors.Is(err, auth.ErrInvalidToken) {
			t.Errorf("access token alive after reuse detection: %v", err)
		}
	}
	if n := e.as.Count(authserver.EventTokenRefresh); n != 3 {
		t.Errorf("token_refresh events = %d, want 3", n)
	}

	// New login, then revoke its refresh token: the grant dies.
	tok3 := e.login(conf)
	resp, _ = e.postForm("/revoke", url.Values{"token": {tok3.RefreshToken}, "token_type_hint": {"refresh_token"}, "client_id": {id}}, nil)
	if resp.StatusCode != 200 || resp.Header.Get("Cache-Control") != "no-store" {
		t.Errorf("revoke: %d", resp.StatusCode)
	}
	if _, err := e.as.Verifier(resource)(t.Context(), tok3.AccessToken, nil); err == nil {
		t.Errorf("access token alive after revoking its refresh token")
	}
	if _, err := refresh(tok3.RefreshToken); err == nil {
		t.Errorf("revoked refresh token works")
	}
	// Revoking an access token revokes its grant too; unknown tokens are 200.
	tok4 := e.login(conf)
	resp, _ = e.postForm("/revoke", url.Values{"token": {tok4.AccessToken}, "client_id": {id}}, nil)
	if resp.StatusCode != 200 {
		t.Errorf("revoke access: %d", resp.StatusCode)
	}
	if _, err := refresh(tok4.RefreshToken); err == nil {
		t.Errorf("refresh works after revoking the access token")
	}
	resp, _ = e.postForm("/revoke", url.Values{"token": {"nonsense"}, "client_id": {id}}, nil)
	if resp.StatusCode != 200 {
		t.Errorf("revoke unknown: %d", resp.StatusCode)
	}
	resp, body := e.postForm("/revoke", url.Values{"token": {"nonsense"}}, nil)
	if resp.StatusCode != 401 || body["error"] != "invalid_client" {
		t.Errorf("revoke without client: %d %v", resp.StatusCode, body)
	}
	var revoked int
	for _, ev := range e.as.Events() {
		if ev.Kind == authserver.EventRevoke && ev.Detail == "revoked" {
			revoked++
		}
		for _, secret := range []string{tok.AccessToken, tok.RefreshToken, tok3.RefreshToken, verifier} {
			if strings.Contains(ev.Detail, secret) {
				t.Errorf("event %+v holds a secret", ev)
			}
		}
	}
	if revoked != 2 || e.as.Count(authserver.EventRevoke) != 4 {
		t.Errorf("revoked = %d, revoke events = %d", revoked, e.as.Count(authserver.EventRevoke))
	}
	if n := e.as.Count(authserver.EventRegister); n != 1 {
		t.Errorf("register events = %d", n)
	}
}

// TestGoSDKRegisterClient: go-sdk's DCR client accepts the response.
func TestGoSDKRegisterClient(t *testing.T) {
	e := newEnv(t, nil)
	res, err := oauthex.RegisterClient(t.Context(), e.url+"/register", &oauthex.ClientRegistrationMetadata{
		RedirectURIs: []string{redirectURI}, ClientName: "sdk", TokenEndpointAuthMethod: "none",
		GrantTypes: []string{"authorization_code", "refresh_token"},
	}, e.http)
	if err != nil || res.ClientID == "" || res.ClientSecret != "" || res.TokenEndpointAuthMethod != "none" || res.ClientIDIssuedAt.IsZero() {
		t.Fatalf("RegisterClient: %+v, %v", res, err)
	}
}

func TestAutoApprove(t *testing.T) {
	var events []authserver.Event
	e := newEnv(t, func(c *authserver.Config) {
		c.AutoApprove = true
		c.OnEvent = func(ev authserver.Event) { events = append(events, ev) }
	})
	conf := e.oauthConfig(e.registerPublic(), "", oauth2.AuthStyleInParams)
	verifier := oauth2.GenerateVerifier()
	resp, _ := e.get(conf.AuthCodeURL("s", oauth2.S256ChallengeOption(verifier), oauth2.SetAuthURLParam("resource", resource)))
	q := e.location(resp)
	tok, err := conf.Exchange(e.ctx(), q.Get("code"), oauth2.VerifierOption(verifier), oauth2.SetAuthURLParam("resource", resource))
	if err != nil {
		t.Fatal(err)
	}
	if tok.Extra("scope") != "mcp:tools" { // the default scope
		t.Errorf("scope = %v", tok.Extra("scope"))
	}
	var kinds []string
	for _, ev := range events {
		kinds = append(kinds, ev.Kind)
	}
	if diff := cmp.Diff([]string{"register", "authorize", "consent", "token_code"}, kinds); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
}

func TestDenyAndTicket(t *testing.T) {
	e := newEnv(t, nil)
	conf := e.oauthConfig(e.registerPublic(), "", oauth2.AuthStyleInParams)
	authURL := conf.AuthCodeURL("st-deny", oauth2.S256ChallengeOption(oauth2.GenerateVerifier()), oauth2.SetAuthURLParam("resource", resource))
	_, page := e.get(authURL)
	ticket := ticketRE.FindStringSubmatch(page)[1]
	post := func(origin string) *http.Response {
		resp, _ := e.postForm("/consent", url.Values{"ticket": {ticket}, "action": {"deny"}}, func(r *http.Request) {
			if origin != "" {
				r.Header.Set("Origin", origin)
			}
		})
		return resp
	}
	// A cross-origin post is refused (and burns nothing).
	if resp := post("http://127.0.0.1:8080"); resp.StatusCode != http.StatusForbidden {
		t.Errorf("cross-origin consent: %d", resp.StatusCode)
	}
	q := e.location(post(e.url))
	if q.Get("error") != "access_denied" || q.Get("state") != "st-deny" || q.Get("iss") != e.url || q.Get("error_description") == "" || q.Has("code") {
		t.Errorf("deny redirect: %v", q)
	}
	// Single use.
	if resp := post(e.url); resp.StatusCode != http.StatusBadRequest || resp.Header.Get("Location") != "" {
		t.Errorf("reused ticket: %d", resp.StatusCode)
	}
	// Expired.
	_, page = e.get(authURL)
	ticket = ticketRE.FindStringSubmatch(page)[1]
	e.clock.Add(authserver.DefaultConsentTTL + time.Second)
	if resp := post(e.url); resp.StatusCode != http.StatusBadRequest {
		t.Errorf("expired ticket: %d", resp.StatusCode)
	}
}

func TestCOOP(t *testing.T) {
	for _, coop := range []bool{false, true} {
		e := newEnv(t, func(c *authserver.Config) { c.COOP = coop })
		conf := e.oauthConfig(e.registerPublic(), "", oauth2.AuthStyleInParams)
		resp, _ := e.get(conf.AuthCodeURL("s", oauth2.S256ChallengeOption(oauth2.GenerateVerifier()), oauth2.SetAuthURLParam("resource", resource)))
		want := ""
		if coop {
			want = "same-origin"
		}
		if got := resp.Header.Get("Cross-Origin-Opener-Policy"); got != want || resp.StatusCode != 200 {
			t.Errorf("COOP=%v: status %d, header %q", coop, resp.StatusCode, got)
		}
		resp, _ = e.get(e.url + "/authorize?client_id=unknown")
		if got := resp.Header.Get("Cross-Origin-Opener-Policy"); got != want {
			t.Errorf("COOP=%v on error page: %q", coop, got)
		}
	}
}

func TestAuthorizeRefusals(t *testing.T) {
	e := newEnv(t, nil)
	id := e.registerPublic()
	challenge := oauth2.S256ChallengeFromVerifier(oauth2.GenerateVerifier())
	good := url.Values{
		"response_type": {"code"}, "client_id": {id}, "redirect_uri": {redirectURI}, "state": {"xyz"},
		"code_challenge": {challenge}, "code_challenge_method": {"S256"}, "resource": {resource}, "scope": {"mcp:tools"},
	}
	with := func(mod func(url.Values)) string {
		v := url.Values{}
		for k, vs := range good {
			v[k] = append([]string(nil), vs...)
		}
		mod(v)
		return e.url + "/authorize?" + v.Encode()
	}
	// Errors that must never redirect.
	for name, u := range map[string]string{
		"unknown client":      with(func(v url.Values) { v.Set("client_id", "nope") }),
		"no client":           with(func(v url.Values) { v.Del("client_id") }),
		"wrong redirect_uri":  with(func(v url.Values) { v.Set("redirect_uri", "http://127.0.0.1:9/elsewhere") }),
		"redirect_uri prefix": with(func(v url.Values) { v.Set("redirect_uri", redirectURI+"/x") }),
		"no redirect_uri":     with(func(v url.Values) { v.Del("redirect_uri") }),
		"two redirect_uris":   with(func(v url.Values) { v.Add("redirect_uri", redirectURI) }),
		"evil redirect_uri":   with(func(v url.Values) { v.Set("redirect_uri", "https://evil.example/cb") }),
	} {
		resp, body := e.get(u)
		if resp.StatusCode != http.StatusBadRequest || resp.Header.Get("Location") != "" ||
			!strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") || !strings.Contains(body, "Sign-in error") {
			t.Errorf("%s: %d Location=%q", name, resp.StatusCode, resp.Header.Get("Location"))
		}
	}
	// Errors sent to the validated redirect URI.
	for name, tc := range map[string]struct {
		mod  func(url.Values)
		code string
	}{
		"plain PKCE":        {func(v url.Values) { v.Set("code_challenge_method", "plain") }, "invalid_request"},
		"no method (plain)": {func(v url.Values) { v.Del("code_challenge_method") }, "invalid_request"},
		"no challenge":      {func(v url.Values) { v.Del("code_challenge") }, "invalid_request"},
		"bad challenge":     {func(v url.Values) { v.Set("code_challenge", "short") }, "invalid_request"},
		"token flow":        {func(v url.Values) { v.Set("response_type", "token") }, "unsupported_response_type"},
		"no response_type":  {func(v url.Values) { v.Del("response_type") }, "invalid_request"},
		"unknown resource":  {func(v url.Values) { v.Set("resource", "http://127.0.0.1:9/elsewhere") }, "invalid_target"},
		"no resource":       {func(v url.Values) { v.Del("resource") }, "invalid_target"},
		"two resources":     {func(v url.Values) { v.Add("resource", "http://127.0.0.1:9/other") }, "invalid_target"},
		"unknown scope":     {func(v url.Values) { v.Set("scope", "mcp:tools root") }, "invalid_scope"},
		"repeated scope":    {func(v url.Values) { v.Add("scope", "mcp:admin") }, "invalid_request"},
		"fragment mode":     {func(v url.Values) { v.Set("response_mode", "fragment") }, "invalid_request"},
	} {
		resp, _ := e.get(with(tc.mod))
		q := e.location(resp)
		if q.Get("error") != tc.code || q.Get("state") != "xyz" || q.Get("iss") != e.url || q.Get("error_description") == "" {
			t.Errorf("%s: redirect query %v, want error=%s", name, q, tc.code)
		}
	}
	// Scheme/host case does not matter for the resource.
	resp, _ := e.get(with(func(v url.Values) { v.Set("resource", "HTTP://127.0.0.1:9/mcp") }))
	if resp.StatusCode != 200 {
		t.Errorf("upper-case resource scheme: %d", resp.StatusCode)
	}
}

func TestTokenRefusals(t *testing.T) {
	e := newEnv(t, nil)
	id := e.registerPublic()
	conf := e.oauthConfig(id, "", oauth2.AuthStyleInParams)
	ctx := e.ctx()
	res := oauth2.SetAuthURLParam("resource", resource)
	expect := func(name string, err error, code string, status int) {
		t.Helper()
		if err == nil {
			t.Errorf("%s: succeeded", name)
			return
		}
		re := oauthErr(t, err)
		if re.ErrorCode != code || re.Response.StatusCode != status {
			t.Errorf("%s: %s (%d), want %s (%d)", name, re.ErrorCode, re.Response.StatusCode, code, status)
		}
		if cc := re.Response.Header.Get("Cache-Control"); cc != "no-store" {
			t.Errorf("%s: Cache-Control %q", name, cc)
		}
	}

	code, _ := e.authorizeCode(conf)
	_, err := conf.Exchange(ctx, code, oauth2.VerifierOption(oauth2.GenerateVerifier()), res)
	expect("wrong verifier", err, "invalid_grant", 400)

	code, v := e.authorizeCode(conf)
	_, err = conf.Exchange(ctx, code, res)
	expect("no verifier", err, "invalid_request", 400)
	_, err = conf.Exchange(ctx, code, oauth2.VerifierOption(v), res) // the code is intact: the request was malformed
	if err != nil {
		t.Errorf("exchange after a malformed request: %v", err)
	}

	code, v = e.authorizeCode(conf)
	other := *conf
	other.RedirectURL = "http://127.0.0.1:9/elsewhere"
	_, err = other.Exchange(ctx, code, oauth2.VerifierOption(v), res)
	expect("wrong redirect_uri", err, "invalid_grant", 400)

	code, v = e.authorizeCode(conf)
	_, err = conf.Exchange(ctx, code, oauth2.VerifierOption(v), oauth2.SetAuthURLParam("resource", "http://127.0.0.1:9/other"))
	expect("wrong resource", err, "invalid_target", 400)
	code, v = e.authorizeCode(conf)
	_, err = conf.Exchange(ctx, code, oauth2.VerifierOption(v))
	expect("no resource", err, "invalid_target", 400)

	// Code reuse fails and revokes what the code produced.
	code, v = e.authorizeCode(conf)
	tok, err := conf.Exchange(ctx, code, oauth2.VerifierOption(v), res)
	if err != nil {
		t.Fatal(err)
	}
	_, err = conf.Exchange(ctx, code, oauth2.VerifierOption(v), res)
	expect("code reuse", err, "invalid_grant", 400)
	if _, err := e.as.Verifier(resource)(t.Context(), tok.AccessToken, nil); err == nil {
		t.Errorf("token of a reused code still valid")
	}
	if _, err := conf.TokenSource(ctx, &oauth2.Token{RefreshToken: tok.RefreshToken}).Token(); err == nil {
		t.Errorf("refresh token of a reused code still valid")
	}
	if e.as.Count(authserver.EventCodeReuse) != 1 {
		t.Errorf("code_reuse events = %d", e.as.Count(authserver.EventCodeReuse))
	}

	// Expired code (60 s).
	code, v = e.authorizeCode(conf)
	e.clock.Add(61 * time.Second)
	_, err = conf.Exchange(ctx, code, oauth2.VerifierOption(v), res)
	expect("expired code", err, "invalid_grant", 400)

	// Client authentication.
	code, v = e.authorizeCode(conf)
	unknown := *conf
	unknown.ClientID = "nope"
	_, err = unknown.Exchange(ctx, code, oauth2.VerifierOption(v), res)
	expect("unknown client", err, "invalid_client", 401)
	withSecret := *conf
	withSecret.ClientSecret = "guess"
	_, err = withSecret.Exchange(ctx, code, oauth2.VerifierOption(v), res)
	expect("public client sends a secret", err, "invalid_client", 401)
	// A code of client A cannot be redeemed by client B.
	idB := e.registerPublic()
	confB := e.oauthConfig(idB, "", oauth2.AuthStyleInParams)
	_, err = confB.Exchange(ctx, code, oauth2.VerifierOption(v), res)
	expect("another client's code", err, "invalid_grant", 400)

	// Unsupported grant type and malformed requests.
	resp, body := e.postForm("/token", url.Values{"grant_type": {"client_credentials"}, "client_id": {id}}, nil)
	if resp.StatusCode != 400 || body["error"] != "unsupported_grant_type" {
		t.Errorf("client_credentials: %d %v", resp.StatusCode, body)
	}
	resp, body = e.postForm("/token", url.Values{"grant_type": {"authorization_code"}, "client_id": {id}, "code": {"a", "b"}}, nil)
	if resp.StatusCode != 400 || body["error"] != "invalid_request" {
		t.Errorf("repeated code: %d %v", resp.StatusCode, body)
	}
	resp, body = e.postForm("/token", url.Values{"grant_type": {"refresh_token"}, "client_id": {id}, "refresh_token": {strings.Repeat("x", 70<<10)}}, nil)
	if resp.StatusCode != http.StatusRequestEntityTooLarge {
		t.Errorf("huge body: %d %v", resp.StatusCode, body)
	}
	req, _ := http.NewRequest("POST", e.url+"/token", strings.NewReader(`{"grant_type":"refresh_token"}`))
	req.Header.Set("Content-Type", "application/json")
	resp, _ = e.http.Do(req)
	resp.Body.Close()
	if resp.StatusCode != 400 {
		t.Errorf("JSON token request: %d", resp.StatusCode)
	}
	if resp, _ := e.get(e.url + "/token"); resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("GET /token: %d", resp.StatusCode)
	}
}

func TestRefreshResource(t *testing.T) {
	e := newEnv(t, nil)
	conf := e.oauthConfig(e.registerPublic(), "", oauth2.AuthStyleInParams)
	tok := e.login(conf)
	form := url.Values{"grant_type": {"refresh_token"}, "client_id": {conf.ClientID}, "refresh_token": {tok.RefreshToken}, "resource": {"http://127.0.0.1:9/other"}}
	resp, body := e.postForm("/token", form, nil)
	if resp.StatusCode != 400 || body["error"] != "invalid_target" {
		t.Errorf("refresh for another resource: %d %v", resp.StatusCode, body)
	}
	form.Set("resource", resource)
	resp, body = e.postForm("/token", form, nil)
	if resp.StatusCode != 200 || body["refresh_token"] == tok.RefreshToken {
		t.Errorf("refresh with resource: %d %v", resp.StatusCode, body)
	}
}

func TestConfidentialClients(t *testing.T) {
	e := newEnv(t, func(c *authserver.Config) {
		c.Clients = []authserver.Client{{ID: "pre", Secret: "s3cret", AuthMethod: authserver.AuthClientSecretPost, RedirectURIs: []string{redirectURI}, Name: "Pre"}}
	})
	for _, tc := range []struct {
		method string
		style  oauth2.AuthStyle
		wrong  oauth2.AuthStyle
	}{
		{authserver.AuthClientSecretBasic, oauth2.AuthStyleInHeader, oauth2.AuthStyleInParams},
		{authserver.AuthClientSecretPost, oauth2.AuthStyleInParams, oauth2.AuthStyleInHeader},
	} {
		id, secret := e.register(`{"redirect_uris":["` + redirectURI + `"],"token_endpoint_auth_method":"` + tc.method + `"}`)
		if secret == "" {
			t.Fatalf("%s: no secret", tc.method)
		}
		conf := e.oauthConfig(id, secret, tc.style)
		tok := e.login(conf)
		if _, err := conf.TokenSource(e.ctx(), &oauth2.Token{RefreshToken: tok.RefreshToken}).Token(); err != nil {
			t.Errorf("%s refresh: %v", tc.method, err)
		}
		code, v := e.authorizeCode(conf)
		wrong := e.oauthConfig(id, secret, tc.wrong)
		_, err := wrong.Exchange(e.ctx(), code, oauth2.VerifierOption(v), oauth2.SetAuthURLParam("resource", resource))
		if re := oauthErr(t, err); re.ErrorCode != "invalid_client" || re.Response.StatusCode != 401 {
			t.Errorf("%s with the other method: %v", tc.method, err)
		}
		bad := e.oauthConfig(id, secret+"x", tc.style)
		_, err = bad.Exchange(e.ctx(), code, oauth2.VerifierOption(v), oauth2.SetAuthURLParam("resource", resource))
		if re := oauthErr(t, err); re.ErrorCode != "invalid_client" {
			t.Errorf("%s wrong secret: %v", tc.method, err)
		}
		none := e.oauthConfig(id, "", oauth2.AuthStyleInParams)
		_, err = none.Exchange(e.ctx(), code, oauth2.VerifierOption(v), oauth2.SetAuthURLParam("resource", resource))
		if re := oauthErr(t, err); re.ErrorCode != "invalid_client" {
			t.Errorf("%s without secret: %v", tc.method, err)
		}
	}
	// Pre-registered client.
	e.login(e.oauthConfig("pre", "s3cret", oauth2.AuthStyleInParams))
}

func TestRegistrationRefusals(t *testing.T) {
	e := newEnv(t, nil)
	for name, body := range map[string]string{
		"no redirect":    `{"client_name":"x"}`,
		"http not local": `{"redirect_uris":["http://example.com/cb"]}`,
		"fragment":       `{"redirect_uris":["http://127.0.0.1:9/cb#frag"]}`,
		"custom scheme":  `{"redirect_uris":["myapp://cb"]}`,
		"relative":       `{"redirect_uris":["/cb"]}`,
		"javascript":     `{"redirect_uris":["javascript:alert(1)"]}`,
		"bad method":     `{"redirect_uris":["` + redirectURI + `"],"token_endpoint_auth_method":"private_key_jwt"}`,
		"implicit":       `{"redirect_uris":["` + redirectURI + `"],"grant_types":["implicit"]}`,
		"token response": `{"redirect_uris":["` + redirectURI + `"],"response_types":["token"]}`,
		"unknown scope":  `{"redirect_uris":["` + redirectURI + `"],"scope":"root"}`,
		"not json":       `redirect_uris=x`,
	} {
		resp, err := e.http.Post(e.url+"/register", "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 400 {
			t.Errorf("%s: %d, want 400", name, resp.StatusCode)
		}
	}
	// https anywhere and http on loopback are fine.
	e.register(`{"redirect_uris":["https://app.example/cb","http://[::1]:8080/cb","http://localhost/cb"]}`)
}

func TestVerifierExpiry(t *testing.T) {
	e := newEnv(t, func(c *authserver.Config) { c.AccessTokenTTL = time.Minute })
	tok := e.login(e.oauthConfig(e.registerPublic(), "", oauth2.AuthStyleInParams))
	if _, err := e.as.Verifier(resource)(context.Background(), tok.AccessToken, nil); err != nil {
		t.Fatal(err)
	}
	e.clock.Add(time.Minute)
	if _, err := e.as.Verifier(resource)(context.Background(), tok.AccessToken, nil); !errors.Is(err, auth.ErrInvalidToken) {
		t.Errorf("expired token: %v", err)
	}
}

func TestClientIDMetadataDocument(t *testing.T) {
	var docURL string
	mux := http.NewServeMux()
	mux.HandleFunc("/client.json", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"client_id":"` + docURL + `","client_name":"Doc client","redirect_uris":["` + redirectURI + `"],"token_endpoint_auth_method":"none"}`))
	})
	docSrv := newDocServer(t, mux)
	docURL = docSrv + "/client.json"
	e := newEnv(t, func(c *authserver.Config) { c.ClientIDMetadataDocuments = true })
	tok := e.login(e.oauthConfig(docURL, "", oauth2.AuthStyleInParams))
	if tok.AccessToken == "" || e.as.Count(authserver.EventClientMetadoc) != 1 {
		t.Errorf("metadoc login: %d fetches", e.as.Count(authserver.EventClientMetadoc))
	}
	// Disabled: the URL is an unknown client.
	e2 := newEnv(t, nil)
	if resp, _ := e2.get(e2.oauthConfig(docURL, "", 0).AuthCodeURL("s")); resp.StatusCode != 400 {
		t.Errorf("metadoc disabled: %d", resp.StatusCode)
	}
}
