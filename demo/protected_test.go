package demo_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"golang.org/x/oauth2"

	"github.com/mcpwasm/mcpwasm/demo"
	"github.com/mcpwasm/mcpwasm/demo/authserver"
)

// protectedEnv is an authorization server and the protected demo server,
// each on its own loopback origin.
type protectedEnv struct {
	t        *testing.T
	as       *authserver.Server
	asURL    string
	mcpURL   string // origin of the MCP server
	resource string // canonical MCP endpoint
	plain    *http.Client
}

func newProtectedEnv(t *testing.T, mod func(*demo.Protection)) *protectedEnv {
	t.Helper()
	var asH, mcpH http.Handler
	asSrv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { asH.ServeHTTP(w, r) }))
	t.Cleanup(asSrv.Close)
	mcpSrv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { mcpH.ServeHTTP(w, r) }))
	t.Cleanup(mcpSrv.Close)
	resource := mcpSrv.URL + demo.StreamablePath
	as, err := authserver.New(authserver.Config{
		Issuer:      asSrv.URL,
		Resources:   []string{resource, "http://127.0.0.1:9/other"},
		AutoApprove: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	asH = as.Handler()
	p := demo.Protection{
		Issuer:     as.Issuer(),
		Verifier:   as.Verifier(resource),
		Resource:   resource,
		Scopes:     []string{authserver.ScopeTools},
		ToolScopes: map[string]string{demo.ToolAdd: authserver.ScopeAdmin},
	}
	if mod != nil {
		mod(&p)
	}
	mcpH = demo.ProtectedHandler(demo.Options{}, p)
	return &protectedEnv{t: t, as: as, asURL: asSrv.URL, mcpURL: mcpSrv.URL, resource: resource, plain: &http.Client{
		Timeout:       10 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}}
}

// token logs in with x/oauth2 (the AS auto-approves) and returns an access
// token for resource with scopes.
func (e *protectedEnv) token(resource string, scopes ...string) string {
	e.t.Helper()
	res, err := oauthex.RegisterClient(e.t.Context(), e.asURL+"/register", &oauthex.ClientRegistrationMetadata{
		RedirectURIs: []string{"http://127.0.0.1:9/cb"}, TokenEndpointAuthMethod: "none",
	}, e.plain)
	if err != nil {
		e.t.Fatal(err)
	}
	conf := &oauth2.Config{
		ClientID: res.ClientID, RedirectURL: "http://127.0.0.1:9/cb", Scopes: scopes,
		Endpoint: oauth2.Endpoint{AuthURL: e.asURL + "/authorize", TokenURL: e.asURL + "/token", AuthStyle: oauth2.AuthStyleInParams},
	}
	v := oauth2.GenerateVerifier()
	resp, err := e.plain.Get(conf.AuthCodeURL("s", oauth2.S256ChallengeOption(v), oauth2.SetAuthURLParam("resource", resource)))
	if err != nil {
		e.t.Fatal(err)
	}
	resp.Body.Close()
	loc, _ := url.Parse(resp.Header.Get("Location"))
	ctx := context.WithValue(e.t.Context(), oauth2.HTTPClient, e.plain)
	tok, err := conf.Exchange(ctx, loc.Query().Get("code"), oauth2.VerifierOption(v), oauth2.SetAuthURLParam("resource", resource))
	if err != nil {
		e.t.Fatalf("exchange (redirect %q): %v", resp.Header.Get("Location"), err)
	}
	return tok.AccessToken
}

// post sends one JSON-RPC message to the MCP endpoint.
func (e *protectedEnv) post(token, body string) *http.Response {
	e.t.Helper()
	authz := ""
	if token != "" {
		authz = "Bearer " + token
	}
	return postMCP(e.t, e.plain, e.resource, body, map[string]string{"Origin": "http://127.0.0.1:8080", "Authorization": authz})
}

// postMCP sends body to the MCP endpoint url with the headers hdr (an
// empty value is left out) and drains the answer.
func postMCP(t *testing.T, c *http.Client, url, body string, hdr map[string]string) *http.Response {
	t.Helper()
	req, _ := http.NewRequest("POST", url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range hdr {
		if v != "" {
			req.Header.Set(k, v)
		}
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp
}

type bearerTransport struct{ token string }

func (b bearerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(r)
}

func (e *protectedEnv) connect(token string) (*mcp.ClientSession, error) {
	c := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil)
	return c.Connect(e.t.Context(), &mcp.StreamableClientTransport{
		Endpoint:   e.resource,
		HTTPClient: &http.Client{Transport: bearerTransport{token}, Timeout: 10 * time.Second},
	}, nil)
}

const initialize = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`

func TestProtected401(t *testing.T) {
	for _, hide := range []bool{false, true} {
		e := newProtectedEnv(t, func(p *demo.Protection) { p.HideWWWAuthenticate = hide })
		for _, tok := range []string{"", "mcpwasm_at_forged"} {
			resp := e.post(tok, initialize)
			want := `Bearer resource_metadata="` + e.mcpURL + `/.well-known/oauth-protected-resource/mcp"`
			if resp.StatusCode != 401 || resp.Header.Get("WWW-Authenticate") != want {
				t.Errorf("token %q: %d %q, want 401 %q", tok, resp.StatusCode, resp.Header.Get("WWW-Authenticate"), want)
			}
			if resp.Header.Get("Access-Control-Allow-Origin") != "http://127.0.0.1:8080" {
				t.Errorf("401 without CORS")
			}
			exposed := strings.Contains(resp.Header.Get("Access-Control-Expose-Headers"), "WWW-Authenticate")
			if exposed == hide {
				t.Errorf("hide=%v: Access-Control-Expose-Headers %q", hide, resp.Header.Get("Access-Control-Expose-Headers"))
			}
		}
		// The preflight needs no token.
		req, _ := http.NewRequest("OPTIONS", e.resource, nil)
		req.Header.Set("Origin", "http://127.0.0.1:8080")
		req.Header.Set("Access-Control-Request-Method", "POST")
		req.Header.Set("Access-Control-Request-Headers", "authorization, content-type")
		resp, err := e.plain.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 204 || !strings.Contains(resp.Header.Get("Access-Control-Allow-Headers"), "Authorization") {
			t.Errorf("preflight: %d %v", resp.StatusCode, resp.Header)
		}
	}
}

func TestProtectedResourceMetadata(t *testing.T) {
	e := newProtectedEnv(t, nil)
	// Path-inserted form, validated by go-sdk (resource must match).
	prm, err := oauthex.GetProtectedResourceMetadata(t.Context(), e.mcpURL+"/.well-known/oauth-protected-resource/mcp", e.resource, e.plain)
	if err != nil {
		t.Fatal(err)
	}
	want := &oauthex.ProtectedResourceMetadata{
		Resource:               e.resource,
		AuthorizationServers:   []string{e.asURL},
		ScopesSupported:        []string{"mcp:tools"},
		BearerMethodsSupported: []string{"header"},
		ResourceName:           "mcpwasm demo MCP server",
	}
	if diff := cmp.Diff(want, prm); diff != "" {
		t.Errorf("PRM (-want +got):\n%s", diff)
	}
	// Root form: its resource is the origin (RFC 9728 §3.3).
	root, err := oauthex.GetProtectedResourceMetadata(t.Context(), e.mcpURL+"/.well-known/oauth-protected-resource", e.mcpURL, e.plain)
	if err != nil || !slices.Equal(root.AuthorizationServers, []string{e.asURL}) {
		t.Errorf("root PRM: %+v %v", root, err)
	}
	// CORS.
	req, _ := http.NewRequest("GET", e.mcpURL+"/.well-known/oauth-protected-resource/mcp", nil)
	req.Header.Set("Origin", "http://127.0.0.1:8080")
	resp, err := e.plain.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.Header.Get("Access-Control-Allow-Origin") == "" {
		t.Errorf("PRM without CORS")
	}
}

func TestProtectedClient(t *testing.T) {
	e := newProtectedEnv(t, nil)
	tok := e.token(e.resource, authserver.ScopeTools)
	cs, err := e.connect(tok)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	tools, err := cs.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range tools.Tools {
		names = append(names, tl.Name)
	}
	if !slices.Contains(names, demo.ToolEcho) || !slices.Contains(names, demo.ToolAdd) {
		t.Errorf("tools = %v", names)
	}
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: demo.ToolEcho, Arguments: map[string]any{"text": "hi"}})
	if err != nil || res.IsError {
		t.Errorf("echo: %v %v", res, err)
	}
	// The scoped tool needs a step-up.
	if _, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: demo.ToolAdd, Arguments: map[string]any{"a": 1, "b": 2}}); err == nil {
		t.Errorf("add without mcp:admin succeeded")
	}

	// With the admin scope (a step-up token of the same user), add works.
	admin := e.token(e.resource, authserver.ScopeTools, authserver.ScopeAdmin)
	cs2, err := e.connect(admin)
	if err != nil {
		t.Fatal(err)
	}
	defer cs2.Close()
	res, err = cs2.CallTool(t.Context(), &mcp.CallToolParams{Name: demo.ToolAdd, Arguments: map[string]any{"a": 1, "b": 2}})
	if err != nil || res.IsError {
		t.Fatalf("add with mcp:admin: %v %v", res, err)
	}
	b, _ := json.Marshal(res.StructuredContent)
	if string(b) != `{"sum":3}` {
		t.Errorf("add = %s", b)
	}
	if n := e.as.Count(authserver.EventVerify); n < 4 {
		t.Errorf("verify events = %d", n)
	}
}

func TestProtectedWrongAudience(t *testing.T) {
	e := newProtectedEnv(t, nil)
	tok := e.token("http://127.0.0.1:9/other", authserver.ScopeTools)
	if resp := e.post(tok, initialize); resp.StatusCode != 401 {
		t.Errorf("token for another resource: %d", resp.StatusCode)
	}
	if _, err := e.connect(tok); err == nil {
		t.Errorf("mcp client connected with a token for another resource")
	}
}

func TestProtectedInsufficientScope(t *testing.T) {
	e := newProtectedEnv(t, nil)
	tok := e.token(e.resource, authserver.ScopeTools)
	prmURL := e.mcpURL + "/.well-known/oauth-protected-resource/mcp"
	wantHdr := `Bearer error="insufficient_scope", scope="mcp:tools mcp:admin", resource_metadata="` + prmURL + `"`
	for name, body := range map[string]string{
		"call":       `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"add","arguments":{"a":1,"b":2}}}`,
		"batch":      `[{"jsonrpc":"2.0","method":"notifications/initialized"},{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"add"}}]`,
		"dup key":    `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"add","name":"echo"}}`,
		"case trick": `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"Name":"echo","name":"add"}}`,
		"escaped":    `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"n\u0061me":"add"}}`,
	} {
		resp := e.post(tok, body)
		got := resp.Header.Get("WWW-Authenticate")
		if resp.StatusCode != 403 || !strings.HasPrefix(got, wantHdr) {
			t.Errorf("%s: %d %q, want 403 %q…", name, resp.StatusCode, got, wantHdr)
		}
		cs, err := oauthex.ParseWWWAuthenticate([]string{got})
		if err != nil || len(cs) != 1 || cs[0].Params["error"] != "insufficient_scope" || cs[0].Params["scope"] != "mcp:tools mcp:admin" {
			t.Errorf("%s: challenge %+v %v", name, cs, err)
		}
	}
	// Other tools and methods pass the guard (the SDK answers them).
	for _, body := range []string{
		initialize,
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"text":"x"}}}`,
	} {
		if resp := e.post(tok, body); resp.StatusCode == 403 || resp.StatusCode == 401 {
			t.Errorf("%s: %d", body, resp.StatusCode)
		}
	}
	// A token without the base scope is refused for everything.
	e2 := newProtectedEnv(t, func(p *demo.Protection) { p.Scopes = []string{authserver.ScopeAdmin} })
	tok2 := e2.token(e2.resource, authserver.ScopeTools)
	resp := e2.post(tok2, initialize)
	if resp.StatusCode != 403 || !strings.Contains(resp.Header.Get("WWW-Authenticate"), `scope="mcp:tools mcp:admin"`) {
		t.Errorf("missing base scope: %d %q", resp.StatusCode, resp.Header.Get("WWW-Authenticate"))
	}
}
