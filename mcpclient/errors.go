package mcpclient

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"unicode"

	"github.com/mcpwasm/mcpwasm/mcperr"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

var errClosed = mcperr.New(mcperr.Closed, "mcp: the client is closed; create a new one with mcp.client()")

// Error is an error as the page sees it: a docs/JSAPI.md code, an optional
// HTTP status, the server's JSON-RPC error code when it answered with one,
// a message a person can act on and the detail underneath (mcperr.Present);
// all free of secrets.
type Error struct {
	Code    mcperr.Code `json:"code"`
	Status  int         `json:"status,omitempty"`
	RPCCode *int64      `json:"rpcCode,omitempty"`
	Message string      `json:"message"`
	Detail  string      `json:"detail,omitempty"`
}

func (e *Error) Error() string { return e.Message }

// AsError flattens err into an [Error] for the page.
func AsError(err error) *Error {
	msg, detail := mcperr.Present(err)
	e := &Error{
		Code:    mcperr.CodeOf(err, mcperr.Protocol),
		Status:  mcperr.StatusOf(err),
		Message: msg,
		Detail:  detail,
	}
	if c, ok := mcperr.RPCCodeOf(err); ok {
		e.RPCCode = &c
	}
	return e
}

// Host is the name a message gives the server of url: its host.
func Host(rawURL string) string {
	u, err := url.Parse(rawURL)
	if err != nil || u.Host == "" {
		return "the server"
	}
	return u.Host
}

// insufficient reports whether a 403 carried error="insufficient_scope"
// (readable only when the server exposes WWW-Authenticate to the page).
func (r *record) insufficient() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.scope
}

// classify turns an error from go-sdk into one with a docs/JSAPI.md code, using
// what rec saw on the wire. Errors that already carry a code keep it.
func classify(err error, rec *record) error {
	var coder mcperr.Coder
	if errors.As(err, &coder) {
		return err
	}
	switch {
	case errors.Is(err, context.Canceled):
		return mcperr.Wrap(mcperr.Aborted, err, "mcp: aborted")
	case errors.Is(err, context.DeadlineExceeded):
		return mcperr.Wrap(mcperr.Timeout, err, "mcp: timed out")
	}
	var tokErr *tokenError
	if errors.As(err, &tokErr) {
		return &mcperr.Error{Code: mcperr.AuthRequired, Msg: "mcp: the page's accessToken() function failed", Err: tokErr.err}
	}
	// A sign-in that did not happen explains what failed after it (go-sdk
	// goes on to initialize when server/discover got a 401).
	if aerr := rec.authError(); aerr != nil && errors.As(aerr, &coder) {
		return aerr
	}
	if broken := rec.violated(); broken != nil {
		return broken
	}
	status, netErr := 0, error(nil)
	if rec != nil {
		status, _, netErr = rec.snapshot()
	}
	if rpcErr := serverRPCError(err); rpcErr != nil && status != http.StatusUnauthorized && status != http.StatusForbidden {
		// The server answered with a JSON-RPC error: that is the answer,
		// whether it came in a 200 response, an event, or a 4xx body
		// (a Streamable HTTP server may send it with 400).
		return &mcperr.Error{Code: mcperr.CodeOf(&mcperr.RPCError{Code: rpcErr.Code}, ""), Msg: "mcp: the server refused the request",
			Err: &mcperr.RPCError{Code: rpcErr.Code, Message: cleanText(rpcErr.Message)}}
	}
	if status != 0 {
		code := mcperr.HTTP
		switch {
		case status == http.StatusUnauthorized:
			code = mcperr.AuthRequired
		case status == http.StatusForbidden && rec.insufficient():
			code = mcperr.InsufficientScope
		}
		return &mcperr.Error{Code: code, Status: status, Msg: fmt.Sprintf("mcp: the server answered HTTP %d %s", status, http.StatusText(status)), Err: err}
	}
	if cut := (*mcperr.Cut)(nil); errors.As(netErr, &cut) {
		return &mcperr.Error{Code: mcperr.Network, Msg: "mcp: the connection ended before the server's answer was complete", Err: netErr}
	}
	if netErr != nil {
		return &mcperr.Error{Code: mcperr.Network, Msg: "mcp: the server could not be reached (network error, CORS refusal or server down)", Err: netErr}
	}
	if errors.Is(err, mcp.ErrConnectionClosed) {
		return mcperr.Wrap(mcperr.Closed, err, "mcp: the connection is closed")
	}
	return mcperr.Wrap(mcperr.Protocol, err, "mcp")
}

// serverRPCError returns the JSON-RPC error the server answered with, if
// err holds one; not go-sdk's own "rejected by transport" marker (a
// JSON-RPC error too), which wraps failures that never reached a server.
func serverRPCError(err error) *jsonrpc.Error {
	var rpcErr *jsonrpc.Error
	if !errors.As(err, &rpcErr) || rpcErr.Code == codeRejected && rpcErr.Message == "rejected by transport" {
		return nil
	}
	return rpcErr
}

// codeRejected is the code of go-sdk's internal jsonrpc2.ErrRejected.
const codeRejected = -32005

// cleanText keeps text from the network printable and bounded for a
// message.
func cleanText(s string) string {
	s = strings.Map(func(r rune) rune {
		switch {
		case r == '\n' || r == '\r' || r == '\t':
			return ' '
		case !unicode.IsPrint(r) || unicode.Is(unicode.Bidi_Control, r):
			return -1
		}
		return r
	}, s)
	if r := []rune(s); len(r) > 500 {
		s = string(r[:500]) + "…"
	}
	return s
}
