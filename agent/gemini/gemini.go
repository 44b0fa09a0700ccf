package gemini

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"time"

	"github.com/mcpwasm/mcpwasm/agent"
	"github.com/mcpwasm/mcpwasm/agent/internal/provider"
	"github.com/mcpwasm/mcpwasm/catalog"
	"github.com/mcpwasm/mcpwasm/mcperr"
)

// DefaultBaseURL is the Gemini API (Google AI Studio keys).
const DefaultBaseURL = "https://generativelanguage.googleapis.com/v1beta"

// Limits on what is read from the API.
const (
	maxEvent     = 1 << 20
	maxAnswer    = 8 << 20
	maxJSONBody  = 16 << 20
	maxToolCalls = 128
)

// Config configures a [Model].
type Config struct {
	// BaseURL is the API root, with its version: DefaultBaseURL when empty.
	BaseURL string
	// APIKey is sent as x-goog-api-key. Required for DefaultBaseURL; a
	// proxy (another BaseURL) may add it itself.
	APIKey agent.Secret
	// Model is the model to ask, e.g. "gemini-2.5-flash" ("models/" in
	// front is allowed). Required.
	Model string
	// HTTPClient sends the requests. Required: in a browser, pass one that
	// wraps http.DefaultTransport (the fetch transport).
	HTTPClient *http.Client
	// Headers are added to every request.
	Headers map[string]string
	// IncludeThoughts asks thinking models for summaries of their
	// thoughts (thinkingConfig.includeThoughts), passed on as reasoning.
	// Models that do not think refuse it.
	IncludeThoughts bool
	// MaxRetries bounds the retries on 408, 409, 429 and 5xx: 0 means 2,
	// negative means none.
	MaxRetries int
	// MaxRetryWait caps how long to wait before a retry (30 s when 0).
	MaxRetryWait time.Duration
}

// Model is an [agent.Model] over streamGenerateContent. It is safe for
// concurrent use.
type Model struct {
	cfg      Config
	model    string // the model's id, without "models/"
	endpoint string
	client   *provider.Client
}

var (
	_ agent.StreamingModel = (*Model)(nil)
	_ agent.ToolFormatter  = (*Model)(nil)
)

// validModelID reports whether id is what a model id may be: it goes into
// the URL's path. A letter or digit, then letters, digits, ".", "_", "-".
func validModelID(id string) bool {
	for i, r := range id {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9':
		case i > 0 && (r == '.' || r == '_' || r == '-'):
		default:
			return false
		}
	}
	return id != ""
}

// New validates cfg and returns a Model.
func New(cfg Config) (*Model, error) {
	id := strings.TrimPrefix(cfg.Model, "models/")
	var err error
	if cfg.BaseURL, err = provider.CheckConfig("gemini", cfg.BaseURL, DefaultBaseURL, id, `"gemini-2.5-flash"`, cfg.HTTPClient); err != nil {
		return nil, err
	}
	if !validModelID(id) || len(id) > 128 {
		return nil, mcperr.New(mcperr.InvalidArgument, `gemini: Config.Model must be a model id such as "gemini-2.5-flash" (letters, digits, ".", "_", "-")`)
	}
	if err := provider.CheckKey("gemini", cfg.APIKey, cfg.BaseURL, DefaultBaseURL); err != nil {
		return nil, err
	}
	return &Model{
		cfg:      cfg,
		model:    id,
		endpoint: provider.Endpoint(cfg.BaseURL, "/models/"+id+":streamGenerateContent?alt=sse"),
		client: &provider.Client{
			Name:       "gemini",
			HTTP:       cfg.HTTPClient,
			Key:        cfg.APIKey,
			MaxRetries: cfg.MaxRetries,
			MaxWait:    cfg.MaxRetryWait,
			ParseError: parseError,
		},
	}, nil
}

// ToolFormat implements [agent.ToolFormatter]: the catalog's Gemini
// export, its schemas in Gemini's subset.
func (m *Model) ToolFormat() catalog.Format { return catalog.FormatGemini }

// Generate implements [agent.Model].
func (m *Model) Generate(ctx context.Context, req agent.Request, onText func(string)) (agent.Message, error) {
	return m.Stream(ctx, req, agent.Stream{Text: onText})
}

// Stream implements [agent.StreamingModel]: besides the text, the thought
// summaries as reasoning, each function call, and the usage metadata.
func (m *Model) Stream(ctx context.Context, req agent.Request, st agent.Stream) (agent.Message, error) {
	body, err := m.body(req)
	if err != nil {
		return agent.Message{}, err
	}
	own := http.Header{}
	if !m.cfg.APIKey.IsZero() {
		own.Set("x-goog-api-key", m.cfg.APIKey.Reveal())
	}
	return m.client.Answer(ctx, m.endpoint, m.cfg.Headers, own, body, st, m.readJSON, m.readStream)
}

// apiError is Google's error object: {"code", "message", "status"}.
type apiError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
	Status  string `json:"status"`
}

// parseError reads {"error": …}, or a list holding one (as
// streamGenerateContent without alt=sse answers).
func parseError(body []byte) (provider.ErrorFields, bool) {
	body = bytes.TrimSpace(body)
	if len(body) > 0 && body[0] == '[' {
		var list []json.RawMessage
		if json.Unmarshal(body, &list) != nil || len(list) == 0 {
			return provider.ErrorFields{}, false
		}
		body = list[0]
	}
	var env struct {
		Error *apiError `json:"error"`
	}
	if json.Unmarshal(body, &env) != nil || env.Error == nil || (env.Error.Message == "" && env.Error.Status == "") {
		return provider.ErrorFields{}, false
	}
	return provider.ErrorFields{Type: env.Error.Status, Message: env.Error.Message}, true
}

func (m *Model) streamError(e *apiError) error {
	pe := &agent.ProviderError{Provider: "gemini", Type: m.client.Sanitize(e.Status), Message: m.client.Sanitize(e.Message)}
	if e.Code >= 400 && e.Code < 600 {
		pe.Status = e.Code
	}
	return pe
}
