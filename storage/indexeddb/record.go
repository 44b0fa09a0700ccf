package indexeddb

import (
	"context"
	"crypto/rand"
	"errors"
	"strings"

	"github.com/mcpwasm/mcpwasm/mcperr"
)

// The records, by object store (the property names are the stored format:
// records written under them must stay readable):
//
//   - grants, clients, pending, conversations, tasks, views: {k, iv, ct}, the value's JSON sealed with
//     AES-GCM under the database's wrapping key, with a fresh nonce iv;
//   - metadata, which is public: {k, json}, the JSON as a string;
//   - keys: {k: keyID, key}, the wrapping key;
//   - dpop: {k: id, privateKey, publicKey}, a DPoP key pair.
//
// iv and ct are Uint8Arrays; keys are CryptoKeys, stored as structured
// clones and never exported.
const (
	propKey        = "k" // every object store's keyPath
	propJSON       = "json"
	propIV         = "iv"
	propCT         = "ct"
	propCryptoKey  = "key"
	propPrivateKey = "privateKey"
	propPublicKey  = "publicKey"

	keyID  = "aes-gcm-1" // the record of the wrapping key in storeKeys
	ivSize = 12          // bytes of an AES-GCM nonce
)

// sealed reports whether the records of store (one of [kv]'s) are
// encrypted: all but cached metadata.
func sealed(store string) bool { return store != storeMetadata }

// Errors a [recordDB] or [sealer] wraps so that the store can tell them
// apart from the rest.
var (
	// errFull: the browser refused a write for lack of room
	// (QuotaExceededError).
	errFull = errors.New("the browser's storage for this site is full (QuotaExceededError)")
	// errOtherKey: a record does not open under the database's key.
	errOtherKey = errors.New("the record was sealed under another key")
)

// sealer is AES-GCM (128-bit tag, no additional data) under the
// database's wrapping key: WebCrypto in the browser.
type sealer interface {
	seal(ctx context.Context, iv, plain []byte) ([]byte, error)
	unseal(ctx context.Context, iv, ct []byte) ([]byte, error)
}

// storedRecord is a record of a [kv] store as read back: JSON in
// storeMetadata, IV and CT in the others.
type storedRecord struct {
	Key    string // set by readAll only
	JSON   string
	IV, CT []byte
}

// recordDB is the database, one record per call. A record is written as
// its properties; a []byte is a Uint8Array in the database.
type recordDB interface {
	readRecord(ctx context.Context, store, key string) (rec storedRecord, found bool, err error)
	writeRecord(ctx context.Context, store string, rec map[string]any) error
	deleteRecord(ctx context.Context, store, key string) error
	clearStore(ctx context.Context, store string) error
	readAll(ctx context.Context, store string) ([]storedRecord, error)
}

// sealedKV is the [kv] of a database: each value is one record, sealed
// unless it is metadata.
type sealedKV struct {
	db recordDB
	sl sealer
}

func (s *sealedKV) get(ctx context.Context, store, key string) ([]byte, bool, error) {
	rec, found, err := s.db.readRecord(ctx, store, key)
	if err != nil || !found {
		return nil, false, err
	}
	if !sealed(store) {
		return []byte(rec.JSON), true, nil
	}
	plain, err := s.sl.unseal(ctx, rec.IV, rec.CT)
	if errors.Is(err, errOtherKey) {
		// Sealed under a key the database no longer holds (its key
		// record was lost): as good as none; the next put replaces it.
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	return plain, true, nil
}

func (s *sealedKV) put(ctx context.Context, store, key string, data []byte) error {
	if !sealed(store) {
		return s.db.writeRecord(ctx, store, map[string]any{propKey: key, propJSON: string(data)})
	}
	iv := make([]byte, ivSize)
	if _, err := rand.Read(iv); err != nil {
		return storageErr(err, "no randomness")
	}
	ct, err := s.sl.seal(ctx, iv, data)
	if err != nil {
		return err
	}
	return s.db.writeRecord(ctx, store, map[string]any{propKey: key, propIV: iv, propCT: ct})
}

func (s *sealedKV) del(ctx context.Context, store, key string) error {
	return s.db.deleteRecord(ctx, store, key)
}

func (s *sealedKV) all(ctx context.Context, store string) (map[string][]byte, error) {
	recs, err := s.db.readAll(ctx, store)
	if err != nil {
		return nil, err
	}
	out := make(map[string][]byte, len(recs))
	for _, rec := range recs {
		if !sealed(store) {
			out[rec.Key] = []byte(rec.JSON)
			continue
		}
		plain, err := s.sl.unseal(ctx, rec.IV, rec.CT)
		if err != nil {
			continue // one record that cannot be read does not hide the others
		}
		out[rec.Key] = plain
	}
	return out, nil
}

func (s *sealedKV) clear(ctx context.Context, store string) error {
	return s.db.clearStore(ctx, store)
}

// keyRecord is the record of the wrapping key (a CryptoKey) in storeKeys.
func keyRecord(key any) map[string]any {
	return map[string]any{propKey: keyID, propCryptoKey: key}
}

// dpopRecord is the record of DPoP key pair id (CryptoKeys) in storeDPoP.
func dpopRecord(id string, priv, pub any) map[string]any {
	return map[string]any{propKey: id, propPrivateKey: priv, propPublicKey: pub}
}

// keyStoreError is the error of a CryptoKey (what) that IndexedDB would
// not store (werr, the write's error). Without its key no sign-in can be
// stored or read, so none can start; where the browser cannot clone a
// CryptoKey at all in this context, the error says which runtime can.
func keyStoreError(werr error, what string, inWorker bool) error {
	msg := "indexeddb: cannot store " + what + " (a non-extractable WebCrypto key), so sign-in cannot start"
	switch {
	case werr == nil || !strings.Contains(werr.Error(), "cloned"):
	case inWorker:
		msg += `; this browser cannot store a WebCrypto key from this worker (as in Safari's SharedWorker): load({ runtime: "worker" }) or load({ runtime: "main" }) can`
	default:
		msg += `; this browser cannot store a WebCrypto key here: the client option storage: "memory" keeps sign-ins for this page only`
	}
	return &mcperr.Error{Code: mcperr.Storage, Msg: msg, Err: werr}
}
