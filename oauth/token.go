package oauth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/mcpwasm/mcpwasm/internal/busy"
	"github.com/mcpwasm/mcpwasm/mcperr"
	"golang.org/x/oauth2"
)

// refreshTimeout bounds a refresh, lock wait included.
const refreshTimeout = time.Minute

// maxExpiresIn is the longest lifetime (10 years) taken from expires_in;
// a longer one is read as "does not expire" (unknown), so expiry
// arithmetic cannot overflow.
const maxExpiresIn = 10 * 365 * 24 * 3600

// tokenResponse is a successful token response (RFC 6749 §5.1).
// Validated by [parseTokenResponse].
type tokenResponse struct {
	AccessToken  string
	TokenType    string
	RefreshToken string
	Scope        string

	expiry time.Time // zero: unknown
	issued time.Time // when the response was read (with expiry)
}

func tokenErr(msg string, cause error) *Error { return newErr(mcperr.TokenFailed, msg, cause) }

// parseExpiresIn reads expires_in, the token's lifetime in seconds
// (RFC 6749 §5.1): absent, null or 0 means unknown (the token is used
// until the server refuses it). A number or a numeric string is taken,
// 3600.0 and 1e3 as well; a fraction is rounded down (expiring early only
// refreshes early). A lifetime past maxExpiresIn (servers send 2^31-1 and
// the like for "never") is unknown too. Negative or non-numeric values are
// refused: they mean nothing.
func parseExpiresIn(raw json.RawMessage) (secs int64, err error) {
	s := strings.TrimSpace(string(raw))
	if s == "" || s == "null" {
		return 0, nil
	}
	s = strings.Trim(s, `"`)
	n, perr := strconv.ParseInt(s, 10, 64)
	if perr != nil {
		// 1e3, 3600.0, 59.5, digits past int64: a float, checked for range before the
		// conversion (int64(f) is implementation-defined out of range).
		f, ferr := strconv.ParseFloat(s, 64)
		switch {
		case ferr != nil && !errors.Is(ferr, strconv.ErrRange), math.IsNaN(f):
			return 0, fmt.Errorf("expires_in is not a number")
		case f < 0:
			return 0, fmt.Errorf("expires_in out of range")
		case f > maxExpiresIn: // +Inf too
			return 0, nil
		}
		n = int64(math.Floor(f))
	}
	switch {
	case n < 0:
		return 0, fmt.Errorf("expires_in out of range")
	case n > maxExpiresIn:
		return 0, nil
	}
	return n, nil
}

// tokenRequest POSTs form to the token endpoint with the client's
// authentication and validates the response; a non-nil key signs a DPoP
// proof (see [postToken]). Errors carry no secrets; an error response is an
// *oauth2.RetrieveError (without body) inside a [ErrTokenFailed]-coded
// *Error.
func (h *Handler) tokenRequest(ctx context.Context, endpoint string, cl clientCreds, form url.Values, key DPoPKey) (*tokenResponse, error) {
	return postToken(ctx, h.cfg.HTTPClient, h.cfg.Clock, endpoint, cl, form, key)
}

// postToken is [Handler.tokenRequest] for callers without a Handler
// ([CompletePending]), with a DPoP proof signed by key (RFC 9449
// §5) when key is not nil. An authorization server that asks for a nonce
// (400 error=use_dpop_nonce with DPoP-Nonce, §8) gets the request once
// more, with a new proof carrying it; the newest nonce of each server is
// kept for later proofs. A busy endpoint (429, 503) gets the request
// again after its Retry-After, a bounded number of times (see waitBusy).
func postToken(ctx context.Context, hc *http.Client, clk Clock, endpoint string, cl clientCreds, form url.Values, key DPoPKey) (*tokenResponse, error) {
	nonced, waits := false, 0
	for {
		tr, retry, err := postTokenOnce(ctx, hc, clk, endpoint, cl, form, key, !nonced)
		again, berr := waitBusy(ctx, clk, err, waits)
		switch {
		case berr != nil:
			return nil, berr
		case again:
			waits++
		case !retry:
			return tr, err
		default:
			nonced = true
		}
	}
}

// postTokenOnce sends one token request; retry reports a nonce challenge
// worth answering (only when mayRetry).
func postTokenOnce(ctx context.Context, hc *http.Client, clk Clock, endpoint string, cl clientCreds, form url.Values, key DPoPKey, mayRetry bool) (tr *tokenResponse, retry bool, err error) {
	req, err := clientRequest(ctx, endpoint, cl, form)
	if err != nil {
		return nil, false, err
	}
	if key != nil {
		proof, err := dpopProof(ctx, key, http.MethodPost, req.URL, "", asNonces.get(req.URL))
		if err != nil {
			return nil, false, err
		}
		req.Header.Set("DPoP", proof)
	}
	resp, err := hc.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return nil, false, ctx.Err()
		}
		return nil, false, tokenErr("token request failed", noAnswer{redactURLError(err)})
	}
	defer resp.Body.Close()
	nonce := ""
	if key != nil {
		nonce = asNonces.saw(req.URL, resp)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxBody+1))
	if err != nil {
		return nil, false, tokenErr("reading token response failed", noAnswer{errors.New("the answer broke off")})
	}
	if len(body) > maxBody {
		return nil, false, tokenErr(fmt.Sprintf("token response larger than %d bytes", maxBody), nil)
	}
	if busy.Busy(resp.StatusCode) {
		return nil, false, &busyAnswer{resp: resp} // see postToken
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		var e struct {
			Error       string `json:"error"`
			Description string `json:"error_description"`
			URI         string `json:"error_uri"`
		}
		_ = json.Unmarshal(body, &e)
		if mayRetry && key != nil && nonce != "" && resp.StatusCode == http.StatusBadRequest && e.Error == "use_dpop_nonce" {
			return nil, true, nil
		}
		// Servers do echo what they rejected ("invalid refresh token
		// abc…"): take every secret of the request out before the text
		// reaches an error, an event or a log.
		secrets := []string{form.Get("code"), form.Get("code_verifier"), form.Get("refresh_token"), form.Get("client_secret"), cl.secret,
			form.Get("assertion"), form.Get("client_assertion"), form.Get("subject_token")}
		clean := func(s string) string { return sanitize(redactSecrets(s, secrets...)) }
		re := &oauth2.RetrieveError{
			Response:         &http.Response{Status: strconv.Itoa(resp.StatusCode), StatusCode: resp.StatusCode},
			ErrorCode:        clean(e.Error),
			ErrorDescription: clean(e.Description),
			ErrorURI:         clean(e.URI),
		}
		return nil, false, &Error{Code: mcperr.TokenFailed, Msg: fmt.Sprintf("oauth: token endpoint returned status %d", resp.StatusCode), Err: re}
	}
	tr, err = parseTokenResponse(body, clk)
	if err != nil {
		return nil, false, err
	}
	return tr, false, nil
}

// clientRequest builds a form POST with client authentication
// (RFC 6749 §2.3.1): none (client_id in the body), client_secret_basic or
// client_secret_post.
func clientRequest(ctx context.Context, endpoint string, cl clientCreds, form url.Values) (*http.Request, error) {
	form = cloneValues(form)
	basic := false
	switch cl.method {
	case "client_secret_basic":
		basic = cl.secret != ""
		if !basic {
			form.Set("client_id", cl.id)
		}
	case "client_secret_post":
		form.Set("client_id", cl.id)
		if cl.secret != "" {
			form.Set("client_secret", cl.secret)
		}
	default: // none, private_key_jwt
		if cl.id != "" {
			form.Set("client_id", cl.id)
		}
		if cl.assertion != nil {
			a, err := cl.assertion()
			if err != nil {
				return nil, err
			}
			form.Set("client_assertion_type", assertionTypeJWT)
			form.Set("client_assertion", a)
		}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, strings.NewReader(form.Encode()))
	if err != nil {
		return nil, tokenErr("invalid token endpoint", nil)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	if basic {
		req.SetBasicAuth(url.QueryEscape(cl.id), url.QueryEscape(cl.secret))
	}
	return req, nil
}

func cloneValues(v url.Values) url.Values {
	c := make(url.Values, len(v))
	for k, vs := range v {
		c[k] = append([]string(nil), vs...)
	}
	return c
}

func (g *Grant) creds() clientCreds {
	return clientCreds{id: g.ClientID, secret: g.ClientSecret, method: g.AuthMethod}
}

// refresh exchanges the refresh token of stale (RFC 6749 §6) under the
// Locker, after re-reading the Store: when another holder (tab) already
// refreshed, its grant is used. A response without refresh_token keeps the
// old one. invalid_grant deletes the grant and returns an
// [ErrAuthorizationRequired]-coded error.
func (h *Handler) refresh(ctx context.Context, stale *Grant) (*Grant, error) {
	// Bounded: the lock is held across the token request, and a hanging
	// token endpoint must not keep every other refresher (tab) waiting.
	deadline := time.Now().Add(refreshTimeout)
	lctx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()
	unlock, err := h.cfg.Locker.Lock(lctx, "mcpwasm-oauth-refresh "+h.resource)
	if err != nil {
		return nil, err
	}
	defer unlock()
	// Past the lock the refresh runs to its end whatever its caller does:
	// once the request is out, the server may have rotated the refresh
	// token, and an answer dropped for a cancelled call would leave the
	// spent one stored (reuse detection then revokes the grant).
	ctx, cancelRun := context.WithDeadline(context.WithoutCancel(ctx), deadline)
	defer cancelRun()
	g, err := h.cfg.Store.GetGrant(ctx, h.resource)
	if err != nil {
		return nil, newErr(mcperr.Storage, "reading grant", err)
	}
	if g == nil {
		h.mu.Lock()
		h.grant = nil
		h.mu.Unlock()
		return nil, errNoGrant()
	}
	if err := h.trustIssuer(g.Issuer); err != nil {
		return nil, err // a grant stored before the policy: neither token is used
	}
	if g.AccessToken != stale.AccessToken && !h.expired(g) {
		// Someone (another tab) refreshed after this caller read the stale
		// grant: use theirs while it is still valid, even inside the
		// refresh margin, so a refresh happens exactly once. Refreshing
		// it again would present a refresh token that may already be
		// rotated (reuse detection revokes the whole grant).
		h.mu.Lock()
		h.grant, h.loaded = g, true
		h.mu.Unlock()
		return g, nil
	}
	if g.RefreshToken == "" {
		return nil, newErr(mcperr.AuthRequired, "access token expired and no refresh token is held", nil)
	}
	form := url.Values{
		"grant_type":    {"refresh_token"},
		"refresh_token": {g.RefreshToken},
		"resource":      {g.resourceIndicator()}, // the one of the authorization request
	}
	var key DPoPKey
	if g.DPoPKeyID != "" {
		// The refresh token is bound to the key of the grant's sign-in
		// (RFC 9449 §5): the same key signs.
		if key, err = storedDPoPKey(ctx, h.cfg.DPoPKeys, g.DPoPKeyID); err != nil {
			return nil, err
		}
	}
	tr, err := h.tokenRequest(ctx, g.TokenEndpoint, g.creds(), form, key)
	if err != nil {
		var re *oauth2.RetrieveError
		if asRetrieve(err, &re) && re.ErrorCode == "invalid_grant" {
			_ = h.cfg.Store.DeleteGrant(ctx, h.resource)
			h.mu.Lock()
			h.grant = nil
			h.mu.Unlock()
			aerr := &Error{Code: mcperr.AuthRequired, Msg: "oauth: refresh token rejected; authorization required", Err: re}
			h.setState(StateNeedsAuth, aerr)
			return nil, aerr
		}
		return nil, err
	}
	tt, err := grantTokenType(tr.TokenType, key != nil, key != nil && h.cfg.DPoP == DPoPOn)
	if err != nil {
		return nil, err
	}
	ng := *g
	ng.AccessToken = tr.AccessToken
	ng.TokenType = tt
	ng.Expiry, ng.IssuedAt = tr.expiry, tr.issued
	if tr.RefreshToken != "" {
		ng.RefreshToken = tr.RefreshToken
	}
	if tr.Scope != "" {
		ng.Scopes = strings.Fields(tr.Scope)
	}
	h.mu.Lock()
	h.grant, h.loaded = &ng, true
	h.mu.Unlock()
	h.emit(Event{Kind: EventTokenRefreshed, Resource: h.resource, State: StateAuthorized})
	defer h.changed(ChangeGranted, &ng, nil)
	if err := h.cfg.Store.PutGrant(ctx, &ng); err != nil {
		// The new token works: use it (from memory), and say loudly that
		// it is not stored (a lost write must never be silent).
		h.emit(Event{Kind: EventStoreFailed, Resource: h.resource, State: StateAuthorized,
			Err: newErr(mcperr.Storage, "storing the refreshed grant failed; it lives in memory until the next successful write", err)})
	}
	return &ng, nil
}

// noAnswer is the cause of a token request that got no whole answer: the
// network failed, or the body broke off. The server may not have acted on
// it, so a refresh token it carried may still be good.
type noAnswer struct{ err error }

func (n noAnswer) Error() string { return n.err.Error() }
func (n noAnswer) Unwrap() error { return n.err }

// refreshMayWorkLater reports whether a refresh that failed with err leaves
// the grant worth keeping: the token endpoint gave no answer, was busy or
// failed on its side (5xx), or the refresh never ran (its lock or its
// caller's time ran out). Its refresh token is most likely still good, and
// dropping it would sign the user out for a moment's outage. An answer
// that refuses the grant or the client (invalid_grant, any other 4xx
// OAuth error) does not.
func refreshMayWorkLater(err error) bool {
	var re *oauth2.RetrieveError
	var na noAnswer
	switch {
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded), errors.As(err, &na):
		return true
	case asRetrieve(err, &re):
		return re.Response != nil && re.Response.StatusCode >= 500
	}
	var b *mcperr.Busy
	return errors.As(err, &b)
}

func asRetrieve(err error, re **oauth2.RetrieveError) bool {
	for err != nil {
		if r, ok := err.(*oauth2.RetrieveError); ok {
			*re = r
			return true
		}
		u, ok := err.(interface{ Unwrap() error })
		if !ok {
			return false
		}
		err = u.Unwrap()
	}
	return false
}

// revoke calls the RFC 7009 revocation endpoint. §2.2 says 200; any 2xx
// is taken (servers answer 204 No Content too): the token is gone either
// way. An access token the server cannot revoke (§2.2.1
// unsupported_token_type, as oidc-provider answers for JWT access tokens)
// is no failure: nothing more can be done for it, and it ends at its
// expiry.
func (h *Handler) revoke(ctx context.Context, g *Grant, token, hint string) error {
	req, err := clientRequest(ctx, g.RevocationEndpoint, g.creds(), url.Values{"token": {token}, "token_type_hint": {hint}})
	if err != nil {
		return err
	}
	resp, err := h.cfg.HTTPClient.Do(req)
	if err != nil {
		return tokenErr("revocation request failed", redactURLError(err))
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, maxBody))
	if resp.StatusCode == http.StatusBadRequest && hint == "access_token" {
		var e struct {
			Error string `json:"error"`
		}
		if json.Unmarshal(body, &e) == nil && e.Error == "unsupported_token_type" {
			return nil
		}
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return tokenErr(fmt.Sprintf("revocation endpoint returned status %d", resp.StatusCode), nil)
	}
	return nil
}
