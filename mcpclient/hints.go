package mcpclient

import "sync"

// Hints remembers, per server URL, the transport and protocol version a
// connect negotiated, so the next connect to that server skips the probes
// (the Streamable HTTP attempt before a legacy SSE server, the 2026-07-28
// server/discover before a 2025-11-25 server). A nil *Hints remembers
// nothing. It is safe for concurrent use.
type Hints struct {
	mu sync.Mutex
	m  map[string]hint
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
	h.m[url] = v
}
