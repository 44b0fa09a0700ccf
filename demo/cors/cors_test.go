package cors_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpwasm/mcpwasm/demo/cors"
)

// start serves a handler that records whether it ran and sets the headers
// an MCP server sets, wrapped in the middleware.
func start(t *testing.T, opts cors.Options) (url string, inner *atomic.Int32) {
	t.Helper()
	inner = new(atomic.Int32)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		inner.Add(1)
		w.Header().Set("Mcp-Session-Id", "s1")
		w.Header().Set("WWW-Authenticate", `Bearer resource_metadata="http://x/.well-known/oauth-protected-resource"`)
		w.WriteHeader(http.StatusUnauthorized)
	})
	srv := httptest.NewServer(cors.Wrap(h, opts))
	t.Cleanup(srv.Close)
	return srv.URL, inner
}

func do(t *testing.T, method, url string, header map[string]string) *http.Response {
	t.Helper()
	req, err := http.NewRequest(method, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp
}

// tokens splits comma-separated header values into a set, lower-cased.
func tokens(h http.Header, key string) map[string]bool {
	set := map[string]bool{}
	for _, v := range h.Values(key) {
		for p := range strings.SplitSeq(v, ",") {
			if p = strings.ToLower(strings.TrimSpace(p)); p != "" {
				set[p] = true
			}
		}
	}
	return set
}

const page = "http://127.0.0.1:8080"

func TestPreflight(t *testing.T) {
	tests := []struct {
		name        string
		opts        cors.Options
		origin      string
		wantAllowed bool
		wantHeaders []string
		wantMaxAge  string
	}{
		{"any origin", cors.Options{}, page, true,
			[]string{"authorization", "content-type", "mcp-session-id", "mcp-protocol-version", "last-event-id", "mcp-method", "mcp-name", "mcp-param-region"}, "600"},
		{"listed origin", cors.Options{AllowedOrigins: []string{"HTTP://127.0.0.1:8080/"}}, page, true, nil, "600"},
		{"unlisted origin", cors.Options{AllowedOrigins: []string{"http://localhost:8080"}}, page, false, nil, ""},
		{"star in list", cors.Options{AllowedOrigins: []string{"*"}}, "http://evil.example", true, nil, "600"},
		{"extra header", cors.Options{AllowHeaders: []string{"X-Api-Key", "authorization"}, MaxAge: time.Minute}, page, true,
			[]string{"x-api-key", "authorization"}, "60"},
		{"no max age", cors.Options{MaxAge: -1}, page, true, nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			url, inner := start(t, tt.opts)
			resp := do(t, "OPTIONS", url+"/mcp", map[string]string{
				"Origin":                         tt.origin,
				"Access-Control-Request-Method":  "POST",
				"Access-Control-Request-Headers": "authorization,content-type,mcp-protocol-version,mcp-param-region,x-other,mcp-param-,mcp-param-a b",
			})
			if got, want := resp.StatusCode, http.StatusNoContent; got != want {
				t.Errorf("status = %d; want %d", got, want)
			}
			if got := inner.Load(); got != 0 {
				t.Errorf("inner handler ran %d times; want 0", got)
			}
			if !tokens(resp.Header, "Vary")["origin"] {
				t.Errorf("Vary = %q; want it to contain Origin", resp.Header.Values("Vary"))
			}
			gotOrigin := resp.Header.Get("Access-Control-Allow-Origin")
			if !tt.wantAllowed {
				if gotOrigin != "" || resp.Header.Get("Access-Control-Allow-Methods") != "" {
					t.Errorf("disallowed origin got Allow-Origin %q, Allow-Methods %q; want none",
						gotOrigin, resp.Header.Get("Access-Control-Allow-Methods"))
				}
				return
			}
			if gotOrigin != tt.origin {
				t.Errorf("Access-Control-Allow-Origin = %q; want %q", gotOrigin, tt.origin)
			}
			methods := tokens(resp.Header, "Access-Control-Allow-Methods")
			for _, m := range []string{"get", "post", "delete", "options"} {
				if !methods[m] {
					t.Errorf("Access-Control-Allow-Methods = %q; want it to contain %s", resp.Header.Get("Access-Control-Allow-Methods"), m)
				}
			}
			headers := tokens(resp.Header, "Access-Control-Allow-Headers")
			for _, h := range tt.wantHeaders {
				if !headers[h] {
					t.Errorf("Access-Control-Allow-Headers = %q; want it to contain %s", resp.Header.Get("Access-Control-Allow-Headers"), h)
				}
			}
			if got := resp.Header.Get("Access-Control-Max-Age"); got != tt.wantMaxAge {
				t.Errorf("Access-Control-Max-Age = %q; want %q", got, tt.wantMaxAge)
			}
			if got := resp.Header.Get("Access-Control-Allow-Credentials"); got != "" {
				t.Errorf("Access-Control-Allow-Credentials = %q; want none", got)
			}
			for _, h := range []string{"x-other", "mcp-param-", "mcp-param-a b"} {
				if headers[h] {
					t.Errorf("Access-Control-Allow-Headers = %q; want it without %q", resp.Header.Get("Access-Control-Allow-Headers"), h)
				}
			}
			if strings.Count(resp.Header.Get("Access-Control-Allow-Headers"), "uthorization") != 1 {
				t.Errorf("Access-Control-Allow-Headers = %q; want Authorization once", resp.Header.Get("Access-Control-Allow-Headers"))
			}
		})
	}
}

func TestActualRequest(t *testing.T) {
	tests := []struct {
		name       string
		opts       cors.Options
		origin     string
		wantOrigin string
		wantExpose []string
		wantHidden []string
	}{
		{"exposes MCP and auth headers", cors.Options{}, page, page,
			[]string{"mcp-session-id", "www-authenticate", "mcp-protocol-version", "dpop-nonce"}, nil},
		{"hide switch", cors.Options{HideWWWAuthenticate: true, ExposeHeaders: []string{"WWW-Authenticate", "X-Trace"}}, page, page,
			[]string{"mcp-session-id", "mcp-protocol-version", "x-trace"}, []string{"www-authenticate"}},
		{"unlisted origin", cors.Options{AllowedOrigins: []string{"http://localhost:1"}}, page, "", nil,
			[]string{"mcp-session-id", "www-authenticate"}},
		{"same-origin request without Origin", cors.Options{}, "", "", nil, []string{"mcp-session-id"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			url, inner := start(t, tt.opts)
			h := map[string]string{}
			if tt.origin != "" {
				h["Origin"] = tt.origin
			}
			resp := do(t, "POST", url+"/mcp", h)
			if got, want := resp.StatusCode, http.StatusUnauthorized; got != want {
				t.Errorf("status = %d; want %d (the inner handler's)", got, want)
			}
			if got := inner.Load(); got != 1 {
				t.Errorf("inner handler ran %d times; want 1", got)
			}
			if got := resp.Header.Get("Access-Control-Allow-Origin"); got != tt.wantOrigin {
				t.Errorf("Access-Control-Allow-Origin = %q; want %q", got, tt.wantOrigin)
			}
			if !tokens(resp.Header, "Vary")["origin"] {
				t.Errorf("Vary = %q; want it to contain Origin", resp.Header.Values("Vary"))
			}
			expose := tokens(resp.Header, "Access-Control-Expose-Headers")
			for _, h := range tt.wantExpose {
				if !expose[h] {
					t.Errorf("Access-Control-Expose-Headers = %q; want it to contain %s", resp.Header.Get("Access-Control-Expose-Headers"), h)
				}
			}
			for _, h := range tt.wantHidden {
				if expose[h] {
					t.Errorf("Access-Control-Expose-Headers = %q; want it without %s", resp.Header.Get("Access-Control-Expose-Headers"), h)
				}
			}
		})
	}
}

// TestPlainOptions checks that an OPTIONS request that is not a preflight
// reaches the wrapped handler.
func TestPlainOptions(t *testing.T) {
	url, inner := start(t, cors.Options{})
	do(t, "OPTIONS", url+"/mcp", map[string]string{"Origin": page})
	if got := inner.Load(); got != 1 {
		t.Errorf("inner handler ran %d times; want 1", got)
	}
}

func TestDisabled(t *testing.T) {
	url, inner := start(t, cors.Options{Disabled: true})
	resp := do(t, "OPTIONS", url, map[string]string{"Origin": "http://page.example", "Access-Control-Request-Method": "POST"})
	if got := resp.Header.Get("Access-Control-Allow-Origin"); got != "" {
		t.Errorf("preflight: Access-Control-Allow-Origin %q; want none", got)
	}
	resp = do(t, "POST", url, map[string]string{"Origin": "http://page.example"})
	if got := resp.Header.Get("Access-Control-Allow-Origin") + resp.Header.Get("Access-Control-Expose-Headers"); got != "" {
		t.Errorf("request: CORS headers %q; want none", got)
	}
	if n := inner.Load(); n != 2 {
		t.Errorf("the handler ran %d times; want 2 (the preflight too)", n)
	}
}
