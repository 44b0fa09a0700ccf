package oauth

import (
	"context"
	"encoding/base64"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/oauthex"

	"github.com/mcpwasm/mcpwasm/mcperr"
)

func TestDiscoveryVariants(t *testing.T) {
	tests := []struct {
		name    string
		setup   func(e *env)
		www     bool   // pass the 401's WWW-Authenticate to Authorize
		wantHit string // a request path that must have been made (on AS or RS)
	}{
		{"header URL", func(e *env) { e.rs.prmPath = "/custom/prm.json" }, true, "/custom/prm.json"},
		{"path-inserted PRM", func(e *env) {}, false, "/.well-known/oauth-protected-resource/mcp"},
		{"root PRM", func(e *env) {
			e.rs.prmPath = "/.well-known/oauth-protected-resource"
			e.rs.prm = func(m map[string]any) { m["resource"] = e.rs.srv.URL }
		}, false, "/.well-known/oauth-protected-resource"},
		{"hidden WWW-Authenticate", func(e *env) { e.rs.hideWWW = true }, true, "/.well-known/oauth-protected-resource/mcp"},
		{"RFC 8414 path", func(e *env) { e.as.issuerPath = "/tenant1" }, false, "/.well-known/oauth-authorization-server/tenant1"},
		{"RFC 8414 root", func(e *env) {}, false, "/.well-known/oauth-authorization-server"},
		{"OpenID path-inserted", func(e *env) {
			e.as.issuerPath = "/t"
			e.as.metaPath = "/.well-known/openid-configuration/t"
		}, false, "/.well-known/openid-configuration/t"},
		{"OpenID path-appended", func(e *env) {
			e.as.issuerPath = "/t"
			e.as.metaPath = "/t/.well-known/openid-configuration"
		}, false, "/t/.well-known/openid-configuration"},
		{"OpenID root", func(e *env) { e.as.metaPath = "/.well-known/openid-configuration" }, false, "/.well-known/openid-configuration"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			tt.setup(e)
			h := e.handler(t, nil)
			ctx := context.Background()
			if tt.www {
				if err := connect(ctx, e.rs.url(), h); err != nil {
					t.Fatalf("connect: %v", err)
				}
			} else if err := h.Login(ctx); err != nil {
				t.Fatalf("Login: %v", err)
			}
			if e.as.req.get(tt.wantHit)+e.rs.req.get(tt.wantHit) == 0 {
				t.Errorf("no request to %s; AS %v RS %v", tt.wantHit, e.as.req.m, e.rs.req.m)
			}
			if g, _ := e.store.GetGrant(ctx, h.Resource()); g == nil {
				t.Error("no grant stored")
			}
		})
	}
}

// TestLegacy2025_03_26 serves the MCP server and its authorization server
// on one origin without protected resource metadata.
func TestLegacy2025_03_26(t *testing.T) {
	for _, withMeta := range []bool{true, false} {
		t.Run(map[bool]string{true: "metadata", false: "default endpoints"}[withMeta], func(t *testing.T) {
			e := newEnv(t)
			// The MCP endpoint lives on the AS origin: a combined server.
			mux := http.NewServeMux()
			if !withMeta {
				e.as.metaPath = "/nowhere"
			}
			mux.Handle("/", e.as.srv.Config.Handler)
			rsHandler := e.rs.srv.Config.Handler
			e.rs.noPRM = true
			e.rs.hideWWW = true
			e.as.srv.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path == "/mcp" {
					rsHandler.ServeHTTP(w, r)
					return
				}
				mux.ServeHTTP(w, r)
			})
			h := e.handler(t, func(c *Config) { c.ResourceURL = e.as.srv.URL + "/mcp" })
			if err := connect(context.Background(), e.as.srv.URL+"/mcp", h); err != nil {
				t.Fatalf("connect: %v", err)
			}
		})
	}
}

func TestRegistrationMethods(t *testing.T) {
	tests := []struct {
		name         string
		authMethod   string
		edit         func(e *env, c *Config)
		wantRegister int
		wantClient   string
	}{
		{"dcr none", "none", nil, 1, "dcr-client-"},
		{"dcr basic", "client_secret_basic", nil, 1, "dcr-client-"},
		{"dcr post", "client_secret_post", nil, 1, "dcr-client-"},
		{"pre-registered public", "none", func(e *env, c *Config) { c.ClientID = "pre" }, 0, "pre"},
		{"pre-registered basic", "client_secret_basic", func(e *env, c *Config) {
			c.ClientID, c.ClientSecret = "pre", "pre-secret"
			e.as.clientID, e.as.clientSecret = "pre", "pre-secret"
		}, 0, "pre"},
		{"pre-registered post", "client_secret_post", func(e *env, c *Config) {
			c.ClientID, c.ClientSecret = "pre:odd", "pre secret&"
			e.as.clientID, e.as.clientSecret = "pre:odd", "pre secret&"
		}, 0, "pre:odd"},
		{"client ID metadata document", "none", func(e *env, c *Config) {
			c.ClientMetadataURL = "https://app.example/client.json"
			c.ClientID = "ignored-when-cimd-supported"
			e.as.meta = func(m map[string]any) { m["client_id_metadata_document_supported"] = true }
		}, 0, "https://app.example/client.json"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			e.as.authMethod = tt.authMethod
			h := e.handler(t, func(c *Config) {
				if tt.edit != nil {
					tt.edit(e, c)
				}
			})
			ctx := context.Background()
			if err := connect(ctx, e.rs.url(), h); err != nil {
				t.Fatalf("connect: %v", err)
			}
			if got := e.as.req.get("/register"); got != tt.wantRegister {
				t.Errorf("registrations = %d; want %d", got, tt.wantRegister)
			}
			g, _ := e.store.GetGrant(ctx, h.Resource())
			if !strings.HasPrefix(g.ClientID, tt.wantClient) {
				t.Errorf("client_id = %q; want prefix %q", g.ClientID, tt.wantClient)
			}
		})
	}
}

func TestNoRegistrationMethod(t *testing.T) {
	e := newEnv(t)
	e.as.meta = func(m map[string]any) { delete(m, "registration_endpoint") }
	h := e.handler(t, nil)
	err := h.Login(context.Background())
	if !errors.Is(err, ErrRegistrationFailed) || !strings.Contains(err.Error(), "ClientID") {
		t.Fatalf("got %v; want registration_failed naming ClientID", err)
	}
}

func TestHostileInput(t *testing.T) {
	tests := []struct {
		name string
		edit func(e *env)
		want mcperr.Code
	}{
		{"issuer mismatch", func(e *env) { e.as.meta = func(m map[string]any) { m["issuer"] = "https://evil.example" } }, mcperr.DiscoveryFailed},
		{"non-https endpoint", func(e *env) {
			e.as.meta = func(m map[string]any) { m["token_endpoint"] = "http://token.example/token" }
		}, mcperr.DiscoveryFailed},
		{"javascript: endpoint", func(e *env) {
			e.as.meta = func(m map[string]any) { m["authorization_endpoint"] = "javascript:alert(1)" }
		}, mcperr.DiscoveryFailed},
		{"relative endpoint", func(e *env) { e.as.meta = func(m map[string]any) { m["token_endpoint"] = "/token" } }, mcperr.DiscoveryFailed},
		{"javascript: doc URL", func(e *env) {
			e.as.meta = func(m map[string]any) { m["op_tos_uri"] = "javascript:alert(1)" }
		}, mcperr.DiscoveryFailed},
		{"PRM names another resource", func(e *env) {
			e.rs.prm = func(m map[string]any) { m["resource"] = "https://evil.example/mcp" }
		}, mcperr.DiscoveryFailed},
		{"PRM without authorization servers", func(e *env) {
			e.rs.prm = func(m map[string]any) { delete(m, "authorization_servers") }
		}, mcperr.DiscoveryFailed},
		{"PRM javascript: AS", func(e *env) {
			e.rs.prm = func(m map[string]any) { m["authorization_servers"] = []string{"javascript:alert(1)"} }
		}, mcperr.DiscoveryFailed},
		{"no S256", func(e *env) {
			e.as.meta = func(m map[string]any) { m["code_challenge_methods_supported"] = []string{"plain"} }
		}, mcperr.DiscoveryFailed},
		{"no PKCE advertised", func(e *env) {
			e.as.meta = func(m map[string]any) { delete(m, "code_challenge_methods_supported") }
		}, mcperr.DiscoveryFailed},
		{"oversized metadata", func(e *env) {
			e.as.meta = func(m map[string]any) { m["pad"] = strings.Repeat("x", maxBody) }
		}, mcperr.DiscoveryFailed},
		{"malformed PRM", func(e *env) { e.rs.prm = func(m map[string]any) { m["authorization_servers"] = 7 } }, mcperr.DiscoveryFailed},
		{"iss mismatch", func(e *env) { e.as.sendIss = "https://evil.example" }, mcperr.StateMismatch},
		{"iss missing when advertised", func(e *env) {
			e.as.meta = func(m map[string]any) { m["authorization_response_iss_parameter_supported"] = true }
		}, mcperr.StateMismatch},
		{"expires_in negative", func(e *env) { e.as.expiresIn = -5 }, mcperr.TokenFailed},
		{"expires_in not a number", func(e *env) { e.as.expiresIn = "soon" }, mcperr.TokenFailed},
		{"no token_type", func(e *env) { e.as.tokenResp = func(m map[string]any) { delete(m, "token_type") } }, mcperr.TokenFailed},
		{"wrong token_type", func(e *env) { e.as.tokenResp = func(m map[string]any) { m["token_type"] = "MAC" } }, mcperr.TokenFailed},
		{"no access_token", func(e *env) { e.as.tokenResp = func(m map[string]any) { delete(m, "access_token") } }, mcperr.TokenFailed},
		{"oversized token response", func(e *env) {
			e.as.tokenResp = func(m map[string]any) { m["pad"] = strings.Repeat("x", maxBody) }
		}, mcperr.TokenFailed},
		{"other error at authorize", func(e *env) { e.as.deny = "server_error" }, mcperr.TokenFailed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			tt.edit(e)
			h := e.handler(t, nil)
			ctx := context.Background()
			err := h.Login(ctx)
			if got := mcperr.CodeOf(err, ""); got != tt.want {
				t.Fatalf("Login: %v (code %q); want code %q", err, got, tt.want)
			}
			if len(err.Error()) > 600 {
				t.Errorf("error message is %d bytes long", len(err.Error()))
			}
			if g, _ := e.store.GetGrant(ctx, h.Resource()); g != nil {
				t.Error("grant stored despite the error")
			}
			if m, _ := e.store.GetMetadata(ctx, h.metaKey()); m != nil && tt.want == mcperr.DiscoveryFailed {
				t.Error("invalid metadata cached")
			}
			if h.State() != StateFailed {
				t.Errorf("state = %q; want failed", h.State())
			}
		})
	}
}

// TestIssuerExactComparison: RFC 9207 §2.4 and RFC 8414 §3.3 compare
// issuers by simple string comparison. An iss that differs only by a
// trailing slash or by case is refused, and the code is never sent to the
// token endpoint (conformance auth/iss-normalized); so is a metadata issuer
// that differs by case or path. The one equivalence taken is an issuer
// without a path spelled with or without its "/".
func TestIssuerExactComparison(t *testing.T) {
	advertise := func(m map[string]any) { m["authorization_response_iss_parameter_supported"] = true }
	tests := []struct {
		name string
		edit func(e *env)
		want mcperr.Code // "" for success
	}{
		{"iss identical", func(e *env) { e.as.meta = advertise; e.as.sendIss = e.as.issuer() }, ""},
		{"iss with a trailing slash", func(e *env) { e.as.meta = advertise; e.as.sendIss = e.as.issuer() + "/" }, mcperr.StateMismatch},
		{"iss with a trailing slash, not advertised", func(e *env) { e.as.sendIss = e.as.issuer() + "/" }, mcperr.StateMismatch},
		{"iss in upper case", func(e *env) { e.as.meta = advertise; e.as.sendIss = strings.ToUpper(e.as.issuer()) }, mcperr.StateMismatch},
		{"iss naming the same address by another host name", func(e *env) {
			e.as.meta = advertise
			e.as.sendIss = strings.Replace(e.as.issuer(), "127.0.0.1", "localhost", 1)
		}, mcperr.StateMismatch},
		// An issuer without a path, "/" or not, is one URL (RFC 3986
		// §6.2.3): Auth0 names itself with the "/", other servers' PRM
		// without it.
		{"metadata issuer with a trailing slash on an origin", func(e *env) {
			e.as.meta = func(m map[string]any) { m["issuer"] = m["issuer"].(string) + "/" }
		}, ""},
		{"metadata issuer with two trailing slashes", func(e *env) {
			e.as.meta = func(m map[string]any) { m["issuer"] = m["issuer"].(string) + "//" }
		}, mcperr.DiscoveryFailed},
		{"metadata issuer in upper case", func(e *env) {
			e.as.meta = func(m map[string]any) { m["issuer"] = strings.ToUpper(m["issuer"].(string)) }
		}, mcperr.DiscoveryFailed},
		{"metadata issuer with a path", func(e *env) {
			e.as.meta = func(m map[string]any) { m["issuer"] = m["issuer"].(string) + "/tenant" }
		}, mcperr.DiscoveryFailed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			tt.edit(e)
			h := e.handler(t, nil)
			err := h.Login(context.Background())
			if got := mcperr.CodeOf(err, ""); got != tt.want {
				t.Fatalf("Login: %v (code %q); want code %q", err, got, tt.want)
			}
			if tt.want == "" {
				return
			}
			if n := e.as.req.get("/token"); n != 0 {
				t.Errorf("%d token requests after a refused issuer; want none", n)
			}
			if g, _ := e.store.GetGrant(context.Background(), h.Resource()); g != nil {
				t.Error("grant stored despite the refused issuer")
			}
		})
	}
}

func TestCallbackStateChecks(t *testing.T) {
	e := newEnv(t)
	var captured []string
	e.courier.block = make(chan struct{}) // no automatic delivery
	h := e.handler(t, nil)
	done := make(chan error, 1)
	go func() { done <- h.Login(context.Background()) }()
	for e.courier.calls.Load() == 0 {
		time.Sleep(time.Millisecond) // until the flow opens its sign-in window
	}
	e.courier.mu.Lock()
	authURL := e.courier.urls[0]
	e.courier.mu.Unlock()
	u, _ := url.Parse(authURL)
	state := u.Query().Get("state")
	if n := len(state); n < 22 {
		t.Fatalf("state %q too short", state)
	}
	if b, err := base64.RawURLEncoding.DecodeString(state); err == nil && len(b)*8 < 128 {
		t.Fatalf("state has under 128 bits")
	}
	for _, bad := range []string{
		"http://127.0.0.1:9/callback?code=x&state=" + state + "X",
		"http://127.0.0.1:9/callback?code=x",
		"http://127.0.0.1:9/callback?code=x&state=" + state + "&state=" + state,
		"http://127.0.0.1:9/callback?state=" + state,
		"%zz",
	} {
		if err := e.reg.Deliver(bad); err == nil {
			t.Errorf("Deliver(%q) accepted", bad)
		}
	}
	// A code from another flow (wrong PKCE binding) fails at the token endpoint.
	captured = append(captured, "http://127.0.0.1:9/callback?code=code-secret-999&state="+state)
	if err := e.reg.Deliver(captured[0]); err != nil {
		t.Fatalf("Deliver: %v", err)
	}
	if err := <-done; !errors.Is(err, ErrTokenFailed) {
		t.Errorf("Login with foreign code: %v; want token_failed", err)
	}
	// Replay: the state is used up.
	err := e.reg.Deliver(captured[0])
	if !errors.Is(err, ErrStateMismatch) {
		t.Errorf("replayed Deliver: %v; want state_mismatch", err)
	}
	if e.reg.Pending() {
		t.Error("registry still pending")
	}
}

func TestSecretsNeverInErrorsOrEvents(t *testing.T) {
	secrets := []string{"access-secret-", "refresh-secret-", "code-secret-", "client-secret-", "pre-secret"}
	check := func(t *testing.T, what, s string) {
		t.Helper()
		for _, sec := range secrets {
			if strings.Contains(s, sec) {
				t.Errorf("%s contains a secret (%q): %s", what, sec, s)
			}
		}
		if strings.Contains(s, "code_verifier") || strings.Contains(s, "code_challenge=") {
			t.Errorf("%s contains PKCE material: %s", what, s)
		}
	}
	cases := []func(e *env){
		func(e *env) { e.as.tokenResp = func(m map[string]any) { m["token_type"] = "MAC" } },
		func(e *env) { e.as.expiresIn = -1 },
		func(e *env) {
			e.as.authMethod = "client_secret_basic"
			e.as.tokenResp = func(m map[string]any) { delete(m, "token_type") }
		},
		func(e *env) { e.as.sendIss = "https://other.example" },
	}
	for i, edit := range cases {
		e := newEnv(t)
		edit(e)
		h := e.handler(t, nil)
		err := connect(context.Background(), e.rs.url(), h)
		if err == nil {
			t.Fatalf("case %d: no error", i)
		}
		check(t, "error", err.Error())
		for _, ev := range e.events.all() {
			if ev.Err != nil {
				check(t, "event", ev.Err.Error())
			}
		}
	}
	// Refresh failure with invalid_grant.
	e := newEnv(t)
	clk := &fakeClock{}
	clk.t = clk.t.AddDate(2026, 0, 0)
	h := e.handler(t, func(c *Config) { c.Clock = clk })
	if err := h.Login(context.Background()); err != nil {
		t.Fatal(err)
	}
	e.as.rejectRT = true
	clk.advance(1e13)
	ts, _ := h.TokenSource(context.Background())
	_, err := ts.Token()
	check(t, "refresh error", err.Error())
}

// TestResourceMetaNaming: protected resource metadata names the resource
// the client asked about up to a trailing "/" and the case of scheme and
// host (RFC 3986 §6.2.2.1); a path in another case, another host or
// another path is another resource.
func TestResourceMetaNaming(t *testing.T) {
	const asked = "https://mcp.example/mcp"
	for _, tc := range []struct {
		named string
		root  bool
		ok    bool
	}{
		{"https://mcp.example/mcp", false, true},
		{"https://mcp.example/mcp/", false, true},
		{"HTTPS://MCP.Example/mcp", false, true},
		{"https://mcp.example", true, true},
		{"https://MCP.example/", true, true},
		{"https://mcp.example", false, false},
		{"https://mcp.example/MCP", false, false},
		{"https://mcp.example.evil/mcp", false, false},
		{"https://mcp.example/mcp/x", false, false},
		{"https://mcp.example/mcp?x=1", false, false},
	} {
		prm := &oauthex.ProtectedResourceMetadata{Resource: tc.named, AuthorizationServers: []string{"https://as.example"}}
		if err := ValidateResourceMeta(prm, asked, tc.root); (err == nil) != tc.ok {
			t.Errorf("resource %q (root probe %v) for %q: %v; want ok %v", tc.named, tc.root, asked, err, tc.ok)
		}
	}
}

// TestWWWAuthenticateShapes: the parameters of a Bearer or DPoP challenge
// are read whatever the spelling servers use (RFC 9110 §11.6.1): quoted or
// not, any case of scheme and name, empty values next to them (Entra ID's
// realm=""), other challenges before or after, in one header or several.
func TestWWWAuthenticateShapes(t *testing.T) {
	const prm = "https://mcp.example/.well-known/oauth-protected-resource"
	for _, tc := range []struct {
		name   string
		values []string
		scopes string
		err    string
	}{
		{"quoted", []string{`Bearer resource_metadata="` + prm + `", scope="a b", error="insufficient_scope"`}, "a b", "insufficient_scope"},
		{"unquoted, odd case", []string{`bearer Resource_Metadata=` + prm + `, SCOPE=read:files, Error=invalid_token`}, "read:files", "invalid_token"},
		{"empty realm first (Entra ID)", []string{`Bearer realm="", authorization_uri="https://login.example/authorize", resource_metadata="` + prm + `"`}, "", ""},
		{"empty error_description", []string{`Bearer error="invalid_token",error_description="",resource_metadata="` + prm + `"`}, "", "invalid_token"},
		{"spaces around =", []string{`Bearer resource_metadata = "` + prm + `" , scope = "x"`}, "x", ""},
		{"after Negotiate with token68", []string{`Negotiate abc123==, Bearer resource_metadata="` + prm + `"`}, "", ""},
		{"before Basic", []string{`Bearer realm="api", resource_metadata="` + prm + `", Basic realm="x"`}, "", ""},
		{"in a second header", []string{`Basic realm="x"`, `DPoP algs="ES256", resource_metadata="` + prm + `"`}, "", ""},
		{"escaped quote in a scope", []string{`Bearer scope="a\"b c", resource_metadata="` + prm + `"`}, `a"b c`, ""},
		{"garbage before", []string{`"junk", Bearer resource_metadata="` + prm + `"`}, "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp := &http.Response{Header: http.Header{"Www-Authenticate": tc.values}}
			ch := parseChallenge(resp)
			if ch.prmURL != prm || strings.Join(ch.scopes, " ") != tc.scopes || ch.err != tc.err {
				t.Errorf("challenge %+v; want resource_metadata %q, scopes %q, error %q", ch, prm, tc.scopes, tc.err)
			}
		})
	}
}

// TestMetadataContentTypes: metadata is read as JSON when its content type
// says JSON, or says nothing useful (static hosts serve an extensionless
// well-known file as text/plain or octet-stream); a page or a script is
// refused whatever its body.
func TestMetadataContentTypes(t *testing.T) {
	for ct, ok := range map[string]bool{
		"application/json": true, "application/json; charset=utf-8": true, "Application/JSON": true,
		"application/jrd+json": true, "text/plain; charset=utf-8": true, "application/octet-stream": true,
		"binary/octet-stream": true, "": true,
		"text/html": false, "text/html; charset=utf-8": false, "application/javascript": false,
		"application/xml": false, "image/svg+xml": false, "text/html+json": false, "garbage/": false,
	} {
		if got := jsonContentType(ct); got != ok {
			t.Errorf("content type %q read as JSON: %v; want %v", ct, got, ok)
		}
	}
}
