package oauth

import "context"

// DPoPMode says whether a [Handler] asks for DPoP-bound tokens (RFC 9449).
type DPoPMode string

// The DPoP modes of [Config.DPoP].
const (
	// DPoPAuto (the default, also ""): DPoP when the authorization server
	// advertises ES256 in dpop_signing_alg_values_supported, else Bearer.
	DPoPAuto DPoPMode = "auto"
	// DPoPOn: DPoP always; a server without ES256 support, or one that
	// answers with a Bearer token, fails the sign-in with a clear error.
	DPoPOn DPoPMode = "on"
	// DPoPOff: Bearer tokens only; no proofs are sent.
	DPoPOff DPoPMode = "off"
)

// DPoPKey is one ES256 (ECDSA P-256 with SHA-256) key that signs DPoP
// proofs. Its private part never leaves it: natively a Go key, in the
// browser a non-extractable WebCrypto key kept in IndexedDB.
type DPoPKey interface {
	// PublicJWK returns the public key's coordinates x and y, each the
	// base64url (no padding) of 32 bytes (RFC 7518 §6.2.1).
	PublicJWK() (x, y string)
	// Sign returns the ES256 signature of input: r‖s, 64 bytes
	// (RFC 7518 §3.4).
	Sign(ctx context.Context, input []byte) ([]byte, error)
}

// DPoPKeys keeps DPoP keys by name, one per client registration. Key
// returns the key named id, making and keeping a new one when there is
// none; concurrent callers (in the browser, tabs) get the same key.
// DeleteKey forgets it; a missing key is not an error.
type DPoPKeys interface {
	Key(ctx context.Context, id string) (DPoPKey, error)
	DeleteKey(ctx context.Context, id string) error
}

// DPoPKeyCopies is implemented by [DPoPKeys] that keep in-memory copies
// of keys stored elsewhere (the browser's keep IndexedDB's, so that a
// proof reads no storage). ForgetCopy drops the copy of id: the next Key
// reads the stored key again; it must not block. StoredKey drops the copy
// of id and looks the stored key up, never making one: found is false
// when none is stored (another page deleted it, as clearStorage does).
// A resource server's refusal of a proof calls StoredKey, in case another
// page replaced the key.
type DPoPKeyCopies interface {
	ForgetCopy(id string)
	StoredKey(ctx context.Context, id string) (k DPoPKey, found bool, err error)
}
