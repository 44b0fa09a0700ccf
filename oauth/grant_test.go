package oauth

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpwasm/mcpwasm/demo/dpopcheck"
	"github.com/mcpwasm/mcpwasm/internal/jws"
	"github.com/mcpwasm/mcpwasm/mcperr"
	"github.com/modelcontextprotocol/go-sdk/auth"
	"golang.org/x/oauth2"
)

// grantAS is an authorization server of the non-interactive grants: it
// takes only the grants it lists, checks each request the way the
// conformance suite does, and records what it saw.
type grantAS struct {
	t   *testing.T
	srv *httptest.Server

	grants      []string                      // grant_types_supported
	methods     []string                      // token_endpoint_auth_methods_supported
	clientID    string                        // the pre-registered client
	secret      string                        // its secret (client_secret_basic)
	key         *ecdsa.PublicKey              // its key (private_key_jwt)
	checkBearer func(assertion string) string // JWT bearer grant: "" accepts, else the error code
	expiresIn   int                           // default 3600
	refresh     bool                          // issue refresh tokens
	dpop        *dpopcheck.Checker            // when set: advertises ES256; a token request needs a proof, its tokens are bound to the key
	tokenOnly   bool                          // metadata without authorization_endpoint and PKCE: a server for these grants only
	busyFirst   int                           // answer the first token requests 429 (Retry-After: 0)

	mu     sync.Mutex
	forms  []url.Values // token requests, in order
	basics []string     // their Basic client id ("" without)
	tokens map[string]issuedToken
	jkts   map[string]string // access token → the key it is bound to (DPoP)
	n      int
	other  int             // requests other than metadata and /token
	jtis   map[string]bool // client assertion ids seen
}

func newGrantAS(t *testing.T) *grantAS {
	a := &grantAS{t: t, tokens: map[string]issuedToken{}, jkts: map[string]string{}, expiresIn: 3600}
	a.srv = httptest.NewServer(http.HandlerFunc(a.serve))
	t.Cleanup(a.srv.Close)
	return a
}

func (a *grantAS) issuer() string { return a.srv.URL }

func (a *grantAS) serve(w http.ResponseWriter, r *http.Request) {
	switch r.URL.Path {
	case "/.well-known/oauth-authorization-server":
		iss := a.issuer()
		m := map[string]any{
			"issuer": iss, "authorization_endpoint": iss + "/authorize", "token_endpoint": iss + "/token",
			"response_types_supported": []string{"code"}, "code_challenge_methods_supported": []string{"S256"},
			"grant_types_supported": a.grants, "token_endpoint_auth_methods_supported": a.methods,
			"token_endpoint_auth_signing_alg_values_supported": []string{"ES256"},
		}
		if a.dpop != nil {
			m["dpop_signing_alg_values_supported"] = []string{"ES256"}
		}
		if a.tokenOnly {
			delete(m, "authorization_endpoint")
			delete(m, "code_challenge_methods_supported")
			delete(m, "response_types_supported")
		}
		writeJSON(w, 200, m)
	case "/token":
		a.token(w, r)
	default:
		a.mu.Lock()
		a.other++
		a.mu.Unlock()
		http.NotFound(w, r)
	}
}

func (a *grantAS) token(w http.ResponseWriter, r *http.Request) {
	if r.ParseForm() != nil {
		writeJSON(w, 400, map[string]string{"error": "invalid_request"})
		return
	}
	f := r.PostForm
	id, secret, basic := r.BasicAuth()
	id, _ = url.QueryUnescape(id)
	secret, _ = url.QueryUnescape(secret)
	a.mu.Lock()
	a.forms = append(a.forms, f)
	a.basics = append(a.basics, id)
	busy := len(a.forms) <= a.busyFirst
	a.mu.Unlock()
	if busy {
		w.Header().Set("Retry-After", "0")
		writeJSON(w, http.StatusTooManyRequests, map[string]string{"error": "slow_down"})
		return
	}
	fail := func(code, desc string) {
		writeJSON(w, 400, map[string]string{"error": code, "error_description": desc})
	}
	if !slices.Contains(a.grants, f.Get("grant_type")) {
		fail("unsupported_grant_type", "")
		return
	}
	jkt := ""
	if a.dpop != nil {
		var err error
		if jkt, err = a.dpop.Check(r, ""); err != nil {
			fail("invalid_dpop_proof", err.Error())
			return
		}
	}
	if f.Get("resource") == "" {
		fail("invalid_target", "no resource")
		return
	}
	switch f.Get("grant_type") {
	case "client_credentials":
		switch {
		case basic:
			if id != a.clientID || secret != a.secret || f.Get("client_secret") != "" {
				writeJSON(w, 401, map[string]string{"error": "invalid_client"})
				return
			}
		case f.Get("client_assertion_type") == assertionTypeJWT:
			if err := verifyClientAssertion(f.Get("client_assertion"), a.key, a.clientID, a.issuer()); err != nil {
				writeJSON(w, 401, map[string]string{"error": "invalid_client", "error_description": err.Error()})
				return
			}
			// RFC 7523 §3: the server may refuse a jti it has seen.
			_, claims, _ := verifyJWT(f.Get("client_assertion"), a.key)
			jti := fmt.Sprint(claims["jti"])
			a.mu.Lock()
			replay := a.jtis[jti]
			if a.jtis == nil {
				a.jtis = map[string]bool{}
			}
			a.jtis[jti] = true
			a.mu.Unlock()
			if replay {
				writeJSON(w, 401, map[string]string{"error": "invalid_client", "error_description": "client assertion replayed (jti seen before)"})
				return
			}
		default:
			writeJSON(w, 401, map[string]string{"error": "invalid_client"})
			return
		}
	case grantJWTBearer:
		if a.secret != "" && (!basic || id != a.clientID || secret != a.secret) {
			writeJSON(w, 401, map[string]string{"error": "invalid_client"})
			return
		}
		if code := a.checkBearer(f.Get("assertion")); code != "" {
			fail(code, "assertion "+f.Get("assertion")+" refused")
			return
		}
	}
	a.mu.Lock()
	a.n++
	at := fmt.Sprintf("grant-token-%d", a.n)
	a.tokens[at] = issuedToken{scopes: strings.Fields(f.Get("scope")), resource: f.Get("resource"), expiry: time.Now().Add(time.Hour)}
	a.mu.Unlock()
	tokenType := "Bearer"
	if jkt != "" {
		a.jkts[at], tokenType = jkt, "DPoP"
	}
	resp := map[string]any{"access_token": at, "token_type": tokenType, "expires_in": a.expiresIn}
	if a.refresh {
		resp["refresh_token"] = "refresh-" + at
	}
	writeJSON(w, 200, resp)
}

func (a *grantAS) verify(_ context.Context, tok string, _ *http.Request) (*auth.TokenInfo, error) {
	return tokenInfo(&a.mu, a.tokens, tok)
}

// boundKey names the key tok is bound to ("" for a Bearer token).
func (a *grantAS) boundKey(tok string) string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.jkts[tok]
}

func (a *grantAS) requests() ([]url.Values, []string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return slices.Clone(a.forms), slices.Clone(a.basics)
}

// verifyJWT checks an ES256 compact JWS with key and returns its header
// and claims.
func verifyJWT(s string, key *ecdsa.PublicKey) (hdr, claims map[string]any, err error) {
	tok, err := jws.Parse(s, maxTokenLen)
	if err == nil {
		err = tok.Verify(key)
	}
	if err == nil {
		err = errors.Join(tok.DecodeHeader(&hdr), tok.DecodeClaims(&claims))
	}
	return hdr, claims, err
}

// verifyClientAssertion checks a private_key_jwt assertion (RFC 7523 §3).
func verifyClientAssertion(jws string, key *ecdsa.PublicKey, clientID, issuer string) error {
	hdr, c, err := verifyJWT(jws, key)
	if err != nil {
		return err
	}
	iat, _ := c["iat"].(float64)
	exp, _ := c["exp"].(float64)
	jti, _ := c["jti"].(string)
	now := float64(time.Now().Unix())
	switch {
	case hdr["alg"] != "ES256":
		return errors.New("alg")
	case c["iss"] != clientID || c["sub"] != clientID:
		return errors.New("iss/sub")
	case c["aud"] != issuer:
		return errors.New("aud")
	case exp <= now || exp-iat > 300 || iat > now+30:
		return errors.New("exp/iat")
	case len(jti) < 16:
		return errors.New("jti")
	}
	return nil
}

// grantEnv is a protected MCP server whose authorization server is a
// grantAS.
func grantEnv(t *testing.T) (*grantAS, *fakeRS) {
	as := newGrantAS(t)
	rs := newFakeRS(t, newFakeAS(t))
	rs.asIssuer, rs.verify = as.issuer, as.verify
	return as, rs
}

// dpopServiceEnv is grantEnv for a service client (client_credentials,
// client_secret_basic) whose authorization server binds tokens to DPoP
// keys and whose MCP server wants DPoP proofs with a nonce.
func dpopServiceEnv(t *testing.T) (*grantAS, *fakeRS) {
	as, rs := grantEnv(t)
	as.grants, as.methods = []string{"client_credentials"}, []string{"client_secret_basic"}
	as.clientID, as.secret = "svc:1", "s3cret"
	as.dpop = dpopcheck.New(dpopcheck.Options{})
	rs.dpop, rs.boundKey = dpopcheck.New(dpopcheck.Options{RequireNonce: true}), as.boundKey
	return as, rs
}

// grantConfig is a handler config without RedirectURL, Courier or
// Interactive: the grants need none of them.
func grantConfig(rs *fakeRS) Config {
	return Config{
		ResourceURL: rs.url(),
		HTTPClient:  &http.Client{Transport: http.DefaultTransport, Timeout: 10 * time.Second},
		AuthTimeout: 10 * time.Second,
	}
}

func newGrantHandler(t *testing.T, cfg Config) *Handler {
	t.Helper()
	h, err := New(cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return h
}

func TestClientCredentialsBasic(t *testing.T) {
	as, rs := grantEnv(t)
	as.grants, as.methods = []string{"client_credentials"}, []string{"client_secret_basic"}
	as.clientID, as.secret = "svc:1", "s3cret&x"
	cfg := grantConfig(rs)
	cfg.ClientID, cfg.ClientSecret = as.clientID, as.secret
	cfg.ClientCredentials = &ClientCredentials{}
	h := newGrantHandler(t, cfg)
	if err := connect(context.Background(), rs.url(), h); err != nil {
		t.Fatalf("connect: %v", err)
	}
	forms, basics := as.requests()
	if len(forms) != 1 || basics[0] != "svc:1" {
		t.Fatalf("token requests %v with Basic ids %q; want one, as svc:1", forms, basics)
	}
	if f := forms[0]; f.Get("grant_type") != "client_credentials" || f.Get("resource") != rs.url() || f.Get("scope") != "read" || f.Has("client_secret") {
		t.Errorf("token request %v", f)
	}
	if h.State() != StateAuthorized {
		t.Errorf("state %s; want authorized", h.State())
	}
}

// TestClientCredentialsWithDPoP: a non-interactive grant from a server that
// advertises DPoP is bound to the registration's key like a sign-in's, and
// the MCP server sees it only as DPoP with proofs.
func TestClientCredentialsWithDPoP(t *testing.T) {
	as, rs := dpopServiceEnv(t)
	cfg := grantConfig(rs)
	cfg.ClientID, cfg.ClientSecret = as.clientID, as.secret
	cfg.ClientCredentials = &ClientCredentials{}
	cfg.Store = NewMemoryStore()
	h := newGrantHandler(t, cfg)
	if err := connect(context.Background(), rs.url(), h); err != nil {
		t.Fatalf("connect: %v", err)
	}
	g, _ := cfg.Store.GetGrant(context.Background(), h.Resource())
	if g == nil || g.TokenType != "DPoP" || g.DPoPKeyID == "" || as.boundKey(g.AccessToken) == "" {
		t.Fatalf("stored grant %v; want a DPoP grant bound to a key", g)
	}
	seen := rs.requests()
	if len(seen) == 0 {
		t.Fatal("the MCP server saw no request")
	}
	for _, r := range seen {
		if r.scheme != "" && (r.scheme != "dpop" || !r.proof) {
			t.Errorf("MCP request %+v; want every authorized one as DPoP with a proof", r)
		}
	}
}

// TestGrantFromTokenOnlyServer: an authorization server for machine
// clients publishes no authorization endpoint and no PKCE support (RFC
// 8414 §2: authorization_endpoint is required only when a grant uses it);
// the client credentials grant still works there, and a sign-in handler
// for the same server is refused with the reason.
func TestGrantFromTokenOnlyServer(t *testing.T) {
	as, rs := grantEnv(t)
	as.tokenOnly = true
	as.grants, as.methods = []string{"client_credentials"}, []string{"client_secret_basic"}
	as.clientID, as.secret = "svc:1", "s3cret"
	store := NewMemoryStore()
	cfg := grantConfig(rs)
	cfg.ClientID, cfg.ClientSecret = as.clientID, as.secret
	cfg.ClientCredentials = &ClientCredentials{}
	cfg.Store = store
	if err := connect(context.Background(), rs.url(), newGrantHandler(t, cfg)); err != nil {
		t.Fatalf("connect with the client credentials grant: %v", err)
	}
	// A sign-in handler sharing the store (and so the cached metadata)
	// must not take that metadata for a sign-in.
	signIn := grantConfig(rs)
	signIn.Store, signIn.RedirectURL = store, "http://127.0.0.1/callback"
	signIn.Courier = CourierFunc(func(context.Context, string) error {
		t.Error("a sign-in page was shown for a server without an authorization endpoint")
		return nil
	})
	h := newGrantHandler(t, signIn)
	err := h.Login(context.Background())
	if !isCode(err, mcperr.DiscoveryFailed) || !strings.Contains(err.Error(), "authorization_endpoint") {
		t.Errorf("Login: %v; want discovery_failed naming authorization_endpoint", err)
	}
}

func TestClientCredentialsPrivateKeyJWT(t *testing.T) {
	as, rs := grantEnv(t)
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	as.grants, as.methods = []string{"client_credentials"}, []string{"private_key_jwt"}
	as.clientID, as.key = "svc-jwt", &key.PublicKey
	cfg := grantConfig(rs)
	cfg.ClientID = as.clientID
	cfg.ClientCredentials = &ClientCredentials{PrivateKey: key}
	h := newGrantHandler(t, cfg)
	if err := connect(context.Background(), rs.url(), h); err != nil {
		t.Fatalf("connect: %v", err)
	}
	forms, basics := as.requests()
	if len(forms) != 1 || basics[0] != "" {
		t.Fatalf("token requests %v (Basic %q); want one, without Basic", forms, basics)
	}

	// A second handler presents a new assertion (another jti).
	h2 := newGrantHandler(t, cfg)
	if err := h2.Login(context.Background()); err != nil {
		t.Fatalf("Login: %v", err)
	}
	forms, _ = as.requests()
	_, c1, _ := verifyJWT(forms[0].Get("client_assertion"), &key.PublicKey)
	_, c2, _ := verifyJWT(forms[1].Get("client_assertion"), &key.PublicKey)
	if c1["jti"] == c2["jti"] {
		t.Errorf("two assertions share jti %v", c1["jti"])
	}
}

func TestClientCredentialsNoCommonMethod(t *testing.T) {
	as, rs := grantEnv(t)
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	as.grants, as.methods = []string{"client_credentials"}, []string{"client_secret_basic"}
	cfg := grantConfig(rs)
	cfg.ClientID = "svc"
	cfg.ClientCredentials = &ClientCredentials{PrivateKey: key}
	h := newGrantHandler(t, cfg)
	err := connect(context.Background(), rs.url(), h)
	if !isCode(err, mcperr.TokenFailed) || !strings.Contains(err.Error(), "client_secret_basic") || !strings.Contains(err.Error(), "private_key_jwt") {
		t.Fatalf("err = %v; want token_failed naming what the server takes and what the client has", err)
	}
	if forms, _ := as.requests(); len(forms) != 0 {
		t.Errorf("%d token requests; want none", len(forms))
	}
}

func TestGrantNotSupportedByServer(t *testing.T) {
	as, rs := grantEnv(t)
	as.grants = []string{"authorization_code"}
	cfg := grantConfig(rs)
	cfg.ClientID = "w"
	cfg.WorkloadIdentity = &WorkloadIdentity{Assertion: func(context.Context) (string, error) { return "a.b.c", nil }}
	h := newGrantHandler(t, cfg)
	err := connect(context.Background(), rs.url(), h)
	if !isCode(err, mcperr.TokenFailed) || !strings.Contains(err.Error(), grantJWTBearer) {
		t.Fatalf("err = %v; want token_failed naming the missing grant type", err)
	}
}

func TestWorkloadIdentityOneRequest(t *testing.T) {
	for _, code := range []string{"", "invalid_grant", "invalid_scope", "unauthorized_client"} {
		t.Run("refusal="+code, func(t *testing.T) {
			as, rs := grantEnv(t)
			as.grants, as.methods = []string{grantJWTBearer}, []string{"none"}
			as.checkBearer = func(a string) string {
				if a != "workload.jwt.value" {
					return "invalid_grant"
				}
				return code
			}
			calls := 0
			cfg := grantConfig(rs)
			cfg.ClientID = "workload-1"
			cfg.WorkloadIdentity = &WorkloadIdentity{Assertion: func(context.Context) (string, error) {
				calls++
				return "workload.jwt.value", nil
			}}
			h := newGrantHandler(t, cfg)
			err := connect(context.Background(), rs.url(), h)
			forms, basics := as.requests()
			if len(forms) != 1 || calls != 1 {
				t.Fatalf("%d token requests, %d assertions; want exactly one each (no retry, no fallback)", len(forms), calls)
			}
			if f := forms[0]; f.Get("assertion") != "workload.jwt.value" || f.Get("client_id") != "workload-1" || basics[0] != "" {
				t.Errorf("token request %v", f)
			}
			if as.other != 0 {
				t.Errorf("%d requests besides metadata and /token; want none (no authorization code flow)", as.other)
			}
			if code == "" {
				if err != nil {
					t.Fatalf("connect: %v", err)
				}
				return
			}
			var re *oauth2.RetrieveError
			if !errors.As(err, &re) || re.ErrorCode != code {
				t.Fatalf("err = %v; want the server's %s", err, code)
			}
			if strings.Contains(err.Error(), "workload.jwt.value") {
				t.Errorf("error quotes the assertion: %v", err)
			}
			// Until the embedder asks again (Login), the refusal stands.
			if err := connect(context.Background(), rs.url(), h); err == nil {
				t.Errorf("a second connect succeeded after the refusal")
			}
			if forms, _ := as.requests(); len(forms) != 1 {
				t.Errorf("%d token requests after a second connect; want still one", len(forms))
			}
			h.Login(context.Background())
			if forms, _ := as.requests(); len(forms) != 2 {
				t.Errorf("%d token requests after Login; want a second one", len(forms))
			}
		})
	}
}

// fakeIdP is an enterprise identity provider: OpenID metadata and the
// RFC 8693 token exchange of an ID token for an ID-JAG.
type fakeIdP struct {
	srv      *httptest.Server
	key      *ecdsa.PrivateKey
	idToken  string // the ID token it accepts
	clientID string // the client (at the IdP) it accepts, sent as client_id
	secret   string // its secret, by Basic; "" none
	mcpID    string // the client at the MCP AS that the ID-JAG names
	refuse   string // error to answer

	mu    sync.Mutex
	forms []url.Values
}

func newFakeIdP(t *testing.T) *fakeIdP {
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	p := &fakeIdP{key: key, idToken: "id.token.of-the-user", clientID: "idp-client", mcpID: "mcp-client"}
	p.srv = httptest.NewServer(http.HandlerFunc(p.serve))
	t.Cleanup(p.srv.Close)
	return p
}

func (p *fakeIdP) serve(w http.ResponseWriter, r *http.Request) {
	switch r.URL.Path {
	case "/.well-known/openid-configuration":
		writeJSON(w, 200, map[string]any{"issuer": p.srv.URL, "token_endpoint": p.srv.URL + "/token",
			"grant_types_supported": []string{"urn:ietf:params:oauth:grant-type:token-exchange"}})
	case "/token":
		r.ParseForm()
		f := r.PostForm
		p.mu.Lock()
		p.forms = append(p.forms, f)
		p.mu.Unlock()
		id, secret, basic := r.BasicAuth()
		if !basic {
			id = f.Get("client_id")
		}
		switch {
		case p.refuse != "":
			writeJSON(w, 400, map[string]string{"error": p.refuse, "error_description": "no for " + f.Get("subject_token")})
			return
		case id != p.clientID || secret != p.secret:
			writeJSON(w, 401, map[string]string{"error": "invalid_client"})
			return
		case f.Get("grant_type") != "urn:ietf:params:oauth:grant-type:token-exchange",
			f.Get("requested_token_type") != "urn:ietf:params:oauth:token-type:id-jag",
			f.Get("subject_token_type") != "urn:ietf:params:oauth:token-type:id_token",
			f.Get("audience") == "", f.Get("resource") == "":
			writeJSON(w, 400, map[string]string{"error": "invalid_request"})
			return
		case f.Get("subject_token") != p.idToken:
			writeJSON(w, 400, map[string]string{"error": "invalid_grant"})
			return
		}
		jag, err := jws.Sign(map[string]string{"alg": "ES256", "typ": "oauth-id-jag+jwt"}, map[string]any{
			"iss": p.srv.URL, "sub": "user-1", "aud": f.Get("audience"), "resource": f.Get("resource"),
			"client_id": p.mcpID, "jti": rand.Text(), "iat": time.Now().Unix(), "exp": time.Now().Add(5 * time.Minute).Unix(),
		}, jws.Signer(p.key))
		if err != nil {
			writeJSON(w, 500, map[string]string{"error": "server_error"})
			return
		}
		writeJSON(w, 200, map[string]any{"access_token": jag, "issued_token_type": "urn:ietf:params:oauth:token-type:id-jag", "token_type": "N_A", "expires_in": 300})
	default:
		http.NotFound(w, r)
	}
}

// idjagEnv is an MCP server whose authorization server takes ID-JAGs of
// idp for client mcp-client (secret mcp-secret, client_secret_basic).
func idjagEnv(t *testing.T) (*grantAS, *fakeRS, *fakeIdP) {
	as, rs := grantEnv(t)
	idp := newFakeIdP(t)
	as.grants, as.methods = []string{grantJWTBearer}, []string{"client_secret_basic"}
	as.clientID, as.secret = "mcp-client", "mcp-secret"
	as.checkBearer = func(jag string) string {
		hdr, c, err := verifyJWT(jag, &idp.key.PublicKey)
		if err != nil || hdr["typ"] != "oauth-id-jag+jwt" || c["aud"] != as.issuer() || c["resource"] != rs.url() || c["client_id"] != as.clientID {
			return "invalid_grant"
		}
		return ""
	}
	return as, rs, idp
}

func TestEnterpriseAuthSignsInWithoutAUser(t *testing.T) {
	for _, byIssuer := range []bool{false, true} {
		t.Run(fmt.Sprintf("discovered=%v", byIssuer), func(t *testing.T) {
			as, rs, idp := idjagEnv(t)
			idp.secret = "idp-secret"
			cfg := grantConfig(rs)
			cfg.ClientID, cfg.ClientSecret = "mcp-client", "mcp-secret"
			ea := &EnterpriseAuth{
				IdentityAssertion: func(context.Context) (string, error) { return idp.idToken, nil },
				IdPClientID:       "idp-client",
				IdPClientSecret:   "idp-secret",
			}
			if byIssuer {
				ea.IdPIssuer = idp.srv.URL
			} else {
				ea.IdPTokenEndpoint = idp.srv.URL + "/token"
			}
			cfg.EnterpriseAuth = ea
			h := newGrantHandler(t, cfg)
			if err := connect(context.Background(), rs.url(), h); err != nil {
				t.Fatalf("connect: %v", err)
			}
			if f := idp.forms[0]; len(idp.forms) != 1 || f.Get("audience") != as.issuer() || f.Get("resource") != rs.url() || f.Get("scope") != "read" {
				t.Errorf("token exchange requests %v", idp.forms)
			}
			forms, basics := as.requests()
			if len(forms) != 1 || basics[0] != "mcp-client" || forms[0].Has("client_secret") {
				t.Errorf("JWT bearer requests %v (Basic %q); want one, by client_secret_basic", forms, basics)
			}
			if as.other != 0 {
				t.Errorf("%d requests besides metadata and /token (an authorization code flow?)", as.other)
			}
		})
	}
}

func TestEnterpriseAuthRefusals(t *testing.T) {
	for _, tc := range []struct {
		name, refuse, want string
	}{
		{"assertion rejected", "invalid_grant", "rejected the identity assertion"},
		{"no token exchange", "unsupported_grant_type", "does not support the token exchange"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, rs, idp := idjagEnv(t)
			idp.refuse = tc.refuse
			cfg := grantConfig(rs)
			cfg.ClientID, cfg.ClientSecret = "mcp-client", "mcp-secret"
			cfg.EnterpriseAuth = &EnterpriseAuth{
				IdentityAssertion: func(context.Context) (string, error) { return idp.idToken, nil },
				IdPTokenEndpoint:  idp.srv.URL + "/token",
				IdPClientID:       "idp-client",
			}
			h := newGrantHandler(t, cfg)
			err := connect(context.Background(), rs.url(), h)
			if !isCode(err, mcperr.TokenFailed) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v; want token_failed saying %q", err, tc.want)
			}
			if strings.Contains(err.Error(), idp.idToken) {
				t.Errorf("error quotes the ID token: %v", err)
			}
			if h.State() != StateFailed {
				t.Errorf("state %s; want failed", h.State())
			}
		})
	}
}

func TestEnterpriseAuthAssertionUnavailable(t *testing.T) {
	_, rs, idp := idjagEnv(t)
	cfg := grantConfig(rs)
	cfg.ClientID = "mcp-client"
	cfg.EnterpriseAuth = &EnterpriseAuth{
		IdentityAssertion: func(context.Context) (string, error) { return "", errors.New("not signed in to SSO") },
		IdPTokenEndpoint:  idp.srv.URL + "/token",
		IdPClientID:       "idp-client",
	}
	h := newGrantHandler(t, cfg)
	err := connect(context.Background(), rs.url(), h)
	if !isCode(err, mcperr.AuthRequired) || !strings.Contains(err.Error(), "not signed in to SSO") {
		t.Fatalf("err = %v; want auth_required with the page's reason", err)
	}
	if len(idp.forms) != 0 {
		t.Errorf("%d token exchanges without an assertion", len(idp.forms))
	}
}

// TestGrantRenewedWhenExpiring: a grant without refresh token is replaced
// by a new one before it expires; one with a refresh token is refreshed.
func TestGrantRenewedWhenExpiring(t *testing.T) {
	as, rs := grantEnv(t)
	as.grants, as.methods = []string{"client_credentials"}, []string{"client_secret_basic"}
	as.clientID, as.secret = "svc", "sec"
	clk := &fakeClock{t: time.Now()}
	cfg := grantConfig(rs)
	cfg.ClientID, cfg.ClientSecret, cfg.Clock = "svc", "sec", clk
	cfg.ClientCredentials = &ClientCredentials{}
	h := newGrantHandler(t, cfg)
	ctx := context.Background()
	if err := h.Login(ctx); err != nil {
		t.Fatal(err)
	}
	ts, err := h.TokenSource(ctx)
	if err != nil || ts == nil {
		t.Fatalf("TokenSource: %v %v", ts, err)
	}
	t1, err := ts.Token()
	if err != nil {
		t.Fatal(err)
	}
	clk.advance(time.Hour - 30*time.Second) // inside the refresh margin
	t2, err := ts.Token()
	if err != nil {
		t.Fatal(err)
	}
	forms, _ := as.requests()
	if t1.AccessToken == t2.AccessToken || len(forms) != 2 || forms[1].Get("grant_type") != "client_credentials" {
		t.Fatalf("tokens %q then %q after %d requests; want a new client credentials grant", t1.AccessToken, t2.AccessToken, len(forms))
	}
	if g, _ := h.cfg.Store.GetGrant(ctx, h.resource); g == nil || g.AccessToken != t2.AccessToken {
		t.Errorf("stored grant is not the new one")
	}
}

func TestGrantConfigErrors(t *testing.T) {
	assertion := func(context.Context) (string, error) { return "x", nil }
	ec, _ := ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
	rk, _ := rsa.GenerateKey(rand.Reader, 1024)
	for _, tc := range []struct {
		edit func(*Config)
		want string
	}{
		{func(c *Config) {
			c.ClientCredentials = &ClientCredentials{}
			c.WorkloadIdentity = &WorkloadIdentity{Assertion: assertion}
		}, "at most one of"},
		{func(c *Config) { c.ClientCredentials = &ClientCredentials{} }, "needs Config.ClientID"},
		{func(c *Config) { c.ClientID = "a"; c.ClientCredentials = &ClientCredentials{} }, "Config.ClientSecret (client_secret_basic) or ClientCredentials.PrivateKey"},
		{func(c *Config) { c.ClientID = "a"; c.ClientCredentials = &ClientCredentials{PrivateKey: ec} }, "P-256"},
		{func(c *Config) { c.ClientID = "a"; c.ClientCredentials = &ClientCredentials{PrivateKey: rk} }, "P-256"},
		{func(c *Config) {
			c.ClientID, c.ClientSecret, c.ClientMetadataURL = "a", "b", "https://app.example/client.json"
			c.ClientCredentials = &ClientCredentials{}
		}, "ClientMetadataURL"},
		{func(c *Config) { c.WorkloadIdentity = &WorkloadIdentity{} }, "needs Assertion"},
		{func(c *Config) {
			c.ClientID, c.ClientSecret = "a", "b"
			c.WorkloadIdentity = &WorkloadIdentity{Assertion: assertion}
		}, "leave Config.ClientSecret empty"},
		{func(c *Config) { c.ClientID = "a"; c.EnterpriseAuth = &EnterpriseAuth{} }, "needs IdentityAssertion"},
		{func(c *Config) {
			c.ClientID = "a"
			c.EnterpriseAuth = &EnterpriseAuth{IdentityAssertion: assertion, IdPClientID: "i"}
		}, "IdPTokenEndpoint or IdPIssuer"},
		{func(c *Config) {
			c.ClientID = "a"
			c.EnterpriseAuth = &EnterpriseAuth{IdentityAssertion: assertion, IdPTokenEndpoint: "https://idp.example/token"}
		}, "needs IdPClientID"},
		{func(c *Config) {
			c.EnterpriseAuth = &EnterpriseAuth{IdentityAssertion: assertion, IdPTokenEndpoint: "https://idp.example/token", IdPClientID: "i"}
		}, "needs Config.ClientID"},
		{func(c *Config) {
			c.ClientID = "a"
			c.EnterpriseAuth = &EnterpriseAuth{IdentityAssertion: assertion, IdPTokenEndpoint: "http://idp.example/token", IdPClientID: "i"}
		}, "IdPTokenEndpoint must be an https URL"},
	} {
		cfg := Config{ResourceURL: "https://mcp.example/mcp", HTTPClient: &http.Client{}, RedirectURL: "https://app.example/cb"}
		tc.edit(&cfg)
		_, err := New(cfg)
		if !isCode(err, mcperr.InvalidArgument) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("New: %v; want invalid_argument with %q", err, tc.want)
		}
	}
}

// badSigner is a crypto.Signer whose Sign answers sig, err.
type badSigner struct {
	pub crypto.PublicKey
	sig []byte
	err error
}

func (b badSigner) Public() crypto.PublicKey { return b.pub }
func (b badSigner) Sign(io.Reader, []byte, crypto.SignerOpts) ([]byte, error) {
	return b.sig, b.err
}

// TestClientAssertionSigningErrors: a key that fails or answers no ECDSA
// signature fails the assertion without quoting the key's error.
func TestClientAssertionSigningErrors(t *testing.T) {
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	for _, tc := range []struct {
		key  crypto.Signer
		want string
	}{
		{badSigner{pub: key.Public(), err: errors.New("secret-hsm-detail")}, "signing the client assertion failed"},
		{badSigner{pub: key.Public(), sig: []byte("not DER")}, "no ECDSA signature"},
	} {
		_, err := clientAssertion(tc.key, "", "c", "https://as.example", time.Now())
		if !isCode(err, mcperr.TokenFailed) || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "secret-hsm-detail") {
			t.Errorf("clientAssertion: %v; want TokenFailed saying %q", err, tc.want)
		}
	}
	s, err := clientAssertion(key, "kid-1", "c", "https://as.example", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if err := verifyClientAssertion(s, &key.PublicKey, "c", "https://as.example"); err != nil {
		t.Errorf("a good key's assertion: %v", err)
	}
}

// TestClientCredentialsPrivateKeyJWTBusyRetry: a token request the busy
// token endpoint answered 429 is sent again with a new client assertion
// (another jti), which a server that refuses replays accepts.
func TestClientCredentialsPrivateKeyJWTBusyRetry(t *testing.T) {
	as, rs := grantEnv(t)
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	as.grants, as.methods = []string{"client_credentials"}, []string{"private_key_jwt"}
	as.clientID, as.key, as.busyFirst = "svc-jwt", &key.PublicKey, 1
	cfg := grantConfig(rs)
	cfg.ClientID = as.clientID
	cfg.ClientCredentials = &ClientCredentials{PrivateKey: key}
	if err := connect(context.Background(), rs.url(), newGrantHandler(t, cfg)); err != nil {
		t.Fatalf("connect after a busy token endpoint: %v", err)
	}
	forms, _ := as.requests()
	if len(forms) != 2 {
		t.Fatalf("token requests = %d; want 2 (one answered 429, one retry)", len(forms))
	}
	_, c1, _ := verifyJWT(forms[0].Get("client_assertion"), &key.PublicKey)
	_, c2, _ := verifyJWT(forms[1].Get("client_assertion"), &key.PublicKey)
	if c1["jti"] == nil || c1["jti"] == c2["jti"] {
		t.Errorf("the retry's assertion has jti %v, the first's %v; want a new one", c2["jti"], c1["jti"])
	}
}
