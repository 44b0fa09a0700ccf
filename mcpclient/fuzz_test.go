package mcpclient

import (
	"bytes"
	"encoding/json"
	"io"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpwasm/mcpwasm/mcperr"
)

// FuzzSSETap: whatever an event stream holds, the tap never panics, hands
// go-sdk a prefix of the stream made of whole checked events, and ends a
// stream it refuses with a "protocol" error.
func FuzzSSETap(f *testing.F) {
	f.Add("data: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n\n", "1")
	f.Add("id: 4\nretry: 5\n\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progressToken\":\"t\",\"progress\":1}}\r\n\r\n", "1")
	f.Add("data: [1]\n\n", "\"x\"")
	f.Add("event: endpoint\ndata: /x\n\ndata: {\"id\":2}\n", "2")
	f.Fuzz(func(t *testing.T, stream, id string) {
		var call json.RawMessage
		if json.Valid([]byte(id)) {
			call = json.RawMessage(id)
		}
		taps := &progressTaps{}
		defer taps.add("t", func(*mcp.ProgressNotificationParams) {})()
		tap := &sseTap{rc: nopCloser{strings.NewReader(stream)}, taps: taps, call: call}
		out, err := io.ReadAll(iotest.HalfReader(tap))
		if !bytes.HasPrefix([]byte(stream), out) {
			t.Fatalf("output %q is not a prefix of the stream %q", out, stream)
		}
		if err != nil && mcperr.CodeOf(err, "") != mcperr.Protocol {
			t.Fatalf("error %v is not coded protocol", err)
		}
	})
}

// FuzzCheckMessage: a message is accepted only when it is a JSON-RPC 2.0
// object, and a response only with the id it answers.
func FuzzCheckMessage(f *testing.F) {
	f.Add(`{"jsonrpc":"2.0","id":1,"result":{}}`, "1")
	f.Add(`{"jsonrpc":"2.0","id":"1","result":{}}`, "1")
	f.Add(`[{"jsonrpc":"2.0","id":1}]`, "1")
	f.Fuzz(func(t *testing.T, data, id string) {
		if !json.Valid([]byte(id)) {
			return
		}
		m, err := checkMessage([]byte(data), json.RawMessage(id))
		if err != nil {
			return
		}
		if m.JSONRPC != "2.0" {
			t.Fatalf("accepted %q", data)
		}
		if m.Method == "" && !sameID(m.ID, json.RawMessage(id)) {
			t.Fatalf("accepted response %q for id %s", data, id)
		}
	})
}
