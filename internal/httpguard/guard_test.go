package httpguard

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/mcpwasm/mcpwasm/mcperr"
)

func TestRequestsStayOnTheOrigin(t *testing.T) {
	var otherHits atomic.Int32
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { otherHits.Add(1) }))
	t.Cleanup(other.Close)
	var sawKey atomic.Value
	home := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/away":
			http.Redirect(w, r, other.URL+"/x", http.StatusTemporaryRedirect)
		case "/moved":
			http.Redirect(w, r, "/here", http.StatusPermanentRedirect)
		case "/loop":
			http.Redirect(w, r, "/loop", http.StatusFound)
		default:
			sawKey.Store(r.Header.Get("X-Key"))
		}
	}))
	t.Cleanup(home.Close)
	hc := NewClient(&Transport{
		Origin: "http://" + strings.TrimPrefix(home.URL, "http://"),
		Credentials: func(r *http.Request) error {
			r.Header.Set("X-Key", "secret")
			return nil
		},
		CredentialHeaders: []string{"X-Key"},
	})
	get := func(u string) error {
		resp, err := hc.Post(u, "application/json", strings.NewReader(`{}`))
		if err == nil {
			resp.Body.Close()
		}
		return err
	}

	if err := get(home.URL + "/moved"); err != nil {
		t.Fatalf("a redirect within the origin: %v", err)
	}
	if got := sawKey.Load(); got != "secret" {
		t.Errorf("the redirect target got X-Key %q; want the credential", got)
	}
	for _, u := range []string{home.URL + "/away", other.URL + "/direct"} {
		err := get(u)
		var oe *OffOriginError
		if !errors.As(err, &oe) || mcperr.CodeOf(err, "") != mcperr.Protocol {
			t.Errorf("%s: error %v; want an OffOriginError coded protocol", u, err)
		}
	}
	if n := otherHits.Load(); n != 0 {
		t.Errorf("the other origin got %d requests; want 0", n)
	}
	if err := get(home.URL + "/loop"); err == nil || !strings.Contains(err.Error(), "more than 5 times") {
		t.Errorf("a redirect loop: %v", err)
	}
}

func TestBadHeaderValuesNeverLeave(t *testing.T) {
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hits.Add(1) }))
	t.Cleanup(srv.Close)
	for _, v := range []string{"a\r\nX-Injected: 1", "abc-€✓", "nul\x00"} {
		hc := NewClient(&Transport{Credentials: func(r *http.Request) error {
			r.Header["Authorization"] = []string{"Bearer " + v}
			return nil
		}})
		_, err := hc.Get(srv.URL)
		var he *HeaderError
		if !errors.As(err, &he) || he.Name != "Authorization" {
			t.Errorf("%q: error %v; want a HeaderError for Authorization", v, err)
		}
	}
	if n := hits.Load(); n != 0 {
		t.Errorf("the server got %d requests; want 0", n)
	}
}

type panicking struct{}

func (panicking) RoundTrip(*http.Request) (*http.Response, error) {
	panic("JavaScript error: Failed to execute 'append' on 'Headers': Invalid value")
}

func TestAPanicBelowIsAnError(t *testing.T) {
	hc := NewClient(&Transport{Base: panicking{}})
	_, err := hc.Get("http://127.0.0.1:1/")
	if mcperr.CodeOf(err, "") != mcperr.Network || !strings.Contains(err.Error(), "Invalid value") {
		t.Errorf("error %v; want a network error carrying the panic's message", err)
	}
}

func TestHeaderSyntax(t *testing.T) {
	for _, tc := range []struct {
		name, value string
		nameOK, ok  bool
	}{
		{"X-Api-Key", "abc def\tghi", true, true},
		{"X Api", "", false, true},
		{"X:Api", "", false, true},
		{"", "", false, true},
		{"Ok", "é", true, false},
		{"Ok", "\x7f", true, false},
	} {
		if got := ValidHeaderName(tc.name); got != tc.nameOK {
			t.Errorf("ValidHeaderName(%q) = %v", tc.name, got)
		}
		if got := ValidHeaderValue(tc.value); got != tc.ok {
			t.Errorf("ValidHeaderValue(%q) = %v", tc.value, got)
		}
	}
}
