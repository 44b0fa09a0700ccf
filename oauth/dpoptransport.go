package oauth

import (
	"crypto/sha256"
	"io"
	"net/http"
	"strings"

	"github.com/mcpwasm/mcpwasm/mcperr"
)

// maxBoundTokens bounds the DPoP-bound access tokens a Handler remembers
// having handed out (a request may carry one that a refresh just replaced).
const maxBoundTokens = 8

// boundToken is a DPoP-bound access token the handler handed out, by hash.
type boundToken struct {
	sum   [sha256.Size]byte
	keyID string
}

// noteBound remembers that g's access token, just handed to the
// transport, is DPoP-bound.
func (h *Handler) noteBound(g *Grant) {
	sum := sha256.Sum256([]byte(g.AccessToken))
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, b := range h.bound {
		if b.sum == sum {
			return
		}
	}
	h.bound = append(h.bound, boundToken{sum: sum, keyID: g.DPoPKeyID})
	if len(h.bound) > maxBoundTokens {
		h.bound = h.bound[len(h.bound)-maxBoundTokens:]
	}
}

// dpopBinding reports whether tok is a DPoP-bound access token of this
// handler, and the name of its key.
func (h *Handler) dpopBinding(tok string) (keyID string, bound bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if g := h.grant; g != nil && g.AccessToken == tok {
		return g.DPoPKeyID, g.dpopBound()
	}
	sum := sha256.Sum256([]byte(tok))
	for _, b := range h.bound {
		if b.sum == sum {
			return b.keyID, true
		}
	}
	return "", false
}

// ResourceTransport returns an http.RoundTripper over next for the MCP
// requests of the transport this handler authorizes (go-sdk's streamable
// transport writes every token as "Authorization: Bearer"). A request
// carrying one of this handler's DPoP-bound access tokens goes out as
// RFC 9449 §7 asks: "Authorization: DPoP <token>" and a fresh DPoP proof
// (htm, htu, iat, jti, ath, and the server's newest nonce); it is never
// sent as Bearer (no key: the request fails). A 401 with WWW-Authenticate
// DPoP error="use_dpop_nonce" and a DPoP-Nonce (§9) is answered by
// sending the request once more with a new proof carrying the nonce,
// when its body can be sent again (http.Request.GetBody). The newest
// DPoP-Nonce of any answer is kept for later proofs. Other requests (no
// token, another token, a Bearer grant) pass unchanged.
func (h *Handler) ResourceTransport(next http.RoundTripper) http.RoundTripper {
	return &dpopTransport{h: h, next: next}
}

type dpopTransport struct {
	h    *Handler
	next http.RoundTripper
}

// presentedToken returns the access token of req's Authorization header
// (Bearer or DPoP scheme), or "".
func presentedToken(req *http.Request) string {
	if req == nil {
		return ""
	}
	a := req.Header.Get("Authorization")
	for _, scheme := range []string{"bearer ", "dpop "} {
		if len(a) > len(scheme) && strings.EqualFold(a[:len(scheme)], scheme) {
			return strings.TrimLeft(a[len(scheme):], " ")
		}
	}
	return ""
}

func (t *dpopTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.roundTrip(req)
	if err == nil {
		// go-sdk hands a request's first 401 to Authorize, not the one
		// to the request it sent again after a refresh.
		t.h.tokenAnswered(req.Context(), presentedToken(req), resp.StatusCode == http.StatusUnauthorized)
	}
	return resp, err
}

func (t *dpopTransport) roundTrip(req *http.Request) (*http.Response, error) {
	tok := presentedToken(req)
	keyID, bound := "", false
	if tok != "" {
		keyID, bound = t.h.dpopBinding(tok)
	}
	if !bound {
		return t.next.RoundTrip(req)
	}
	fail := func(err error) (*http.Response, error) {
		if req.Body != nil {
			req.Body.Close()
		}
		return nil, err
	}
	if keyID == "" {
		return fail(newErr(mcperr.AuthRequired, "the grant is DPoP-bound but names no DPoP key; sign in again", nil))
	}
	ctx := req.Context()
	key, err := dpopKey(ctx, t.h.cfg.DPoPKeys, keyID)
	if err != nil {
		return fail(err)
	}
	fresh := "" // the valid DPoP-Nonce of the last answer
	send := func(body io.ReadCloser) (*http.Response, error) {
		r := req.Clone(ctx)
		r.Body = body
		proof, err := dpopProof(ctx, key, r.Method, r.URL, tok, rsNonces.get(r.URL))
		if err != nil {
			if body != nil {
				body.Close()
			}
			return nil, err
		}
		r.Header.Set("Authorization", "DPoP "+tok)
		r.Header.Set("DPoP", proof)
		resp, err := t.next.RoundTrip(r)
		if err == nil {
			fresh = rsNonces.saw(r.URL, resp)
		}
		return resp, err
	}
	resp, err := send(req.Body)
	if err != nil || !isNonceChallenge(resp) || fresh == "" {
		return resp, err
	}
	var body io.ReadCloser
	if req.Body != nil && req.Body != http.NoBody {
		if req.GetBody == nil {
			return resp, nil // cannot be sent again: the 401 stands
		}
		if body, err = req.GetBody(); err != nil {
			return resp, nil
		}
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxBody))
	resp.Body.Close()
	return send(body)
}
