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

// minThinkingBudget is the API's smallest thinking.budget_tokens.
const minThinkingBudget = 1024

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
	// ThinkingBudget, when > 0, turns on extended thinking with this many
	// tokens for it (the API's thinking.budget_tokens: at least 1024, and
	// below MaxTokens). The thinking streams as reasoning; its signed
	// blocks go back to the API with the tool results, as it requires.
	ThinkingBudget int
}

// Model is an [agent.Model] over the Messages API. It is safe for
// concurrent use.
type Model struct {
	cfg      Config
	endpoint string
	client   *provider.Client
}

var _ agent.StreamingModel = (*Model)(nil)

// New validates cfg and returns a Model.
func New(cfg Config) (*Model, error) {
	var err error
	if cfg.BaseURL, err = provider.CheckConfig("anthropic", cfg.BaseURL, DefaultBaseURL, cfg.Model, `"claude-sonnet-4-5"`, cfg.HTTPClient); err != nil {
		return nil, err
	}
	if err := provider.CheckKey("anthropic", cfg.APIKey, cfg.BaseURL, DefaultBaseURL); err != nil {
		return nil, err
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
	if cfg.ThinkingBudget != 0 && (cfg.ThinkingBudget < minThinkingBudget || cfg.ThinkingBudget >= cfg.MaxTokens) {
		return nil, mcperr.New(mcperr.InvalidArgument, "anthropic: the thinking budget (Config.ThinkingBudget; thinkingBudget in JavaScript) must be at least %d and below the bound on an answer's tokens (MaxTokens, here %d), or 0 for no extended thinking", minThinkingBudget, cfg.MaxTokens)
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
	return m.Stream(ctx, req, agent.Stream{Text: onText})
}

// Stream implements [agent.StreamingModel]: besides the text, the
// thinking blocks' thinking_delta text as reasoning, the tool_use blocks
// as they are written, and the usage of message_start and message_delta.
func (m *Model) Stream(ctx context.Context, req agent.Request, st agent.Stream) (agent.Message, error) {
	body, err := m.body(req)
	if err != nil {
		return agent.Message{}, err
	}
	own := http.Header{}
	own.Set("anthropic-version", m.cfg.Version)
	own.Set("anthropic-dangerous-direct-browser-access", "true")
	if !m.cfg.APIKey.IsZero() {
		own.Set("x-api-key", m.cfg.APIKey.Reveal())
	}
	return m.client.Answer(ctx, m.endpoint, m.cfg.Headers, own, body, st, m.readJSON, m.readStream)
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
	kind string // "text", "tool_use", "thinking", "redacted_thinking", or another type (ignored)
	id   string
	name string
	args strings.Builder
	call int // a tool_use block's position among the answer's calls

	thinking  strings.Builder // a thinking block's text
	signature string          // and its signature
	data      string          // a redacted_thinking block's encrypted data
}

type streamState struct {
	m      *Model
	st     agent.Stream
	blocks map[int]*block
	calls  int // tool_use blocks so far
	text   strings.Builder
	size   int
	stop   string
	model  string
	usage  wireUsage
}

// wireUsage is the API's usage object, as message_start carries it and
// message_delta updates it (its counts are cumulative). Counts are read
// leniently ([provider.Count]).
type wireUsage struct {
	InputTokens              json.RawMessage `json:"input_tokens"`
	OutputTokens             json.RawMessage `json:"output_tokens"`
	CacheCreationInputTokens json.RawMessage `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     json.RawMessage `json:"cache_read_input_tokens"`
}

// update takes the counts raw carries; a usage that is not an object is
// ignored.
func (u *wireUsage) update(raw json.RawMessage) {
	var v wireUsage
	if raw = bytes.TrimSpace(raw); len(raw) == 0 || raw[0] != '{' || json.Unmarshal(raw, &v) != nil {
		return
	}
	for _, f := range []struct{ dst, src *json.RawMessage }{
		{&u.InputTokens, &v.InputTokens}, {&u.OutputTokens, &v.OutputTokens},
		{&u.CacheCreationInputTokens, &v.CacheCreationInputTokens}, {&u.CacheReadInputTokens, &v.CacheReadInputTokens},
	} {
		if provider.Counted(*f.src) {
			*f.dst = *f.src
		}
	}
}

// usage is the agent's view: every input token counts, those read from
// the cache and those written to it included (the API's input_tokens
// counts only the ones after the last cache breakpoint).
func (u *wireUsage) usage() (agent.Usage, bool) {
	if !provider.Counted(u.InputTokens) && !provider.Counted(u.OutputTokens) {
		return agent.Usage{}, false
	}
	read := provider.Count(u.CacheReadInputTokens)
	in := provider.Count(u.InputTokens) + provider.Count(u.CacheCreationInputTokens) + read
	return agent.Usage{InputTokens: in, OutputTokens: provider.Count(u.OutputTokens), CachedInputTokens: read}.Checked(), true
}

// event is every streamed event's data; fields by type.
type event struct {
	Type    string `json:"type"`
	Index   *int   `json:"index"`
	Message *struct {
		Model string          `json:"model"`
		Usage json.RawMessage `json:"usage"`
	} `json:"message"`
	ContentBlock *struct {
		Type      string `json:"type"`
		ID        string `json:"id"`
		Name      string `json:"name"`
		Text      string `json:"text"`
		Thinking  string `json:"thinking"`
		Signature string `json:"signature"`
		Data      string `json:"data"`
	} `json:"content_block"`
	Delta *struct {
		Type        string `json:"type"`
		Text        string `json:"text"`
		PartialJSON string `json:"partial_json"`
		Thinking    string `json:"thinking"`
		Signature   string `json:"signature"`
		StopReason  string `json:"stop_reason"`
	} `json:"delta"`
	Usage json.RawMessage `json:"usage"` // message_delta's
	Error *apiError       `json:"error"`
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
func (s *streamState) handle(e *event) (done bool, err error) {
	switch e.Type {
	case "message_start":
		if e.Message != nil {
			s.model = e.Message.Model
			s.usage.update(e.Message.Usage)
		}
	case "content_block_start":
		return false, s.start(e)
	case "content_block_delta":
		return false, s.blockDelta(e)
	case "content_block_stop":
		_, err := s.blockAt(e)
		return false, err
	case "message_delta":
		if e.Delta != nil && e.Delta.StopReason != "" {
			s.stop = e.Delta.StopReason
		}
		s.usage.update(e.Usage)
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

// start begins the block of a content_block_start.
func (s *streamState) start(e *event) error {
	if e.Index == nil || e.ContentBlock == nil {
		return s.m.client.Protocol("content_block_start without index or content_block")
	}
	i := *e.Index
	if _, dup := s.blocks[i]; dup || i < 0 || len(s.blocks) >= maxBlocks {
		return s.m.client.Protocol("content_block_start: bad or repeated index %d", i)
	}
	cb := e.ContentBlock
	b := &block{kind: cb.Type, id: cb.ID, name: cb.Name}
	s.blocks[i] = b
	switch b.kind {
	case "text":
		if cb.Text != "" {
			if err := s.grow(len(cb.Text)); err != nil {
				return err
			}
			s.text.WriteString(cb.Text)
			s.st.Text(cb.Text)
		}
	case "tool_use":
		b.call = s.calls
		s.calls++
		s.st.ToolCall(agent.ToolCallDelta{Index: b.call, ID: b.id, Name: b.name})
	case "thinking":
		if err := s.grow(len(cb.Thinking) + len(cb.Signature)); err != nil {
			return err
		}
		b.thinking.WriteString(cb.Thinking)
		b.signature = cb.Signature
		if cb.Thinking != "" {
			s.st.Reasoning(cb.Thinking)
		}
	case "redacted_thinking":
		if err := s.grow(len(cb.Data)); err != nil {
			return err
		}
		b.data = cb.Data
	}
	return nil
}

// blockDelta applies a content_block_delta to the block it names.
func (s *streamState) blockDelta(e *event) error {
	b, err := s.blockAt(e)
	if err != nil {
		return err
	}
	if e.Delta == nil {
		return s.m.client.Protocol("content_block_delta without a delta")
	}
	return s.delta(b, e)
}

// delta applies a content_block_delta to its block b.
func (s *streamState) delta(b *block, e *event) error {
	d := e.Delta
	switch d.Type {
	case "text_delta":
		if err := s.grow(len(d.Text)); err != nil {
			return err
		}
		s.text.WriteString(d.Text)
		s.st.Text(d.Text)
	case "input_json_delta":
		if b.kind != "tool_use" {
			return s.m.client.Protocol("input_json_delta for a %s block", b.kind)
		}
		if err := s.grow(len(d.PartialJSON)); err != nil {
			return err
		}
		b.args.WriteString(d.PartialJSON)
		if d.PartialJSON != "" {
			s.st.ToolCall(agent.ToolCallDelta{Index: b.call, ID: b.id, Name: b.name, ArgumentsDelta: d.PartialJSON})
		}
	case "thinking_delta":
		if b.kind != "thinking" {
			return s.m.client.Protocol("thinking_delta for a %s block", b.kind)
		}
		if err := s.grow(len(d.Thinking)); err != nil {
			return err
		}
		b.thinking.WriteString(d.Thinking)
		if d.Thinking != "" {
			s.st.Reasoning(d.Thinking)
		}
	case "signature_delta":
		if b.kind != "thinking" {
			return s.m.client.Protocol("signature_delta for a %s block", b.kind)
		}
		if err := s.grow(len(d.Signature)); err != nil {
			return err
		}
		b.signature += d.Signature
	}
	// citations_delta and delta types added later: not passed on.
	return nil
}

// thinkingBlocks returns the answer's thinking and redacted_thinking
// blocks, in order, as the API sent them, under the adapter's key of
// [agent.Message.ProviderState]; nil when there are none. A thinking
// block without its signature cannot go back (the API would refuse it),
// so it is left out.
func (s *streamState) thinkingBlocks(idx []int) json.RawMessage {
	var out []contentBlock
	for _, i := range idx {
		switch b := s.blocks[i]; {
		case b.kind == "thinking" && b.signature != "":
			out = append(out, contentBlock{Type: "thinking", Thinking: ptr(b.thinking.String()), Signature: b.signature})
		case b.kind == "redacted_thinking" && b.data != "":
			out = append(out, contentBlock{Type: "redacted_thinking", Data: b.data})
		}
	}
	if len(out) == 0 {
		return nil
	}
	raw, err := json.Marshal(map[string][]contentBlock{stateKey: out})
	if err != nil {
		return nil
	}
	return raw
}

func (s *streamState) message() (agent.Message, error) {
	all := make([]int, 0, len(s.blocks))
	for i := range s.blocks {
		all = append(all, i)
	}
	sort.Ints(all)
	var idx []int
	for _, i := range all {
		if s.blocks[i].kind == "tool_use" {
			idx = append(idx, i)
		}
	}
	if len(idx) > maxToolCalls {
		return agent.Message{}, s.m.client.Protocol("more than %d tool calls in one answer", maxToolCalls)
	}
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
	if u, ok := s.usage.usage(); ok {
		s.st.Usage(u)
	}
	return agent.Message{Role: agent.RoleAssistant, Content: s.text.String(), ToolCalls: calls, FinishReason: finishReason(s.stop), Model: model,
		ProviderState: s.thinkingBlocks(all)}, nil
}

func (m *Model) readStream(ctx context.Context, resp *http.Response, st agent.Stream) (agent.Message, error) {
	s := &streamState{m: m, st: st, blocks: map[int]*block{}}
	done, err := provider.ReadEvents(ctx, m.client, sse.Scan(resp.Body, maxEvent), func(name string, e *event) (bool, error) {
		if e.Type == "" {
			e.Type = name
		}
		return s.handle(e)
	})
	if err != nil {
		return agent.Message{}, err
	}
	if !done {
		return agent.Message{}, mcperr.New(mcperr.Network, "anthropic: the stream ended before message_stop; try again")
	}
	return s.message()
}

// readJSON reads a non-streamed Message (a proxy that does not stream).
func (m *Model) readJSON(ctx context.Context, resp *http.Response, st agent.Stream) (agent.Message, error) {
	b, err := m.client.ReadJSONBody(ctx, resp.Body, maxJSONBody)
	if err != nil {
		return agent.Message{}, err
	}
	var msg struct {
		Type    string `json:"type"`
		Model   string `json:"model"`
		Content []struct {
			Type      string          `json:"type"`
			Text      string          `json:"text"`
			ID        string          `json:"id"`
			Name      string          `json:"name"`
			Input     json.RawMessage `json:"input"`
			Thinking  string          `json:"thinking"`
			Signature string          `json:"signature"`
			Data      string          `json:"data"`
		} `json:"content"`
		StopReason string          `json:"stop_reason"`
		Usage      json.RawMessage `json:"usage"`
		Error      *apiError       `json:"error"`
	}
	if err := json.Unmarshal(b, &msg); err != nil {
		return agent.Message{}, m.client.Protocol("the answer is not a message: %v", err)
	}
	if msg.Type == "error" && msg.Error != nil {
		return agent.Message{}, m.streamError(msg.Error)
	}
	// The callbacks wait until the message is read whole: the text and
	// reasoning go out in one piece each, the usage last.
	var reasoning strings.Builder
	quiet := st
	quiet.Usage = func(agent.Usage) {}
	s := &streamState{m: m, st: quiet, blocks: map[int]*block{}, stop: msg.StopReason, model: msg.Model}
	s.usage.update(msg.Usage)
	for i, c := range msg.Content {
		if i >= maxBlocks {
			return agent.Message{}, m.client.Protocol("more than %d content blocks", maxBlocks)
		}
		bl := &block{kind: c.Type, id: c.ID, name: c.Name, signature: c.Signature, data: c.Data}
		switch c.Type {
		case "text":
			s.text.WriteString(c.Text)
		case "tool_use":
			bl.args.Write(bytes.TrimSpace(c.Input))
		case "thinking":
			bl.thinking.WriteString(c.Thinking)
			reasoning.WriteString(c.Thinking)
		}
		s.blocks[i] = bl
	}
	out, err := s.message()
	if err != nil {
		return out, err
	}
	if reasoning.Len() > 0 {
		st.Reasoning(reasoning.String())
	}
	if out.Content != "" {
		st.Text(out.Content)
	}
	if u, ok := s.usage.usage(); ok {
		st.Usage(u)
	}
	return out, nil
}
