package mcpclient

import (
	"encoding/json"
	"sync"
)

// Hints remembers, per server URL, the transport and protocol version a
// connect negotiated, so the next connect to that server skips the probes
// (the Streamable HTTP attempt before a legacy SSE server, the 2026-07-28
// server/discover before a 2025-11-25 server). A connect that fails with a
// hint forgets it and probes again. A nil *Hints remembers nothing. It is
// safe for concurrent use.
type Hints struct {
	// Persist, when set, saves the hints (JSON, no secrets) whenever they
	// change, e.g. to localStorage, so a reload skips the probes too.
	Persist func(data []byte)

	mu sync.Mutex
	m  map[string]hint
}

// hintJSON is the persisted form of a hint.
type hintJSON struct {
	Transport Transport `json:"transport"`
	Version   string    `json:"version"`
}

// Load replaces the hints with data saved by Persist; bad data is ignored.
func (h *Hints) Load(data []byte) {
	var m map[string]hintJSON
	if json.Unmarshal(data, &m) != nil {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.m = make(map[string]hint, len(m))
	for url, v := range m {
		switch v.Transport {
		case TransportStreamable, TransportSSE:
			h.m[url] = hint{transport: v.Transport, version: v.Version}
		}
	}
}

// save calls Persist with the current hints; h.mu must be held.
func (h *Hints) save() {
	if h.Persist == nil {
		return
	}
	m := make(map[string]hintJSON, len(h.m))
	for url, v := range h.m {
		m[url] = hintJSON{Transport: v.transport, Version: v.version}
	}
	if b, err := json.Marshal(m); err == nil {
		h.Persist(b)
	}
}

func (h *Hints) forget(url string) {
	if h == nil {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if _, ok := h.m[url]; ok {
		delete(h.m, url)
		h.save()
	}
}

type hint struct {
	transport Transport
	version   string
}

func (h *Hints) get(url string) hint {
	if h == nil {
		return hint{}
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.m[url]
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
	if h.m[url] != v {
		h.m[url] = v
		h.save()
	}
}
