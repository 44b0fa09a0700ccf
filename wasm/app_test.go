//go:build js && wasm

package main

import (
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
		a := &app{clients: map[int]*clientEntry{}}
		for i, e := range tc.entries {
			a.clients[i] = e
		}
		if got := a.clientSecret("https://as.example", "app"); got != tc.want {
			t.Errorf("%s: secret %q; want %q", tc.name, got, tc.want)
		}
	}
}
