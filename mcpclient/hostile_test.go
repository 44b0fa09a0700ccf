package mcpclient

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mcpwasm/mcpwasm/devkit/hostile"
	"github.com/mcpwasm/mcpwasm/mcperr"
)

const apiKey = "sk-hostile-test-key"

// hostileClient connects a client with an API key and a bearer token to
// the scripted server at url.
func hostileClient(t *testing.T, url string, transport Transport) *Client {
	t.Helper()
	c := newClient(t, url, Options{
		Transport:   transport,
		Headers:     map[string]string{"X-Api-Key": apiKey},
		AccessToken: func(context.Context) (string, error) { return "tok-" + apiKey, nil },
	})
	return c
}

// TestWrongResponseIDFailsAtOnce: a POSTed call answered with a response
// for another id cannot be answered by anything else: it fails at once
// with "protocol", and the session goes on.
func TestWrongResponseIDFailsAtOnce(t *testing.T) {
	calls := 0
	srv := hostile.Start(t, &hostile.MCP{Answer: func(w http.ResponseWriter, r *http.Request, m hostile.Message) bool {
		if m.Method != "tools/call" {
			return false
		}
		calls++
		if calls == 1 {
			hostile.Result(w, json.RawMessage("987654"), map[string]any{"content": []any{}})
			return true
		}
		return false
	}})
	c := hostileClient(t, srv.URL+"/mcp", TransportStreamable)
	if err := c.Connect(ctxT(t), ConnectOptions{}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, err := c.CallTool(ctx, "echo", nil, nil)
	wantCode(t, err, mcperr.Protocol)
	if !strings.Contains(err.Error(), "response for request 987654") {
		t.Errorf("error %q does not say what happened", err)
	}
	if _, err := c.CallTool(ctxT(t), "echo", nil, nil); err != nil {
		t.Errorf("the next call: %v; want it to work", err)
	}
}

// TestMalformedResponsesFailOneCall: a JSON array, a message without
// "jsonrpc" and an HTML page each fail the call they answer with
// "protocol"; the session survives every one.
func TestMalformedResponsesFailOneCall(t *testing.T) {
	var next string
	srv := hostile.Start(t, &hostile.MCP{Answer: func(w http.ResponseWriter, r *http.Request, m hostile.Message) bool {
		if m.Method != "tools/call" || next == "" {
			return false
		}
		body := strings.ReplaceAll(next, "ID", string(m.ID))
		next = ""
		if strings.HasPrefix(body, "<") {
			w.Header().Set("Content-Type", "text/html")
			fmt.Fprint(w, body)
			return true
		}
		hostile.Raw(w, body)
		return true
	}})
	c := hostileClient(t, srv.URL+"/mcp", TransportStreamable)
	if err := c.Connect(ctxT(t), ConnectOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ body, want string }{
		{`[{"jsonrpc":"2.0","id":ID,"result":{}}]`, "JSON array"},
		{`{"id":ID,"result":{"content":[]}}`, `"jsonrpc": "2.0"`},
		{`<html>hello</html>`, "content type"},
	} {
		next = tc.body
		_, err := c.CallTool(ctxT(t), "echo", nil, nil)
		wantCode(t, err, mcperr.Protocol)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v; want it to say %q", tc.body, err, tc.want)
		}
		if _, err := c.CallTool(ctxT(t), "echo", nil, nil); err != nil {
			t.Fatalf("after %s the session is gone: %v", tc.body, err)
		}
	}
}

// TestPaginationLoopIsBounded: a server whose every page names the same
// cursor, or whose pages never end, costs a bounded number of requests.
func TestPaginationLoopIsBounded(t *testing.T) {
	for _, tc := range []struct {
		name   string
		cursor func(n int) string
		want   string
		most   int
	}{
		{"same cursor", func(int) string { return "again" }, "repeats a page cursor", 2},
		{"endless", func(n int) string { return fmt.Sprint("p", n) }, "more than 100 pages", MaxListPages},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pages := 0
			srv := hostile.Start(t, &hostile.MCP{Answer: func(w http.ResponseWriter, r *http.Request, m hostile.Message) bool {
				if m.Method != "tools/list" {
					return false
				}
				pages++
				hostile.Result(w, m.ID, map[string]any{"tools": []any{hostile.EchoTool}, "nextCursor": tc.cursor(pages)})
				return true
			}})
			c := hostileClient(t, srv.URL+"/mcp", TransportStreamable)
			if err := c.Connect(ctxT(t), ConnectOptions{}); err != nil {
				t.Fatal(err)
			}
			_, err := c.ListTools(ctxT(t))
			wantCode(t, err, mcperr.Protocol)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v; want %q", err, tc.want)
			}
			if pages > tc.most {
				t.Errorf("%d pages requested; want at most %d", pages, tc.most)
			}
		})
	}
}

// TestCredentialsStayOnTheServerOrigin: a redirect or an SSE endpoint
// event that points at another origin is refused with "protocol", and the
// other origin never sees the API key or the token; a redirect within the
// origin is followed with them.
func TestCredentialsStayOnTheServerOrigin(t *testing.T) {
	other := hostile.Start(t, &hostile.MCP{})
	sse := func(w http.ResponseWriter, endpoint string) {
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprintf(w, "event: endpoint\ndata: %s\n\n", endpoint)
		w.(http.Flusher).Flush()
	}
	for _, tc := range []struct {
		name      string
		transport Transport
		handler   func(origin string) http.Handler
		want      string // "" connects
	}{
		{"307 on POST to another origin", TransportStreamable, func(string) http.Handler {
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				http.Redirect(w, r, other.URL+"/mcp", http.StatusTemporaryRedirect)
			})
		}, "redirected a request to " + other.URL},
		{"302 on the SSE GET to another origin", TransportSSE, func(string) http.Handler {
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				http.Redirect(w, r, other.URL+"/sse", http.StatusFound)
			})
		}, "redirected a request to " + other.URL},
		{"SSE endpoint event on another origin", TransportSSE, func(string) http.Handler {
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				sse(w, other.URL+"/message")
				<-r.Context().Done()
			})
		}, "pointed the client at another origin (" + other.URL + ")"},
		{"307 within the origin", TransportStreamable, func(string) http.Handler {
			mcp := &hostile.MCP{}
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path == "/old" {
					http.Redirect(w, r, "/mcp", http.StatusTemporaryRedirect)
					return
				}
				if r.Header.Get("X-Api-Key") != apiKey {
					http.Error(w, "no key", http.StatusUnauthorized)
					return
				}
				mcp.ServeHTTP(w, r)
			})
		}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := hostile.Start(t, tc.handler(""))
			path := "/old"
			if tc.transport == TransportSSE {
				path = "/sse"
			}
			c := hostileClient(t, srv.URL+path, tc.transport)
			err := c.Connect(ctxT(t), ConnectOptions{})
			if tc.want == "" {
				if err != nil {
					t.Fatalf("connect: %v", err)
				}
			} else {
				wantCode(t, err, mcperr.Protocol)
				if err == nil || !strings.Contains(err.Error(), tc.want) {
					t.Errorf("error %v; want %q", err, tc.want)
				}
			}
			if other.Contains(apiKey) {
				t.Errorf("the other origin received the API key or the token: %+v", other.Requests())
			}
		})
	}
}

// neverEnding answers method with an event stream that never carries the
// response.
func neverEnding(method string) hostile.Answer {
	return func(w http.ResponseWriter, r *http.Request, m hostile.Message) bool {
		if m.Method != method {
			return false
		}
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		w.(http.Flusher).Flush()
		<-r.Context().Done()
		return true
	}
}

// TestNeverEndingAnswersAreBounded: an initialize that never gets its
// response ends with "timeout" after the connect timeout; a call that
// never gets one ends at its own deadline or abort, and the session goes on.
func TestNeverEndingAnswersAreBounded(t *testing.T) {
	srv := hostile.Start(t, &hostile.MCP{Answer: neverEnding("initialize")})
	c := newClient(t, srv.URL+"/mcp", Options{Transport: TransportStreamable, ConnectTimeout: 300 * time.Millisecond})
	err := c.Connect(ctxT(t), ConnectOptions{})
	wantCode(t, err, mcperr.Timeout)
	if c.State() != StateFailed {
		t.Errorf("state %q; want failed", c.State())
	}

	srv = hostile.Start(t, &hostile.MCP{Answer: neverEnding("tools/call")})
	c = newClient(t, srv.URL+"/mcp", Options{Transport: TransportStreamable})
	if err := c.Connect(ctxT(t), ConnectOptions{}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	_, err = c.CallTool(ctx, "echo", nil, nil)
	wantCode(t, err, mcperr.Timeout)
	ctx, abort := context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, abort)
	_, err = c.CallTool(ctx, "echo", nil, nil)
	wantCode(t, err, mcperr.Aborted)
	if _, err := c.ListTools(ctxT(t)); err != nil {
		t.Errorf("after the abandoned calls: %v", err)
	}
}
