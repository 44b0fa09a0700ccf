package demo

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/auth"

	"github.com/mcpwasm/mcpwasm/demo/dpopcheck"
)

// ExtraDPoPKey is the key of auth.TokenInfo.Extra under which a
// [Protection.Verifier] names the RFC 7638 thumbprint of the DPoP key a
// token is bound to (authserver's verifier sets it for DPoP-bound tokens).
const ExtraDPoPKey = "dpop_jkt"

type verifiedKey struct{}

// dpopGuard replaces auth.RequireBearerToken when p.DPoP is set. It accepts
// a request only with "Authorization: DPoP <token>" and one DPoP proof
// (RFC 9449 §7.1) that is valid for this request and token, carries this
// server's current nonce and is signed by the key the token is bound to.
// Every answer carries the current nonce in DPoP-Nonce; a refusal is a 401
// with a DPoP challenge that keeps resource_metadata. The verified
// TokenInfo is put in the request's context as auth.RequireBearerToken
// does, so scopeGuard and the MCP handler see it.
func dpopGuard(p Protection, checker *dpopcheck.Checker, metadataURL string) func(http.Handler) http.Handler {
	// auth.RequireBearerToken stores the TokenInfo under its own context
	// key; it is given the already verified one.
	inject := auth.RequireBearerToken(func(ctx context.Context, _ string, _ *http.Request) (*auth.TokenInfo, error) {
		if info, _ := ctx.Value(verifiedKey{}).(*auth.TokenInfo); info != nil {
			return info, nil
		}
		return nil, auth.ErrInvalidToken
	}, nil)
	return func(next http.Handler) http.Handler {
		injected := inject(next)
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("DPoP-Nonce", checker.Nonce())
			refuse := func(code, desc string) {
				challenge := `DPoP algs="ES256"`
				if code != "" {
					challenge += fmt.Sprintf(`, error=%q, error_description=%q`, code, desc)
				}
				w.Header().Set("WWW-Authenticate", challenge+fmt.Sprintf(`, resource_metadata=%q`, metadataURL))
				msg := "DPoP-bound access token required"
				if desc != "" {
					msg = desc
				}
				http.Error(w, msg, http.StatusUnauthorized)
			}
			fields := strings.Fields(r.Header.Get("Authorization"))
			if len(r.Header.Values("Authorization")) != 1 || len(fields) != 2 {
				refuse("", "")
				return
			}
			scheme, token := strings.ToLower(fields[0]), fields[1]
			if scheme != "dpop" && scheme != "bearer" {
				refuse("", "")
				return
			}
			info, err := p.Verifier(r.Context(), token, r)
			if err != nil || info == nil {
				refuse("invalid_token", "the access token is invalid, expired or revoked")
				return
			}
			bound, _ := info.Extra[ExtraDPoPKey].(string)
			if bound == "" {
				refuse("invalid_token", "the access token is not DPoP-bound; this server takes DPoP-bound tokens only")
				return
			}
			if scheme != "dpop" {
				refuse("invalid_token", "the access token is DPoP-bound: present it with the DPoP scheme and a DPoP proof")
				return
			}
			jkt, err := checker.Check(r, token)
			if err != nil {
				var de *dpopcheck.Error
				if errors.As(err, &de) {
					refuse(de.Code, de.Description)
				} else {
					refuse(dpopcheck.CodeInvalidProof, "invalid DPoP proof")
				}
				return
			}
			if jkt != bound {
				refuse("invalid_token", "the access token is bound to another DPoP key")
				return
			}
			r2 := r.Clone(context.WithValue(r.Context(), verifiedKey{}, info))
			r2.Header.Set("Authorization", "Bearer "+token)
			injected.ServeHTTP(w, r2)
		})
	}
}
