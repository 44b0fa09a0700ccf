package catalog

import (
	"bytes"
	"encoding/json"
	"strings"
)

// maxCachedExports bounds the answers an [exportCache] keeps for one list:
// one per format and set of used tools that agents asked about.
const maxCachedExports = 32

// exportCache keeps [Catalog.ToolsForConversation]'s answers for one
// generation of the aggregated list, so that an agent, which asks before
// every step, gets the same export without the tools being encoded again
// (twice over the budget check). Its fields are guarded by Catalog.mu.
type exportCache struct {
	// gen is bumped whenever the list changes in a way an export shows:
	// a name, a server, or a tool definition.
	gen   uint64
	byKey map[string]json.RawMessage
}

// relist starts a new generation when next would export differently from
// prev. Tool definitions are compared by pointer: a server's tools are
// replaced, never edited in place, when it lists them again.
func (x *exportCache) relist(prev, next []Tool) {
	if len(prev) == len(next) {
		same := true
		for i := range prev {
			if prev[i].Name != next[i].Name || prev[i].ServerID != next[i].ServerID || prev[i].Tool != next[i].Tool {
				same = false
				break
			}
		}
		if same {
			return
		}
	}
	x.gen++
	x.byKey = nil
}

func exportKey(f Format, used []string) string {
	return string(f) + "\x00" + strings.Join(used, "\x00")
}

// get returns a copy of the export cached for generation gen, if any.
func (x *exportCache) get(gen uint64, f Format, used []string) (json.RawMessage, bool) {
	if gen != x.gen {
		return nil, false
	}
	b, ok := x.byKey[exportKey(f, used)]
	if !ok {
		return nil, false
	}
	return bytes.Clone(b), true
}

// put keeps b for generation gen, unless the list changed since.
func (x *exportCache) put(gen uint64, f Format, used []string, b json.RawMessage) {
	if gen != x.gen {
		return
	}
	if x.byKey == nil || len(x.byKey) >= maxCachedExports {
		x.byKey = make(map[string]json.RawMessage)
	}
	x.byKey[exportKey(f, used)] = b
}
