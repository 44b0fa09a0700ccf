// Package sse reads server-sent events, the framing model APIs use to stream
// their answers (OpenAI Chat Completions `data: {...}` chunks, Anthropic
// Messages and OpenAI Responses `event: …` / `data: …` pairs, Gemini's
// `data: {...}` chunks).
//
// It follows the event stream interpretation of the HTML Living Standard
// (https://html.spec.whatwg.org/multipage/server-sent-events.html#event-stream-interpretation):
// lines end in CRLF, LF or CR; a leading byte-order mark is skipped; a line
// starting with a colon is a comment; one space after the field's colon is
// dropped; data lines join with LF; an event with no data is not dispatched.
// Unlike a browser's EventSource it reports a stream that ends in the middle
// of an event as [ErrTruncated] instead of dropping that event silently, so
// that a cut stream is never taken for a finished one.
//
// Every event is size-capped: input from the network never grows a buffer
// without bound.
package sse
