package mcpclient

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"sync"
)

// rawRead keeps the server's own bytes of a resources/read answer for a
// page, which parses JSON natively, so that a view of megabytes is not
// decoded by go-sdk in WebAssembly (seconds) and encoded again. go-sdk
// still makes the request (its headers, credentials, sign-in, retries)
// and reads an empty result in the answer's place; an answer that is not
// a complete result (one asking for input) reaches go-sdk as it came.
type rawRead struct {
	mu     sync.Mutex
	result json.RawMessage
}

type rawReadKey struct{}

func rawReadFrom(ctx context.Context) *rawRead {
	rr, _ := ctx.Value(rawReadKey{}).(*rawRead)
	return rr
}

// answered is the listener of the request with JSON-RPC id: it keeps a
// complete, well-formed result of the answer and gives go-sdk an empty
// one instead.
func (rr *rawRead) answered(id json.RawMessage) listener {
	return func(m *wireMessage) []byte {
		if m.Method != "" || len(m.Result) == 0 || !sameID(m.ID, id) {
			return nil
		}
		typ, err := checkReadResult(m.Result)
		if err != nil || (typ != "" && typ != "complete") {
			return nil // go-sdk reads it, and says what is wrong or asks for the input
		}
		rr.mu.Lock()
		rr.result = m.Result
		rr.mu.Unlock()
		stub := `{"contents":[]}`
		if typ != "" {
			stub = `{"contents":[],"resultType":"complete"}`
		}
		return fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%s,"result":%s}`, m.ID, stub)
	}
}

func (rr *rawRead) kept() json.RawMessage {
	rr.mu.Lock()
	defer rr.mu.Unlock()
	return rr.result
}

// checkReadResult checks that raw has the shape go-sdk would accept for a
// ReadResourceResult (contents of objects with a string uri, mimeType and
// text, a base64 blob, an object _meta), without unquoting the text, and
// returns its resultType.
func checkReadResult(raw json.RawMessage) (string, error) {
	var r struct {
		ResultType string                     `json:"resultType"`
		Meta       map[string]json.RawMessage `json:"_meta"`
		Contents   []struct {
			URI      string                     `json:"uri"`
			MIMEType string                     `json:"mimeType"`
			Text     json.RawMessage            `json:"text"`
			Blob     json.RawMessage            `json:"blob"`
			Meta     map[string]json.RawMessage `json:"_meta"`
		} `json:"contents"`
	}
	if err := decodeAsGoSDK(raw, &r); err != nil {
		return "", err
	}
	for _, c := range r.Contents {
		if len(c.Text) > 0 && c.Text[0] != '"' && string(c.Text) != "null" {
			return "", fmt.Errorf("a resource's text is not a string")
		}
		if len(c.Blob) > 0 && string(c.Blob) != "null" {
			var b64 string
			if err := decodeAsGoSDK(c.Blob, &b64); err != nil {
				return "", err
			}
			if _, err := base64.StdEncoding.DecodeString(b64); err != nil {
				return "", err
			}
		}
	}
	return r.ResultType, nil
}

// ReadResourceJSON reads the resource at uri and returns the result as
// the page gets it: the server's own JSON where it can (see rawRead),
// else [ResultJSON] of go-sdk's result (one go-sdk had cached, say).
func (c *Client) ReadResourceJSON(ctx context.Context, uri string) (json.RawMessage, error) {
	rr := &rawRead{}
	r, err := c.ReadResource(context.WithValue(ctx, rawReadKey{}, rr), uri)
	if err != nil {
		return nil, err
	}
	if raw := rr.kept(); raw != nil {
		return raw, nil
	}
	return ResultJSON(r)
}
