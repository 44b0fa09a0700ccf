package e2e

import (
	"fmt"
	"net/http"
	"net/url"
	"testing"

	"github.com/mcpwasm/mcpwasm/demo/authserver"
	"github.com/mcpwasm/mcpwasm/devkit/devserver"
	"github.com/mcpwasm/mcpwasm/devkit/hostile"
)

// editCallback rewrites the query of the redirect the AS's authorization
// endpoint answers with (AutoApprove: straight back to the callback page
// with a code), as a hostile or broken AS would send it.
func editCallback(fn func(e *hostileAuthEnv, q url.Values)) authTamper {
	return authTamper{AS: func(e *hostileAuthEnv, h http.Handler) http.Handler {
		return hostile.Tamper(h, authserver.AuthorizePath, func(status int, hd http.Header, body []byte) (int, []byte) {
			u, err := url.Parse(hd.Get("Location"))
			if err != nil || hd.Get("Location") == "" {
				return status, body
			}
			q := u.Query()
			fn(e, q)
			u.RawQuery = q.Encode()
			hd.Set("Location", u.String())
			return status, body
		})
	}}
}

// TestHostileCallback: the authorization response that comes back through
// oauth/callback.html is hostile. The replay of a used callback URL is
// TestReplayedCallbackIsRejected (auth_test.go).
func TestHostileCallback(t *testing.T) {
	for _, c := range []struct {
		name   string
		tamper authTamper
		opts   string
		code   string
		msg    string
	}{
		{name: "callback with the wrong state → not taken, no token request, declined when the window closes",
			tamper: editCallback(func(_ *hostileAuthEnv, q url.Values) { q.Set("state", "WRONGSTATEWRONGSTATEWRONGS") }),
			opts:   `{ authTimeoutMs: 20000, severedPopupTimeoutMs: 3000 }`, code: "declined"},
		{name: "callback without state → not taken, no token request, timeout",
			tamper: editCallback(func(_ *hostileAuthEnv, q url.Values) { q.Del("state") }),
			// Long enough for the popup to reach the callback page on 2 busy cores.
			opts: `{ authTimeoutMs: 12000 }`, code: "timeout"},
		{name: "callback iss names another issuer → state_mismatch",
			tamper: editCallback(func(e *hostileAuthEnv, q url.Values) { q.Set("iss", e.Attacker.URL) }),
			opts:   `{ authTimeoutMs: 20000 }`, code: "state_mismatch", msg: "issuer"},
		{name: "callback without iss from an AS that advertises it → state_mismatch",
			tamper: editCallback(func(_ *hostileAuthEnv, q url.Values) { q.Del("iss") }),
			opts:   `{ authTimeoutMs: 20000 }`, code: "state_mismatch", msg: "iss"},
		{name: "callback error_description with markup → declined, shown as text, no script",
			tamper: editCallback(func(_ *hostileAuthEnv, q url.Values) {
				q.Del("code")
				q.Set("error", "access_denied")
				q.Set("error_description", xssPayload)
			}),
			opts: `{ authTimeoutMs: 20000 }`, code: "declined"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			e := newHostileAuthEnv(t, devserver.AuthConfig{AutoApprove: true}, c.tamper)
			r := e.login(c.opts)
			if c.msg != "" {
				wantErr(t, r, c.code, c.msg)
			} else {
				wantErr(t, r, c.code)
			}
			if r.Error != nil {
				sanitised(t, r.Error.Message)
			}
			if n := e.snapshot()["token"]; n != 0 {
				t.Errorf("%d token request(s); want 0", n)
			}
			// What the callback page showed, as a person saw it.
			var seen []struct {
				Href   string `json:"href"`
				Text   string `json:"text"`
				Images int    `json:"images"`
			}
			e.eval(`window.__popupSeen.filter((s) => s.href.includes("/oauth/callback.html"))`, &seen)
			if len(seen) == 0 {
				t.Errorf("the popup was never seen on the callback page")
			}
			for _, s := range seen {
				if s.Images != 0 {
					t.Errorf("the callback page rendered %d image(s) from the URL", s.Images)
				}
			}
			e.noGrant(false)
			e.noScript()
			e.popupsClosed()
			e.attackerSawNothing()
			e.stillUsable(e.Good)
		})
	}
}

// TestHostileCallbackTwoCodes: while a sign-in waits on the consent page,
// two callback URLs with its state and different (forged) codes are
// delivered through mcp.handleCallback at once. One is taken, the other is
// not; one token request in all (the AS refuses the forged code, so the
// sign-in ends token_failed), and a third delivery is not taken either.
func TestHostileCallbackTwoCodes(t *testing.T) {
	// start opens the consent page and returns callback URLs for its state.
	start := func(t *testing.T) (*hostileAuthEnv, func(code string) string) {
		e := newHostileAuthEnv(t, devserver.AuthConfig{}, authTamper{})
		e.openConsent(`{ authTimeoutMs: 20000 }`)
		state := e.lastState()
		if state == "" {
			t.Fatal("the AS saw no state")
		}
		return e, func(code string) string {
			return fmt.Sprintf("%s/oauth/callback.html?%s", e.PageURL, url.Values{"code": {code}, "state": {state}, "iss": {e.AS.Issuer()}}.Encode())
		}
	}
	t.Run("two codes for one state → one taken, the other not, 1 token request, token_failed", func(t *testing.T) {
		t.Parallel()
		e, cb := start(t)
		var got []string
		e.eval(fmt.Sprintf(`(async () => {
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
		r := e.awaitLogin()
		wantErr(t, r, "token_failed")
		if n := e.snapshot()["token"]; n != 1 {
			t.Errorf("%d token requests; want 1", n)
		}
		e.popupsClosed()
		var again bool
		e.eval(fmt.Sprintf(`mcp.handleCallback(%q)`, cb("forged-code-three")), &again)
		if again {
			t.Error("a third callback with the ended sign-in's state was taken")
		}
		if n := e.snapshot()["token"]; n != 1 {
			t.Errorf("%d token requests after a third callback; want still 1", n)
		}
		e.noGrant(false)
		e.noScript()
		e.stillUsable(e.Good)
	})
	t.Run("handleCallback of a forged code for a waiting popup sign-in → rejects token_failed", func(t *testing.T) {
		t.Parallel()
		e, cb := start(t)
		var got string
		e.eval(fmt.Sprintf(`mcp.handleCallback(%q).then((v) => String(v), (e) => e.code)`, cb("forged-code")), &got)
		if got != "token_failed" {
			t.Errorf("handleCallback() = %s; want a token_failed rejection", got)
		}
		wantErr(t, e.awaitLogin(), "token_failed")
		e.popupsClosed()
		e.noGrant(false)
	})
}
