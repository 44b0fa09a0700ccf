package mcpclient

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpwasm/mcpwasm/demo/authserver"
	"github.com/mcpwasm/mcpwasm/devkit/authtest"
	"github.com/mcpwasm/mcpwasm/oauth"
)

// stepClock is a clock that moves only when told, shared by the
// authorization server and the client's sign-in.
type stepClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *stepClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *stepClock) advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// TestCloseNeverRefreshes: a client closed after its access token expired
// (its page reloads: the runtime closes the page's clients) ends its
// session with the token it holds and makes no refresh. A refresh there
// could be cut short by the page's end after the server rotated the
// refresh token, and the next page would present the spent one: the
// authorization server (which detects reuse) would revoke the grant and
// the user would have to sign in again. The next client, from the stored
// grant, refreshes once and works.
func TestCloseNeverRefreshes(t *testing.T) {
	clk := &stepClock{t: time.Now()}
	var (
		mu      sync.Mutex
		deletes []string // the token each DELETE carried
	)
	env := authtest.StartWith(t, authtest.Options{Now: clk.Now, Wrap: func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method == http.MethodDelete {
				tok, _ := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
				mu.Lock()
				deletes = append(deletes, tok)
				mu.Unlock()
			}
			h.ServeHTTP(w, r)
		})
	}})
	store := oauth.NewMemoryStore()
	handler := func() *oauth.Handler {
		h, err := oauth.New(oauth.Config{
			ResourceURL: env.URL, HTTPClient: &http.Client{Transport: http.DefaultTransport}, RedirectURL: authtest.RedirectURL,
			ClientName: "authtest", Registry: env.Registry, Courier: env.Courier(), Store: store, Clock: clk,
		})
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	ctx := ctxT(t)
	h := handler()
	c := newClient(t, env.URL, Options{Auth: h, Transport: TransportStreamable})
	if err := c.Authorize(ctx, ConnectOptions{}); err != nil {
		t.Fatalf("Authorize: %v", err)
	}
	if _, err := c.ListTools(ctx); err != nil {
		t.Fatalf("ListTools: %v", err)
	}
	first, _ := store.GetGrant(ctx, h.Resource())
	if first == nil || first.RefreshToken == "" {
		t.Fatalf("grant %+v; want one with a refresh token", first)
	}

	clk.advance(2 * time.Hour)
	if err := c.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if n := env.AS.Count(authserver.EventTokenRefresh); n != 0 {
		t.Errorf("%d refreshes as the client closed; want none", n)
	}
	mu.Lock()
	seen := append([]string(nil), deletes...)
	mu.Unlock()
	if len(seen) != 1 || seen[0] != first.AccessToken {
		t.Errorf("the session's DELETE carried a token other than the held one (%d DELETEs); want one, with the held token", len(seen))
	}
	if g, _ := store.GetGrant(ctx, h.Resource()); g == nil || g.RefreshToken != first.RefreshToken {
		t.Fatal("the stored grant changed as the client closed; want it kept for the next client")
	}

	next := newClient(t, env.URL, Options{Auth: handler(), Transport: TransportStreamable})
	cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := next.Connect(cctx, ConnectOptions{}); err != nil {
		t.Fatalf("the next client's Connect from the stored grant: %v", err)
	}
	if _, err := next.ListTools(cctx); err != nil {
		t.Fatalf("the next client's ListTools: %v", err)
	}
	if n, reuse := env.AS.Count(authserver.EventTokenRefresh), env.AS.Count(authserver.EventRefreshReuse); n != 1 || reuse != 0 {
		t.Errorf("refreshes %d, reuses %d for the next client; want 1 refresh, no reuse", n, reuse)
	}
}
