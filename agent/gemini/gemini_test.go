package gemini

import (
	"bytes"
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

	"github.com/google/go-cmp/cmp"

	"github.com/mcpwasm/mcpwasm/agent"
	"github.com/mcpwasm/mcpwasm/mcperr"
)

const testKey = "AIzaSyTestKey0123456789abcdefghij"

type server struct {
	*httptest.Server
	mu      sync.Mutex
	bodies  [][]byte
	headers []http.Header
	urls    []string
}

func startServer(t *testing.T, h http.HandlerFunc) *server {
	t.Helper()
	s := &server{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		s.mu.Lock()
		s.bodies = append(s.bodies, b)
		s.headers = append(s.headers, r.Header.Clone())
		s.urls = append(s.urls, r.URL.String())
		s.mu.Unlock()
		r.Body = io.NopCloser(bytes.NewReader(b))
		h(w, r)
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *server) body(t *testing.T, i int) map[string]any {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	var v map[string]any
	if err := json.Unmarshal(s.bodies[i], &v); err != nil {
		t.Fatal(err)
	}
	return v
}

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

func newModel(t *testing.T, s *server, mod func(*Config)) *Model {
	t.Helper()
	cfg := Config{BaseURL: s.URL + "/v1beta", APIKey: agent.NewSecret(testKey), Model: "gemini-2.5-flash", HTTPClient: s.Client(), MaxRetries: -1}
	if mod != nil {
		mod(&cfg)
	}
	m, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func recorded(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("testdata/stream_function_call.txt")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

type streamed struct {
	text, reasoning []string
	calls           []agent.ToolCallDelta
	usage           []agent.Usage
}

func (s *streamed) stream() agent.Stream {
	return agent.Stream{
		Text:      func(d string) { s.text = append(s.text, d) },
		Reasoning: func(d string) { s.reasoning = append(s.reasoning, d) },
		ToolCall:  func(d agent.ToolCallDelta) { s.calls = append(s.calls, d) },
		Usage:     func(u agent.Usage) { s.usage = append(s.usage, u) },
	}
}

// geminiTools is the catalog's "gemini" export of one tool.
var geminiTools = json.RawMessage(`[{"functionDeclarations":[{"name":"get_weather","description":"The weather in a city.","parameters":{"type":"object","properties":{"location":{"type":"string"}},"required":["location"]}}]}]`)

func TestStreamFunctionCall(t *testing.T) {
	body := recorded(t)
	for _, n := range []int{1, 9, 1 << 20} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			s := startServer(t, func(w http.ResponseWriter, r *http.Request) { writeSSE(w, body, n) })
			var got streamed
			temp := 0.5
			msg, err := newModel(t, s, func(c *Config) { c.IncludeThoughts = true }).Stream(context.Background(), agent.Request{
				Messages: []agent.Message{{Role: "system", Content: "Be brief."}, {Role: "user", Content: "Weather in Paris?"}},
				Tools:    geminiTools, MaxTokens: 500, Temperature: &temp, Stop: []string{"END"},
			}, got.stream())
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff([]string{"**Looking up the weather**\n\nThe user wants Paris."}, got.reasoning); diff != "" {
				t.Errorf("reasoning (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff([]string{"Let me check ", "Paris."}, got.text); diff != "" {
				t.Errorf("text (-want +got):\n%s", diff)
			}
			wantCalls := []agent.ToolCallDelta{{Index: 0, Name: "get_weather", ArgumentsDelta: `{"location": "Paris, France"}`}}
			if diff := cmp.Diff(wantCalls, got.calls); diff != "" {
				t.Errorf("tool calls (-want +got):\n%s", diff)
			}
			// The last chunk's running totals; thoughts count as output.
			if diff := cmp.Diff([]agent.Usage{{InputTokens: 71, OutputTokens: 21 + 46, CachedInputTokens: 32, ReasoningTokens: 46}}, got.usage); diff != "" {
				t.Errorf("usage (-want +got):\n%s", diff)
			}
			want := agent.Message{Role: "assistant", Content: "Let me check Paris.", FinishReason: "tool_calls", Model: "gemini-2.5-flash",
				ToolCalls:     []agent.ToolCall{{Type: "function", Function: agent.FunctionCall{Name: "get_weather", Arguments: `{"location": "Paris, France"}`}}},
				ProviderState: json.RawMessage(`{"gemini":{"calls":{"0":"CiQB0e2Kb3dRh+BYdbZvmulSN2Pwwv75ZrS4Y2Nl"}}}`)}
			if diff := cmp.Diff(want, msg); diff != "" {
				t.Errorf("message (-want +got):\n%s", diff)
			}

			if u := s.urls[0]; u != "/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse" || strings.Contains(u, testKey) {
				t.Errorf("request URL %s", u)
			}
			if got := s.headers[0].Get("X-Goog-Api-Key"); got != testKey {
				t.Errorf("x-goog-api-key = %q", got)
			}
			var tools any
			json.Unmarshal(geminiTools, &tools)
			wantReq := map[string]any{
				"systemInstruction": map[string]any{"parts": []any{map[string]any{"text": "Be brief."}}},
				"contents":          []any{map[string]any{"role": "user", "parts": []any{map[string]any{"text": "Weather in Paris?"}}}},
				"tools":             tools,
				"toolConfig":        map[string]any{"functionCallingConfig": map[string]any{"mode": "AUTO"}},
				"generationConfig": map[string]any{"maxOutputTokens": float64(500), "temperature": 0.5, "stopSequences": []any{"END"},
					"thinkingConfig": map[string]any{"includeThoughts": true}},
			}
			if diff := cmp.Diff(wantReq, s.body(t, 0)); diff != "" {
				t.Errorf("request (-want +got):\n%s", diff)
			}
		})
	}
}

// TestConversationGoesBack: the call goes back as a functionCall part with
// its thought signature, the result as a functionResponse named after it;
// the ids the agent gave calls without one are not sent, those the API
// gave are; Chat Completions tools are converted to declarations.
func TestConversationGoesBack(t *testing.T) {
	body := recorded(t)
	s := startServer(t, func(w http.ResponseWriter, r *http.Request) { writeSSE(w, body, 1<<20) })
	m := newModel(t, s, nil)
	conv := []agent.Message{{Role: "user", Content: "Weather in Paris?"}}
	msg, err := m.Generate(context.Background(), agent.Request{Messages: conv}, nil)
	if err != nil {
		t.Fatal(err)
	}
	msg.ToolCalls[0].ID = "call_1_0" // as the agent names a call without an id
	withID := agent.Message{Role: "assistant", ToolCalls: []agent.ToolCall{{ID: "fc-7", Function: agent.FunctionCall{Name: "get_time", Arguments: "not json"}}},
		ProviderState: json.RawMessage(`{"gemini":{"ids":["fc-7"]}}`)}
	conv = append(conv, msg, agent.Message{Role: "tool", ToolCallID: "call_1_0", Content: "Sunny, 21 °C"},
		withID, agent.Message{Role: "tool", ToolCallID: "fc-7", Content: "noon"})
	chatTools := json.RawMessage(`[{"type":"function","function":{"name":"get_time","description":"The time.","parameters":{"type":"object","properties":{"zone":{"type":"string","format":"uri"}}}}}]`)
	if _, err := m.Generate(context.Background(), agent.Request{Messages: conv, Tools: chatTools}, nil); err != nil {
		t.Fatal(err)
	}
	req := s.body(t, 1)
	want := []any{
		map[string]any{"role": "user", "parts": []any{map[string]any{"text": "Weather in Paris?"}}},
		map[string]any{"role": "model", "parts": []any{
			map[string]any{"text": "Let me check Paris."},
			map[string]any{"functionCall": map[string]any{"name": "get_weather", "args": map[string]any{"location": "Paris, France"}}, "thoughtSignature": "CiQB0e2Kb3dRh+BYdbZvmulSN2Pwwv75ZrS4Y2Nl"},
		}},
		map[string]any{"role": "user", "parts": []any{map[string]any{"functionResponse": map[string]any{"name": "get_weather", "response": map[string]any{"output": "Sunny, 21 °C"}}}}},
		map[string]any{"role": "model", "parts": []any{map[string]any{"functionCall": map[string]any{"id": "fc-7", "name": "get_time", "args": map[string]any{}}}}},
		map[string]any{"role": "user", "parts": []any{map[string]any{"functionResponse": map[string]any{"id": "fc-7", "name": "get_time", "response": map[string]any{"output": "noon"}}}}},
	}
	if diff := cmp.Diff(want, req["contents"]); diff != "" {
		t.Errorf("contents (-want +got):\n%s", diff)
	}
	wantTools := []any{map[string]any{"functionDeclarations": []any{map[string]any{
		"name": "get_time", "description": "The time.\n\n(Its schema was simplified for Gemini: format dropped.)",
		"parameters": map[string]any{"type": "object", "properties": map[string]any{"zone": map[string]any{"type": "string"}}},
	}}}}
	if diff := cmp.Diff(wantTools, req["tools"]); diff != "" {
		t.Errorf("tools (-want +got):\n%s", diff)
	}
}

func TestErrors(t *testing.T) {
	cut := recorded(t)
	cut = cut[:strings.LastIndex(cut, "data: ")]
	tests := []struct {
		name       string
		h          http.HandlerFunc
		code       mcperr.Code
		status     int
		msgContain string
	}{
		{"400 echoing the key", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(400)
			fmt.Fprintf(w, `{"error":{"code":400,"message":"API key not valid: %s. Please pass a valid API key.","status":"INVALID_ARGUMENT"}}`, testKey)
		}, mcperr.HTTP, 400, "API key not valid: [redacted]."},
		{"429 as a list", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(429)
			io.WriteString(w, `[{"error":{"code":429,"message":"Resource has been exhausted (e.g. check quota).","status":"RESOURCE_EXHAUSTED"}}]`)
		}, mcperr.HTTP, 429, "Resource has been exhausted"},
		{"error chunk", func(w http.ResponseWriter, r *http.Request) {
			writeSSE(w, "data: {\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"Half\"}],\"role\":\"model\"},\"index\":0}]}\n\n"+
				"data: {\"error\":{\"code\":503,\"message\":\"The model is overloaded. Please try again later.\",\"status\":\"UNAVAILABLE\"}}\n\n", 1<<20)
		}, mcperr.HTTP, 503, "The model is overloaded."},
		{"blocked prompt", func(w http.ResponseWriter, r *http.Request) {
			writeSSE(w, "data: {\"promptFeedback\":{\"blockReason\":\"SAFETY\"},\"usageMetadata\":{\"promptTokenCount\":8}}\n\n", 1<<20)
		}, mcperr.HTTP, 400, "the prompt was blocked (SAFETY)"},
		{"cut before finishReason", func(w http.ResponseWriter, r *http.Request) { writeSSE(w, cut, 64) },
			mcperr.Network, 0, "no finishReason"},
		{"cut mid-event", func(w http.ResponseWriter, r *http.Request) { writeSSE(w, cut+`data: {"candidates": [`, 64) },
			mcperr.Network, 0, "the stream broke off"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := startServer(t, tt.h)
			var got streamed
			_, err := newModel(t, s, nil).Stream(context.Background(), agent.Request{Messages: []agent.Message{{Role: "user", Content: "hi"}}}, got.stream())
			if err == nil {
				t.Fatal("no error")
			}
			if c := mcperr.CodeOf(err, ""); c != tt.code {
				t.Errorf("code %q; want %q (%v)", c, tt.code, err)
			}
			if !strings.Contains(err.Error(), tt.msgContain) || strings.Contains(err.Error(), testKey) {
				t.Errorf("err = %v; want it to say %q without the key", err, tt.msgContain)
			}
			var pe *agent.ProviderError
			if tt.status != 0 && (!errors.As(err, &pe) || pe.Status != tt.status) {
				t.Errorf("err = %#v; want status %d", err, tt.status)
			}
			if len(got.usage) != 0 {
				t.Errorf("usage %v reported for a failed answer", got.usage)
			}
		})
	}
}

// TestJSONAnswer: a whole GenerateContentResponse (a proxy that does not
// stream) is read too, and MAX_TOKENS finishes with "length".
func TestJSONAnswer(t *testing.T) {
	s := startServer(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"candidates":[{"content":{"parts":[{"text":"Once upon a"}],"role":"model"},"finishReason":"MAX_TOKENS","index":0}],"usageMetadata":{"promptTokenCount":4,"candidatesTokenCount":3,"totalTokenCount":7},"modelVersion":"gemini-2.5-flash-lite"}`)
	})
	var got streamed
	msg, err := newModel(t, s, nil).Stream(context.Background(), agent.Request{Messages: []agent.Message{{Role: "user", Content: "A story"}}}, got.stream())
	if err != nil {
		t.Fatal(err)
	}
	want := agent.Message{Role: "assistant", Content: "Once upon a", FinishReason: "length", Model: "gemini-2.5-flash-lite"}
	if diff := cmp.Diff(want, msg); diff != "" {
		t.Errorf("message (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]agent.Usage{{InputTokens: 4, OutputTokens: 3}}, got.usage); diff != "" {
		t.Errorf("usage (-want +got):\n%s", diff)
	}
}

func TestNewChecks(t *testing.T) {
	c := &http.Client{}
	tests := []struct {
		cfg  Config
		want string
	}{
		{Config{Model: "gemini-2.5-flash", HTTPClient: c}, "APIKey is required"},
		{Config{BaseURL: "http://127.0.0.1/v1beta", HTTPClient: c}, "Model is required"},
		{Config{BaseURL: "http://127.0.0.1/v1beta", Model: "../../evil?key=", HTTPClient: c}, "must be a model id"},
		{Config{BaseURL: "http://127.0.0.1/v1beta", Model: "gemini-2.5-flash"}, "HTTPClient is required"},
	}
	for _, tt := range tests {
		_, err := New(tt.cfg)
		if mcperr.CodeOf(err, "") != mcperr.InvalidArgument || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("New(%+v) = %v; want invalid_argument saying %q", tt.cfg, err, tt.want)
		}
	}
	if m, err := New(Config{BaseURL: "http://127.0.0.1/v1beta", Model: "models/gemini-2.5-pro", HTTPClient: c}); err != nil || m.endpoint != "http://127.0.0.1/v1beta/models/gemini-2.5-pro:streamGenerateContent?alt=sse" {
		t.Errorf("New with models/ = %v", err)
	}
}

// TestValidModelID: a model id goes into the URL's path, so only a letter
// or digit then letters, digits, ".", "_" and "-" pass.
func TestValidModelID(t *testing.T) {
	for id, want := range map[string]bool{
		"gemini-2.5-flash": true, "g": true, "9x_y.z": true,
		"": false, "-x": false, ".x": false, "a/b": false, "a b": false, "a?b": false, "é": false, "../x": false, "a%2F": false,
	} {
		if got := validModelID(id); got != want {
			t.Errorf("validModelID(%q) = %v; want %v", id, got, want)
		}
	}
}
