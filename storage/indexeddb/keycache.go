package indexeddb

import "sync"

// keyCache is this runtime's copy of the DPoP keys it read from the
// database, by id, so that a proof costs no database read. Every change
// that can delete or replace a stored key drops copies: a deletion here
// ([keyCache.drop]), a cleared or deleted database, another page's grant
// change ([keyCache.dropAll]). A read that was under way when a copy was
// dropped may have read the old key: [keyCache.put] refuses it, by the
// generation [keyCache.get] handed out before the read.
type keyCache[K any] struct {
	mu   sync.Mutex
	gen  uint64 // counts drops
	keys map[string]K
}

// get returns the copy of id, or false and the generation to pass to put
// with the key read from the database.
func (c *keyCache[K]) get(id string) (k K, gen uint64, ok bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	k, ok = c.keys[id]
	return k, c.gen, ok
}

// put keeps k as the copy of id, unless a copy was dropped since get
// returned gen (k may be the key that drop was about).
func (c *keyCache[K]) put(id string, k K, gen uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if gen != c.gen {
		return
	}
	if c.keys == nil {
		c.keys = map[string]K{}
	}
	c.keys[id] = k
}

// drop forgets the copy of id.
func (c *keyCache[K]) drop(id string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gen++
	delete(c.keys, id)
}

// dropAll forgets every copy.
func (c *keyCache[K]) dropAll() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gen++
	c.keys = nil
}
