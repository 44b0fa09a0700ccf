package xengine

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestJSFetch runs the GOOS=js tests of jsbridge/jsfetch (the wasm build's
// HTTP transport) under Node's fetch against the server below, on loopback:
// a JSON body read in one step, an event stream delivered as it comes,
// cancellation that the server sees as a closed connection, headers and
// bodies both ways, a followed redirect. (Manual redirects, which only a
// browser answers with an opaque response, are covered in Chromium by the
// hostile discovery tests.)
//
// It runs no browser: the engine passes skip it but the Chromium pass in
// the auto runtime, so that make test runs it once.
func TestJSFetch(t *testing.T) {
	if browser.Name() != "chromium" || runtimeMode() != "auto" {
		t.Skipf("runs Go's wasm tests under Node, in no browser: once per make test, in the chromium auto pass (this is %s, %s)", browser.Name(), runtimeMode())
	}
	if _, err := exec.LookPath("node"); err != nil {
		t.Fatal("node is not installed: the wasm transport is tested under Node (Node 20, make deps)")
	}
	srv := httptest.NewServer(jsfetchHandler())
	defer srv.Close()
	goroot, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		t.Fatal(err)
	}
	execWasm := filepath.Join(strings.TrimSpace(string(goroot)), "lib", "wasm", "go_js_wasm_exec")
	cmd := exec.Command("go", "test", "-count=1", "-v", "-exec="+execWasm, "./jsbridge/jsfetch/")
	cmd.Dir = repo
	cmd.Env = append(os.Environ(), "GOOS=js", "GOARCH=wasm", "JSFETCH_TEST_URL="+srv.URL)
	out, err := cmd.CombinedOutput()
	t.Logf("%s", out)
	if err != nil {
		t.Fatalf("the jsfetch tests failed: %v", err)
	}
	if strings.Contains(string(out), "--- SKIP") {
		t.Fatal("a jsfetch test was skipped")
	}
}

// jsfetchSignals are named one-shot events between the handlers and the tests.
type jsfetchSignals struct {
	mu sync.Mutex
	m  map[string]chan struct{}
}

func (s *jsfetchSignals) ch(name string) chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.m == nil {
		s.m = map[string]chan struct{}{}
	}
	c, ok := s.m[name]
	if !ok {
		c = make(chan struct{})
		s.m[name] = c
	}
	return c
}

func (s *jsfetchSignals) fire(name string) {
	c := s.ch(name)
	s.mu.Lock()
	defer s.mu.Unlock()
	select {
	case <-c:
	default:
		close(c)
	}
}

// wait waits for name, giving up after a long while so that a test that
// fails does not hang the run (the answer then says so).
func (s *jsfetchSignals) wait(name string) bool {
	select {
	case <-s.ch(name):
		return true
	case <-time.After(30 * time.Second):
		return false
	}
}

func jsfetchHandler() http.Handler {
	var sig jsfetchSignals
	const splitJSON = `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"first half"},{"type":"text","text":"second half"}]}}`
	mux := http.NewServeMux()
	mux.HandleFunc("/json-split", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Length", strconv.Itoa(len(splitJSON)))
		half := len(splitJSON) / 2
		io.WriteString(w, splitJSON[:half])
		w.(http.Flusher).Flush()
		sig.wait("release:json")
		io.WriteString(w, splitJSON[half:])
	})
	mux.HandleFunc("/sse", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "data: one\n\n")
		w.(http.Flusher).Flush()
		sig.wait("release:sse")
		io.WriteString(w, "data: two\n\n")
	})
	mux.HandleFunc("/sse-mixed", func(w http.ResponseWriter, r *http.Request) {
		// Small pieces, each flushed, around one piece larger than the
		// transport's buffer for stream chunks: the bytes the test expects.
		w.Header().Set("Content-Type", "text/event-stream")
		for _, p := range sseMixed() {
			io.WriteString(w, p)
			w.(http.Flusher).Flush()
		}
	})
	mux.HandleFunc("/release", func(w http.ResponseWriter, r *http.Request) {
		sig.fire("release:" + r.URL.Query().Get("k"))
		io.WriteString(w, "released")
	})
	mux.HandleFunc("/hang", func(w http.ResponseWriter, r *http.Request) {
		k := r.URL.Query().Get("k")
		if k != "headers" {
			w.Header().Set("Content-Type", "text/event-stream")
			io.WriteString(w, "data: first\n\n")
			w.(http.Flusher).Flush()
		}
		sig.fire("arrived:" + k)
		select {
		case <-r.Context().Done():
			sig.fire("closed:" + k)
		case <-time.After(30 * time.Second):
		}
	})
	mux.HandleFunc("/arrived", func(w http.ResponseWriter, r *http.Request) {
		if sig.wait("arrived:" + r.URL.Query().Get("k")) {
			io.WriteString(w, "arrived")
		}
	})
	mux.HandleFunc("/closed", func(w http.ResponseWriter, r *http.Request) {
		if sig.wait("closed:" + r.URL.Query().Get("k")) {
			io.WriteString(w, "closed")
			return
		}
		io.WriteString(w, "still open")
	})
	mux.HandleFunc("/echo", func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		w.Header().Set("X-Seen-Multi", strings.Join(r.Header.Values("X-Multi"), ", "))
		w.Header().Set("X-Seen-Content-Type", r.Header.Get("Content-Type"))
		w.Header().Add("X-Reply", "1")
		w.Header().Add("X-Reply", "2")
		w.Header().Set("Content-Length", fmt.Sprint(len(b)))
		w.WriteHeader(http.StatusCreated)
		w.Write(b)
	})
	mux.HandleFunc("/redirect", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/target", http.StatusFound)
	})
	mux.HandleFunc("/target", func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "target")
	})
	return mux
}

// sseMixed is what /sse-mixed writes, piece by piece; the jsfetch test
// TestStreamChunksOfAnySize builds the same text.
func sseMixed() []string {
	var out []string
	for i := 0; i < 50; i++ {
		out = append(out, "data: "+strconv.Itoa(i)+"\n\n")
	}
	out = append(out, "data: "+strings.Repeat("abcdefghij", 5000)+"\n\n")
	for i := 50; i < 100; i++ {
		out = append(out, "data: "+strconv.Itoa(i)+"\n\n")
	}
	return out
}
