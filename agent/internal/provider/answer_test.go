package provider

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/mcpwasm/mcpwasm/agent/internal/sse"
	"github.com/mcpwasm/mcpwasm/mcperr"
)

// ReadEvents hands each event's JSON to handle in order and stops at the
// end handle reports; it says which event was not JSON, and that the
// request was aborted when ctx ended, even after the end.
func TestReadEvents(t *testing.T) {
	type ev struct{ N int }
	c := &Client{Name: "test"}
	stream := "event: a\ndata: {\"N\":1}\n\nevent: b\ndata: {\"N\":2}\n\nevent: c\ndata: {\"N\":3}\n\n"
	tests := []struct {
		name     string
		stream   string
		endAt    int // the N at which handle reports the end; 0 for none
		cancel   bool
		wantSeen string
		wantEnd  bool
		wantCode mcperr.Code
		wantIn   string
	}{
		{name: "to the end of the stream", stream: stream, wantSeen: "a1 b2 c3"},
		{name: "to the end handle reports", stream: stream, endAt: 2, wantSeen: "a1 b2", wantEnd: true},
		{name: "a named event not JSON", stream: "event: a\ndata: {\"N\":1}\n\nevent: b\ndata: {\n\n", wantSeen: "a1", wantCode: mcperr.Protocol, wantIn: `test: a "b" event is not valid JSON`},
		{name: "a chunk not JSON", stream: "data: nope\n\n", wantCode: mcperr.Protocol, wantIn: "test: a stream chunk is not valid JSON"},
		{name: "aborted after the end", stream: stream, endAt: 1, cancel: true, wantSeen: "a1", wantCode: mcperr.Aborted, wantIn: "test: the request was aborted"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			var seen []string
			end, err := ReadEvents(ctx, c, sse.Scan(strings.NewReader(tt.stream), 1<<10), func(name string, e *ev) (bool, error) {
				seen = append(seen, name+string(rune('0'+e.N)))
				if e.N == tt.endAt && tt.cancel {
					cancel()
				}
				return e.N == tt.endAt, nil
			})
			if got := strings.Join(seen, " "); got != tt.wantSeen {
				t.Errorf("handled %q; want %q", got, tt.wantSeen)
			}
			if end != tt.wantEnd {
				t.Errorf("end = %v; want %v", end, tt.wantEnd)
			}
			if tt.wantCode == "" {
				if err != nil {
					t.Errorf("err = %v; want none", err)
				}
				return
			}
			if code := mcperr.CodeOf(err, ""); code != tt.wantCode || !strings.Contains(err.Error(), tt.wantIn) {
				t.Errorf("err = %v (code %q); want %q saying %q", err, code, tt.wantCode, tt.wantIn)
			}
		})
	}
	handlerErr := errors.New("bad event")
	_, err := ReadEvents(context.Background(), c, sse.Scan(strings.NewReader(stream), 1<<10), func(string, *ev) (bool, error) { return false, handlerErr })
	if !errors.Is(err, handlerErr) {
		t.Errorf("handle's error came back as %v", err)
	}
}
