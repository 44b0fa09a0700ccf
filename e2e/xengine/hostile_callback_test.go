package xengine

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/mcpwasm/mcpwasm/demo/authserver"
	"github.com/mcpwasm/mcpwasm/devkit/devserver"
	"github.com/mcpwasm/mcpwasm/devkit/hostile"
)

// editCallback rewrites the query of the redirect the AS's authorization
// endpoint answers with (AutoApprove: straight back to the callback page
// with a code), as a hostile or broken AS would send it.
func editCallback(fn func(h *hostileWorld, q url.Values)) authTamper {
	return authTamper{AS: func(h *hostileWorld, hd http.Handler) http.Handler {
		return hostile.Tamper(hd, authserver.AuthorizePath, func(status int, hdr http.Header, body []byte) (int, []byte) {
			u, err := url.Parse(hdr.Get("Location"))
			if err != nil || hdr.Get("Location") == "" {
				return status, body
			}
			q := u.Query()
			fn(h, q)
			u.RawQuery = q.Encode()
			hdr.Set("Location", u.String())
			return status, body
		})
	}}
}

// TestHostileCallback: the authorization response that comes back through
// oauth/callback.html is hostile. No token request is made, the callback
// page shows nothing from the URL as markup, nothing is stored, and the
// runtime still works.
func TestHostileCallback(t *testing.T) {
	for _, c := range []struct {
		name   string
		tamper authTamper
		opts   string
		code   string
		msg    string
	}{
		{name: "callback with the wrong state → not taken, no token request, declined when the window closes",
			tamper: editCallback(func(_ *hostileWorld, q url.Values) { q.Set("state", "WRONGSTATEWRONGSTATEWRONGS") }),
			opts:   `{ authTimeoutMs: 20000, severedPopupTimeoutMs: 3000 }`, code: "declined"},
		{name: "callback without state → not taken, no token request, timeout",
			tamper: editCallback(func(_ *hostileWorld, q url.Values) { q.Del("state") }),
			// Long enough for the popup to reach the callback page on 2 busy cores.
			opts: `{ authTimeoutMs: 12000 }`, code: "timeout"},
		{name: "callback iss names another issuer → state_mismatch",
			tamper: editCallback(func(h *hostileWorld, q url.Values) { q.Set("iss", h.Attacker.URL) }),
			opts:   `{ authTimeoutMs: 20000 }`, code: "state_mismatch", msg: "issuer"},
		{name: "callback without iss from an AS that advertises it → state_mismatch",
			tamper: editCallback(func(_ *hostileWorld, q url.Values) { q.Del("iss") }),
			opts:   `{ authTimeoutMs: 20000 }`, code: "state_mismatch", msg: "iss"},
		{name: "callback error_description with markup → declined, shown as text, no script",
			tamper: editCallback(func(_ *hostileWorld, q url.Values) {
				q.Del("code")
				q.Set("error", "access_denied")
				q.Set("error_description", xssPayload)
			}),
			opts: `{ authTimeoutMs: 20000 }`, code: "declined"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			h := newHostileWorld(t, devserver.AuthConfig{AutoApprove: true}, c.tamper)
			r := h.login(c.opts)
			wantErr(t, r, c.code, c.msg)
			if r.Error != nil {
				sanitised(t, r.Error.Message)
			}
			if n := h.snapshot()["token"]; n != 0 {
				t.Errorf("%d token request(s); want 0", n)
			}
			// The popup reached the callback page (the server served it)
			// and nothing from the URL became markup there: no injected
			// image was fetched, and none was in the page while the spy
			// could see it (an engine may throttle the spy's timer while
			// the popup has the focus, so it may not see the page at all).
			if h.Page.Count(func(q hostile.Request) bool { return q.Path == "/oauth/callback.html" }) == 0 {
				t.Errorf("the popup never loaded the callback page")
			}
			if n := h.Page.Count(func(q hostile.Request) bool { return strings.HasSuffix(q.Path, "/x") }); n != 0 {
				t.Errorf("the callback page fetched an injected image %d time(s)", n)
			}
			var images []int
			h.eval(`window.__popupSeen.filter((s) => s.href.includes("/oauth/callback.html")).map((s) => s.images)`, &images)
			for _, n := range images {
				if n != 0 {
					t.Errorf("the callback page rendered %d image(s) from the URL", n)
				}
			}
			h.noGrant(false)
			h.noScript()
			h.popupsClosed()
			h.attackerSawNothing()
			h.stillUsable()
		})
	}
}

// TestHostileCallbackTwoCodes: while a sign-in waits on the consent page,
// callback URLs with its state and forged codes are delivered through
// mcp.handleCallback. The replay of a used callback URL is
// TestReplayedCallbackIsRejected.
func TestHostileCallbackTwoCodes(t *testing.T) {
	// start opens the consent page and returns callback URLs for its state.
	start := func(t *testing.T) (*hostileWorld, func(code string) string) {
		h := newHostileWorld(t, devserver.AuthConfig{}, authTamper{})
		if _, r := h.consentPopup(`{ authTimeoutMs: 20000 }`); r != nil {
			t.Fatalf("the consent page did not show: %s", r)
		}
		state := h.lastState()
		if state == "" {
			t.Fatal("the AS saw no state")
		}
		return h, func(code string) string {
			return fmt.Sprintf("%s/oauth/callback.html?%s", h.PageURL, url.Values{"code": {code}, "state": {state}, "iss": {h.AS.Issuer()}}.Encode())
		}
	}
	t.Run("two codes for one state → one taken, the other not, 1 token request, token_failed", func(t *testing.T) {
		t.Parallel()
		h, cb := start(t)
		var got []string
		h.eval(fmt.Sprintf(`(async () => {
			const rs = await Promise.allSettled([mcp.handleCallback(%q), mcp.handleCallback(%q)]);
			return rs.map((r) => r.status === "fulfilled" ? String(r.value) : r.reason.code);
		})()`, cb("forged-code-one"), cb("forged-code-two")), &got)
		taken, refused := 0, 0
		for _, g := range got {
			switch g {
			case "true", "token_failed": // taken (see the next case for which)
				taken++
			case "false":
				refused++
			}
		}
		if taken != 1 || refused != 1 {
			t.Errorf("handleCallback() of two codes = %v; want one taken and one false", got)
		}
		wantErr(t, h.awaitLogin(), "token_failed")
		if n := h.snapshot()["token"]; n != 1 {
			t.Errorf("%d token requests; want 1", n)
		}
		h.popupsClosed()
		var again bool
		h.eval(fmt.Sprintf(`mcp.handleCallback(%q)`, cb("forged-code-three")), &again)
		if again {
			t.Error("a third callback with the ended sign-in's state was taken")
		}
		if n := h.snapshot()["token"]; n != 1 {
			t.Errorf("%d token requests after a third callback; want still 1", n)
		}
		h.noGrant(false)
		h.noScript()
		h.stillUsable()
	})
	t.Run("handleCallback of a forged code for a waiting popup sign-in → rejects token_failed", func(t *testing.T) {
		t.Parallel()
		h, cb := start(t)
		var got string
		h.eval(fmt.Sprintf(`mcp.handleCallback(%q).then((v) => String(v), (e) => e.code)`, cb("forged-code")), &got)
		if got != "token_failed" {
			t.Errorf("handleCallback() = %s; want a token_failed rejection", got)
		}
		wantErr(t, h.awaitLogin(), "token_failed")
		h.popupsClosed()
		h.noGrant(false)
	})
}
