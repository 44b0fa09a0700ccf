package mcpclient

import (
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/mcpwasm/mcpwasm/demo/authserver"
	"github.com/mcpwasm/mcpwasm/devkit/authtest"
	"github.com/mcpwasm/mcpwasm/mcperr"
	"github.com/mcpwasm/mcpwasm/oauth"
)

// deleteSeen is what the protected server saw of a DELETE: whether the
// authorization server still took its token, and how many revocations it
// had had by then.
type deleteSeen struct {
	tokenOK bool
	revokes int
}

// TestLogoutEndsSessionFirst: against the demo authorization server and
// protected MCP server, Logout sends the DELETE that ends the session
// with a token the authorization server still accepts, and revokes the
// grant only afterwards (a DELETE after the revocation would be refused
// and leave the session on the server). A server that refuses the DELETE
// is reported in Logout's error, and the grant is revoked and deleted all
// the same; 404 (no such session) and 405 (ending sessions not supported)
// are no error.
func TestLogoutEndsSessionFirst(t *testing.T) {
	for _, tc := range []struct {
		name   string
		answer int         // the DELETE's status; 0: the server's own answer
		want   mcperr.Code // "" for no error
	}{
		{"server ends the session", 0, ""},
		{"405 ending sessions not supported", http.StatusMethodNotAllowed, ""},
		{"404 session already gone", http.StatusNotFound, ""},
		{"500 refused", http.StatusInternalServerError, mcperr.HTTP},
		{"403 refused", http.StatusForbidden, mcperr.HTTP},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var (
				mu      sync.Mutex
				deletes []deleteSeen
				env     *authtest.Env
			)
			rec := &recorder{}
			env = authtest.StartWith(t, authtest.Options{Wrap: func(h http.Handler) http.Handler {
				return rec.wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					if r.Method == http.MethodDelete {
						tok, _ := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
						_, err := env.AS.Verifier(env.URL)(r.Context(), tok, r)
						mu.Lock()
						deletes = append(deletes, deleteSeen{tokenOK: err == nil, revokes: env.AS.Count(authserver.EventRevoke)})
						mu.Unlock()
						if tc.answer != 0 {
							http.Error(w, "no", tc.answer)
							return
						}
					}
					h.ServeHTTP(w, r)
				}))
			}})
			store := oauth.NewMemoryStore()
			h := env.Handler(t, store)
			c := newClient(t, env.URL, Options{Auth: h, Transport: TransportStreamable})
			ctx := ctxT(t)
			if err := c.Authorize(ctx, ConnectOptions{}); err != nil {
				t.Fatalf("Authorize: %v", err)
			}
			if _, err := c.ListTools(ctx); err != nil {
				t.Fatalf("ListTools: %v", err)
			}
			g, _ := store.GetGrant(ctx, h.Resource())
			if g == nil || g.RefreshToken == "" {
				t.Fatalf("grant %+v; want one with a refresh token", g)
			}

			err := c.Logout(ctx)
			if tc.want == "" {
				if err != nil {
					t.Errorf("Logout: %v; want no error", err)
				}
			} else {
				wantCode(t, err, tc.want)
				if mcperr.StatusOf(err) != tc.answer || !strings.Contains(err.Error(), "refused to end the session") {
					t.Errorf("Logout: %v (status %d); want it to say the server refused to end the session (HTTP %d)", err, mcperr.StatusOf(err), tc.answer)
				}
				if strings.Contains(err.Error(), g.AccessToken) {
					t.Errorf("the error quotes the token: %v", err)
				}
			}

			mu.Lock()
			seen := append([]deleteSeen(nil), deletes...)
			mu.Unlock()
			if len(seen) != 1 {
				t.Fatalf("the server saw %d DELETEs; want 1", len(seen))
			}
			if !seen[0].tokenOK || seen[0].revokes != 0 {
				t.Errorf("the DELETE came with a token the authorization server took: %v, after %d revocation(s); want a live token, before any", seen[0].tokenOK, seen[0].revokes)
			}
			if tc.answer == 0 {
				for _, r := range rec.all() {
					if r.method == http.MethodDelete && (r.status < 200 || r.status > 299) {
						t.Errorf("the server answered the DELETE %d; want it to end the session", r.status)
					}
				}
			}
			// Then the grant was revoked, and it is gone here.
			if n := env.AS.Count(authserver.EventRevoke); n != 2 {
				t.Errorf("%d revocations; want 2 (refresh and access token)", n)
			}
			if _, err := env.AS.Verifier(env.URL)(ctx, g.AccessToken, nil); err == nil {
				t.Error("the access token still works after Logout")
			}
			if g, _ := store.GetGrant(ctx, h.Resource()); g != nil {
				t.Error("the grant is still stored after Logout")
			}
			if c.State() != StateNeedsAuth {
				t.Errorf("state %s after Logout; want needs_auth", c.State())
			}
		})
	}
}
