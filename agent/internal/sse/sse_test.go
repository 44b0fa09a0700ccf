package sse

import (
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/google/go-cmp/cmp"
)

type got struct {
	Name, ID, Data string
}

func collect(t *testing.T, r io.Reader, max int) ([]got, error) {
	t.Helper()
	var out []got
	for ev, err := range Scan(r, max) {
		if err != nil {
			return out, err
		}
		out = append(out, got{ev.Name, ev.ID, string(ev.Data)})
	}
	return out, nil
}

func TestScan(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    []got
		wantErr error
	}{
		{
			name: "openai chunks and done",
			in:   "data: {\"a\":1}\n\ndata: [DONE]\n\n",
			want: []got{{Data: `{"a":1}`}, {Data: "[DONE]"}},
		},
		{
			name: "anthropic named events",
			in:   "event: message_start\ndata: {\"type\":\"message_start\"}\n\nevent: ping\ndata: {\"type\": \"ping\"}\n\n",
			want: []got{{Name: "message_start", Data: `{"type":"message_start"}`}, {Name: "ping", Data: `{"type": "ping"}`}},
		},
		{
			name: "CRLF and CR line ends",
			in:   "data: a\r\n\r\ndata: b\r\rdata: c\r\n\n",
			want: []got{{Data: "a"}, {Data: "b"}, {Data: "c"}},
		},
		{
			name: "multi-line data, comments, id, retry, unknown field",
			in:   ": keep-alive\nid: 7\nretry: 10\nfoo: bar\ndata: one\ndata:two\ndata:  three\n\n",
			want: []got{{ID: "7", Data: "one\ntwo\n three"}},
		},
		{
			name: "field without colon and event without data",
			in:   "event: lonely\n\ndata\n\n",
			want: []got{{Data: ""}},
		},
		{
			name: "byte-order mark",
			in:   "\xEF\xBB\xBFdata: x\n\n",
			want: []got{{Data: "x"}},
		},
		{
			name:    "cut mid-event",
			in:      "data: {\"a\":1}\n\ndata: {\"b\":",
			want:    []got{{Data: `{"a":1}`}},
			wantErr: ErrTruncated,
		},
		{
			name:    "cut before the blank line",
			in:      "data: {\"a\":1}\n",
			wantErr: ErrTruncated,
		},
		{
			name: "trailing comment is not an event",
			in:   "data: x\n\n: bye\n",
			want: []got{{Data: "x"}},
		},
		{
			name: "empty stream",
			in:   "",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// One byte per read: every line and CRLF pair is split across reads.
			evs, err := collect(t, iotest.OneByteReader(strings.NewReader(tt.in)), 0)
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("err = %v; want %v", err, tt.wantErr)
			}
			if diff := cmp.Diff(tt.want, evs); diff != "" {
				t.Errorf("events (-want +got):\n%s", diff)
			}
		})
	}
}

func TestScanTooLarge(t *testing.T) {
	tests := map[string]string{
		"one long line": "data: " + strings.Repeat("x", 100) + "\n\n",
		"many lines":    strings.Repeat("data: xxxxxxxxxx\n", 20) + "\n",
	}
	for name, in := range tests {
		t.Run(name, func(t *testing.T) {
			_, err := collect(t, strings.NewReader(in), 64)
			if !errors.Is(err, ErrTooLarge) {
				t.Fatalf("err = %v; want ErrTooLarge", err)
			}
		})
	}
}

func TestScanReadError(t *testing.T) {
	boom := errors.New("boom")
	r := io.MultiReader(strings.NewReader("data: a\n\n"), iotest.ErrReader(boom))
	evs, err := collect(t, r, 0)
	if !errors.Is(err, boom) {
		t.Fatalf("err = %v; want boom", err)
	}
	if len(evs) != 1 {
		t.Errorf("got %d events before the error; want 1", len(evs))
	}
}

func TestScanStop(t *testing.T) {
	n := 0
	for range Scan(strings.NewReader("data: a\n\ndata: b\n\n"), 0) {
		n++
		break
	}
	if n != 1 {
		t.Errorf("n = %d; want 1", n)
	}
}
