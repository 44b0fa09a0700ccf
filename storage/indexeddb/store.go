//go:build js && wasm

// Package indexeddb is the browser's [oauth.Store]: grants, client
// registrations, cached metadata and pending redirect flows in IndexedDB.
//
// Every write is one IndexedDB transaction, so a value is stored whole or
// not at all, and its failure is returned. Records that hold secrets (grants,
// registrations, pending flows) are encrypted at rest with AES-GCM under a
// non-extractable WebCrypto key kept in the same database: the raw database
// never holds a token in plaintext, and script on another origin cannot read
// it. DPoP keys ([Store.DPoPKeys]) are WebCrypto key pairs with a
// non-extractable private key, stored as CryptoKey objects. The schema is
// versioned; [migrations] upgrades older databases.
//
// The database is opened on first use, so a page that never signs in never
// touches it. When IndexedDB cannot be opened (private mode, storage
// disabled, a blocked upgrade), the store keeps its records in memory for
// this page instead and says why, once, through the fallback callback.
package indexeddb

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/mcpwasm/mcpwasm/jsbridge"
	"github.com/mcpwasm/mcpwasm/mcperr"
	"github.com/mcpwasm/mcpwasm/oauth"
)

// The object stores; every record is {k: key, iv?, ct?, json?}.
const (
	storeGrants   = "grants"
	storeClients  = "clients"
	storeMetadata = "metadata"
	storePending  = "pending"
	storeKeys     = "keys"

	keyID = "aes-gcm-1" // the record of the wrapping key in storeKeys
)

// migrations[i] upgrades a database from version i to i+1. The database
// version is len(migrations).
var migrations = []func(db jsbridge.Value) error{
	// 0 → 1: the first schema.
	func(db jsbridge.Value) error {
		for _, name := range []string{storeGrants, storeClients, storeMetadata, storePending, storeKeys} {
			opts, err := jsbridge.NewObject(map[string]any{"keyPath": "k"})
			if err != nil {
				return err
			}
			if _, err := db.Call("createObjectStore", name, opts); err != nil {
				return err
			}
		}
		return nil
	},
	// 1 → 2: the DPoP key pairs (see DPoPKeys).
	func(db jsbridge.Value) error {
		opts, err := jsbridge.NewObject(map[string]any{"keyPath": "k"})
		if err != nil {
			return err
		}
		_, err = db.Call("createObjectStore", storeDPoP, opts)
		return err
	},
}

// Store is an [oauth.Store] over IndexedDB (see the package doc).
type Store struct {
	name       string
	onFallback func(error)

	once     sync.Once
	kv       kv
	fallback error // why IndexedDB is not used; nil while it is

	dpopOnce sync.Once
	dpop     *idbDPoPKeys
}

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
}

func storageErr(err error, what string) error {
	return &mcperr.Error{Code: mcperr.Storage, Msg: "indexeddb: " + what, Err: err}
}

// New returns the store of database name; nothing is opened yet.
// onFallback, when set, is called once if IndexedDB cannot be opened and
// memory is used instead.
func New(name string, onFallback func(error)) *Store {
	return &Store{name: name, onFallback: onFallback}
}

// backend opens the database on first use, or falls back to memory.
func (s *Store) backend(context.Context) kv {
	s.once.Do(func() {
		// Not the caller's context: a caller that gives up must not
		// leave the whole page on the memory fallback.
		db, err := open(context.Background(), s.name)
		if err != nil {
			s.kv, s.fallback = &memKV{}, err
			if s.onFallback != nil {
				s.onFallback(err)
			}
			return
		}
		s.kv = &idbKV{db: db}
	})
	return s.kv
}

// Fallback opens the store if needed and reports why it keeps its records
// in memory, or nil when they are in IndexedDB.
func (s *Store) Fallback() error {
	s.backend(context.Background())
	return s.fallback
}

// Shared implements [oauth.SharedStore]: records in IndexedDB are seen by
// the other pages of the origin; the memory fallback's are not.
func (s *Store) Shared() bool { return s.Fallback() == nil }

// Clear deletes every grant, registration, cached metadata, pending flow
// and DPoP key (the encryption key stays).
func (s *Store) Clear(ctx context.Context) error {
	b := s.backend(ctx)
	for _, st := range []string{storeGrants, storeClients, storeMetadata, storePending, storeDPoP} {
		if err := b.clear(ctx, st); err != nil {
			return err
		}
	}
	return nil
}

// open opens (creating or upgrading) the database name. It fails with a
// "storage" error when IndexedDB is unavailable.
func open(ctx context.Context, name string) (jsbridge.Value, error) {
	fail := func(err error, what string) (jsbridge.Value, error) {
		return jsbridge.Undefined(), storageErr(err, what)
	}
	idb, err := jsbridge.Global().Get("indexedDB")
	if err != nil || idb.IsUndefined() || idb.IsNull() {
		return fail(fmt.Errorf("indexedDB is not available"), "cannot open the database")
	}
	req, err := idb.Call("open", name, len(migrations))
	if err != nil {
		return fail(err, "indexedDB.open threw (storage disabled?)")
	}
	upgradeErr := make(chan error, 1)
	onUpgrade, err := jsbridge.Func(func(args []jsbridge.Value) (any, error) {
		ev := jsbridge.Arg(args, 0)
		oldV, _ := ev.Get("oldVersion")
		old, _ := oldV.Int()
		db, _ := req.Get("result")
		for v := old; v < len(migrations); v++ {
			if err := migrations[v](db); err != nil {
				upgradeErr <- fmt.Errorf("migrating from version %d: %w", v, err)
				return nil, nil
			}
		}
		return nil, nil
	})
	if err != nil {
		return fail(err, "cannot open the database")
	}
	defer onUpgrade.Release()
	if err := req.Set("onupgradeneeded", onUpgrade); err != nil {
		return fail(err, "cannot open the database")
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second) // "blocked" never settles
	defer cancel()
	db, err := jsbridge.AwaitEvents(ctx, req, "result", []string{"success"}, []string{"error", "blocked"})
	if err != nil {
		return fail(err, "cannot open the database")
	}
	select {
	case err := <-upgradeErr:
		return fail(err, "cannot upgrade the database")
	default:
	}
	// A newer page in another tab wants to upgrade the schema: step aside
	// (this page's store then fails with "storage" errors; a reload fixes it).
	onVersionChange, err := jsbridge.Func(func([]jsbridge.Value) (any, error) {
		_, _ = db.Call("close")
		return nil, nil
	})
	if err == nil {
		_ = db.Set("onversionchange", onVersionChange)
	}
	return db, nil
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

// idbKV is IndexedDB: records of the secret-holding stores are sealed with
// AES-GCM; metadata is stored as plain JSON.
type idbKV struct {
	db jsbridge.Value // IDBDatabase

	keyMu sync.Mutex
	key   jsbridge.Value // CryptoKey, non-extractable AES-GCM; loaded on first use
	keyOK bool
}

func (s *idbKV) get(ctx context.Context, store, key string) ([]byte, bool, error) {
	if store == storeMetadata {
		rec, err := s.getRecord(ctx, store, key)
		if err != nil || rec.IsUndefined() {
			return nil, false, err
		}
		j, _ := rec.Get("json")
		str, err := jsbridge.String(j, "metadata record")
		if err != nil {
			return nil, false, storageErr(err, "corrupt metadata record")
		}
		return []byte(str), true, nil
	}
	return s.getSealed(ctx, store, key)
}

func (s *idbKV) put(ctx context.Context, store, key string, data []byte) error {
	if store == storeMetadata {
		rec, err := jsbridge.NewObject(map[string]any{"k": key, "json": string(data)})
		if err != nil {
			return storageErr(err, "cannot encode")
		}
		return s.write(ctx, store, "put", rec)
	}
	return s.putSealed(ctx, store, key, data)
}

func (s *idbKV) del(ctx context.Context, store, key string) error {
	return s.write(ctx, store, "delete", key)
}

func (s *idbKV) clear(ctx context.Context, store string) error {
	return s.write(ctx, store, "clear", nil)
}

// cryptoKey returns the wrapping key, loading it, or generating and storing
// it, on first use: a page that never stores a secret never pays for it.
func (s *idbKV) cryptoKey(ctx context.Context) (jsbridge.Value, error) {
	s.keyMu.Lock()
	defer s.keyMu.Unlock()
	if !s.keyOK {
		if err := s.loadKey(ctx); err != nil {
			return jsbridge.Undefined(), err
		}
		s.keyOK = true
	}
	return s.key, nil
}

// loadKey reads the wrapping key, generating and storing it when there is none.
func (s *idbKV) loadKey(ctx context.Context) error {
	rec, err := s.getRecord(ctx, storeKeys, keyID)
	if err != nil {
		return err
	}
	if rec.IsUndefined() {
		subtle, err := subtleCrypto()
		if err != nil {
			return err
		}
		alg, _ := jsbridge.NewObject(map[string]any{"name": "AES-GCM", "length": 256})
		usages := []any{"encrypt", "decrypt"}
		p, err := subtle.Call("generateKey", alg, false, usages)
		if err != nil {
			return storageErr(err, "cannot create the encryption key")
		}
		key, err := jsbridge.Await(ctx, p)
		if err != nil {
			return storageErr(err, "cannot create the encryption key")
		}
		rec, _ = jsbridge.NewObject(map[string]any{"k": keyID, "key": key})
		// add, not put: when another tab won the race, use its key.
		if werr := s.write(ctx, storeKeys, "add", rec); werr != nil {
			rec, err = s.getRecord(ctx, storeKeys, keyID)
			if err != nil || rec.IsUndefined() {
				return keyStoreErr(werr, "the encryption key of the stored sign-ins")
			}
		}
	}
	key, err := rec.Get("key")
	if err != nil || key.IsUndefined() {
		return storageErr(err, "the stored encryption key is unreadable")
	}
	s.key = key
	return nil
}

// keyStoreErr is the error of a CryptoKey (what) that IndexedDB would not
// store (werr, the write's error). Without its key no sign-in can be
// stored or read, so none can start; where the browser cannot clone a
// CryptoKey at all in this context, the error says which runtime can.
func keyStoreErr(werr error, what string) error {
	msg := "indexeddb: cannot store " + what + " (a non-extractable WebCrypto key), so sign-in cannot start"
	switch {
	case werr == nil || !strings.Contains(werr.Error(), "cloned"):
	case inWorker():
		msg += `; this browser cannot store a WebCrypto key from this worker (as in Safari's SharedWorker): load({ runtime: "worker" }) or load({ runtime: "main" }) can`
	default:
		msg += `; this browser cannot store a WebCrypto key here: the client option storage: "memory" keeps sign-ins for this page only`
	}
	return &mcperr.Error{Code: mcperr.Storage, Msg: msg, Err: werr}
}

// inWorker says whether this code runs in a worker (of any kind).
func inWorker() bool {
	scope, err := jsbridge.Global().Get("WorkerGlobalScope")
	if err != nil || scope.IsUndefined() {
		return false
	}
	ok, _ := jsbridge.Global().InstanceOf(scope)
	return ok
}

func subtleCrypto() (jsbridge.Value, error) {
	c, err := jsbridge.Global().Get("crypto")
	if err == nil {
		var s jsbridge.Value
		if s, err = c.Get("subtle"); err == nil && !s.IsUndefined() {
			return s, nil
		}
	}
	return jsbridge.Undefined(), storageErr(fmt.Errorf("crypto.subtle is unavailable (not a secure context?)"), "no WebCrypto")
}

// get reads one record (undefined when absent).
func (s *idbKV) getRecord(ctx context.Context, store, key string) (jsbridge.Value, error) {
	tx, err := s.db.Call("transaction", store, "readonly")
	if err != nil {
		return jsbridge.Undefined(), storageErr(err, "cannot start a read")
	}
	os, _ := tx.Call("objectStore", store)
	req, err := os.Call("get", key)
	if err != nil {
		return jsbridge.Undefined(), storageErr(err, "cannot read")
	}
	v, err := jsbridge.AwaitEvents(ctx, req, "result", []string{"success"}, []string{"error"})
	if err != nil {
		return jsbridge.Undefined(), storageErr(err, "cannot read "+store)
	}
	return v, nil
}

// write runs one put/add/delete/clear in its own transaction and waits
// until the transaction commits.
func (s *idbKV) write(ctx context.Context, store, op string, arg any) error {
	tx, err := s.db.Call("transaction", store, "readwrite")
	if err != nil {
		return storageErr(err, "cannot start a write")
	}
	os, _ := tx.Call("objectStore", store)
	if arg == nil {
		_, err = os.Call(op)
	} else {
		_, err = os.Call(op, arg)
	}
	if err != nil {
		_, _ = tx.Call("abort")
		return storageErr(err, "cannot write "+store)
	}
	if _, err := jsbridge.AwaitEvents(ctx, tx, "", []string{"complete"}, []string{"error", "abort"}); err != nil {
		return storageErr(err, "cannot write "+store+" (quota?)")
	}
	return nil
}

// putSealed encrypts plain and stores it under key.
func (s *idbKV) putSealed(ctx context.Context, store, key string, plain []byte) error {
	iv := make([]byte, 12)
	if _, err := rand.Read(iv); err != nil {
		return storageErr(err, "no randomness")
	}
	ct, err := s.crypt(ctx, "encrypt", iv, plain)
	if err != nil {
		return err
	}
	ivJS, err := jsbridge.Uint8Array(iv)
	if err != nil {
		return storageErr(err, "cannot encode")
	}
	ctJS, err := jsbridge.Uint8Array(ct)
	if err != nil {
		return storageErr(err, "cannot encode")
	}
	rec, err := jsbridge.NewObject(map[string]any{"k": key, "iv": ivJS, "ct": ctJS})
	if err != nil {
		return storageErr(err, "cannot encode")
	}
	return s.write(ctx, store, "put", rec)
}

// getSealed reads and decrypts the record under key; found is false when
// there is none.
func (s *idbKV) getSealed(ctx context.Context, store, key string) (plain []byte, found bool, err error) {
	rec, err := s.getRecord(ctx, store, key)
	if err != nil || rec.IsUndefined() {
		return nil, false, err
	}
	ivJS, _ := rec.Get("iv")
	ctJS, _ := rec.Get("ct")
	iv, err := jsbridge.Bytes(ivJS)
	if err != nil {
		return nil, false, storageErr(err, "corrupt record in "+store)
	}
	ct, err := jsbridge.Bytes(ctJS)
	if err != nil {
		return nil, false, storageErr(err, "corrupt record in "+store)
	}
	plain, err = s.crypt(ctx, "decrypt", iv, ct)
	if err != nil {
		return nil, false, err
	}
	return plain, true, nil
}

func (s *idbKV) crypt(ctx context.Context, op string, iv, data []byte) ([]byte, error) {
	subtle, err := subtleCrypto()
	if err != nil {
		return nil, err
	}
	ivJS, err := jsbridge.Uint8Array(iv)
	if err != nil {
		return nil, storageErr(err, op)
	}
	dataJS, err := jsbridge.Uint8Array(data)
	if err != nil {
		return nil, storageErr(err, op)
	}
	key, err := s.cryptoKey(ctx)
	if err != nil {
		return nil, err
	}
	alg, _ := jsbridge.NewObject(map[string]any{"name": "AES-GCM", "iv": ivJS})
	p, err := subtle.Call(op, alg, key, dataJS)
	if err != nil {
		return nil, storageErr(err, "cannot "+op)
	}
	out, err := jsbridge.Await(ctx, p)
	if err != nil {
		return nil, storageErr(err, "cannot "+op+" (a record from another key?)")
	}
	return jsbridge.Bytes(out)
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
	return s.backend(ctx).put(ctx, store, key, data)
}
