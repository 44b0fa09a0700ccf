package oauth

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/mcpwasm/mcpwasm/demo/dpopcheck"
)

// copyingKeys keeps copies of the keys of stored, as the browser's keep
// IndexedDB's: a key replaced in stored is still used from its copy until
// ForgetCopy.
type copyingKeys struct {
	stored *MemoryDPoPKeys

	mu     sync.Mutex
	copies map[string]DPoPKey
	forgot int
}

func (c *copyingKeys) Key(ctx context.Context, id string) (DPoPKey, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if k := c.copies[id]; k != nil {
		return k, nil
	}
	k, err := c.stored.Key(ctx, id)
	if err == nil {
		c.copies[id] = k
	}
	return k, err
}

func (c *copyingKeys) DeleteKey(ctx context.Context, id string) error {
	c.ForgetCopy(id)
	return c.stored.DeleteKey(ctx, id)
}

func (c *copyingKeys) ForgetCopy(id string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.forgot++
	delete(c.copies, id)
}

func (c *copyingKeys) StoredKey(_ context.Context, id string) (DPoPKey, bool, error) {
	c.ForgetCopy(id)
	c.stored.mu.Lock()
	k, ok := c.stored.keys[id]
	c.stored.mu.Unlock()
	if !ok {
		return nil, false, nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.copies[id] = k
	return k, true, nil
}

// has reports whether a key named id is stored.
func (c *copyingKeys) has(id string) bool {
	c.stored.mu.Lock()
	defer c.stored.mu.Unlock()
	_, ok := c.stored.keys[id]
	return ok
}

// TestResourceTransportRereadsAReplacedKey: a resource server refusing a
// proof by a key that storage no longer holds (another page replaced it)
// gets the request once more, signed by the stored key; a refusal of the
// stored key itself is not sent again; a nonce challenge is not a key
// problem and keeps the copy; when no key is stored any more (another
// page cleared the storage) the refusal stands and no key is made.
func TestResourceTransportRereadsAReplacedKey(t *testing.T) {
	ctx := ctxOf(t)
	chk := dpopcheck.New(dpopcheck.Options{})
	var mu sync.Mutex
	var bound string // the thumbprint the token is bound to
	var proofs []string
	nonce := false
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		jkt, err := chk.Check(r, strings.TrimPrefix(r.Header.Get("Authorization"), "DPoP "))
		mu.Lock()
		defer mu.Unlock()
		proofs = append(proofs, jkt)
		switch {
		case err != nil:
			t.Errorf("proof: %v", err)
			w.WriteHeader(http.StatusBadRequest)
		case nonce:
			nonce = false
			w.Header().Set("DPoP-Nonce", "n-1")
			w.Header().Set("WWW-Authenticate", `DPoP error="use_dpop_nonce"`)
			w.WriteHeader(http.StatusUnauthorized)
		case jkt != bound:
			w.Header().Set("WWW-Authenticate", `DPoP error="invalid_token", error_description="bound to another DPoP key"`)
			w.WriteHeader(http.StatusUnauthorized)
		}
	}))
	t.Cleanup(srv.Close)
	keys := &copyingKeys{stored: NewMemoryDPoPKeys(), copies: map[string]DPoPKey{}}
	thumb := func() string {
		k, err := keys.stored.Key(ctx, "k")
		if err != nil {
			t.Fatal(err)
		}
		return dpopcheck.Thumbprint(k.PublicJWK())
	}
	e := newEnv(t)
	h := e.handler(t, func(c *Config) { c.DPoPKeys = keys })
	h.mu.Lock()
	h.grant, h.loaded = &Grant{Resource: h.Resource(), AccessToken: "tok-1", TokenType: "DPoP", DPoPKeyID: "k"}, true
	h.mu.Unlock()
	hc := &http.Client{Transport: h.ResourceTransport(http.DefaultTransport)}
	call := func() (status int, sent []string, forgot int) {
		t.Helper()
		mu.Lock()
		before := len(proofs)
		mu.Unlock()
		keys.mu.Lock()
		f0 := keys.forgot
		keys.mu.Unlock()
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL+"/mcp", strings.NewReader("{}"))
		req.Header.Set("Authorization", "Bearer tok-1")
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		mu.Lock()
		defer mu.Unlock()
		keys.mu.Lock()
		defer keys.mu.Unlock()
		return resp.StatusCode, append([]string(nil), proofs[before:]...), keys.forgot - f0
	}

	old := thumb()
	mu.Lock()
	bound = old
	mu.Unlock()
	if st, sent, forgot := call(); st != 200 || len(sent) != 1 || forgot != 0 {
		t.Errorf("first call: %d after %d requests, %d copies forgotten; want 200 after 1, none", st, len(sent), forgot)
	}

	// Another page replaces the stored key and signs in with it.
	if err := keys.stored.DeleteKey(ctx, "k"); err != nil {
		t.Fatal(err)
	}
	replaced := thumb()
	mu.Lock()
	bound = replaced
	mu.Unlock()
	st, sent, forgot := call()
	if st != 200 || len(sent) != 2 || sent[0] != old || sent[1] != replaced || forgot != 1 {
		t.Errorf("after the key was replaced: %d, proofs by %q, %d copies forgotten; want 200 after a proof by the old key %q then the stored one %q, one forgotten",
			st, sent, forgot, old, replaced)
	}

	// The stored key itself refused (say, a revoked token): not sent again.
	mu.Lock()
	bound = "another"
	mu.Unlock()
	if st, sent, _ := call(); st != http.StatusUnauthorized || len(sent) != 1 {
		t.Errorf("a refusal of the stored key: %d after %d requests; want the 401 after 1", st, len(sent))
	}

	// A nonce challenge is answered with the nonce, by the same key.
	mu.Lock()
	bound, nonce = replaced, true
	mu.Unlock()
	if st, sent, forgot := call(); st != 200 || len(sent) != 2 || forgot != 0 {
		t.Errorf("a nonce challenge: %d after %d requests, %d copies forgotten; want 200 after 2, none", st, len(sent), forgot)
	}

	// Another page clears the storage, the key with it; the server refuses
	// the token. The look-up finds no key and makes none.
	if err := keys.stored.DeleteKey(ctx, "k"); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	bound = "gone"
	mu.Unlock()
	if st, sent, _ := call(); st != http.StatusUnauthorized || len(sent) != 1 {
		t.Errorf("a refusal after the stored key was deleted: %d after %d requests; want the 401 after 1", st, len(sent))
	}
	if keys.has("k") {
		t.Error("the refused proof's look-up made a DPoP key in storage that was cleared")
	}
}

// TestTokenRequestsSignWithTheStoredKey: a token request signs with the
// stored key, not a copy another page's key change made stale, so that
// the authorization server binds the new grant to the key pages share.
func TestTokenRequestsSignWithTheStoredKey(t *testing.T) {
	as, rs := dpopServiceEnv(t)
	keys := &copyingKeys{stored: NewMemoryDPoPKeys(), copies: map[string]DPoPKey{}}
	cfg := grantConfig(rs)
	cfg.ClientID, cfg.ClientSecret = as.clientID, as.secret
	cfg.ClientCredentials = &ClientCredentials{}
	cfg.DPoPKeys = keys
	cfg.Store = NewMemoryStore()
	ctx := context.Background()
	if err := connect(ctx, rs.url(), newGrantHandler(t, cfg)); err != nil {
		t.Fatalf("connect: %v", err)
	}
	g, _ := cfg.Store.GetGrant(ctx, rs.url())
	if g == nil || g.DPoPKeyID == "" {
		t.Fatalf("stored grant %v; want a DPoP grant", g)
	}
	// Another page replaces the stored key; this one's copy is stale.
	if err := keys.stored.DeleteKey(ctx, g.DPoPKeyID); err != nil {
		t.Fatal(err)
	}
	k2, err := keys.stored.Key(ctx, g.DPoPKeyID)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Store = NewMemoryStore() // no grant: a new token request
	if err := connect(ctx, rs.url(), newGrantHandler(t, cfg)); err != nil {
		t.Fatalf("connect after the key was replaced: %v", err)
	}
	g2, _ := cfg.Store.GetGrant(ctx, rs.url())
	if g2 == nil {
		t.Fatal("no grant after the second connect")
	}
	if got, want := as.boundKey(g2.AccessToken), dpopThumbprint(k2); got != want {
		t.Errorf("the new grant is bound to %q; want the stored key %q", got, want)
	}
}
