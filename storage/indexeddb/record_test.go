package indexeddb

import (
	"bytes"
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpwasm/mcpwasm/mcperr"
	"github.com/mcpwasm/mcpwasm/oauth"
)

// The values stored in testdata/records.json.

func fixtureTime(h int) time.Time { return time.Date(2026, 1, 2, h, 4, 5, 0, time.UTC) }

func fixtureGrant() *oauth.Grant {
	return &oauth.Grant{
		Resource: "https://mcp.example.com/mcp", Issuer: "https://as.example.com",
		AccessToken: "at-fixture-secret", TokenType: "DPoP", RefreshToken: "rt-fixture-secret",
		Expiry: fixtureTime(4), IssuedAt: fixtureTime(3), Scopes: []string{"mcp:read", "mcp:write"},
		TokenEndpoint: "https://as.example.com/token", RevocationEndpoint: "https://as.example.com/revoke",
		ClientID: "client-1", AuthMethod: "none", RedirectURI: "https://app.example.com/callback.html",
		ResourceIndicator: "https://mcp.example.com/", DPoPKeyID: "reg-1",
	}
}

func fixtureClient() *oauth.ClientRegistration {
	return &oauth.ClientRegistration{
		Issuer: "https://as.example.com", RedirectURI: "https://app.example.com/callback.html",
		ClientID: "client-2", ClientSecret: "cs-fixture-secret", AuthMethod: "client_secret_basic",
		SecretExpiry: time.Date(2026, 2, 1, 0, 0, 0, 0, time.UTC),
	}
}

func fixtureMetadata() *oauth.CachedMetadata {
	return &oauth.CachedMetadata{
		Key:    "resource:https://mcp.example.com/mcp",
		Data:   []byte(`{"resource":"https://mcp.example.com/mcp"}`),
		Expiry: fixtureTime(5),
	}
}

func fixturePending() *oauth.PendingFlow {
	return &oauth.PendingFlow{
		State: "state-fixture-0123456789abcdef", Verifier: "verifier-fixture-secret",
		RedirectURI: "https://app.example.com/callback.html", Resource: "https://mcp.example.com/mcp",
		Issuer: "https://as.example.com", ClientID: "client-1", Scopes: []string{"mcp:read"},
		Expiry: fixtureTime(6), ResourceIndicator: "https://mcp.example.com/",
		TokenEndpoint: "https://as.example.com/token", RevocationEndpoint: "https://as.example.com/revoke",
		AuthMethod: "none", RequireIss: true, DPoPKeyID: "reg-1", DPoPRequired: true,
	}
}

// cryptoKeyStub stands for a CryptoKey in a record, by its type
// ("secret", "private" or "public").
type cryptoKeyStub struct{ Type string }

// fixture is testdata/records.json: one record per object store as the
// store writes them, Uint8Arrays as []byte and CryptoKeys as stubs, and
// the raw wrapping key that sealed them.
type fixture struct {
	aesKey  []byte
	records map[string][]map[string]any
}

func loadFixture(t *testing.T) fixture {
	t.Helper()
	b, err := os.ReadFile("testdata/records.json")
	if err != nil {
		t.Fatal(err)
	}
	var raw struct {
		AESKey  []byte                                  `json:"aesKey"`
		Records map[string][]map[string]json.RawMessage `json:"records"`
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		t.Fatal(err)
	}
	f := fixture{aesKey: raw.AESKey, records: map[string][]map[string]any{}}
	for store, recs := range raw.Records {
		for _, rec := range recs {
			props := map[string]any{}
			for name, v := range rec {
				var s string
				if json.Unmarshal(v, &s) == nil {
					props[name] = s
					continue
				}
				var typed struct {
					Uint8Array []byte
					CryptoKey  *struct {
						Type string `json:"type"`
					}
				}
				if err := json.Unmarshal(v, &typed); err != nil {
					t.Fatal(err)
				}
				switch {
				case typed.Uint8Array != nil:
					props[name] = typed.Uint8Array
				case typed.CryptoKey != nil:
					props[name] = cryptoKeyStub{typed.CryptoKey.Type}
				default:
					t.Fatalf("%s.%s: %s is not a string, Uint8Array or CryptoKey", store, name, v)
				}
			}
			f.records[store] = append(f.records[store], props)
		}
	}
	return f
}

// record returns the fixture's record in store.
func (f fixture) record(t *testing.T, store string) map[string]any {
	t.Helper()
	if len(f.records[store]) != 1 {
		t.Fatalf("the fixture has %d records in %s; want 1", len(f.records[store]), store)
	}
	return f.records[store][0]
}

// db returns a database holding the fixture's records.
func (f fixture) db(t *testing.T) *fakeDB {
	db := &fakeDB{}
	for store, recs := range f.records {
		for _, rec := range recs {
			if err := db.writeRecord(context.Background(), store, rec); err != nil {
				t.Fatal(err)
			}
		}
	}
	return db
}

// gcmSealer is AES-GCM in Go: what WebCrypto computes with the same key
// (TestWebCryptoSealsLikeGo checks it under Node).
type gcmSealer struct{ aead cipher.AEAD }

func newGCMSealer(t *testing.T, key []byte) gcmSealer {
	t.Helper()
	block, err := aes.NewCipher(key)
	if err != nil {
		t.Fatal(err)
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		t.Fatal(err)
	}
	return gcmSealer{aead}
}

func (g gcmSealer) seal(_ context.Context, iv, plain []byte) ([]byte, error) {
	if len(iv) != g.aead.NonceSize() {
		return nil, fmt.Errorf("a nonce of %d bytes", len(iv))
	}
	return g.aead.Seal(nil, iv, plain, nil), nil
}

func (g gcmSealer) unseal(_ context.Context, iv, ct []byte) ([]byte, error) {
	if len(iv) != g.aead.NonceSize() {
		return nil, fmt.Errorf("a nonce of %d bytes", len(iv))
	}
	plain, err := g.aead.Open(nil, iv, ct, nil)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", errOtherKey, err)
	}
	return plain, nil
}

// fakeDB is a [recordDB] in memory: each record as its properties, by
// object store and key path.
type fakeDB struct {
	stores map[string]map[string]map[string]any
}

func (d *fakeDB) readRecord(_ context.Context, store, key string) (storedRecord, bool, error) {
	props := d.stores[store][key]
	if props == nil {
		return storedRecord{}, false, nil
	}
	var rec storedRecord
	rec.JSON, _ = props[propJSON].(string)
	rec.IV, _ = props[propIV].([]byte)
	rec.CT, _ = props[propCT].([]byte)
	return rec, true, nil
}

func (d *fakeDB) writeRecord(_ context.Context, store string, rec map[string]any) error {
	key, ok := rec[propKey].(string)
	if !ok {
		return fmt.Errorf("a record without its key path %q", propKey)
	}
	if d.stores == nil {
		d.stores = map[string]map[string]map[string]any{}
	}
	if d.stores[store] == nil {
		d.stores[store] = map[string]map[string]any{}
	}
	d.stores[store][key] = rec
	return nil
}

func (d *fakeDB) deleteRecord(_ context.Context, store, key string) error {
	delete(d.stores[store], key)
	return nil
}

func (d *fakeDB) readAll(ctx context.Context, store string) ([]storedRecord, error) {
	var out []storedRecord
	for key := range d.stores[store] {
		rec, _, _ := d.readRecord(ctx, store, key)
		rec.Key = key
		out = append(out, rec)
	}
	return out, nil
}

func (d *fakeDB) clearStore(_ context.Context, store string) error {
	delete(d.stores, store)
	return nil
}

// TestRecordsWrittenBeforeStillRead: the records of testdata/records.json,
// as the store wrote them, read back as the values that were stored.
func TestRecordsWrittenBeforeStillRead(t *testing.T) {
	ctx := ctxT(t)
	f := loadFixture(t)
	s := opened(t, &sealedKV{db: f.db(t), sl: newGCMSealer(t, f.aesKey)})

	g, err := s.GetGrant(ctx, fixtureGrant().Resource)
	if d := cmp.Diff(fixtureGrant(), g); err != nil || d != "" {
		t.Errorf("the stored grant (%v; -want +got):\n%s", err, d)
	}
	c, err := s.GetClient(ctx, fixtureClient().Issuer, fixtureClient().RedirectURI)
	if d := cmp.Diff(fixtureClient(), c); err != nil || d != "" {
		t.Errorf("the stored registration (%v; -want +got):\n%s", err, d)
	}
	m, err := s.GetMetadata(ctx, fixtureMetadata().Key)
	if d := cmp.Diff(fixtureMetadata(), m); err != nil || d != "" {
		t.Errorf("the stored metadata (%v; -want +got):\n%s", err, d)
	}
	p, err := s.GetPending(ctx, fixturePending().State)
	if d := cmp.Diff(fixturePending(), p); err != nil || d != "" {
		t.Errorf("the stored pending flow (%v; -want +got):\n%s", err, d)
	}
}

// shape maps each property of a record to the kind of its value.
func shape(rec map[string]any) map[string]string {
	out := map[string]string{}
	for name, v := range rec {
		switch v.(type) {
		case string:
			out[name] = "string"
		case []byte:
			out[name] = "Uint8Array"
		case cryptoKeyStub:
			out[name] = "CryptoKey"
		default:
			out[name] = fmt.Sprintf("%T", v)
		}
	}
	return out
}

// TestRecordsAreWrittenInTheStoredShape: each kind is written with the
// properties of the stored records; grants, registrations and pending
// flows are the JSON of the value sealed under a fresh 12-byte nonce, no
// secret in the clear; metadata is its JSON; the key records hold their
// CryptoKeys where the stored ones do.
func TestRecordsAreWrittenInTheStoredShape(t *testing.T) {
	ctx := ctxT(t)
	f := loadFixture(t)
	key := make([]byte, 32)
	rand.Read(key)
	db := &fakeDB{}
	sl := newGCMSealer(t, key)
	s := opened(t, &sealedKV{db: db, sl: sl})
	g, c, m, p := fixtureGrant(), fixtureClient(), fixtureMetadata(), fixturePending()
	for _, err := range []error{s.PutGrant(ctx, g), s.PutClient(ctx, c), s.PutMetadata(ctx, m), s.PutPending(ctx, p)} {
		if err != nil {
			t.Fatal(err)
		}
	}
	kinds := []struct {
		store, key string
		value      any
		secrets    []string
	}{
		{storeGrants, g.Resource, g, []string{g.AccessToken, g.RefreshToken}},
		{storeClients, c.Issuer + "\x00" + c.RedirectURI, c, []string{c.ClientSecret}},
		{storeMetadata, m.Key, m, nil},
		{storePending, p.State, p, []string{p.Verifier}},
	}
	for _, k := range kinds {
		rec := db.stores[k.store][k.key]
		if rec == nil {
			t.Fatalf("no record in %s under %q", k.store, k.key)
		}
		if d := cmp.Diff(shape(f.record(t, k.store)), shape(rec)); d != "" {
			t.Errorf("the record in %s has another shape than the stored ones (-stored +written):\n%s", k.store, d)
			continue
		}
		if rec[propKey] != k.key {
			t.Errorf("the record in %s has %s = %q; want %q", k.store, propKey, rec[propKey], k.key)
		}
		var data []byte
		if sealed(k.store) {
			iv := rec[propIV].([]byte)
			if len(iv) != 12 {
				t.Errorf("the nonce in %s has %d bytes; want 12", k.store, len(iv))
			}
			var err error
			if data, err = sl.unseal(ctx, iv, rec[propCT].([]byte)); err != nil {
				t.Fatalf("the record in %s does not open with the key: %v", k.store, err)
			}
		} else {
			data = []byte(rec[propJSON].(string))
		}
		got := reflect.New(reflect.TypeOf(k.value).Elem()).Interface()
		if err := json.Unmarshal(data, got); err != nil {
			t.Fatalf("the record in %s holds no JSON: %v", k.store, err)
		}
		if d := cmp.Diff(k.value, got); d != "" {
			t.Errorf("the JSON in %s (-want +got):\n%s", k.store, d)
		}
		for _, secret := range k.secrets {
			for name, v := range rec {
				if b, ok := v.([]byte); ok && bytes.Contains(b, []byte(secret)) || v == secret {
					t.Errorf("the record in %s holds the secret %q in the clear in %s", k.store, secret, name)
				}
			}
		}
	}

	iv1 := db.stores[storeGrants][g.Resource][propIV].([]byte)
	if err := s.PutGrant(ctx, g); err != nil {
		t.Fatal(err)
	}
	if iv2 := db.stores[storeGrants][g.Resource][propIV].([]byte); bytes.Equal(iv1, iv2) {
		t.Error("two writes of a grant used the same nonce")
	}

	if d := cmp.Diff(f.record(t, storeKeys), keyRecord(cryptoKeyStub{"secret"})); d != "" {
		t.Errorf("keyRecord differs from the stored one (-stored +written):\n%s", d)
	}
	if d := cmp.Diff(f.record(t, storeDPoP), dpopRecord("reg-1", cryptoKeyStub{"private"}, cryptoKeyStub{"public"})); d != "" {
		t.Errorf("dpopRecord differs from the stored one (-stored +written):\n%s", d)
	}
}

// TestRecordSealedUnderAnotherKeyIsNone: a sealed record that does not
// open (its key record was lost, a new key made) is taken for no record,
// so the page is signed out rather than stuck; the next write replaces it.
// Metadata, not sealed, still reads.
func TestRecordSealedUnderAnotherKeyIsNone(t *testing.T) {
	ctx := ctxT(t)
	f := loadFixture(t)
	other := bytes.Clone(f.aesKey)
	other[0] ^= 1
	s := opened(t, &sealedKV{db: f.db(t), sl: newGCMSealer(t, other)})
	if g, err := s.GetGrant(ctx, fixtureGrant().Resource); g != nil || err != nil {
		t.Errorf("GetGrant under another key = %v, %v; want none, no error", g, err)
	}
	if m, err := s.GetMetadata(ctx, fixtureMetadata().Key); m == nil || err != nil {
		t.Errorf("GetMetadata under another key = %v, %v; want the metadata", m, err)
	}
	if err := s.PutGrant(ctx, fixtureGrant()); err != nil {
		t.Fatal(err)
	}
	if g, err := s.GetGrant(ctx, fixtureGrant().Resource); err != nil || cmp.Diff(fixtureGrant(), g) != "" {
		t.Errorf("GetGrant after a new sign-in = %+v, %v; want the new grant", g, err)
	}
}

// TestKeyStoreErrorSaysWhatCan: a CryptoKey that IndexedDB cannot clone
// gives the advice that fits where the code runs (another runtime in a
// worker, storage "memory" on a page); any other failure gives none. Each
// is a "storage" error that says sign-in cannot start and wraps the cause.
func TestKeyStoreErrorSaysWhatCan(t *testing.T) {
	cloneErr := errors.New("DataCloneError: Failed to execute 'add' on 'IDBObjectStore': #<CryptoKey> could not be cloned.")
	const worker, page = `load({ runtime: "worker" }) or load({ runtime: "main" }) can`, `storage: "memory"`
	for _, c := range []struct {
		name     string
		werr     error
		inWorker bool
		want     string // advice; "" for none
	}{
		{"clone in a worker", cloneErr, true, worker},
		{"clone on a page", cloneErr, false, page},
		{"quota in a worker", errors.New("QuotaExceededError"), true, ""},
		{"no write error", nil, false, ""},
	} {
		err := keyStoreError(c.werr, "the DPoP key", c.inWorker)
		msg := err.Error()
		if mcperr.CodeOf(err, "") != mcperr.Storage || c.werr != nil && !errors.Is(err, c.werr) {
			t.Errorf("%s: %v is not a storage error wrapping %v", c.name, err, c.werr)
		}
		if !strings.Contains(msg, "cannot store the DPoP key") || !strings.Contains(msg, "sign-in cannot start") {
			t.Errorf("%s: %q does not say what failed and that sign-in cannot start", c.name, msg)
		}
		for _, advice := range []string{worker, page} {
			if got, want := strings.Contains(msg, advice), advice == c.want; got != want {
				t.Errorf("%s: %q mentions %q: %v; want %v", c.name, msg, advice, got, want)
			}
		}
	}
}
