package oauth

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mcpwasm/mcpwasm/mcperr"
)

// blockingCourier ignores its context and never returns until released.
type blockingCourier struct{ release chan struct{} }

// Every wait ends: a courier that ignores ctx ends as a timeout, which
// latches like a dismissal (no new courier call until Login).
func TestStuckCourierTimesOut(t *testing.T) {
	e := newEnv(t)
	bc := blockingCourier{release: make(chan struct{})}
	t.Cleanup(func() { close(bc.release) })
	h := e.handler(t, func(c *Config) { c.Courier = bc; c.AuthTimeout = 200 * time.Millisecond })
	start := time.Now()
	err := h.Login(context.Background())
	if mcperr.CodeOf(err, "") != mcperr.Timeout || time.Since(start) > 5*time.Second {
		t.Fatalf("Login with a stuck courier: %v after %v; want timeout", err, time.Since(start))
	}
	// The person never finished: the message says so, not that the server was slow.
	if msg, _ := mcperr.Present(mcperr.AtServer(err, "mcp.example.com")); !strings.HasPrefix(msg, "The sign-in to the server at mcp.example.com was not finished within ") {
		t.Errorf("message = %q; want one saying the sign-in was not finished", msg)
	}
	req, resp := unauthorized401(e.rs.url(), "")
	if err := h.Authorize(context.Background(), req, resp); !errors.Is(err, ErrDeclined) {
		t.Errorf("Authorize after the timeout: %v; want ErrDeclined (latched)", err)
	}
	if h.State() != StateDeclined {
		t.Errorf("state = %q; want declined", h.State())
	}
}

func (c blockingCourier) Open(context.Context, string) (<-chan error, error) {
	<-c.release
	return nil, nil
}

// Discovery against a server that never answers ends at AuthTimeout as a
// failure (not a decline: the user was never asked), so the next 401 may
// try again.
func TestHangingDiscoveryTimesOut(t *testing.T) {
	e := newEnv(t)
	hang := make(chan struct{})
	inner := e.as.srv.Config.Handler
	e.as.srv.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/.well-known/") {
			select {
			case <-hang:
			case <-r.Context().Done():
				return
			}
		}
		inner.ServeHTTP(w, r)
	})
	h := e.handler(t, func(c *Config) {
		c.AuthTimeout = 200 * time.Millisecond
		c.HTTPClient = &http.Client{Transport: http.DefaultTransport} // no client timeout: only ctx ends it
	})
	req, resp := unauthorized401(e.rs.url(), "")
	err := h.Authorize(context.Background(), req, resp)
	if mcperr.CodeOf(err, "") != mcperr.Timeout || errors.Is(err, ErrDeclined) {
		t.Fatalf("Authorize with hanging discovery: %v; want a timeout that is not a decline", err)
	}
	if h.State() != StateFailed {
		t.Errorf("state = %q; want failed", h.State())
	}
	close(hang)
	h.cfg.AuthTimeout = 10 * time.Second
	req, resp = unauthorized401(e.rs.url(), "")
	if err := h.Authorize(context.Background(), req, resp); err != nil {
		t.Errorf("next attempt: %v; want a completed flow", err)
	}
}
