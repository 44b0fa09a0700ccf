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
	_, gen, ok := c.get("a")
	if ok {
		t.Fatal("an empty cache has a copy")
	}
	c.put("a", "key-a", gen)
	if k, _, ok := c.get("a"); !ok || k != "key-a" {
		t.Fatalf("get(a) = %q, %v after put; want key-a", k, ok)
	}

	_, gen, _ = c.get("b")
	c.drop("b") // deleted while "b" was being read
	c.put("b", "old-b", gen)
	if k, _, ok := c.get("b"); ok {
		t.Errorf("get(b) = %q: a read from before a drop was kept", k)
	}
	if _, _, ok := c.get("a"); !ok {
		t.Error("a lost by drop(b)")
	}
}

// TestKeyCacheDrops: drop forgets one copy, dropAll every copy.
func TestKeyCacheDrops(t *testing.T) {
	var c keyCache[string]
	for _, id := range []string{"a", "b"} {
		_, gen, _ := c.get(id)
		c.put(id, "key-"+id, gen)
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
	_, gen, _ := c.get("b")
	c.put("b", "new-b", gen)
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
			_, gen, _ := s.dpop.copies.get("k")
			s.dpop.copies.put("k", nil, gen)
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
