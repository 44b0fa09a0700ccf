package oauth

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpwasm/mcpwasm/mcperr"
)

// busyAnswerOf is a busy answer of the fake authorization server's token
// endpoint: status with Retry-After ("" for none).
type busyAnswerOf struct {
	status     int
	retryAfter string
}

// noBusyWaits makes token requests wait for a busy endpoint without
// waiting, and returns the waits they asked for.
func noBusyWaits(t *testing.T) func() []time.Duration {
	t.Helper()
	var mu sync.Mutex
	var waits []time.Duration
	old := tokenBusy
	tokenBusy.Sleep = func(ctx context.Context, d time.Duration) error {
		mu.Lock()
		defer mu.Unlock()
		waits = append(waits, d)
		return ctx.Err()
	}
	t.Cleanup(func() { tokenBusy = old })
	return func() []time.Duration {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(waits)
	}
}

// TestTokenBusyRetries: a code exchange and a refresh that meet a busy
// token endpoint (429 with Retry-After, a 503 burst without) wait and
// send the request again, each time with a new DPoP proof (the AS checks
// each proof's jti before it answers busy, so a replayed proof fails), and
// succeed without a second sign-in.
func TestTokenBusyRetries(t *testing.T) {
	waits := noBusyWaits(t)
	e := dpopEnv(t)
	e.as.busy = []busyAnswerOf{{429, "2"}}
	h := e.handler(t, nil)
	ctx := ctxOf(t)
	if err := h.Login(ctx); err != nil {
		t.Fatalf("Login through a 429: %v", err)
	}
	if got := waits(); !slices.Equal(got, []time.Duration{2 * time.Second}) {
		t.Errorf("waits of the code exchange = %v; want [2s] (its Retry-After)", got)
	}
	g, _ := e.store.GetGrant(ctx, h.Resource())
	e.as.mu.Lock()
	e.as.busy = []busyAnswerOf{{503, ""}, {503, ""}}
	e.as.mu.Unlock()
	ng, err := h.refresh(ctx, g)
	if err != nil {
		t.Fatalf("refresh through a 503 burst: %v", err)
	}
	if ng.AccessToken == g.AccessToken || ng.TokenType != "DPoP" {
		t.Errorf("refreshed grant: new token %v, type %q; want a new DPoP token", ng.AccessToken != g.AccessToken, ng.TokenType)
	}
	if n := len(waits()); n != 3 {
		t.Errorf("waits = %v; want 3 (one for the 429, two for the burst)", waits())
	}
	if n := e.courier.calls.Load(); n != 1 {
		t.Errorf("sign-in pages shown = %d; want 1", n)
	}
}

// TestTokenBusyGivesUp: a Retry-After past the cap ends the token request
// at once, and a burst longer than the retries ends it after them; the
// error is http with the status and a message saying when to try again.
func TestTokenBusyGivesUp(t *testing.T) {
	for _, tt := range []struct {
		name     string
		busy     []busyAnswerOf
		status   int
		requests int
		message  string
	}{
		{"past the cap", []busyAnswerOf{{429, "600"}}, 429, 1, "is busy (HTTP 429); try again in 600 s."},
		{"a long burst", slices.Repeat([]busyAnswerOf{{503, ""}}, 10), 503, 4, "is busy (HTTP 503); try again later."},
	} {
		t.Run(tt.name, func(t *testing.T) {
			noBusyWaits(t)
			e := newEnv(t)
			e.as.busy = tt.busy
			h := e.handler(t, nil)
			err := h.Login(ctxOf(t))
			var b *mcperr.Busy
			if !errors.As(err, &b) || mcperr.CodeOf(err, "") != mcperr.HTTP || mcperr.StatusOf(err) != tt.status {
				t.Fatalf("Login: %v; want an http error with status %d", err, tt.status)
			}
			host := strings.TrimPrefix(e.as.srv.URL, "http://")
			if msg, _ := mcperr.Present(err); msg != "The server at "+host+" "+tt.message {
				t.Errorf("message %q; want it to name %s and say %q", msg, host, tt.message)
			}
			if n := e.as.req.get("/token"); n != tt.requests {
				t.Errorf("token requests = %d; want %d", n, tt.requests)
			}
		})
	}
}
