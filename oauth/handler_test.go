package oauth

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpwasm/mcpwasm/mcperr"
)

func TestColdLoginThenWarmReconnect(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	h := e.handler(t, nil)
	if err := connect(ctx, e.rs.url(), h); err != nil {
		t.Fatalf("cold connect: %v", err)
	}
	cold := map[string]int{
		"as total":     e.as.req.total(),
		"as metadata":  e.as.req.get("/.well-known/oauth-authorization-server"),
		"as register":  e.as.req.get("/register"),
		"as authorize": e.as.req.get("/authorize"),
		"as token":     e.as.req.get("/token"),
		"rs prm":       e.rs.req.get("/.well-known/oauth-protected-resource/mcp"),
		"rs mcp":       e.rs.req.get("/mcp"),
	}
	t.Logf("cold login requests: %v", cold)
	for k, want := range map[string]int{"as metadata": 1, "as register": 1, "as authorize": 1, "as token": 1, "rs prm": 1} {
		if cold[k] != want {
			t.Errorf("cold %s = %d; want %d", k, cold[k], want)
		}
	}
	if got := e.courier.calls.Load(); got != 1 {
		t.Errorf("courier calls = %d; want 1", got)
	}
	g, _ := e.store.GetGrant(ctx, h.Resource())
	if g == nil || g.AccessToken == "" || g.RefreshToken == "" {
		t.Fatalf("grant not stored: %+v", g != nil)
	}

	// Warm: a new handler (page reload) over the same store.
	e.as.req.reset()
	e.rs.req.reset()
	h2 := e.handler(t, nil)
	if err := connect(ctx, e.rs.url(), h2); err != nil {
		t.Fatalf("warm connect: %v", err)
	}
	t.Logf("warm reconnect requests: authorization server %d, resource server %v", e.as.req.total(), e.rs.req.m)
	if got := e.as.req.total(); got != 0 {
		t.Errorf("warm reconnect made %d authorization server requests; want 0", got)
	}
	if got := e.rs.req.get("/.well-known/oauth-protected-resource/mcp"); got != 0 {
		t.Errorf("warm reconnect made %d PRM requests; want 0", got)
	}
	if got := e.courier.calls.Load(); got != 1 {
		t.Errorf("courier calls = %d; want still 1", got)
	}

	// Grant lost (e.g. logout elsewhere): metadata and registration are cached.
	if err := h2.Logout(ctx); err != nil {
		t.Fatalf("Logout: %v", err)
	}
	if got := e.as.req.get("/revoke"); got != 2 {
		t.Errorf("revocation requests = %d; want 2", got)
	}
	e.as.req.reset()
	e.rs.req.reset()
	h3 := e.handler(t, nil)
	if err := connect(ctx, e.rs.url(), h3); err != nil {
		t.Fatalf("relogin: %v", err)
	}
	if d, r := e.as.req.get("/.well-known/oauth-authorization-server"), e.as.req.get("/register"); d+r != 0 {
		t.Errorf("relogin made %d metadata and %d registration requests; want 0", d, r)
	}
	if got := e.rs.req.get("/.well-known/oauth-protected-resource/mcp"); got != 0 {
		t.Errorf("relogin made %d PRM requests; want 0", got)
	}
}

func TestNonInteractiveThenLogin(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	h := e.handler(t, func(c *Config) { c.Interactive = false })
	err := connect(ctx, e.rs.url(), h)
	if !errors.Is(err, ErrAuthorizationRequired) {
		t.Fatalf("connect: got %v; want ErrAuthorizationRequired through go-sdk", err)
	}
	if got := mcperr.CodeOf(err, ""); got != mcperr.AuthRequired {
		t.Errorf("CodeOf = %q; want auth_required", got)
	}
	if e.courier.calls.Load() != 0 {
		t.Fatal("non-interactive handler opened the courier")
	}
	if h.State() != StateNeedsAuth {
		t.Errorf("state = %q; want needs_auth", h.State())
	}
	if err := h.Login(ctx); err != nil {
		t.Fatalf("Login: %v", err)
	}
	if err := connect(ctx, e.rs.url(), h); err != nil {
		t.Fatalf("connect after Login: %v", err)
	}
	if h.State() != StateAuthorized {
		t.Errorf("state = %q; want authorized", h.State())
	}
}

func TestDeclineLatch(t *testing.T) {
	e := newEnv(t)
	e.as.deny, e.as.denyDesc = "access_denied", "User said no\x1b[31m"
	ctx := context.Background()
	h := e.handler(t, nil)
	err := connect(ctx, e.rs.url(), h)
	if !errors.Is(err, ErrDeclined) {
		t.Fatalf("connect: got %v; want ErrDeclined", err)
	}
	var se *ServerError
	if !errors.As(err, &se) || se.Description != "User said no[31m" {
		t.Errorf("server description = %+v; want sanitised %q", se, "User said no[31m")
	}
	for i := 0; i < 3; i++ {
		if err := connect(ctx, e.rs.url(), h); !errors.Is(err, ErrDeclined) {
			t.Fatalf("reconnect: got %v; want ErrDeclined", err)
		}
	}
	if got := e.courier.calls.Load(); got != 1 {
		t.Errorf("courier calls = %d; want 1 (latched)", got)
	}
	// An explicit Login starts a new attempt.
	e.as.deny = ""
	if err := h.Login(ctx); err != nil {
		t.Fatalf("Login: %v", err)
	}
	if err := connect(ctx, e.rs.url(), h); err != nil {
		t.Fatalf("connect after Login: %v", err)
	}
}

// TestClosedWindowDeclines: a courier that reports its page dismissed
// (the person closed the sign-in window) ends the flow declined at once,
// with every waiter, and latches like a Deny.
func TestClosedWindowDeclines(t *testing.T) {
	e := newEnv(t)
	e.courier.block = make(chan struct{}) // the person never finishes
	e.courier.dismiss = make(chan error)
	ctx := context.Background()
	h := e.handler(t, nil)
	time.AfterFunc(50*time.Millisecond, func() { close(e.courier.dismiss) })
	err := h.Login(ctx)
	if !errors.Is(err, ErrDeclined) || !strings.Contains(err.Error(), "window was closed") {
		t.Fatalf("Login: %v; want declined, the window was closed", err)
	}
	if err := connect(ctx, e.rs.url(), h); !errors.Is(err, ErrDeclined) {
		t.Errorf("connect after the close: %v; want the decline latched", err)
	}
	if got := e.courier.calls.Load(); got != 1 {
		t.Errorf("courier calls = %d; want 1", got)
	}
}

// TestUnhandledRedirectFails: a courier whose page reached the redirect
// URI without a callback receiver ends the flow at once with that error
// (redirect_unhandled), as a failure, not a latched decline: the next
// Login asks the courier again.
func TestUnhandledRedirectFails(t *testing.T) {
	e := newEnv(t)
	e.courier.block = make(chan struct{}) // no result ever arrives
	e.courier.dismiss = make(chan error, 1)
	ctx := context.Background()
	h := e.handler(t, func(c *Config) { c.AuthTimeout = time.Minute })
	e.courier.dismiss <- &mcperr.UnhandledRedirect{URL: "https://app.example/assets/oauth/callback.html"}
	start := time.Now()
	err := h.Login(ctx)
	if mcperr.CodeOf(err, "") != mcperr.RedirectUnhandled || time.Since(start) > 10*time.Second {
		t.Fatalf("Login: %v after %v; want redirect_unhandled at once", err, time.Since(start))
	}
	if h.State() != StateFailed {
		t.Errorf("state = %q; want failed", h.State())
	}
	msg, _ := mcperr.Present(mcperr.AtServer(err, "mcp.example.com"))
	if want := "The sign-in to the server at mcp.example.com came back to https://app.example/assets/oauth/callback.html, but no page there finished it. Import mcpwasm/callback on that page, or pass a redirectUri whose page does."; msg != want {
		t.Errorf("message = %q; want %q", msg, want)
	}
	e.courier.dismiss = nil
	close(e.courier.block)
	e.courier.block = nil
	if err := h.Login(ctx); err != nil {
		t.Fatalf("a second Login: %v; want a new sign-in that succeeds", err)
	}
	if got := e.courier.calls.Load(); got != 2 {
		t.Errorf("courier calls = %d; want 2", got)
	}
}

func TestConcurrent401SingleFlight(t *testing.T) {
	for _, decline := range []bool{false, true} {
		t.Run(map[bool]string{false: "accept", true: "decline"}[decline], func(t *testing.T) {
			e := newEnv(t)
			if decline {
				e.as.deny = "access_denied"
			}
			e.courier.block = make(chan struct{})
			h := e.handler(t, nil)
			ctx := context.Background()
			errs := make([]error, 16)
			var wg sync.WaitGroup
			for i := range errs {
				wg.Add(1)
				go func() {
					defer wg.Done()
					req, resp := unauthorized401(e.rs.url(), "")
					errs[i] = h.Authorize(ctx, req, resp)
				}()
			}
			time.Sleep(100 * time.Millisecond)
			close(e.courier.block)
			wg.Wait()
			if got := e.courier.calls.Load(); got != 1 {
				t.Errorf("courier calls = %d; want 1", got)
			}
			for i, err := range errs {
				if decline != errors.Is(err, ErrDeclined) || (!decline && err != nil) {
					t.Errorf("request %d: %v", i, err)
				}
			}
			if decline {
				req, resp := unauthorized401(e.rs.url(), "")
				if err := h.Authorize(ctx, req, resp); !errors.Is(err, ErrDeclined) {
					t.Errorf("after decline: %v; want ErrDeclined", err)
				}
				if got := e.courier.calls.Load(); got != 1 {
					t.Errorf("courier calls after decline = %d; want 1", got)
				}
			}
		})
	}
}

func TestAbortReleasesWaiters(t *testing.T) {
	e := newEnv(t)
	e.courier.block = make(chan struct{}) // never delivers
	h := e.handler(t, nil)
	ctx, cancel := context.WithCancel(context.Background())
	started := make(chan error, 1)
	go func() {
		req, resp := unauthorized401(e.rs.url(), "")
		started <- h.Authorize(ctx, req, resp)
	}()
	for e.courier.calls.Load() == 0 {
		time.Sleep(time.Millisecond)
	}
	waiter := make(chan error, 1)
	go func() {
		req, resp := unauthorized401(e.rs.url(), "")
		waiter <- h.Authorize(context.Background(), req, resp)
	}()
	time.Sleep(20 * time.Millisecond)
	cancel()
	if err := <-started; !errors.Is(err, context.Canceled) {
		t.Errorf("starter: %v; want context.Canceled", err)
	}
	if err := <-waiter; !errors.Is(err, ErrDeclined) {
		t.Errorf("waiter: %v; want ErrDeclined", err)
	}
	if e.reg.Pending() {
		t.Error("registry still has a pending flow after abort")
	}
	// The next explicit attempt is not refused as busy.
	e.courier.mu.Lock()
	e.courier.block = nil
	e.courier.mu.Unlock()
	if err := h.Login(context.Background()); err != nil {
		t.Fatalf("Login after abort: %v", err)
	}
}

func TestConcurrentRefreshSingleFlight(t *testing.T) {
	e := newEnv(t)
	e.as.rotate = true
	e.as.refreshDelay = 20 * time.Millisecond
	ctx := context.Background()
	clk := &fakeClock{t: time.Now()}
	h := e.handler(t, func(c *Config) { c.Clock = clk })
	if err := h.Login(ctx); err != nil {
		t.Fatal(err)
	}
	old, _ := e.store.GetGrant(ctx, h.Resource())
	clk.advance(2 * time.Hour)
	e.as.req.reset()
	var wg sync.WaitGroup
	toks := make([]string, 16)
	for i := range toks {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ts, err := h.TokenSource(ctx)
			if err != nil {
				t.Error(err)
				return
			}
			tok, err := ts.Token()
			if err != nil {
				t.Error(err)
				return
			}
			toks[i] = tok.AccessToken
		}()
	}
	wg.Wait()
	if got := e.as.req.get("/token"); got != 1 {
		t.Errorf("token requests = %d; want 1", got)
	}
	for _, tok := range toks {
		if tok == old.AccessToken || tok != toks[0] {
			t.Errorf("tokens = %q; want one new token", toks)
			break
		}
	}
	g, _ := e.store.GetGrant(ctx, h.Resource())
	if g.RefreshToken == old.RefreshToken {
		t.Error("rotated refresh token not stored")
	}
	var refreshed int
	for _, ev := range e.events.all() {
		if ev.Kind == EventTokenRefreshed {
			refreshed++
		}
	}
	if refreshed != 1 {
		t.Errorf("token_refreshed events = %d; want 1", refreshed)
	}
}

func TestRefreshKeepsOldRefreshTokenAndInvalidGrant(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	clk := &fakeClock{t: time.Now()}
	h := e.handler(t, func(c *Config) { c.Clock = clk; c.Interactive = false })
	if err := h.Login(ctx); err != nil {
		t.Fatal(err)
	}
	old, _ := e.store.GetGrant(ctx, h.Resource())
	clk.advance(2 * time.Hour)
	ts, _ := h.TokenSource(ctx)
	tok, err := ts.Token()
	if err != nil || tok.AccessToken == old.AccessToken {
		t.Fatalf("refresh: %v", err)
	}
	g, _ := e.store.GetGrant(ctx, h.Resource())
	if g.RefreshToken != old.RefreshToken {
		t.Error("refresh without a new refresh_token lost the old one")
	}
	// invalid_grant drops the grant and reports auth_required.
	e.as.rejectRT = true
	clk.advance(2 * time.Hour)
	_, err = ts.Token()
	if !errors.Is(err, ErrAuthorizationRequired) {
		t.Fatalf("Token after invalid_grant: %v; want ErrAuthorizationRequired", err)
	}
	if g, _ := e.store.GetGrant(ctx, h.Resource()); g != nil {
		t.Error("grant kept after invalid_grant")
	}
	if err := connect(ctx, e.rs.url(), h); !errors.Is(err, ErrAuthorizationRequired) {
		t.Errorf("connect: %v; want ErrAuthorizationRequired", err)
	}
}

func TestMissingExpiresInIsUnknown(t *testing.T) {
	e := newEnv(t)
	e.as.tokenResp = func(m map[string]any) { delete(m, "expires_in") }
	ctx := context.Background()
	h := e.handler(t, nil)
	if err := h.Login(ctx); err != nil {
		t.Fatal(err)
	}
	g, _ := e.store.GetGrant(ctx, h.Resource())
	if !g.Expiry.IsZero() {
		t.Errorf("expiry = %v; want zero (unknown)", g.Expiry)
	}
	e.as.req.reset()
	ts, _ := h.TokenSource(ctx)
	if _, err := ts.Token(); err != nil || e.as.req.get("/token") != 0 {
		t.Errorf("token with unknown expiry: err %v, %d refreshes", err, e.as.req.get("/token"))
	}
}

// TestFreshTokenRejectedNoLoop: an interactive handler whose fresh token
// the server refuses refreshes once (the server may judge expiry by
// another clock), then, the refreshed token refused too, signs in once
// more; a refusal of that fresh token ends with auth_required and no
// new flow.
func TestFreshTokenRejectedNoLoop(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	h := e.handler(t, nil)
	if err := h.Login(ctx); err != nil {
		t.Fatal(err)
	}
	for i, want := range []string{"refresh", "flow", "error", "error"} {
		g, _ := h.currentGrant(ctx)
		req, resp := unauthorized401(e.rs.url(), "")
		req.Header.Set("Authorization", "Bearer "+g.AccessToken)
		err := h.Authorize(ctx, req, resp)
		if want != "error" && err != nil {
			t.Fatalf("401 %d: %v; want a %s and the request sent again", i, err, want)
		}
		if want == "error" && !errors.Is(err, ErrAuthorizationRequired) {
			t.Fatalf("401 %d: %v; want auth_required without a new flow", i, err)
		}
	}
	if got := e.courier.calls.Load(); got != 2 {
		t.Errorf("courier calls = %d; want 2", got)
	}
	if got := e.as.req.get("/token"); got != 3 {
		t.Errorf("token requests = %d; want 3 (sign-in, one refresh, sign-in)", got)
	}
}

// TestRefusedTokenKeepsTheGrantWhileTheServerCannotRefresh: a refused
// token whose refresh finds the authorization server busy, failing or
// unreachable fails the request with that error and keeps the grant, so
// the next refusal refreshes it without a sign-in; a refresh the server
// refuses with an OAuth error drops the grant.
func TestRefusedTokenKeepsTheGrantWhileTheServerCannotRefresh(t *testing.T) {
	noBusyWaits(t)
	for _, tt := range []struct {
		name string
		busy []busyAnswerOf // the refresh's answers; nil: the server is gone
		code mcperr.Code
		kept bool
	}{
		{"busy", slices.Repeat([]busyAnswerOf{{503, ""}}, 10), mcperr.HTTP, true},
		{"failing", []busyAnswerOf{{500, ""}}, mcperr.TokenFailed, true},
		{"unreachable", nil, mcperr.TokenFailed, true},
		{"refusing", []busyAnswerOf{{400, ""}}, mcperr.AuthRequired, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			ctx := ctxOf(t)
			clk := &fakeClock{t: time.Now()}
			h := e.handler(t, func(c *Config) { c.Clock = clk; c.Interactive = false })
			if err := h.Login(ctx); err != nil {
				t.Fatal(err)
			}
			old, _ := e.store.GetGrant(ctx, h.Resource())
			clk.advance(2 * time.Hour) // expired: no longer a fresh token
			refused := func() error {
				req, resp := unauthorized401(e.rs.url(), "")
				req.Header.Set("Authorization", "Bearer "+old.AccessToken)
				return h.Authorize(ctx, req, resp)
			}
			e.as.mu.Lock()
			e.as.busy = tt.busy
			e.as.mu.Unlock()
			if tt.busy == nil {
				e.as.srv.Close()
			}
			err := refused()
			if got := mcperr.CodeOf(err, ""); got != tt.code {
				t.Fatalf("a 401 whose refresh met the %s server: %v (code %q); want code %q", tt.name, err, got, tt.code)
			}
			g, _ := e.store.GetGrant(ctx, h.Resource())
			if kept := g != nil && g.RefreshToken == old.RefreshToken; kept != tt.kept {
				t.Fatalf("grant kept = %v; want %v", kept, tt.kept)
			}
			if !tt.kept || tt.busy == nil {
				return
			}
			e.as.mu.Lock()
			e.as.busy = nil
			e.as.mu.Unlock()
			if err := refused(); err != nil {
				t.Fatalf("the next 401, the server answering again: %v; want a refresh and the request sent again", err)
			}
			if g, _ := e.store.GetGrant(ctx, h.Resource()); g == nil || g.AccessToken == old.AccessToken {
				t.Errorf("after the server answered again: grant %+v; want a refreshed token", g)
			}
			if n := e.courier.calls.Load(); n != 1 {
				t.Errorf("sign-in pages shown = %d; want only the first sign-in's", n)
			}
		})
	}
}

func TestStepUp(t *testing.T) {
	e := newEnv(t)
	e.rs.scopes = []string{"read"}
	ctx := context.Background()
	h := e.handler(t, nil)
	if err := connect(ctx, e.rs.url(), h); err != nil {
		t.Fatal(err)
	}
	// The server now wants write too.
	e.rs.scopes = []string{"read", "write"}
	if err := connect(ctx, e.rs.url(), h); err != nil {
		t.Fatalf("step-up connect: %v", err)
	}
	g, _ := e.store.GetGrant(ctx, h.Resource())
	if strings.Join(g.Scopes, " ") != "read write" {
		t.Errorf("scopes = %q; want union \"read write\"", g.Scopes)
	}
	// A server that is never satisfied: at most 3 step-up flows between
	// sign-ins (the read→read write one above counts), then
	// insufficient_scope.
	e.as.scopeGrant = func(string) string { return "read" }
	e.courier.calls.Store(0)
	var err error
	for i := 0; i < 6 && !errors.Is(err, ErrInsufficientScope); i++ {
		req, _ := http.NewRequest(http.MethodPost, e.rs.url(), nil)
		resp := &http.Response{StatusCode: 403, Header: http.Header{"Www-Authenticate": {`Bearer error="insufficient_scope", scope="admin"`}}, Body: http.NoBody}
		err = h.Authorize(ctx, req, resp)
	}
	if !errors.Is(err, ErrInsufficientScope) {
		t.Fatalf("got %v; want ErrInsufficientScope", err)
	}
	if got := e.courier.calls.Load(); got != 2 {
		t.Errorf("step-up flows = %d; want 2 more (3 in all)", got)
	}
}

// TestStepUpBeyondConfiguredScopes: the scopes a page configures are
// those of the first sign-in; a 403 that names more still gets them
// (Config.Scopes does not cap a step-up).
func TestStepUpBeyondConfiguredScopes(t *testing.T) {
	e := newEnv(t)
	e.rs.scopes = []string{"read"}
	ctx := context.Background()
	h := e.handler(t, func(c *Config) { c.Scopes = []string{"read"} })
	if err := connect(ctx, e.rs.url(), h); err != nil {
		t.Fatal(err)
	}
	e.rs.scopes = []string{"read", "write"}
	if err := connect(ctx, e.rs.url(), h); err != nil {
		t.Fatalf("step-up connect with Config.Scopes set: %v", err)
	}
	g, _ := e.store.GetGrant(ctx, h.Resource())
	if strings.Join(g.Scopes, " ") != "read write" {
		t.Errorf("scopes = %q; want \"read write\" (the configured and the challenge's)", g.Scopes)
	}
}

// TestLoginAfterABlockedStepUpAsksForItsScopes: when a 403's step-up
// could not run (no window without a click), the sign-in the person then
// starts asks for the scopes that 403 named, beside Config.Scopes.
func TestLoginAfterABlockedStepUpAsksForItsScopes(t *testing.T) {
	e := newEnv(t)
	e.rs.scopes = []string{"read"}
	ctx := context.Background()
	h := e.handler(t, func(c *Config) { c.Scopes = []string{"read"} })
	if err := connect(ctx, e.rs.url(), h); err != nil {
		t.Fatal(err)
	}
	h.cfg.Interactive = false // the browser opens no window without a click
	req, _ := http.NewRequest(http.MethodPost, e.rs.url(), nil)
	resp := &http.Response{StatusCode: 403, Header: http.Header{"Www-Authenticate": {`Bearer error="insufficient_scope", scope="read write"`}}, Body: http.NoBody}
	if err := h.Authorize(ctx, req, resp); !errors.Is(err, ErrAuthorizationRequired) {
		t.Fatalf("a step-up without a window: %v; want ErrAuthorizationRequired", err)
	}
	if err := h.Login(ctx); err != nil {
		t.Fatalf("Login: %v", err)
	}
	if got := e.as.lastAuthQuery.Get("scope"); got != "read write" {
		t.Errorf("the sign-in after the 403 asked for %q; want \"read write\"", got)
	}
}

// TestGrowingScopesEndStepUp: a server whose every 403 asks for one more
// new scope gets at most 3 step-up sign-ins until the next Login.
func TestGrowingScopesEndStepUp(t *testing.T) {
	e := newEnv(t)
	e.rs.scopes = []string{"s0"}
	ctx := context.Background()
	h := e.handler(t, nil)
	if err := connect(ctx, e.rs.url(), h); err != nil {
		t.Fatal(err)
	}
	e.courier.calls.Store(0)
	var err error
	for i := 1; i <= 10 && !errors.Is(err, ErrInsufficientScope); i++ {
		req, _ := http.NewRequest(http.MethodPost, e.rs.url(), nil)
		resp := &http.Response{StatusCode: 403, Header: http.Header{"Www-Authenticate": {fmt.Sprintf(`Bearer error="insufficient_scope", scope="s%d"`, i)}}, Body: http.NoBody}
		err = h.Authorize(ctx, req, resp)
	}
	if !errors.Is(err, ErrInsufficientScope) {
		t.Fatalf("got %v; want ErrInsufficientScope", err)
	}
	if got := e.courier.calls.Load(); got != 3 {
		t.Errorf("step-up flows = %d; want 3", got)
	}
	// The user's next sign-in starts afresh.
	if err := h.Login(ctx); err != nil {
		t.Fatalf("Login after the cap: %v", err)
	}
}

type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

func TestSharedRegistryTwoServers(t *testing.T) {
	e1, e2 := newEnv(t), newEnv(t)
	e2.reg, e2.courier = e1.reg, e1.courier // one callback page for both
	ctx := context.Background()
	h1, h2 := e1.handler(t, nil), e2.handler(t, nil)
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for i, h := range []*Handler{h1, h2} {
		wg.Add(1)
		go func() { defer wg.Done(); errs[i] = h.Login(ctx) }()
	}
	wg.Wait()
	if errs[0] != nil || errs[1] != nil {
		t.Fatalf("Login: %v", errs)
	}
	if e1.as.req.get("/token") != 1 || e2.as.req.get("/token") != 1 {
		t.Error("each flow should reach its own token endpoint exactly once")
	}
}

type failingStore struct{ *MemoryStore }

func (failingStore) PutGrant(context.Context, *Grant) error { return errors.New("quota exceeded") }

func TestStoreFailureReported(t *testing.T) {
	e := newEnv(t)
	h := e.handler(t, func(c *Config) { c.Store = failingStore{NewMemoryStore()} })
	err := h.Login(context.Background())
	if !errors.Is(err, ErrStorage) || mcperr.CodeOf(err, "") != mcperr.Storage {
		t.Fatalf("Login with failing store: %v; want storage error", err)
	}
	if h.State() == StateAuthorized {
		t.Error("authorized although the grant was not stored")
	}
}

// TestForgottenClientRegistersAgain: when the server no longer knows the
// cached dynamically registered client (invalid_client at the token
// endpoint), the cache entry goes, and the next sign-in registers anew
// instead of failing the same way forever.
func TestForgottenClientRegistersAgain(t *testing.T) {
	e := newEnv(t)
	e.as.knownOnly = true
	ctx := context.Background()
	h := e.handler(t, nil)
	if err := connect(ctx, e.rs.url(), h); err != nil {
		t.Fatalf("first login: %v", err)
	}
	iss := e.as.issuer()
	reg, _ := e.store.GetClient(ctx, iss, h.cfg.RedirectURL)
	if reg == nil {
		t.Fatal("no cached registration after the first login")
	}
	// The server forgets the client; the grant is gone too (signed out).
	e.as.mu.Lock()
	delete(e.as.clients, reg.ClientID)
	e.as.mu.Unlock()
	if err := e.store.DeleteGrant(ctx, h.Resource()); err != nil {
		t.Fatal(err)
	}

	h2 := e.handler(t, nil)
	err := h2.Login(ctx)
	if mcperr.CodeOf(err, "") != mcperr.TokenFailed {
		t.Fatalf("login with a forgotten client = %v; want token_failed", err)
	}
	if reg, _ := e.store.GetClient(ctx, iss, h.cfg.RedirectURL); reg != nil {
		t.Fatal("the rejected registration is still cached")
	}
	registered := e.as.req.get("/register")
	if err := e.handler(t, nil).Login(ctx); err != nil {
		t.Fatalf("the next login: %v", err)
	}
	if got := e.as.req.get("/register"); got != registered+1 {
		t.Errorf("registrations = %d; want one more (%d)", got, registered+1)
	}
}

// failingPuts is a Store whose PutGrant fails once armed.
type failingPuts struct {
	Store
	armed atomic.Bool
}

func (f *failingPuts) PutGrant(ctx context.Context, g *Grant) error {
	if f.armed.Load() {
		return errors.New("quota exceeded")
	}
	return f.Store.PutGrant(ctx, g)
}

// TestRefreshedGrantThatCannotBeStoredIsReported: the new token is used and
// the failed write is reported as an event, never silently dropped.
func TestRefreshedGrantThatCannotBeStoredIsReported(t *testing.T) {
	e := newEnv(t)
	e.as.rotate = true
	ctx := context.Background()
	clk := &fakeClock{t: time.Now()}
	store := &failingPuts{Store: e.store}
	h := e.handler(t, func(c *Config) { c.Clock = clk; c.Store = store })
	if err := h.Login(ctx); err != nil {
		t.Fatal(err)
	}
	old, _ := e.store.GetGrant(ctx, h.Resource())
	store.armed.Store(true)
	clk.advance(2 * time.Hour)
	ts, err := h.TokenSource(ctx)
	if err != nil {
		t.Fatal(err)
	}
	tok, err := ts.Token()
	if err != nil {
		t.Fatalf("Token after a refresh that could not be stored: %v", err)
	}
	if tok.AccessToken == old.AccessToken {
		t.Error("the stale access token was used; want the refreshed one")
	}
	var reported error
	for _, ev := range e.events.all() {
		if ev.Kind == EventStoreFailed {
			reported = ev.Err
		}
	}
	if mcperr.CodeOf(reported, "") != mcperr.Storage || !strings.Contains(reported.Error(), "quota exceeded") {
		t.Errorf("store_failed event error = %v; want a storage error naming the cause", reported)
	}
}

// TestAuthorizationServerMigration (SEP-2352): the MCP server moves to
// another authorization server. The 401 to the old grant's token re-reads
// the protected-resource metadata (not the cached discovery), the client
// registers at the new issuer, and the old issuer's client ID never
// reaches the new server; each issuer keeps its own registration.
func TestAuthorizationServerMigration(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	h := e.handler(t, nil)
	if err := connect(ctx, e.rs.url(), h); err != nil {
		t.Fatalf("first sign-in: %v", err)
	}
	old, _ := e.store.GetClient(ctx, e.as.issuer(), h.cfg.RedirectURL)
	if old == nil {
		t.Fatal("no registration at the first authorization server")
	}
	prmReads := e.rs.req.get(e.rs.prmLocation())

	as2 := newFakeAS(t)
	as2.knownOnly = true // a client ID it did not issue is refused
	as2.idSuffix = "-as2"
	e.rs.asIssuer, e.rs.verify = as2.issuer, as2.verify

	if err := connect(ctx, e.rs.url(), h); err != nil {
		t.Fatalf("after the move: %v", err)
	}
	if got := e.rs.req.get(e.rs.prmLocation()); got <= prmReads {
		t.Error("the protected-resource metadata was not read again after the 401")
	}
	if got := as2.req.get("/register"); got != 1 {
		t.Errorf("registrations at the new authorization server = %d; want 1", got)
	}
	as2.mu.Lock()
	authID := as2.lastAuthQuery.Get("client_id")
	_, issued := as2.clients[authID]
	as2.mu.Unlock()
	if authID == old.ClientID || !issued {
		t.Errorf("the new authorization server saw client_id %q; want the one it registered (the old one is %q)", authID, old.ClientID)
	}
	g, _ := e.store.GetGrant(ctx, h.Resource())
	if g == nil || g.Issuer != as2.issuer() {
		t.Fatalf("grant after the move = %v; want one from %s", g, as2.issuer())
	}
	if reg, _ := e.store.GetClient(ctx, e.as.issuer(), h.cfg.RedirectURL); reg == nil || reg.ClientID != old.ClientID {
		t.Error("the first authorization server's registration is gone or changed")
	}
	if reg, _ := e.store.GetClient(ctx, as2.issuer(), h.cfg.RedirectURL); reg == nil || reg.ClientID != authID {
		t.Errorf("registration stored for the new issuer = %v; want client %q", reg, authID)
	}
}

// TestLogoutRevocationStatus: a revocation endpoint that answers any 2xx
// revoked the token (RFC 7009 §2.2 says 200; servers answer 204 too); one
// that refuses is reported, and the grant is deleted all the same.
func TestLogoutRevocationStatus(t *testing.T) {
	for _, tc := range []struct {
		status int
		want   mcperr.Code
	}{{200, ""}, {204, ""}, {503, mcperr.TokenFailed}} {
		t.Run(http.StatusText(tc.status), func(t *testing.T) {
			e := newEnv(t)
			h := e.handler(t, nil)
			ctx := context.Background()
			if err := h.Login(ctx); err != nil {
				t.Fatal(err)
			}
			e.as.mu.Lock()
			e.as.revokeStatus = tc.status
			e.as.mu.Unlock()
			err := h.Logout(ctx)
			if got := mcperr.CodeOf(err, ""); got != tc.want {
				t.Errorf("Logout: %v (code %q); want code %q", err, got, tc.want)
			}
			if g, _ := e.store.GetGrant(ctx, h.Resource()); g != nil {
				t.Error("the grant is still stored after Logout")
			}
		})
	}
}

// TestLogoutUnsupportedTokenType: a server that cannot revoke access tokens
// (RFC 7009 §2.2.1 unsupported_token_type, as oidc-provider answers for JWT
// access tokens) has not failed the logout; the same answer for the
// refresh token, which it must be able to revoke, is reported.
func TestLogoutUnsupportedTokenType(t *testing.T) {
	for _, tc := range []struct {
		hint string
		want mcperr.Code
	}{{"access_token", ""}, {"refresh_token", mcperr.TokenFailed}} {
		t.Run(tc.hint, func(t *testing.T) {
			e := newEnv(t)
			h := e.handler(t, nil)
			ctx := context.Background()
			if err := h.Login(ctx); err != nil {
				t.Fatal(err)
			}
			e.as.mu.Lock()
			e.as.revokeBody = map[string]string{tc.hint: "unsupported_token_type"}
			e.as.mu.Unlock()
			err := h.Logout(ctx)
			if got := mcperr.CodeOf(err, ""); got != tc.want {
				t.Errorf("Logout: %v (code %q); want code %q", err, got, tc.want)
			}
			if g, _ := e.store.GetGrant(ctx, h.Resource()); g != nil {
				t.Error("the grant is still stored after Logout")
			}
		})
	}
}
