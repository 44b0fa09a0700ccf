package indexeddb

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpwasm/mcpwasm/mcperr"
	"github.com/mcpwasm/mcpwasm/oauth"
)

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// opened returns a store whose database opens as db.
func opened(t *testing.T, db kv) *Store {
	return newStore(func(context.Context) (kv, error) { return db, nil },
		func(err error) { t.Errorf("onFallback(%v) although the database opened", err) })
}

// TestUnopenableDatabaseFallsBackToMemoryOnce: when the database cannot be
// opened, concurrent first callers open it once, with a context of its own
// (theirs has ended), the callback hears why once, and the records live in
// memory, not shared with other pages.
func TestUnopenableDatabaseFallsBackToMemoryOnce(t *testing.T) {
	openErr := storageErr(errors.New("indexedDB is not available"), "cannot open the database")
	var opens atomic.Int32
	var mu sync.Mutex
	var told []error
	s := newStore(func(ctx context.Context) (kv, error) {
		opens.Add(1)
		if ctx.Err() != nil {
			t.Errorf("open got a context that has ended (%v): one caller's would decide for the page", ctx.Err())
		}
		return nil, openErr
	}, func(err error) {
		mu.Lock()
		defer mu.Unlock()
		told = append(told, err)
	})

	gone, cancel := context.WithCancel(context.Background())
	cancel()
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			g := fixtureGrant()
			g.Resource += "/" + string(rune('a'+i))
			if err := s.PutGrant(gone, g); err != nil {
				t.Errorf("PutGrant on the fallback: %v", err)
			}
		})
	}
	wg.Wait()

	if n := opens.Load(); n != 1 {
		t.Errorf("open ran %d times; want once", n)
	}
	if len(told) != 1 || told[0] != openErr {
		t.Errorf("onFallback heard %v; want once, the open error", told)
	}
	if err := s.Fallback(); err != openErr {
		t.Errorf("Fallback() = %v; want the open error", err)
	}
	if s.Shared() {
		t.Error("Shared() = true on the memory fallback; other pages cannot see its records")
	}
	if _, ok := s.backend(context.Background()).(*memKV); !ok {
		t.Errorf("the fallback backend is %T; want memory", s.backend(context.Background()))
	}
	for i := range 8 {
		want := fixtureGrant()
		want.Resource += "/" + string(rune('a'+i))
		got, err := s.GetGrant(ctxT(t), want.Resource)
		if err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff(want, got); d != "" {
			t.Errorf("grant %d from memory (-want +got):\n%s", i, d)
		}
	}
}

// TestWarmOpensOnceAndLeavesTheTellingToTheFirstUse: Warm opens the
// database ahead of its first use, which then opens nothing more; where it
// cannot be opened, Warm (run before any client exists) says nothing, and
// the first use says why, once.
func TestWarmOpensOnceAndLeavesTheTellingToTheFirstUse(t *testing.T) {
	ctx := ctxT(t)
	var opens atomic.Int32
	db := &memKV{}
	s := newStore(func(context.Context) (kv, error) { opens.Add(1); return db, nil },
		func(err error) { t.Errorf("onFallback(%v) although the database opened", err) })
	s.Warm()
	if n := opens.Load(); n != 1 {
		t.Fatalf("Warm opened the database %d times; want once", n)
	}
	if err := s.PutGrant(ctx, fixtureGrant()); err != nil {
		t.Fatal(err)
	}
	s.Warm()
	if n := opens.Load(); n != 1 {
		t.Errorf("the database was opened %d times after Warm, a write and Warm again; want once", n)
	}
	if _, found, _ := db.get(ctx, storeGrants, fixtureGrant().Resource); !found {
		t.Error("the grant written after Warm is not in the database Warm opened")
	}

	openErr := storageErr(errors.New("indexedDB is not available"), "cannot open the database")
	var told []error
	f := newStore(func(context.Context) (kv, error) { return nil, openErr }, func(err error) { told = append(told, err) })
	f.Warm()
	if len(told) != 0 {
		t.Fatalf("Warm told %v; want nothing until the first use", told)
	}
	if _, err := f.GetGrant(ctx, "https://mcp.example/x"); err != nil {
		t.Fatal(err)
	}
	f.Warm()
	if len(told) != 1 || told[0] != openErr {
		t.Errorf("onFallback heard %v; want once, the open error, at the first use", told)
	}
}

// TestOpenedDatabaseHoldsTheRecords: with the database open there is no
// fallback, the records go to the database and are shared.
func TestOpenedDatabaseHoldsTheRecords(t *testing.T) {
	ctx := ctxT(t)
	db := &memKV{}
	s := opened(t, db)
	if err := s.PutGrant(ctx, fixtureGrant()); err != nil {
		t.Fatal(err)
	}
	if _, found, _ := db.get(ctx, storeGrants, fixtureGrant().Resource); !found {
		t.Error("the grant is not in the opened database")
	}
	if err := s.Fallback(); err != nil {
		t.Errorf("Fallback() = %v; want nil", err)
	}
	if !s.Shared() {
		t.Error("Shared() = false with the database open")
	}
}

// TestEachKindIsKeyedAsStored: every kind has its object store and its key
// there (records stored under another key would be lost), reads back equal
// and is deleted alone.
func TestEachKindIsKeyedAsStored(t *testing.T) {
	ctx := ctxT(t)
	db := &memKV{}
	s := opened(t, db)
	g, c, m, p := fixtureGrant(), fixtureClient(), fixtureMetadata(), fixturePending()
	kinds := []struct {
		store, key string
		want       any
		put        func() error
		get        func() (any, error)
		del        func() error
	}{
		{storeGrants, g.Resource, g,
			func() error { return s.PutGrant(ctx, g) },
			func() (any, error) { return s.GetGrant(ctx, g.Resource) },
			func() error { return s.DeleteGrant(ctx, g.Resource) }},
		{storeClients, c.Issuer + "\x00" + c.RedirectURI, c,
			func() error { return s.PutClient(ctx, c) },
			func() (any, error) { return s.GetClient(ctx, c.Issuer, c.RedirectURI) },
			func() error { return s.DeleteClient(ctx, c.Issuer, c.RedirectURI) }},
		{storeMetadata, m.Key, m,
			func() error { return s.PutMetadata(ctx, m) },
			func() (any, error) { return s.GetMetadata(ctx, m.Key) },
			func() error { return s.DeleteMetadata(ctx, m.Key) }},
		{storePending, p.State, p,
			func() error { return s.PutPending(ctx, p) },
			func() (any, error) { return s.GetPending(ctx, p.State) },
			func() error { return s.DeletePending(ctx, p.State) }},
	}
	for _, k := range kinds {
		if got, err := k.get(); err != nil || !reflect.ValueOf(got).IsNil() {
			t.Errorf("%s: before Put, Get = %v, %v; want nil, nil", k.store, got, err)
		}
		if err := k.put(); err != nil {
			t.Fatal(err)
		}
	}
	if len(db.m) != len(kinds) {
		t.Errorf("the database holds %d records; want %d", len(db.m), len(kinds))
	}
	for i, k := range kinds {
		if _, found, _ := db.get(ctx, k.store, k.key); !found {
			t.Errorf("no record in %s under %q", k.store, k.key)
		}
		got, err := k.get()
		if err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff(k.want, got); d != "" {
			t.Errorf("%s read back (-want +got):\n%s", k.store, d)
		}
		if err := k.del(); err != nil {
			t.Fatal(err)
		}
		if got, err := k.get(); err != nil || !reflect.ValueOf(got).IsNil() {
			t.Errorf("%s: after Delete, Get = %v, %v; want nil, nil", k.store, got, err)
		}
		if n := len(db.m); n != len(kinds)-i-1 {
			t.Errorf("after deleting the %s record, %d records are left; want %d", k.store, n, len(kinds)-i-1)
		}
	}
}

// TestViewStatesAreForgottenByPrefix: a view's storage reads back as kept,
// and DeleteViewStates deletes the keys under a prefix only (a
// conversation's views), or every one for "".
func TestViewStatesAreForgottenByPrefix(t *testing.T) {
	ctx := ctxT(t)
	db := &fakeDB{}
	s := opened(t, &sealedKV{db: db, sl: newGCMSealer(t, make([]byte, 32))})
	keys := []string{"conversation:a/call-1\x00https://x.example/mcp", "conversation:a/call-2\x00https://y.example/mcp", "conversation:ab/call-1\x00https://x.example/mcp", "page\x00https://x.example/mcp"}
	for i, k := range keys {
		if err := s.PutViewState(ctx, k, []byte(fmt.Sprintf(`{"n":"%d"}`, i))); err != nil {
			t.Fatal(err)
		}
	}
	if rec := db.stores[storeViews][keys[0]]; rec == nil || rec[propCT] == nil {
		t.Fatalf("the record of %q is %v; want it sealed (ct)", keys[0], rec)
	}
	got, found, err := s.GetViewState(ctx, keys[1])
	if err != nil || !found || string(got) != `{"n":"1"}` {
		t.Errorf("GetViewState = %s, %v, %v; want {\"n\":\"1\"}", got, found, err)
	}
	if n, err := s.DeleteViewStates(ctx, "conversation:a/"); n != 2 || err != nil {
		t.Errorf("DeleteViewStates(conversation:a/) = %d, %v; want 2", n, err)
	}
	for i, k := range keys {
		_, found, _ := s.GetViewState(ctx, k)
		if want := i >= 2; found != want {
			t.Errorf("after deleting conversation a's: %q found %v; want %v", k, found, want)
		}
	}
	if n, err := s.DeleteViewStates(ctx, ""); n != 2 || err != nil {
		t.Errorf("DeleteViewStates(\"\") = %d, %v; want the 2 left", n, err)
	}
}

// TestClearKeepsOnlyTheWrappingKey: Clear empties every object store but
// the keys, in the database and on the memory fallback alike.
func TestClearKeepsOnlyTheWrappingKey(t *testing.T) {
	ctx := ctxT(t)
	all := []string{storeGrants, storeClients, storeMetadata, storePending, storeDPoP, storeConversations, storeTasks, storeViews, storeKeys}

	mem := &memKV{}
	db := &fakeDB{}
	backends := []struct {
		name string
		kv   kv
		seed func(store string) error
		has  func(store string) bool
	}{
		{"memory", mem,
			func(store string) error { return mem.put(ctx, store, "x", []byte("{}")) },
			func(store string) bool { _, ok, _ := mem.get(ctx, store, "x"); return ok }},
		{"database", &sealedKV{db: db, sl: newGCMSealer(t, make([]byte, 32))},
			func(store string) error { return db.writeRecord(ctx, store, map[string]any{propKey: "x"}) },
			func(store string) bool { return db.stores[store]["x"] != nil }},
	}
	for _, b := range backends {
		for _, st := range all {
			if err := b.seed(st); err != nil {
				t.Fatal(err)
			}
		}
		if err := opened(t, b.kv).Clear(ctx); err != nil {
			t.Fatal(err)
		}
		for _, st := range all {
			if got, want := b.has(st), st == storeKeys; got != want {
				t.Errorf("%s: after Clear, a record in %s: %v; want %v", b.name, st, got, want)
			}
		}
	}
}

// TestCorruptRecordIsAStorageError: a record that is not the JSON of its
// kind is a "storage" error, not an absent record.
func TestCorruptRecordIsAStorageError(t *testing.T) {
	ctx := ctxT(t)
	db := &memKV{}
	s := opened(t, db)
	if err := db.put(ctx, storeGrants, "r", []byte("{not json")); err != nil {
		t.Fatal(err)
	}
	g, err := s.GetGrant(ctx, "r")
	if g != nil || mcperr.CodeOf(err, "") != mcperr.Storage || !strings.Contains(err.Error(), "corrupt record in grants") {
		t.Errorf("GetGrant = %v, %v; want a storage error about a corrupt record in grants", g, err)
	}
}

// TestDPoPKeysAreMadeOnce: the clients of a page, asking at once, share one
// DPoP key set.
func TestDPoPKeysAreMadeOnce(t *testing.T) {
	s := &Store{}
	var made atomic.Int32
	newKeys := func() oauth.DPoPKeys {
		made.Add(1)
		return oauth.NewMemoryDPoPKeys()
	}
	got := make(chan oauth.DPoPKeys, 8)
	for range 8 {
		go func() { got <- s.dpopKeys(newKeys) }()
	}
	first := <-got
	for range 7 {
		if k := <-got; k != first {
			t.Fatal("two callers got different DPoP key sets")
		}
	}
	if n := made.Load(); n != 1 {
		t.Errorf("the key set was made %d times; want once", n)
	}
}
