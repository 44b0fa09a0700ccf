package model

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/mcpwasm/mcpwasm/demo/cors"
)

// ModelID is the one model the server lists and answers as.
const ModelID = "mcpwasm-standin"

// Description is the model's description in /v1/models.
const Description = "A scripted stand-in, not a real model: it follows fixed rules " +
	`("add 2 and 3", "echo hi", "slow", …) so that the demo and the tests run offline. ` +
	"It understands nothing; connect a real model for real answers."

// Endpoint paths.
const (
	ChatPath      = "/v1/chat/completions"
	ModelsPath    = "/v1/models"
	ResponsesPath = "/v1/responses"   // the OpenAI Responses API
	GeminiPath    = "/v1beta/models/" // + "{model}:streamGenerateContent" or ":generateContent"
)

// FailHeader is the request header that injects a [Failure] into every
// request that carries it (for pages, which cannot reach [Server.FailNext]).
const FailHeader = "X-Mcpwasm-Fail"

// Failure is a scripted failure.
type Failure string

// The failures a test can inject.
const (
	RateLimited    Failure = "rate_limit"   // 429 with Retry-After and an error body
	ServerError    Failure = "server_error" // 500 with an error body
	ErrorBody      Failure = "error_body"   // 400 with an error body whose message has control characters
	EchoKey        Failure = "echo_key"     // 401 whose message echoes the bearer token it was sent
	CutStream      Failure = "cut"          // a stream that breaks off in the middle of an event
	MidStreamError Failure = "stream_error" // an error object inside a 200 stream
	Stall          Failure = "stall"        // streams a little, then waits until the client goes away
)

// maxBody caps a request body.
const maxBody = 4 << 20

// Options configures a [Server]. The zero value is ready to use. The hooks
// are called from request goroutines and must be safe for concurrent use.
type Options struct {
	// CORS configures the cross-origin middleware; FailHeader is always
	// allowed in addition.
	CORS cors.Options
	// RetryAfter is the Retry-After of RateLimited, rounded up to whole
	// seconds: 1 s when 0.
	RetryAfter time.Duration
	// ChunkDelay pauses between streamed events (0: none).
	ChunkDelay time.Duration
	// OnRequest, if set, receives every chat request's body.
	OnRequest func(body []byte)
	// OnClientGone, if set, is called when a client goes away while the
	// server streams (a Stall, or a ChunkDelay stream).
	OnClientGone func()
}

// Server is the stand-in model server; it is an http.Handler.
type Server struct {
	opts    Options
	handler http.Handler

	mu       sync.Mutex
	requests int
	last     []byte
	queue    []Failure
}

// New returns a Server.
func New(opts Options) *Server {
	s := &Server{opts: opts}
	mux := http.NewServeMux()
	mux.HandleFunc("POST "+ChatPath, s.chat)
	mux.HandleFunc("GET "+ModelsPath, s.models)
	mux.HandleFunc("POST "+ResponsesPath, s.responses)
	mux.HandleFunc("POST "+GeminiPath+"{call}", s.gemini)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusNotFound, "invalid_request_error", "not_found",
			fmt.Sprintf("Unknown path %s; this stand-in serves POST %s, POST %s, POST %s{model}:streamGenerateContent and GET %s.", r.URL.Path, ChatPath, ResponsesPath, GeminiPath, ModelsPath))
	})
	c := opts.CORS
	c.AllowHeaders = append(append([]string(nil), c.AllowHeaders...), FailHeader, "X-Goog-Api-Key")
	s.handler = cors.Wrap(mux, c)
	return s
}

// ServeHTTP implements http.Handler.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.handler.ServeHTTP(w, r) }

// Requests counts the chat requests received.
func (s *Server) Requests() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.requests
}

// LastRequest returns the body of the last chat request.
func (s *Server) LastRequest() []byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	return bytes.Clone(s.last)
}

// FailNext queues failures: each of the next chat requests fails with the
// next one, in order.
func (s *Server) FailNext(f ...Failure) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.queue = append(s.queue, f...)
}

func (s *Server) models(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, map[string]any{
		"object": "list",
		"data": []map[string]any{{
			"id": ModelID, "object": "model", "created": 0, "owned_by": "mcpwasm",
			"description": Description,
		}},
	})
}

// wire types of the request; only what the rules read.
type chatRequest struct {
	Model    string        `json:"model"`
	Messages []wireMessage `json:"messages"`
	Tools    []struct {
		Type     string `json:"type"`
		Function struct {
			Name string `json:"name"`
		} `json:"function"`
	} `json:"tools"`
	Stream        bool `json:"stream"`
	StreamOptions *struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`

	prompt promptTokens // the request's size in the stand-in's tokens
}

type wireMessage struct {
	Role       string          `json:"role"`
	Content    json.RawMessage `json:"content"`
	ToolCallID string          `json:"tool_call_id"`
	ToolCalls  []struct {
		ID       string `json:"id"`
		Function struct {
			Name string `json:"name"`
		} `json:"function"`
	} `json:"tool_calls"`
}

// text returns a message's content as text: a string, or text parts
// (Chat Completions' "text", the Responses API's "input_text" and
// "output_text").
func (m wireMessage) text() string {
	var s string
	if json.Unmarshal(m.Content, &s) == nil {
		return s
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if json.Unmarshal(m.Content, &parts) == nil {
		var b strings.Builder
		for _, p := range parts {
			if p.Type == "text" || p.Type == "input_text" || p.Type == "output_text" {
				b.WriteString(p.Text)
			}
		}
		return b.String()
	}
	return ""
}

// receive reads a model request's body, counts it and takes its failure,
// if any; ok is false when the body is unreadable or too large.
func (s *Server) receive(r *http.Request) (body []byte, fail Failure, ok bool) {
	body, err := io.ReadAll(io.LimitReader(r.Body, maxBody+1))
	s.mu.Lock()
	s.requests++
	s.last = body
	if len(s.queue) > 0 {
		fail, s.queue = s.queue[0], s.queue[1:]
	}
	s.mu.Unlock()
	if fail == "" {
		fail = Failure(r.Header.Get(FailHeader))
	}
	if s.opts.OnRequest != nil {
		s.opts.OnRequest(bytes.Clone(body))
	}
	return body, fail, err == nil && len(body) <= maxBody
}

func (s *Server) chat(w http.ResponseWriter, r *http.Request) {
	body, fail, ok := s.receive(r)
	if !ok {
		writeError(w, http.StatusRequestEntityTooLarge, "invalid_request_error", "body_too_large", "The request body is unreadable or larger than 4 MiB.")
		return
	}
	var req chatRequest
	if err := json.Unmarshal(body, &req); err != nil || len(req.Messages) == 0 {
		writeError(w, http.StatusBadRequest, "invalid_request_error", "invalid_body", "The body must be a JSON chat request with at least one message.")
		return
	}
	if s.fail(w, r, fail) {
		return
	}
	req.prompt = countPrompt(body)
	rep := respond(&req)
	rep.reasoning = reasoningOf(rep)
	if !req.Stream {
		writeJSON(w, http.StatusOK, completionJSON(&req, rep))
		return
	}
	s.stream(w, r, &req, rep)
}

// fail writes the failure f, if any; it reports whether it did.
func (s *Server) fail(w http.ResponseWriter, r *http.Request, f Failure) bool {
	switch f {
	case "":
		return false
	case RateLimited:
		d := s.opts.RetryAfter
		if d <= 0 {
			d = time.Second
		}
		w.Header().Set("Retry-After", fmt.Sprint(int(math.Ceil(d.Seconds()))))
		writeError(w, http.StatusTooManyRequests, "requests", "rate_limit_exceeded",
			"Rate limit reached for "+ModelID+" (a scripted failure). Please try again later.")
	case ServerError:
		writeError(w, http.StatusInternalServerError, "server_error", "", "The scripted stand-in failed on purpose.")
	case ErrorBody:
		writeError(w, http.StatusBadRequest, "invalid_request_error", "invalid_value",
			"Invalid value for 'messages':\n\x1b[31ma scripted\x00 failure\x1b[0m.")
	case EchoKey:
		key := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
		writeError(w, http.StatusUnauthorized, "invalid_request_error", "invalid_api_key",
			"Incorrect API key provided: "+key+". The key prefix "+prefix(key, 12)+" is unknown.")
	case CutStream:
		sw := newStreamWriter(w, r, 0)
		sw.event(chunk(map[string]any{"role": "assistant", "content": ""}, nil))
		sw.event(chunk(map[string]any{"content": "This answer will "}, nil))
		sw.raw(`data: {"id":"chatcmpl-standin","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"brea`)
		panic(http.ErrAbortHandler) // the connection drops mid-event
	case MidStreamError:
		sw := newStreamWriter(w, r, 0)
		sw.event(chunk(map[string]any{"role": "assistant", "content": "Half an "}, nil))
		sw.event(map[string]any{"error": map[string]any{"message": "The upstream provider failed mid-stream (a scripted failure).", "type": "server_error", "code": 502}})
	case Stall:
		sw := newStreamWriter(w, r, 0)
		sw.event(chunk(map[string]any{"role": "assistant", "content": "Thinking"}, nil))
		<-r.Context().Done()
		if s.opts.OnClientGone != nil {
			s.opts.OnClientGone()
		}
	default:
		writeError(w, http.StatusBadRequest, "invalid_request_error", "unknown_failure",
			fmt.Sprintf("Unknown %s value %q.", FailHeader, string(f)))
	}
	return true
}

func prefix(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, _ := json.Marshal(v)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(b)
}

// writeError writes an error in the OpenAI shape.
func writeError(w http.ResponseWriter, status int, typ, code, msg string) {
	var c any
	if code != "" {
		c = code
	}
	writeJSON(w, status, map[string]any{"error": map[string]any{"message": msg, "type": typ, "param": nil, "code": c}})
}
