// Package authtest runs, for native tests, the OAuth-protected demo MCP
// server and the demo authorization server (which approves at once), each
// on its own loopback origin, with Bearer or DPoP-bound tokens, and a
// courier that plays the person at the sign-in page: it follows the
// authorization URL and delivers the redirect, or says no.
package authtest

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpwasm/mcpwasm/demo"
	"github.com/mcpwasm/mcpwasm/demo/authserver"
	"github.com/mcpwasm/mcpwasm/oauth"
)

// RedirectURL is the redirect URI the courier's deliveries carry.
const RedirectURL = "http://127.0.0.1:9/callback"

// Env is one protected server and its authorization server.
type Env struct {
	URL      string // the protected MCP endpoint
	AS       *authserver.Server
	Registry *oauth.Registry // where the courier delivers
	Opened   atomic.Int32    // sign-in pages shown
	Decline  atomic.Bool     // when set, the person says no
}

// Options changes what [StartWith] starts.
type Options struct {
	// DPoP makes both servers DPoP-only: bound tokens, a nonce at each,
	// every proof verified.
	DPoP bool
	// Wrap, when set, wraps the protected server's handler (to record
	// what it sees).
	Wrap func(http.Handler) http.Handler
	// Now, when set, is the authorization server's clock (which also
	// judges the protected server's tokens); nil means time.Now.
	Now func() time.Time
}

// Start starts the servers until the test ends.
func Start(t testing.TB) *Env {
	t.Helper()
	return StartWith(t, Options{})
}

// StartWith starts the servers as opts says until the test ends.
func StartWith(t testing.TB, opts Options) *Env {
	t.Helper()
	var asH, mcpH http.Handler
	asSrv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { asH.ServeHTTP(w, r) }))
	t.Cleanup(asSrv.Close)
	mcpSrv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { mcpH.ServeHTTP(w, r) }))
	t.Cleanup(mcpSrv.Close)
	resource := mcpSrv.URL + demo.StreamablePath
	as, err := authserver.New(authserver.Config{Issuer: asSrv.URL, Resources: []string{resource}, AutoApprove: true, DPoP: opts.DPoP, Now: opts.Now})
	if err != nil {
		t.Fatal(err)
	}
	asH = as.Handler()
	mcpH = demo.ProtectedHandler(demo.Options{}, demo.Protection{
		Issuer: as.Issuer(), Verifier: as.Verifier(resource), Resource: resource, Scopes: []string{authserver.ScopeTools},
		DPoP: opts.DPoP,
	})
	if opts.Wrap != nil {
		mcpH = opts.Wrap(mcpH)
	}
	return &Env{URL: resource, AS: as, Registry: oauth.NewRegistry()}
}

// Courier shows the sign-in page to the person the Env plays.
func (e *Env) Courier() oauth.Courier { return oauth.CourierFunc(e.open) }

func (e *Env) open(ctx context.Context, authURL string) error {
	e.Opened.Add(1)
	go func() {
		if e.Decline.Load() {
			u, _ := url.Parse(authURL)
			_ = e.Registry.Deliver(RedirectURL + "?error=access_denied&state=" + url.QueryEscape(u.Query().Get("state")))
			return
		}
		hc := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, authURL, nil)
		resp, err := hc.Do(req)
		if err != nil {
			return
		}
		resp.Body.Close()
		if loc := resp.Header.Get("Location"); loc != "" {
			_ = e.Registry.Deliver(loc)
		}
	}()
	return nil
}

// Handler returns a non-interactive OAuth handler for the Env's server:
// connects never show the sign-in page; Login does.
func (e *Env) Handler(t testing.TB, store oauth.Store) *oauth.Handler {
	t.Helper()
	h, err := oauth.New(oauth.Config{
		ResourceURL: e.URL, HTTPClient: &http.Client{Transport: http.DefaultTransport}, RedirectURL: RedirectURL,
		ClientName: "authtest", Registry: e.Registry, Courier: e.Courier(), Store: store,
	})
	if err != nil {
		t.Fatal(err)
	}
	return h
}
