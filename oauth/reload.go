package oauth

// Reload forgets the grant held in memory, so that the next request reads
// the Store again. Call it when another process (another browser tab)
// stored or deleted this resource's grant. It also clears the decline
// latch: a grant obtained elsewhere is a fresh start.
func (h *Handler) Reload() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.grant, h.loaded, h.latch = nil, false, nil
}
