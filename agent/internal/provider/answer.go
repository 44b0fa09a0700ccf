package provider

import (
	"context"
	"encoding/json"
	"iter"
	"net/http"

	"github.com/mcpwasm/mcpwasm/agent"
	"github.com/mcpwasm/mcpwasm/agent/internal/sse"
)

// Reader reads a model's answer from a 2xx response into a message,
// passing on what streams to st.
type Reader func(ctx context.Context, resp *http.Response, st agent.Stream) (agent.Message, error)

// Answer exchanges body for an answer ([Client.Exchange]) and reads it
// with readJSON or readStream, by what the server sent; st is filled
// first, so that the readers call its functions without checking them.
func (c *Client) Answer(ctx context.Context, endpoint string, page map[string]string, own http.Header, body []byte, st agent.Stream, readJSON, readStream Reader) (agent.Message, error) {
	resp, kind, err := c.Exchange(ctx, endpoint, page, own, body)
	if err != nil {
		return agent.Message{}, err
	}
	defer resp.Body.Close()
	st = st.Filled()
	if kind == "json" {
		return readJSON(ctx, resp, st)
	}
	return readStream(ctx, resp, st)
}

// ReadEvents decodes the JSON data of each event of a stream (the
// adapter's [sse.Scan] of the answer's body, with its bound on an event)
// into a new E and gives it, with the event's name, to handle, until handle reports the stream's end (end) or an
// error, or the stream ends. A stream that breaks off is StreamError's
// error, one whose ctx ended (even after its end) NetError's; whether the
// stream ended too soon is the caller's to say.
func ReadEvents[E any](ctx context.Context, c *Client, events iter.Seq2[sse.Event, error], handle func(name string, e *E) (end bool, err error)) (end bool, err error) {
	for ev, err := range events {
		if err != nil {
			return false, c.StreamError(ctx, err)
		}
		var e E
		if err := json.Unmarshal(ev.Data, &e); err != nil {
			if ev.Name == "" {
				return false, c.Protocol("a stream chunk is not valid JSON: %v", err)
			}
			return false, c.Protocol("a %q event is not valid JSON: %v", ev.Name, err)
		}
		if end, err = handle(ev.Name, &e); err != nil {
			return false, err
		}
		if end {
			break
		}
	}
	if err := ctx.Err(); err != nil {
		return false, c.NetError(ctx, err, "")
	}
	return end, nil
}
