package mcperr

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// RPCError is a JSON-RPC error a server answered with: its code and
// message reach the page (MCPError.rpcCode, and the message), whatever
// the transport carried it.
type RPCError struct {
	Code    int64
	Message string // the server's text, as sent (control characters removed)
}

func (e *RPCError) Error() string {
	return fmt.Sprintf("JSON-RPC error %d: %s", e.Code, e.Message)
}

// MCPErrorCode implements [Coder]: invalid params (-32602) is
// invalid_argument (the call's arguments were wrong); every other JSON-RPC
// error is protocol.
func (e *RPCError) MCPErrorCode() Code {
	if e.Code == -32602 {
		return InvalidArgument
	}
	return Protocol
}

// atServer names the server an error came from, for [Present].
type atServer struct {
	err    error
	server string
}

func (e *atServer) Error() string { return e.err.Error() }
func (e *atServer) Unwrap() error { return e.err }

// AtServer records that err came from the server named server (its host,
// "mcp.example.com"), so that [Present] can name it. A nil err stays nil.
func AtServer(err error, server string) error {
	if err == nil {
		return nil
	}
	var a *atServer
	if errors.As(err, &a) {
		return err
	}
	return &atServer{err: err, server: server}
}

// Messages are the one-sentence messages of the codes, as a person reads
// them ({server} names the server, "the server at mcp.example.com";
// {Server} the same at the start of a sentence; {status} the HTTP status;
// {url} the redirect URI of an [UnhandledRedirect]: see [Message]). Codes absent here
// (invalid_argument, closed, policy) keep the error's own message, which already
// says what to fix. docs/JSAPI.md quotes this table; a test keeps the two
// equal.
var Messages = map[Code]string{
	AuthRequired:       "Sign-in required for {server}. Call authorize() from a click.",
	Declined:           "The sign-in to {server} was declined: its window was closed, or the user or the authorization server said no. Call authorize() from a click to ask again.",
	PopupBlocked:       "The browser blocked the sign-in window for {server}. Call authorize() from a click or a key press.",
	RedirectUnhandled:  "The sign-in to {server} came back to {url}, but no page there finished it. Import mcpwasm/callback on that page, or pass a redirectUri whose page does.",
	StateMismatch:      "A sign-in result for {server} did not match a sign-in in progress. Start the sign-in again.",
	DiscoveryFailed:    "{Server} did not publish usable sign-in metadata. Check the server URL; the detail says what is wrong.",
	RegistrationFailed: "This app could not register as a client for {server}. Configure a clientId or clientMetadataUrl (for a server without OAuth metadata, also its authorization and token endpoints); the detail says what its authorization server supports.",
	TokenFailed:        "The authorization server of {server} refused or garbled the sign-in. Try signing in again; the detail says what happened.",
	InsufficientScope:  "{Server} needs more permissions than the sign-in granted. Call authorize() from a click to grant them.",
	Aborted:            "The request to {server} was aborted.",
	Timeout:            "{Server} did not answer in time. Try again, or allow more time.",
	Network:            "{Server} could not be reached (offline, down, or not allowing this page by CORS). Check the URL and that the server allows this origin; one that does not can be reached through a relay (the client option relay).",
	HTTP:               "{Server} answered HTTP {status}. The detail has its answer.",
	Protocol:           "{Server} sent an answer this client cannot use. The detail says what was wrong.",
	Storage:            "The browser could not store or use the sign-in for {server} (IndexedDB or WebCrypto failed), so the request stopped. The detail says why and what to do.",
}

// Present gives err as a person reads it: message is one sentence that
// names the server and says what to do next; detail is the whole chain,
// for developers (and the console). A JSON-RPC error from the server
// shows the server's own message.
func Present(err error) (message, detail string) {
	if err == nil {
		return "", ""
	}
	detail = err.Error()
	server := ""
	var a *atServer
	if errors.As(err, &a) {
		server = a.server
	}
	var rpc *RPCError
	if errors.As(err, &rpc) {
		return sentence(fmt.Sprintf("%s refused the request: %s", phrase(server, true), rpc.Message)), detail
	}
	code := CodeOf(err, "")
	if m, ok := typedMessage(err, code, server); ok {
		return m, detail
	}
	tmpl, ok := Messages[code]
	unnamed := server == "" && strings.Contains(strings.ToLower(tmpl), "{server}") && code != Aborted && code != Timeout && code != RedirectUnhandled
	if !ok || unnamed {
		// No table entry, or an error that names no server (bad input, a
		// panic, a failed load): its own text says more.
		return sentence(own(err)), detail
	}
	url := "its redirect URI"
	var unhandled *UnhandledRedirect
	if errors.As(err, &unhandled) && unhandled.URL != "" {
		url = unhandled.URL
	}
	return render(tmpl, server, StatusOf(err), url, 0), detail
}

// typedMessage is the message of the errors whose type says more than
// their code does (a sign-in not finished in time, a busy server, a cut
// connection, a feature the server does not offer); ok is false for
// others.
func typedMessage(err error, code Code, server string) (msg string, ok bool) {
	var unfinished *SignInUnfinished
	var busy *Busy
	var cut *Cut
	var unoffered *Unoffered
	switch {
	case code == Timeout && errors.As(err, &unfinished):
		return render(UnfinishedMessage, server, 0, "", unfinished.Within), true
	case code == HTTP && errors.As(err, &busy):
		return busy.message(server), true
	case code == Network && errors.As(err, &cut):
		return render(CutMessage, server, 0, "", 0), true
	case code == Protocol && errors.As(err, &unoffered):
		next := unoffered.Next
		if next != "" {
			next = strings.ToUpper(next[:1]) + next[1:]
		}
		return sentence(strings.NewReplacer("{Server}", phrase(server, true), "{feature}", unoffered.Feature, "{Next}", next).Replace(UnofferedMessage)), true
	}
	return "", false
}

// UnfinishedMessage is the message of a [SignInUnfinished] sign-in (code
// timeout): {within} is how long it waited ("5 minutes").
const UnfinishedMessage = "The sign-in to {server} was not finished within {within}. Call authorize() from a click to try again, or allow more time with authTimeoutMs."

// Message renders the message of code for the server at host ("" when
// unknown) and status; "" for a code that keeps the error's own message.
// A message that names a URL ({url}) says "its redirect URI" here; [Present]
// names the URL of the error.
func Message(code Code, host string, status int) string {
	tmpl, ok := Messages[code]
	if !ok {
		return ""
	}
	return render(tmpl, host, status, "its redirect URI", 0)
}

func render(tmpl, host string, status int, url string, within time.Duration) string {
	return strings.NewReplacer("{server}", phrase(host, false), "{Server}", phrase(host, true), "{status}", fmt.Sprint(status),
		"{url}", url, "{within}", duration(within)).Replace(tmpl)
}

// duration says d as a person would: "5 minutes", "1 minute", "90
// seconds", "1.5 seconds".
func duration(d time.Duration) string {
	if d >= time.Minute && d%time.Minute == 0 {
		if d == time.Minute {
			return "1 minute"
		}
		return fmt.Sprintf("%d minutes", d/time.Minute)
	}
	if d == time.Second {
		return "1 second"
	}
	return strconv.FormatFloat(d.Seconds(), 'f', -1, 64) + " seconds"
}

// phrase names the server at host in a sentence.
func phrase(host string, first bool) string {
	p := "the server"
	if host != "" {
		p += " at " + host
	}
	if first {
		p = "T" + p[1:]
	}
	return p
}

// Sentences is how [Present] makes a sentence of an error's own message:
// the package prefixes it takes off, the characters that make a first
// word an identifier (client(), not capitalised) and those a sentence may
// end with (else it gets a full stop). The page presents its own checks'
// messages the same way, from this (web/jsapi.js carries it).
var Sentences = struct {
	Prefixes   []string `json:"prefixes"`
	Identifier string   `json:"identifier"`
	Ends       string   `json:"ends"`
}{
	Prefixes:   []string{"mcp: ", "oauth: ", "catalog: ", "agent: ", "policy: "},
	Identifier: "()._",
	Ends:       ".?!",
}

// own is the message of the first of our own errors in err's chain, with
// its package prefix ("mcp: ", "oauth: ") taken off.
func own(err error) string {
	var e *Error
	msg := err.Error()
	if errors.As(err, &e) && e.Msg != "" {
		msg = e.Msg
	}
	for _, p := range Sentences.Prefixes {
		msg = strings.TrimPrefix(msg, p)
	}
	return msg
}

// sentence capitalises s and ends it with a full stop.
func sentence(s string) string {
	s = strings.TrimSpace(s)
	if s == "" {
		return s
	}
	if first, _, _ := strings.Cut(s, " "); !strings.ContainsAny(first, Sentences.Identifier) {
		s = strings.ToUpper(s[:1]) + s[1:] // not an identifier such as client()
	}
	if !strings.ContainsAny(s[len(s)-1:], Sentences.Ends) {
		s += "."
	}
	return s
}

// RPCCodeOf returns the JSON-RPC code of a server's error in err's chain,
// and whether there is one.
func RPCCodeOf(err error) (int64, bool) {
	var rpc *RPCError
	if errors.As(err, &rpc) {
		return rpc.Code, true
	}
	return 0, false
}
