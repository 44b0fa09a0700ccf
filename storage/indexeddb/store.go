// Package indexeddb is the browser's [oauth.Store]: grants, client
// registrations, cached metadata and pending redirect flows in IndexedDB;
// and an agent's stored conversations (agent.ConversationStore) in the
// same database.
//
// Every write is one IndexedDB transaction, so a value is stored whole or
// not at all, and its failure is returned. Records that hold secrets (grants,
// registrations, pending flows) and conversations are encrypted at rest with AES-GCM under a
// non-extractable WebCrypto key kept in the same database: the raw database
// never holds a token in plaintext, and script on another origin cannot read
// it. DPoP keys ([Store.DPoPKeys]) are WebCrypto key pairs with a
// non-extractable private key, stored as CryptoKey objects. The schema is
// versioned; [migrations] upgrades older databases.
//
// The database is opened on first use, or ahead of it by [Store.Warm]
// (the browser build warms it when a client that keeps its records here
// is made), so a page that makes no such client never touches it. When
// IndexedDB cannot be opened (private mode, storage disabled, a blocked
// upgrade) or its schema is newer than this build's
// (the database's version, which [migrations] counts), the store keeps its
// records in memory for this page instead and says why, once, through the
// fallback callback; a newer build's database is neither read nor
// written. When a write fails for lack of room, that write and the later
// ones stay in memory over what the database holds. When another page
// deletes the database, or a newer build upgrades it, the connection steps
// aside at once; after a deletion, or when the browser closes the
// connection itself, the next use opens the database again.
//
// Only idb.go and dpop.go touch JavaScript; the store, its memory fallback
// and the encoding of records are plain Go, so that they are tested natively.
package indexeddb

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/mcpwasm/mcpwasm/mcperr"
	"github.com/mcpwasm/mcpwasm/oauth"
)

// The object stores (their records: record.go).
const (
	storeGrants   = "grants"
	storeClients  = "clients"
	storeMetadata = "metadata"
	storePending  = "pending"
	storeKeys     = "keys"
	storeDPoP     = "dpop"
	// storeConversations holds an agent's stored conversations
	// (agent.ConversationStore), sealed like the grants.
	storeConversations = "conversations"
	// storeTasks holds the tasks clients started and have not seen end
	// (mcpclient.TaskStore), sealed like the grants: they name sessions.
	storeTasks = "tasks"
	// storeViews holds what MCP App views kept in their storage
	// (apps.render's stateKey), sealed like the conversations they
	// belong to.
	storeViews = "views"
)

// Store is an [oauth.Store] over IndexedDB (see the package doc).
type Store struct {
	open       func(context.Context) (kv, error) // the database; an error means memory instead
	onFallback func(error)

	mu       sync.Mutex // held while the database opens
	kv       kv         // nil until first use, and after the database was deleted
	fallback error      // why IndexedDB is not used; nil while it is
	told     bool       // onFallback has run

	dpop struct {
		once   sync.Once
		keys   oauth.DPoPKeys
		copies keyCache[oauth.DPoPKey] // the keys read from the database
	}
}

// dpopKeys returns the store's DPoP key set, made by newKeys on first use:
// every client of the page shares one (DPoPKeys, in the browser build).
func (s *Store) dpopKeys(newKeys func() oauth.DPoPKeys) oauth.DPoPKeys {
	s.dpop.once.Do(func() {
		k := newKeys()
		s.mu.Lock() // Clear reads it without the once
		s.dpop.keys = k
		s.mu.Unlock()
	})
	return s.dpop.keys
}

// KeysChanged drops this runtime's copies of the DPoP keys, so that the
// next proof of each reads it from the database again: call it when
// another page may have deleted or replaced one (it announced a grant
// change, [oauth.Registry.Apply]). Deletions made through this store drop
// them by themselves.
func (s *Store) KeysChanged() { s.dpop.copies.dropAll() }

var (
	_ oauth.Store       = (*Store)(nil)
	_ oauth.SharedStore = (*Store)(nil)
)

// kv holds the records, as JSON, by object store and key.
type kv interface {
	get(ctx context.Context, store, key string) (data []byte, found bool, err error)
	put(ctx context.Context, store, key string, data []byte) error
	del(ctx context.Context, store, key string) error
	clear(ctx context.Context, store string) error
	all(ctx context.Context, store string) (map[string][]byte, error) // by key
}

func storageErr(err error, what string) error {
	return &mcperr.Error{Code: mcperr.Storage, Msg: "indexeddb: " + what, Err: err}
}

// newStore returns a store that calls open on first use; nothing is
// opened yet.
func newStore(open func(context.Context) (kv, error), onFallback func(error)) *Store {
	return &Store{open: open, onFallback: onFallback}
}

// backend opens the database on first use (again after it was deleted),
// or falls back to memory.
func (s *Store) backend(context.Context) kv {
	s.mu.Lock()
	s.openLocked()
	b, err := s.kv, s.fallback
	s.mu.Unlock()
	if err != nil {
		s.tell(err)
	}
	return b
}

// Warm opens the database now unless it is open, so that its first use
// need not wait for IndexedDB (creating the database on a first visit
// takes tens of milliseconds): run it in a goroutine when a use is
// coming. Why IndexedDB cannot be used, if it cannot, is not told here
// but by the first use, to the clients there are then.
func (s *Store) Warm() {
	s.mu.Lock()
	s.openLocked()
	s.mu.Unlock()
}

// openLocked opens the database, or falls back to memory, unless that
// was done; s.mu is held.
func (s *Store) openLocked() {
	if s.kv != nil {
		return
	}
	// Not the caller's context: a caller that gives up must not leave
	// the whole page on the memory fallback.
	b, err := s.open(context.Background())
	if err != nil {
		s.kv, s.fallback = &memKV{}, err
	} else {
		s.kv = b
	}
}

// tell runs onFallback, once in the page's life.
func (s *Store) tell(err error) {
	s.mu.Lock()
	told := s.told
	s.told = true
	s.mu.Unlock()
	if !told && s.onFallback != nil {
		s.onFallback(err)
	}
}

// Fallback opens the store if needed and reports why it keeps its records
// in memory, or nil when they are in IndexedDB.
func (s *Store) Fallback() error {
	s.backend(context.Background())
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.fallback
}

// put stores data, in memory from now on when IndexedDB is full
// ([errFull]): the page goes on, and says so through the fallback.
func (s *Store) put(ctx context.Context, store, key string, data []byte) error {
	b := s.backend(ctx)
	err := b.put(ctx, store, key, data)
	if errors.Is(err, errFull) {
		return s.spill(b, err).put(ctx, store, key, data)
	}
	return err
}

// spill makes b, which refused a write for lack of room, an [overlayKV]:
// this page's writes stay in memory, its reads still find what IndexedDB
// holds.
func (s *Store) spill(b kv, cause error) kv {
	reason := fullErr(cause)
	s.mu.Lock()
	if s.kv == b {
		s.kv, s.fallback = &overlayKV{base: b}, reason
	}
	b, err := s.kv, s.fallback
	s.mu.Unlock()
	if err != nil {
		s.tell(err)
	}
	return b
}

// fullErr is the error of a database that has no room left.
func fullErr(cause error) error {
	return &mcperr.Error{Code: mcperr.Storage, Err: cause,
		Msg: "indexeddb: the browser's storage for this site is full (QuotaExceededError), so sign-ins are kept in memory and will not be kept after this tab closes; free some space (site data in the browser's settings), then reload"}
}

// newerErr is the error of a database that a newer build of the app
// upgraded past version, the schema this build knows.
func newerErr(cause error, version int) error {
	return &mcperr.Error{Code: mcperr.Storage, Err: cause,
		Msg: fmt.Sprintf("indexeddb: a newer version of this app stored these sign-ins (a database schema newer than version %d), so this page leaves them untouched and keeps its sign-ins in memory until it closes; reload the page to get the newer version", version)}
}

// closed is called when the database b is taken away: deleted by
// another page, or its connection closed by the browser (storage evicted
// or cleared: the next use opens it again, new and empty after a
// deletion, so this page is signed out), or upgraded by a newer build
// (newer: memory from now on, nothing of the newer build's records
// touched). Either way the DPoP key copies are dropped.
func (s *Store) closed(b kv, newer error) {
	s.mu.Lock()
	if o, ok := s.kv.(*overlayKV); ok && o.base == b {
		b = o
	}
	if s.kv != b {
		s.mu.Unlock()
		return
	}
	// The keys went with the database.
	s.dpop.copies.dropAll()
	if newer == nil {
		s.kv = nil
		s.mu.Unlock()
		return
	}
	s.kv, s.fallback = &memKV{}, newer
	s.mu.Unlock()
	s.tell(newer)
}

// Shared implements [oauth.SharedStore]: records in IndexedDB are seen by
// the other pages of the origin; the memory fallback's are not.
func (s *Store) Shared() bool { return s.Fallback() == nil }

// Clear deletes every grant, registration, cached metadata, pending flow,
// DPoP key, stored conversation and kept task (the encryption key stays).
func (s *Store) Clear(ctx context.Context) error {
	b := s.backend(ctx)
	// Dropped after the deletion too: a proof that read a key while
	// the deletion was under way must not keep it.
	defer s.dpop.copies.dropAll()
	s.dpop.copies.dropAll()
	s.mu.Lock()
	keys := s.dpop.keys
	s.mu.Unlock()
	if m, ok := keys.(interface{ clear() }); ok {
		m.clear() // the keys the memory fallback holds
	}
	for _, st := range []string{storeGrants, storeClients, storeMetadata, storePending, storeDPoP, storeConversations, storeTasks, storeViews} {
		if err := b.clear(ctx, st); err != nil {
			return err
		}
	}
	return nil
}

// memKV is the fallback: records in memory, for this page only.
type memKV struct {
	mu sync.Mutex
	m  map[string][]byte
}

func (m *memKV) get(_ context.Context, store, key string) ([]byte, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	v, ok := m.m[store+"\x00"+key]
	return v, ok, nil
}

func (m *memKV) put(_ context.Context, store, key string, data []byte) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.m == nil {
		m.m = map[string][]byte{}
	}
	m.m[store+"\x00"+key] = data
	return nil
}

func (m *memKV) del(_ context.Context, store, key string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.m, store+"\x00"+key)
	return nil
}

func (m *memKV) clear(_ context.Context, store string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	for k := range m.m {
		if strings.HasPrefix(k, store+"\x00") {
			delete(m.m, k)
		}
	}
	return nil
}

func (m *memKV) all(_ context.Context, store string) (map[string][]byte, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := map[string][]byte{}
	for k, v := range m.m {
		if key, ok := strings.CutPrefix(k, store+"\x00"); ok {
			out[key] = v
		}
	}
	return out, nil
}

// overlayKV is a database that refused a write for lack of room: this
// page's writes and deletions are kept in memory over it; reads fall
// through to what the database holds.
type overlayKV struct {
	base kv
	mem  memKV

	mu      sync.Mutex
	gone    map[string]bool // store\x00key deleted in this page
	cleared map[string]bool // stores cleared in this page
}

func (o *overlayKV) hidden(store, key string) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.cleared[store] || o.gone[store+"\x00"+key]
}

func (o *overlayKV) get(ctx context.Context, store, key string) ([]byte, bool, error) {
	if v, ok, _ := o.mem.get(ctx, store, key); ok {
		return v, true, nil
	}
	if o.hidden(store, key) {
		return nil, false, nil
	}
	return o.base.get(ctx, store, key)
}

func (o *overlayKV) put(ctx context.Context, store, key string, data []byte) error {
	o.mu.Lock()
	delete(o.gone, store+"\x00"+key)
	o.mu.Unlock()
	return o.mem.put(ctx, store, key, data)
}

func (o *overlayKV) del(ctx context.Context, store, key string) error {
	o.mu.Lock()
	if o.gone == nil {
		o.gone = map[string]bool{}
	}
	o.gone[store+"\x00"+key] = true
	o.mu.Unlock()
	_ = o.base.del(ctx, store, key) // a deletion frees room; if it fails, the record stays hidden here
	return o.mem.del(ctx, store, key)
}

func (o *overlayKV) clear(ctx context.Context, store string) error {
	o.mu.Lock()
	if o.cleared == nil {
		o.cleared = map[string]bool{}
	}
	o.cleared[store] = true
	o.mu.Unlock()
	_ = o.base.clear(ctx, store)
	return o.mem.clear(ctx, store)
}

// all lists the page's records over the database's.
func (o *overlayKV) all(ctx context.Context, store string) (map[string][]byte, error) {
	out, _ := o.mem.all(ctx, store)
	if o.hidden(store, "") {
		return out, nil
	}
	base, err := o.base.all(ctx, store)
	if err != nil {
		return out, nil // the page's own records still count
	}
	for key, v := range base {
		if _, mine := out[key]; !mine && !o.hidden(store, key) {
			out[key] = v
		}
	}
	return out, nil
}

func clientKey(issuer, redirectURI string) string { return issuer + "\x00" + redirectURI }

// GetGrant implements [oauth.GrantStore].
func (s *Store) GetGrant(ctx context.Context, resource string) (*oauth.Grant, error) {
	return load[oauth.Grant](ctx, s, storeGrants, resource)
}

// PutGrant implements [oauth.GrantStore].
func (s *Store) PutGrant(ctx context.Context, g *oauth.Grant) error {
	return save(ctx, s, storeGrants, g.Resource, g)
}

// DeleteGrant implements [oauth.GrantStore].
func (s *Store) DeleteGrant(ctx context.Context, resource string) error {
	return s.backend(ctx).del(ctx, storeGrants, resource)
}

// GetClient implements [oauth.RegistrationStore].
func (s *Store) GetClient(ctx context.Context, issuer, redirectURI string) (*oauth.ClientRegistration, error) {
	return load[oauth.ClientRegistration](ctx, s, storeClients, clientKey(issuer, redirectURI))
}

// PutClient implements [oauth.RegistrationStore].
func (s *Store) PutClient(ctx context.Context, c *oauth.ClientRegistration) error {
	return save(ctx, s, storeClients, clientKey(c.Issuer, c.RedirectURI), c)
}

// DeleteClient implements [oauth.RegistrationStore].
func (s *Store) DeleteClient(ctx context.Context, issuer, redirectURI string) error {
	return s.backend(ctx).del(ctx, storeClients, clientKey(issuer, redirectURI))
}

// GetMetadata implements [oauth.MetadataStore]. Metadata is public: it
// is stored as plain JSON.
func (s *Store) GetMetadata(ctx context.Context, key string) (*oauth.CachedMetadata, error) {
	return load[oauth.CachedMetadata](ctx, s, storeMetadata, key)
}

// PutMetadata implements [oauth.MetadataStore].
func (s *Store) PutMetadata(ctx context.Context, m *oauth.CachedMetadata) error {
	return save(ctx, s, storeMetadata, m.Key, m)
}

// DeleteMetadata implements [oauth.MetadataStore].
func (s *Store) DeleteMetadata(ctx context.Context, key string) error {
	return s.backend(ctx).del(ctx, storeMetadata, key)
}

// GetPending implements [oauth.PendingStore].
func (s *Store) GetPending(ctx context.Context, state string) (*oauth.PendingFlow, error) {
	return load[oauth.PendingFlow](ctx, s, storePending, state)
}

// PutPending implements [oauth.PendingStore].
func (s *Store) PutPending(ctx context.Context, p *oauth.PendingFlow) error {
	return save(ctx, s, storePending, p.State, p)
}

// DeletePending implements [oauth.PendingStore].
func (s *Store) DeletePending(ctx context.Context, state string) error {
	return s.backend(ctx).del(ctx, storePending, state)
}

// load reads the record of key as a T; nil when there is none.
func load[T any](ctx context.Context, s *Store, store, key string) (*T, error) {
	data, ok, err := s.backend(ctx).get(ctx, store, key)
	if err != nil || !ok {
		return nil, err
	}
	var v T
	if err := json.Unmarshal(data, &v); err != nil {
		return nil, storageErr(err, "corrupt record in "+store)
	}
	return &v, nil
}

// save stores v as the record of key, whole or not at all.
func save(ctx context.Context, s *Store, store, key string, v any) error {
	data, err := json.Marshal(v)
	if err != nil {
		return storageErr(err, "cannot encode")
	}
	return s.put(ctx, store, key, data)
}

// GetConversation implements agent.ConversationStore: the conversation's
// JSON, sealed at rest.
func (s *Store) GetConversation(ctx context.Context, id string) ([]byte, bool, error) {
	return s.backend(ctx).get(ctx, storeConversations, id)
}

// PutConversation implements agent.ConversationStore.
func (s *Store) PutConversation(ctx context.Context, id string, data []byte) error {
	return s.put(ctx, storeConversations, id, data)
}

// DeleteConversation implements agent.ConversationStore.
func (s *Store) DeleteConversation(ctx context.Context, id string) error {
	return s.backend(ctx).del(ctx, storeConversations, id)
}

// ListConversations implements agent.ConversationStore: every stored
// conversation's JSON, in no order; a record that cannot be unsealed is
// left out.
func (s *Store) ListConversations(ctx context.Context) ([][]byte, error) {
	return s.values(ctx, storeConversations)
}

// values returns every value of store, in no order, leaving out records
// that cannot be unsealed.
func (s *Store) values(ctx context.Context, store string) ([][]byte, error) {
	all, err := s.backend(ctx).all(ctx, store)
	out := make([][]byte, 0, len(all))
	for _, v := range all {
		out = append(out, v)
	}
	return out, err
}

// GetViewState returns the storage a view kept under key (its JSON).
func (s *Store) GetViewState(ctx context.Context, key string) ([]byte, bool, error) {
	return s.backend(ctx).get(ctx, storeViews, key)
}

// PutViewState keeps a view's storage (its JSON) under key, sealed at rest.
func (s *Store) PutViewState(ctx context.Context, key string, data []byte) error {
	return s.put(ctx, storeViews, key, data)
}

// DeleteViewStates deletes the views' storage kept under keys that start
// with prefix (every one for ""), and returns how many it deleted.
func (s *Store) DeleteViewStates(ctx context.Context, prefix string) (int, error) {
	b := s.backend(ctx)
	all, err := b.all(ctx, storeViews)
	if err != nil {
		return 0, err
	}
	n := 0
	for k := range all {
		if !strings.HasPrefix(k, prefix) {
			continue
		}
		if err := b.del(ctx, storeViews, k); err != nil {
			return n, err
		}
		n++
	}
	return n, nil
}

// PutTask implements mcpclient.TaskStore: the task's JSON, sealed at rest.
func (s *Store) PutTask(ctx context.Context, key string, data []byte) error {
	return s.put(ctx, storeTasks, key, data)
}

// DeleteTask implements mcpclient.TaskStore.
func (s *Store) DeleteTask(ctx context.Context, key string) error {
	return s.backend(ctx).del(ctx, storeTasks, key)
}

// ListTasks implements mcpclient.TaskStore: every kept task's JSON, in no
// order; a record that cannot be unsealed is left out.
func (s *Store) ListTasks(ctx context.Context) ([][]byte, error) {
	return s.values(ctx, storeTasks)
}
