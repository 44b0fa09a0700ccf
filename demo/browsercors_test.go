package demo_test

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
)

// pageOrigin is the origin the emulated browser page runs on.
const pageOrigin = "http://127.0.0.1:8080"

// browserCORS is an http.RoundTripper that does what a browser's fetch does
// for a cross-origin request from pageOrigin: it sends a preflight for any
// non-safelisted method or header, refuses the request when the preflight
// does not grant them, and hides response headers that are not exposed. It
// lets native tests prove that the go-sdk client would work from a page.
type browserCORS struct {
	base http.RoundTripper
	t    *testing.T
}

// safelisted request headers need no preflight (Fetch standard; Content-Type
// only for form types, never application/json).
var safelisted = map[string]bool{"Accept": true, "Accept-Language": true, "Content-Language": true}

// readable response headers without exposure (CORS-safelisted response
// header names).
var readable = map[string]bool{
	"Cache-Control": true, "Content-Language": true, "Content-Length": true, "Content-Type": true,
	"Expires": true, "Last-Modified": true, "Pragma": true,
}

func (b *browserCORS) RoundTrip(req *http.Request) (*http.Response, error) {
	var custom []string
	for k := range req.Header {
		if !safelisted[http.CanonicalHeaderKey(k)] {
			custom = append(custom, strings.ToLower(k))
		}
	}
	slices.Sort(custom)
	if len(custom) > 0 || (req.Method != "GET" && req.Method != "HEAD" && req.Method != "POST") {
		pre, err := http.NewRequestWithContext(req.Context(), "OPTIONS", req.URL.String(), nil)
		if err != nil {
			return nil, err
		}
		pre.Header.Set("Origin", pageOrigin)
		pre.Header.Set("Access-Control-Request-Method", req.Method)
		if len(custom) > 0 {
			pre.Header.Set("Access-Control-Request-Headers", strings.Join(custom, ","))
		}
		resp, err := b.base.RoundTrip(pre)
		if err != nil {
			return nil, err
		}
		resp.Body.Close()
		if err := checkPreflight(resp, req.Method, custom); err != nil {
			b.t.Errorf("CORS preflight for %s %s: %v", req.Method, req.URL.Path, err)
			return nil, err
		}
	}

	req = req.Clone(req.Context())
	req.Header.Set("Origin", pageOrigin)
	resp, err := b.base.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	if got := resp.Header.Get("Access-Control-Allow-Origin"); got != pageOrigin {
		resp.Body.Close()
		err := fmt.Errorf("Access-Control-Allow-Origin = %q", got)
		b.t.Errorf("CORS %s %s: %v", req.Method, req.URL.Path, err)
		return nil, err
	}
	exposed := lowerSet(resp.Header.Values("Access-Control-Expose-Headers"))
	for k := range resp.Header {
		if !readable[k] && !exposed[strings.ToLower(k)] {
			resp.Header.Del(k) // the page cannot see it
		}
	}
	return resp, nil
}

func checkPreflight(resp *http.Response, method string, headers []string) error {
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return fmt.Errorf("status %d", resp.StatusCode)
	}
	if got := resp.Header.Get("Access-Control-Allow-Origin"); got != pageOrigin {
		return fmt.Errorf("Access-Control-Allow-Origin = %q", got)
	}
	methods := lowerSet(resp.Header.Values("Access-Control-Allow-Methods"))
	if method != "GET" && method != "HEAD" && method != "POST" && !methods[strings.ToLower(method)] {
		return fmt.Errorf("method %s not allowed (%q)", method, resp.Header.Values("Access-Control-Allow-Methods"))
	}
	allowed := lowerSet(resp.Header.Values("Access-Control-Allow-Headers"))
	for _, h := range headers {
		if !allowed[h] {
			return fmt.Errorf("header %s not allowed (%q)", h, resp.Header.Values("Access-Control-Allow-Headers"))
		}
	}
	return nil
}

func lowerSet(values []string) map[string]bool {
	set := map[string]bool{}
	for _, v := range values {
		for p := range strings.SplitSeq(v, ",") {
			set[strings.ToLower(strings.TrimSpace(p))] = true
		}
	}
	return set
}
