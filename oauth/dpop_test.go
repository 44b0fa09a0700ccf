package oauth

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcpwasm/mcpwasm/demo/dpopcheck"
	"github.com/mcpwasm/mcpwasm/mcperr"
)

// dpopEnv is the fake AS and resource server doing DPoP, both with nonces.
func dpopEnv(t *testing.T) *env {
	t.Helper()
	e := newEnv(t)
	e.as.dpop = dpopcheck.New(dpopcheck.Options{RequireNonce: true})
	e.rs.dpop = dpopcheck.New(dpopcheck.Options{RequireNonce: true})
	return e
}

func ctxOf(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// schemes counts the Authorization schemes the resource server saw.
func schemes(reqs []rsRequest) map[string]int {
	m := map[string]int{}
	for _, r := range reqs {
		m[r.scheme]++
	}
	return m
}

// TestDPoPSignInAndCalls: with the default mode (auto) and an AS that
// advertises ES256, the sign-in binds the code to the key (dpop_jkt), the
// token request carries a proof by it and answers the AS's nonce
// challenge once, the grant is DPoP-bound, and every MCP request presents
// the token with the DPoP scheme and a valid proof (checked by the
// server: signature, htm, htu, iat, ath, unique jti, nonce, key binding),
// answering the resource server's nonce challenge once.
func TestDPoPSignInAndCalls(t *testing.T) {
	e := dpopEnv(t)
	h := e.handler(t, nil)
	ctx := ctxOf(t)
	if err := connect(ctx, e.rs.url(), h); err != nil {
		t.Fatalf("connect: %v", err)
	}
	g, err := e.store.GetGrant(ctx, h.Resource())
	if err != nil || g == nil {
		t.Fatalf("grant: %v %v", g, err)
	}
	if g.TokenType != "DPoP" || g.DPoPKeyID == "" {
		t.Errorf("grant TokenType %q, DPoPKeyID %q; want DPoP and a key", g.TokenType, g.DPoPKeyID)
	}
	key, err := defaultDPoPKeys.Key(ctx, g.DPoPKeyID)
	if err != nil {
		t.Fatal(err)
	}
	x, y := key.PublicJWK()
	jkt := dpopcheck.Thumbprint(x, y)
	e.as.mu.Lock()
	sentJKT := e.as.lastAuthQuery.Get("dpop_jkt")
	proofs := slices.Clone(e.as.tokenJKTs)
	e.as.mu.Unlock()
	if sentJKT != jkt {
		t.Errorf("dpop_jkt %q; want the key's thumbprint %q", sentJKT, jkt)
	}
	// The first proof lacked the nonce (use_dpop_nonce), the retry had it.
	if len(proofs) != 2 || proofs[1] != jkt {
		t.Errorf("token request proofs by key %q; want two, the second accepted, by %q", proofs, jkt)
	}
	reqs := e.rs.requests()
	sc := schemes(reqs)
	if sc["bearer"] != 0 {
		t.Errorf("the DPoP-bound token was sent as Bearer %d times", sc["bearer"])
	}
	var nonceChallenges, refused int
	for _, r := range reqs {
		switch r.challenge {
		case "use_dpop_nonce":
			nonceChallenges++
		case "":
		default:
			refused++
			t.Errorf("request %q refused: %s", r.method, r.challenge)
		}
		if r.scheme == "dpop" && !r.proof {
			t.Errorf("request %q without a proof", r.method)
		}
	}
	if nonceChallenges != 1 {
		t.Errorf("resource server nonce challenges = %d; want 1 (later proofs carry the nonce)", nonceChallenges)
	}
	if sc["dpop"] < 3 {
		t.Errorf("DPoP requests = %d; want the session's requests (%+v)", sc["dpop"], reqs)
	}
	// Sign-out revokes the DPoP grant as any other (RFC 7009) and deletes it.
	if err := h.Logout(ctx); err != nil {
		t.Errorf("Logout: %v", err)
	}
	if n := e.as.req.get("/revoke"); n != 2 {
		t.Errorf("revocation requests = %d; want 2 (refresh and access token)", n)
	}
	if g, _ := e.store.GetGrant(ctx, h.Resource()); g != nil {
		t.Error("grant kept after Logout")
	}
}

// TestDPoPRefreshUsesTheSameKey: a refresh of a DPoP grant is signed by
// the key of its sign-in (the AS refuses another key), and the new token
// is DPoP-bound too.
func TestDPoPRefreshUsesTheSameKey(t *testing.T) {
	e := dpopEnv(t)
	h := e.handler(t, nil)
	ctx := ctxOf(t)
	if err := h.Login(ctx); err != nil {
		t.Fatal(err)
	}
	g, _ := e.store.GetGrant(ctx, h.Resource())
	ng, err := h.refresh(ctx, g)
	if err != nil {
		t.Fatalf("refresh: %v", err)
	}
	if ng.AccessToken == g.AccessToken || ng.TokenType != "DPoP" || ng.DPoPKeyID != g.DPoPKeyID {
		t.Errorf("refreshed grant: new token %v, TokenType %q, key %q (was %q)", ng.AccessToken != g.AccessToken, ng.TokenType, ng.DPoPKeyID, g.DPoPKeyID)
	}
	e.as.mu.Lock()
	proofs := slices.Clone(e.as.tokenJKTs)
	e.as.mu.Unlock()
	if last := proofs[len(proofs)-1]; last == "" || last != proofs[1] {
		t.Errorf("refresh proof by %q; want the sign-in's key %q", last, proofs[1])
	}
	// The refreshed token works.
	if err := connect(ctx, e.rs.url(), h); err != nil {
		t.Fatalf("connect after refresh: %v", err)
	}
	// A refresh signed by another key is refused by the server: the
	// binding is real.
	bad := *ng
	bad.DPoPKeyID = "another key"
	if err := e.store.PutGrant(ctx, &bad); err != nil {
		t.Fatal(err)
	}
	if _, err := h.refresh(ctx, &bad); err == nil {
		t.Error("a refresh signed by another key succeeded")
	}
}

// TestDPoPOffSendsNoProof: with DPoP off the AS's support is ignored: no
// dpop_jkt, no proof anywhere, a Bearer grant presented as Bearer.
func TestDPoPOffSendsNoProof(t *testing.T) {
	e := dpopEnv(t)
	h := e.handler(t, func(c *Config) { c.DPoP = DPoPOff })
	ctx := ctxOf(t)
	if err := connect(ctx, e.rs.url(), h); err != nil {
		t.Fatalf("connect: %v", err)
	}
	g, _ := e.store.GetGrant(ctx, h.Resource())
	if g.TokenType != "Bearer" || g.DPoPKeyID != "" {
		t.Errorf("grant TokenType %q, DPoPKeyID %q; want Bearer, none", g.TokenType, g.DPoPKeyID)
	}
	e.as.mu.Lock()
	q, proofs := e.as.lastAuthQuery, slices.Clone(e.as.tokenJKTs)
	e.as.mu.Unlock()
	if q.Has("dpop_jkt") {
		t.Error("dpop_jkt sent with DPoP off")
	}
	if slices.ContainsFunc(proofs, func(s string) bool { return s != "" }) {
		t.Errorf("token requests with a proof: %q", proofs)
	}
	for _, r := range e.rs.requests() {
		if r.proof || (r.scheme != "bearer" && r.scheme != "") || r.challenge != "" && r.scheme != "" {
			t.Errorf("request %+v; want Bearer without a proof, accepted", r)
		}
	}
}

// TestBearerGrantStaysBearer: an AS without DPoP support (auto) gives a
// Bearer grant, presented as Bearer without proofs through
// ResourceTransport.
func TestBearerGrantStaysBearer(t *testing.T) {
	e := newEnv(t)
	e.rs.dpop = dpopcheck.New(dpopcheck.Options{}) // records; Bearer tokens pass without a proof
	h := e.handler(t, nil)
	ctx := ctxOf(t)
	if err := connect(ctx, e.rs.url(), h); err != nil {
		t.Fatalf("connect: %v", err)
	}
	g, _ := e.store.GetGrant(ctx, h.Resource())
	if g.TokenType != "Bearer" || g.DPoPKeyID != "" {
		t.Errorf("grant TokenType %q, DPoPKeyID %q; want Bearer, none", g.TokenType, g.DPoPKeyID)
	}
	if e.as.lastAuthQuery.Has("dpop_jkt") {
		t.Error("dpop_jkt sent to an AS without DPoP")
	}
	sc := schemes(e.rs.requests())
	if sc["dpop"] != 0 || sc["bearer"] == 0 {
		t.Errorf("schemes %v; want Bearer only", sc)
	}
}

// TestDPoPModes: DPoP on with an AS that does not advertise ES256 fails
// before the sign-in page; on with an AS that answers Bearer fails the
// exchange; auto with that AS gives a Bearer grant.
func TestDPoPModes(t *testing.T) {
	ctx := ctxOf(t)
	t.Run("on without support", func(t *testing.T) {
		e := newEnv(t)
		h := e.handler(t, func(c *Config) { c.DPoP = DPoPOn })
		err := h.Login(ctx)
		if !isCode(err, mcperr.DiscoveryFailed) || !strings.Contains(err.Error(), "dpop_signing_alg_values_supported") {
			t.Errorf("Login: %v; want discovery_failed naming dpop_signing_alg_values_supported", err)
		}
		if n := e.courier.calls.Load(); n != 0 {
			t.Errorf("sign-in pages shown: %d", n)
		}
	})
	t.Run("on, Bearer answer", func(t *testing.T) {
		e := newEnv(t)
		e.as.dpopBearer = true
		h := e.handler(t, func(c *Config) { c.DPoP = DPoPOn })
		err := h.Login(ctx)
		if !isCode(err, mcperr.TokenFailed) || !strings.Contains(err.Error(), "Bearer token though this client requires DPoP") {
			t.Errorf("Login: %v; want token_failed about the Bearer token", err)
		}
		if g, _ := e.store.GetGrant(ctx, h.Resource()); g != nil {
			t.Error("a grant was stored")
		}
	})
	t.Run("auto, Bearer answer", func(t *testing.T) {
		e := newEnv(t)
		e.as.dpopBearer = true
		h := e.handler(t, nil)
		if err := connect(ctx, e.rs.url(), h); err != nil {
			t.Fatalf("connect: %v", err)
		}
		g, _ := e.store.GetGrant(ctx, h.Resource())
		if g.TokenType != "Bearer" {
			t.Errorf("TokenType %q; want Bearer", g.TokenType)
		}
	})
	t.Run("bad mode", func(t *testing.T) {
		e := newEnv(t)
		cfg := e.config()
		cfg.DPoP = "yes"
		if _, err := New(cfg); !isCode(err, mcperr.InvalidArgument) {
			t.Errorf("New: %v; want invalid_argument", err)
		}
	})
}

// TestDPoPNonceLoopsEnd: servers that demand a new nonce on every proof
// get each request exactly twice (the first try and one retry with the
// nonce), then the attempt fails with an error; no sign-in starts over.
func TestDPoPNonceLoopsEnd(t *testing.T) {
	ctx := ctxOf(t)
	t.Run("authorization server", func(t *testing.T) {
		e := newEnv(t)
		e.as.nonceLoop = true
		h := e.handler(t, nil)
		err := h.Login(ctx)
		var re interface{ Error() string }
		if !isCode(err, mcperr.TokenFailed) || !strings.Contains(err.Error(), "use_dpop_nonce") {
			t.Errorf("Login: %v (%T); want token_failed use_dpop_nonce", err, re)
		}
		if n := e.as.req.get("/token"); n != 2 {
			t.Errorf("token requests = %d; want 2", n)
		}
	})
	t.Run("resource server", func(t *testing.T) {
		e := dpopEnv(t)
		h := e.handler(t, nil)
		if err := h.Login(ctx); err != nil {
			t.Fatal(err)
		}
		e.rs.nonceLoop = true
		err := connect(ctx, e.rs.url(), h)
		if err == nil || !strings.Contains(err.Error(), "DPoP nonce") {
			t.Errorf("connect: %v; want the nonce error", err)
		}
		per := map[string]int{}
		for _, r := range e.rs.requests() {
			if r.scheme == "bearer" {
				t.Errorf("request %q sent as Bearer", r.method)
			}
			per[r.method]++
		}
		for m, n := range per {
			if n > 2 {
				t.Errorf("%q sent %d times; want at most 2", m, n)
			}
		}
		if len(per) == 0 {
			t.Error("no requests seen")
		}
		if n := e.courier.calls.Load(); n != 1 {
			t.Errorf("sign-in pages shown = %d; want 1 (the Login)", n)
		}
	})
}

// TestDPoPCompletePending: in the full-page redirect mode the pending
// flow names the key; CompletePending signs the exchange with it (the AS
// checks dpop_jkt) and stores a DPoP grant the Handler presents.
func TestDPoPCompletePending(t *testing.T) {
	e := dpopEnv(t)
	keys := NewMemoryDPoPKeys()
	var authURL string
	got := make(chan string, 1)
	h := e.handler(t, func(c *Config) {
		c.PersistFlows = true
		c.DPoPKeys = keys
		c.Courier = CourierFunc(func(ctx context.Context, u string) error {
			got <- u
			return nil
		})
	})
	ctx := ctxOf(t)
	loginCtx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- h.Login(loginCtx) }()
	authURL = <-got
	// The page is gone: fetch the callback as the returning page would.
	hc := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := hc.Get(authURL)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	u, _ := url.Parse(authURL)
	p, _ := e.store.GetPending(ctx, u.Query().Get("state"))
	if p == nil || p.DPoPKeyID == "" {
		t.Fatalf("pending flow %v without a DPoP key", p)
	}
	res, err := CompletePending(ctx, PendingConfig{Store: e.store, HTTPClient: http.DefaultClient, DPoPKeys: keys}, resp.Header.Get("Location"))
	if err != nil || res != h.Resource() {
		t.Fatalf("CompletePending: %q %v", res, err)
	}
	stop()
	<-done
	g, err := h.ReloadGrant(ctx)
	if err != nil || g == nil || g.TokenType != "DPoP" || g.DPoPKeyID != p.DPoPKeyID {
		t.Fatalf("grant %v %v; want DPoP with the flow's key", g, err)
	}
	if err := connect(ctx, e.rs.url(), h); err != nil {
		t.Fatalf("connect: %v", err)
	}
}

// TestDPoPProof checks a proof against the server-side verifier and the
// claims RFC 9449 asks for: htu without query and fragment, ath, nonce,
// a new jti each time, iat now.
func TestDPoPProof(t *testing.T) {
	ctx := ctxOf(t)
	key, err := NewMemoryDPoPKeys().Key(ctx, "k")
	if err != nil {
		t.Fatal(err)
	}
	u, _ := url.Parse("HTTPS://MCP.Example:8443/a/b?x=1#frag")
	chk := dpopcheck.New(dpopcheck.Options{})
	seen := map[string]bool{}
	for range 3 {
		proof, err := dpopProof(ctx, key, "POST", u, "tok-1", "n-1")
		if err != nil {
			t.Fatal(err)
		}
		jkt, err := chk.Verify(proof, "POST", "https://mcp.example:8443/a/b", "tok-1")
		if err != nil {
			t.Fatalf("Verify: %v", err)
		}
		x, y := key.PublicJWK()
		if jkt != dpopcheck.Thumbprint(x, y) || jkt != dpopThumbprint(key) {
			t.Errorf("thumbprint %q, ours %q", jkt, dpopThumbprint(key))
		}
		parts := strings.Split(proof, ".")
		b, _ := base64.RawURLEncoding.DecodeString(parts[1])
		var c map[string]any
		if err := json.Unmarshal(b, &c); err != nil {
			t.Fatal(err)
		}
		if c["htu"] != "https://mcp.example:8443/a/b" || c["nonce"] != "n-1" || c["ath"] != dpopcheck.ATH("tok-1") {
			t.Errorf("claims %v", c)
		}
		if iat, _ := c["iat"].(float64); time.Since(time.Unix(int64(iat), 0)).Abs() > time.Minute {
			t.Errorf("iat %v", c["iat"])
		}
		jti, _ := c["jti"].(string)
		if len(jti) < 16 || seen[jti] {
			t.Errorf("jti %q short or repeated", jti)
		}
		seen[jti] = true
	}
	// A token request's proof has no ath.
	proof, _ := dpopProof(ctx, key, "POST", u, "", "")
	if _, err := chk.Verify(proof, "POST", "https://mcp.example:8443/a/b", ""); err != nil {
		t.Errorf("Verify without token: %v", err)
	}
	if strings.Contains(string(mustB64(t, strings.Split(proof, ".")[1])), "ath") {
		t.Error("ath in a proof without a token")
	}
	var de *dpopcheck.Error
	if _, err := chk.Verify(proof, "GET", "https://mcp.example:8443/a/b", ""); !errors.As(err, &de) {
		t.Errorf("a proof for POST verified for GET: %v", err)
	}
}

func mustB64(t *testing.T, s string) []byte {
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestDPoPChallengeParsed: resource_metadata, scope and error are read
// from a DPoP challenge as from a Bearer one.
func TestDPoPChallengeParsed(t *testing.T) {
	resp := &http.Response{Header: http.Header{"Www-Authenticate": {`DPoP algs="ES256", error="insufficient_scope", scope="a b", resource_metadata="https://mcp.example/.well-known/oauth-protected-resource/mcp"`}}}
	ch := parseChallenge(resp)
	if ch.prmURL != "https://mcp.example/.well-known/oauth-protected-resource/mcp" || !slices.Equal(ch.scopes, []string{"a", "b"}) || ch.err != "insufficient_scope" {
		t.Errorf("parsed %+v", ch)
	}
}

// TestResourceTransport: a request with the handler's DPoP-bound token
// gets the DPoP scheme and a proof; the nonce of any answer (a 200 too)
// goes into the next proof; a nonce challenge to a request whose body
// cannot be sent again is returned as it is (one request); a request with
// another token passes unchanged.
func TestResourceTransport(t *testing.T) {
	ctx := ctxOf(t)
	chk := dpopcheck.New(dpopcheck.Options{})
	type seen struct {
		authz, nonce string
		proof        bool
	}
	var got []seen
	challenge := false
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s := seen{authz: r.Header.Get("Authorization"), proof: r.Header.Get("DPoP") != ""}
		if s.proof {
			if _, err := chk.Check(r, strings.TrimPrefix(s.authz, "DPoP ")); err != nil {
				t.Errorf("proof: %v", err)
			}
			var c struct {
				Nonce string `json:"nonce"`
			}
			json.Unmarshal(mustB64(t, strings.Split(r.Header.Get("DPoP"), ".")[1]), &c)
			s.nonce = c.Nonce
		}
		got = append(got, s)
		w.Header().Set("DPoP-Nonce", "n"+strconv.Itoa(len(got)))
		if challenge {
			w.Header().Set("WWW-Authenticate", `DPoP error="use_dpop_nonce"`)
			w.WriteHeader(http.StatusUnauthorized)
		}
	}))
	t.Cleanup(srv.Close)
	e := newEnv(t)
	h := e.handler(t, func(c *Config) { c.DPoPKeys = NewMemoryDPoPKeys() })
	h.mu.Lock()
	h.grant, h.loaded = &Grant{Resource: h.Resource(), AccessToken: "tok-1", TokenType: "DPoP", DPoPKeyID: "k"}, true
	h.mu.Unlock()
	hc := &http.Client{Transport: h.ResourceTransport(http.DefaultTransport)}
	send := func(tok string, body io.Reader) *http.Response {
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL+"/mcp?x=1", body)
		req.Header.Set("Authorization", "Bearer "+tok)
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	send("tok-1", strings.NewReader("{}"))
	send("tok-1", strings.NewReader("{}"))
	if len(got) != 2 || got[0].authz != "DPoP tok-1" || !got[0].proof || got[0].nonce != "" || got[1].nonce != "n1" {
		t.Errorf("saw %+v; want DPoP with proofs, the second with the first answer's nonce", got)
	}
	challenge = true
	resp := send("tok-1", io.NopCloser(strings.NewReader("{}"))) // no GetBody
	if resp.StatusCode != http.StatusUnauthorized || len(got) != 3 {
		t.Errorf("status %d after %d requests; want the 401 after one", resp.StatusCode, len(got))
	}
	challenge = false
	send("other-token", nil)
	if last := got[len(got)-1]; last.authz != "Bearer other-token" || last.proof {
		t.Errorf("another token went out as %+v; want it unchanged", last)
	}
}

// shortKey is a DPoPKey whose signatures are not r‖s.
type shortKey struct{ DPoPKey }

func (shortKey) Sign(context.Context, []byte) ([]byte, error) { return make([]byte, 71), nil }

// TestDPoPProofSigningErrors: a key that fails, or answers a signature
// that is not 64 bytes, fails the proof with TokenFailed.
func TestDPoPProofSigningErrors(t *testing.T) {
	ctx := ctxOf(t)
	key, err := NewMemoryDPoPKeys().Key(ctx, "k")
	if err != nil {
		t.Fatal(err)
	}
	u, _ := url.Parse("https://mcp.example/mcp")
	_, err = dpopProof(ctx, shortKey{key}, "POST", u, "", "")
	if !isCode(err, mcperr.TokenFailed) || !strings.Contains(err.Error(), "71-byte signature") {
		t.Errorf("a 71-byte signature: %v", err)
	}
}
