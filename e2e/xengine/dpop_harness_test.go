package xengine

import (
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/mcpwasm/mcpwasm/demo"
	"github.com/mcpwasm/mcpwasm/demo/authserver"
	"github.com/mcpwasm/mcpwasm/demo/idp"
	"github.com/mcpwasm/mcpwasm/devkit/devserver"
	"github.com/mcpwasm/mcpwasm/e2e/internal/respstatus"
)

// mcpSeen is one request the protected MCP server answered: the scheme of
// its Authorization header, whether it had a DPoP proof, the status and
// the challenge.
type mcpSeen struct {
	scheme    string
	proof     bool
	status    int
	challenge string
	// bareProbe: a server/discover without the Mcp-Method header, which
	// a first connect of an unknown era sends and the server answers 400
	// (header mismatch) before the probe is sent again with it.
	bareProbe bool
}

func (s mcpSeen) String() string {
	return s.scheme + " proof=" + strconv.FormatBool(s.proof) + " " + strconv.Itoa(s.status) + " " + s.challenge
}

// wireLog records what the protected MCP server was sent, and the last
// access token (the token a thief on the wire would take).
type wireLog struct {
	mu    sync.Mutex
	seen  []mcpSeen
	token string
}

func (l *wireLog) all() []mcpSeen {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]mcpSeen(nil), l.seen...)
}

func (l *wireLog) stolen() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.token
}

func (l *wireLog) record(h http.Handler) http.Handler {
	return http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodOptions || r.URL.Path != demo.StreamablePath {
			h.ServeHTTP(rw, r)
			return
		}
		scheme, token, _ := strings.Cut(r.Header.Get("Authorization"), " ")
		sw := &respstatus.Writer{ResponseWriter: rw}
		h.ServeHTTP(sw, r)
		l.mu.Lock()
		defer l.mu.Unlock()
		l.seen = append(l.seen, mcpSeen{scheme: scheme, proof: r.Header.Get("DPoP") != "",
			status: sw.Status, challenge: rw.Header().Get("WWW-Authenticate"),
			bareProbe: r.Header.Get("Mcp-Method") == "" && r.Header.Get("Mcp-Protocol-Version") >= "2026-07-28"})
		if token != "" {
			l.token = token
		}
	})
}

// newWiredWorld is newWorld with the protected MCP server seen through a
// wireLog: the page reaches it through a recording reverse proxy on an
// origin of its own, which is the server's resource (its URL in the
// tokens' audience and in the proofs' htu), so the server is the same
// server at that address.
func newWiredWorld(t *testing.T, ac devserver.AuthConfig) (*world, *wireLog) {
	t.Helper()
	wire := &wireLog{}
	var proxied string
	w := newServersWith(t, ac, os.DirFS(webDir), nil, func(_ *devserver.Config, pc *devserver.PageConfig, _ string) {
		backend, err := url.Parse(pc.MCPURL)
		if err != nil {
			t.Fatal(err)
		}
		backend.Path = ""
		proxy := &httputil.ReverseProxy{Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(backend)
			pr.Out.Host = pr.In.Host // the proof's htu names the proxy
		}, ErrorHandler: func(rw http.ResponseWriter, r *http.Request, err error) {
			// A page that left (a reload ends its event stream) is
			// answered by nobody, not with a 502 the log would count.
			if r.Context().Err() == nil {
				http.Error(rw, "xengine: the MCP server's proxy: "+err.Error(), http.StatusBadGateway)
			}
		}}
		proxied = serve(t, wire.record(proxy)).URL + demo.StreamablePath
		pc.MCPURL = proxied
	})
	w.MCPURL = proxied
	w.open()
	w.navigate(w.win, w.PageURL+"/e2e/blank.html")
	w.load(w.win)
	return w, wire
}

// checkDPoPWire fails the test for any request since wire entry from that
// carried a token other than with the DPoP scheme and a proof, or that
// was refused for another reason than a nonce challenge or the first
// connect's bare probe; it returns the nonce challenges it saw.
func checkDPoPWire(t *testing.T, wire *wireLog, when string, from int) (nonces int) {
	t.Helper()
	seen := wire.all()[from:]
	var ok int
	for _, s := range seen {
		switch {
		case s.status == 0:
			// The page left before an answer (a reload ended its stream).
		case s.scheme == "":
			// The first request of a sign-in, before there is a token.
		case !strings.EqualFold(s.scheme, "DPoP") || !s.proof:
			t.Errorf("%s: the MCP server saw Authorization %q (proof %v); want DPoP with a proof", when, s.scheme, s.proof)
		case s.status == http.StatusOK || s.status == http.StatusAccepted:
			ok++
		case s.status == http.StatusUnauthorized && strings.Contains(s.challenge, `error="use_dpop_nonce"`):
			nonces++
		case s.status == http.StatusBadRequest && s.bareProbe:
			// The first connect's probe, sent again with its headers.
		case s.status >= 400:
			t.Errorf("%s: a DPoP request was refused: %d %q", when, s.status, s.challenge)
		}
	}
	if ok == 0 {
		t.Errorf("%s: no DPoP request was accepted (%v)", when, seen)
	}
	t.Logf("%s: %d DPoP requests accepted, %d nonce challenges", when, ok, nonces)
	return nonces
}

// openDBJS defines window.openDB(), which opens mcpwasm's IndexedDB
// database as the page's origin holds it (whichever runtime wrote it).
const openDBJS = `void (window.openDB = () => new Promise((res, rej) => {
	const r = indexedDB.open("mcpwasm"); r.onsuccess = () => res(r.result); r.onerror = () => rej(r.error); }))`

// idjagWorld is enterprise-managed authorization end to end, each on its
// own loopback origin: the world's page and window, the demo identity
// provider (the page's single sign-on), a demo authorization server
// trusting it, and a demo MCP server protected by that authorization
// server. The page's app is corp-app at the IdP and mcp-app
// (client_secret_basic) at the authorization server.
type idjagWorld struct {
	*world
	IdP *idp.IdP
	AS  *authserver.Server
}

func newIDJAGWorld(t *testing.T) *idjagWorld {
	t.Helper()
	w := newServers(t, devserver.AuthConfig{}, os.DirFS(webDir), nil)
	var dIdP, dAS, dMCP delegate
	idpSrv, asSrv, mcpSrv := serve(t, w.tracing("idp", &dIdP)), serve(t, w.tracing("idjag-as", &dAS)), serve(t, w.tracing("idjag-mcp", &dMCP))
	e := &idjagWorld{world: w}
	// The world's own authorization server and MCP server stay unused.
	e.MCPURL, e.ASURL = mcpSrv.URL+demo.StreamablePath, asSrv.URL
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
			RedirectURIs: []string{w.PageURL + "/oauth/callback.html"}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	dIdP.h, dAS.h = e.IdP.Handler(), e.AS.Handler()
	dMCP.h = demo.ProtectedHandler(demo.Options{}, demo.Protection{
		Issuer: e.AS.Issuer(), Verifier: e.AS.Verifier(e.MCPURL), Resource: e.MCPURL, Scopes: []string{authserver.ScopeTools},
	})
	w.open()
	w.navigate(w.win, w.PageURL+"/e2e/blank.html")
	w.load(w.win)
	return e
}

// newClient makes window.c with identityAssertion fetching the demo
// user's ID token from the IdP's single sign-on for the IdP application
// app (window.assertions counts the calls).
func (e *idjagWorld) newClient(app string) {
	e.t.Helper()
	e.eval(`void (window.c = mcp.client(`+strconv.Quote(e.MCPURL)+`, {
		storage: "memory",
		clientId: "mcp-app", clientSecret: "mcp-app-secret",
		idpTokenEndpoint: `+strconv.Quote(e.IdP.TokenEndpoint())+`,
		idpClientId: "corp-app",
		identityAssertion: async () => {
			window.assertions = (window.assertions || 0) + 1;
			const r = await fetch(`+strconv.Quote(e.IdP.Issuer()+"/sso")+`, { method: "POST", body: new URLSearchParams({ client_id: `+strconv.Quote(app)+` }) });
			if (!r.ok) return "not-signed-in.x.y";
			return (await r.json()).id_token;
		},
	}))`, nil)
}
