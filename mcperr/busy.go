package mcperr

import (
	"fmt"
	"math"
	"strings"
	"time"
)

// Busy is the cause of a request a server answered 429 (Too Many
// Requests) or 503 (Service Unavailable) more often, or for longer, than
// the client waits: its code is [HTTP], its status the last answer's, and
// [Present] says when to try again (RFC 9110 §10.2.3, Retry-After).
type Busy struct {
	Host   string        // the busy server's host; "" names the operation's server
	Status int           // 429 or 503
	After  time.Duration // what the last Retry-After asked for; 0: it said nothing
}

func (e *Busy) Error() string {
	s := fmt.Sprintf("the server answered HTTP %d", e.Status)
	if e.Host != "" {
		s = fmt.Sprintf("%s answered HTTP %d", e.Host, e.Status)
	}
	if e.After > 0 {
		return fmt.Sprintf("%s and asked to wait %s (Retry-After)", s, e.After.Round(time.Second))
	}
	return s + " without Retry-After"
}

// MCPErrorCode implements [Coder].
func (e *Busy) MCPErrorCode() Code { return HTTP }

// HTTPStatus implements [StatusCoder].
func (e *Busy) HTTPStatus() int { return e.Status }

// BusyMessage is the message of a [Busy] error: {Server} names the
// server, {status} the HTTP status, {retry} says when ("in 40 s",
// "later").
const BusyMessage = "{Server} is busy (HTTP {status}); try again {retry}."

// message renders BusyMessage for e, naming server when e names none.
func (e *Busy) message(server string) string {
	if e.Host != "" {
		server = e.Host
	}
	return render(strings.Replace(BusyMessage, "{retry}", e.When(), 1), server, e.Status, "", 0)
}

// When says when to try again: "in 40 s" (the Retry-After, rounded up),
// or "later" when the server did not say.
func (e *Busy) When() string {
	if e.After > 0 {
		return fmt.Sprintf("in %d s", int64(math.Ceil(e.After.Seconds())))
	}
	return "later"
}
