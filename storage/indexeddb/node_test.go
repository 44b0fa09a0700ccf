//go:build js && wasm

package indexeddb

// These tests run under Node (make wasmtest), which has WebCrypto and
// structuredClone but no IndexedDB: they cover the memory fallback, the
// WebCrypto DPoP keys, what a key IndexedDB refuses says, and the records'
// JavaScript side (their objects and WebCrypto sealing). The IndexedDB
// path itself is tested in the browser (e2e: TestWorkerThatCannotStoreKeys,
// TestDPoPSignInReloadAndStolenToken).

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"math/big"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpwasm/mcpwasm/jsbridge"
	"github.com/mcpwasm/mcpwasm/mcperr"
	"github.com/mcpwasm/mcpwasm/oauth"
)

// TestWithoutIndexedDBKeepsRecordsInMemory: without IndexedDB the store
// says why once, keeps its records for this page (not shared), and its DPoP
// keys are in memory too, until Clear.
func TestWithoutIndexedDBKeepsRecordsInMemory(t *testing.T) {
	ctx := ctxT(t)
	var told []error
	s := New("test", func(err error) { told = append(told, err) })
	if err := s.Fallback(); err == nil || mcperr.CodeOf(err, "") != mcperr.Storage || !strings.Contains(err.Error(), "indexedDB is not available") {
		t.Fatalf("Fallback() = %v; want a storage error saying indexedDB is not available", err)
	}
	if s.Shared() {
		t.Error("Shared() = true on the memory fallback; want false")
	}
	g := &oauth.Grant{Resource: "https://mcp.example.com/mcp", AccessToken: "at-secret", TokenType: "Bearer"}
	if err := s.PutGrant(ctx, g); err != nil {
		t.Fatal(err)
	}
	got, err := s.GetGrant(ctx, g.Resource)
	if err != nil || got == nil || got.AccessToken != "at-secret" {
		t.Fatalf("GetGrant = %+v, %v; want the stored grant", got, err)
	}
	if err := s.Clear(ctx); err != nil {
		t.Fatal(err)
	}
	if got, err := s.GetGrant(ctx, g.Resource); err != nil || got != nil {
		t.Errorf("after Clear, GetGrant = %+v, %v; want none", got, err)
	}
	if len(told) != 1 {
		t.Errorf("the fallback callback ran %d times; want once", len(told))
	}
	k1, err := s.DPoPKeys().Key(ctx, "reg-1")
	if err != nil {
		t.Fatal(err)
	}
	k2, err := s.DPoPKeys().Key(ctx, "reg-1")
	if err != nil || k1 != k2 {
		t.Errorf("the DPoP key of one id changed within the page (%v)", err)
	}
	// clearStorage deletes the keys in memory too.
	if err := s.Clear(ctx); err != nil {
		t.Fatal(err)
	}
	if k3, err := s.DPoPKeys().Key(ctx, "reg-1"); err != nil || k3 == k1 {
		t.Errorf("after Clear, the DPoP key of reg-1 is the one from before (%v); want a new key", err)
	}
}

// TestDPoPKeySignsAndCannotBeExported: a memory DPoP key is a WebCrypto
// ECDSA P-256 pair whose private key is not extractable; its signatures
// verify against the public JWK it reports.
func TestDPoPKeySignsAndCannotBeExported(t *testing.T) {
	ctx := ctxT(t)
	key, err := NewMemoryDPoPKeys().Key(ctx, "reg")
	if err != nil {
		t.Fatal(err)
	}
	wk := key.(*webKey)
	ext, _ := wk.priv.Get("extractable")
	if b, err := ext.Bool(); err != nil || b {
		t.Errorf("the private key's extractable = %v (%v); want false", b, err)
	}
	subtle, err := subtleCrypto()
	if err != nil {
		t.Fatal(err)
	}
	p, err := subtle.Call("exportKey", "jwk", wk.priv)
	if err == nil {
		_, err = jsbridge.Await(ctx, p)
	}
	if err == nil {
		t.Error("exportKey of the private key succeeded; want it refused")
	}

	input := []byte("header.payload")
	sig, err := key.Sign(ctx, input)
	if err != nil || len(sig) != 64 {
		t.Fatalf("Sign = %d bytes, %v; want 64", len(sig), err)
	}
	x, y := key.PublicJWK()
	xb, _ := base64.RawURLEncoding.DecodeString(x)
	yb, _ := base64.RawURLEncoding.DecodeString(y)
	pub := &ecdsa.PublicKey{Curve: elliptic.P256(), X: new(big.Int).SetBytes(xb), Y: new(big.Int).SetBytes(yb)}
	h := sha256.Sum256(input)
	if !ecdsa.Verify(pub, h[:], new(big.Int).SetBytes(sig[:32]), new(big.Int).SetBytes(sig[32:])) {
		t.Error("the signature does not verify with the reported public key")
	}
}

// TestKeyThatCannotBeStoredSaysSignInCannotStart: a CryptoKey that the
// browser cannot clone into IndexedDB (the DataCloneError of WebKit's
// SharedWorker; here Node's, for a value that cannot be cloned) gives a
// storage error that says sign-in cannot start and what can (in a worker,
// another runtime; on a page, storage "memory"), and the message a person
// reads says the request stopped.
func TestKeyThatCannotBeStoredSaysSignInCannotStart(t *testing.T) {
	clone, err := jsbridge.Global().Get("structuredClone")
	if err != nil || clone.IsUndefined() {
		t.Fatal("this Node has no structuredClone")
	}
	fn, _ := jsbridge.Global().Get("Function")
	notClonable, err := fn.New("return 1")
	if err != nil {
		t.Fatal(err)
	}
	_, cloneErr := jsbridge.Call(clone, notClonable)
	if cloneErr == nil {
		t.Fatal("structuredClone of a function succeeded")
	}
	err = keyStoreErr(cloneErr, "the DPoP key")
	if mcperr.CodeOf(err, "") != mcperr.Storage || !errors.Is(err, cloneErr) {
		t.Errorf("keyStoreErr = %v; want a storage error wrapping the clone error", err)
	}
	// Node is not a worker: the advice is the one for a page.
	for _, want := range []string{"cannot store the DPoP key", "sign-in cannot start", `storage: "memory"`} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("keyStoreErr = %q; want it to say %q", err, want)
		}
	}
	// Another failure (quota, a closed database) names no runtime.
	other := keyStoreErr(errors.New("QuotaExceededError"), "the DPoP key")
	if strings.Contains(other.Error(), "runtime") || strings.Contains(other.Error(), "memory") {
		t.Errorf("keyStoreErr of a quota error = %q; want no advice about clones", other)
	}
	msg, _ := mcperr.Present(mcperr.AtServer(err, "mcp.example.com"))
	if want := "The browser could not store or use the sign-in for the server at mcp.example.com (IndexedDB or WebCrypto failed), so the request stopped. The detail says why and what to do."; msg != want {
		t.Errorf("Present = %q; want %q", msg, want)
	}
}

// TestWebCryptoSealsLikeGo: the stored records, made objects as the store
// writes them, read back with the same properties, and WebCrypto, holding
// their wrapping key, opens them and seals as Go's AES-GCM does: the
// sealer of the native tests computes what the browser does.
func TestWebCryptoSealsLikeGo(t *testing.T) {
	ctx := ctxT(t)
	f := loadFixture(t)
	subtle, err := subtleCrypto()
	if err != nil {
		t.Fatal(err)
	}
	raw, err := jsbridge.Uint8Array(f.aesKey)
	if err != nil {
		t.Fatal(err)
	}
	p, err := subtle.Call("importKey", "raw", raw, "AES-GCM", false, []any{"encrypt", "decrypt"})
	if err != nil {
		t.Fatal(err)
	}
	key, err := jsbridge.Await(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	web := &idbDB{key: key, keyOK: true}
	gcm := newGCMSealer(t, f.aesKey)
	db := f.db(t)

	for _, store := range []string{storeGrants, storeClients, storeMetadata, storePending} {
		props := f.record(t, store)
		v, err := recordToJS(props)
		if err != nil {
			t.Fatal(err)
		}
		got, err := recordFromJS(store, v)
		if err != nil {
			t.Fatalf("%s: %v", store, err)
		}
		want, _, _ := db.readRecord(ctx, store, props[propKey].(string))
		if d := cmp.Diff(want, got); d != "" {
			t.Errorf("%s: the record read from its object (-want +got):\n%s", store, d)
		}
		if !sealed(store) {
			continue
		}
		plain, err := web.unseal(ctx, got.IV, got.CT)
		if err != nil {
			t.Fatalf("%s: WebCrypto does not open the record: %v", store, err)
		}
		if goPlain, _ := gcm.unseal(ctx, got.IV, got.CT); !bytes.Equal(plain, goPlain) {
			t.Errorf("%s: WebCrypto and Go open the record differently", store)
		}
	}

	iv := make([]byte, ivSize)
	rand.Read(iv)
	plain := []byte(`{"AccessToken":"at"}`)
	ct, err := web.seal(ctx, iv, plain)
	if err != nil {
		t.Fatal(err)
	}
	if goCT, _ := gcm.seal(ctx, iv, plain); !bytes.Equal(ct, goCT) {
		t.Errorf("WebCrypto sealed %x; Go seals %x", ct, goCT)
	}
}

// TestRecordUnderAnotherKeyIsToldApart: WebCrypto's refusal to open a
// record sealed under another key is errOtherKey (the store then takes the
// record for none), and reads as such through the store; a record that
// opens does not.
func TestRecordUnderAnotherKeyIsToldApart(t *testing.T) {
	ctx := ctxT(t)
	subtle, err := subtleCrypto()
	if err != nil {
		t.Fatal(err)
	}
	newKey := func() *idbDB {
		alg, _ := jsbridge.NewObject(map[string]any{"name": "AES-GCM", "length": 256})
		p, err := subtle.Call("generateKey", alg, false, []any{"encrypt", "decrypt"})
		if err != nil {
			t.Fatal(err)
		}
		key, err := jsbridge.Await(ctx, p)
		if err != nil {
			t.Fatal(err)
		}
		return &idbDB{key: key, keyOK: true}
	}
	a, b := newKey(), newKey()
	iv := make([]byte, ivSize)
	rand.Read(iv)
	ct, err := a.seal(ctx, iv, []byte(`{"AccessToken":"at"}`))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.unseal(ctx, iv, ct); err != nil {
		t.Fatalf("unseal under the same key: %v", err)
	}
	if _, err := b.unseal(ctx, iv, ct); !errors.Is(err, errOtherKey) {
		t.Errorf("unseal under another key = %v; want errOtherKey", err)
	}
	db := &fakeDB{}
	_ = db.writeRecord(ctx, storeGrants, map[string]any{propKey: "https://mcp.example.com/mcp", propIV: iv, propCT: ct})
	s := opened(t, &sealedKV{db: db, sl: b})
	if g, err := s.GetGrant(ctx, "https://mcp.example.com/mcp"); g != nil || err != nil {
		t.Errorf("GetGrant of a record under another key = %+v, %v; want none", g, err)
	}
}

// TestMemoryDPoPKeysClear: after Clear (clearStorage() for clients with
// storage "memory") a key is made anew, never the one before.
func TestMemoryDPoPKeysClear(t *testing.T) {
	ctx := ctxT(t)
	keys := NewMemoryDPoPKeys()
	k1, err := keys.Key(ctx, "reg")
	if err != nil {
		t.Fatal(err)
	}
	keys.Clear()
	k2, err := keys.Key(ctx, "reg")
	if err != nil {
		t.Fatal(err)
	}
	x1, _ := k1.PublicJWK()
	x2, _ := k2.PublicJWK()
	if x1 == x2 {
		t.Error("the key after Clear is the key before it")
	}
}
