package provider

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpwasm/mcpwasm/agent"
	"github.com/mcpwasm/mcpwasm/internal/busy"
	"github.com/mcpwasm/mcpwasm/mcperr"
)

func TestRetryAfter(t *testing.T) {
	tests := []struct {
		h    http.Header
		want time.Duration
	}{
		{http.Header{}, 0},
		{http.Header{"Retry-After": {"3"}}, 3 * time.Second},
		{http.Header{"Retry-After": {"1.5"}}, 1500 * time.Millisecond},
		{http.Header{"Retry-After": {"-4"}}, 0},
		{http.Header{"Retry-After": {"soon"}}, 0},
		{http.Header{"Retry-After": {"99999999999"}}, 0},
		{http.Header{"Retry-After-Ms": {"250"}, "Retry-After": {"3"}}, 250 * time.Millisecond},
		{http.Header{"Retry-After": {time.Now().Add(-time.Hour).UTC().Format(http.TimeFormat)}}, 0},
	}
	for _, tt := range tests {
		if got := RetryAfter(tt.h); got != tt.want {
			t.Errorf("RetryAfter(%v) = %v; want %v", tt.h, got, tt.want)
		}
	}
	future := http.Header{"Retry-After": {time.Now().Add(time.Minute).UTC().Format(http.TimeFormat)}}
	if got := RetryAfter(future); got < 50*time.Second || got > time.Minute {
		t.Errorf("RetryAfter(date in a minute) = %v", got)
	}
}

func TestSanitize(t *testing.T) {
	c := &Client{Key: agent.NewSecret("sk-0123456789abcdef")}
	tests := map[string]string{
		"plain":                               "plain",
		"line\nbreak\t\x1b[31mred\x1b[0m\x00": "line break [31mred [0m",
		"  padded  ":                          "padded",
		"key sk-0123456789abcdef here":        "key [redacted] here",
		"part sk-01234567 here":               "part [redacted] here",
		"bad \xff utf8":                       "bad \uFFFD utf8",
		strings.Repeat("x", 600):              strings.Repeat("x", 500) + "…",
	}
	for in, want := range tests {
		if got := c.Sanitize(in); got != want {
			t.Errorf("Sanitize(%q) = %q; want %q", in, got, want)
		}
	}
}

func TestPostRetries(t *testing.T) {
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		if string(b) != "body" {
			t.Errorf("attempt %d sent %q; want the body again", n.Load(), b)
		}
		switch n.Add(1) {
		case 1:
			w.WriteHeader(503)
		case 2:
			w.Header().Set("Retry-After", "2")
			w.WriteHeader(429)
		default:
			io.WriteString(w, "ok")
		}
	}))
	defer srv.Close()
	var waits []time.Duration
	c := &Client{Name: "test", HTTP: srv.Client(), Sleep: func(_ context.Context, d time.Duration) error {
		waits = append(waits, d)
		return nil
	}}
	resp, err := c.Post(context.Background(), srv.URL, http.Header{}, []byte("body"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if diff := cmp.Diff([]time.Duration{firstBackoff, 2 * time.Second}, waits); diff != "" {
		t.Errorf("waits (-want +got):\n%s", diff)
	}

	// No retries: the first error is final.
	n.Store(0)
	c.MaxRetries = -1
	_, err = c.Post(context.Background(), srv.URL, http.Header{}, []byte("body"))
	var pe *agent.ProviderError
	if !errors.As(err, &pe) || pe.Status != 503 || pe.Retries != 0 {
		t.Errorf("err = %v; want the 503", err)
	}
}

func TestPostAbortedWhileWaiting(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Retry-After", "10")
		w.WriteHeader(429)
	}))
	defer srv.Close()
	ctx, cancel := context.WithCancel(context.Background())
	c := &Client{Name: "test", HTTP: srv.Client(), Sleep: func(ctx context.Context, d time.Duration) error {
		cancel()
		return busy.Sleep(ctx, d)
	}}
	_, err := c.Post(ctx, srv.URL, http.Header{}, nil)
	if mcperr.CodeOf(err, "") != mcperr.Aborted {
		t.Errorf("err = %v; want aborted", err)
	}
}

func TestNetworkErrorHidesQuery(t *testing.T) {
	c := &Client{Name: "test", HTTP: &http.Client{}}
	_, err := c.Post(context.Background(), "http://127.0.0.1:1/v1/x?key=sk-secret-in-query", http.Header{}, nil)
	if mcperr.CodeOf(err, "") != mcperr.Network {
		t.Fatalf("err = %v; want network", err)
	}
	if !strings.Contains(err.Error(), "could not reach http://127.0.0.1:1/v1/x;") || strings.Contains(err.Error(), "sk-secret") {
		t.Errorf("err = %v", err)
	}
}
