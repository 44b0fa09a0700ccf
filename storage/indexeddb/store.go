//go:build js && wasm

// Package indexeddb is the browser's [oauth.Store]: grants, client
// registrations, cached metadata and pending redirect flows in IndexedDB.
//
// Every write is one IndexedDB transaction, so a value is stored whole or
// not at all, and its failure is returned. Records that hold secrets (grants,
// registrations, pending flows) are encrypted at rest with AES-GCM under a
// non-extractable WebCrypto key kept in the same database: the raw database
// never holds a token in plaintext, and script on another origin cannot read
// it. The schema is versioned; [migrations] upgrades older databases.
package indexeddb

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
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
}

// Store is an [oauth.Store] over IndexedDB.
type Store struct {
	db jsbridge.Value // IDBDatabase

	keyMu sync.Mutex
	key   jsbridge.Value // CryptoKey, non-extractable AES-GCM; loaded on first use
	keyOK bool
}

var _ oauth.Store = (*Store)(nil)

func storageErr(err error, what string) error {
	return &mcperr.Error{Code: mcperr.Storage, Msg: "indexeddb: " + what, Err: err}
}

// Open opens (creating or upgrading) the database name and its encryption
// key. It fails with a "storage" error when IndexedDB or WebCrypto is
// unavailable (private mode, disabled storage, a blocked upgrade); the caller
// falls back to memory and says so.
func Open(ctx context.Context, name string) (*Store, error) {
	idb, err := jsbridge.Global().Get("indexedDB")
	if err != nil || idb.IsUndefined() || idb.IsNull() {
		return nil, storageErr(fmt.Errorf("indexedDB is not available"), "cannot open the database")
	}
	req, err := idb.Call("open", name, len(migrations))
	if err != nil {
		return nil, storageErr(err, "indexedDB.open threw (storage disabled?)")
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
		return nil, storageErr(err, "cannot open the database")
	}
	defer onUpgrade.Release()
	if err := req.Set("onupgradeneeded", onUpgrade); err != nil {
		return nil, storageErr(err, "cannot open the database")
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second) // "blocked" never settles
	defer cancel()
	db, err := jsbridge.AwaitEvents(ctx, req, "result", []string{"success"}, []string{"error", "blocked"})
	if err != nil {
		return nil, storageErr(err, "cannot open the database")
	}
	select {
	case err := <-upgradeErr:
		return nil, storageErr(err, "cannot upgrade the database")
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
	return &Store{db: db}, nil
}

// cryptoKey returns the wrapping key, loading it, or generating and storing
// it, on first use: a page that never stores a secret never pays for it.
func (s *Store) cryptoKey(ctx context.Context) (jsbridge.Value, error) {
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
func (s *Store) loadKey(ctx context.Context) error {
	rec, err := s.get(ctx, storeKeys, keyID)
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
		if err := s.write(ctx, storeKeys, "add", rec); err != nil {
			rec, err = s.get(ctx, storeKeys, keyID)
			if err != nil || rec.IsUndefined() {
				return storageErr(err, "cannot store the encryption key")
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

// Close closes the database.
func (s *Store) Close() { _, _ = s.db.Call("close") }

// get reads one record (undefined when absent).
func (s *Store) get(ctx context.Context, store, key string) (jsbridge.Value, error) {
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
func (s *Store) write(ctx context.Context, store, op string, arg any) error {
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

// putSealed encrypts v's JSON and stores it under key.
func (s *Store) putSealed(ctx context.Context, store, key string, v any) error {
	plain, err := json.Marshal(v)
	if err != nil {
		return storageErr(err, "cannot encode")
	}
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

// getSealed reads and decrypts the record under key into v; found is false
// when there is none.
func (s *Store) getSealed(ctx context.Context, store, key string, v any) (found bool, err error) {
	rec, err := s.get(ctx, store, key)
	if err != nil || rec.IsUndefined() {
		return false, err
	}
	ivJS, _ := rec.Get("iv")
	ctJS, _ := rec.Get("ct")
	iv, err := jsbridge.Bytes(ivJS)
	if err != nil {
		return false, storageErr(err, "corrupt record in "+store)
	}
	ct, err := jsbridge.Bytes(ctJS)
	if err != nil {
		return false, storageErr(err, "corrupt record in "+store)
	}
	plain, err := s.crypt(ctx, "decrypt", iv, ct)
	if err != nil {
		return false, err
	}
	if err := json.Unmarshal(plain, v); err != nil {
		return false, storageErr(err, "corrupt record in "+store)
	}
	return true, nil
}

func (s *Store) crypt(ctx context.Context, op string, iv, data []byte) ([]byte, error) {
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

func (s *Store) del(ctx context.Context, store, key string) error {
	return s.write(ctx, store, "delete", key)
}

// Clear deletes every grant, registration, cached metadata and pending flow
// (the encryption key stays).
func (s *Store) Clear(ctx context.Context) error {
	for _, st := range []string{storeGrants, storeClients, storeMetadata, storePending} {
		if err := s.write(ctx, st, "clear", nil); err != nil {
			return err
		}
	}
	return nil
}

func clientKey(issuer, redirectURI string) string { return issuer + "\x00" + redirectURI }

// GetGrant implements [oauth.Store].
func (s *Store) GetGrant(ctx context.Context, resource string) (*oauth.Grant, error) {
	var g oauth.Grant
	if ok, err := s.getSealed(ctx, storeGrants, resource, &g); !ok {
		return nil, err
	}
	return &g, nil
}

// PutGrant implements [oauth.Store].
func (s *Store) PutGrant(ctx context.Context, g *oauth.Grant) error {
	return s.putSealed(ctx, storeGrants, g.Resource, g)
}

// DeleteGrant implements [oauth.Store].
func (s *Store) DeleteGrant(ctx context.Context, resource string) error {
	return s.del(ctx, storeGrants, resource)
}

// GetClient implements [oauth.Store].
func (s *Store) GetClient(ctx context.Context, issuer, redirectURI string) (*oauth.ClientRegistration, error) {
	var c oauth.ClientRegistration
	if ok, err := s.getSealed(ctx, storeClients, clientKey(issuer, redirectURI), &c); !ok {
		return nil, err
	}
	return &c, nil
}

// PutClient implements [oauth.Store].
func (s *Store) PutClient(ctx context.Context, c *oauth.ClientRegistration) error {
	return s.putSealed(ctx, storeClients, clientKey(c.Issuer, c.RedirectURI), c)
}

// DeleteClient implements [oauth.Store].
func (s *Store) DeleteClient(ctx context.Context, issuer, redirectURI string) error {
	return s.del(ctx, storeClients, clientKey(issuer, redirectURI))
}

// GetMetadata implements [oauth.Store]. Metadata is public: stored as JSON.
func (s *Store) GetMetadata(ctx context.Context, key string) (*oauth.CachedMetadata, error) {
	rec, err := s.get(ctx, storeMetadata, key)
	if err != nil || rec.IsUndefined() {
		return nil, err
	}
	j, _ := rec.Get("json")
	str, err := jsbridge.String(j, "metadata record")
	if err != nil {
		return nil, storageErr(err, "corrupt metadata record")
	}
	var m oauth.CachedMetadata
	if err := json.Unmarshal([]byte(str), &m); err != nil {
		return nil, storageErr(err, "corrupt metadata record")
	}
	return &m, nil
}

// PutMetadata implements [oauth.Store].
func (s *Store) PutMetadata(ctx context.Context, m *oauth.CachedMetadata) error {
	b, err := json.Marshal(m)
	if err != nil {
		return storageErr(err, "cannot encode")
	}
	rec, err := jsbridge.NewObject(map[string]any{"k": m.Key, "json": string(b)})
	if err != nil {
		return storageErr(err, "cannot encode")
	}
	return s.write(ctx, storeMetadata, "put", rec)
}

// DeleteMetadata implements [oauth.Store].
func (s *Store) DeleteMetadata(ctx context.Context, key string) error {
	return s.del(ctx, storeMetadata, key)
}

// GetPending implements [oauth.Store].
func (s *Store) GetPending(ctx context.Context, state string) (*oauth.PendingFlow, error) {
	var p oauth.PendingFlow
	if ok, err := s.getSealed(ctx, storePending, state, &p); !ok {
		return nil, err
	}
	return &p, nil
}

// PutPending implements [oauth.Store].
func (s *Store) PutPending(ctx context.Context, p *oauth.PendingFlow) error {
	return s.putSealed(ctx, storePending, p.State, p)
}

// DeletePending implements [oauth.Store].
func (s *Store) DeletePending(ctx context.Context, state string) error {
	return s.del(ctx, storePending, state)
}
