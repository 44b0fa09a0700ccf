package agent

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/mcpwasm/mcpwasm/mcperr"
)

// Codes of [ErrorEvent]s that end a run without failing it. Failures use
// the [mcperr] codes (aborted, network, http, protocol, invalid_argument).
const (
	// CodeMaxSteps: the model was still calling tools after MaxSteps steps.
	CodeMaxSteps mcperr.Code = "max_steps"
	// CodeEmptyResponse: the model answered with no text and no tool call.
	CodeEmptyResponse mcperr.Code = "empty_response"
)

// ProviderError is an error a model provider reported: an HTTP error status
// with its error body, or an error event inside a stream. Message is the
// provider's own text, sanitised (control characters removed, length
// capped, the API key redacted).
type ProviderError struct {
	Provider   string        // "openai", "anthropic", …
	Status     int           // HTTP status; for an in-stream error, the status its type stands for
	Type       string        // the provider's error type, e.g. "rate_limit_error"
	Code       string        // the provider's error code, when it gave one
	Message    string        // the provider's message, sanitised
	RetryAfter time.Duration // what Retry-After asked for, when it did
	Retries    int           // how many times the request was retried before giving up
}

// Error says who failed, how, in the provider's words, and what to do next.
func (e *ProviderError) Error() string {
	var b strings.Builder
	b.WriteString(e.Provider)
	b.WriteString(": ")
	if e.Status > 0 {
		fmt.Fprintf(&b, "HTTP %d", e.Status)
	} else {
		b.WriteString("error in the stream")
	}
	detail := e.Type
	if e.Code != "" && e.Code != e.Type {
		if detail != "" {
			detail += "/"
		}
		detail += e.Code
	}
	if detail != "" {
		b.WriteString(" (" + detail + ")")
	}
	if e.Message != "" {
		b.WriteString(": " + e.Message)
	}
	if e.Retries > 0 {
		fmt.Fprintf(&b, " (after %d retries)", e.Retries)
	}
	if h := e.hint(); h != "" {
		b.WriteString(". " + h)
	}
	return b.String()
}

// hint says what to do next.
func (e *ProviderError) hint() string {
	switch s := e.Status; {
	case s == 401 || s == 403:
		return "Check the API key and its permissions for this model"
	case s == 404:
		return "Check the base URL and the model name"
	case s == 408 || s == 429:
		if e.RetryAfter > 0 {
			return fmt.Sprintf("The provider asked to wait %s; try again later", e.RetryAfter.Round(time.Second))
		}
		return "The provider is rate limiting; try again later"
	case s == 400 || s == 413 || s == 422:
		return "The provider rejected the request; check the model name and its limits"
	case s >= 500:
		return "The provider failed; try again later"
	}
	return ""
}

// MCPErrorCode implements [mcperr.Coder]: always [mcperr.HTTP].
func (e *ProviderError) MCPErrorCode() mcperr.Code { return mcperr.HTTP }

// HTTPStatus implements [mcperr.StatusCoder].
func (e *ProviderError) HTTPStatus() int { return e.Status }

// CodeUserRejected is the JSON-RPC error code MCP gives a refused sampling
// request (the specification's client/sampling error handling).
const CodeUserRejected = -1

// ErrSamplingRefused is the error a client returns for a sampling request
// the user (or the host) did not allow: the JSON-RPC error
// {code: -1, message: "User rejected sampling request"} that MCP servers
// expect. go-sdk sends it as is, also when wrapped with %w.
var ErrSamplingRefused error = &jsonrpc.Error{Code: CodeUserRejected, Message: "User rejected sampling request"}

// IsSamplingRefused reports whether err is, or wraps, a refused sampling
// request.
func IsSamplingRefused(err error) bool {
	var w *jsonrpc.Error
	return errors.As(err, &w) && w.Code == CodeUserRejected
}
