package indexeddb

import "sync"

// keyCache is this runtime's copy of the DPoP keys it read from the
// database, by id, so that a proof costs no database read. Every change
// that can delete or replace a stored key drops copies: a deletion here
// ([keyCache.drop]), a cleared or deleted database, another page's grant
// change ([keyCache.dropAll]). A read that was under way when its copy
// was dropped may have read the old key: [keyCache.put] refuses it, by
// the [readTicket] that [keyCache.get] handed out before the read. Drops
// are counted per id, so that dropping one id neither forgets nor refuses
// the reads of another.
type keyCache[K any] struct {
	mu    sync.Mutex
	epoch uint64            // counts dropAll
	drops map[string]uint64 // counts drops of each id since the last dropAll
	keys  map[string]K
}

// readTicket is what a read of one id must present to put its result:
// the drops that id had seen when the read began.
type readTicket struct{ epoch, drops uint64 }

// get returns the copy of id, or false and the ticket to pass to put
// with the key read from the database.
func (c *keyCache[K]) get(id string) (k K, t readTicket, ok bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	k, ok = c.keys[id]
	return k, readTicket{c.epoch, c.drops[id]}, ok
}

// put keeps k as the copy of id, unless the copy of id was dropped since
// get returned t (k may be the key that drop was about).
func (c *keyCache[K]) put(id string, k K, t readTicket) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if t != (readTicket{c.epoch, c.drops[id]}) {
		return
	}
	if c.keys == nil {
		c.keys = map[string]K{}
	}
	c.keys[id] = k
}

// drop forgets the copy of id, and refuses the reads of id under way.
func (c *keyCache[K]) drop(id string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.drops == nil {
		c.drops = map[string]uint64{}
	}
	c.drops[id]++
	delete(c.keys, id)
}

// dropAll forgets every copy, and refuses every read under way.
func (c *keyCache[K]) dropAll() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.epoch++
	c.drops, c.keys = nil, nil
}
