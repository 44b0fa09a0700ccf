package mcpclient

import (
	"context"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpwasm/mcpwasm/demo/authserver"
	"github.com/mcpwasm/mcpwasm/devkit/authtest"
	"github.com/mcpwasm/mcpwasm/mcperr"
	"github.com/mcpwasm/mcpwasm/oauth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestServerRefusesFreshToken: right after a sign-in, the MCP server
// refuses the access token the client holds as valid (the authorization
// server's clock is ahead of the client's, or the server refuses every
// token). The call that meets the 401 refreshes once and goes on when the
// new token is taken; when that one is refused too, the call fails at once
// with auth_required and the client needs a sign-in, which works (and the
// next call with it). Either way the call settles: it never waits on a
// sign-in it cannot show, or on the session its own 401 ended.
func TestServerRefusesFreshToken(t *testing.T) {
	for _, tc := range []struct {
		name      string
		refuseAll bool // the server refuses the refreshed token too
	}{
		{"the authorization server's clock is ahead: one refresh", false},
		{"every token refused: sign-in required", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var skew atomic.Int64
			var refuse atomic.Bool
			env := authtest.StartWith(t, authtest.Options{
				Now: func() time.Time { return time.Now().Add(time.Duration(skew.Load())) },
				Wrap: func(h http.Handler) http.Handler {
					return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
						if refuse.Load() {
							w.Header().Set("WWW-Authenticate", `Bearer error="invalid_token"`)
							http.Error(w, "token refused", http.StatusUnauthorized)
							return
						}
						h.ServeHTTP(w, r)
					})
				},
			})
			h := env.Handler(t, oauth.NewMemoryStore())
			c := newClient(t, env.URL, Options{Auth: h, Transport: TransportStreamable})
			ctx := ctxT(t)
			if err := c.Authorize(ctx, ConnectOptions{}); err != nil {
				t.Fatalf("Authorize: %v", err)
			}
			skew.Store(int64(2 * time.Hour))
			refuse.Store(tc.refuseAll)

			res, err := callSettles(t, c, 8*time.Second)
			if n := env.AS.Count(authserver.EventTokenRefresh); n != 1 {
				t.Errorf("%d refreshes after the server refused a fresh token; want exactly 1", n)
			}
			if !tc.refuseAll {
				if err != nil || res == nil || res.IsError {
					t.Fatalf("the call after one refresh: %v, %v; want its result", res, err)
				}
				if s := c.State(); s != StateConnected {
					t.Errorf("state %s; want connected", s)
				}
				return
			}
			wantCode(t, err, mcperr.AuthRequired)
			if s := c.State(); s != StateNeedsAuth {
				t.Errorf("state %s after the refused tokens; want needs_auth", s)
			}

			// A sign-in (the person's click) makes it work again.
			refuse.Store(false)
			if err := c.Authorize(ctx, ConnectOptions{}); err != nil {
				t.Fatalf("Authorize after the refusal: %v", err)
			}
			if res, err := callSettles(t, c, 8*time.Second); err != nil || res.IsError {
				t.Fatalf("the call after the new sign-in: %v, %v; want its result", res, err)
			}
			if s := c.State(); s != StateConnected {
				t.Errorf("state %s after the new sign-in; want connected", s)
			}
		})
	}
}

// callSettles calls add with a timeout and fails the test when the call
// has not settled well after it (a hang).
func callSettles(t *testing.T, c *Client, timeout time.Duration) (*mcp.CallToolResult, error) {
	t.Helper()
	type out struct {
		res *mcp.CallToolResult
		err error
	}
	done := make(chan out, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		defer cancel()
		res, err := c.CallTool(ctx, "add", []byte(`{"a":1,"b":2}`), nil)
		done <- out{res, err}
	}()
	select {
	case o := <-done:
		return o.res, o.err
	case <-time.After(timeout + 15*time.Second):
		t.Fatalf("the call did not settle in the %v after its timeout of %v: it hangs", 15*time.Second, timeout)
		return nil, nil
	}
}
