package oauth

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"sync"

	"github.com/mcpwasm/mcpwasm/internal/jws"
	"github.com/mcpwasm/mcpwasm/mcperr"
)

// MemoryDPoPKeys is a [DPoPKeys] in memory: ECDSA P-256 keys made with
// crypto/ecdsa, gone when the process ends (a grant bound to a lost key
// is refused by its server, and a new sign-in follows). It is the default
// of [Config.DPoPKeys] and [PendingConfig.DPoPKeys]; the zero value is
// ready and it is safe for concurrent use.
type MemoryDPoPKeys struct {
	mu   sync.Mutex
	keys map[string]*ecdsaDPoPKey
}

var _ DPoPKeys = (*MemoryDPoPKeys)(nil)

// NewMemoryDPoPKeys returns an empty [MemoryDPoPKeys].
func NewMemoryDPoPKeys() *MemoryDPoPKeys { return &MemoryDPoPKeys{} }

// defaultDPoPKeys serves every Handler and CompletePending of the process
// without Config.DPoPKeys, so that a flow finished by CompletePending and
// the Handler that uses its grant sign with the same key.
var defaultDPoPKeys = NewMemoryDPoPKeys()

// Key implements [DPoPKeys].
func (m *MemoryDPoPKeys) Key(_ context.Context, id string) (DPoPKey, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if k, ok := m.keys[id]; ok {
		return k, nil
	}
	priv, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, newErr(mcperr.TokenFailed, "making a DPoP key failed", err)
	}
	k, err := newECDSADPoPKey(priv)
	if err != nil {
		return nil, err
	}
	if m.keys == nil {
		m.keys = map[string]*ecdsaDPoPKey{}
	}
	m.keys[id] = k
	return k, nil
}

// DeleteKey implements [DPoPKeys].
func (m *MemoryDPoPKeys) DeleteKey(_ context.Context, id string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.keys, id)
	return nil
}

// ecdsaDPoPKey is a [DPoPKey] over a Go ECDSA P-256 key.
type ecdsaDPoPKey struct {
	priv *ecdsa.PrivateKey
	x, y string
}

func newECDSADPoPKey(priv *ecdsa.PrivateKey) (*ecdsaDPoPKey, error) {
	x, y, err := jws.PublicJWK(&priv.PublicKey)
	if err != nil {
		return nil, newErr(mcperr.TokenFailed, "encoding a DPoP public key failed", err)
	}
	return &ecdsaDPoPKey{priv: priv, x: x, y: y}, nil
}

// PublicJWK implements [DPoPKey].
func (k *ecdsaDPoPKey) PublicJWK() (x, y string) { return k.x, k.y }

// Sign implements [DPoPKey]: ES256, r‖s.
func (k *ecdsaDPoPKey) Sign(_ context.Context, input []byte) ([]byte, error) {
	sig, err := jws.Signer(k.priv)(input)
	if err != nil {
		return nil, newErr(mcperr.TokenFailed, "signing a DPoP proof failed", err)
	}
	return sig, nil
}
