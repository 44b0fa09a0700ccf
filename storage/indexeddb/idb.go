//go:build js && wasm

package indexeddb

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/mcpwasm/mcpwasm/jsbridge"
	"github.com/mcpwasm/mcpwasm/mcperr"
)

// migrations[i] upgrades a database from version i to i+1. The database
// version is len(migrations).
var migrations = []func(db jsbridge.Value) error{
	// 0 → 1: the first schema.
	func(db jsbridge.Value) error {
		return createStores(db, storeGrants, storeClients, storeMetadata, storePending, storeKeys)
	},
	// 1 → 2: the DPoP key pairs (see DPoPKeys).
	func(db jsbridge.Value) error { return createStores(db, storeDPoP) },
	// 2 → 3: an agent's stored conversations.
	func(db jsbridge.Value) error { return createStores(db, storeConversations) },
	// 3 → 4: the tasks clients keep (mcpclient.TaskStore).
	func(db jsbridge.Value) error { return createStores(db, storeTasks) },
	// 4 → 5: what MCP App views keep (apps.render's stateKey).
	func(db jsbridge.Value) error { return createStores(db, storeViews) },
}

// createStores creates object stores keyed by propKey.
func createStores(db jsbridge.Value, names ...string) error {
	for _, name := range names {
		opts, err := jsbridge.NewObject(map[string]any{"keyPath": propKey})
		if err != nil {
			return err
		}
		if _, err := db.Call("createObjectStore", name, opts); err != nil {
			return err
		}
	}
	return nil
}

// New returns the store of database name; nothing is opened yet.
// onFallback, when set, is called once if IndexedDB cannot be opened, is
// full, or belongs to a newer build, and memory is used instead.
func New(name string, onFallback func(error)) *Store {
	var s *Store
	s = newStore(func(ctx context.Context) (kv, error) {
		var b *sealedKV
		db, err := open(ctx, name, func(newer error) {
			// Not in the event's callback, which must never block: the
			// store's lock may be held by an open waiting for events.
			go s.closed(b, newer)
		})
		if err != nil {
			return nil, err
		}
		d := &idbDB{db: db}
		b = &sealedKV{db: d, sl: d}
		return b, nil
	}, onFallback)
	return s
}

// idb returns the store's database; false on the memory fallback.
func (s *Store) idb(ctx context.Context) (*idbDB, bool) {
	b := s.backend(ctx)
	if o, ok := b.(*overlayKV); ok {
		b = o.base
	}
	sk, ok := b.(*sealedKV)
	if !ok {
		return nil, false
	}
	d, ok := sk.db.(*idbDB)
	return d, ok
}

// jsName is the name of the JavaScript error err carries ("" if none).
func jsName(err error) string {
	var je *jsbridge.JSError
	if errors.As(err, &je) {
		return je.Name
	}
	return ""
}

// open opens (creating or upgrading) the database name. It fails with a
// "storage" error when IndexedDB is unavailable or the database's schema
// is newer than this build's. When another page deletes or upgrades the
// database later, the connection is closed (so that page never waits for
// this one) and closed is called: newer is nil for a deletion.
func open(ctx context.Context, name string, closed func(newer error)) (jsbridge.Value, error) {
	fail := func(err error, what string) (jsbridge.Value, error) {
		return jsbridge.Undefined(), &mcperr.Error{Code: mcperr.Storage, Err: err,
			Msg: "indexeddb: IndexedDB cannot be used here (" + what + "), so sign-ins are kept in memory and will not be kept after this tab closes; a browser that allows this site to store data keeps them"}
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
	switch jsName(err) {
	case "VersionError":
		return jsbridge.Undefined(), newerErr(err, len(migrations))
	case "QuotaExceededError": // no room to create or upgrade it
		return jsbridge.Undefined(), fullErr(fmt.Errorf("%w: %w", errFull, err))
	}
	if err != nil {
		return fail(err, "cannot open the database")
	}
	select {
	case err := <-upgradeErr:
		return fail(err, "cannot upgrade the database")
	default:
	}
	watchClose(db, closed)
	return db, nil
}

// watchClose calls closed when the browser takes the connection db
// away. Another page deletes the database (clears the site's data) or a
// newer build upgrades it (versionchange): step aside at once, or that
// page waits ("blocked") for this one; newer is nil for a deletion. The
// browser closes the connection itself (close: storage evicted or
// cleared in its settings, the disk gone): as after a deletion, the next
// use opens the database again.
func watchClose(db jsbridge.Value, closed func(newer error)) {
	onVersionChange, err := jsbridge.Func(func(args []jsbridge.Value) (any, error) {
		_, _ = db.Call("close")
		nv, _ := jsbridge.Arg(args, 0).Get("newVersion")
		if nv.IsNull() || nv.IsUndefined() {
			closed(nil)
		} else {
			n, _ := nv.Int()
			closed(newerErr(fmt.Errorf("another page upgraded the database to version %d", n), len(migrations)))
		}
		return nil, nil
	})
	if err == nil {
		_ = db.Set("onversionchange", onVersionChange)
	}
	onClose, err := jsbridge.Func(func([]jsbridge.Value) (any, error) {
		closed(nil)
		return nil, nil
	})
	if err == nil {
		_ = db.Set("onclose", onClose)
	}
}

// idbDB is IndexedDB ([recordDB]) and its WebCrypto wrapping key
// ([sealer]).
type idbDB struct {
	db jsbridge.Value // IDBDatabase

	keyMu sync.Mutex
	key   jsbridge.Value // CryptoKey, non-extractable AES-GCM; loaded on first use
	keyOK bool
}

func (s *idbDB) readRecord(ctx context.Context, store, key string) (storedRecord, bool, error) {
	v, err := s.getRecord(ctx, store, key)
	if err != nil || v.IsUndefined() {
		return storedRecord{}, false, err
	}
	rec, err := recordFromJS(store, v)
	if err != nil {
		return storedRecord{}, false, err
	}
	return rec, true, nil
}

// recordFromJS reads a record of a [kv] store.
func recordFromJS(store string, v jsbridge.Value) (storedRecord, error) {
	if !sealed(store) {
		j, _ := v.Get(propJSON)
		str, err := jsbridge.String(j, "metadata record")
		if err != nil {
			return storedRecord{}, storageErr(err, "corrupt metadata record")
		}
		return storedRecord{JSON: str}, nil
	}
	ivJS, _ := v.Get(propIV)
	ctJS, _ := v.Get(propCT)
	iv, err := jsbridge.Bytes(ivJS)
	if err != nil {
		return storedRecord{}, storageErr(err, "corrupt record in "+store)
	}
	ct, err := jsbridge.Bytes(ctJS)
	if err != nil {
		return storedRecord{}, storageErr(err, "corrupt record in "+store)
	}
	return storedRecord{IV: iv, CT: ct}, nil
}

func (s *idbDB) writeRecord(ctx context.Context, store string, rec map[string]any) error {
	v, err := recordToJS(rec)
	if err != nil {
		return storageErr(err, "cannot encode")
	}
	return s.write(ctx, store, "put", v)
}

// recordToJS makes the object of a record's properties: a []byte becomes
// a Uint8Array, the rest (strings, CryptoKeys) is set as is.
func recordToJS(rec map[string]any) (jsbridge.Value, error) {
	props := make(map[string]any, len(rec))
	for name, v := range rec {
		if b, ok := v.([]byte); ok {
			a, err := jsbridge.Uint8Array(b)
			if err != nil {
				return jsbridge.Undefined(), err
			}
			v = a
		}
		props[name] = v
	}
	return jsbridge.NewObject(props)
}

func (s *idbDB) deleteRecord(ctx context.Context, store, key string) error {
	return s.write(ctx, store, "delete", key)
}

func (s *idbDB) clearStore(ctx context.Context, store string) error {
	return s.write(ctx, store, "clear", nil)
}

func (s *idbDB) seal(ctx context.Context, iv, plain []byte) ([]byte, error) {
	return s.crypt(ctx, "encrypt", iv, plain)
}

func (s *idbDB) unseal(ctx context.Context, iv, ct []byte) ([]byte, error) {
	return s.crypt(ctx, "decrypt", iv, ct)
}

// cryptoKey returns the wrapping key, loading it, or generating and storing
// it, on first use: a page that never stores a secret never pays for it.
func (s *idbDB) cryptoKey(ctx context.Context) (jsbridge.Value, error) {
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
func (s *idbDB) loadKey(ctx context.Context) error {
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
		rec, _ = recordToJS(keyRecord(key))
		// add, not put: when another tab won the race, use its key.
		if werr := s.write(ctx, storeKeys, "add", rec); werr != nil {
			rec, err = s.getRecord(ctx, storeKeys, keyID)
			if err != nil || rec.IsUndefined() {
				return keyStoreErr(werr, "the encryption key of the stored sign-ins")
			}
		}
	}
	key, err := rec.Get(propCryptoKey)
	if err != nil || key.IsUndefined() {
		return storageErr(err, "the stored encryption key is unreadable")
	}
	s.key = key
	return nil
}

// keyStoreErr is [keyStoreError] where this code runs.
func keyStoreErr(werr error, what string) error { return keyStoreError(werr, what, inWorker()) }

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

// getRecord reads one record (undefined when absent).
func (s *idbDB) getRecord(ctx context.Context, store, key string) (jsbridge.Value, error) {
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

// readAll reads every record of store.
func (s *idbDB) readAll(ctx context.Context, store string) ([]storedRecord, error) {
	tx, err := s.db.Call("transaction", store, "readonly")
	if err != nil {
		return nil, storageErr(err, "cannot start a read")
	}
	os, _ := tx.Call("objectStore", store)
	req, err := os.Call("getAll")
	if err != nil {
		return nil, storageErr(err, "cannot read")
	}
	v, err := jsbridge.AwaitEvents(ctx, req, "result", []string{"success"}, []string{"error"})
	if err != nil {
		return nil, storageErr(err, "cannot read "+store)
	}
	n, err := v.Length()
	if err != nil {
		return nil, storageErr(err, "cannot read "+store)
	}
	out := make([]storedRecord, 0, n)
	for i := 0; i < n; i++ {
		item, err := v.Index(i)
		if err != nil {
			return nil, storageErr(err, "cannot read "+store)
		}
		rec, err := recordFromJS(store, item)
		if err != nil {
			return nil, err
		}
		k, _ := item.Get(propKey)
		if rec.Key, err = jsbridge.String(k, "a record's key"); err != nil {
			return nil, storageErr(err, "corrupt record in "+store)
		}
		out = append(out, rec)
	}
	return out, nil
}

// write runs one put/add/delete/clear in its own transaction and waits
// until the transaction commits.
func (s *idbDB) write(ctx context.Context, store, op string, arg any) error {
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
	// A failed request aborts its transaction, whose error then says why
	// (at the request's bubbled "error" it may not be set yet).
	if _, err := jsbridge.AwaitEvents(ctx, tx, "", []string{"complete"}, []string{"abort"}); err != nil {
		if jsName(err) == "QuotaExceededError" {
			err = fmt.Errorf("%w: %w", errFull, err)
		}
		return storageErr(err, "cannot write "+store)
	}
	return nil
}

func (s *idbDB) crypt(ctx context.Context, op string, iv, data []byte) ([]byte, error) {
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
		if op == "decrypt" && jsName(err) == "OperationError" {
			err = fmt.Errorf("%w: %w", errOtherKey, err)
		}
		return nil, storageErr(err, "cannot "+op)
	}
	return jsbridge.Bytes(out)
}
