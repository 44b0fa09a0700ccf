package main

import (
	"context"
	"math/rand/v2"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestSoakServers: the soak's five servers answer through their proxies
// (the two behind sign-in with a 401), each offers the tool the soak's
// prompt asks for, and a fault of every kind is injected and healed.
func TestSoakServers(t *testing.T) {
	srv, err := startSoakServers(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	hc := &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone(), Timeout: 10 * time.Second}
	ctx := t.Context()
	call := func(sv *soakServer) error {
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "soak-test", Version: "1"}, nil).
			Connect(ctx, &mcp.StreamableClientTransport{Endpoint: sv.URL, HTTPClient: hc, MaxRetries: -1}, nil)
		if err != nil {
			return err
		}
		defer cs.Close()
		tools, err := cs.ListTools(ctx, nil)
		if err != nil {
			return err
		}
		for _, tl := range tools.Tools {
			if tl.Name == sv.Tool {
				return nil
			}
		}
		t.Errorf("%s offers no tool %s", sv.ID, sv.Tool)
		return nil
	}
	ids := []string{}
	for _, sv := range srv.list {
		ids = append(ids, sv.ID)
		if sv.as != nil {
			resp, err := hc.Post(sv.URL, "application/json", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`))
			if err != nil {
				t.Fatalf("%s: %v", sv.ID, err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusUnauthorized {
				t.Errorf("%s without a token: %d; want 401", sv.ID, resp.StatusCode)
			}
			continue
		}
		if err := call(sv); err != nil {
			t.Errorf("%s: %v", sv.ID, err)
		}
	}
	if got := strings.Join(ids, " "); got != "alpha beta gamma delta epsilon" {
		t.Errorf("servers %s", got)
	}
	gamma := srv.list[2]
	gamma.proxy.Down()
	if err := call(gamma); err == nil {
		t.Error("gamma answered with its proxy down")
	}
	gamma.proxy.Up()
	if err := call(gamma); err != nil {
		t.Errorf("gamma after Up: %v", err)
	}
	// Every kind of fault, briefly, at every server: each comes and goes
	// without an error of the proxies.
	all := []string{faultDown, faultReset, faultLatency, faultLimitData, faultBusy, faultTokenBusy, faultRestart}
	kinds := map[string]bool{}
	rng := rand.New(rand.NewPCG(1, 2))
	n := 0
	for round := 0; round < 10 && len(kinds) < len(all); round++ {
		fctx, stop := context.WithTimeout(ctx, time.Second)
		for _, f := range injectFaultsEvery(fctx, srv.list, rng, 10*time.Millisecond) {
			kinds[f.Kind] = true
			n++
		}
		stop()
	}
	for _, sv := range srv.list {
		if err := sv.proxy.Err(); err != nil {
			t.Errorf("%s's proxy: %v", sv.ID, err)
		}
	}
	for _, k := range all {
		if !kinds[k] {
			t.Errorf("no %s fault among %d", k, n)
		}
	}
	for _, sv := range srv.list[2:] {
		if err := call(sv); err != nil {
			t.Errorf("%s after the faults: %v", sv.ID, err)
		}
	}
}
