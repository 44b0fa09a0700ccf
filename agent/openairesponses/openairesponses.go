package openairesponses

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"time"

	"github.com/mcpwasm/mcpwasm/agent"
	"github.com/mcpwasm/mcpwasm/agent/internal/provider"
	"github.com/mcpwasm/mcpwasm/catalog"
	"github.com/mcpwasm/mcpwasm/mcperr"
)

// DefaultBaseURL is OpenAI's API.
const DefaultBaseURL = "https://api.openai.com/v1"

// Limits on what is read from the API.
const (
	maxEvent     = 1 << 20
	maxAnswer    = 8 << 20
	maxJSONBody  = 16 << 20
	maxToolCalls = 128
	maxItems     = 1024
)

// Config configures a [Model].
type Config struct {
	// BaseURL is the API root, with its version: DefaultBaseURL when empty.
	BaseURL string
	// APIKey is sent as a bearer token when set. Required for
	// DefaultBaseURL; a proxy (another BaseURL) may add it itself.
	APIKey agent.Secret
	// Model is the model to ask, e.g. "gpt-5-mini". Required.
	Model string
	// HTTPClient sends the requests. Required: in a browser, pass one that
	// wraps http.DefaultTransport (the fetch transport).
	HTTPClient *http.Client
	// Headers are added to every request.
	Headers map[string]string
	// ReasoningEffort is the request's reasoning.effort ("minimal", "low",
	// "medium", "high", …) for reasoning models; "" sends none (the
	// model's default). Other models refuse it.
	ReasoningEffort string
	// ReasoningSummary is the request's reasoning.summary ("auto",
	// "concise" or "detailed"): the reasoning models then stream a summary
	// of their reasoning, passed on as reasoning. "" asks for none.
	ReasoningSummary string
	// MaxRetries bounds the retries on 408, 409, 429 and 5xx: 0 means 2,
	// negative means none.
	MaxRetries int
	// MaxRetryWait caps how long to wait before a retry (30 s when 0).
	MaxRetryWait time.Duration
}

// Model is an [agent.Model] over the Responses API. It is safe for
// concurrent use.
type Model struct {
	cfg      Config
	endpoint string
	client   *provider.Client
}

var (
	_ agent.StreamingModel = (*Model)(nil)
	_ agent.ToolFormatter  = (*Model)(nil)
)

// summaries are the values of reasoning.summary.
var summaries = map[string]bool{"": true, "auto": true, "concise": true, "detailed": true}

// New validates cfg and returns a Model.
func New(cfg Config) (*Model, error) {
	var err error
	if cfg.BaseURL, err = provider.CheckConfig("openai-responses", cfg.BaseURL, DefaultBaseURL, cfg.Model, `"gpt-5-mini"`, cfg.HTTPClient); err != nil {
		return nil, err
	}
	if err := provider.CheckKey("openai-responses", cfg.APIKey, cfg.BaseURL, DefaultBaseURL); err != nil {
		return nil, err
	}
	if !summaries[cfg.ReasoningSummary] {
		return nil, mcperr.New(mcperr.InvalidArgument, `openai-responses: Config.ReasoningSummary must be "auto", "concise", "detailed" or empty`)
	}
	return &Model{
		cfg:      cfg,
		endpoint: provider.Endpoint(cfg.BaseURL, "/responses"),
		client: &provider.Client{
			Name:       "openai-responses",
			HTTP:       cfg.HTTPClient,
			Key:        cfg.APIKey,
			MaxRetries: cfg.MaxRetries,
			MaxWait:    cfg.MaxRetryWait,
			ParseError: parseError,
		},
	}, nil
}

// ToolFormat implements [agent.ToolFormatter]: the catalog's Responses
// API export.
func (m *Model) ToolFormat() catalog.Format { return catalog.FormatOpenAIResponses }

// Generate implements [agent.Model].
func (m *Model) Generate(ctx context.Context, req agent.Request, onText func(string)) (agent.Message, error) {
	return m.Stream(ctx, req, agent.Stream{Text: onText})
}

// Stream implements [agent.StreamingModel]: besides the text, the
// reasoning (summaries, or reasoning text where a server sends it), the
// function calls as they are written, and the usage of response.completed.
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

// apiError is the API's error object (in an error body, a response.failed
// event's response, and an error event itself).
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
	} else if c := bytes.TrimSpace(e.Code); len(c) > 0 && string(c) != "null" {
		f.Code = string(c)
	}
	return f
}

func parseError(body []byte) (provider.ErrorFields, bool) {
	var env struct {
		Error *apiError `json:"error"`
	}
	if json.Unmarshal(body, &env) != nil || env.Error == nil || (env.Error.Message == "" && env.Error.Type == "") {
		return provider.ErrorFields{}, false
	}
	return env.Error.fields(), true
}

// statusOf is the HTTP status an error code stands for, for errors that
// arrive inside a stream.
var statusOf = map[string]int{
	"rate_limit_exceeded":     429,
	"insufficient_quota":      429,
	"server_error":            500,
	"invalid_prompt":          400,
	"invalid_api_key":         401,
	"context_length_exceeded": 400,
}

func (m *Model) streamError(e *apiError) error {
	f := e.fields()
	return &agent.ProviderError{Provider: "openai-responses", Status: statusOf[f.Code], Type: m.client.Sanitize(f.Type),
		Code: m.client.Sanitize(f.Code), Message: m.client.Sanitize(f.Message)}
}
