package authserver

import (
	"errors"
	"net/http"

	"github.com/mcpwasm/mcpwasm/demo/dpopcheck"
)

// TokenTypeDPoP is the token_type of DPoP-bound tokens (RFC 9449 §5).
const TokenTypeDPoP = "DPoP"

// extraDPoPKey is where [Server.Verifier] puts the thumbprint of the key a
// token is bound to in TokenInfo.Extra (demo.ExtraDPoPKey; this package
// cannot import demo).
const extraDPoPKey = "dpop_jkt"

// dpopAlgs is dpop_signing_alg_values_supported when [Config.DPoP] is set.
var dpopAlgs = []string{"ES256"}

// tokenDPoP checks the DPoP proof of a token request when [Config.DPoP] is
// set (RFC 9449 §5, §8): it always sends the current nonce in DPoP-Nonce,
// and returns the thumbprint of the proof's key, to which the tokens are
// bound. Without a proof, or with one lacking the server's nonce, the
// request is refused (invalid_dpop_proof, use_dpop_nonce). Without
// Config.DPoP it returns "" and nil: tokens are Bearer tokens.
func (s *Server) tokenDPoP(w http.ResponseWriter, r *http.Request) (jkt string, oerr *oauthError) {
	if s.dpop == nil {
		return "", nil
	}
	w.Header().Set("DPoP-Nonce", s.dpop.Nonce())
	if len(r.Header.Values("DPoP")) == 0 {
		return "", errorf(http.StatusBadRequest, dpopcheck.CodeInvalidProof,
			"this server issues DPoP-bound tokens only: send a DPoP proof (RFC 9449)")
	}
	jkt, err := s.dpop.Check(r, "")
	if err != nil {
		var de *dpopcheck.Error
		if errors.As(err, &de) {
			return "", errorf(http.StatusBadRequest, de.Code, "%s", de.Description)
		}
		return "", errorf(http.StatusBadRequest, dpopcheck.CodeInvalidProof, "invalid DPoP proof")
	}
	return jkt, nil
}

// checkBinding checks that a refresh presents the DPoP key its grant is
// bound to, or none for a Bearer grant (RFC 9449 §5: a public client's
// refresh tokens are bound). s.mu is held.
func checkBinding(g *grant, jkt string) *oauthError {
	if g.jkt != jkt {
		return errorf(http.StatusBadRequest, "invalid_grant",
			"the refresh token is bound to another DPoP key, or to none")
	}
	return nil
}

// newDPoP returns the checker of token-request proofs, nil without
// Config.DPoP.
func newDPoP(cfg Config) *dpopcheck.Checker {
	if !cfg.DPoP {
		return nil
	}
	return dpopcheck.New(dpopcheck.Options{RequireNonce: true, Now: cfg.Now})
}
