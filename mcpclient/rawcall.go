package mcpclient

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// rawCall is a request for a method go-sdk's session has no call for (an
// extension's, such as skills/list). It goes out as a ping that the round
// tripper turns into the method and params on its way to the server, and
// the response's result is kept by the taps before go-sdk reads it as
// ping's empty result. go-sdk still does the rest of a request's work:
// the session and version headers, credentials, sign-in on a 401,
// retries, resumption and cancellation.
type rawCall struct {
	method  string
	params  map[string]any
	headers map[string]string // set on the request, after those naming the ping's method

	mu     sync.Mutex
	id     json.RawMessage // the id of the request it went out as
	result json.RawMessage
}

type rawCallKey struct{}

func rawCallFrom(ctx context.Context) *rawCall {
	rc, _ := ctx.Value(rawCallKey{}).(*rawCall)
	return rc
}

// callRaw sends method with params on cs and decodes the result into out.
// On protocol 2026-07-28 the request carries the _meta envelope every
// request carries there (go-sdk leaves it off a ping).
func (c *Client) callRaw(ctx context.Context, cs *mcp.ClientSession, method string, params map[string]any, out any) error {
	return c.callRawHeaders(ctx, cs, method, params, nil, out)
}

// callRawHeaders is callRaw with headers set on the request (Mcp-Name of a
// tools/call).
func (c *Client) callRawHeaders(ctx context.Context, cs *mcp.ClientSession, method string, params map[string]any, headers map[string]string, out any) error {
	rc := &rawCall{method: method, params: params, headers: headers}
	var pp *mcp.PingParams
	if env := c.envelope(cs); env != nil {
		pp = &mcp.PingParams{Meta: env}
	}
	if err := cs.Ping(context.WithValue(ctx, rawCallKey{}, rc), pp); err != nil {
		return err
	}
	rc.mu.Lock()
	result := rc.result
	rc.mu.Unlock()
	if result == nil {
		return violation("the server's answer to %s carried no result", method)
	}
	if err := json.Unmarshal(result, out); err != nil {
		return violation("the server's answer to %s is not what the method returns: %v", method, err)
	}
	return nil
}

// rewrite turns the ping req carries into rc's request: the method, the
// params (over the ping's own, which carry what go-sdk adds to every
// request's _meta), and the headers that name the method.
func (rc *rawCall) rewrite(req *http.Request, id json.RawMessage) error {
	body, err := req.GetBody()
	if err != nil {
		return err
	}
	var msg map[string]any
	err = json.NewDecoder(body).Decode(&msg)
	body.Close()
	if err != nil {
		return err
	}
	params, _ := msg["params"].(map[string]any)
	if params == nil {
		params = map[string]any{}
	}
	for k, v := range rc.params {
		// _meta merges: the ping's carries the envelope of protocol
		// 2026-07-28, the call's its own keys (a progress token).
		if own, ok := v.(map[string]any); ok && k == "_meta" {
			if env, ok := params[k].(map[string]any); ok {
				for mk, mv := range own {
					env[mk] = mv
				}
				continue
			}
		}
		params[k] = v
	}
	msg["method"], msg["params"] = rc.method, params
	data, err := json.Marshal(msg)
	if err != nil {
		return err
	}
	req.Body = io.NopCloser(bytes.NewReader(data))
	req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(data)), nil }
	req.ContentLength = int64(len(data))
	req.Header.Set("Content-Length", strconv.Itoa(len(data)))
	if req.Header.Get("Mcp-Method") != "" {
		req.Header.Set("Mcp-Method", rc.method)
	}
	standard := req.Header.Get("Mcp-Method") != ""
	for k := range req.Header {
		if k == "Mcp-Name" || strings.HasPrefix(k, "Mcp-Param-") {
			req.Header.Del(k)
		}
	}
	if standard {
		for k, v := range rc.headers {
			req.Header.Set(k, v)
		}
	}
	rc.mu.Lock()
	rc.id = id
	rc.mu.Unlock()
	return nil
}

// answered keeps m's result when m is the response to rc's request.
func (rc *rawCall) answered(m *wireMessage) []byte {
	if rc == nil || m.Method != "" {
		return nil
	}
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if rc.id != nil && sameID(m.ID, rc.id) {
		rc.result = m.Result
	}
	return nil
}

// extension returns the settings a server declared for extension id in
// its capabilities, and whether it declared it.
func extension(cs *mcp.ClientSession, id string) (map[string]any, bool) {
	return declared(cs.InitializeResult(), id)
}

// declared is extension for an initialize result (nil when not connected).
func declared(ir *mcp.InitializeResult, id string) (map[string]any, bool) {
	if ir == nil || ir.Capabilities == nil || ir.Capabilities.Extensions == nil {
		return nil, false
	}
	v, ok := ir.Capabilities.Extensions[id]
	if !ok {
		return nil, false
	}
	settings, _ := v.(map[string]any)
	return settings, true
}
