// Package mcperr defines the error codes of the JavaScript API (docs/JSAPI.md) and
// maps Go errors onto them.
//
// Any package may give its errors a code by implementing [Coder]; [CodeOf]
// finds the first coded error in a chain (errors.As), so codes survive any
// wrapping with %w. Errors without a code are classified by what they are:
// context cancellation is [Aborted], a deadline is [Timeout].
package mcperr

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Code is one of the docs/JSAPI.md MCPError codes.
type Code string

// The codes of docs/JSAPI.md.
const (
	AuthRequired       Code = "auth_required"
	Declined           Code = "declined"
	PopupBlocked       Code = "popup_blocked"
	RedirectUnhandled  Code = "redirect_unhandled"
	StateMismatch      Code = "state_mismatch"
	DiscoveryFailed    Code = "discovery_failed"
	RegistrationFailed Code = "registration_failed"
	TokenFailed        Code = "token_failed"
	InsufficientScope  Code = "insufficient_scope"
	Aborted            Code = "aborted"
	Timeout            Code = "timeout"
	Network            Code = "network"
	HTTP               Code = "http"
	Protocol           Code = "protocol"
	InvalidArgument    Code = "invalid_argument"
	Storage            Code = "storage"
	Closed             Code = "closed"
	// Policy: the host policy (mcp.policy(), a catalog's policy) does
	// not allow the server or its authorization server.
	Policy Code = "policy"
)

// Coder is implemented by errors that know their docs/JSAPI.md code.
type Coder interface {
	error
	// MCPErrorCode returns the docs/JSAPI.md code of the error.
	MCPErrorCode() Code
}

// StatusCoder is implemented by errors that carry an HTTP status.
type StatusCoder interface {
	error
	// HTTPStatus returns the HTTP status code behind the error, or 0.
	HTTPStatus() int
}

// Error is a generic coded error.
type Error struct {
	Code   Code   // docs/JSAPI.md code
	Status int    // HTTP status, when one is involved
	Msg    string // human-readable message, free of secrets
	Err    error  // underlying cause, may be nil
}

// New returns an *Error with the given code and message.
func New(code Code, format string, args ...any) *Error {
	return &Error{Code: code, Msg: fmt.Sprintf(format, args...)}
}

// Wrap returns an *Error with the given code wrapping err; msg prefixes it.
func Wrap(code Code, err error, msg string) *Error {
	return &Error{Code: code, Msg: msg, Err: err}
}

func (e *Error) Error() string {
	switch {
	case e.Err == nil:
		return e.Msg
	case e.Msg == "":
		return e.Err.Error()
	default:
		return e.Msg + ": " + e.Err.Error()
	}
}

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// MCPErrorCode implements [Coder].
func (e *Error) MCPErrorCode() Code { return e.Code }

// HTTPStatus implements [StatusCoder].
func (e *Error) HTTPStatus() int { return e.Status }

// CodeOf returns the code of err: the first [Coder] in its chain, else
// [Aborted] for context.Canceled, [Timeout] for context.DeadlineExceeded,
// and def otherwise. CodeOf(nil) is "".
func CodeOf(err error, def Code) Code {
	if err == nil {
		return ""
	}
	var c Coder
	if errors.As(err, &c) {
		return c.MCPErrorCode()
	}
	switch {
	case errors.Is(err, context.Canceled):
		return Aborted
	case errors.Is(err, context.DeadlineExceeded):
		return Timeout
	}
	return def
}

// StatusOf returns the HTTP status carried by err's chain, or 0.
func StatusOf(err error) int {
	var s StatusCoder
	if errors.As(err, &s) {
		return s.HTTPStatus()
	}
	return 0
}

// SignInUnfinished is the cause of a sign-in that nobody finished within
// Within (the popup left open, a page that never returned): its code is
// [Timeout], and [Present] says that the sign-in was not finished, not that
// the server did not answer.
type SignInUnfinished struct {
	Within time.Duration
}

func (e *SignInUnfinished) Error() string {
	return "nobody finished the sign-in within " + e.Within.String()
}

// MCPErrorCode implements [Coder].
func (e *SignInUnfinished) MCPErrorCode() Code { return Timeout }

// UnhandledRedirect is a sign-in whose window reached its redirect URI,
// URL (without query or fragment), where no callback receiver ran: the
// app's server answered there with a page that does not import the
// callback module (often the app itself, by a single-page app's fallback
// route). Its code is [RedirectUnhandled].
type UnhandledRedirect struct {
	URL string
}

func (e *UnhandledRedirect) Error() string {
	return "the sign-in window reached the redirect URI " + e.URL + ", but no callback receiver (mcpwasm/callback) ran there"
}

// MCPErrorCode implements [Coder].
func (e *UnhandledRedirect) MCPErrorCode() Code { return RedirectUnhandled }
