package openai

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/mcpwasm/mcpwasm/agent"
	"github.com/mcpwasm/mcpwasm/agent/internal/provider"
	"github.com/mcpwasm/mcpwasm/agent/internal/sse"
	"github.com/mcpwasm/mcpwasm/mcperr"
)

// DefaultBaseURL is OpenAI's API.
const DefaultBaseURL = "https://api.openai.com/v1"

// Limits on what is read from a provider.
const (
	maxEvent     = 1 << 20  // one SSE event
	maxAnswer    = 8 << 20  // text plus tool arguments of one answer
	maxJSONBody  = 16 << 20 // a non-streamed answer
	maxToolCalls = 128      // tool calls in one answer
)

// Config configures a [Model].
type Config struct {
	// BaseURL is the API root, with its version: DefaultBaseURL when
	// empty; "http://localhost:11434/v1" for Ollama.
	BaseURL string
	// APIKey is sent as a bearer token when set; local servers need none.
	APIKey agent.Secret
	// Model is the model to ask, e.g. "gpt-4o-mini" or "llama3.2". Required.
	Model string
	// HTTPClient sends the requests. Required: in a browser, pass one that
	// wraps http.DefaultTransport (the fetch transport).
	HTTPClient *http.Client
	// Headers are added to every request (OpenRouter's HTTP-Referer and
	// X-Title, a proxy's own header, …).
	Headers map[string]string
	// MaxTokensParam names the request field that carries
	// agent.Request.MaxTokens: "max_completion_tokens" (OpenAI's current
	// name, the default for api.openai.com) or "max_tokens" (the default
	// elsewhere, understood by the compatible servers).
	MaxTokensParam string
	// MaxRetries bounds the retries on 408, 409, 429 and 5xx: 0 means 2,
	// negative means none.
	MaxRetries int
	// MaxRetryWait caps how long to wait before a retry (30 s when 0); a
	// Retry-After longer than that ends the request with its error.
	MaxRetryWait time.Duration
}

// Model is an [agent.Model] over Chat Completions. It is safe for
// concurrent use.
type Model struct {
	cfg       Config
	endpoint  string
	modelJSON []byte // cfg.Model as a JSON string
	client    *provider.Client
}

var _ agent.StreamingModel = (*Model)(nil)

// New validates cfg and returns a Model.
func New(cfg Config) (*Model, error) {
	var err error
	if cfg.BaseURL, err = provider.CheckConfig("openai", cfg.BaseURL, DefaultBaseURL, cfg.Model, `"gpt-4o-mini", or "llama3.2" for Ollama`, cfg.HTTPClient); err != nil {
		return nil, err
	}
	switch cfg.MaxTokensParam {
	case "":
		cfg.MaxTokensParam = "max_tokens"
		if u, _ := url.Parse(cfg.BaseURL); u != nil && u.Hostname() == "api.openai.com" {
			cfg.MaxTokensParam = "max_completion_tokens"
		}
	case "max_tokens", "max_completion_tokens":
	default:
		return nil, mcperr.New(mcperr.InvalidArgument, `openai: Config.MaxTokensParam must be "max_tokens" or "max_completion_tokens"`)
	}
	modelJSON, err := json.Marshal(cfg.Model)
	if err != nil {
		return nil, mcperr.Wrap(mcperr.InvalidArgument, err, "openai: Config.Model")
	}
	return &Model{
		cfg:       cfg,
		endpoint:  provider.Endpoint(cfg.BaseURL, "/chat/completions"),
		modelJSON: modelJSON,
		client: &provider.Client{
			Name:       "openai",
			HTTP:       cfg.HTTPClient,
			Key:        cfg.APIKey,
			MaxRetries: cfg.MaxRetries,
			MaxWait:    cfg.MaxRetryWait,
			ParseError: parseError,
		},
	}, nil
}

type streamOptions struct {
	IncludeUsage bool `json:"include_usage"`
}

// chatTail is the part of the request body after its tools.
type chatTail struct {
	Stream              bool           `json:"stream"`
	StreamOptions       *streamOptions `json:"stream_options,omitempty"`
	MaxTokens           int            `json:"max_tokens,omitempty"`
	MaxCompletionTokens int            `json:"max_completion_tokens,omitempty"`
	Temperature         *float64       `json:"temperature,omitempty"`
	Stop                []string       `json:"stop,omitempty"`
}

// body builds the request body of req: {"model", "messages", "tools",
// "tool_choice", then chatTail's fields}, put together from its parts so that each message is encoded once and the
// tools, already JSON, are checked but not encoded again (json.Marshal
// would compact every message's and the tools' JSON a second time, at
// every step of a conversation that only grows).
func (m *Model) body(req agent.Request) ([]byte, error) {
	bad := func(err error) error { return mcperr.Wrap(mcperr.InvalidArgument, err, "openai: encoding the request") }
	tail := chatTail{Stream: true, StreamOptions: &streamOptions{IncludeUsage: true}, Temperature: req.Temperature, Stop: req.Stop}
	if req.MaxTokens > 0 {
		if m.cfg.MaxTokensParam == "max_completion_tokens" {
			tail.MaxCompletionTokens = req.MaxTokens
		} else {
			tail.MaxTokens = req.MaxTokens
		}
	}
	t, err := json.Marshal(tail)
	if err != nil {
		return nil, bad(err)
	}
	var tools []byte
	if req.HasTools() {
		if tools = bytes.TrimSpace(req.Tools); !json.Valid(tools) {
			return nil, bad(errors.New("the tools are not valid JSON"))
		}
	}
	b := make([]byte, 0, 256+len(tools)+len(t))
	b = append(b, `{"model":`...)
	b = append(b, m.modelJSON...)
	b = append(b, `,"messages":`...)
	if req.Messages == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, '[')
		for i, msg := range req.Messages {
			if i > 0 {
				b = append(b, ',')
			}
			mb, err := msg.MarshalJSON()
			if err != nil {
				return nil, bad(err)
			}
			b = append(b, mb...)
		}
		b = append(b, ']')
	}
	if tools != nil {
		b = append(b, `,"tools":`...)
		b = append(b, tools...)
		b = append(b, `,"tool_choice":"auto"`...)
	}
	b = append(b, ',')
	return append(b, t[1:]...), nil
}

// Generate implements [agent.Model].
func (m *Model) Generate(ctx context.Context, req agent.Request, onText func(string)) (agent.Message, error) {
	return m.Stream(ctx, req, agent.Stream{Text: onText})
}

// Stream implements [agent.StreamingModel]: besides the text, the
// reasoning deltas of compatible servers ("reasoning_content", or
// "reasoning"), the tool calls' pieces, and the usage the stream ends
// with (asked for with stream_options.include_usage).
func (m *Model) Stream(ctx context.Context, req agent.Request, st agent.Stream) (agent.Message, error) {
	body, err := m.body(req)
	if err != nil {
		return agent.Message{}, err
	}
	own := http.Header{}
	if !m.cfg.APIKey.IsZero() {
		own.Set("Authorization", "Bearer "+m.cfg.APIKey.Reveal())
	}
	return m.client.Answer(ctx, m.endpoint, m.cfg.Headers, own, body, st, m.readJSON, m.readStream)
}

// wireUsage is the API's usage object. Counts are read leniently
// ([provider.Count]): a server's odd usage never fails an answer.
type wireUsage struct {
	PromptTokens        json.RawMessage `json:"prompt_tokens"`
	CompletionTokens    json.RawMessage `json:"completion_tokens"`
	PromptTokensDetails *struct {
		CachedTokens json.RawMessage `json:"cached_tokens"`
	} `json:"prompt_tokens_details"`
	CompletionTokensDetails *struct {
		ReasoningTokens json.RawMessage `json:"reasoning_tokens"`
	} `json:"completion_tokens_details"`
}

// usageOf reads a usage value; ok is false when there is none (null, not
// an object, or without a usable prompt or completion count).
func usageOf(raw json.RawMessage) (agent.Usage, bool) {
	raw = bytes.TrimSpace(raw)
	var w wireUsage
	if len(raw) == 0 || raw[0] != '{' || json.Unmarshal(raw, &w) != nil {
		return agent.Usage{}, false
	}
	if !provider.Counted(w.PromptTokens) && !provider.Counted(w.CompletionTokens) {
		return agent.Usage{}, false
	}
	u := agent.Usage{InputTokens: provider.Count(w.PromptTokens), OutputTokens: provider.Count(w.CompletionTokens)}
	if d := w.PromptTokensDetails; d != nil {
		u.CachedInputTokens = provider.Count(d.CachedTokens)
	}
	if d := w.CompletionTokensDetails; d != nil {
		u.ReasoningTokens = provider.Count(d.ReasoningTokens)
	}
	return u.Checked(), true
}

// text reads a delta field that should be a string; anything else reads
// as "" (servers disagree on the reasoning fields' shapes).
func text(raw json.RawMessage) string {
	var s string
	if len(raw) == 0 || raw[0] != '"' || json.Unmarshal(raw, &s) != nil {
		return ""
	}
	return s
}

// apiError is the API's error object. Some compatible servers send a
// number as code, or a bare string as the whole error.
type apiError struct {
	Message string          `json:"message"`
	Type    string          `json:"type"`
	Code    json.RawMessage `json:"code"`
}

func (e *apiError) fields() provider.ErrorFields {
	f := provider.ErrorFields{Type: e.Type, Message: e.Message}
	var s string
	if json.Unmarshal(e.Code, &s) == nil {
		f.Code = s
	} else if n, err := strconv.Atoi(string(e.Code)); err == nil {
		f.Code = strconv.Itoa(n)
	}
	return f
}

// errorField reads {"error": …} when present.
func errorField(raw json.RawMessage) (*apiError, bool) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil, false
	}
	var e apiError
	if raw[0] == '"' {
		if json.Unmarshal(raw, &e.Message) != nil {
			return nil, false
		}
		return &e, true
	}
	if json.Unmarshal(raw, &e) != nil || (e.Message == "" && e.Type == "") {
		return nil, false
	}
	return &e, true
}

func parseError(body []byte) (provider.ErrorFields, bool) {
	var env struct {
		Error json.RawMessage `json:"error"`
	}
	if json.Unmarshal(body, &env) != nil {
		return provider.ErrorFields{}, false
	}
	e, ok := errorField(env.Error)
	if !ok {
		return provider.ErrorFields{}, false
	}
	return e.fields(), true
}

// streamError turns an error chunk into a ProviderError.
func (m *Model) streamError(e *apiError) error {
	f := e.fields()
	pe := &agent.ProviderError{Provider: "openai", Type: m.client.Sanitize(f.Type), Code: m.client.Sanitize(f.Code), Message: m.client.Sanitize(f.Message)}
	if n, err := strconv.Atoi(f.Code); err == nil && n >= 400 && n < 600 {
		pe.Status = n
	}
	return pe
}

// chunk is one streamed chat.completion.chunk.
type chunk struct {
	Model   string          `json:"model"`
	Choices []streamChoice  `json:"choices"`
	Usage   json.RawMessage `json:"usage"`
	Error   json.RawMessage `json:"error"`
}

// streamChoice is one choice of a stream chunk: its delta, and on its last
// chunk why it finished.
type streamChoice struct {
	Index int `json:"index"`
	Delta struct {
		Content   *string         `json:"content"`
		Refusal   *string         `json:"refusal"`
		ToolCalls []toolCallDelta `json:"tool_calls"`
		// Reasoning as compatible servers stream it: DeepSeek, vLLM,
		// llama.cpp and LiteLLM as reasoning_content, OpenRouter, Ollama
		// and newer vLLM as reasoning (some send both, alike).
		ReasoningContent json.RawMessage `json:"reasoning_content"`
		Reasoning        json.RawMessage `json:"reasoning"`
	} `json:"delta"`
	FinishReason *string `json:"finish_reason"`
}

type toolCallDelta struct {
	Index    *int   `json:"index"`
	ID       string `json:"id"`
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

// assembler builds a message from deltas.
type assembler struct {
	c      *provider.Client
	st     agent.Stream
	text   strings.Builder
	calls  []agent.ToolCall
	byIdx  map[int]int // delta index → position in calls
	size   int
	finish string
	model  string
	usage  agent.Usage
	used   bool // usage was reported
}

func (a *assembler) addText(s string) error {
	if s == "" {
		return nil
	}
	if a.size += len(s); a.size > maxAnswer {
		return a.c.Protocol("the answer is larger than %d bytes", maxAnswer)
	}
	a.text.WriteString(s)
	a.st.Text(s)
	return nil
}

// addReasoning passes reasoning on; it counts towards the answer's size
// but is not part of the message.
func (a *assembler) addReasoning(s string) error {
	if s == "" {
		return nil
	}
	if a.size += len(s); a.size > maxAnswer {
		return a.c.Protocol("the answer is larger than %d bytes", maxAnswer)
	}
	a.st.Reasoning(s)
	return nil
}

func (a *assembler) addCall(d toolCallDelta) error {
	pos := -1
	switch {
	case d.Index != nil:
		if *d.Index < 0 || *d.Index >= maxToolCalls {
			return a.c.Protocol("tool call index %d is out of range", *d.Index)
		}
		if p, ok := a.byIdx[*d.Index]; ok {
			pos = p
		}
	case len(a.calls) > 0 && (d.ID == "" || d.ID == a.calls[len(a.calls)-1].ID):
		// No index (some compatible servers): a delta continues the last
		// call unless it brings a new id.
		pos = len(a.calls) - 1
	}
	if pos < 0 {
		if len(a.calls) >= maxToolCalls {
			return a.c.Protocol("more than %d tool calls in one answer", maxToolCalls)
		}
		a.calls = append(a.calls, agent.ToolCall{Type: "function"})
		pos = len(a.calls) - 1
		if d.Index != nil {
			a.byIdx[*d.Index] = pos
		}
	}
	tc := &a.calls[pos]
	if tc.ID == "" {
		tc.ID = d.ID
	}
	if tc.Function.Name == "" {
		tc.Function.Name = d.Function.Name
	}
	if a.size += len(d.Function.Arguments) + len(d.Function.Name); a.size > maxAnswer {
		return a.c.Protocol("the answer is larger than %d bytes", maxAnswer)
	}
	tc.Function.Arguments += d.Function.Arguments
	if d.Function.Name != "" || d.Function.Arguments != "" {
		a.st.ToolCall(agent.ToolCallDelta{Index: pos, ID: tc.ID, Name: tc.Function.Name, ArgumentsDelta: d.Function.Arguments})
	}
	return nil
}

// addChoice adds one choice's delta: its reasoning, text and refusal (all
// shown to the person as they come), its tool call fragments, and its finish
// reason. Choices other than the first are ignored, since only one is
// asked for.
func (a *assembler) addChoice(ch streamChoice) error {
	if ch.Index != 0 {
		return nil
	}
	r := text(ch.Delta.ReasoningContent)
	if r == "" {
		r = text(ch.Delta.Reasoning)
	}
	if err := a.addReasoning(r); err != nil {
		return err
	}
	if ch.Delta.Content != nil {
		if err := a.addText(*ch.Delta.Content); err != nil {
			return err
		}
	}
	if ch.Delta.Refusal != nil {
		if err := a.addText(*ch.Delta.Refusal); err != nil {
			return err
		}
	}
	for _, d := range ch.Delta.ToolCalls {
		if err := a.addCall(d); err != nil {
			return err
		}
	}
	if ch.FinishReason != nil && *ch.FinishReason != "" {
		a.finish = *ch.FinishReason
	}
	return nil
}

func (a *assembler) message(fallbackModel string) agent.Message {
	model := a.model
	if model == "" {
		model = fallbackModel
	}
	return agent.Message{Role: agent.RoleAssistant, Content: a.text.String(), ToolCalls: a.calls, FinishReason: a.finish, Model: model}
}

func (m *Model) readStream(ctx context.Context, resp *http.Response, st agent.Stream) (agent.Message, error) {
	a := &assembler{c: m.client, st: st, byIdx: map[int]int{}}
	done := false
	for ev, err := range sse.Scan(resp.Body, maxEvent) {
		if err != nil {
			return agent.Message{}, m.client.StreamError(ctx, err)
		}
		data := bytes.TrimSpace(ev.Data)
		if string(data) == "[DONE]" {
			done = true
			break
		}
		if len(data) == 0 {
			continue
		}
		var c chunk
		if err := json.Unmarshal(data, &c); err != nil {
			return agent.Message{}, m.client.Protocol("a stream chunk is not valid JSON: %v", err)
		}
		if e, ok := errorField(c.Error); ok {
			return agent.Message{}, m.streamError(e)
		}
		if c.Model != "" {
			a.model = c.Model
		}
		// The last usage counts: some servers send a running one in
		// every chunk, OpenAI one in a chunk of its own at the end.
		if u, ok := usageOf(c.Usage); ok {
			a.usage, a.used = u, true
		}
		for _, ch := range c.Choices {
			if err := a.addChoice(ch); err != nil {
				return agent.Message{}, err
			}
		}
	}
	if err := ctx.Err(); err != nil {
		return agent.Message{}, m.client.NetError(ctx, err, "")
	}
	if !done && a.finish == "" {
		// A clean end of stream without [DONE] or a finish reason: the
		// server stopped before the answer was complete.
		return agent.Message{}, mcperr.New(mcperr.Network, "openai: the stream ended before the answer was complete; try again")
	}
	if a.used {
		st.Usage(a.usage)
	}
	return a.message(m.cfg.Model), nil
}

// completion is a non-streamed chat.completion.
type completion struct {
	Model   string `json:"model"`
	Choices []struct {
		Message struct {
			Content          json.RawMessage  `json:"content"`
			Refusal          *string          `json:"refusal"`
			ToolCalls        []agent.ToolCall `json:"tool_calls"`
			ReasoningContent json.RawMessage  `json:"reasoning_content"`
			Reasoning        json.RawMessage  `json:"reasoning"`
		} `json:"message"`
		FinishReason string `json:"finish_reason"`
	} `json:"choices"`
	Usage json.RawMessage `json:"usage"`
	Error json.RawMessage `json:"error"`
}

func (m *Model) readJSON(ctx context.Context, resp *http.Response, st agent.Stream) (agent.Message, error) {
	b, err := m.client.ReadJSONBody(ctx, resp.Body, maxJSONBody)
	if err != nil {
		return agent.Message{}, err
	}
	var c completion
	if err := json.Unmarshal(b, &c); err != nil {
		return agent.Message{}, m.client.Protocol("the answer is not a chat completion: %v", err)
	}
	if e, ok := errorField(c.Error); ok {
		return agent.Message{}, m.streamError(e)
	}
	if len(c.Choices) == 0 {
		return agent.Message{}, m.client.Protocol("the answer has no choices")
	}
	ch := c.Choices[0]
	var msg agent.Message
	if err := json.Unmarshal(append(append([]byte(`{"role":"assistant","content":`), orNull(ch.Message.Content)...), '}'), &msg); err != nil {
		return agent.Message{}, m.client.Protocol("the answer's content is not text: %v", err)
	}
	if ch.Message.Refusal != nil {
		msg.Content += *ch.Message.Refusal
	}
	if len(ch.Message.ToolCalls) > maxToolCalls {
		return agent.Message{}, m.client.Protocol("more than %d tool calls in one answer", maxToolCalls)
	}
	msg.ToolCalls = ch.Message.ToolCalls
	msg.FinishReason = ch.FinishReason
	msg.Model = c.Model
	if msg.Model == "" {
		msg.Model = m.cfg.Model
	}
	r := text(ch.Message.ReasoningContent)
	if r == "" {
		r = text(ch.Message.Reasoning)
	}
	if r != "" {
		st.Reasoning(r)
	}
	if msg.Content != "" {
		st.Text(msg.Content)
	}
	if u, ok := usageOf(c.Usage); ok {
		st.Usage(u)
	}
	return msg, nil
}

func orNull(raw json.RawMessage) json.RawMessage {
	if len(bytes.TrimSpace(raw)) == 0 {
		return json.RawMessage("null")
	}
	return raw
}
