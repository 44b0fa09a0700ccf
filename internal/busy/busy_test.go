package busy_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpwasm/mcpwasm/internal/busy"
	"github.com/mcpwasm/mcpwasm/mcperr"
)

// server answers the first len(answers) requests with those statuses and
// Retry-After values ("" for none), then 200 "ok"; it records each
// request's body.
type server struct {
	mu     sync.Mutex
	bodies []string
	srv    *httptest.Server
}

type answer struct {
	status     int
	retryAfter string
}

func start(t *testing.T, answers ...answer) *server {
	t.Helper()
	s := &server{}
	s.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		s.mu.Lock()
		n := len(s.bodies)
		s.bodies = append(s.bodies, string(b))
		s.mu.Unlock()
		if n < len(answers) {
			if a := answers[n]; a.retryAfter != "" {
				w.Header().Set("Retry-After", a.retryAfter)
			}
			w.WriteHeader(answers[n].status)
			io.WriteString(w, "busy")
			return
		}
		io.WriteString(w, "ok")
	}))
	t.Cleanup(s.srv.Close)
	return s
}

func (s *server) seen() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.bodies...)
}

// sleeps records the waits asked for, without waiting.
type sleeps struct {
	mu sync.Mutex
	d  []time.Duration
}

func (s *sleeps) sleep(ctx context.Context, d time.Duration) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.d = append(s.d, d)
	return ctx.Err()
}

func post(t *testing.T, p busy.Policy, ctx context.Context, url string) (*http.Response, error) {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/call"}`))
	if err != nil {
		t.Fatal(err)
	}
	c := &http.Client{Transport: p.Transport(http.DefaultTransport)}
	return c.Do(req)
}

func TestRetriesAfterRetryAfter(t *testing.T) {
	s := start(t, answer{429, "1"}, answer{503, "2"})
	var sl sleeps
	resp, err := post(t, busy.Policy{Sleep: sl.sleep}, context.Background(), s.srv.URL)
	if err != nil {
		t.Fatalf("post: %v; want the third answer", err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || string(body) != "ok" {
		t.Errorf("answer %d %q; want 200 ok", resp.StatusCode, body)
	}
	if diff := cmp.Diff([]time.Duration{time.Second, 2 * time.Second}, sl.d); diff != "" {
		t.Errorf("waits (-want +got):\n%s", diff)
	}
	got := s.seen()
	if len(got) != 3 {
		t.Fatalf("the server saw %d requests; want 3", len(got))
	}
	for i, b := range got {
		if b != got[0] || b == "" {
			t.Errorf("request %d carried %q; want the body of the first, %q", i, b, got[0])
		}
	}
}

func TestRetryAfterPastTheCapFailsAtOnce(t *testing.T) {
	s := start(t, answer{429, "120"})
	var sl sleeps
	_, err := post(t, busy.Policy{Sleep: sl.sleep}, context.Background(), s.srv.URL)
	var b *mcperr.Busy
	if !errors.As(err, &b) || b.Status != 429 || b.After != 120*time.Second {
		t.Fatalf("post: %v; want an *mcperr.Busy with status 429 and 120 s", err)
	}
	if c := mcperr.CodeOf(err, ""); c != mcperr.HTTP {
		t.Errorf("code %q; want http", c)
	}
	host := strings.TrimPrefix(s.srv.URL, "http://")
	if msg, _ := mcperr.Present(err); msg != "The server at "+host+" is busy (HTTP 429); try again in 120 s." {
		t.Errorf("message %q", msg)
	}
	if n := len(s.seen()); n != 1 || len(sl.d) != 0 {
		t.Errorf("requests %d, waits %v; want 1 request and no wait", n, sl.d)
	}
}

func TestBurstWithoutRetryAfterBacksOffBounded(t *testing.T) {
	s := start(t, answer{503, ""}, answer{503, ""}, answer{503, ""}, answer{503, ""}, answer{503, ""})
	var sl sleeps
	_, err := post(t, busy.Policy{Sleep: sl.sleep}, context.Background(), s.srv.URL)
	var b *mcperr.Busy
	if !errors.As(err, &b) || b.Status != 503 || b.After != 0 {
		t.Fatalf("post: %v; want an *mcperr.Busy with status 503 and no Retry-After", err)
	}
	if msg, _ := mcperr.Present(err); !strings.HasSuffix(msg, "is busy (HTTP 503); try again later.") {
		t.Errorf("message %q", msg)
	}
	if n := len(s.seen()); n != 1+busy.DefaultRetries {
		t.Errorf("the server saw %d requests; want %d", n, 1+busy.DefaultRetries)
	}
	if len(sl.d) != busy.DefaultRetries {
		t.Fatalf("waits %v; want %d", sl.d, busy.DefaultRetries)
	}
	for i, d := range sl.d {
		hi := busy.DefaultBackoff << i
		if d < hi/2 || d > hi {
			t.Errorf("wait %d = %v; want between %v and %v (doubling, with jitter)", i, d, hi/2, hi)
		}
	}
}

func TestAbortEndsTheWait(t *testing.T) {
	s := start(t, answer{429, "20"})
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		for len(s.seen()) == 0 {
			time.Sleep(5 * time.Millisecond)
		}
		cancel()
	}()
	_, err := post(t, busy.Policy{}, ctx, s.srv.URL)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("post: %v; want context.Canceled", err)
	}
	if n := len(s.seen()); n != 1 {
		t.Errorf("the server saw %d requests; want 1", n)
	}
}

func TestDeadlineBeforeTheWaitFailsAtOnce(t *testing.T) {
	s := start(t, answer{429, "20"})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var sl sleeps
	_, err := post(t, busy.Policy{Sleep: sl.sleep}, ctx, s.srv.URL)
	var b *mcperr.Busy
	if !errors.As(err, &b) || b.After != 20*time.Second {
		t.Fatalf("post: %v; want an *mcperr.Busy that says 20 s", err)
	}
	if len(sl.d) != 0 {
		t.Errorf("waits %v; want none (the deadline comes first)", sl.d)
	}
}

func TestUnreplayableBodyIsNotRetried(t *testing.T) {
	s := start(t, answer{429, "1"})
	var sl sleeps
	req, _ := http.NewRequest(http.MethodPost, s.srv.URL, io.NopCloser(strings.NewReader("once")))
	resp, err := (&http.Client{Transport: busy.Policy{Sleep: sl.sleep}.Transport(http.DefaultTransport)}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 429 || len(s.seen()) != 1 || len(sl.d) != 0 {
		t.Errorf("status %d, requests %d, waits %v; want the 429 as it came, 1 request, no wait", resp.StatusCode, len(s.seen()), sl.d)
	}
}

func TestNetworkErrorIsNotRetried(t *testing.T) {
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		conn, _, _ := w.(http.Hijacker).Hijack()
		conn.Close() // the request may have been acted on: no answer
	}))
	defer srv.Close()
	var sl sleeps
	_, err := post(t, busy.Policy{Sleep: sl.sleep}, context.Background(), srv.URL)
	if err == nil || n.Load() != 1 || len(sl.d) != 0 {
		t.Errorf("post: %v after %d requests and waits %v; want the error after 1 request", err, n.Load(), sl.d)
	}
}

func TestAfter(t *testing.T) {
	now := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	for _, tt := range []struct {
		v    string
		want time.Duration
	}{
		{"", 0},
		{"5", 5 * time.Second},
		{" 1.5 ", 1500 * time.Millisecond},
		{"0", 0},
		{"-3", 0},
		{"NaN", 0},
		{"99999999999", 0},
		{"soon", 0},
		{"Fri, 27 Nov 2026 12:00:40 GMT", 40 * time.Second},
		{"Fri, 27 Nov 2026 11:59:00 GMT", 0},
	} {
		if got := busy.After(http.Header{"Retry-After": {tt.v}}, now); got != tt.want {
			t.Errorf("After(%q) = %v; want %v", tt.v, got, tt.want)
		}
	}
}

func TestBusy(t *testing.T) {
	for s, want := range map[int]bool{429: true, 503: true, 500: false, 502: false, 504: false, 200: false, 401: false} {
		if busy.Busy(s) != want {
			t.Errorf("Busy(%d) = %v; want %v", s, !want, want)
		}
	}
}
