package authserver_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/oauth2"

	"github.com/mcpwasm/mcpwasm/demo/authserver"
)

const (
	resource    = "http://127.0.0.1:9/mcp" // never contacted
	redirectURI = "http://127.0.0.1:9/oauth/callback"
)

// clock is a settable clock for Config.Now.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// env is an authorization server under test on a real loopback listener.
type env struct {
	t     *testing.T
	as    *authserver.Server
	url   string
	clock *clock
	http  *http.Client // does not follow redirects
}

func newEnv(t *testing.T, mod func(*authserver.Config)) *env {
	t.Helper()
	var h http.Handler
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { h.ServeHTTP(w, r) }))
	t.Cleanup(ts.Close)
	clk := &clock{t: time.Now()}
	cfg := authserver.Config{
		Issuer:    ts.URL,
		Resources: []string{resource, "http://127.0.0.1:9/other"},
		Now:       clk.Now,
	}
	if mod != nil {
		mod(&cfg)
	}
	as, err := authserver.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	h = as.Handler()
	return &env{t: t, as: as, url: ts.URL, clock: clk, http: &http.Client{
		Timeout:       10 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}}
}

// register registers a client dynamically and returns its id and secret.
func (e *env) register(body string) (id, secret string) {
	e.t.Helper()
	resp, err := e.http.Post(e.url+"/register", "application/json", strings.NewReader(body))
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	json.NewDecoder(resp.Body).Decode(&out)
	if resp.StatusCode != http.StatusCreated {
		e.t.Fatalf("register: %d %v", resp.StatusCode, out)
	}
	id, _ = out["client_id"].(string)
	secret, _ = out["client_secret"].(string)
	return id, secret
}

func (e *env) registerPublic() string {
	id, _ := e.register(`{"redirect_uris":["` + redirectURI + `"],"client_name":"Test client","grant_types":["authorization_code","refresh_token"]}`)
	return id
}

func (e *env) oauthConfig(clientID, secret string, style oauth2.AuthStyle, scopes ...string) *oauth2.Config {
	return &oauth2.Config{
		ClientID:     clientID,
		ClientSecret: secret,
		RedirectURL:  redirectURI,
		Scopes:       scopes,
		Endpoint: oauth2.Endpoint{
			AuthURL:   e.url + "/authorize",
			TokenURL:  e.url + "/token",
			AuthStyle: style,
		},
	}
}

func (e *env) ctx() context.Context {
	return context.WithValue(e.t.Context(), oauth2.HTTPClient, e.http)
}

func (e *env) get(u string) (*http.Response, string) {
	e.t.Helper()
	resp, err := e.http.Get(u)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

func (e *env) postForm(path string, form url.Values, mod func(*http.Request)) (*http.Response, map[string]any) {
	e.t.Helper()
	req, _ := http.NewRequest("POST", e.url+path, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if mod != nil {
		mod(req)
	}
	resp, err := e.http.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	json.NewDecoder(resp.Body).Decode(&out)
	return resp, out
}

var ticketRE = regexp.MustCompile(`name="ticket" value="([^"]+)"`)

// consent GETs the authorize URL, expects the consent page, and posts
// action on its form. It returns the redirect's query.
func (e *env) consent(authURL, action string) url.Values {
	e.t.Helper()
	resp, page := e.get(authURL)
	if resp.StatusCode != http.StatusOK {
		e.t.Fatalf("authorize: %d, want the consent page\n%s", resp.StatusCode, page)
	}
	m := ticketRE.FindStringSubmatch(page)
	if m == nil {
		e.t.Fatalf("no ticket in consent page:\n%s", page)
	}
	resp, _ = e.postForm("/consent", url.Values{"ticket": {m[1]}, "action": {action}}, func(r *http.Request) {
		r.Header.Set("Origin", e.url)
	})
	return e.location(resp)
}

// location returns the query of a 302 to redirectURI.
func (e *env) location(resp *http.Response) url.Values {
	e.t.Helper()
	if resp.StatusCode != http.StatusFound {
		e.t.Fatalf("status %d, want 302", resp.StatusCode)
	}
	loc, err := url.Parse(resp.Header.Get("Location"))
	if err != nil || !strings.HasPrefix(loc.String(), redirectURI+"?") {
		e.t.Fatalf("Location %q, want %s?…", resp.Header.Get("Location"), redirectURI)
	}
	return loc.Query()
}

// login runs a full authorization-code flow with x/oauth2 through the
// consent page and returns the token.
func (e *env) login(conf *oauth2.Config) *oauth2.Token {
	e.t.Helper()
	verifier := oauth2.GenerateVerifier()
	authURL := conf.AuthCodeURL("st-1", oauth2.S256ChallengeOption(verifier), oauth2.SetAuthURLParam("resource", resource))
	q := e.consent(authURL, "approve")
	if q.Get("state") != "st-1" || q.Get("iss") != e.url || q.Get("code") == "" {
		e.t.Fatalf("approve redirect query %v", q)
	}
	tok, err := conf.Exchange(e.ctx(), q.Get("code"), oauth2.VerifierOption(verifier), oauth2.SetAuthURLParam("resource", resource))
	if err != nil {
		e.t.Fatalf("exchange: %v", err)
	}
	return tok
}

// authorizeCode gets a code with AutoApprove-independent consent and returns
// it with its verifier.
func (e *env) authorizeCode(conf *oauth2.Config) (code, verifier string) {
	e.t.Helper()
	verifier = oauth2.GenerateVerifier()
	authURL := conf.AuthCodeURL("st", oauth2.S256ChallengeOption(verifier), oauth2.SetAuthURLParam("resource", resource))
	q := e.consent(authURL, "approve")
	return q.Get("code"), verifier
}

func oauthErr(t *testing.T, err error) *oauth2.RetrieveError {
	t.Helper()
	re, ok := err.(*oauth2.RetrieveError)
	if !ok {
		t.Fatalf("error %v (%T), want *oauth2.RetrieveError", err, err)
	}
	return re
}

func newDocServer(t *testing.T, h http.Handler) string {
	ts := httptest.NewServer(h)
	t.Cleanup(ts.Close)
	return ts.URL
}
