package openai

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpwasm/mcpwasm/agent"
	"github.com/mcpwasm/mcpwasm/mcperr"
)

// server is an httptest server whose handler the test sets, recording
// each request.
type server struct {
	*httptest.Server
	mu      sync.Mutex
	bodies  [][]byte
	headers []http.Header
}

func startServer(t *testing.T, h http.HandlerFunc) *server {
	t.Helper()
	s := &server{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		s.mu.Lock()
		s.bodies = append(s.bodies, b)
		s.headers = append(s.headers, r.Header.Clone())
		s.mu.Unlock()
		h(w, r)
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *server) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.bodies)
}

func newModel(t *testing.T, s *server, mod func(*Config)) *Model {
	t.Helper()
	cfg := Config{BaseURL: s.URL + "/v1", Model: "gpt-5.4", HTTPClient: s.Client()}
	if mod != nil {
		mod(&cfg)
	}
	m, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// writeSSE writes body in slices of n bytes, flushing after each.
func writeSSE(w http.ResponseWriter, body string, n int) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	for len(body) > 0 {
		k := min(n, len(body))
		io.WriteString(w, body[:k])
		w.(http.Flusher).Flush()
		body = body[k:]
	}
}

func readJSON(t *testing.T, path string) any {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return v
}

func TestRequestBodyMatchesDocumentedExample(t *testing.T) {
	s := startServer(t, func(w http.ResponseWriter, r *http.Request) {
		b, _ := os.ReadFile("testdata/streaming_response.txt")
		writeSSE(w, string(b), 1<<20)
	})
	m := newModel(t, s, nil)
	doc := readJSON(t, "testdata/functions_request.json").(map[string]any)
	tools, _ := json.Marshal(doc["tools"])
	_, err := m.Generate(context.Background(), agent.Request{
		Messages: []agent.Message{{Role: agent.RoleUser, Content: "What is the weather like in Boston today?"}},
		Tools:    tools,
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal(s.bodies[0], &got); err != nil {
		t.Fatal(err)
	}
	// The documented body, plus what streaming adds.
	want := doc
	want["stream"] = true
	want["stream_options"] = map[string]any{"include_usage": true}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("request body (-documented +sent):\n%s", diff)
	}
	h := s.headers[0]
	if got := h.Get("Authorization"); got != "" {
		t.Errorf("Authorization = %q without an API key; want none", got)
	}
	if got := h.Get("Content-Type"); got != "application/json" {
		t.Errorf("Content-Type = %q", got)
	}
}

func TestRequestBodyHistory(t *testing.T) {
	s := startServer(t, func(w http.ResponseWriter, r *http.Request) {
		b, _ := os.ReadFile("testdata/streaming_response.txt")
		writeSSE(w, string(b), 1<<20)
	})
	temp := 0.5
	m := newModel(t, s, func(c *Config) {
		c.APIKey = agent.NewSecret("sk-test")
		c.Headers = map[string]string{"X-Title": "mcpwasm"}
	})
	_, err := m.Generate(context.Background(), agent.Request{
		Messages: []agent.Message{
			{Role: agent.RoleSystem, Content: "Be brief."},
			{Role: agent.RoleUser, Content: "Weather in Boston?"},
			{Role: agent.RoleAssistant, ToolCalls: []agent.ToolCall{{ID: "call_abc123", Function: agent.FunctionCall{Name: "get_current_weather", Arguments: `{"location":"Boston, MA"}`}}}},
			{Role: agent.RoleTool, ToolCallID: "call_abc123", Content: "22 C"},
		},
		MaxTokens:   100,
		Temperature: &temp,
		Stop:        []string{"\n\n"},
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var got any
	json.Unmarshal(s.bodies[0], &got)
	var want any
	json.Unmarshal([]byte(`{
		"model": "gpt-5.4",
		"messages": [
			{"role": "system", "content": "Be brief."},
			{"role": "user", "content": "Weather in Boston?"},
			{"role": "assistant", "content": null, "tool_calls": [
				{"id": "call_abc123", "type": "function", "function": {"name": "get_current_weather", "arguments": "{\"location\":\"Boston, MA\"}"}}]},
			{"role": "tool", "content": "22 C", "tool_call_id": "call_abc123"}
		],
		"stream": true,
		"stream_options": {"include_usage": true},
		"max_tokens": 100,
		"temperature": 0.5,
		"stop": ["\n\n"]
	}`), &want)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("request body (-want +got):\n%s", diff)
	}
	h := s.headers[0]
	if h.Get("Authorization") != "Bearer sk-test" || h.Get("X-Title") != "mcpwasm" {
		t.Errorf("headers = %v", h)
	}
}

func TestMaxTokensParam(t *testing.T) {
	for base, want := range map[string]string{
		DefaultBaseURL:              "max_completion_tokens",
		"http://localhost:11434/v1": "max_tokens",
	} {
		m, err := New(Config{BaseURL: base, Model: "m", HTTPClient: http.DefaultClient})
		if err != nil {
			t.Fatal(err)
		}
		b, _ := m.body(agent.Request{Messages: []agent.Message{{Role: "user", Content: "hi"}}, MaxTokens: 7})
		if !strings.Contains(string(b), `"`+want+`":7`) {
			t.Errorf("%s: body %s; want %s", base, b, want)
		}
	}
}

func TestStreamDocumentedExample(t *testing.T) {
	b, err := os.ReadFile("testdata/streaming_response.txt")
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []int{1, 3, 7, 1 << 20} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			s := startServer(t, func(w http.ResponseWriter, r *http.Request) { writeSSE(w, string(b), n) })
			var deltas []string
			msg, err := newModel(t, s, nil).Generate(context.Background(), agent.Request{Messages: []agent.Message{{Role: "user", Content: "Hello!"}}},
				func(d string) { deltas = append(deltas, d) })
			if err != nil {
				t.Fatal(err)
			}
			want := agent.Message{Role: "assistant", Content: "Hello", FinishReason: "stop", Model: "gpt-4o-mini"}
			if diff := cmp.Diff(want, msg); diff != "" {
				t.Errorf("message (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff([]string{"Hello"}, deltas); diff != "" {
				t.Errorf("deltas (-want +got):\n%s", diff)
			}
		})
	}
}

// toolStream builds a stream of two tool calls whose arguments are split
// at byte cut; withIndex false leaves out the index (as some servers do).
func toolStream(cut int, withIndex bool) string {
	args := []string{`{"a": 2, "b": 40}`, `{"text": "héllo"}`}
	var b strings.Builder
	chunk := func(delta string) {
		fmt.Fprintf(&b, "data: {\"choices\":[{\"index\":0,\"delta\":%s,\"finish_reason\":null}]}\n\n", delta)
	}
	idx := func(i int) string {
		if withIndex {
			return fmt.Sprintf(`"index":%d,`, i)
		}
		return ""
	}
	chunk(`{"role":"assistant","content":"Let me "}`)
	chunk(`{"content":"check."}`)
	for i, a := range args {
		c := min(cut, len(a))
		for c < len(a) && (a[c]&0xC0) == 0x80 {
			c++ // keep UTF-8 sequences whole: pieces are JSON strings
		}
		head, _ := json.Marshal(a[:c])
		tail, _ := json.Marshal(a[c:])
		chunk(fmt.Sprintf(`{"tool_calls":[{%s"id":"call_%d","type":"function","function":{"name":"t%d","arguments":%s}}]}`, idx(i), i, i, head))
		chunk(fmt.Sprintf(`{"tool_calls":[{%s"function":{"arguments":%s}}]}`, idx(i), tail))
	}
	b.WriteString("data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"tool_calls\"}]}\n\n")
	b.WriteString("data: {\"choices\":[],\"usage\":{\"prompt_tokens\":1,\"completion_tokens\":2,\"total_tokens\":3}}\n\n")
	b.WriteString("data: [DONE]\n\n")
	return b.String()
}

func TestToolCallDeltas(t *testing.T) {
	for _, withIndex := range []bool{true, false} {
		for cut := 0; cut <= 19; cut++ {
			t.Run(fmt.Sprintf("index=%v/cut=%d", withIndex, cut), func(t *testing.T) {
				body := toolStream(cut, withIndex)
				s := startServer(t, func(w http.ResponseWriter, r *http.Request) { writeSSE(w, body, 5) })
				msg, err := newModel(t, s, nil).Generate(context.Background(), agent.Request{Messages: []agent.Message{{Role: "user", Content: "x"}}}, nil)
				if err != nil {
					t.Fatal(err)
				}
				want := agent.Message{Role: "assistant", Content: "Let me check.", FinishReason: "tool_calls", Model: "gpt-5.4",
					ToolCalls: []agent.ToolCall{
						{ID: "call_0", Type: "function", Function: agent.FunctionCall{Name: "t0", Arguments: `{"a": 2, "b": 40}`}},
						{ID: "call_1", Type: "function", Function: agent.FunctionCall{Name: "t1", Arguments: `{"text": "héllo"}`}},
					}}
				if diff := cmp.Diff(want, msg); diff != "" {
					t.Errorf("message (-want +got):\n%s", diff)
				}
			})
		}
	}
}

func TestNonStreamedAnswer(t *testing.T) {
	b, _ := os.ReadFile("testdata/functions_response.json")
	s := startServer(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write(b)
	})
	msg, err := newModel(t, s, nil).Generate(context.Background(), agent.Request{Messages: []agent.Message{{Role: "user", Content: "x"}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := agent.Message{Role: "assistant", FinishReason: "tool_calls", Model: "gpt-4o-mini",
		ToolCalls: []agent.ToolCall{{ID: "call_abc123", Type: "function", Function: agent.FunctionCall{Name: "get_current_weather", Arguments: "{\n\"location\": \"Boston, MA\"\n}"}}}}
	if diff := cmp.Diff(want, msg); diff != "" {
		t.Errorf("message (-want +got):\n%s", diff)
	}
}

func TestErrors(t *testing.T) {
	const key = "sk-proj-0123456789abcdefghij"
	tests := []struct {
		name       string
		handler    http.HandlerFunc
		wantCode   mcperr.Code
		wantStatus int
		wantIn     []string
		wantTries  int
	}{
		{
			name: "error body echoing the key",
			handler: func(w http.ResponseWriter, r *http.Request) {
				w.WriteHeader(401)
				fmt.Fprintf(w, `{"error":{"message":"Incorrect API key provided: %s (prefix %s).","type":"invalid_request_error","param":null,"code":"invalid_api_key"}}`,
					strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer "), key[:14])
			},
			wantCode: mcperr.HTTP, wantStatus: 401, wantTries: 1,
			wantIn: []string{"openai: HTTP 401 (invalid_request_error/invalid_api_key): Incorrect API key provided: [redacted] (prefix [redacted]).", "Check the API key"},
		},
		{
			name: "html from a proxy",
			handler: func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "text/html")
				w.WriteHeader(404)
				io.WriteString(w, "<html><body>Not Found</body></html>")
			},
			wantCode: mcperr.HTTP, wantStatus: 404, wantTries: 1,
			wantIn: []string{"HTML page", "Check the base URL"},
		},
		{
			name: "500 retried then reported",
			handler: func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Retry-After-Ms", "1")
				w.WriteHeader(500)
				io.WriteString(w, `{"error":{"message":"boom","type":"server_error","param":null,"code":null}}`)
			},
			wantCode: mcperr.HTTP, wantStatus: 500, wantTries: 3,
			wantIn: []string{"boom", "after 2 retries", "try again later"},
		},
		{
			name: "error chunk in the stream",
			handler: func(w http.ResponseWriter, r *http.Request) {
				writeSSE(w, "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hi\"}}]}\n\ndata: {\"error\":{\"message\":\"upstream failed\",\"code\":502}}\n\n", 4)
			},
			wantCode: mcperr.HTTP, wantStatus: 502, wantTries: 1,
			wantIn: []string{"upstream failed"},
		},
		{
			name: "stream cut mid-event",
			handler: func(w http.ResponseWriter, r *http.Request) {
				writeSSE(w, "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hi\"}}]}\n\ndata: {\"choi", 4)
			},
			wantCode: mcperr.Network, wantTries: 1,
			wantIn: []string{"broke off"},
		},
		{
			name: "connection dropped mid-event",
			handler: func(w http.ResponseWriter, r *http.Request) {
				writeSSE(w, "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hi\"}}]}\n\ndata: {\"choi", 4)
				panic(http.ErrAbortHandler)
			},
			wantCode: mcperr.Network, wantTries: 1,
		},
		{
			name: "stream ends without DONE or finish",
			handler: func(w http.ResponseWriter, r *http.Request) {
				writeSSE(w, "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hi\"}}]}\n\n", 4)
			},
			wantCode: mcperr.Network, wantTries: 1,
			wantIn: []string{"ended before the answer was complete"},
		},
		{
			name: "chunk is not JSON",
			handler: func(w http.ResponseWriter, r *http.Request) {
				writeSSE(w, "data: {nope\n\n", 4)
			},
			wantCode: mcperr.Protocol, wantTries: 1,
			wantIn: []string{"not valid JSON"},
		},
		{
			name: "200 that is not a stream",
			handler: func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "text/html")
				io.WriteString(w, "<html>login</html>")
			},
			wantCode: mcperr.Protocol, wantTries: 1,
			wantIn: []string{"expected an event stream"},
		},
		{
			name: "tool call index out of range",
			handler: func(w http.ResponseWriter, r *http.Request) {
				writeSSE(w, "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":99999}]}}]}\n\n", 64)
			},
			wantCode: mcperr.Protocol, wantTries: 1,
			wantIn: []string{"out of range"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := startServer(t, tt.handler)
			m := newModel(t, s, func(c *Config) { c.APIKey = agent.NewSecret(key) })
			_, err := m.Generate(context.Background(), agent.Request{Messages: []agent.Message{{Role: "user", Content: "x"}}}, nil)
			if err == nil {
				t.Fatal("no error")
			}
			if got := mcperr.CodeOf(err, ""); got != tt.wantCode {
				t.Errorf("code = %q; want %q (%v)", got, tt.wantCode, err)
			}
			if got := mcperr.StatusOf(err); got != tt.wantStatus {
				t.Errorf("status = %d; want %d", got, tt.wantStatus)
			}
			for _, w := range tt.wantIn {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
			for _, leak := range []string{key, key[:14], "0123456789abc"} {
				if strings.Contains(err.Error(), leak) || strings.Contains(fmt.Sprintf("%+v", err), leak) {
					t.Errorf("error leaks the key: %v", err)
				}
			}
			if got := s.count(); got != tt.wantTries {
				t.Errorf("requests = %d; want %d", got, tt.wantTries)
			}
		})
	}
}

func TestRetryAfterLongerThanCap(t *testing.T) {
	s := startServer(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Retry-After", "120")
		w.WriteHeader(429)
		io.WriteString(w, `{"error":{"message":"slow down","type":"requests","param":null,"code":"rate_limit_exceeded"}}`)
	})
	m := newModel(t, s, func(c *Config) { c.MaxRetryWait = time.Second })
	start := time.Now()
	_, err := m.Generate(context.Background(), agent.Request{Messages: []agent.Message{{Role: "user", Content: "x"}}}, nil)
	var pe *agent.ProviderError
	if !errors.As(err, &pe) || pe.Status != 429 || pe.RetryAfter != 2*time.Minute {
		t.Fatalf("err = %#v; want a 429 ProviderError with RetryAfter 2m", err)
	}
	if !strings.Contains(err.Error(), "asked to wait 2m0s") {
		t.Errorf("error %q does not say how long to wait", err)
	}
	if time.Since(start) > 5*time.Second || s.count() != 1 {
		t.Errorf("waited %v over %d requests; want one request, no wait", time.Since(start), s.count())
	}
}

func TestAbortDuringStream(t *testing.T) {
	gone := make(chan struct{})
	s := startServer(t, func(w http.ResponseWriter, r *http.Request) {
		writeSSE(w, "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hi\"}}]}\n\n", 64)
		<-r.Context().Done()
		close(gone)
	})
	ctx, cancel := context.WithCancel(context.Background())
	_, err := newModel(t, s, nil).Generate(ctx, agent.Request{Messages: []agent.Message{{Role: "user", Content: "x"}}},
		func(string) { cancel() })
	if mcperr.CodeOf(err, "") != mcperr.Aborted {
		t.Fatalf("err = %v; want aborted", err)
	}
	select {
	case <-gone:
	case <-time.After(5 * time.Second):
		t.Fatal("the server never saw the request go away")
	}
}

func TestNewValidates(t *testing.T) {
	tests := map[string]Config{
		"no model":       {HTTPClient: http.DefaultClient},
		"no client":      {Model: "m"},
		"bad base":       {Model: "m", HTTPClient: http.DefaultClient, BaseURL: "ftp://x"},
		"bad max tokens": {Model: "m", HTTPClient: http.DefaultClient, MaxTokensParam: "tokens"},
	}
	for name, cfg := range tests {
		if _, err := New(cfg); mcperr.CodeOf(err, "") != mcperr.InvalidArgument || !strings.HasPrefix(err.Error(), "openai: ") {
			t.Errorf("%s: err = %v; want an openai: invalid_argument error", name, err)
		}
	}
}

func TestKeyNeverPrinted(t *testing.T) {
	const key = "sk-live-abcdefghijklmnop"
	m, err := New(Config{Model: "m", HTTPClient: http.DefaultClient, APIKey: agent.NewSecret(key)})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"%v", "%+v", "%#v", "%s"} {
		if out := fmt.Sprintf(f, m); strings.Contains(out, key) {
			t.Errorf("%s of the model prints the key: %s", f, out)
		}
	}
}
