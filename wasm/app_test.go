//go:build js && wasm

package main

import (
	"fmt"
	"testing"

	"github.com/mcpwasm/mcpwasm/jsapi"
)

// TestClientSecretRule: a redirect return finishes a confidential
// client's flow with the secret the page configured for that client ID;
// when two of the page's clients give the same ID different secrets, none
// is sent, rather than one server's secret to another.
func TestClientSecretRule(t *testing.T) {
	entry := func(id, secret string) *clientEntry {
		return &clientEntry{opts: jsapi.ClientOptions{ClientID: id, ClientSecret: secret}}
	}
	for _, tc := range []struct {
		name    string
		entries []*clientEntry
		want    string
	}{
		{"one client", []*clientEntry{entry("app", "s1")}, "s1"},
		{"two clients agree", []*clientEntry{entry("app", "s1"), entry("app", "s1")}, "s1"},
		{"two clients disagree", []*clientEntry{entry("app", "s1"), entry("app", "s2")}, ""},
		{"a public client beside", []*clientEntry{entry("app", ""), entry("app", "s1")}, "s1"},
		{"another client ID", []*clientEntry{entry("other", "s1")}, ""},
		{"no clients", nil, ""},
	} {
		a := &app{clients: map[string]*clientEntry{}}
		for i, e := range tc.entries {
			a.clients[fmt.Sprint(i)] = e
		}
		if got := a.clientSecret("https://as.example", "app"); got != tc.want {
			t.Errorf("%s: secret %q; want %q", tc.name, got, tc.want)
		}
	}
}

// TestRedirectOf: redirect_unhandled names the redirect URI the
// authorization URL carries, never a query (which may hold a code).
func TestRedirectOf(t *testing.T) {
	for _, tc := range []struct{ auth, landed, want string }{
		{"https://as.example/authorize?client_id=c&redirect_uri=http%3A%2F%2F127.0.0.1%3A5173%2Fassets%2Foauth%2Fcallback.html&state=s",
			"http://127.0.0.1:5173/other", "http://127.0.0.1:5173/assets/oauth/callback.html"},
		{"https://as.example/authorize?redirect_uri=https%3A%2F%2Fapp.example%2Fcb%3Fx%3D1%23f", "", "https://app.example/cb"},
		{"https://as.example/authorize", "https://app.example/cb?code=secret&state=s", "https://app.example/cb"},
		{"https://as.example/authorize", "javascript:alert(1)", "its redirect URI"},
	} {
		if got := redirectOf(tc.auth, tc.landed); got != tc.want {
			t.Errorf("redirectOf(%q, %q) = %q; want %q", tc.auth, tc.landed, got, tc.want)
		}
	}
}
