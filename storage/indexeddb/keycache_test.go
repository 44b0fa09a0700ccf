package indexeddb

import (
	"context"
	"testing"
)

// TestKeyCacheKeepsReadsUntilDropped: a key read is kept; a read that was
// under way when its copy was dropped (the key deleted or replaced
// meanwhile) is not kept.
func TestKeyCacheKeepsReadsUntilDropped(t *testing.T) {
	var c keyCache[string]
	_, tk, ok := c.get("a")
	if ok {
		t.Fatal("an empty cache has a copy")
	}
	c.put("a", "key-a", tk)
	if k, _, ok := c.get("a"); !ok || k != "key-a" {
		t.Fatalf("get(a) = %q, %v after put; want key-a", k, ok)
	}

	_, tk, _ = c.get("b")
	c.drop("b") // deleted while "b" was being read
	c.put("b", "old-b", tk)
	if k, _, ok := c.get("b"); ok {
		t.Errorf("get(b) = %q: a read from before a drop was kept", k)
	}
	if _, _, ok := c.get("a"); !ok {
		t.Error("a lost by drop(b)")
	}
}

// TestKeyCacheDropsPerID: dropping one id neither forgets another's copy
// nor refuses a read of another under way; a read of an id from before
// that id's drop is refused however many other drops and reads came
// between, and so is every read from before a dropAll.
func TestKeyCacheDropsPerID(t *testing.T) {
	var c keyCache[string]
	_, tkA, _ := c.get("a")
	c.drop("b") // b changed while a was being read
	c.put("a", "key-a", tkA)
	if k, _, ok := c.get("a"); !ok || k != "key-a" {
		t.Errorf("get(a) = %q, %v: a read of a was refused for a drop of b; want key-a", k, ok)
	}

	_, stale, _ := c.get("b") // a read of b begins...
	c.drop("b")               // ...b is replaced meanwhile...
	_, fresh, _ := c.get("b") // ...a newer read of b begins
	c.drop("c")
	c.put("b", "new-b", fresh)
	c.put("b", "old-b", stale) // the older read ends last
	if k, _, _ := c.get("b"); k != "new-b" {
		t.Errorf("get(b) = %q; want new-b (the read from before b's drop must not replace it)", k)
	}

	_, tkA, _ = c.get("a")
	c.dropAll()
	c.put("a", "old-a", tkA)
	if k, _, ok := c.get("a"); ok {
		t.Errorf("get(a) = %q: a read from before dropAll was kept", k)
	}
	// A drop count that restarts after dropAll cannot match a ticket from before it.
	_, old, _ := c.get("d")
	c.drop("d")
	c.dropAll()
	c.drop("d")
	c.put("d", "old-d", old)
	if k, _, ok := c.get("d"); ok {
		t.Errorf("get(d) = %q: a read from before dropAll was kept", k)
	}
}

// TestKeyCacheDrops: drop forgets one copy, dropAll every copy.
func TestKeyCacheDrops(t *testing.T) {
	var c keyCache[string]
	for _, id := range []string{"a", "b"} {
		_, tk, _ := c.get(id)
		c.put(id, "key-"+id, tk)
	}
	c.drop("a")
	if _, _, ok := c.get("a"); ok {
		t.Error("a kept after drop(a)")
	}
	if _, _, ok := c.get("b"); !ok {
		t.Error("b lost by drop(a)")
	}
	c.dropAll()
	if _, _, ok := c.get("b"); ok {
		t.Error("b kept after dropAll")
	}
	_, tk, _ := c.get("b")
	c.put("b", "new-b", tk)
	if k, _, ok := c.get("b"); !ok || k != "new-b" {
		t.Errorf("get(b) = %q, %v after a read following dropAll; want new-b", k, ok)
	}
}

// TestStoreDropsKeyCopies: clearing the store, the database deleted or
// taken by a newer build, and another page's grant change (KeysChanged)
// each drop the copies of the DPoP keys.
func TestStoreDropsKeyCopies(t *testing.T) {
	ctx := ctxT(t)
	for name, change := range map[string]func(s *Store, db kv){
		"Clear":       func(s *Store, _ kv) { _ = s.Clear(ctx) },
		"KeysChanged": func(s *Store, _ kv) { s.KeysChanged() },
		"deleted":     func(s *Store, db kv) { s.closed(db, nil) },
		"newer build": func(s *Store, db kv) { s.closed(db, newerErr(nil, 3)) },
	} {
		t.Run(name, func(t *testing.T) {
			db := &memKV{}
			s := newStore(func(context.Context) (kv, error) { return db, nil }, nil)
			s.backend(ctx)
			_, tk, _ := s.dpop.copies.get("k")
			s.dpop.copies.put("k", nil, tk)
			if _, _, ok := s.dpop.copies.get("k"); !ok {
				t.Fatal("no copy kept")
			}
			change(s, db)
			if _, _, ok := s.dpop.copies.get("k"); ok {
				t.Errorf("the copy of key k survived %s", name)
			}
		})
	}
}
