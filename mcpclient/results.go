package mcpclient

import (
	"bytes"
	"encoding/json"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// ResultJSON is r as the page gets it: go-sdk's JSON without the caching
// hints go-sdk writes whether or not the server sent them. cacheScope is
// left out when empty (no server sends ""), and ttlMs when it is 0 without
// a cacheScope (the zero value go-sdk invents for a server that sent no
// hint; a server that sends ttlMs 0 without a scope loses it, which means
// the same: no caching). It is encoded once and without HTML escapes (the
// page parses it; it is never put in HTML): a view's resource can be
// megabytes of HTML, and each extra pass over it costs the page a
// noticeable wait.
func ResultJSON(r *mcp.ReadResourceResult) (json.RawMessage, error) {
	w := struct {
		Meta          mcp.Meta                `json:"_meta,omitempty"`
		CacheScope    string                  `json:"cacheScope,omitempty"`
		Contents      []*mcp.ResourceContents `json:"contents"`
		InputRequests mcp.InputRequestMap     `json:"inputRequests,omitempty"`
		RequestState  string                  `json:"requestState,omitempty"`
		TTLMs         *int                    `json:"ttlMs,omitempty"`
	}{Meta: r.Meta, CacheScope: r.CacheScope, Contents: r.Contents, InputRequests: r.InputRequests, RequestState: r.RequestState}
	if r.CacheScope != "" || r.TTLMs != 0 {
		w.TTLMs = &r.TTLMs
	}
	var b bytes.Buffer
	e := json.NewEncoder(&b)
	e.SetEscapeHTML(false)
	if err := e.Encode(w); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}
