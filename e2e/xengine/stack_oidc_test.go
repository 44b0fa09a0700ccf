package xengine

// Two real authorization stacks for the browser matrix (stacks_test.go),
// each with the TypeScript SDK's MCP server in front (e2e/stacks/mcp-front):
//
//   - oidc-provider: panva's oidc-provider (e2e/stacks/oidc-provider) with
//     dynamic registration, resource indicators (JWT access tokens for the
//     MCP server), refresh tokens and revocation;
//   - hydra: Ory Hydra (built by scripts/install-hydra.sh) with
//     dynamic registration, opaque access tokens checked by introspection,
//     and the login and consent app of hydraLoginApp.
//
// Both sign in with the same forms: a login form (#username, #password,
// #login) and a consent form (#approve, #deny). TestStackOIDCNative drives
// each stack with package oauth natively, without the browser.

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpwasm/mcpwasm/e2e/engine"
	"github.com/mcpwasm/mcpwasm/oauth"
)

var (
	oidcProviderStack = stack{name: "oidc-provider", start: startOIDCProvider}
	hydraStack        = stack{name: "hydra", start: func(t testing.TB, page string) *stackServer { return startHydra(t, page, false) }}
	// hydraByHand is Hydra behind an MCP server that publishes no
	// metadata: the page is given Hydra's endpoints and a client
	// registered there by hand.
	hydraByHand = stack{name: "hydra-by-hand", start: func(t testing.TB, page string) *stackServer { return startHydra(t, page, true) }}
)

func init() { stacks = append(stacks, oidcProviderStack, hydraStack, hydraByHand) }

// The one account of each stack's login form.
const (
	stackUser     = "alice"
	stackPassword = "wonderland"
)

// stackTokenTTL is the access token lifetime of both stacks: short, so a
// test sees a refresh, and long enough that the steps before the refresh
// step run within the first half of it (a client refreshes a short-lived
// token once half its life is gone).
const stackTokenTTL = 30 * time.Second

// stackStepUpTool is the MCP server's tool that needs the scope "admin"
// besides "mcp"; a call without it is answered 403 insufficient_scope.
const stackStepUpTool = "admin_add"

// stackProc is a process of a stack, killed when the test ends; its output
// is kept and printed when the test fails.
type stackProc struct {
	name string
	mu   sync.Mutex
	out  bytes.Buffer
}

func (p *stackProc) Write(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.out.Len() < 4<<20 {
		p.out.Write(b)
	}
	return len(b), nil
}

func (p *stackProc) lines() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return strings.Split(p.out.String(), "\n")
}

// startStackProc runs argv in dir with env added and waits until its output
// has a line containing ready.
func startStackProc(t testing.TB, name, dir string, env []string, ready string, argv ...string) *stackProc {
	t.Helper()
	p := &stackProc{name: name}
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdout, cmd.Stderr = p, p
	cmd.WaitDelay = 5 * time.Second
	start := time.Now()
	if err := cmd.Start(); err != nil {
		cancel()
		t.Fatalf("starting %s: %v", name, err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		cancel()
		<-exited
		if t.Failed() {
			// Hydra's migrations in memory are a hundred lines of noise.
			lines := slices.DeleteFunc(p.lines(), func(l string) bool { return strings.Contains(l, "migration_file=") })
			t.Logf("output of %s:\n%s", name, strings.Join(lines, "\n"))
		}
	})
	deadline := time.After(120 * time.Second)
	for {
		if slices.ContainsFunc(p.lines(), func(l string) bool { return strings.Contains(l, ready) }) {
			t.Logf("%s started in %v", name, time.Since(start).Round(time.Millisecond))
			return p
		}
		select {
		case <-exited:
			t.Fatalf("%s exited before it was ready: %v\n%s", name, cmd.ProcessState, strings.Join(p.lines(), "\n"))
		case <-deadline:
			t.Fatalf("%s was not ready within 120s\n%s", name, strings.Join(p.lines(), "\n"))
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// stackDir is a directory of e2e/stacks whose pinned packages must be
// installed.
func stackDir(t testing.TB, name string) string {
	t.Helper()
	dir := filepath.Join(repo, "e2e", "stacks", name)
	if _, err := os.Stat(filepath.Join(dir, "node_modules", ".package-lock.json")); err != nil {
		t.Fatalf("the pinned packages of %s are not installed: run scripts/install-deps.sh", dir)
	}
	return dir
}

// startMCPFront runs the MCP server in front of a stack on port and
// returns its MCP URL; env configures the token check (see
// e2e/stacks/mcp-front/server.mjs).
func startMCPFront(t testing.TB, port int, pageOrigin, issuer string, env ...string) string {
	t.Helper()
	dir := stackDir(t, "mcp-front")
	env = append(env, "PORT="+strconv.Itoa(port), "PAGE_ORIGIN="+pageOrigin, "ISSUER="+issuer)
	startStackProc(t, "mcp-front", dir, env, "mcp-front listening", "node", "server.mjs")
	return fmt.Sprintf("http://127.0.0.1:%d/mcp", port)
}

// asRequests returns the requests a stack's AS logged as lines
// "<prefix> <METHOD> <path>".
func asRequests(p *stackProc, prefix string) func() []string {
	return func() []string {
		var out []string
		for _, l := range p.lines() {
			if _, r, ok := strings.Cut(l, prefix); ok {
				out = append(out, strings.TrimSpace(r))
			}
		}
		return out
	}
}

// startOIDCProvider runs oidc-provider (on Node 22 from its pinned "node"
// package: oidc-provider 9 supports Node 22 LTS and later) and the MCP
// server in front, which checks its JWT access tokens with its JWKS.
func startOIDCProvider(t testing.TB, pageOrigin string) *stackServer {
	t.Helper()
	dir := stackDir(t, "oidc-provider")
	ports := reservePorts(t, 2)
	issuer := fmt.Sprintf("http://127.0.0.1:%d", ports[0])
	resource := fmt.Sprintf("http://127.0.0.1:%d/mcp", ports[1])
	as := startStackProc(t, "oidc-provider", dir, []string{
		"PORT=" + strconv.Itoa(ports[0]),
		"PAGE_ORIGIN=" + pageOrigin,
		"RESOURCE=" + resource,
		"ACCESS_TOKEN_TTL=" + strconv.Itoa(int(stackTokenTTL/time.Second)),
		"USERNAME=" + stackUser,
		"PASSWORD=" + stackPassword,
	}, "oidc-provider listening", filepath.Join(dir, "node_modules", ".bin", "node"), "provider.mjs")
	mcpURL := startMCPFront(t, ports[1], pageOrigin, issuer, "TOKEN_CHECK=jwt", "JWKS_URL="+issuer+"/jwks")
	if mcpURL != resource {
		t.Fatalf("the MCP server is at %s, not %s", mcpURL, resource)
	}
	return &stackServer{
		MCPURL:          mcpURL,
		Consent:         formConsent,
		TokenTTL:        stackTokenTTL,
		StepUp:          stackStepUpTool,
		Requests:        asRequests(as, "oidc-provider saw "),
		JWTAccessTokens: true,
	}
}

// hydraVersion is the Ory Hydra release scripts/install-hydra.sh
// builds.
const hydraVersion = "v2.3.0"

// hydraBinary is where scripts/install-hydra.sh puts Hydra: the
// machine's cache (one build for every clone), or $MCPWASM_HYDRA.
func hydraBinary(t testing.TB) string {
	t.Helper()
	bin := os.Getenv("MCPWASM_HYDRA")
	if bin == "" {
		cache, err := os.UserCacheDir()
		if err != nil {
			t.Fatalf("no cache directory for Ory Hydra: %v (set MCPWASM_HYDRA)", err)
		}
		bin = filepath.Join(cache, "mcpwasm", "hydra-"+hydraVersion)
	}
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("Ory Hydra %s is not built at %s: run scripts/install-deps.sh", hydraVersion, bin)
	}
	return bin
}

// startHydra runs Ory Hydra in memory (DSN=memory) with dynamic client
// registration, its login and consent app (hydraLoginApp) and the MCP
// server in front, which checks Hydra's opaque access tokens with its
// admin introspection endpoint. Hydra does not implement resource
// indicators (RFC 8707): it ignores the resource parameter and issues
// tokens without the MCP server as audience, so the front checks the
// token's scopes but not its audience.
//
// byHand: the MCP server publishes no metadata and names none in its
// challenges, Hydra registers no client dynamically, and the page gets a
// client registered with Hydra's admin API and Hydra's endpoints, with
// the scopes to ask for (nothing lists them).
func startHydra(t testing.TB, pageOrigin string, byHand bool) *stackServer {
	t.Helper()
	bin := hydraBinary(t)
	ports := reservePorts(t, 3)
	public := fmt.Sprintf("http://127.0.0.1:%d", ports[0])
	admin := fmt.Sprintf("http://127.0.0.1:%d", ports[1])
	app := httptest.NewServer(hydraLoginApp(t, admin))
	t.Cleanup(app.Close)

	secret := make([]byte, 32)
	rand.Read(secret)
	cfg := map[string]any{
		"dsn": "memory",
		"serve": map[string]any{
			"public": map[string]any{
				"host": "127.0.0.1", "port": ports[0],
				"cors": map[string]any{
					"enabled":         true,
					"allowed_origins": []string{pageOrigin},
					"allowed_methods": []string{"GET", "POST"},
					"allowed_headers": []string{"Authorization", "Content-Type"},
					"exposed_headers": []string{"Content-Type", "WWW-Authenticate"},
				},
			},
			"admin": map[string]any{"host": "127.0.0.1", "port": ports[1]},
		},
		"urls": map[string]any{
			"self":    map[string]any{"issuer": public},
			"login":   app.URL + "/login",
			"consent": app.URL + "/consent",
		},
		"oidc": map[string]any{
			// Its default scopes for a client that registers none:
			// openid, offline and offline_access, not the MCP server's.
			"dynamic_client_registration": map[string]any{"enabled": !byHand},
		},
		// Hydra serves registration at /oauth2/register but names it in
		// its metadata only when told to.
		"webfinger": map[string]any{"oidc_discovery": map[string]any{
			"client_registration_url": public + "/oauth2/register",
		}},
		"oauth2": map[string]any{"pkce": map[string]any{"enforced_for_public_clients": true}},
		"ttl":    map[string]any{"access_token": stackTokenTTL.String()},
		"secrets": map[string]any{
			"system": []string{base64.RawURLEncoding.EncodeToString(secret)},
		},
		"log": map[string]any{"level": "info", "leak_sensitive_values": false},
	}
	cfgFile := filepath.Join(t.TempDir(), "hydra.json")
	b, _ := json.Marshal(cfg)
	if err := os.WriteFile(cfgFile, b, 0o600); err != nil {
		t.Fatal(err)
	}
	// --dev: the issuer is http (loopback) rather than https.
	as := startStackProc(t, "hydra", t.TempDir(), []string{"DSN=memory"}, "Setting up http server on 127.0.0.1:"+strconv.Itoa(ports[0]),
		bin, "serve", "all", "--dev", "--sqa-opt-out", "--config", cfgFile)
	waitHTTP(t, public+"/health/ready")
	// Hydra makes its signing keys on first use, in the request that
	// needs them (4096-bit RSA); a deployment has them long before anyone
	// signs in. On a busy machine, making them in a sign-in's redirect
	// outlasts Hydra's 10 s write timeout: the response is dropped, the
	// browser sends the redirect again, and Hydra refuses it ("The
	// consent verifier has already been used"). Its JWKS endpoint makes
	// them now.
	waitHTTP(t, public+"/.well-known/jwks.json")
	front := []string{"TOKEN_CHECK=introspect", "INTROSPECTION_URL=" + admin + "/admin/oauth2/introspect", "CHECK_AUDIENCE=0"}
	if byHand {
		front = append(front, "METADATA=0")
	}
	srv := &stackServer{
		MCPURL:   startMCPFront(t, ports[2], pageOrigin, public, front...),
		Consent:  formConsent,
		TokenTTL: stackTokenTTL,
		StepUp:   stackStepUpTool,
		Requests: hydraRequests(as, strings.TrimPrefix(public, "http://")),
	}
	if byHand {
		const clientID = "mcpwasm-by-hand"
		client := map[string]any{
			"client_id": clientID, "token_endpoint_auth_method": "none",
			"redirect_uris":  []string{pageOrigin + "/oauth/callback.html"},
			"grant_types":    []string{"authorization_code", "refresh_token"},
			"response_types": []string{"code"},
			"scope":          "mcp admin offline_access",
		}
		b, _ := json.Marshal(client)
		resp, err := http.Post(admin+"/admin/clients", "application/json", bytes.NewReader(b))
		if err != nil {
			t.Fatalf("registering the client with Hydra's admin API: %v", err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusCreated {
			t.Fatalf("registering the client with Hydra's admin API: %s", resp.Status)
		}
		srv.Endpoints = &asEndpoints{Authorization: "/oauth2/auth", Token: "/oauth2/token", Revocation: "/oauth2/revoke"}
		srv.ClientOpts = fmt.Sprintf(`clientId: %q, scopes: ["mcp", "offline_access"], authorizationEndpoint: %q, tokenEndpoint: %q, revocationEndpoint: %q`,
			clientID, public+srv.Endpoints.Authorization, public+srv.Endpoints.Token, public+srv.Endpoints.Revocation)
		srv.Facts = "no metadata on the MCP server; Hydra's endpoints and a client registered with its admin API given by hand"
	}
	return srv
}

// clientIDOf returns the clientId of a stack's ClientOpts ("" for none).
func clientIDOf(opts string) string {
	m := regexp.MustCompile(`clientId: "([^"]*)"`).FindStringSubmatch(opts)
	if m == nil {
		return ""
	}
	return m[1]
}

// hydraRequests returns the requests Hydra logged on its public port
// ("POST /oauth2/token", ...), from its JSON or logfmt request log lines.
func hydraRequests(p *stackProc, host string) func() []string {
	method := regexp.MustCompile(`method:(\w+)`)
	path := regexp.MustCompile(`path:(\S+)`)
	return func() []string {
		var out []string
		for _, l := range p.lines() {
			if !strings.Contains(l, "started handling request") || !strings.Contains(l, "host:"+host+" ") {
				continue
			}
			m, pa := method.FindStringSubmatch(l), path.FindStringSubmatch(l)
			if m != nil && pa != nil {
				out = append(out, m[1]+" "+strings.Trim(pa[1], `"`))
			}
		}
		return out
	}
}

// waitHTTP waits until u answers 200.
func waitHTTP(t testing.TB, u string) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		resp, err := http.Get(u)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s did not answer 200 within 60s (last: %v)", u, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// hydraLoginApp is the login and consent app Hydra delegates to (its
// urls.login and urls.consent), with the same forms as the oidc-provider
// stack: it accepts or rejects each request with Hydra's admin API.
func hydraLoginApp(t testing.TB, admin string) http.Handler {
	adminCall := func(r *http.Request, method, path, challengeParam, challenge string, body any) (map[string]any, error) {
		var rd io.Reader
		if body != nil {
			b, _ := json.Marshal(body)
			rd = bytes.NewReader(b)
		}
		req, err := http.NewRequestWithContext(r.Context(), method, admin+path+"?"+url.Values{challengeParam: {challenge}}.Encode(), rd)
		if err != nil {
			return nil, err
		}
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return nil, err
		}
		defer resp.Body.Close()
		var out map[string]any
		if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&out); err != nil || resp.StatusCode != 200 {
			return nil, fmt.Errorf("hydra admin %s %s answered %d: %v %v", method, path, resp.StatusCode, out, err)
		}
		return out, nil
	}
	fail := func(w http.ResponseWriter, err error) {
		t.Logf("hydra login app: %v", err)
		http.Error(w, err.Error(), http.StatusBadGateway)
	}
	redirect := func(w http.ResponseWriter, r *http.Request, res map[string]any) {
		to, _ := res["redirect_to"].(string)
		http.Redirect(w, r, to, http.StatusFound)
	}
	mux := http.NewServeMux()
	const loginPath, consentPath = "/admin/oauth2/auth/requests/login", "/admin/oauth2/auth/requests/consent"
	mux.HandleFunc("GET /login", func(w http.ResponseWriter, r *http.Request) {
		ch := r.URL.Query().Get("login_challenge")
		lr, err := adminCall(r, "GET", loginPath, "login_challenge", ch, nil)
		if err != nil {
			fail(w, err)
			return
		}
		if skip, _ := lr["skip"].(bool); skip {
			res, err := adminCall(r, "PUT", loginPath+"/accept", "login_challenge", ch, map[string]any{"subject": lr["subject"]})
			if err != nil {
				fail(w, err)
				return
			}
			redirect(w, r, res)
			return
		}
		writeLoginForm(w, "/login", ch, "")
	})
	mux.HandleFunc("POST /login", func(w http.ResponseWriter, r *http.Request) {
		ch := r.PostFormValue("challenge")
		if r.PostFormValue("username") != stackUser || r.PostFormValue("password") != stackPassword {
			writeLoginForm(w, "/login", ch, "Wrong user name or password.")
			return
		}
		res, err := adminCall(r, "PUT", loginPath+"/accept", "login_challenge", ch, map[string]any{"subject": stackUser, "remember": true, "remember_for": 3600})
		if err != nil {
			fail(w, err)
			return
		}
		redirect(w, r, res)
	})
	mux.HandleFunc("GET /consent", func(w http.ResponseWriter, r *http.Request) {
		ch := r.URL.Query().Get("consent_challenge")
		cr, err := adminCall(r, "GET", consentPath, "consent_challenge", ch, nil)
		if err != nil {
			fail(w, err)
			return
		}
		var scopes []string
		for _, s := range anySlice(cr["requested_scope"]) {
			scopes = append(scopes, fmt.Sprint(s))
		}
		client, _ := cr["client"].(map[string]any)
		name, _ := client["client_name"].(string)
		writeConsentForm(w, "/consent", ch, name, scopes)
	})
	mux.HandleFunc("POST /consent", func(w http.ResponseWriter, r *http.Request) {
		ch := r.PostFormValue("challenge")
		// Logged so that a failed sign-in shows whether one request's
		// consent came twice, which Hydra refuses ("The consent verifier
		// has already been used").
		t.Logf("hydra login app: %s POST /consent decision=%q challenge …%s", time.Now().Format("15:04:05.000"), r.PostFormValue("decision"), ch[max(0, len(ch)-8):])
		if r.PostFormValue("decision") != "approve" {
			res, err := adminCall(r, "PUT", consentPath+"/reject", "consent_challenge", ch,
				map[string]any{"error": "access_denied", "error_description": "The user denied the request."})
			if err != nil {
				fail(w, err)
				return
			}
			redirect(w, r, res)
			return
		}
		cr, err := adminCall(r, "GET", consentPath, "consent_challenge", ch, nil)
		if err != nil {
			fail(w, err)
			return
		}
		res, err := adminCall(r, "PUT", consentPath+"/accept", "consent_challenge", ch, map[string]any{
			"grant_scope":                 cr["requested_scope"],
			"grant_access_token_audience": cr["requested_access_token_audience"],
		})
		if err != nil {
			fail(w, err)
			return
		}
		redirect(w, r, res)
	})
	return mux
}

func anySlice(v any) []any { s, _ := v.([]any); return s }

// writeLoginForm and writeConsentForm write the forms of
// e2e/stacks/oidc-provider/provider.mjs, carrying Hydra's challenge.
func writeLoginForm(w http.ResponseWriter, action, challenge, errMsg string) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	e := html.EscapeString
	if errMsg != "" {
		errMsg = `<p id="error">` + e(errMsg) + `</p>`
	}
	fmt.Fprintf(w, `<!doctype html><html><head><meta charset="utf-8"><title>Sign in</title></head><body><h1>Sign in</h1>%s
<form method="post" action="%s">
<input type="hidden" name="challenge" value="%s">
<label>User <input id="username" name="username" autocomplete="username"></label>
<label>Password <input id="password" name="password" type="password" autocomplete="current-password"></label>
<button id="login" type="submit">Sign in</button>
</form></body></html>`, errMsg, e(action), e(challenge))
}

func writeConsentForm(w http.ResponseWriter, action, challenge, client string, scopes []string) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	e := html.EscapeString
	fmt.Fprintf(w, `<!doctype html><html><head><meta charset="utf-8"><title>Authorize</title></head><body><h1>Authorize</h1>
<p><span id="client">%s</span> asks for: <span id="scopes">%s</span></p>
<form method="post" action="%s">
<input type="hidden" name="challenge" value="%s">
<button id="approve" name="decision" value="approve" type="submit">Allow</button>
<button id="deny" name="decision" value="deny" type="submit">Deny</button>
</form></body></html>`, e(client), e(strings.Join(scopes, " ")), e(action), e(challenge))
}

// formConsent signs in on the login form when it is shown, then clicks
// #approve or #deny on the consent form, in the popup.
func formConsent(t *testing.T, ctx context.Context, popup engine.Window, approve bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	if stackForm(t, ctx, popup, "#username", "#approve") == "#username" {
		fill := fmt.Sprintf(`(() => {
			document.querySelector("#username").value = %q;
			document.querySelector("#password").value = %q;
		})()`, stackUser, stackPassword)
		if err := popup.Eval(ctx, fill, nil); err != nil {
			t.Fatalf("filling the login form: %v", err)
		}
		if err := popup.Click(ctx, "#login"); err != nil {
			t.Fatalf("signing in on the login form: %v", err)
		}
	}
	button := "#deny"
	if approve {
		button = "#approve"
	}
	stackForm(t, ctx, popup, button)
	if err := popup.Click(ctx, button); err != nil {
		t.Fatalf("clicking %s on the consent form: %v", button, err)
	}
}

// stackForm waits until the popup's loaded document has an element
// matching one of selectors and returns that selector. A popup opens on
// about:blank and then navigates through the authorization endpoint's
// redirects; a check that runs in a document a navigation replaces fails,
// and is asked again in the next one.
func stackForm(t *testing.T, ctx context.Context, popup engine.Window, selectors ...string) string {
	t.Helper()
	check := fmt.Sprintf(`(() => {
		if (document.readyState !== "complete") return "";
		return %s.find((s) => document.querySelector(s)) ?? "";
	})()`, jsArray(selectors))
	var last error
	for {
		var found string
		last = popup.Eval(ctx, check, &found)
		if last == nil && found != "" {
			return found
		}
		select {
		case <-ctx.Done():
			var where string
			_ = popup.Eval(context.Background(), `location.href + " shows " + JSON.stringify(document.body?.innerText?.slice(0, 300))`, &where)
			t.Fatalf("none of %v showed in the popup (last check: %v); it is at %s", selectors, last, where)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// jsArray is strs as a JavaScript array literal.
func jsArray(strs []string) string {
	b, _ := json.Marshal(strs)
	return string(b)
}

// formCourier signs in natively as a browser would: it follows the
// authorization URL with a cookie jar, fills and submits the login and
// consent forms (approving or denying), and delivers the redirect to
// redirectURL to reg as the callback page would.
type formCourier struct {
	t           *testing.T
	reg         *oauth.Registry
	redirectURL string
	approve     bool
	client      *http.Client
	flows       atomic.Int32
}

func newFormCourier(t *testing.T, reg *oauth.Registry, redirectURL string, approve bool) *formCourier {
	jar, _ := cookiejar.New(nil)
	c := &formCourier{t: t, reg: reg, redirectURL: redirectURL, approve: approve}
	c.client = &http.Client{
		Jar:     jar,
		Timeout: 30 * time.Second,
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if strings.HasPrefix(req.URL.String(), redirectURL) || len(via) > 20 {
				return http.ErrUseLastResponse
			}
			return nil
		},
	}
	return c
}

var (
	formAction = regexp.MustCompile(`<form method="post" action="([^"]*)"`)
	formHidden = regexp.MustCompile(`<input type="hidden" name="([^"]*)" value="([^"]*)"`)
)

func (c *formCourier) Open(ctx context.Context, authURL string) (<-chan error, error) {
	return nil, c.open(ctx, authURL)
}

func (c *formCourier) open(ctx context.Context, authURL string) error {
	c.flows.Add(1)
	resp, err := c.do(ctx, "GET", authURL, nil)
	for step := 0; err == nil && step < 6; step++ {
		if loc := resp.Header.Get("Location"); loc != "" && strings.HasPrefix(loc, c.redirectURL) {
			go func() {
				if err := c.reg.Deliver(loc); err != nil {
					c.t.Errorf("delivering the callback: %v", err)
				}
			}()
			return nil
		}
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		resp.Body.Close()
		page := string(body)
		m := formAction.FindStringSubmatch(page)
		if resp.StatusCode != 200 || m == nil {
			return fmt.Errorf("the authorization server answered %d without a form or a redirect to the callback: %.300s", resp.StatusCode, page)
		}
		form := url.Values{}
		for _, h := range formHidden.FindAllStringSubmatch(page, -1) {
			form.Set(html.UnescapeString(h[1]), html.UnescapeString(h[2]))
		}
		switch {
		case strings.Contains(page, `id="error"`):
			return fmt.Errorf("the login form refused the account: %.300s", page)
		case strings.Contains(page, `id="username"`):
			form.Set("username", stackUser)
			form.Set("password", stackPassword)
		case strings.Contains(page, `id="approve"`):
			form.Set("decision", map[bool]string{true: "approve", false: "deny"}[c.approve])
		default:
			return fmt.Errorf("neither the login nor the consent form: %.300s", page)
		}
		action, perr := resp.Request.URL.Parse(html.UnescapeString(m[1]))
		if perr != nil {
			return perr
		}
		resp, err = c.do(ctx, "POST", action.String(), strings.NewReader(form.Encode()))
	}
	if err != nil {
		return err
	}
	return errors.New("no redirect to the callback after 6 pages")
}

func (c *formCourier) do(ctx context.Context, method, u string, body io.Reader) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, method, u, body)
	if err != nil {
		return nil, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	return c.client.Do(req)
}

// TestStackOIDCNative signs in to each stack with package oauth natively
// (dynamic registration, PKCE, the login and consent forms), calls the MCP
// server's tool with go-sdk, sees a refresh after the token's lifetime, a
// step-up to the scope "admin", a logout that revokes the refresh token,
// and a denied consent.
func TestStackOIDCNative(t *testing.T) {
	onePass(t)
	t.Parallel()
	for _, st := range []stack{oidcProviderStack, hydraStack} {
		t.Run(st.name, func(t *testing.T) {
			t.Parallel()
			const pageOrigin = "http://127.0.0.1:9"
			s := st.start(t, pageOrigin)
			redirectURL := pageOrigin + "/oauth/callback.html"
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
			defer cancel()

			reg := oauth.NewRegistry()
			courier := newFormCourier(t, reg, redirectURL, true)
			store := oauth.NewMemoryStore()
			var mu sync.Mutex
			var refreshed int
			h, err := oauth.New(oauth.Config{
				ResourceURL:         s.MCPURL,
				HTTPClient:          &http.Client{Transport: http.DefaultTransport, Timeout: 30 * time.Second},
				RedirectURL:         redirectURL,
				ClientID:            clientIDOf(s.ClientOpts),
				ClientName:          "mcpwasm stack test",
				Registry:            reg,
				Courier:             courier,
				Store:               store,
				Interactive:         true,
				RequestRefreshToken: true,
				RefreshMargin:       time.Second,
				OnEvent: func(e oauth.Event) {
					if e.Kind == oauth.EventTokenRefreshed {
						mu.Lock()
						refreshed++
						mu.Unlock()
					}
				},
			})
			if err != nil {
				t.Fatal(err)
			}
			client := mcp.NewClient(&mcp.Implementation{Name: "mcpwasm-stack-test", Version: "0.1.0"}, nil)
			start := time.Now()
			session, err := client.Connect(ctx, &mcp.StreamableClientTransport{
				Endpoint:     s.MCPURL,
				HTTPClient:   &http.Client{Transport: h.ResourceTransport(http.DefaultTransport), Timeout: 30 * time.Second},
				OAuthHandler: h,
			}, nil)
			if err != nil {
				t.Fatalf("connecting (sign-in included): %v", err)
			}
			defer session.Close()
			t.Logf("signed in and connected in %v", time.Since(start).Round(time.Millisecond))
			add := func() {
				t.Helper()
				res, err := session.CallTool(ctx, &mcp.CallToolParams{Name: "add", Arguments: map[string]any{"a": 2, "b": 3}})
				if err != nil {
					t.Fatalf("add: %v", err)
				}
				if got := toolText(res); res.IsError || got != "5" {
					t.Fatalf("add(2, 3) = %q (isError %v), want 5", got, res.IsError)
				}
			}
			add()
			g, err := store.GetGrant(ctx, s.MCPURL)
			if err != nil || g == nil {
				t.Fatalf("no grant stored after the sign-in: %v", err)
			}
			if g.RefreshToken == "" {
				t.Fatalf("the stack issued no refresh token (scopes %v)", g.Scopes)
			}
			t.Logf("granted scopes %v, token type %s, expires in %v", g.Scopes, g.TokenType, time.Until(g.Expiry).Round(time.Second))
			checkStackCORS(t, g.Issuer, s.MCPURL, pageOrigin)

			// Past the token's lifetime the next call refreshes first.
			time.Sleep(s.TokenTTL + time.Second)
			add()
			mu.Lock()
			n := refreshed
			mu.Unlock()
			if n == 0 {
				t.Fatalf("no refresh after the access token's lifetime (%v)", s.TokenTTL)
			}
			g2, _ := store.GetGrant(ctx, s.MCPURL)
			if g2 == nil || g2.AccessToken == g.AccessToken {
				t.Fatal("the refresh did not store a new access token")
			}

			// Step-up: the tool needs the scope admin; the server answers
			// 403 insufficient_scope and the handler signs in again for it.
			flows := courier.flows.Load()
			res, err := session.CallTool(ctx, &mcp.CallToolParams{Name: s.StepUp, Arguments: map[string]any{"a": 20, "b": 22}})
			if err != nil {
				t.Fatalf("%s (step-up): %v", s.StepUp, err)
			}
			if got := toolText(res); res.IsError || got != "42" {
				t.Fatalf("%s = %q (isError %v)", s.StepUp, got, res.IsError)
			}
			if n := courier.flows.Load(); n != flows+1 {
				t.Fatalf("the step-up took %d authorization flows, want 1", n-flows)
			}
			g3, _ := store.GetGrant(ctx, s.MCPURL)
			if g3 == nil || !slices.Contains(g3.Scopes, "admin") {
				t.Fatalf("after the step-up the grant's scopes are %v, want admin among them", g3.Scopes)
			}

			// Logout revokes the refresh token at the AS. oidc-provider
			// cannot revoke its JWT access tokens (400
			// unsupported_token_type, RFC 7009 section 2.2.1): that is no
			// failure of the logout.
			if err := h.Logout(ctx); err != nil {
				t.Fatalf("logout: %v", err)
			}
			if g, _ := store.GetGrant(ctx, s.MCPURL); g != nil {
				t.Fatal("the grant is still stored after logout")
			}
			if code, body := refreshWith(t, g3); code != http.StatusBadRequest || !strings.Contains(body, "invalid_grant") {
				t.Fatalf("refreshing with the revoked refresh token: %d %s, want 400 invalid_grant", code, body)
			}
			if s.Requests != nil {
				t.Logf("the AS saw: %s", strings.Join(s.Requests(), ", "))
			}

			// A user who denies consent: the flow ends with ErrDeclined.
			reg2 := oauth.NewRegistry()
			h2, err := oauth.New(oauth.Config{
				ResourceURL: s.MCPURL,
				HTTPClient:  &http.Client{Transport: http.DefaultTransport, Timeout: 30 * time.Second},
				RedirectURL: redirectURL,
				ClientID:    clientIDOf(s.ClientOpts),
				ClientName:  "mcpwasm stack test (deny)",
				Registry:    reg2,
				Courier:     newFormCourier(t, reg2, redirectURL, false),
				Interactive: true,
			})
			if err != nil {
				t.Fatal(err)
			}
			_, err = client.Connect(ctx, &mcp.StreamableClientTransport{
				Endpoint:     s.MCPURL,
				HTTPClient:   &http.Client{Transport: h2.ResourceTransport(http.DefaultTransport), Timeout: 30 * time.Second},
				OAuthHandler: h2,
			}, nil)
			if !errors.Is(err, oauth.ErrDeclined) {
				t.Fatalf("connecting after a denied consent: %v, want ErrDeclined", err)
			}
		})
	}
}

// checkStackCORS checks that the AS's token, revocation and registration
// endpoints and the MCP server answer a preflight from the page's origin
// as a browser needs.
func checkStackCORS(t *testing.T, issuer, mcpURL, pageOrigin string) {
	t.Helper()
	resp, err := http.Get(issuer + "/.well-known/openid-configuration")
	if err != nil {
		t.Fatal(err)
	}
	var meta map[string]any
	err = json.NewDecoder(resp.Body).Decode(&meta)
	resp.Body.Close()
	if err != nil {
		t.Fatalf("the AS metadata: %v", err)
	}
	preflight := func(u, headers string) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodOptions, u, nil)
		req.Header.Set("Origin", pageOrigin)
		req.Header.Set("Access-Control-Request-Method", "POST")
		req.Header.Set("Access-Control-Request-Headers", headers)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if got := resp.Header.Get("Access-Control-Allow-Origin"); got != pageOrigin && got != "*" {
			t.Errorf("a preflight from %s to %s: %d, Access-Control-Allow-Origin %q", pageOrigin, u, resp.StatusCode, got)
		}
	}
	for _, k := range []string{"token_endpoint", "revocation_endpoint", "registration_endpoint"} {
		u, _ := meta[k].(string)
		if u == "" {
			t.Errorf("the AS metadata has no %s", k)
			continue
		}
		preflight(u, "content-type")
	}
	preflight(mcpURL, "authorization,content-type,mcp-protocol-version,mcp-session-id")
}

// refreshWith tries a refresh with g's refresh token at its token
// endpoint and returns the status and body.
func refreshWith(t *testing.T, g *oauth.Grant) (int, string) {
	t.Helper()
	resp, err := http.PostForm(g.TokenEndpoint, url.Values{
		"grant_type":    {"refresh_token"},
		"refresh_token": {g.RefreshToken},
		"client_id":     {g.ClientID},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	return resp.StatusCode, string(b)
}

func toolText(res *mcp.CallToolResult) string {
	var parts []string
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			parts = append(parts, tc.Text)
		}
	}
	return strings.Join(parts, "")
}

// TestStackOIDCConsentBrowser signs in to each stack in Chromium with the
// stack's Consent func: package oauth (natively) sends the authorization
// URL to a tab, Consent logs in and approves, and the tab's redirect to
// the page's oauth/callback.html is delivered to the flow. A second client
// is then denied in the same browser context, where the login is remembered
// and only the consent form is shown.
func TestStackOIDCConsentBrowser(t *testing.T) {
	onePass(t)
	for _, st := range []stack{oidcProviderStack, hydraStack} {
		t.Run(st.name, func(t *testing.T) {
			reg := oauth.NewRegistry()
			page := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path != "/oauth/callback.html" {
					http.NotFound(w, r)
					return
				}
				cb := "http://" + r.Host + r.URL.RequestURI()
				go func() { _ = reg.Deliver(cb) }()
				fmt.Fprint(w, "<!doctype html><title>callback</title>signed in")
			}))
			t.Cleanup(page.Close)
			s := st.start(t, page.URL)
			for i, approve := range []bool{true, false} {
				ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
				defer cancel()
				authURLs := make(chan string, 1)
				h, err := oauth.New(oauth.Config{
					ResourceURL: s.MCPURL,
					HTTPClient:  &http.Client{Transport: http.DefaultTransport, Timeout: 30 * time.Second},
					RedirectURL: page.URL + "/oauth/callback.html",
					ClientID:    clientIDOf(s.ClientOpts),
					ClientName:  fmt.Sprintf("mcpwasm browser consent %d", i),
					Registry:    reg,
					Courier: oauth.CourierFunc(func(_ context.Context, authURL string) error {
						authURLs <- authURL
						return nil
					}),
					Interactive: true,
				})
				if err != nil {
					t.Fatal(err)
				}
				client := mcp.NewClient(&mcp.Implementation{Name: "mcpwasm-stack-test", Version: "0.1.0"}, nil)
				connected := make(chan error, 1)
				go func() {
					session, err := client.Connect(ctx, &mcp.StreamableClientTransport{
						Endpoint:     s.MCPURL,
						HTTPClient:   &http.Client{Transport: h.ResourceTransport(http.DefaultTransport), Timeout: 30 * time.Second},
						OAuthHandler: h,
					}, nil)
					if err == nil {
						var res *mcp.CallToolResult
						res, err = session.CallTool(ctx, &mcp.CallToolParams{Name: "add", Arguments: map[string]any{"a": 1, "b": 2}})
						if err == nil && toolText(res) != "3" {
							err = fmt.Errorf("add(1, 2) = %q", toolText(res))
						}
						session.Close()
					}
					connected <- err
				}()
				var authURL string
				select {
				case authURL = <-authURLs:
				case err := <-connected:
					t.Fatalf("the flow ended before an authorization URL: %v", err)
				case <-ctx.Done():
					t.Fatal("no authorization URL within 2 minutes")
				}
				win, err := browser.NewWindow(ctx)
				if err != nil {
					t.Fatalf("opening a window: %v", err)
				}
				if err := win.Navigate(ctx, authURL); err != nil {
					t.Fatalf("opening the authorization URL: %v", err)
				}
				s.Consent(t, ctx, win, approve)
				err = <-connected
				win.Close()
				if approve && err != nil {
					t.Fatalf("after approving in the browser: %v", err)
				}
				if !approve && !errors.Is(err, oauth.ErrDeclined) {
					t.Fatalf("after denying in the browser: %v, want ErrDeclined", err)
				}
			}
		})
	}
}

// onePass skips a test that involves no runtime of the page and no
// engine's own behaviour (package oauth natively, or a stack's forms
// alone) in every pass but Chromium's default runtime, where it runs.
func onePass(t *testing.T) {
	t.Helper()
	if browser.Name() != "chromium" || runtimeMode() != "auto" {
		t.Skipf("involves no runtime of the page and nothing engine-specific; runs in the chromium auto pass (this is %s %s)", browser.Name(), runtimeMode())
	}
}
