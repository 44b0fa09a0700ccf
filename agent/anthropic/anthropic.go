package anthropic

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"sort"
	"strings"
	"time"

	"github.com/mcpwasm/mcpwasm/agent"
	"github.com/mcpwasm/mcpwasm/agent/internal/provider"
	"github.com/mcpwasm/mcpwasm/agent/internal/sse"
	"github.com/mcpwasm/mcpwasm/mcperr"
)

// Defaults of [Config].
const (
	DefaultBaseURL   = "https://api.anthropic.com"
	DefaultVersion   = "2023-06-01"
	DefaultMaxTokens = 4096
)

// Limits on what is read from the API.
const (
	maxEvent     = 1 << 20
	maxAnswer    = 8 << 20
	maxJSONBody  = 16 << 20
	maxToolCalls = 128
	maxBlocks    = 1024
)

// Config configures a [Model].
type Config struct {
	// BaseURL is the API root without the version path: DefaultBaseURL
	// when empty.
	BaseURL string
	// APIKey is sent as x-api-key. Required for DefaultBaseURL; a proxy
	// (another BaseURL) may add it itself.
	APIKey agent.Secret
	// Model is the model to ask, e.g. "claude-sonnet-4-5". Required.
	Model string
	// MaxTokens bounds each answer (the API requires a bound): 4096 when 0.
	MaxTokens int
	// HTTPClient sends the requests. Required: in a browser, pass one that
	// wraps http.DefaultTransport (the fetch transport).
	HTTPClient *http.Client
	// Headers are added to every request (e.g. anthropic-beta).
	Headers map[string]string
	// Version is the anthropic-version header: DefaultVersion when empty.
	Version string
	// MaxRetries bounds the retries on 408, 409, 429 and 5xx (529
	// overloaded included): 0 means 2, negative means none.
	MaxRetries int
	// MaxRetryWait caps how long to wait before a retry (30 s when 0).
	MaxRetryWait time.Duration
}

// Model is an [agent.Model] over the Messages API. It is safe for
// concurrent use.
type Model struct {
	cfg      Config
	endpoint string
	client   *provider.Client
}

var _ agent.Model = (*Model)(nil)

// New validates cfg and returns a Model.
func New(cfg Config) (*Model, error) {
	if cfg.BaseURL == "" {
		cfg.BaseURL = DefaultBaseURL
	}
	if err := provider.CheckBaseURL("anthropic", cfg.BaseURL); err != nil {
		return nil, err
	}
	if cfg.Model == "" {
		return nil, mcperr.New(mcperr.InvalidArgument, `anthropic: Config.Model is required (e.g. "claude-sonnet-4-5")`)
	}
	if cfg.HTTPClient == nil {
		return nil, mcperr.New(mcperr.InvalidArgument, "anthropic: Config.HTTPClient is required (in a browser, one that wraps http.DefaultTransport)")
	}
	if cfg.APIKey.IsZero() && strings.TrimRight(cfg.BaseURL, "/") == DefaultBaseURL {
		return nil, mcperr.New(mcperr.InvalidArgument, "anthropic: Config.APIKey is required for %s (or set BaseURL to a proxy that adds it)", DefaultBaseURL)
	}
	if cfg.MaxTokens < 0 {
		return nil, mcperr.New(mcperr.InvalidArgument, "anthropic: Config.MaxTokens must not be negative")
	}
	if cfg.MaxTokens == 0 {
		cfg.MaxTokens = DefaultMaxTokens
	}
	if cfg.Version == "" {
		cfg.Version = DefaultVersion
	}
	return &Model{
		cfg:      cfg,
		endpoint: provider.Endpoint(cfg.BaseURL, "/v1/messages"),
		client: &provider.Client{
			Name:       "anthropic",
			HTTP:       cfg.HTTPClient,
			Key:        cfg.APIKey,
			MaxRetries: cfg.MaxRetries,
			MaxWait:    cfg.MaxRetryWait,
			ParseError: parseError,
		},
	}, nil
}

// Generate implements [agent.Model].
func (m *Model) Generate(ctx context.Context, req agent.Request, onText func(string)) (agent.Message, error) {
	body, err := m.body(req)
	if err != nil {
		return agent.Message{}, err
	}
	h := http.Header{}
	for k, v := range m.cfg.Headers {
		h.Set(k, v)
	}
	h.Set("Content-Type", "application/json")
	h.Set("Accept", "text/event-stream")
	h.Set("anthropic-version", m.cfg.Version)
	h.Set("anthropic-dangerous-direct-browser-access", "true")
	if !m.cfg.APIKey.IsZero() {
		h.Set("x-api-key", m.cfg.APIKey.Reveal())
	}
	resp, err := m.client.Post(ctx, m.endpoint, h, body)
	if err != nil {
		return agent.Message{}, err
	}
	defer resp.Body.Close()
	if onText == nil {
		onText = func(string) {}
	}
	kind, err := m.client.StreamKind(resp)
	if err != nil {
		return agent.Message{}, err
	}
	if kind == "json" {
		return m.readJSON(ctx, resp, onText)
	}
	return m.readStream(ctx, resp, onText)
}

// apiError is the API's error object.
type apiError struct {
	Type    string `json:"type"`
	Message string `json:"message"`
}

func parseError(body []byte) (provider.ErrorFields, bool) {
	var env struct {
		Error *apiError `json:"error"`
	}
	if json.Unmarshal(body, &env) != nil || env.Error == nil || (env.Error.Type == "" && env.Error.Message == "") {
		return provider.ErrorFields{}, false
	}
	return provider.ErrorFields{Type: env.Error.Type, Message: env.Error.Message}, true
}

// statusOf is the HTTP status an error type stands for (the API's errors
// documentation), for errors that arrive inside a stream.
var statusOf = map[string]int{
	"invalid_request_error": 400,
	"authentication_error":  401,
	"permission_error":      403,
	"not_found_error":       404,
	"request_too_large":     413,
	"rate_limit_error":      429,
	"api_error":             500,
	"overloaded_error":      529,
}

func (m *Model) streamError(e *apiError) error {
	return &agent.ProviderError{Provider: "anthropic", Status: statusOf[e.Type], Type: m.client.Sanitize(e.Type), Message: m.client.Sanitize(e.Message)}
}

// finishReason maps a stop_reason to the Chat Completions vocabulary.
func finishReason(stop string) string {
	switch stop {
	case "end_turn", "stop_sequence":
		return "stop"
	case "tool_use":
		return "tool_calls"
	case "max_tokens":
		return "length"
	case "refusal":
		return "content_filter"
	}
	return stop
}

// block is a content block as it streams in.
type block struct {
	kind string // "text", "tool_use", or another type (ignored)
	id   string
	name string
	args strings.Builder
}

type streamState struct {
	m      *Model
	blocks map[int]*block
	text   strings.Builder
	size   int
	stop   string
	model  string
}

// event is every streamed event's data; fields by type.
type event struct {
	Type    string `json:"type"`
	Index   *int   `json:"index"`
	Message *struct {
		Model string `json:"model"`
	} `json:"message"`
	ContentBlock *struct {
		Type string `json:"type"`
		ID   string `json:"id"`
		Name string `json:"name"`
		Text string `json:"text"`
	} `json:"content_block"`
	Delta *struct {
		Type        string `json:"type"`
		Text        string `json:"text"`
		PartialJSON string `json:"partial_json"`
		StopReason  string `json:"stop_reason"`
	} `json:"delta"`
	Error *apiError `json:"error"`
}

func (s *streamState) grow(n int) error {
	if s.size += n; s.size > maxAnswer {
		return s.m.client.Protocol("the answer is larger than %d bytes", maxAnswer)
	}
	return nil
}

func (s *streamState) blockAt(e *event) (*block, error) {
	if e.Index == nil {
		return nil, s.m.client.Protocol("%s without an index", e.Type)
	}
	b, ok := s.blocks[*e.Index]
	if !ok {
		return nil, s.m.client.Protocol("%s for block %d, which never started", e.Type, *e.Index)
	}
	return b, nil
}

// handle applies one event; done reports message_stop.
func (s *streamState) handle(e *event, onText func(string)) (done bool, err error) {
	switch e.Type {
	case "message_start":
		if e.Message != nil {
			s.model = e.Message.Model
		}
	case "content_block_start":
		if e.Index == nil || e.ContentBlock == nil {
			return false, s.m.client.Protocol("content_block_start without index or content_block")
		}
		if _, dup := s.blocks[*e.Index]; dup || *e.Index < 0 || len(s.blocks) >= maxBlocks {
			return false, s.m.client.Protocol("content_block_start: bad or repeated index %d", *e.Index)
		}
		b := &block{kind: e.ContentBlock.Type, id: e.ContentBlock.ID, name: e.ContentBlock.Name}
		s.blocks[*e.Index] = b
		if b.kind == "text" && e.ContentBlock.Text != "" {
			if err := s.grow(len(e.ContentBlock.Text)); err != nil {
				return false, err
			}
			s.text.WriteString(e.ContentBlock.Text)
			onText(e.ContentBlock.Text)
		}
	case "content_block_delta":
		b, err := s.blockAt(e)
		if err != nil {
			return false, err
		}
		if e.Delta == nil {
			return false, s.m.client.Protocol("content_block_delta without a delta")
		}
		switch e.Delta.Type {
		case "text_delta":
			if err := s.grow(len(e.Delta.Text)); err != nil {
				return false, err
			}
			s.text.WriteString(e.Delta.Text)
			onText(e.Delta.Text)
		case "input_json_delta":
			if b.kind != "tool_use" {
				return false, s.m.client.Protocol("input_json_delta for a %s block", b.kind)
			}
			if err := s.grow(len(e.Delta.PartialJSON)); err != nil {
				return false, err
			}
			b.args.WriteString(e.Delta.PartialJSON)
		}
		// thinking_delta, signature_delta, citations_delta: not passed on.
	case "content_block_stop":
		if _, err := s.blockAt(e); err != nil {
			return false, err
		}
	case "message_delta":
		if e.Delta != nil && e.Delta.StopReason != "" {
			s.stop = e.Delta.StopReason
		}
	case "message_stop":
		return true, nil
	case "error":
		if e.Error == nil {
			return false, s.m.client.Protocol("an error event without an error")
		}
		return false, s.m.streamError(e.Error)
	}
	// "ping" and event types added later are ignored, as the API's
	// versioning policy asks.
	return false, nil
}

func (s *streamState) message() (agent.Message, error) {
	idx := make([]int, 0, len(s.blocks))
	for i, b := range s.blocks {
		if b.kind == "tool_use" {
			idx = append(idx, i)
		}
	}
	if len(idx) > maxToolCalls {
		return agent.Message{}, s.m.client.Protocol("more than %d tool calls in one answer", maxToolCalls)
	}
	sort.Ints(idx)
	var calls []agent.ToolCall
	for _, i := range idx {
		b := s.blocks[i]
		args := b.args.String()
		if strings.TrimSpace(args) == "" {
			args = "{}" // a tool_use without input deltas has the empty input
		}
		calls = append(calls, agent.ToolCall{ID: b.id, Type: "function", Function: agent.FunctionCall{Name: b.name, Arguments: args}})
	}
	model := s.model
	if model == "" {
		model = s.m.cfg.Model
	}
	return agent.Message{Role: agent.RoleAssistant, Content: s.text.String(), ToolCalls: calls, FinishReason: finishReason(s.stop), Model: model}, nil
}

func (m *Model) readStream(ctx context.Context, resp *http.Response, onText func(string)) (agent.Message, error) {
	s := &streamState{m: m, blocks: map[int]*block{}}
	done := false
	for ev, err := range sse.Scan(resp.Body, maxEvent) {
		if err != nil {
			return agent.Message{}, m.client.StreamError(ctx, err)
		}
		var e event
		if err := json.Unmarshal(ev.Data, &e); err != nil {
			return agent.Message{}, m.client.Protocol("a %q event is not valid JSON: %v", ev.Name, err)
		}
		if e.Type == "" {
			e.Type = ev.Name
		}
		if done, err = s.handle(&e, onText); err != nil {
			return agent.Message{}, err
		}
		if done {
			break
		}
	}
	if err := ctx.Err(); err != nil {
		return agent.Message{}, m.client.NetError(ctx, err, "")
	}
	if !done {
		return agent.Message{}, mcperr.New(mcperr.Network, "anthropic: the stream ended before message_stop; try again")
	}
	return s.message()
}

// readJSON reads a non-streamed Message (a proxy that does not stream).
func (m *Model) readJSON(ctx context.Context, resp *http.Response, onText func(string)) (agent.Message, error) {
	b, err := m.client.ReadJSONBody(ctx, resp.Body, maxJSONBody)
	if err != nil {
		return agent.Message{}, err
	}
	var msg struct {
		Type    string `json:"type"`
		Model   string `json:"model"`
		Content []struct {
			Type  string          `json:"type"`
			Text  string          `json:"text"`
			ID    string          `json:"id"`
			Name  string          `json:"name"`
			Input json.RawMessage `json:"input"`
		} `json:"content"`
		StopReason string    `json:"stop_reason"`
		Error      *apiError `json:"error"`
	}
	if err := json.Unmarshal(b, &msg); err != nil {
		return agent.Message{}, m.client.Protocol("the answer is not a message: %v", err)
	}
	if msg.Type == "error" && msg.Error != nil {
		return agent.Message{}, m.streamError(msg.Error)
	}
	s := &streamState{m: m, blocks: map[int]*block{}, stop: msg.StopReason, model: msg.Model}
	for i, c := range msg.Content {
		if i >= maxBlocks {
			return agent.Message{}, m.client.Protocol("more than %d content blocks", maxBlocks)
		}
		bl := &block{kind: c.Type, id: c.ID, name: c.Name}
		switch c.Type {
		case "text":
			s.text.WriteString(c.Text)
		case "tool_use":
			bl.args.Write(bytes.TrimSpace(c.Input))
		}
		s.blocks[i] = bl
	}
	out, err := s.message()
	if err == nil && out.Content != "" {
		onText(out.Content)
	}
	return out, err
}
