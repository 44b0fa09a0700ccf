package relay_test

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/mcpwasm/mcpwasm/mcperr"
	"github.com/mcpwasm/mcpwasm/relay"
)

// browserCORS stands in for what fetch does with a cross-origin answer
// from a page at page: without Access-Control-Allow-Origin for it the
// answer is withheld and the request fails with no response. A preflight
// is not sent, but a request that would have needed one is refused
// before it leaves when the server would not have allowed it (here: any
// server that does not answer with CORS headers).
type browserCORS struct{ noCORS map[string]bool }

func (b browserCORS) RoundTrip(req *http.Request) (*http.Response, error) {
	o := req.URL.Scheme + "://" + req.URL.Host
	if b.noCORS[o] && preflightedReq(req) {
		return nil, errors.New("TypeError: Failed to fetch (preflight refused)")
	}
	req.Header.Set("Origin", page)
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	if resp.Header.Get("Access-Control-Allow-Origin") != page {
		resp.Body.Close()
		return nil, errors.New("TypeError: Failed to fetch (no Access-Control-Allow-Origin)")
	}
	return resp, nil
}

func preflightedReq(req *http.Request) bool {
	ct := req.Header.Get("Content-Type")
	return req.Method != "GET" && req.Method != "POST" || req.Header.Get("Authorization") != "" || (ct != "" && ct != "application/x-www-form-urlencoded")
}

func TestTransportAlways(t *testing.T) {
	up := startUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		fmt.Fprintf(w, "%s %s %s", r.Method, r.URL.RequestURI(), b)
	})
	r := startRelay(t, relay.Config{Targets: []string{up.URL}, PageOrigins: []string{page}})
	c := &http.Client{Transport: &relay.Transport{Base: browserCORS{}, Relay: r.URL + "/mcp-relay", Mode: relay.Always}}
	resp, err := c.Post(up.URL+"/mcp?x=1", "application/json", strings.NewReader(`{"a":1}`))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if want := `POST /mcp?x=1 {"a":1}`; string(b) != want {
		t.Errorf("the server saw %q; want %q", b, want)
	}
	if got := resp.Request.URL.String(); got != up.URL+"/mcp?x=1" {
		t.Errorf("Response.Request.URL %q; want the server's URL", got)
	}
	if got := up.last.Load().Header.Get("Origin"); got != "" {
		t.Errorf("the server saw Origin %q; want none", got)
	}
}

func TestTransportFallback(t *testing.T) {
	var posts []string
	noCORS := startUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		if r.Method == "POST" {
			b, _ := io.ReadAll(r.Body)
			posts = append(posts, r.URL.Path+" "+string(b))
		}
		io.WriteString(w, "ok")
	})
	withCORS := startUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Access-Control-Allow-Origin", page)
		io.WriteString(w, "direct")
	})
	r := startRelay(t, relay.Config{Targets: []string{noCORS.URL, withCORS.URL}, PageOrigins: []string{page}})
	routes := &relay.Routes{}
	c := &http.Client{Transport: &relay.Transport{Base: browserCORS{noCORS: map[string]bool{noCORS.URL: true}}, Relay: r.URL + "/mcp-relay", Routes: routes}}

	// A form POST (no preflight) to an origin not known yet: a bare GET
	// asks first, so the server gets the POST exactly once.
	resp, err := c.PostForm(noCORS.URL+"/token", url.Values{"grant_type": {"refresh_token"}})
	if err != nil {
		t.Fatalf("form POST through fallback: %v", err)
	}
	resp.Body.Close()
	if want := []string{"/token grant_type=refresh_token"}; fmt.Sprint(posts) != fmt.Sprint(want) {
		t.Errorf("the server got POSTs %q; want %q (once)", posts, want)
	}
	if !routes.Relayed(noCORS.URL) {
		t.Errorf("the origin without CORS is not remembered as relayed")
	}

	// A server with CORS is used directly.
	resp, err = c.Post(withCORS.URL+"/mcp", "application/json", strings.NewReader("{}"))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(b) != "direct" || routes.Relayed(withCORS.URL) {
		t.Errorf("server with CORS: %q, relayed %v; want direct", b, routes.Relayed(withCORS.URL))
	}
}

func TestTransportFallbackPreflighted(t *testing.T) {
	noCORS := startUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		fmt.Fprintf(w, "%s %s", r.Header.Get("Authorization"), b)
	})
	r := startRelay(t, relay.Config{Targets: []string{noCORS.URL}, PageOrigins: []string{page}})
	c := &http.Client{Transport: &relay.Transport{Base: browserCORS{noCORS: map[string]bool{noCORS.URL: true}}, Relay: r.URL + "/mcp-relay"}}
	req, _ := http.NewRequest("POST", noCORS.URL+"/mcp", strings.NewReader(`{"jsonrpc":"2.0"}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer t")
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if want := `Bearer t {"jsonrpc":"2.0"}`; string(b) != want {
		t.Errorf("through the relay after the refused preflight: %q; want %q", b, want)
	}
	if n := noCORS.hits.Load(); n != 1 {
		t.Errorf("the server got %d requests; want 1 (the refused one never left)", n)
	}
}

func TestTransportRelayRefusal(t *testing.T) {
	up := startUpstream(t, func(w http.ResponseWriter, r *http.Request) {})
	r := startRelay(t, relay.Config{Targets: []string{"https://only.example"}, PageOrigins: []string{page}})
	c := &http.Client{Transport: &relay.Transport{Base: browserCORS{}, Relay: r.URL + "/mcp-relay", Mode: relay.Always}}
	_, err := c.Get(up.URL + "/mcp")
	var re *relay.Error
	if !errors.As(err, &re) || re.Code != relay.ErrTargetNotAllowed || mcperr.CodeOf(err, "") != mcperr.Network {
		t.Fatalf("error %v; want a relay.Error %q coded network", err, relay.ErrTargetNotAllowed)
	}
	if !strings.Contains(err.Error(), "Config.Targets") {
		t.Errorf("error %q does not say what the host can change", err)
	}
	if n := up.hits.Load(); n != 0 {
		t.Errorf("the server got %d requests", n)
	}
}

func TestCheckURL(t *testing.T) {
	for _, ok := range []string{"https://app.example/mcp-relay", "http://127.0.0.1:8080/mcp-relay", "http://localhost/r"} {
		if err := relay.CheckURL(ok); err != nil {
			t.Errorf("CheckURL(%q) = %v", ok, err)
		}
	}
	for _, bad := range []string{"", "/mcp-relay", "http://app.example/r", "https://app.example/r?x=1", "https://u@app.example/r", "ftp://app.example/r",
		"http://127.0.0.1.evil.example/r", "http://127.evil.example/r", "http://localhost.evil.example/r"} {
		if err := relay.CheckURL(bad); err == nil {
			t.Errorf("CheckURL(%q) = nil; want an error", bad)
		}
	}
}

// TestTransportFallbackPerPath: a server whose metadata allows every
// origin (as go-sdk's protected resource metadata does) and whose MCP
// endpoint allows none: the endpoint still falls back to the relay.
func TestTransportFallbackPerPath(t *testing.T) {
	up := startUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/.well-known/oauth-protected-resource" {
			w.Header().Set("Access-Control-Allow-Origin", page)
		}
		io.WriteString(w, r.URL.Path)
	})
	r := startRelay(t, relay.Config{Targets: []string{up.URL}, PageOrigins: []string{page}})
	routes := &relay.Routes{}
	c := &http.Client{Transport: &relay.Transport{Base: browserCORS{noCORS: map[string]bool{up.URL: true}}, Relay: r.URL + "/mcp-relay", Routes: routes}}
	for _, p := range []string{"/.well-known/oauth-protected-resource", "/mcp"} {
		req, _ := http.NewRequest("GET", up.URL+p, nil)
		if p == "/mcp" {
			req, _ = http.NewRequest("POST", up.URL+p, strings.NewReader("{}"))
			req.Header.Set("Content-Type", "application/json")
		}
		resp, err := c.Do(req)
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if string(b) != p {
			t.Errorf("%s: %q", p, b)
		}
		if relayed := routes.Relayed(up.URL); relayed != (p == "/mcp") {
			t.Errorf("after %s: relayed %v", p, relayed)
		}
	}
	if !routes.Relayed(up.URL) {
		t.Errorf("the origin is not relayed after its MCP endpoint refused the page")
	}
}

// TestTransportRemembersOnlyWhatTheRelayReached: a direct failure the
// relay cannot help with (a relay that does not list the server) leaves
// the origin direct for the next request, and the caller gets the direct
// failure; once the relay has reached the server, the origin goes through
// it from then on.
func TestTransportRemembersOnlyWhatTheRelayReached(t *testing.T) {
	up := startUpstream(t, func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") })
	elsewhere := startRelay(t, relay.Config{Targets: []string{"https://other.example"}, PageOrigins: []string{page}})
	routes := &relay.Routes{}
	base := browserCORS{noCORS: map[string]bool{up.URL: true}}
	c := &http.Client{Transport: &relay.Transport{Base: base, Relay: elsewhere.URL + "/mcp-relay", Routes: routes}}
	_, err := c.Get(up.URL + "/mcp")
	if err == nil || !strings.Contains(err.Error(), "no Access-Control-Allow-Origin") {
		t.Errorf("GET through a relay that does not list the server: %v; want the direct failure", err)
	}
	if routes.Relayed(up.URL) {
		t.Errorf("the origin is remembered as relayed, though the relay never reached it")
	}
	listing := startRelay(t, relay.Config{Targets: []string{up.URL}, PageOrigins: []string{page}})
	c = &http.Client{Transport: &relay.Transport{Base: base, Relay: listing.URL + "/mcp-relay", Routes: routes}}
	resp, err := c.Get(up.URL + "/mcp")
	if err != nil {
		t.Fatalf("GET through a relay that lists the server: %v", err)
	}
	resp.Body.Close()
	if !routes.Relayed(up.URL) {
		t.Errorf("the origin the relay reached is not remembered")
	}
}
