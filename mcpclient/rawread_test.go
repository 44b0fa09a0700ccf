package mcpclient

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpwasm/mcpwasm/mcperr"
)

// TestReadResourceJSONIsTheServersAnswer: a page's read gets the server's
// result as the server sent it (a large text, a blob, its caching hint),
// over an event stream and over JSON answers, and the client's session
// goes on; go-sdk's own read of the same resource is unchanged.
func TestReadResourceJSONIsTheServersAnswer(t *testing.T) {
	t.Parallel() // it waits on clocks and servers of its own
	big := strings.Repeat(`<p class="x">a & b</p>`+"\n", 100_000)
	s := mcp.NewServer(&mcp.Implementation{Name: "res", Version: "1"}, nil)
	s.AddResource(&mcp.Resource{URI: "ui://big", Name: "big", MIMEType: "text/html"},
		func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: "ui://big", MIMEType: "text/html", Text: big}}}, nil
		})
	s.AddResource(&mcp.Resource{URI: "file:///b.bin", Name: "b"},
		func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Cacheable: mcp.Cacheable{TTLMs: 5000}, Contents: []*mcp.ResourceContents{{URI: "file:///b.bin", Blob: []byte{0, 1, 2, 250}}}}, nil
		})
	for _, jsonResponse := range []bool{false, true} {
		t.Run(fmt.Sprintf("jsonResponse=%v", jsonResponse), func(t *testing.T) {
			srv := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, &mcp.StreamableHTTPOptions{JSONResponse: jsonResponse}))
			t.Cleanup(srv.Close)
			c := connected(t, srv.URL)
			raw, err := c.ReadResourceJSON(ctxT(t), "ui://big")
			if err != nil {
				t.Fatal(err)
			}
			var r struct {
				Contents []struct{ URI, MIMEType, Text string }
			}
			if err := json.Unmarshal(raw, &r); err != nil || len(r.Contents) != 1 || r.Contents[0].Text != big || r.Contents[0].URI != "ui://big" {
				t.Fatalf("the page's read: %.200s (%v); want the server's text of %d bytes", raw, err, len(big))
			}
			raw, err = c.ReadResourceJSON(ctxT(t), "file:///b.bin")
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(raw), `"blob":"AAEC+g=="`) || !strings.Contains(string(raw), `"ttlMs":5000`) {
				t.Errorf("the page's read of a blob: %s; want its base64 and the server's ttlMs", raw)
			}
			// go-sdk's read on the same session is whole.
			got, err := c.ReadResource(ctxT(t), "ui://big")
			if err != nil || len(got.Contents) != 1 || got.Contents[0].Text != big {
				t.Fatalf("go-sdk's read after the page's: %v", err)
			}
			if _, err := c.ReadResourceJSON(ctxT(t), "ui://none"); err == nil {
				t.Error("reading a resource the server does not have succeeded")
			}
		})
	}
}

// TestReadResourceJSONKeepsTheServersBytes: what the page gets is the
// server's JSON itself, not go-sdk's result encoded again (which would
// drop a member go-sdk does not know and escape "<").
func TestReadResourceJSONKeepsTheServersBytes(t *testing.T) {
	const result = `{"contents":[{"uri":"x","text":"<b>"}],"x-extra":true}`
	c := connected(t, fixedReadServer(t, result))
	raw, err := c.ReadResourceJSON(ctxT(t), "x")
	if err != nil || string(raw) != result {
		t.Fatalf("the page's read: %s, %v; want the server's %s", raw, err, result)
	}
}

// fixedReadServer answers initialize, and resources/read with result.
func fixedReadServer(t *testing.T, result string) string {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		_ = json.NewDecoder(r.Body).Decode(&req)
		w.Header().Set("Content-Type", "application/json")
		switch req.Method {
		case "initialize":
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"2025-06-18","capabilities":{"resources":{}},"serverInfo":{"name":"fixed","version":"1"}}}`, req.ID)
		case "resources/read":
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":%s}`, req.ID, result)
		default:
			w.WriteHeader(http.StatusAccepted)
		}
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// TestReadResourceJSONRefusesWhatGoSDKWould: an answer whose shape go-sdk
// would refuse is given to go-sdk as it came, so the page gets go-sdk's
// error rather than the malformed result.
func TestReadResourceJSONRefusesWhatGoSDKWould(t *testing.T) {
	for _, tc := range []struct{ name, result string }{
		{"text not a string", `{"contents":[{"uri":"x","text":7}]}`},
		{"blob not base64", `{"contents":[{"uri":"x","blob":"%%%"}]}`},
		{"contents not a list", `{"contents":{"uri":"x"}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := connected(t, fixedReadServer(t, tc.result))
			raw, err := c.ReadResourceJSON(ctxT(t), "x")
			if err == nil {
				t.Fatalf("read a malformed result: %s", raw)
			}
			if !strings.Contains(err.Error(), `calling "resources/read"`) || mcperr.CodeOf(err, "") == "" {
				t.Errorf("error %v; want go-sdk's refusal of the result, with a code", err)
			}
		})
	}
}

// TestWithDataKeepsTheEventsFields: the event go-sdk reads in place of a
// kept answer has the same id (a resumption's Last-Event-ID) and type.
func TestWithDataKeepsTheEventsFields(t *testing.T) {
	ev := "event: message\r\nid: 42\ndata: {\"a\":\ndata: 1}\n\n"
	got := string(withData([]byte(ev), []byte(`{"b":2}`)))
	if want := "event: message\r\nid: 42\ndata: {\"b\":2}\n\n"; got != want {
		t.Errorf("withData = %q; want %q", got, want)
	}
}
