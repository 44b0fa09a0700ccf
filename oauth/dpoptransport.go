package oauth

import (
	"context"
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
// when its body can be sent again (http.Request.GetBody). Any other 401
// to a proof, with keys that keep copies ([DPoPKeyCopies]), looks the key
// up in storage again (never making one), and sends the request once more
// when another page replaced it. The newest DPoP-Nonce of any answer is
// kept for later proofs. Other requests (no token, another token, a
// Bearer grant) pass unchanged.
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
	if err == nil && isNonceChallenge(resp) && fresh != "" {
		resp, err = again(req, resp, send)
	}
	if err == nil && resp.StatusCode == http.StatusUnauthorized && !isNonceChallenge(resp) {
		if k := t.storedKey(ctx, keyID, key); k != nil {
			key = k
			resp, err = again(req, resp, send)
		}
	}
	return resp, err
}

// again sends req once more (send with a new copy of its body) in place
// of the refused resp; when the body cannot be sent again, resp stands.
func again(req *http.Request, resp *http.Response, send func(io.ReadCloser) (*http.Response, error)) (*http.Response, error) {
	var body io.ReadCloser
	if req.Body != nil && req.Body != http.NoBody {
		if req.GetBody == nil {
			return resp, nil // cannot be sent again: the 401 stands
		}
		var err error
		if body, err = req.GetBody(); err != nil {
			return resp, nil
		}
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxBody))
	resp.Body.Close()
	return send(body)
}

// storedKey looks key id up in storage again after a resource server
// refused a proof by used (whatever error it names: its WWW-Authenticate
// may be unreadable cross-origin), for keys that keep copies
// ([DPoPKeyCopies]): another page may have replaced the stored key. It
// returns the stored key when it differs from used, else nil: sending
// again would be refused the same way, and when no key is stored (the
// storage was cleared) the refusal stands, so that the handler finds the
// grant gone and asks for a sign-in. The look-up never makes a key: one
// made here would sit in storage that was just cleared.
func (t *dpopTransport) storedKey(ctx context.Context, id string, used DPoPKey) DPoPKey {
	copies, ok := t.h.cfg.DPoPKeys.(DPoPKeyCopies)
	if !ok {
		return nil
	}
	k, found, err := copies.StoredKey(ctx, id)
	if err != nil || !found || k == nil {
		return nil
	}
	x1, y1 := used.PublicJWK()
	x2, y2 := k.PublicJWK()
	if !isCoord(x2) || !isCoord(y2) || (x1 == x2 && y1 == y2) {
		return nil
	}
	return k
}
