package mcpclient

import (
	"encoding/json"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// ResultJSON is r as the page gets it: go-sdk's JSON without the caching
// hints go-sdk writes whether or not the server sent them. cacheScope is
// left out when empty (no server sends ""), and ttlMs when it is 0 without
// a cacheScope (the zero value go-sdk invents for a server that sent no
// hint; a server that sends ttlMs 0 without a scope loses it, which means
// the same: no caching).
func ResultJSON(r *mcp.ReadResourceResult) (json.RawMessage, error) {
	b, err := json.Marshal(r)
	if err != nil {
		return nil, err
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, err
	}
	if r.CacheScope == "" {
		delete(m, "cacheScope")
		if r.TTLMs == 0 {
			delete(m, "ttlMs")
		}
	}
	return json.Marshal(m)
}
