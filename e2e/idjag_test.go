package e2e

import (
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"

	"github.com/mcpwasm/mcpwasm/demo"
	"github.com/mcpwasm/mcpwasm/demo/authserver"
	"github.com/mcpwasm/mcpwasm/demo/idp"
	"github.com/mcpwasm/mcpwasm/devkit/devserver"
	"github.com/mcpwasm/mcpwasm/devkit/webserve"
)

// idjagEnv is enterprise-managed authorization end to end, each on its own
// loopback origin: the page, the demo identity provider (the page's single
// sign-on), the demo authorization server trusting it, and the demo MCP
// server protected by that authorization server. The page's app is
// corp-app at the IdP and mcp-app (client_secret_basic) at the
// authorization server.
type idjagEnv struct {
	*env
	IdP   *idp.IdP
	AS    *authserver.Server
	pages sync.Map // target IDs of the pages opened in the test's browser context
}

func newIDJAGEnv(t *testing.T) *idjagEnv {
	t.Helper()
	e := &idjagEnv{env: &env{t: t}}
	mux := http.NewServeMux()
	mux.HandleFunc("/e2e/blank.html", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Write([]byte(blankPage))
	})
	mux.Handle("/", webserve.Handler(devserver.Site(os.DirFS(webDir))))
	page := httptest.NewServer(mux)
	t.Cleanup(page.Close)
	e.PageURL = page.URL

	var dIdP, dAS, dMCP delegate
	idpSrv, asSrv, mcpSrv := httptest.NewServer(&dIdP), httptest.NewServer(&dAS), httptest.NewServer(&dMCP)
	for _, s := range []*httptest.Server{idpSrv, asSrv, mcpSrv} {
		t.Cleanup(s.Close)
	}
	e.MCPBase, e.MCPURL = mcpSrv.URL, mcpSrv.URL+demo.StreamablePath
	var err error
	e.IdP, err = idp.New(idp.Config{Issuer: idpSrv.URL, Clients: []idp.Client{{ID: "corp-app", MCPClientID: "mcp-app"}}})
	if err != nil {
		t.Fatal(err)
	}
	e.AS, err = authserver.New(authserver.Config{
		Issuer:            asSrv.URL,
		Resources:         []string{e.MCPURL},
		IdentityProviders: []authserver.IdentityProvider{{Issuer: e.IdP.Issuer(), Key: e.IdP.PublicKey()}},
		Clients: []authserver.Client{{ID: "mcp-app", Secret: "mcp-app-secret", AuthMethod: authserver.AuthClientSecretBasic,
			RedirectURIs: []string{page.URL + "/oauth/callback.html"}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	dIdP.h, dAS.h = e.IdP.Handler(), e.AS.Handler()
	dMCP.h = demo.ProtectedHandler(demo.Options{}, demo.Protection{
		Issuer: e.AS.Issuer(), Verifier: e.AS.Verifier(e.MCPURL), Resource: e.MCPURL, Scopes: []string{authserver.ScopeTools},
	})

	e.openTab()
	// Every page target of this browser context from now on: the tab is
	// already open, so any one is a popup.
	bc := chromedp.FromContext(e.ctx).BrowserContextID
	chromedp.ListenBrowser(e.ctx, func(ev any) {
		if c, ok := ev.(*target.EventTargetCreated); ok && c.TargetInfo.Type == "page" && c.TargetInfo.BrowserContextID == bc {
			e.pages.Store(c.TargetInfo.TargetID, c.TargetInfo.URL)
		}
	})
	e.eval(`(async () => {
		const m = await import("/mcp.js");
		window.MCPError = m.MCPError;
		window.mcp = await m.load();
	})()`, nil)
	return e
}

// popups lists the pages opened since the tab.
func (e *idjagEnv) popups() []string {
	var out []string
	e.pages.Range(func(k, v any) bool { out = append(out, string(k.(target.ID))+" "+v.(string)); return true })
	return out
}

// clientJS makes window.c with identityAssertion fetching the demo user's
// ID token from the IdP's single sign-on (for the IdP application app).
func (e *idjagEnv) clientJS(app string) string {
	return `window.c = mcp.client(` + quote(e.MCPURL) + `, {
		storage: "memory",
		clientId: "mcp-app", clientSecret: "mcp-app-secret",
		idpTokenEndpoint: ` + quote(e.IdP.TokenEndpoint()) + `,
		idpClientId: "corp-app",
		identityAssertion: async () => {
			window.assertions = (window.assertions || 0) + 1;
			const r = await fetch(` + quote(e.IdP.Issuer()+"/sso") + `, { method: "POST", body: new URLSearchParams({ client_id: ` + quote(app) + ` }) });
			if (!r.ok) return "not-signed-in.x.y";
			return (await r.json()).id_token;
		},
	});`
}

func quote(s string) string { return `"` + strings.ReplaceAll(s, `"`, `\"`) + `"` }

// TestIDJAGSignInWithoutPopup: a page holding its user's SSO identity
// connects and calls a tool: one token exchange at the IdP, one JWT bearer
// grant, no authorization request, no window.
func TestIDJAGSignInWithoutPopup(t *testing.T) {
	e := newIDJAGEnv(t)
	var got struct {
		Sum        float64 `json:"sum"`
		State      string  `json:"state"`
		Assertions int     `json:"assertions"`
		Authorize  string  `json:"authorize"`
	}
	e.eval(e.clientJS("corp-app")+`
	(async () => {
		await c.connect();
		const r = await c.callTool("add", { a: 20, b: 22 });
		// authorize() outside a gesture: nothing to block, no window.
		const authorize = await c.authorize().then(() => "ok", (e) => e.code);
		return { sum: r.structuredContent.sum, state: c.state, assertions: window.assertions, authorize };
	})()`, &got)
	if got.Sum != 42 || got.State != "connected" || got.Authorize != "ok" {
		t.Fatalf("sum %v, state %q, authorize() %q; want 42, connected, ok", got.Sum, got.State, got.Authorize)
	}
	if n := e.IdP.Count("exchange"); n != 2 || got.Assertions != 2 {
		t.Errorf("%d token exchanges for %d assertions; want 2 (connect, authorize)", n, got.Assertions)
	}
	if n := e.AS.Count(authserver.EventTokenIDJAG); n != 2 {
		t.Errorf("%d JWT bearer grants; want 2", n)
	}
	if n := e.AS.Count(authserver.EventAuthorize); n != 0 {
		t.Errorf("%d authorization requests; want none", n)
	}
	if p := e.popups(); len(p) != 0 {
		t.Errorf("windows opened: %v; want none", p)
	}
}

// TestIDJAGIdPRefuses: an ID token the IdP did not issue for this app is
// refused at the exchange; connect() says so, and nothing reaches the
// authorization server's token endpoint.
func TestIDJAGIdPRefuses(t *testing.T) {
	e := newIDJAGEnv(t)
	var got struct {
		Code    string `json:"code"`
		Message string `json:"message"`
		Detail  string `json:"detail"`
		State   string `json:"state"`
	}
	e.eval(e.clientJS("no-such-app")+`
	c.connect().then(() => ({ code: "none" }), (e) => ({ code: e.code, message: e.message, detail: e.detail, state: c.state }))`, &got)
	if got.Code != "token_failed" || !strings.Contains(got.Detail, "identity provider rejected the identity assertion") {
		t.Fatalf("connect(): %+v; want token_failed whose detail says the identity provider rejected the assertion", got)
	}
	if strings.Contains(got.Detail, "not-signed-in") || strings.Contains(got.Message, "not-signed-in") {
		t.Errorf("the error quotes the assertion: %+v", got)
	}
	if n := e.IdP.Count("exchange_refused"); n == 0 {
		t.Errorf("the IdP refused nothing")
	}
	if n := e.AS.Count(authserver.EventTokenIDJAG); n != 0 {
		t.Errorf("%d JWT bearer grants after a refused exchange; want none", n)
	}
	if p := e.popups(); len(p) != 0 {
		t.Errorf("windows opened: %v; want none", p)
	}
}

// TestGrantsRefusedInAPage: the grants of servers are refused at client()
// with the reason.
func TestGrantsRefusedInAPage(t *testing.T) {
	e := newIDJAGEnv(t)
	var got []jsErr
	e.eval(`["client_credentials", "workload_identity"].map((grant) => {
		try { mcp.client(`+quote(e.MCPURL)+`, { grant, clientId: "svc", ...(grant === "client_credentials" ? { clientSecret: "s" } : {}) }); return { code: "none" }; }
		catch (e) { return { name: e.name, code: e.code, message: e.message }; }
	})`, &got)
	for i, want := range []string{"client secret or private key would be public", "workload identity belongs to a server"} {
		if got[i].Code != "invalid_argument" || !strings.Contains(got[i].Message, want) || !strings.Contains(got[i].Message, "Run that grant on a server") {
			t.Errorf("%+v; want invalid_argument saying %q and what to do", got[i], want)
		}
	}
}
