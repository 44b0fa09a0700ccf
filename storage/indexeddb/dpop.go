//go:build js && wasm

package indexeddb

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/mcpwasm/mcpwasm/jsbridge"
	"github.com/mcpwasm/mcpwasm/mcperr"
	"github.com/mcpwasm/mcpwasm/oauth"
)

// DPoPKeys returns the page's DPoP keys ([oauth.DPoPKeys]), kept in the
// store's database: ECDSA P-256 key pairs made by WebCrypto with a
// non-extractable private key, stored as CryptoKey objects, so that no
// script can read the private key, not even this one. Every tab of the
// origin gets the same key for the same id. A key read once is kept in
// this runtime ([oauth.DPoPKeyCopies]), so that a proof reads no
// database; [Store.Clear], DeleteKey, a deleted database or closed
// connection and [Store.KeysChanged] (another page's grant change) drop
// the copies.
// When the store falls back to memory, so do the keys (see
// [NewMemoryDPoPKeys]).
func (s *Store) DPoPKeys() oauth.DPoPKeys {
	return s.dpopKeys(func() oauth.DPoPKeys { return &idbDPoPKeys{s: s, mem: NewMemoryDPoPKeys()} })
}

type idbDPoPKeys struct {
	s   *Store
	mem *MemoryDPoPKeys // when IndexedDB is unavailable or full

	mu sync.Mutex // one read or creation at a time in this runtime
}

var (
	_ oauth.DPoPKeys      = (*idbDPoPKeys)(nil)
	_ oauth.DPoPKeyCopies = (*idbDPoPKeys)(nil)
)

// Key implements [oauth.DPoPKeys]: this runtime's copy of the key, or the
// key read from the database (made and stored when there is none).
func (k *idbDPoPKeys) Key(ctx context.Context, id string) (oauth.DPoPKey, error) {
	db, ok := k.s.idb(ctx)
	if !ok {
		return k.mem.Key(ctx, id)
	}
	copies := &k.s.dpop.copies
	if key, _, ok := copies.get(id); ok {
		return key, nil
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	// Another caller may have read it while this one waited.
	key, tk, ok := copies.get(id)
	if ok {
		return key, nil
	}
	key, found, err := k.lookup(ctx, db, id)
	if err == nil && !found {
		key, err = k.create(ctx, db, id)
	}
	if err != nil {
		return nil, err
	}
	copies.put(id, key, tk)
	return key, nil
}

// StoredKey implements [oauth.DPoPKeyCopies]: the copy of id dropped,
// the key read from the database again; none is made, so that storage
// another page just cleared stays empty.
func (k *idbDPoPKeys) StoredKey(ctx context.Context, id string) (oauth.DPoPKey, bool, error) {
	copies := &k.s.dpop.copies
	copies.drop(id)
	db, ok := k.s.idb(ctx)
	if !ok {
		return k.mem.lookup(id)
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	_, tk, _ := copies.get(id)
	key, found, err := k.lookup(ctx, db, id)
	if err != nil || !found {
		return nil, false, err
	}
	copies.put(id, key, tk)
	return key, true, nil
}

// lookup reads key id from the database, or from memory where the
// database had no room for it; found is false when neither holds it.
// k.mu is held.
func (k *idbDPoPKeys) lookup(ctx context.Context, db *idbDB, id string) (oauth.DPoPKey, bool, error) {
	rec, err := db.getRecord(ctx, storeDPoP, id)
	if err != nil {
		return nil, false, err
	}
	if rec.IsUndefined() {
		return k.mem.lookup(id)
	}
	key, err := recordKey(ctx, rec)
	return key, err == nil, err
}

// create makes key id and stores it, or takes the key another tab stored
// first. k.mu is held.
func (k *idbDPoPKeys) create(ctx context.Context, db *idbDB, id string) (oauth.DPoPKey, error) {
	priv, pub, err := generateDPoPKey(ctx)
	if err != nil {
		return nil, err
	}
	rec, err := recordToJS(dpopRecord(id, priv, pub))
	if err != nil {
		return nil, storageErr(err, "cannot encode the DPoP key")
	}
	// add, not put: when another tab stored a key first, use its key.
	if werr := db.write(ctx, storeDPoP, "add", rec); werr != nil {
		if errors.Is(werr, errFull) {
			// No room: this key lives in the page, as the
			// grants that the store then keeps in memory do.
			return k.mem.Key(ctx, id)
		}
		if rec, err = db.getRecord(ctx, storeDPoP, id); err != nil || rec.IsUndefined() {
			return nil, keyStoreErr(werr, "the DPoP key")
		}
	}
	return recordKey(ctx, rec)
}

// recordKey is the key of a stored record of the DPoP object store.
func recordKey(ctx context.Context, rec jsbridge.Value) (oauth.DPoPKey, error) {
	priv, err1 := rec.Get(propPrivateKey)
	pub, err2 := rec.Get(propPublicKey)
	if err1 != nil || err2 != nil || priv.IsUndefined() || pub.IsUndefined() {
		return nil, storageErr(fmt.Errorf("missing CryptoKey"), "the stored DPoP key is unreadable")
	}
	return newWebKey(ctx, priv, pub)
}

// ForgetCopy implements [oauth.DPoPKeyCopies].
func (k *idbDPoPKeys) ForgetCopy(id string) { k.s.dpop.copies.drop(id) }

// DeleteKey implements [oauth.DPoPKeys].
func (k *idbDPoPKeys) DeleteKey(ctx context.Context, id string) error {
	copies := &k.s.dpop.copies
	copies.drop(id)
	// Dropped again once deleted: a read under way must not keep it.
	defer copies.drop(id)
	_ = k.mem.DeleteKey(ctx, id) // a key the database had no room for
	db, ok := k.s.idb(ctx)
	if !ok {
		return nil
	}
	return db.write(ctx, storeDPoP, "delete", id)
}

// clear forgets the keys kept in memory ([Store.Clear]).
func (k *idbDPoPKeys) clear() { k.mem.Clear() }

// NewMemoryDPoPKeys returns DPoP keys kept in this page's memory only
// (non-extractable WebCrypto keys, gone on reload): the keys of clients
// with storage "memory", and of the IndexedDB store's memory fallback.
func NewMemoryDPoPKeys() *MemoryDPoPKeys {
	return &MemoryDPoPKeys{keys: make(map[string]*webKey)}
}

// MemoryDPoPKeys are the [oauth.DPoPKeys] of [NewMemoryDPoPKeys].
type MemoryDPoPKeys struct {
	mu   sync.Mutex
	keys map[string]*webKey
}

// Key implements [oauth.DPoPKeys].
func (m *MemoryDPoPKeys) Key(ctx context.Context, id string) (oauth.DPoPKey, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if k := m.keys[id]; k != nil {
		return k, nil
	}
	priv, pub, err := generateDPoPKey(ctx)
	if err != nil {
		return nil, err
	}
	k, err := newWebKey(ctx, priv, pub)
	if err != nil {
		return nil, err
	}
	m.keys[id] = k
	return k, nil
}

// lookup returns key id, never making one; false when there is none.
func (m *MemoryDPoPKeys) lookup(id string) (oauth.DPoPKey, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if k := m.keys[id]; k != nil {
		return k, true, nil
	}
	return nil, false, nil
}

// DeleteKey implements [oauth.DPoPKeys].
func (m *MemoryDPoPKeys) DeleteKey(_ context.Context, id string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.keys, id)
	return nil
}

// Clear forgets every key (clearStorage()).
func (m *MemoryDPoPKeys) Clear() {
	m.mu.Lock()
	defer m.mu.Unlock()
	clear(m.keys)
}

// generateDPoPKey makes an ECDSA P-256 pair whose private key cannot be
// exported (the public key of a pair always can).
func generateDPoPKey(ctx context.Context) (priv, pub jsbridge.Value, err error) {
	fail := func(err error) (jsbridge.Value, jsbridge.Value, error) {
		return jsbridge.Undefined(), jsbridge.Undefined(), dpopErr(err, "cannot create a DPoP key")
	}
	subtle, err := subtleCrypto()
	if err != nil {
		return jsbridge.Undefined(), jsbridge.Undefined(), err
	}
	alg, _ := jsbridge.NewObject(map[string]any{"name": "ECDSA", "namedCurve": "P-256"})
	p, err := subtle.Call("generateKey", alg, false, []any{"sign", "verify"})
	if err != nil {
		return fail(err)
	}
	pair, err := jsbridge.Await(ctx, p)
	if err != nil {
		return fail(err)
	}
	priv, err1 := pair.Get("privateKey")
	pub, err2 := pair.Get("publicKey")
	if err1 != nil || err2 != nil {
		return fail(fmt.Errorf("generateKey returned no key pair"))
	}
	return priv, pub, nil
}

// webKey is a WebCrypto DPoP key: it signs with the CryptoKey; only the
// public coordinates are in Go.
type webKey struct {
	priv jsbridge.Value
	x, y string
}

func newWebKey(ctx context.Context, priv, pub jsbridge.Value) (*webKey, error) {
	subtle, err := subtleCrypto()
	if err != nil {
		return nil, err
	}
	p, err := subtle.Call("exportKey", "jwk", pub)
	if err != nil {
		return nil, dpopErr(err, "cannot read the DPoP public key")
	}
	jwk, err := jsbridge.Await(ctx, p)
	if err != nil {
		return nil, dpopErr(err, "cannot read the DPoP public key")
	}
	var xy [2]string
	for i, name := range []string{"x", "y"} {
		v, err := jwk.Get(name)
		if err != nil {
			return nil, dpopErr(err, "cannot read the DPoP public key")
		}
		if xy[i], err = jsbridge.String(v, "jwk."+name); err != nil || len(xy[i]) != 43 {
			return nil, dpopErr(err, "the DPoP public key is not P-256")
		}
	}
	return &webKey{priv: priv, x: xy[0], y: xy[1]}, nil
}

// PublicJWK implements [oauth.DPoPKey].
func (k *webKey) PublicJWK() (x, y string) { return k.x, k.y }

// Sign implements [oauth.DPoPKey]: WebCrypto's ECDSA signature is already
// r‖s (IEEE P1363), 64 bytes for P-256.
func (k *webKey) Sign(ctx context.Context, input []byte) ([]byte, error) {
	subtle, err := subtleCrypto()
	if err != nil {
		return nil, err
	}
	data, err := jsbridge.Uint8Array(input)
	if err != nil {
		return nil, dpopErr(err, "cannot sign a DPoP proof")
	}
	alg, _ := jsbridge.NewObject(map[string]any{"name": "ECDSA", "hash": "SHA-256"})
	p, err := subtle.Call("sign", alg, k.priv, data)
	if err != nil {
		return nil, dpopErr(err, "cannot sign a DPoP proof")
	}
	sig, err := jsbridge.Await(ctx, p)
	if err != nil {
		return nil, dpopErr(err, "cannot sign a DPoP proof")
	}
	b, err := jsbridge.Bytes(sig)
	if err != nil || len(b) != 64 {
		return nil, dpopErr(err, "WebCrypto returned a signature of the wrong size")
	}
	return b, nil
}

func dpopErr(err error, what string) error {
	if err == nil {
		err = fmt.Errorf("%s", what)
	}
	return &mcperr.Error{Code: mcperr.Storage, Msg: "indexeddb: " + what + " (WebCrypto ECDSA P-256 is needed for DPoP)", Err: err}
}
