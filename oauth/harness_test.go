package oauth

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpwasm/mcpwasm/demo/dpopcheck"
)

// counter counts requests per path.
type counter struct {
	mu sync.Mutex
	m  map[string]int
}

func (c *counter) add(p string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil {
		c.m = map[string]int{}
	}
	c.m[p]++
}

func (c *counter) get(p string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.m[p]
}

func (c *counter) total() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, v := range c.m {
		n += v
	}
	return n
}

func (c *counter) reset() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.m = nil
}

type issuedCode struct {
	challenge, clientID, redirect, resource, scope string
	jkt                                            string // dpop_jkt of the authorization request; for a refresh token, its key
}

type issuedToken struct {
	scopes   []string
	resource string
	expiry   time.Time
	jkt      string // thumbprint of the DPoP key it is bound to; "" for a Bearer token
}

// fakeAS is a strict authorization server on its own origin.
type fakeAS struct {
	t   *testing.T
	srv *httptest.Server
	req counter

	// Knobs, set before use.
	issuerPath   string                        // e.g. "/tenant1"
	metaPath     string                        // where metadata is served; default RFC 8414 for issuerPath
	meta         func(m map[string]any)        // edits the metadata
	authMethod   string                        // required token auth: none, client_secret_basic, client_secret_post
	clientID     string                        // accepted pre-registered client
	clientSecret string                        // its secret
	deny         string                        // error to return from /authorize
	denyDesc     string                        // its description
	sendIss      string                        // iss to add; "" none
	expiresIn    any                           // expires_in in token responses; nil: 3600
	tokenResp    func(m map[string]any)        // edits the token response
	rotate       bool                          // issue a new refresh token on refresh
	rejectRT     bool                          // refresh answers invalid_grant
	refreshDelay time.Duration                 // slows refresh
	scopeGrant   func(requested string) string // scope granted
	regResp      func(m map[string]any)        // edits the registration response
	regRefuse    func(m map[string]any) string // an error code refusing this registration request; "" takes it
	revokeStatus int                           // the revocation endpoint's status; 0: 200
	revokeBody   map[string]string             // token_type_hint → a 400 error code answered for it
	knownOnly    bool                          // public clients too must be registered (or pre-registered)
	idSuffix     string                        // appended to the client IDs it registers
	dpop         *dpopcheck.Checker            // when set: advertises ES256, checks proofs, binds tokens to their key
	dpopBearer   bool                          // advertises ES256 but ignores proofs: Bearer tokens
	nonceLoop    bool                          // every request with a proof is answered use_dpop_nonce with a new nonce
	busy         []busyAnswerOf                // the next token requests' answers, after their proof is checked (its jti spent)

	mu            sync.Mutex
	codes         map[string]issuedCode
	tokens        map[string]issuedToken
	rts           map[string]issuedCode
	clients       map[string]string // id -> secret (DCR)
	n             int
	lastAuthQuery url.Values
	lastReg       map[string]any // the last registration request
	tokenJKTs     []string       // thumbprint of each token request's proof ("" without one), in order
}

func newFakeAS(t *testing.T) *fakeAS {
	a := &fakeAS{t: t, codes: map[string]issuedCode{}, tokens: map[string]issuedToken{}, rts: map[string]issuedCode{}, clients: map[string]string{}, authMethod: "none"}
	a.srv = httptest.NewServer(http.HandlerFunc(a.serve))
	t.Cleanup(a.srv.Close)
	return a
}

func (a *fakeAS) issuer() string { return a.srv.URL + a.issuerPath }

func (a *fakeAS) metadata() map[string]any {
	iss := a.issuer()
	m := map[string]any{
		"issuer":                                iss,
		"authorization_endpoint":                iss + "/authorize",
		"token_endpoint":                        iss + "/token",
		"registration_endpoint":                 iss + "/register",
		"revocation_endpoint":                   iss + "/revoke",
		"response_types_supported":              []string{"code"},
		"grant_types_supported":                 []string{"authorization_code", "refresh_token"},
		"code_challenge_methods_supported":      []string{"S256"},
		"token_endpoint_auth_methods_supported": []string{a.authMethod},
		"scopes_supported":                      []string{"read", "write", "offline_access"},
	}
	if a.dpop != nil || a.dpopBearer || a.nonceLoop {
		m["dpop_signing_alg_values_supported"] = []string{"ES256"}
	}
	if a.meta != nil {
		a.meta(m)
	}
	return m
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

func (a *fakeAS) serve(w http.ResponseWriter, r *http.Request) {
	a.req.add(r.URL.Path)
	metaPath := a.metaPath
	if metaPath == "" {
		metaPath = "/.well-known/oauth-authorization-server" + a.issuerPath
	}
	switch strings.TrimPrefix(r.URL.Path, a.issuerPath) {
	case "/authorize":
		a.authorize(w, r)
		return
	case "/token":
		a.token(w, r)
		return
	case "/register":
		a.register(w, r)
		return
	case "/revoke":
		a.mu.Lock()
		status := a.revokeStatus
		code := a.revokeBody[r.PostFormValue("token_type_hint")]
		a.mu.Unlock()
		if code != "" {
			writeJSON(w, http.StatusBadRequest, map[string]string{"error": code})
			return
		}
		if status == 0 {
			status = http.StatusOK
		}
		w.WriteHeader(status)
		return
	}
	if r.URL.Path == metaPath {
		writeJSON(w, 200, a.metadata())
		return
	}
	http.NotFound(w, r)
}

func (a *fakeAS) authorize(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	a.mu.Lock()
	a.lastAuthQuery = q
	a.mu.Unlock()
	for _, p := range []string{"response_type", "client_id", "redirect_uri", "code_challenge", "code_challenge_method", "state", "resource"} {
		if q.Get(p) == "" {
			http.Error(w, "missing "+p, 400)
			return
		}
	}
	if q.Get("response_type") != "code" || q.Get("code_challenge_method") != "S256" {
		http.Error(w, "bad request", 400)
		return
	}
	if len(q.Get("state")) < 22 {
		http.Error(w, "state too short", 400)
		return
	}
	red, _ := url.Parse(q.Get("redirect_uri"))
	v := red.Query()
	v.Set("state", q.Get("state"))
	if a.deny != "" {
		v.Set("error", a.deny)
		v.Set("error_description", a.denyDesc)
	} else {
		a.mu.Lock()
		a.n++
		code := fmt.Sprintf("code-secret-%d", a.n)
		a.codes[code] = issuedCode{q.Get("code_challenge"), q.Get("client_id"), q.Get("redirect_uri"), q.Get("resource"), q.Get("scope"), ""}
		if a.dpop != nil {
			ic := a.codes[code]
			ic.jkt = q.Get("dpop_jkt")
			a.codes[code] = ic
		}
		a.mu.Unlock()
		v.Set("code", code)
	}
	if a.sendIss != "" {
		v.Set("iss", a.sendIss)
	}
	red.RawQuery = v.Encode()
	http.Redirect(w, r, red.String(), http.StatusFound)
}

// clientAuth checks client authentication and returns the client id.
func (a *fakeAS) clientAuth(r *http.Request) (string, bool) {
	id, secret, basic := r.BasicAuth()
	if basic {
		id, _ = url.QueryUnescape(id)
		secret, _ = url.QueryUnescape(secret)
	}
	switch a.authMethod {
	case "client_secret_basic":
		if !basic || r.PostForm.Get("client_secret") != "" {
			return "", false
		}
	case "client_secret_post":
		if basic {
			return "", false
		}
		id, secret = r.PostForm.Get("client_id"), r.PostForm.Get("client_secret")
	default:
		if basic || r.PostForm.Get("client_secret") != "" {
			return "", false
		}
		id := r.PostForm.Get("client_id")
		if a.knownOnly {
			a.mu.Lock()
			_, known := a.clients[id]
			a.mu.Unlock()
			return id, known || (id != "" && id == a.clientID)
		}
		return id, id != ""
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if want, ok := a.clients[id]; ok {
		return id, want == secret
	}
	return id, id == a.clientID && secret == a.clientSecret
}

func (a *fakeAS) token(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil || r.Method != http.MethodPost {
		writeJSON(w, 400, map[string]string{"error": "invalid_request"})
		return
	}
	id, ok := a.clientAuth(r)
	if !ok {
		writeJSON(w, 401, map[string]string{"error": "invalid_client"})
		return
	}
	jkt, ok := a.checkProof(w, r)
	if !ok {
		return
	}
	a.mu.Lock()
	var busy *busyAnswerOf
	if len(a.busy) > 0 {
		busy, a.busy = &a.busy[0], a.busy[1:]
	}
	a.mu.Unlock()
	if busy != nil {
		if busy.retryAfter != "" {
			w.Header().Set("Retry-After", busy.retryAfter)
		}
		writeJSON(w, busy.status, map[string]string{"error": "temporarily_unavailable"})
		return
	}
	f := r.PostForm
	var ic issuedCode
	switch f.Get("grant_type") {
	case "authorization_code":
		a.mu.Lock()
		c, ok := a.codes[f.Get("code")]
		delete(a.codes, f.Get("code")) // single use
		a.mu.Unlock()
		sum := sha256.Sum256([]byte(f.Get("code_verifier")))
		if !ok || c.clientID != id || c.redirect != f.Get("redirect_uri") || c.resource != f.Get("resource") ||
			base64.RawURLEncoding.EncodeToString(sum[:]) != c.challenge || (c.jkt != "" && c.jkt != jkt) {
			// Echo what was rejected, as some servers do: the client must redact it.
			writeJSON(w, 400, map[string]string{"error": "invalid_grant", "error_description": "bad code " + f.Get("code") + " for verifier " + f.Get("code_verifier")})
			return
		}
		ic = c
	case "refresh_token":
		time.Sleep(a.refreshDelay)
		a.mu.Lock()
		c, ok := a.rts[f.Get("refresh_token")]
		if ok && a.rotate {
			delete(a.rts, f.Get("refresh_token"))
		}
		a.mu.Unlock()
		if !ok || a.rejectRT || c.resource != f.Get("resource") || c.clientID != id || c.jkt != jkt {
			writeJSON(w, 400, map[string]string{"error": "invalid_grant", "error_description": "refresh token " + f.Get("refresh_token") + " revoked"})
			return
		}
		ic = c
	default:
		writeJSON(w, 400, map[string]string{"error": "unsupported_grant_type"})
		return
	}
	a.mu.Lock()
	a.n++
	at := fmt.Sprintf("access-secret-%d", a.n)
	scope := ic.scope
	if a.scopeGrant != nil {
		scope = a.scopeGrant(scope)
	}
	a.tokens[at] = issuedToken{scopes: strings.Fields(scope), resource: ic.resource, expiry: time.Now().Add(time.Hour), jkt: jkt}
	ic.jkt = jkt // the refresh token is bound to the key too
	resp := map[string]any{"access_token": at, "token_type": "Bearer", "expires_in": 3600}
	if jkt != "" {
		resp["token_type"] = "DPoP"
	}
	if a.expiresIn != nil {
		resp["expires_in"] = a.expiresIn
	}
	if f.Get("grant_type") == "authorization_code" || a.rotate {
		rt := fmt.Sprintf("refresh-secret-%d", a.n)
		a.rts[rt] = ic
		resp["refresh_token"] = rt
	}
	a.mu.Unlock()
	if a.tokenResp != nil {
		a.tokenResp(resp)
	}
	writeJSON(w, 200, resp)
}

func (a *fakeAS) register(w http.ResponseWriter, r *http.Request) {
	var m map[string]any
	if err := json.NewDecoder(r.Body).Decode(&m); err != nil {
		writeJSON(w, 400, map[string]string{"error": "invalid_client_metadata"})
		return
	}
	a.mu.Lock()
	a.lastReg = m
	if a.regRefuse != nil {
		if code := a.regRefuse(m); code != "" {
			a.mu.Unlock()
			writeJSON(w, 400, map[string]string{"error": code, "error_description": "refused by the test"})
			return
		}
	}
	a.n++
	id := fmt.Sprintf("dcr-client-%d%s", a.n, a.idSuffix)
	secret := ""
	if a.authMethod != "none" {
		secret = fmt.Sprintf("client-secret-%d", a.n)
	}
	a.clients[id] = secret
	a.mu.Unlock()
	resp := map[string]any{"client_id": id, "redirect_uris": m["redirect_uris"], "token_endpoint_auth_method": a.authMethod}
	if secret != "" {
		resp["client_secret"] = secret
	}
	if a.regResp != nil {
		a.regResp(resp)
	}
	writeJSON(w, 201, resp)
}

func (a *fakeAS) verify(_ context.Context, tok string, _ *http.Request) (*auth.TokenInfo, error) {
	return tokenInfo(&a.mu, a.tokens, tok)
}

// tokenInfo is a resource server's view of tok, one of tokens (read
// under mu): its scopes and expiry, or ErrInvalidToken.
func tokenInfo(mu *sync.Mutex, tokens map[string]issuedToken, tok string) (*auth.TokenInfo, error) {
	mu.Lock()
	defer mu.Unlock()
	it, ok := tokens[tok]
	if !ok {
		return nil, auth.ErrInvalidToken
	}
	return &auth.TokenInfo{Scopes: it.scopes, Expiration: it.expiry}, nil
}

// fakeRS is a protected MCP server (go-sdk, auth.RequireBearerToken) on
// another origin.
type fakeRS struct {
	srv *httptest.Server
	req counter

	prm      func(m map[string]any) // edits the PRM; nil map result means 404
	prmPath  string                 // default path-inserted
	hideWWW  bool                   // no WWW-Authenticate header
	noPRM    bool
	scopes   []string // required scopes
	asIssuer func() string
	verify   auth.TokenVerifier // checks tokens; default: the first AS's
	mcpPath  string

	// DPoP (see dpopGuard): dpop checks proofs; boundKey names the key a
	// token is bound to ("" for Bearer); nonceLoop answers every proof
	// with use_dpop_nonce and a new nonce.
	dpop      *dpopcheck.Checker
	boundKey  func(tok string) string
	nonceLoop bool
	dmu       sync.Mutex
	seen      []rsRequest
}

// rsRequest is what the fake resource server saw of one MCP request.
type rsRequest struct {
	method    string // JSON-RPC method ("" for none)
	scheme    string // of Authorization, lower case; "" without
	proof     bool   // a DPoP header came along
	challenge string // error of the DPoP challenge it answered with, "" when let through
}

func newFakeRS(t *testing.T, as *fakeAS) *fakeRS {
	s := &fakeRS{mcpPath: "/mcp", asIssuer: as.issuer, verify: as.verify, boundKey: as.boundKey}
	server := mcp.NewServer(&mcp.Implementation{Name: "test", Version: "1"}, nil)
	mcp.AddTool(server, &mcp.Tool{Name: "echo"}, func(ctx context.Context, req *mcp.CallToolRequest, in struct{}) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok"}}}, nil, nil
	})
	mh := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server }, &mcp.StreamableHTTPOptions{Stateless: true})
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == s.mcpPath {
			opts := &auth.RequireBearerTokenOptions{Scopes: s.scopes}
			if !s.hideWWW {
				opts.ResourceMetadataURL = s.srv.URL + s.prmLocation()
			}
			h := auth.RequireBearerToken(s.verify, opts)(mh)
			if s.hideWWW {
				h = stripWWW(h)
			}
			if s.dpop != nil || s.nonceLoop {
				h = s.dpopGuard(h)
			}
			h.ServeHTTP(w, r)
			return
		}
		if !s.noPRM && r.URL.Path == s.prmLocation() {
			m := map[string]any{"resource": s.srv.URL + s.mcpPath, "authorization_servers": []string{s.asIssuer()}, "scopes_supported": []string{"read"}}
			if s.prm != nil {
				s.prm(m)
			}
			writeJSON(w, 200, m)
			return
		}
		http.NotFound(w, r)
	})
	s.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.req.add(r.URL.Path)
		mux.ServeHTTP(w, r)
	}))
	t.Cleanup(s.srv.Close)
	return s
}

func (s *fakeRS) prmLocation() string {
	if s.prmPath != "" {
		return s.prmPath
	}
	return "/.well-known/oauth-protected-resource" + s.mcpPath
}

func (s *fakeRS) url() string { return s.srv.URL + s.mcpPath }

type wwwStripper struct{ http.ResponseWriter }

func (w wwwStripper) WriteHeader(code int) {
	w.Header().Del("WWW-Authenticate")
	w.ResponseWriter.WriteHeader(code)
}

func stripWWW(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.ServeHTTP(wwwStripper{w}, r)
	})
}

// testCourier fetches the authorization URL without following the
// redirect and delivers the Location to reg.
type testCourier struct {
	reg   *Registry
	calls atomic.Int32
	block chan struct{} // when set, Open waits for it (or ctx) before fetching
	// dismiss, when set, is returned as the dismissed channel: closing it
	// is a person closing the sign-in window.
	dismiss chan error
	urls    []string
	mu      sync.Mutex
}

func (c *testCourier) Open(ctx context.Context, authURL string) (<-chan error, error) {
	c.mu.Lock()
	c.urls = append(c.urls, authURL)
	block, dismiss := c.block, c.dismiss
	c.mu.Unlock()
	// Counted after the URL is recorded: tests wait on calls, then read urls.
	c.calls.Add(1)
	go func() {
		if block != nil {
			select {
			case <-block:
			case <-ctx.Done():
				return
			}
		}
		hc := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, authURL, nil)
		resp, err := hc.Do(req)
		if err != nil {
			return
		}
		resp.Body.Close()
		if loc := resp.Header.Get("Location"); loc != "" {
			c.reg.Deliver(loc)
		}
	}()
	return dismiss, nil
}

type env struct {
	as      *fakeAS
	rs      *fakeRS
	store   *MemoryStore
	reg     *Registry
	courier *testCourier
	events  *eventLog
}

type eventLog struct {
	mu sync.Mutex
	ev []Event
}

func (l *eventLog) add(e Event) {
	l.mu.Lock()
	l.ev = append(l.ev, e)
	l.mu.Unlock()
}

func (l *eventLog) all() []Event {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.ev)
}

func newEnv(t *testing.T) *env {
	t.Helper()
	as := newFakeAS(t)
	rs := newFakeRS(t, as)
	reg := NewRegistry()
	return &env{as: as, rs: rs, store: NewMemoryStore(), reg: reg, courier: &testCourier{reg: reg}, events: &eventLog{}}
}

func (e *env) config() Config {
	return Config{
		ResourceURL: e.rs.url(),
		HTTPClient:  &http.Client{Transport: http.DefaultTransport, Timeout: 10 * time.Second},
		RedirectURL: "http://127.0.0.1:9/callback",
		ClientName:  "test",
		Store:       e.store,
		Registry:    e.reg,
		Courier:     e.courier,
		Interactive: true,
		OnEvent:     e.events.add,
		AuthTimeout: 10 * time.Second,
	}
}

func (e *env) handler(t *testing.T, edit func(*Config)) *Handler {
	t.Helper()
	cfg := e.config()
	if edit != nil {
		edit(&cfg)
	}
	h, err := New(cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return h
}

// connect runs an MCP session through h (its ResourceTransport, as an
// embedder sets it up) and calls a tool.
func connect(ctx context.Context, url string, h *Handler) error {
	c := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, nil)
	s, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url, OAuthHandler: h, HTTPClient: &http.Client{Transport: h.ResourceTransport(http.DefaultTransport)}, MaxRetries: -1}, nil)
	if err != nil {
		return err
	}
	defer s.Close()
	_, err = s.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{}})
	return err
}

// unauthorized401 is a synthetic 401 for calling Handler.Authorize directly.
func unauthorized401(rsURL, www string) (*http.Request, *http.Response) {
	req, _ := http.NewRequest(http.MethodPost, rsURL, nil)
	resp := &http.Response{StatusCode: 401, Header: http.Header{}, Body: http.NoBody}
	if www != "" {
		resp.Header.Set("WWW-Authenticate", www)
	}
	return req, resp
}

// checkProof checks the DPoP proof of a token request when the AS does
// DPoP and one came along, and returns its key's thumbprint ("" without
// one: a Bearer token). It answers a refused proof itself (ok false).
func (a *fakeAS) checkProof(w http.ResponseWriter, r *http.Request) (jkt string, ok bool) {
	if r.Header.Get("DPoP") == "" || (a.dpop == nil && !a.nonceLoop) {
		a.mu.Lock()
		a.tokenJKTs = append(a.tokenJKTs, "")
		a.mu.Unlock()
		return "", true
	}
	if a.nonceLoop {
		w.Header().Set("DPoP-Nonce", rand.Text())
		writeJSON(w, 400, map[string]string{"error": "use_dpop_nonce"})
		return "", false
	}
	w.Header().Set("DPoP-Nonce", a.dpop.Nonce())
	jkt, err := a.dpop.Check(r, "")
	a.mu.Lock()
	a.tokenJKTs = append(a.tokenJKTs, jkt)
	a.mu.Unlock()
	if err != nil {
		var de *dpopcheck.Error
		if !errors.As(err, &de) {
			a.t.Errorf("dpopcheck: %v", err)
			return "", false
		}
		if de.Code != dpopcheck.CodeUseNonce {
			a.t.Errorf("token request proof refused: %v", err)
		}
		writeJSON(w, 400, map[string]string{"error": de.Code, "error_description": de.Description})
		return "", false
	}
	return jkt, true
}

// boundKey returns the thumbprint of the key tok is bound to.
func (a *fakeAS) boundKey(tok string) string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.tokens[tok].jkt
}

// dpopGuard is a DPoP resource server (RFC 9449 §7, §9) in front of
// next: a DPoP-bound token must come with the DPoP scheme and a valid
// proof by its key carrying the current nonce; a Bearer token without a
// proof. It records what it saw, and passes accepted requests on as
// Bearer (go-sdk's auth.RequireBearerToken checks the token itself).
func (s *fakeRS) dpopGuard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		var msg struct {
			Method string `json:"method"`
		}
		_ = json.Unmarshal(body, &msg)
		rec := rsRequest{method: msg.Method, proof: r.Header.Get("DPoP") != ""}
		scheme, tok, _ := strings.Cut(r.Header.Get("Authorization"), " ")
		rec.scheme = strings.ToLower(scheme)
		// Recorded before the answer is written: the client may look as
		// soon as it has it.
		record := func() {
			s.dmu.Lock()
			s.seen = append(s.seen, rec)
			s.dmu.Unlock()
		}
		challenge := func(code string) {
			rec.challenge = code
			record()
			w.Header().Set("WWW-Authenticate", fmt.Sprintf(`DPoP error=%q, algs="ES256", resource_metadata=%q`, code, s.srv.URL+s.prmLocation()))
			writeJSON(w, 401, map[string]string{"error": code})
		}
		if s.dpop != nil {
			w.Header().Set("DPoP-Nonce", s.dpop.Nonce())
		}
		if tok == "" {
			record()
			w.Header().Set("WWW-Authenticate", fmt.Sprintf(`DPoP algs="ES256", resource_metadata=%q`, s.srv.URL+s.prmLocation()))
			writeJSON(w, 401, map[string]string{"error": "unauthorized"})
			return
		}
		bound := s.boundKey(tok)
		switch {
		case bound == "" && (rec.scheme != "bearer" || rec.proof):
			challenge("invalid_request")
			return
		case bound == "":
		case rec.scheme != "dpop":
			challenge("invalid_token")
			return
		case s.nonceLoop:
			w.Header().Set("DPoP-Nonce", rand.Text())
			challenge("use_dpop_nonce")
			return
		default:
			jkt, err := s.dpop.Check(r, tok)
			var de *dpopcheck.Error
			switch {
			case errors.As(err, &de):
				challenge(de.Code)
				return
			case err != nil:
				challenge("invalid_dpop_proof")
				return
			case jkt != bound:
				challenge("invalid_token")
				return
			}
		}
		record()
		r = r.Clone(r.Context())
		r.Header.Set("Authorization", "Bearer "+tok)
		r.Header.Del("DPoP")
		next.ServeHTTP(w, r)
	})
}

// requests returns what the DPoP guard saw.
func (s *fakeRS) requests() []rsRequest {
	s.dmu.Lock()
	defer s.dmu.Unlock()
	return slices.Clone(s.seen)
}
