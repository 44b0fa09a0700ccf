package sse

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"iter"
)

// Event is one dispatched server-sent event.
type Event struct {
	Name string // the "event" field; "" means the default type, "message"
	ID   string // the "id" field
	Data []byte // the "data" lines joined with "\n"; valid until the next event
}

// ErrTruncated reports a stream that ended inside an event: the final blank
// line never came, so the event's data may be incomplete.
var ErrTruncated = errors.New("sse: the stream ended in the middle of an event")

// ErrTooLarge reports an event larger than the reader's limit.
var ErrTooLarge = errors.New("sse: event too large")

// DefaultMaxEventSize bounds one event (its lines and data) when
// [Scan] is given a non-positive limit.
const DefaultMaxEventSize = 1 << 20

var bom = []byte("\xEF\xBB\xBF")

// Scan iterates over the events of r. Each event, with its field lines,
// may take at most maxEventSize bytes (DefaultMaxEventSize when
// maxEventSize <= 0). The iteration ends at a clean end of stream; an error
// (a read error, [ErrTruncated], [ErrTooLarge]) is yielded once and ends it.
func Scan(r io.Reader, maxEventSize int) iter.Seq2[Event, error] {
	if maxEventSize <= 0 {
		maxEventSize = DefaultMaxEventSize
	}
	return func(yield func(Event, error) bool) {
		sc := bufio.NewScanner(r)
		sc.Buffer(make([]byte, 0, 4096), maxEventSize)
		sc.Split(splitLines)

		var (
			name, id string
			data     bytes.Buffer
			pending  bool // a field line was read since the last dispatch
			size     int  // bytes of the current event so far
			first    = true
		)
		for sc.Scan() {
			line := sc.Bytes()
			if first {
				line = bytes.TrimPrefix(line, bom)
				first = false
			}
			size += len(line) + 1
			if size > maxEventSize {
				yield(Event{}, fmt.Errorf("%w (more than %d bytes)", ErrTooLarge, maxEventSize))
				return
			}
			if len(line) == 0 {
				// Dispatch.
				if data.Len() > 0 {
					d := data.Bytes()
					d = d[:len(d)-1] // the LF after the last data line
					if !yield(Event{Name: name, ID: id, Data: d}, nil) {
						return
					}
				}
				name, pending, size = "", false, 0
				data.Reset()
				continue
			}
			if line[0] == ':' {
				continue // comment
			}
			pending = true
			field, value, _ := bytes.Cut(line, []byte{':'})
			value = bytes.TrimPrefix(value, []byte{' '})
			switch string(field) {
			case "event":
				name = string(value)
			case "data":
				data.Write(value)
				data.WriteByte('\n')
			case "id":
				if bytes.IndexByte(value, 0) < 0 {
					id = string(value)
				}
			}
			// "retry" and unknown fields are ignored.
		}
		if err := sc.Err(); err != nil {
			if errors.Is(err, bufio.ErrTooLong) {
				err = fmt.Errorf("%w (a line longer than %d bytes)", ErrTooLarge, maxEventSize)
			}
			yield(Event{}, err)
			return
		}
		if pending {
			yield(Event{}, ErrTruncated)
		}
	}
}

// splitLines is a bufio.SplitFunc for SSE lines, which end in "\r\n", "\n"
// or "\r". A final line without an end is returned too (it marks a
// truncated event).
func splitLines(data []byte, atEOF bool) (int, []byte, error) {
	if atEOF && len(data) == 0 {
		return 0, nil, nil
	}
	if i := bytes.IndexAny(data, "\r\n"); i >= 0 {
		if data[i] == '\n' {
			return i + 1, data[:i], nil
		}
		// A CR: a CRLF pair when an LF follows.
		if i+1 < len(data) {
			if data[i+1] == '\n' {
				return i + 2, data[:i], nil
			}
			return i + 1, data[:i], nil
		}
		if !atEOF {
			return 0, nil, nil // wait: the LF may be in the next read
		}
		return i + 1, data[:i], nil
	}
	if atEOF {
		return len(data), data, nil
	}
	return 0, nil, nil
}
