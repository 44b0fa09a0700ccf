package mcpclient

import (
	"encoding/json"
	"net/url"
	"strings"
	"sync"
)

// Hints remembers, per server URL, the transport and protocol version a
// connect negotiated, so the next connect to that server skips the probes
// (the Streamable HTTP attempt before a legacy SSE server, the 2026-07-28
// server/discover before a 2025-11-25 server). It also remembers the era
// of each origin (2026-07-28's versioning: the era is a property of the
// origin, which clients should cache), so a first connect to another URL
// of an origin known to speak a legacy version skips the server/discover
// probe as well, and one to an origin known to speak 2026-07-28 sends the
// probe with its standard headers at once (a connect knowing neither
// sends it without the headers a 2025-11-25 server's CORS refuses). A
// connect that fails with a hint forgets the URL's and the origin's and
// probes again. A nil *Hints remembers nothing. It is safe for
// concurrent use.
type Hints struct {
	// Persist, when set, saves the hints (JSON, no secrets) whenever they
	// change, e.g. to localStorage, so a reload skips the probes too.
	Persist func(data []byte)

	mu      sync.Mutex
	m       map[string]hint
	origins map[string]string // origin → the protocol version last negotiated there
}

// hintJSON is the persisted form of a hint. An origin's era is kept as an
// entry under originKey with only a version (a build that predates it
// skips an entry without a transport).
type hintJSON struct {
	Transport Transport `json:"transport,omitempty"`
	Version   string    `json:"version"`
}

// originKey is the persisted key of an origin's era: no server URL
// begins with it.
const originKey = "origin "

// Load replaces the hints with data saved by Persist; bad data is ignored.
func (h *Hints) Load(data []byte) {
	var m map[string]hintJSON
	if json.Unmarshal(data, &m) != nil {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.m = make(map[string]hint, len(m))
	h.origins = make(map[string]string)
	for key, v := range m {
		if o, ok := strings.CutPrefix(key, originKey); ok {
			if v.Version != "" {
				h.origins[o] = v.Version
			}
			continue
		}
		switch v.Transport {
		case TransportStreamable, TransportSSE:
			h.m[key] = hint{transport: v.Transport, version: v.Version}
		}
	}
}

// save calls Persist with the current hints; h.mu must be held.
func (h *Hints) save() {
	if h.Persist == nil {
		return
	}
	m := make(map[string]hintJSON, len(h.m)+len(h.origins))
	for url, v := range h.m {
		m[url] = hintJSON{Transport: v.transport, Version: v.version}
	}
	for o, v := range h.origins {
		m[originKey+o] = hintJSON{Version: v}
	}
	if b, err := json.Marshal(m); err == nil {
		h.Persist(b)
	}
}

// forget drops what is remembered of url and of its origin's era.
func (h *Hints) forget(url string) {
	if h == nil {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	_, known := h.m[url]
	delete(h.m, url)
	o := originOf(url)
	if _, ok := h.origins[o]; ok {
		delete(h.origins, o)
		known = true
	}
	if known {
		h.save()
	}
}

// latestLegacyVersion is the newest protocol version with an initialize
// handshake.
const latestLegacyVersion = "2025-11-25"

type hint struct {
	transport Transport
	version   string
}

// get is what is known of url: its own hint, else the era its origin
// speaks (a version without a transport). With no version, the era is
// unknown and the connect's server/discover probe goes out bare (see
// sendProbe).
func (h *Hints) get(url string) hint {
	if h == nil {
		return hint{}
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if v, ok := h.m[url]; ok {
		return v
	}
	switch v := h.origins[originOf(url)]; {
	case v == "":
		return hint{}
	case v < protocol20260728:
		// The newest legacy version: initialize negotiates down from it.
		return hint{version: latestLegacyVersion}
	default:
		return hint{version: v}
	}
}

func (h *Hints) put(url string, v hint) {
	if h == nil {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.m == nil {
		h.m = make(map[string]hint)
	}
	if h.origins == nil {
		h.origins = make(map[string]string)
	}
	changed := h.m[url] != v
	h.m[url] = v
	if o := originOf(url); o != "" && v.version != "" && h.origins[o] != v.version {
		h.origins[o] = v.version
		changed = true
	}
	if changed {
		h.save()
	}
}

// originOf is the scheme://host[:port] of a server URL ("" if it has none).
func originOf(s string) string {
	u, err := url.Parse(s)
	if err != nil || u.Scheme == "" || u.Host == "" {
		return ""
	}
	return strings.ToLower(u.Scheme) + "://" + strings.ToLower(u.Host)
}
