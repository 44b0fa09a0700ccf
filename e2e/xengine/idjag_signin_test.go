package xengine

import (
	"strconv"
	"strings"
	"testing"

	"github.com/mcpwasm/mcpwasm/demo/authserver"
	"github.com/mcpwasm/mcpwasm/devkit/devserver"
)

// TestIDJAGSignInWithoutPopup: a page holding its user's SSO identity
// connects and calls a tool: one token exchange at the IdP, one JWT bearer
// grant, no authorization request, no window.
func TestIDJAGSignInWithoutPopup(t *testing.T) {
	eitherRuntime(t)
	parallel(t)
	e := newIDJAGWorld(t)
	var got struct {
		Sum        float64 `json:"sum"`
		State      string  `json:"state"`
		Assertions int     `json:"assertions"`
		Authorize  string  `json:"authorize"`
	}
	e.newClient("corp-app")
	e.eval(`(async () => {
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
	if opened := e.opensIn(e.win); len(opened) != 0 {
		t.Errorf("windows opened: %v; want none", opened)
	}
	e.noPageErrors()
}

// TestIDJAGIdPRefuses: an ID token the IdP did not issue for this app is
// refused at the exchange; connect() says so without quoting the
// assertion, and nothing reaches the authorization server's token
// endpoint.
func TestIDJAGIdPRefuses(t *testing.T) {
	eitherRuntime(t)
	parallel(t)
	e := newIDJAGWorld(t)
	var got struct {
		Code    string `json:"code"`
		Message string `json:"message"`
		Detail  string `json:"detail"`
		State   string `json:"state"`
	}
	e.newClient("no-such-app")
	e.eval(`c.connect().then(() => ({ code: "none" }), (e) => ({ code: e.code, message: e.message, detail: e.detail, state: c.state }))`, &got)
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
	if opened := e.opensIn(e.win); len(opened) != 0 {
		t.Errorf("windows opened: %v; want none", opened)
	}
}

// TestGrantsRefusedInAPage: the grants of servers are refused at client()
// with the reason and what to do instead.
func TestGrantsRefusedInAPage(t *testing.T) {
	eitherRuntime(t)
	parallel(t)
	w := newWorld(t, devserver.AuthConfig{})
	var got []jsErr
	w.eval(`["client_credentials", "workload_identity"].map((grant) => {
		try { mcp.client(`+strconv.Quote(w.MCPURL)+`, { grant, clientId: "svc", ...(grant === "client_credentials" ? { clientSecret: "s" } : {}) }); return { code: "none" }; }
		catch (e) { return { name: e.name, code: e.code, message: e.message }; }
	})`, &got)
	if len(got) != 2 {
		t.Fatalf("client() for 2 server grants: %+v", got)
	}
	for i, want := range []string{"client secret or private key would be public", "workload identity belongs to a server"} {
		if got[i].Code != "invalid_argument" || !strings.Contains(got[i].Message, want) || !strings.Contains(got[i].Message, "Run that grant on a server") {
			t.Errorf("%+v; want invalid_argument saying %q and what to do", got[i], want)
		}
	}
}
