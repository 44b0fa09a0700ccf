package oauth

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpwasm/mcpwasm/mcperr"
)

// redirectCourier plays the full-page redirect: it follows the
// authorization URL without following the redirect back and hands the
// Location to the test, delivering nothing (the page that would receive it
// is a new one).
type redirectCourier struct {
	calls atomic.Int32
	locs  chan string
}

func newRedirectCourier() *redirectCourier { return &redirectCourier{locs: make(chan string, 4)} }

func (c *redirectCourier) Open(ctx context.Context, authURL string) (<-chan error, error) {
	c.calls.Add(1)
	hc := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, authURL, nil)
	resp, err := hc.Do(req)
	if err != nil {
		return nil, err
	}
	resp.Body.Close()
	c.locs <- resp.Header.Get("Location")
	return nil, nil
}

func (c *redirectCourier) next(t *testing.T) string {
	t.Helper()
	select {
	case loc := <-c.locs:
		if loc == "" {
			t.Fatal("authorization endpoint did not redirect")
		}
		return loc
	case <-time.After(10 * time.Second):
		t.Fatal("courier never opened")
		return ""
	}
}

// startRedirectLogin starts Login on a redirect-mode handler and returns
// the callback URL the authorization server sent back. The handler is then
// abandoned (as the page is); its Login is aborted at cleanup.
func startRedirectLogin(t *testing.T, e *env, edit func(*Config)) (*Handler, string) {
	t.Helper()
	rc := newRedirectCourier()
	h := e.handler(t, func(c *Config) {
		c.Courier = rc
		c.PersistFlows = true
		if edit != nil {
			edit(c)
		}
	})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); h.Login(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	return h, rc.next(t)
}

func stateOf(t *testing.T, callbackURL string) string {
	t.Helper()
	u, err := url.Parse(callbackURL)
	if err != nil {
		t.Fatal(err)
	}
	return u.Query().Get("state")
}

func pendingConfig(e *env) PendingConfig {
	return PendingConfig{Store: e.store, HTTPClient: &http.Client{Transport: http.DefaultTransport, Timeout: 10 * time.Second}}
}

func TestRedirectModeCompletePending(t *testing.T) {
	tests := []struct {
		name       string
		authMethod string
		edit       func(e *env, c *Config)
		secret     func(issuer, clientID string) string
	}{
		{"dcr public", "none", nil, nil},
		{"dcr basic", "client_secret_basic", nil, nil},
		{"pre-registered post", "client_secret_post", func(e *env, c *Config) {
			c.ClientID, c.ClientSecret = "pre", "pre-secret"
			e.as.clientID, e.as.clientSecret = "pre", "pre-secret"
		}, func(_, id string) string {
			if id == "pre" {
				return "pre-secret"
			}
			return ""
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			e.as.authMethod = tt.authMethod
			ctx := context.Background()
			// A page that loaded before the callback was handled: its handler
			// already looked for a grant and found none.
			early := e.handler(t, func(c *Config) { c.Interactive = false })
			if err := connect(ctx, e.rs.url(), early); !errors.Is(err, ErrAuthorizationRequired) {
				t.Fatalf("early connect: %v; want ErrAuthorizationRequired", err)
			}

			h, loc := startRedirectLogin(t, e, func(c *Config) {
				if tt.edit != nil {
					tt.edit(e, c)
				}
			})
			p, _ := e.store.GetPending(ctx, stateOf(t, loc))
			if p == nil {
				t.Fatal("no pending flow stored before Courier.Open")
			}
			if p.Verifier == "" || p.TokenEndpoint == "" || p.AuthMethod != tt.authMethod || p.Issuer != e.as.issuer() ||
				p.Resource != h.Resource() || p.ResourceIndicator == "" || p.RedirectURI == "" || p.ClientID == "" || p.Expiry.IsZero() {
				t.Errorf("pending flow incomplete: %+v", *p)
			}

			// The new page: only the Store and an HTTP client.
			e.as.req.reset()
			e.rs.req.reset()
			pc := pendingConfig(e)
			pc.ClientSecret = tt.secret
			var events []Event
			pc.OnEvent = func(ev Event) { events = append(events, ev) }
			res, err := CompletePending(ctx, pc, loc)
			if err != nil {
				t.Fatalf("CompletePending: %v", err)
			}
			if res != h.Resource() {
				t.Errorf("resource = %q; want %q", res, h.Resource())
			}
			if got, tok := e.as.req.total(), e.as.req.get("/token"); got != 1 || tok != 1 {
				t.Errorf("authorization server requests = %v; want exactly one token request", e.as.req.m)
			}
			if e.rs.req.total() != 0 {
				t.Errorf("resource server requests = %v; want none", e.rs.req.m)
			}
			if len(events) != 1 || events[0].State != StateAuthorized || events[0].Resource != h.Resource() {
				t.Errorf("events = %+v; want one authorized", events)
			}
			g, _ := e.store.GetGrant(ctx, h.Resource())
			if g == nil || g.AccessToken == "" || g.RevocationEndpoint == "" {
				t.Fatalf("grant not stored whole: %v", g)
			}
			if p, _ := e.store.GetPending(ctx, stateOf(t, loc)); p != nil {
				t.Error("pending flow kept after completion")
			}

			// Replay: state_mismatch, nothing exchanged or stored.
			e.as.req.reset()
			if _, err := CompletePending(ctx, pc, loc); !errors.Is(err, ErrStateMismatch) {
				t.Errorf("replay: %v; want ErrStateMismatch", err)
			}
			if g2, _ := e.store.GetGrant(ctx, h.Resource()); e.as.req.total() != 0 || g2.AccessToken != g.AccessToken {
				t.Error("replay reached the token endpoint or changed the grant")
			}

			// Reload: a new handler with the same Store connects with zero
			// discovery, registration and courier requests.
			e.rs.req.reset()
			h2 := e.handler(t, nil)
			if err := connect(ctx, e.rs.url(), h2); err != nil {
				t.Fatalf("connect after CompletePending: %v", err)
			}
			if e.as.req.total() != 0 || e.courier.calls.Load() != 0 {
				t.Errorf("reconnect made AS requests %v and %d courier calls; want none", e.as.req.m, e.courier.calls.Load())
			}
			if got := e.rs.req.get(e.rs.prmLocation()); got != 0 {
				t.Errorf("reconnect made %d PRM requests; want 0", got)
			}
			// The early handler picks the grant up on its next 401.
			if err := connect(ctx, e.rs.url(), early); err != nil {
				t.Errorf("early handler after CompletePending: %v", err)
			}
			if early.State() != StateAuthorized {
				t.Errorf("early handler state = %q; want authorized", early.State())
			}
		})
	}
}

func TestCompletePendingExpired(t *testing.T) {
	e := newEnv(t)
	clk := &fakeClock{t: time.Now()}
	_, loc := startRedirectLogin(t, e, func(c *Config) { c.Clock = clk })
	clk.advance(11 * time.Second) // AuthTimeout is 10 s
	pc := pendingConfig(e)
	pc.Clock = clk
	e.as.req.reset()
	_, err := CompletePending(context.Background(), pc, loc)
	if !errors.Is(err, ErrStateMismatch) {
		t.Fatalf("expired: %v; want ErrStateMismatch", err)
	}
	if p, _ := e.store.GetPending(context.Background(), stateOf(t, loc)); p != nil {
		t.Error("expired pending flow kept")
	}
	if g, _ := e.store.GetGrant(context.Background(), e.rs.url()); g != nil || e.as.req.get("/token") != 0 {
		t.Error("expired flow exchanged its code")
	}
}

func TestCompletePendingDeclined(t *testing.T) {
	e := newEnv(t)
	e.as.deny, e.as.denyDesc = "access_denied", "The user said no"
	h, loc := startRedirectLogin(t, e, nil)
	ctx := context.Background()
	res, err := CompletePending(ctx, pendingConfig(e), loc)
	if !errors.Is(err, ErrDeclined) || mcperr.CodeOf(err, "") != mcperr.Declined {
		t.Fatalf("CompletePending: %v; want ErrDeclined", err)
	}
	var se *ServerError
	if !errors.As(err, &se) || se.Description != "The user said no" {
		t.Errorf("server description = %+v; want %q", se, "The user said no")
	}
	if res != h.Resource() {
		t.Errorf("resource = %q; want %q (to tell that client)", res, h.Resource())
	}
	if p, _ := e.store.GetPending(ctx, stateOf(t, loc)); p != nil {
		t.Error("pending flow kept after decline")
	}
	if g, _ := e.store.GetGrant(ctx, res); g != nil {
		t.Error("grant stored after decline")
	}

	// The new page's handler for that resource is latched: no new
	// redirect (no courier call) until Login.
	h2 := e.handler(t, nil)
	h2.Decline(err)
	if h2.State() != StateDeclined {
		t.Errorf("state = %q; want declined", h2.State())
	}
	if err := connect(ctx, e.rs.url(), h2); !errors.Is(err, ErrDeclined) {
		t.Errorf("connect after Decline: %v; want ErrDeclined", err)
	}
	if got := e.courier.calls.Load(); got != 0 {
		t.Errorf("courier calls = %d; want 0", got)
	}
	e.as.deny = ""
	if err := h2.Login(ctx); err != nil {
		t.Fatalf("Login clears the latch: %v", err)
	}
}

func TestCompletePendingIssMismatch(t *testing.T) {
	e := newEnv(t)
	e.as.sendIss = "https://evil.example"
	h, loc := startRedirectLogin(t, e, nil)
	ctx := context.Background()
	e.as.req.reset()
	_, err := CompletePending(ctx, pendingConfig(e), loc)
	if !errors.Is(err, ErrStateMismatch) || !strings.Contains(err.Error(), "RFC 9207") {
		t.Fatalf("CompletePending: %v; want an RFC 9207 state_mismatch", err)
	}
	if g, _ := e.store.GetGrant(ctx, h.Resource()); g != nil || e.as.req.get("/token") != 0 {
		t.Error("code exchanged or grant stored despite the iss mismatch")
	}
	if p, _ := e.store.GetPending(ctx, stateOf(t, loc)); p != nil {
		t.Error("pending flow kept")
	}
}

func TestCompletePendingUnknownAndMalformed(t *testing.T) {
	e := newEnv(t)
	pc := pendingConfig(e)
	if _, err := CompletePending(context.Background(), pc, "http://127.0.0.1:9/callback?code=x&state=unknownunknownunknown"); !errors.Is(err, ErrStateMismatch) {
		t.Errorf("unknown state: %v; want ErrStateMismatch", err)
	}
	if _, err := CompletePending(context.Background(), pc, "http://127.0.0.1:9/callback?code=x"); !errors.Is(err, ErrStateMismatch) {
		t.Errorf("no state: %v; want ErrStateMismatch", err)
	}
	if _, err := CompletePending(context.Background(), PendingConfig{}, "http://x/?code=a&state=b"); mcperr.CodeOf(err, "") != mcperr.InvalidArgument {
		t.Errorf("empty config: %v; want invalid_argument", err)
	}
}

// A callback for a flow alive in this page goes to it in memory; the
// pending entry is consumed too, so a replay finds nothing anywhere.
func TestHandleCallbackLiveThenReplay(t *testing.T) {
	e := newEnv(t)
	rc := newRedirectCourier()
	h := e.handler(t, func(c *Config) { c.Courier = rc; c.PersistFlows = true })
	done := make(chan error, 1)
	go func() { done <- h.Login(context.Background()) }()
	loc := rc.next(t)
	ctx := context.Background()
	res, live, err := e.reg.HandleCallback(ctx, pendingConfig(e), loc)
	if err != nil || !live || res != h.Resource() {
		t.Fatalf("HandleCallback = %q, %v, %v; want the live flow of %q", res, live, err, h.Resource())
	}
	if err := <-done; err != nil {
		t.Fatalf("Login: %v", err)
	}
	if p, _ := e.store.GetPending(ctx, stateOf(t, loc)); p != nil {
		t.Error("pending flow kept after live delivery")
	}
	e.as.req.reset()
	if _, live, err := e.reg.HandleCallback(ctx, pendingConfig(e), loc); live || !errors.Is(err, ErrStateMismatch) {
		t.Errorf("replay: live %v, %v; want ErrStateMismatch", live, err)
	}
	if e.as.req.total() != 0 {
		t.Error("replay reached the authorization server")
	}
}

func TestPersistedFlowDeletedOnAbort(t *testing.T) {
	e := newEnv(t)
	rc := newRedirectCourier()
	h := e.handler(t, func(c *Config) { c.Courier = rc; c.PersistFlows = true })
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- h.Login(ctx) }()
	loc := rc.next(t)
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("Login: %v; want context.Canceled", err)
	}
	if p, _ := e.store.GetPending(context.Background(), stateOf(t, loc)); p != nil {
		t.Error("aborted flow left its pending entry")
	}
	if _, err := CompletePending(context.Background(), pendingConfig(e), loc); !errors.Is(err, ErrStateMismatch) {
		t.Errorf("CompletePending after abort: %v; want ErrStateMismatch", err)
	}
}
