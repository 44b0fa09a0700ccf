package mcpclient

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"reflect"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	segjson "github.com/segmentio/encoding/json"

	"github.com/mcpwasm/mcpwasm/mcperr"
)

// MaxResponseBytes bounds one JSON response and one server-sent event (the
// same bound go-sdk puts on an event); a larger answer fails the request
// with a "protocol" error instead of filling the page's memory.
const MaxResponseBytes = 16 << 20

// outgoing is what a POST carries: the JSON-RPC method and, for a call, its
// id (nil for a notification or a response).
type outgoing struct {
	method string
	id     json.RawMessage
}

// peek reads the JSON-RPC message a POST carries (its body is read again
// through GetBody); the zero outgoing for anything else.
func peek(req *http.Request) outgoing {
	if req.Method != http.MethodPost || req.GetBody == nil {
		return outgoing{}
	}
	body, err := req.GetBody()
	if err != nil {
		return outgoing{}
	}
	defer body.Close()
	var msg struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	if json.NewDecoder(io.LimitReader(body, MaxResponseBytes)).Decode(&msg) != nil || msg.Method == "" {
		return outgoing{}
	}
	if len(msg.ID) == 0 || string(msg.ID) == "null" {
		return outgoing{method: msg.Method}
	}
	return outgoing{method: msg.Method, id: msg.ID}
}

// notification reports whether the POST carries a notification.
func (o outgoing) notification() bool { return o.method != "" && o.id == nil }

func mediaType(resp *http.Response) string {
	mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	return mt
}

// wireMessage is what every JSON-RPC message from the server must look like.
type wireMessage struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Method  string          `json:"method"`
	Params  json.RawMessage `json:"params"`
	Result  json.RawMessage `json:"result"`
}

// violation is a server answer that breaks the protocol in a way go-sdk
// would not notice (a response to another request leaves the call waiting
// forever) or would take as fatal for the whole session (a message that is
// not JSON-RPC). It fails the one request it answers, with a clear message.
func violation(format string, args ...any) error {
	return &mcperr.Error{Code: mcperr.Protocol, Msg: "mcp: " + fmt.Sprintf(format, args...)}
}

// checkMessage validates one JSON-RPC message from the server. call, when
// set, is the id of the request the message answers (on its POST): a
// response must carry it.
func checkMessage(data []byte, call json.RawMessage) (*wireMessage, error) {
	data = bytes.TrimSpace(data)
	if len(data) > 0 && data[0] == '[' {
		return nil, violation("the server sent a JSON array (a JSON-RPC batch), which MCP does not allow since 2025-06-18")
	}
	var m wireMessage
	if err := decodeAsGoSDK(data, &m); err != nil {
		return nil, violation("the server sent a message that is not a JSON object")
	}
	if m.JSONRPC != "2.0" {
		return nil, violation(`the server sent a message without "jsonrpc": "2.0"`)
	}
	if m.Method == "" && call != nil && !sameID(m.ID, call) {
		return nil, violation("the server answered request %s with a response for request %s; nothing else can answer it, so it failed", clip(call), clip(m.ID))
	}
	return &m, nil
}

// decodeAsGoSDK decodes data with the decoder go-sdk reads messages
// with (segmentio's, field names matched exactly), so a message is taken
// here as go-sdk would take it; it also reads a large message several
// times faster than encoding/json, which matters in WebAssembly. Bytes
// after the message are refused.
func decodeAsGoSDK(data []byte, v any) error {
	rest, err := segjson.Parse(data, v, segjson.DontMatchCaseInsensitiveStructFields)
	if err == nil && len(rest) > 0 {
		err = fmt.Errorf("json: data after the message")
	}
	return err
}

// sameID compares JSON-RPC ids by value (1 and 1.0 are the same id; 1 and
// "1" are not).
func sameID(a, b json.RawMessage) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	return reflect.DeepEqual(x, y)
}

// clip shortens an id from the network for a message.
func clip(id json.RawMessage) string {
	if len(id) == 0 {
		return "(none)"
	}
	if len(id) > 40 {
		return string(id[:40]) + "…"
	}
	return string(id)
}

// checkJSONResponse reads the JSON body answering call (bounded), checks
// it and puts it back for go-sdk.
func checkJSONResponse(resp *http.Response, call json.RawMessage, hello *handshake, hear listener) error {
	body, err := io.ReadAll(io.LimitReader(resp.Body, MaxResponseBytes+1))
	resp.Body.Close()
	if err != nil {
		return err
	}
	if len(body) > MaxResponseBytes {
		return violation("the server's response is larger than %d MiB", MaxResponseBytes>>20)
	}
	m, err := checkMessage(body, call)
	if err != nil {
		return err
	}
	hello.saw(m)
	if hear != nil {
		if instead := hear(m); instead != nil {
			body = instead
		}
	}
	resp.Body = io.NopCloser(bytes.NewReader(body))
	return nil
}

// cappedBody fails a read past MaxResponseBytes.
func cappedBody(rc io.ReadCloser) io.ReadCloser {
	return &capped{rc: rc, left: MaxResponseBytes}
}

type capped struct {
	rc   io.ReadCloser
	left int
}

var errTooLarge = violation("the server's response is larger than %d MiB", MaxResponseBytes>>20)

func (c *capped) Read(p []byte) (int, error) {
	if c.left <= 0 {
		return 0, errTooLarge
	}
	if len(p) > c.left {
		p = p[:c.left]
	}
	n, err := c.rc.Read(p)
	c.left -= n
	return n, err
}

func (c *capped) Close() error { return c.rc.Close() }

// listener hears a checked message from the server before go-sdk reads
// it; a non-nil return is the message go-sdk reads instead.
type listener func(m *wireMessage) (instead []byte)

// withData is the event ev with its data replaced by msg: its other
// fields (the event id a resumption needs) stay as they were.
func withData(ev, msg []byte) []byte {
	var out []byte
	for _, line := range bytes.SplitAfter(ev, []byte("\n")) {
		l := bytes.TrimRight(line, "\r\n")
		if len(l) == 0 || bytes.HasPrefix(l, []byte("data")) && (len(l) == 4 || l[4] == ':') {
			continue
		}
		out = append(out, line...)
		if line[len(line)-1] != '\n' {
			out = append(out, '\n')
		}
	}
	out = append(out, "data: "...)
	out = append(out, msg...)
	return append(out, "\n\n"...)
}

// sseTap filters an event-stream body between the network and go-sdk, one
// whole event at a time: every event is checked ([checkMessage]) before
// any of its bytes reach go-sdk, and progress notifications are delivered
// to their callers as their event completes, so every notification sent
// before a response reaches the caller before the response does. An event
// that breaks the protocol ends the stream with that error (and is recorded
// for the operation), instead of reaching go-sdk, which would hang on it or
// end the whole session.
type sseTap struct {
	rc    io.ReadCloser
	taps  *progressTaps
	hello *handshake
	call  json.RawMessage // the call this stream answers; nil for GET streams
	rec   *record
	hear  listener    // hears each checked message, if set
	stop  func() bool // ends the watch of the request's context

	buf  []byte // read buffer
	in   []byte // bytes read, not yet split into lines
	seen int    // how much of in is known to hold no newline
	ev   []byte // raw bytes of the current event
	data []byte // its data, lines joined by \n
	name string // its event: field
	out  []byte // checked bytes for go-sdk
	err  error  // sticky: the stream's end
}

func (s *sseTap) Read(p []byte) (int, error) {
	for len(s.out) == 0 {
		if s.err != nil {
			return 0, s.err
		}
		if s.buf == nil {
			s.buf = make([]byte, 32<<10)
		}
		n, err := s.rc.Read(s.buf)
		s.feed(s.buf[:n])
		if err != nil && s.err == nil && err != io.EOF {
			// The connection ended in the middle of the answer: what
			// came of its last event is a fragment, not the server's
			// word, and the page hears of a cut rather than of a
			// protocol error.
			s.in, s.ev, s.seen = nil, nil, 0
			s.rec.transportError(&mcperr.Cut{Err: err})
		}
		if err != nil && s.err == nil {
			if len(s.ev) > 0 || len(s.in) > 0 {
				// A last event without its blank line: go-sdk's
				// scanner still takes it, so check it too.
				s.ev = append(s.ev, s.in...)
				s.line(s.in)
				s.in, s.seen = nil, 0
				s.endEvent()
			}
			if s.err == nil {
				s.err = err
			}
		}
	}
	n := copy(p, s.out)
	s.out = s.out[n:]
	return n, nil
}

func (s *sseTap) Close() error {
	if s.stop != nil {
		s.stop()
	}
	return s.rc.Close()
}

func (s *sseTap) fail(err error) {
	if s.err == nil {
		s.err = err
		s.rec.violation(err)
	}
}

func (s *sseTap) feed(b []byte) {
	s.in = append(s.in, b...)
	for s.err == nil {
		// Only the new bytes are searched: a line of megabytes comes in
		// many reads, and searching it from its start each time costs
		// seconds.
		i := bytes.IndexByte(s.in[s.seen:], '\n')
		if i < 0 {
			s.seen = len(s.in)
			break
		}
		i += s.seen
		s.seen = 0
		line := s.in[:i]
		s.ev = append(s.ev, s.in[:i+1]...)
		s.in = s.in[i+1:]
		if len(bytes.TrimSuffix(line, []byte("\r"))) == 0 {
			s.endEvent()
		} else {
			s.line(line)
		}
	}
	if len(s.in) > MaxResponseBytes || len(s.ev) > MaxResponseBytes {
		s.fail(violation("the server sent an event larger than %d MiB", MaxResponseBytes>>20))
	}
	if len(s.in) == 0 {
		s.in = s.in[:0:0] // let a large consumed buffer go
	}
}

func (s *sseTap) line(line []byte) {
	line = bytes.TrimSuffix(line, []byte("\r"))
	field, value, _ := bytes.Cut(line, []byte(":"))
	value = bytes.TrimPrefix(value, []byte(" "))
	switch string(field) {
	case "data":
		if len(s.data) > 0 {
			s.data = append(s.data, '\n')
		}
		s.data = append(s.data, value...)
	case "event":
		s.name = string(value)
	}
}

func (s *sseTap) endEvent() {
	ev, data, name := s.ev, s.data, s.name
	s.ev, s.data, s.name = nil, s.data[:0], ""
	if len(data) > 0 && (name == "" || name == "message") {
		m, err := checkMessage(data, s.call)
		if err != nil {
			s.fail(err)
			return
		}
		if m.Method == "notifications/progress" {
			s.progress(m.Params)
		}
		s.hello.saw(m)
		if s.hear != nil {
			if instead := s.hear(m); instead != nil {
				ev = withData(ev, instead)
			}
		}
	}
	s.out = append(s.out, ev...)
}

func (s *sseTap) progress(raw json.RawMessage) {
	var tok struct {
		ProgressToken json.RawMessage `json:"progressToken"`
	}
	if json.Unmarshal(raw, &tok) != nil {
		return
	}
	fn := s.taps.lookup(tok.ProgressToken)
	if fn == nil {
		return
	}
	var params mcp.ProgressNotificationParams
	if json.Unmarshal(raw, &params) != nil {
		return
	}
	fn(&params)
}
