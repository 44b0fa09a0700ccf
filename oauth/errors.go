package oauth

import (
	"errors"
	"strconv"
	"strings"
	"unicode"

	"github.com/mcpwasm/mcpwasm/mcperr"
)

// Error is the error type of this package. Code is its docs/JSAPI.md code; Msg
// and the cause never contain secrets (tokens, codes, verifiers, client
// secrets).
//
// errors.Is(err, ErrX) is true for any *Error whose Code equals the code of
// the sentinel ErrX, so a "declined" error carrying the server's description
// still matches [ErrDeclined].
type Error struct {
	Code mcperr.Code // docs/JSAPI.md code
	Msg  string      // human-readable, prefixed "oauth: ", free of secrets
	Err  error       // cause, may be nil; free of secrets

	sentinel bool
}

func (e *Error) Error() string {
	if e.Err == nil {
		return e.Msg
	}
	return e.Msg + ": " + e.Err.Error()
}

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// MCPErrorCode implements [mcperr.Coder].
func (e *Error) MCPErrorCode() mcperr.Code { return e.Code }

// Is reports whether target is the sentinel of e's code.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.sentinel && t.Code == e.Code
}

func sentinel(code mcperr.Code, msg string) *Error {
	return &Error{Code: code, Msg: msg, sentinel: true}
}

// Sentinels, one per state-like docs/JSAPI.md code. They match (errors.Is) any
// *Error of the same code, through any wrapping with %w, including go-sdk's
// wrapping of transport errors.
var (
	// ErrAuthorizationRequired: a login is needed and may not start now
	// (non-interactive mode, or a stored grant became unusable). Call
	// [Handler.Login] from a user gesture.
	ErrAuthorizationRequired error = sentinel(mcperr.AuthRequired, "oauth: authorization required")
	// ErrDeclined: the user denied or dismissed the login, or it was
	// aborted; no new flow starts until [Handler.Login] is called (a user
	// action clears the latch).
	ErrDeclined error = sentinel(mcperr.Declined, "oauth: authorization declined")
	// ErrPopupBlocked is returned by a [Courier] that could not show the
	// authorization page.
	ErrPopupBlocked error = sentinel(mcperr.PopupBlocked, "oauth: popup blocked")
	// ErrStateMismatch: a callback with an unknown, expired or already used
	// state, or one that does not belong to the flow.
	ErrStateMismatch error = sentinel(mcperr.StateMismatch, "oauth: state mismatch")
	// ErrDiscoveryFailed: metadata discovery or validation failed.
	ErrDiscoveryFailed error = sentinel(mcperr.DiscoveryFailed, "oauth: discovery failed")
	// ErrRegistrationFailed: no usable client registration.
	ErrRegistrationFailed error = sentinel(mcperr.RegistrationFailed, "oauth: registration failed")
	// ErrTokenFailed: the token endpoint failed or answered unacceptably.
	ErrTokenFailed error = sentinel(mcperr.TokenFailed, "oauth: token request failed")
	// ErrInsufficientScope: step-up authorization gave up.
	ErrInsufficientScope error = sentinel(mcperr.InsufficientScope, "oauth: insufficient scope")
	// ErrStorage: the Store failed; nothing is assumed persisted.
	ErrStorage error = sentinel(mcperr.Storage, "oauth: storage failed")
)

func newErr(code mcperr.Code, msg string, cause error) *Error {
	return &Error{Code: code, Msg: "oauth: " + msg, Err: cause}
}

// ServerError is an OAuth error response (RFC 6749 §4.1.2.1, §5.2;
// RFC 7591 §3.2.2) from the authorization server. Description is sanitised
// (control characters removed, length bounded).
type ServerError struct {
	Endpoint    string // "authorization", "token", "registration" or "revocation"
	Status      int    // HTTP status, 0 for an authorization (redirect) response
	ErrorCode   string // RFC 6749 "error"
	Description string // RFC 6749 "error_description", sanitised
	URI         string // RFC 6749 "error_uri", sanitised

	code mcperr.Code
}

func (e *ServerError) Error() string {
	var b strings.Builder
	b.WriteString(e.Endpoint)
	b.WriteString(" endpoint returned")
	if e.Status != 0 {
		b.WriteString(" status ")
		b.WriteString(strconv.Itoa(e.Status))
	}
	if e.ErrorCode != "" {
		b.WriteString(" error ")
		b.WriteString(strconv.Quote(e.ErrorCode))
	}
	if e.Description != "" {
		b.WriteString(": ")
		b.WriteString(strconv.Quote(e.Description))
	}
	return b.String()
}

// MCPErrorCode implements [mcperr.Coder].
func (e *ServerError) MCPErrorCode() mcperr.Code { return e.code }

// HTTPStatus implements [mcperr.StatusCoder].
func (e *ServerError) HTTPStatus() int { return e.Status }

// maxDescription bounds server-provided text placed in errors and events.
const maxDescription = 200

// sanitize makes server-provided text safe to show: printable characters
// only (no control or bidi characters), at most maxDescription runes.
func sanitize(s string) string {
	var b strings.Builder
	n := 0
	for _, r := range s {
		if n >= maxDescription {
			b.WriteString("…")
			break
		}
		switch {
		case r == '\t' || r == '\n' || r == '\r':
			r = ' '
		case !unicode.IsPrint(r) || unicode.Is(unicode.Bidi_Control, r):
			continue
		}
		b.WriteRune(r)
		n++
	}
	return b.String()
}

// sanitizeList sanitizes the entries of l for an error message, showing
// at most eight.
func sanitizeList(l []string) string {
	var out []string
	for i, s := range l {
		if i == 8 {
			out = append(out, "…")
			break
		}
		out = append(out, sanitize(s))
	}
	return strings.Join(out, " ")
}

// isCode reports whether err carries the given code.
func isCode(err error, code mcperr.Code) bool {
	var c mcperr.Coder
	return errors.As(err, &c) && c.MCPErrorCode() == code
}
