package indexeddb

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/mcpwasm/mcpwasm/mcperr"
	"github.com/mcpwasm/mcpwasm/oauth"
)

// fullKV is a database that refuses every write for lack of room once
// full is set, as IndexedDB does with a QuotaExceededError.
type fullKV struct {
	memKV
	full   atomic.Bool
	writes atomic.Int32
}

func (f *fullKV) put(ctx context.Context, store, key string, data []byte) error {
	if f.full.Load() {
		return storageErr(fmt.Errorf("%w: QuotaExceededError", errFull), "cannot write "+store)
	}
	f.writes.Add(1)
	return f.memKV.put(ctx, store, key, data)
}

// TestFullStorageKeepsSignInsInMemory: a write IndexedDB refuses for lack
// of room is kept in memory instead, the page is told once why (sign-ins
// will not outlive the tab), what the database held still reads, and a
// deletion in the page hides the database's record.
func TestFullStorageKeepsSignInsInMemory(t *testing.T) {
	ctx := ctxT(t)
	db := &fullKV{}
	var told []error
	s := newStore(func(context.Context) (kv, error) { return db, nil }, func(err error) { told = append(told, err) })

	old := fixtureGrant()
	old.Resource = "https://old.example.com/mcp"
	if err := s.PutGrant(ctx, old); err != nil {
		t.Fatal(err)
	}
	if err := s.PutConversation(ctx, "c1", []byte(`{"id":"c1","v":1}`)); err != nil {
		t.Fatal(err)
	}
	db.full.Store(true)
	writes := db.writes.Load()

	g := fixtureGrant()
	if err := s.PutGrant(ctx, g); err != nil {
		t.Fatalf("PutGrant on a full database = %v; want it kept in memory", err)
	}
	if got, err := s.GetGrant(ctx, g.Resource); err != nil || got == nil || got.AccessToken != g.AccessToken {
		t.Errorf("GetGrant of the grant kept in memory = %+v, %v", got, err)
	}
	if got, err := s.GetGrant(ctx, old.Resource); err != nil || got == nil {
		t.Errorf("GetGrant of the database's grant = %+v, %v; want it still read", got, err)
	}
	if err := s.PutClient(ctx, fixtureClient()); err != nil {
		t.Errorf("PutClient after the spill = %v", err)
	}
	if n := db.writes.Load(); n != writes {
		t.Errorf("%d writes reached the full database after the spill; want none", n-writes)
	}
	if len(told) != 1 {
		t.Fatalf("onFallback ran %d times; want once", len(told))
	}
	if mcperr.CodeOf(told[0], "") != mcperr.Storage || !strings.Contains(told[0].Error(), "will not be kept after this tab closes") || !errors.Is(told[0], errFull) {
		t.Errorf("onFallback heard %q; want a storage error saying sign-ins will not be kept after this tab closes", told[0])
	}
	if err := s.Fallback(); err != told[0] {
		t.Errorf("Fallback() = %v; want the reason the page was told", err)
	}
	if s.Shared() {
		t.Error("Shared() = true while this page's writes stay in memory")
	}

	if err := s.DeleteGrant(ctx, old.Resource); err != nil {
		t.Fatal(err)
	}
	if got, err := s.GetGrant(ctx, old.Resource); err != nil || got != nil {
		t.Errorf("GetGrant after DeleteGrant = %+v, %v; want none", got, err)
	}

	if err := s.PutConversation(ctx, "c1", []byte(`{"id":"c1","v":2}`)); err != nil {
		t.Fatal(err)
	}
	if err := s.PutConversation(ctx, "c2", []byte(`{"id":"c2","v":1}`)); err != nil {
		t.Fatal(err)
	}
	all, err := s.ListConversations(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range all {
		got = append(got, string(c))
	}
	if len(got) != 2 || !strings.Contains(strings.Join(got, " "), `{"id":"c1","v":2}`) {
		t.Errorf("ListConversations = %v; want c1 (as written in this page) and c2, once each", got)
	}
}

// TestDeletedDatabaseOpensAnew: when another page deletes the database
// (the site's data cleared, storage evicted), the next use opens a new,
// empty one: signed out, not failing, and not on memory.
func TestDeletedDatabaseOpensAnew(t *testing.T) {
	ctx := ctxT(t)
	var opens atomic.Int32
	dbs := []*memKV{{}, {}}
	s := newStore(func(context.Context) (kv, error) { return dbs[opens.Add(1)-1], nil },
		func(err error) { t.Errorf("onFallback(%v) after a deletion; want a new database", err) })
	if err := s.PutGrant(ctx, fixtureGrant()); err != nil {
		t.Fatal(err)
	}
	s.closed(&memKV{}, nil) // another database's close changes nothing
	if n := opens.Load(); n != 1 {
		t.Fatalf("opened %d times", n)
	}
	s.closed(dbs[0], nil)
	if g, err := s.GetGrant(ctx, fixtureGrant().Resource); g != nil || err != nil {
		t.Errorf("GetGrant after the deletion = %+v, %v; want none", g, err)
	}
	if n := opens.Load(); n != 2 {
		t.Errorf("opened %d times; want twice (again after the deletion)", n)
	}
	if err := s.PutGrant(ctx, fixtureGrant()); err != nil {
		t.Fatal(err)
	}
	if _, found, _ := dbs[1].get(ctx, storeGrants, fixtureGrant().Resource); !found {
		t.Error("a sign-in after the deletion is not in the new database")
	}
}

// TestNewerBuildTakesTheDatabase: when a newer build upgrades the
// database under this page, the page says why once, keeps its sign-ins in
// memory from then on, and writes nothing more to the database.
func TestNewerBuildTakesTheDatabase(t *testing.T) {
	ctx := ctxT(t)
	db := &fullKV{}
	var told []error
	s := newStore(func(context.Context) (kv, error) { return db, nil }, func(err error) { told = append(told, err) })
	if err := s.Fallback(); err != nil {
		t.Fatal(err)
	}
	writes := db.writes.Load()
	s.closed(db, newerErr(errors.New("another page upgraded the database to version 4"), 3))
	g := &oauth.Grant{Resource: "https://mcp.example.com/mcp", AccessToken: "at", TokenType: "Bearer"}
	if err := s.PutGrant(ctx, g); err != nil {
		t.Fatal(err)
	}
	if got, err := s.GetGrant(ctx, g.Resource); err != nil || got == nil {
		t.Errorf("GetGrant = %+v, %v; want the grant, from memory", got, err)
	}
	if n := db.writes.Load(); n != writes {
		t.Errorf("%d writes reached the newer build's database", n-writes)
	}
	if len(told) != 1 || !strings.Contains(told[0].Error(), "a newer version of this app stored these sign-ins") || !strings.Contains(told[0].Error(), "reload") {
		t.Errorf("onFallback heard %v; want once, that a newer version stored the sign-ins and to reload", told)
	}
}
