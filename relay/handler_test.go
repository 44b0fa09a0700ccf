package relay_test

import (
	"bufio"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpwasm/mcpwasm/relay"
)

const page = "https://app.example"

// upstream is a real server on loopback that counts its requests and
// keeps the last one's headers.
type upstream struct {
	*httptest.Server
	hits atomic.Int32
	last atomic.Pointer[http.Request]
}

func startUpstream(t *testing.T, h http.HandlerFunc) *upstream {
	t.Helper()
	u := &upstream{}
	u.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u.hits.Add(1)
		u.last.Store(r.Clone(r.Context()))
		h(w, r)
	}))
	t.Cleanup(u.Close)
	return u
}

// startRelay serves a relay for cfg on loopback.
func startRelay(t *testing.T, cfg relay.Config) *httptest.Server {
	t.Helper()
	h, err := relay.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv
}

func via(relayURL, target string) string {
	return relayURL + "/mcp-relay?" + url.Values{relay.Param: {target}}.Encode()
}

func do(t *testing.T, method, u string, body io.Reader, hdr map[string]string) *http.Response {
	t.Helper()
	req, err := http.NewRequest(method, u, body)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

func TestNewRefusesNoAllowlist(t *testing.T) {
	for _, cfg := range []relay.Config{
		{},
		{Targets: []string{}, PageOrigins: []string{page}},
	} {
		if _, err := relay.New(cfg); err == nil || !strings.Contains(err.Error(), "never an open relay") {
			t.Errorf("New(%+v) = %v; want the error that refuses an open relay", cfg, err)
		}
	}
	for _, bad := range []relay.Config{
		{Targets: []string{"mcp.example.com"}},
		{Targets: []string{"https://mcp.example.com/mcp"}},
		{Targets: []string{"https://a.example"}, PageOrigins: []string{"*"}},
		{Targets: []string{"https://a.example"}, AllowHeaders: []string{"Cookie"}},
	} {
		if _, err := relay.New(bad); err == nil {
			t.Errorf("New(%+v) = nil error; want a refusal", bad)
		}
	}
}

func TestUnlistedTargetRefused(t *testing.T) {
	listed := startUpstream(t, func(w http.ResponseWriter, r *http.Request) {})
	other := startUpstream(t, func(w http.ResponseWriter, r *http.Request) {})
	r := startRelay(t, relay.Config{Targets: []string{listed.URL}, PageOrigins: []string{page}})
	for _, target := range []string{other.URL + "/mcp", "file:///etc/passwd", "", "https://user:pw@" + strings.TrimPrefix(listed.URL, "http://")} {
		resp := do(t, "POST", via(r.URL, target), strings.NewReader("{}"), map[string]string{"Origin": page})
		if resp.StatusCode != http.StatusForbidden && resp.StatusCode != http.StatusBadRequest {
			t.Errorf("%q: status %d; want 403 or 400", target, resp.StatusCode)
		}
		if resp.Header.Get(relay.ErrorHeader) == "" {
			t.Errorf("%q: no %s header", target, relay.ErrorHeader)
		}
	}
	resp := do(t, "POST", via(r.URL, other.URL+"/mcp"), nil, nil)
	if got := resp.Header.Get(relay.ErrorHeader); got != relay.ErrTargetNotAllowed {
		t.Errorf("unlisted origin: %s %q; want %q", relay.ErrorHeader, got, relay.ErrTargetNotAllowed)
	}
	if n := other.hits.Load(); n != 0 {
		t.Errorf("the unlisted server got %d requests; want 0", n)
	}
}

func TestRedirects(t *testing.T) {
	elsewhere := startUpstream(t, func(w http.ResponseWriter, r *http.Request) {})
	self := startUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/off":
			http.Redirect(w, r, elsewhere.URL+"/steal", http.StatusTemporaryRedirect)
		case "/within":
			http.Redirect(w, r, "/final", http.StatusTemporaryRedirect)
		case "/final":
			b, _ := io.ReadAll(r.Body)
			io.WriteString(w, r.Method+" "+string(b)+" "+r.Header.Get("Authorization"))
		}
	})
	r := startRelay(t, relay.Config{Targets: []string{self.URL, elsewhere.URL}})

	resp := do(t, "POST", via(r.URL, self.URL+"/off"), strings.NewReader("secret"), map[string]string{"Authorization": "Bearer tok"})
	if resp.StatusCode != http.StatusBadGateway || resp.Header.Get(relay.ErrorHeader) != relay.ErrRedirectRefused {
		t.Errorf("redirect off the origin: %d %q; want 502 %q", resp.StatusCode, resp.Header.Get(relay.ErrorHeader), relay.ErrRedirectRefused)
	}
	if n := elsewhere.hits.Load(); n != 0 {
		t.Errorf("the redirect's target got %d requests (even though it is a listed target); want 0", n)
	}

	resp = do(t, "POST", via(r.URL, self.URL+"/within"), strings.NewReader("body"), map[string]string{"Authorization": "Bearer tok"})
	b, _ := io.ReadAll(resp.Body)
	if want := "POST body Bearer tok"; resp.StatusCode != 200 || string(b) != want {
		t.Errorf("redirect within the origin: %d %q; want 200 %q", resp.StatusCode, b, want)
	}
}

func TestHeadersAndCookies(t *testing.T) {
	up := startUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Set-Cookie", "session=upstream")
		w.Header().Set("WWW-Authenticate", `Bearer resource_metadata="https://x/.well-known/oauth-protected-resource"`)
		w.Header().Set("DPoP-Nonce", "n1")
		w.Header().Set("Mcp-Session-Id", "s1")
		w.Header().Set("X-Internal", "secret")
		w.WriteHeader(http.StatusUnauthorized)
	})
	r := startRelay(t, relay.Config{Targets: []string{up.URL}, PageOrigins: []string{page}, AllowHeaders: []string{"X-Api-Key"}})
	resp := do(t, "POST", via(r.URL, up.URL+"/mcp"), strings.NewReader("{}"), map[string]string{
		"Origin": page, "Cookie": "relay-session=1", "Referer": page + "/chat",
		"Authorization": "Bearer tok", "DPoP": "proof", "Mcp-Method": "tools/call", "Mcp-Param-Region": "eu",
		"X-Api-Key": "k", "X-Other": "o", "Content-Type": "application/json",
	})
	got := up.last.Load().Header
	for _, k := range []string{"Cookie", "Origin", "Referer", "X-Other", "X-Forwarded-For"} {
		if v := got.Get(k); v != "" {
			t.Errorf("the server got %s: %q; want none", k, v)
		}
	}
	for k, want := range map[string]string{"Authorization": "Bearer tok", "Dpop": "proof", "Mcp-Method": "tools/call", "Mcp-Param-Region": "eu", "X-Api-Key": "k", "Content-Type": "application/json"} {
		if v := got.Get(k); v != want {
			t.Errorf("the server got %s: %q; want %q", k, v, want)
		}
	}
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("status %d; want the server's 401", resp.StatusCode)
	}
	for _, k := range []string{"Set-Cookie", "X-Internal"} {
		if v := resp.Header.Get(k); v != "" {
			t.Errorf("the page got %s: %q; want none", k, v)
		}
	}
	for _, k := range []string{"WWW-Authenticate", "DPoP-Nonce", "Mcp-Session-Id"} {
		if resp.Header.Get(k) == "" {
			t.Errorf("the page did not get %s", k)
		}
		if !strings.Contains(resp.Header.Get("Access-Control-Expose-Headers"), k) {
			t.Errorf("%s is not exposed: %q", k, resp.Header.Get("Access-Control-Expose-Headers"))
		}
	}
	if got := resp.Header.Get("Access-Control-Allow-Origin"); got != page {
		t.Errorf("Access-Control-Allow-Origin %q; want %q", got, page)
	}
	if got := resp.Header.Get("Access-Control-Allow-Credentials"); got != "" {
		t.Errorf("Access-Control-Allow-Credentials %q; want none", got)
	}
}

func TestCORS(t *testing.T) {
	up := startUpstream(t, func(w http.ResponseWriter, r *http.Request) {})
	r := startRelay(t, relay.Config{Targets: []string{up.URL}, PageOrigins: []string{page}})
	target := via(r.URL, up.URL+"/mcp")

	resp := do(t, "OPTIONS", target, nil, map[string]string{
		"Origin": page, "Access-Control-Request-Method": "POST",
		"Access-Control-Request-Headers": "authorization, content-type, mcp-method, mcp-param-x, x-evil",
	})
	if resp.StatusCode != http.StatusNoContent || resp.Header.Get("Access-Control-Allow-Origin") != page {
		t.Errorf("preflight: %d, Allow-Origin %q; want 204 %q", resp.StatusCode, resp.Header.Get("Access-Control-Allow-Origin"), page)
	}
	allowed := strings.ToLower(resp.Header.Get("Access-Control-Allow-Headers"))
	for _, h := range []string{"authorization", "content-type", "mcp-method", "mcp-param-x"} {
		if !strings.Contains(allowed, h) {
			t.Errorf("preflight: %s not allowed (%q)", h, allowed)
		}
	}
	if strings.Contains(allowed, "x-evil") {
		t.Errorf("preflight allowed x-evil: %q", allowed)
	}
	if n := up.hits.Load(); n != 0 {
		t.Errorf("the preflight reached the server (%d requests); the relay answers it", n)
	}

	for _, m := range []string{"OPTIONS", "POST"} {
		resp = do(t, m, target, nil, map[string]string{"Origin": "https://evil.example", "Access-Control-Request-Method": "POST"})
		if resp.StatusCode != http.StatusForbidden || resp.Header.Get("Access-Control-Allow-Origin") != "" || resp.Header.Get(relay.ErrorHeader) != relay.ErrOriginNotAllowed {
			t.Errorf("%s from an unlisted page: %d, Allow-Origin %q; want 403 without CORS headers", m, resp.StatusCode, resp.Header.Get("Access-Control-Allow-Origin"))
		}
	}
	if n := up.hits.Load(); n != 0 {
		t.Errorf("an unlisted page's request reached the server")
	}
	resp = do(t, "GET", target, nil, map[string]string{"Sec-Fetch-Site": "cross-site"})
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("another site's GET without Origin: %d; want 403", resp.StatusCode)
	}
	if n := up.hits.Load(); n != 0 {
		t.Errorf("another site's request reached the server")
	}
	resp = do(t, "PUT", target, nil, nil)
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("PUT: %d; want 405", resp.StatusCode)
	}
}

func TestLimits(t *testing.T) {
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	up := startUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/big":
			io.WriteString(w, strings.Repeat("x", 2000))
		case "/bigstream":
			w.Header().Set("Content-Type", "text/event-stream")
			for range 10 {
				io.WriteString(w, "data: "+strings.Repeat("y", 300)+"\n\n")
				w.(http.Flusher).Flush()
			}
		case "/bigchunked": // no Content-Length: the limit shows only while reading
			for range 2 {
				io.WriteString(w, strings.Repeat("x", 600))
				w.(http.Flusher).Flush()
			}
		case "/cut": // promises more than it sends
			w.Header().Set("Content-Length", "100")
			io.WriteString(w, "short")
		case "/slowbody":
			io.WriteString(w, "part")
			w.(http.Flusher).Flush()
			fallthrough
		case "/slow":
			select {
			case <-release:
			case <-r.Context().Done():
			}
		}
	})
	r := startRelay(t, relay.Config{Targets: []string{up.URL}, MaxRequestBytes: 1000, MaxResponseBytes: 1000, Timeout: 2 * time.Second})

	resp := do(t, "POST", via(r.URL, up.URL+"/"), strings.NewReader(strings.Repeat("z", 1001)), nil)
	if resp.StatusCode != http.StatusRequestEntityTooLarge || resp.Header.Get(relay.ErrorHeader) != relay.ErrRequestTooLarge {
		t.Errorf("big request: %d %q; want 413", resp.StatusCode, resp.Header.Get(relay.ErrorHeader))
	}
	if n := up.hits.Load(); n != 0 {
		t.Errorf("a request over the limit reached the server")
	}
	resp = do(t, "GET", via(r.URL, up.URL+"/big"), nil, nil)
	if resp.StatusCode != http.StatusBadGateway || resp.Header.Get(relay.ErrorHeader) != relay.ErrResponseTooLarge {
		t.Errorf("big answer: %d %q; want 502 %q", resp.StatusCode, resp.Header.Get(relay.ErrorHeader), relay.ErrResponseTooLarge)
	}
	for _, tt := range []struct {
		path   string
		status int
		code   string
	}{
		{"/bigchunked", http.StatusBadGateway, relay.ErrResponseTooLarge},
		{"/cut", http.StatusBadGateway, relay.ErrUpstreamFailed},
		{"/slowbody", http.StatusGatewayTimeout, relay.ErrUpstreamTimeout},
	} {
		resp = do(t, "GET", via(r.URL, up.URL+tt.path), nil, nil)
		if resp.StatusCode != tt.status || resp.Header.Get(relay.ErrorHeader) != tt.code {
			t.Errorf("%s: %d %q; want %d %q", tt.path, resp.StatusCode, resp.Header.Get(relay.ErrorHeader), tt.status, tt.code)
		}
	}
	resp = do(t, "GET", via(r.URL, up.URL+"/bigstream"), nil, nil)
	b, _ := io.ReadAll(resp.Body)
	if len(b) > 1000 || len(b) == 0 {
		t.Errorf("big event stream: %d bytes passed; want some, at most 1000", len(b))
	}
	resp = do(t, "GET", via(r.URL, up.URL+"/slow"), nil, nil)
	if resp.StatusCode != http.StatusGatewayTimeout || resp.Header.Get(relay.ErrorHeader) != relay.ErrUpstreamTimeout {
		t.Errorf("slow server: %d %q; want 504 %q", resp.StatusCode, resp.Header.Get(relay.ErrorHeader), relay.ErrUpstreamTimeout)
	}
}

// TestEventStreamChunkByChunk: the server sends its second event only after
// the client has read the first through the relay, so a relay that
// buffered the stream would never deliver it.
func TestEventStreamChunkByChunk(t *testing.T) {
	gotFirst := make(chan struct{})
	up := startUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "data: one\n\n")
		w.(http.Flusher).Flush()
		select {
		case <-gotFirst:
		case <-r.Context().Done():
			return
		}
		io.WriteString(w, "data: two\n\n")
	})
	r := startRelay(t, relay.Config{Targets: []string{up.URL}, Timeout: 50 * time.Millisecond})
	resp := do(t, "GET", via(r.URL, up.URL+"/mcp"), nil, map[string]string{"Accept": "text/event-stream"})
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("Content-Type %q", ct)
	}
	sc := bufio.NewScanner(resp.Body)
	var lines []string
	for sc.Scan() {
		if l := sc.Text(); l != "" {
			lines = append(lines, l)
			if l == "data: one" {
				close(gotFirst)
			}
		}
	}
	if got := strings.Join(lines, "|"); got != "data: one|data: two" {
		t.Errorf("stream %q; want both events (the stream outlives Timeout, which bounds only its headers)", got)
	}
}

func TestUnreachableUpstream(t *testing.T) {
	up := startUpstream(t, func(w http.ResponseWriter, r *http.Request) {})
	target := up.URL
	up.Close()
	r := startRelay(t, relay.Config{Targets: []string{target}})
	resp := do(t, "GET", via(r.URL, target+"/x"), nil, nil)
	if resp.StatusCode != http.StatusBadGateway || resp.Header.Get(relay.ErrorHeader) != relay.ErrUpstreamFailed {
		t.Errorf("closed server: %d %q; want 502 %q", resp.StatusCode, resp.Header.Get(relay.ErrorHeader), relay.ErrUpstreamFailed)
	}
}

// TestAnswersNeverBecomeDocuments: the relay sits on the host's own
// origin, so a server's HTML must not render there: a navigation (or a
// frame, a script) is refused before anything is sent, and a page's fetch
// of an HTML answer gets it with nosniff, a sandboxing policy and as an
// attachment.
func TestAnswersNeverBecomeDocuments(t *testing.T) {
	up := startUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		io.WriteString(w, "<script>alert(document.domain)</script>")
	})
	r := startRelay(t, relay.Config{Targets: []string{up.URL}, PageOrigins: []string{page}})
	for _, hdr := range []map[string]string{
		{"Sec-Fetch-Mode": "navigate", "Sec-Fetch-Dest": "document", "Sec-Fetch-Site": "none"},
		{"Sec-Fetch-Mode": "navigate", "Sec-Fetch-Dest": "iframe", "Sec-Fetch-Site": "same-origin"},
		{"Sec-Fetch-Mode": "no-cors", "Sec-Fetch-Dest": "script", "Sec-Fetch-Site": "same-origin"},
	} {
		resp := do(t, "GET", via(r.URL, up.URL+"/login"), nil, hdr)
		resp.Body.Close()
		if resp.StatusCode != http.StatusForbidden || resp.Header.Get(relay.ErrorHeader) != relay.ErrNotAFetch {
			t.Errorf("%v: %d %q; want 403 %q", hdr, resp.StatusCode, resp.Header.Get(relay.ErrorHeader), relay.ErrNotAFetch)
		}
	}
	if up.last.Load() != nil {
		t.Errorf("the server got a request for a navigation; want none")
	}
	resp := do(t, "GET", via(r.URL, up.URL+"/login"), nil, map[string]string{"Origin": page, "Sec-Fetch-Mode": "cors", "Sec-Fetch-Dest": "empty", "Sec-Fetch-Site": "same-origin"})
	resp.Body.Close()
	for k, want := range map[string]string{"X-Content-Type-Options": "nosniff", "Content-Security-Policy": "sandbox; default-src 'none'", "Content-Disposition": "attachment"} {
		if got := resp.Header.Get(k); got != want {
			t.Errorf("a page's fetch of an HTML answer: %s %q; want %q", k, got, want)
		}
	}
}
