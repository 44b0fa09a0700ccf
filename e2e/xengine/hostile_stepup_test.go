package xengine

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/mcpwasm/mcpwasm/demo"
	"github.com/mcpwasm/mcpwasm/demo/authserver"
	"github.com/mcpwasm/mcpwasm/demo/cors"
	"github.com/mcpwasm/mcpwasm/devkit/devserver"
)

// TestHostileAuthLoops: an MCP server that keeps refusing after a
// successful sign-in must not make the client sign in again and again.
// The client is interactive and every call comes from a click, so nothing
// but the client's own limits stops a loop.
func TestHostileAuthLoops(t *testing.T) {
	t.Run("401 forever after a successful sign-in → at most 2 sign-ins, auth_required, no loop", func(t *testing.T) {
		t.Parallel()
		var reject atomic.Bool
		h := newHostileWorld(t, devserver.AuthConfig{AutoApprove: true}, authTamper{MCP: func(_ *hostileWorld, hd http.Handler) http.Handler {
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if reject.Load() {
					// Every token is refused: the demo answers 401 with its challenge.
					r.Header.Del("Authorization")
				}
				hd.ServeHTTP(w, r)
			})
		}})
		if r := h.login(`{ interactive: true }`); !r.OK {
			t.Fatalf("the first sign-in: %s", r)
		}
		reject.Store(true)
		var outcomes []string
		for range 3 {
			r := h.callInGesture()
			t.Logf("a click: %s (%s); authorization requests so far %d", r.Code, r.Message, h.AS.Count("authorize"))
			outcomes = append(outcomes, r.Code)
		}
		if n := h.AS.Count("authorize"); n > 2 {
			t.Errorf("%d authorization requests (outcomes %v); want at most 2: the first sign-in and one retry", n, outcomes)
		}
		// Where the engine blocks the window the client opens itself,
		// the clicks after the first end popup_blocked or auth_required
		// (both ask for authorize() from a click); at least one must be
		// the block, or the expectation is out of date.
		if why, ok := lazyPopupBlocked[browser.Name()]; ok {
			t.Logf("in %s the retry's sign-in window is blocked: %s", browser.Name(), why)
			if last := outcomes[len(outcomes)-1]; (last != "auth_required" && last != "popup_blocked") || !slices.Contains(outcomes, "popup_blocked") {
				t.Errorf("callTool() outcomes %v; want them to end auth_required or popup_blocked, with a popup_blocked among them (else remove %s from lazyPopupBlocked)", outcomes, browser.Name())
			}
		} else if last := outcomes[len(outcomes)-1]; last != "auth_required" {
			t.Errorf("callTool() outcomes %v; want them to end auth_required", outcomes)
		}
		var state string
		h.eval(`c.state`, &state)
		if state != "needs_auth" && state != "failed" {
			t.Errorf("client.state = %q; want needs_auth or failed", state)
		}
		h.quietAfterwards("authorize", "token")
		h.popupsClosed()
		h.noScript()
		h.stillUsable()
	})

	t.Run("403 asking for one more new scope each time → at most 3 step-up sign-ins, then insufficient_scope", func(t *testing.T) {
		t.Parallel()
		var forbidden atomic.Int32
		h := newHostileWorld(t, devserver.AuthConfig{AutoApprove: true}, authTamper{
			MCP: func(h *hostileWorld, hd http.Handler) http.Handler {
				forbid := cors.Wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					n := int(forbidden.Add(1))
					scopes := []string{authserver.ScopeTools}
					for i := 1; i <= n; i++ {
						scopes = append(scopes, fmt.Sprint("extra", i))
					}
					w.Header().Set("WWW-Authenticate", fmt.Sprintf(`Bearer error="insufficient_scope", scope=%q, resource_metadata=%q`,
						strings.Join(scopes, " "), h.MCPBase+demo.ProtectedResourceMetadataPath+demo.StreamablePath))
					http.Error(w, "insufficient scope", http.StatusForbidden)
				}), cors.Options{})
				return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					if r.Method == http.MethodPost && r.Header.Get("Authorization") != "" {
						body, _ := io.ReadAll(r.Body)
						r.Body = io.NopCloser(bytes.NewReader(body))
						if bytes.Contains(body, []byte(`"tools/call"`)) {
							forbid.ServeHTTP(w, r)
							return
						}
					}
					hd.ServeHTTP(w, r)
				})
			},
			// The AS grants what it knows of the requested scopes (as real
			// servers do), so the sign-ins succeed and only the MCP server's
			// demands grow.
			AS: func(_ *hostileWorld, hd http.Handler) http.Handler {
				return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					if r.URL.Path == authserver.AuthorizePath {
						q := r.URL.Query()
						var keep []string
						for _, s := range strings.Fields(q.Get("scope")) {
							if slices.Contains([]string{authserver.ScopeTools, authserver.ScopeAdmin}, s) {
								keep = append(keep, s)
							}
						}
						q.Set("scope", strings.Join(keep, " "))
						r.URL.RawQuery = q.Encode()
					}
					hd.ServeHTTP(w, r)
				})
			},
		})
		if r := h.login(`{ interactive: true }`); !r.OK {
			t.Fatalf("the first sign-in: %s", r)
		}
		var outcomes []string
		for range 5 {
			r := h.callInGesture()
			t.Logf("a click: %s (%s); authorization requests so far %d", r.Code, r.Message, h.AS.Count("authorize"))
			outcomes = append(outcomes, r.Code)
		}
		if stepUps := h.AS.Count("authorize") - 1; stepUps > 3 {
			t.Errorf("%d step-up sign-ins for 5 calls (outcomes %v); want at most 3", stepUps, outcomes)
		}
		if last := outcomes[len(outcomes)-1]; last != "insufficient_scope" {
			t.Errorf("callTool() outcomes %v; want them to end insufficient_scope", outcomes)
		}
		h.quietAfterwards("authorize", "token")
		h.popupsClosed()
		h.noScript()
		h.stillUsable()
	})
}
