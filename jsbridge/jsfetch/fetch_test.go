//go:build js && wasm

package jsfetch

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
)

// These tests need a server: e2e/xengine/jsfetch_node_test.go starts one on loopback
// (the handlers are there) and runs them with Node's fetch, passing its URL
// in JSFETCH_TEST_URL. Without it they are skipped.
func server(t *testing.T) string {
	t.Helper()
	u := os.Getenv("JSFETCH_TEST_URL")
	if u == "" {
		t.Skip("JSFETCH_TEST_URL is not set; e2e/xengine/jsfetch_node_test.go runs these tests against its server")
	}
	if !Available() {
		t.Fatal("no fetch in this JavaScript environment")
	}
	return u
}

// ctx bounds a test, so that a transport that hangs fails it instead of
// hanging the run.
func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return c
}

func do(t *testing.T, c context.Context, method, url string, body io.Reader, h http.Header) *http.Response {
	t.Helper()
	req, err := http.NewRequestWithContext(c, method, url, body)
	if err != nil {
		t.Fatal(err)
	}
	for k, vs := range h {
		req.Header[k] = vs
	}
	resp, err := (&Transport{}).RoundTrip(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	return resp
}

func get(t *testing.T, c context.Context, url string) string {
	t.Helper()
	resp := do(t, c, "GET", url, nil, nil)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	return string(b)
}

// TestJSONInOneRead: a JSON body that the server sends in two parts, the
// second only after the client asked for it, comes whole in the first
// Read: it is read in one step, not chunk by chunk.
func TestJSONInOneRead(t *testing.T) {
	u, c := server(t), ctx(t)
	resp := do(t, c, "GET", u+"/json-split", nil, nil)
	defer resp.Body.Close()
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("status %d, Content-Type %q", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	if resp.ContentLength != int64(len(splitJSON)) {
		t.Errorf("ContentLength %d, want %d", resp.ContentLength, len(splitJSON))
	}
	got := make(chan string, 1)
	go func() {
		buf := make([]byte, 1<<16)
		n, err := resp.Body.Read(buf)
		if err != nil && err != io.EOF {
			got <- "error: " + err.Error()
			return
		}
		got <- string(buf[:n])
	}()
	if s := get(t, c, u+"/release?k=json"); s != "released" {
		t.Fatalf("release: %q", s)
	}
	if s := <-got; s != splitJSON {
		t.Fatalf("first Read gave %q, want the whole body %q", s, splitJSON)
	}
	if n, err := resp.Body.Read(make([]byte, 10)); n != 0 || err != io.EOF {
		t.Fatalf("after the body: %d, %v; want 0, EOF", n, err)
	}
}

const splitJSON = `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"first half"},{"type":"text","text":"second half"}]}}`

// TestEventStreamIsIncremental: the first event of a stream arrives while
// the server still holds the stream open, and the rest after it.
func TestEventStreamIsIncremental(t *testing.T) {
	u, c := server(t), ctx(t)
	resp := do(t, c, "GET", u+"/sse", nil, http.Header{"Accept": {"text/event-stream"}})
	defer resp.Body.Close()
	if resp.ContentLength != -1 {
		t.Errorf("ContentLength %d, want -1", resp.ContentLength)
	}
	r := bufio.NewReader(resp.Body)
	line, err := r.ReadString('\n')
	if err != nil || line != "data: one\n" {
		t.Fatalf("first line %q, %v", line, err)
	}
	// The server has not ended the stream yet: it waits for this.
	if s := get(t, c, u+"/release?k=sse"); s != "released" {
		t.Fatalf("release: %q", s)
	}
	rest, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	if string(rest) != "\ndata: two\n\n" {
		t.Fatalf("rest %q", rest)
	}
}

// TestStreamChunksOfAnySize: a stream of many small chunks and one larger
// than the buffer chunks are copied into reads back byte for byte.
func TestStreamChunksOfAnySize(t *testing.T) {
	u, c := server(t), ctx(t)
	resp := do(t, c, "GET", u+"/sse-mixed", nil, http.Header{"Accept": {"text/event-stream"}})
	defer resp.Body.Close()
	got, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	var want strings.Builder
	for i := 0; i < 50; i++ {
		want.WriteString("data: " + strconv.Itoa(i) + "\n\n")
	}
	want.WriteString("data: " + strings.Repeat("abcdefghij", 5000) + "\n\n")
	for i := 50; i < 100; i++ {
		want.WriteString("data: " + strconv.Itoa(i) + "\n\n")
	}
	if string(got) != want.String() {
		t.Fatalf("read %d bytes; want the %d the server wrote (first difference at %d)", len(got), want.Len(), firstDiff(string(got), want.String()))
	}
}

func firstDiff(a, b string) int {
	for i := 0; i < len(a) && i < len(b); i++ {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

// TestCancelAbortsPendingFetch: cancelling the context of a request the
// server has not answered ends RoundTrip with the context's error, and the
// server sees the connection closed.
func TestCancelAbortsPendingFetch(t *testing.T) {
	u, c := server(t), ctx(t)
	rc, cancel := context.WithCancel(c)
	done := make(chan error, 1)
	go func() {
		req, _ := http.NewRequestWithContext(rc, "GET", u+"/hang?k=headers", nil)
		resp, err := (&Transport{}).RoundTrip(req)
		if err == nil {
			resp.Body.Close()
		}
		done <- err
	}()
	if s := get(t, c, u+"/arrived?k=headers"); s != "arrived" {
		t.Fatalf("arrived: %q", s)
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("RoundTrip after cancel: %v, want context.Canceled", err)
	}
	if s := get(t, c, u+"/closed?k=headers"); s != "closed" {
		t.Fatalf("the server did not see the request end: %q", s)
	}
}

// TestCancelUnblocksRead: cancelling the context while a Read waits for
// the next event ends the Read with the context's error, and the server
// sees the connection closed.
func TestCancelUnblocksRead(t *testing.T) {
	u, c := server(t), ctx(t)
	rc, cancel := context.WithCancel(c)
	resp := do(t, rc, "GET", u+"/hang?k=body", nil, nil)
	defer resp.Body.Close()
	r := bufio.NewReader(resp.Body)
	if line, err := r.ReadString('\n'); err != nil || line != "data: first\n" {
		t.Fatalf("first line %q, %v", line, err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := io.ReadAll(r)
		done <- err
	}()
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("Read after cancel: %v, want context.Canceled", err)
	}
	if s := get(t, c, u+"/closed?k=body"); s != "closed" {
		t.Fatalf("the server did not see the request end: %q", s)
	}
}

// TestCloseUnblocksRead: closing the body while a Read waits ends the
// Read (how a stream is stopped from another goroutine).
func TestCloseUnblocksRead(t *testing.T) {
	u, c := server(t), ctx(t)
	resp := do(t, c, "GET", u+"/hang?k=close", nil, nil)
	r := bufio.NewReader(resp.Body)
	if line, err := r.ReadString('\n'); err != nil || line != "data: first\n" {
		t.Fatalf("first line %q, %v", line, err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := io.ReadAll(r)
		done <- err
	}()
	// Let the reader block on the next chunk first.
	time.Sleep(50 * time.Millisecond)
	resp.Body.Close()
	<-done // ReadAll returns (EOF or closed); a hang fails the test by its deadline
	if s := get(t, c, u+"/closed?k=close"); s != "closed" {
		t.Fatalf("the server did not see the request end: %q", s)
	}
}

// TestHeadersAndBody: multi-valued headers both ways, a JSON request body
// and a binary one without a Content-Type arrive as sent; the status and
// Content-Length come back.
func TestHeadersAndBody(t *testing.T) {
	u, c := server(t), ctx(t)
	body := `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo","arguments":{"text":"héllo"}}}`
	resp := do(t, c, "POST", u+"/echo", strings.NewReader(body), http.Header{
		"Content-Type": {"application/json"},
		"X-Multi":      {"a", "b"},
		"X-Single":     {"one"},
	})
	defer resp.Body.Close()
	if resp.StatusCode != 201 || resp.Status != "201 Created" {
		t.Fatalf("status %d %q", resp.StatusCode, resp.Status)
	}
	if got := resp.Header.Get("X-Seen-Multi"); got != "a, b" {
		t.Errorf("server saw X-Multi %q, want %q", got, "a, b")
	}
	if got := resp.Header.Get("X-Seen-Content-Type"); got != "application/json" {
		t.Errorf("server saw Content-Type %q", got)
	}
	if got := strings.Join(resp.Header.Values("X-Reply"), "|"); got != "1, 2" {
		t.Errorf("X-Reply %q, want %q (fetch joins repeated headers)", got, "1, 2")
	}
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != body {
		t.Fatalf("echo %q, want %q", b, body)
	}
	if resp.ContentLength != int64(len(body)) {
		t.Errorf("ContentLength %d, want %d", resp.ContentLength, len(body))
	}

	bin := string([]byte{0, 1, 0xff, 0xfe, 'x'})
	resp2 := do(t, c, "POST", u+"/echo", strings.NewReader(bin), nil)
	b2, err := io.ReadAll(resp2.Body)
	resp2.Body.Close()
	if err != nil || string(b2) != bin {
		t.Fatalf("binary echo %q, %v", b2, err)
	}
	if got := resp2.Header.Get("X-Seen-Content-Type"); got != "" {
		t.Errorf("a body without Content-Type arrived with %q", got)
	}
}

// TestBodiesReadInSmallPieces: bodies read in pieces smaller than they
// are (io.ReadAll starts at 512 bytes) arrive whole, one read in one step
// and one past the one-step limit, read as a stream.
func TestBodiesReadInSmallPieces(t *testing.T) {
	u, c := server(t), ctx(t)
	for _, size := range []int{3000, maxOneStep + 4096} {
		body := `{"pad":"` + strings.Repeat("x", size) + `"}`
		resp := do(t, c, "POST", u+"/echo", strings.NewReader(body), http.Header{"Content-Type": {"application/json"}})
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil || string(b) != body {
			t.Fatalf("size %d: read %d bytes, %v; want %d", size, len(b), err, len(body))
		}
	}
}

// TestRedirectFollowed: a followed redirect shows in Response.Request.URL
// (httpguard reads where a probe led from it).
func TestRedirectFollowed(t *testing.T) {
	u, c := server(t), ctx(t)
	resp := do(t, c, "GET", u+"/redirect", nil, nil)
	defer resp.Body.Close()
	if resp.Request.URL.String() != u+"/target" {
		t.Fatalf("Request.URL %s, want %s", resp.Request.URL, u+"/target")
	}
	if b, _ := io.ReadAll(resp.Body); string(b) != "target" {
		t.Fatalf("body %q", b)
	}
}

// TestNetworkError: a request nobody answers is an error, not a panic.
func TestNetworkError(t *testing.T) {
	_, c := server(t), ctx(t)
	req, _ := http.NewRequestWithContext(c, "GET", "http://127.0.0.1:1/", nil)
	if _, err := (&Transport{}).RoundTrip(req); err == nil || !strings.Contains(err.Error(), "fetch() failed") {
		t.Fatalf("err %v", err)
	}
}
