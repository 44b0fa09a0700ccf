package oauth

import (
	"context"
	"net/http"
	"time"

	"github.com/mcpwasm/mcpwasm/mcperr"
	"golang.org/x/oauth2"
)

// TokenSource implements auth.OAuthHandler. It returns nil when no grant
// is held (the request goes out without a token and a 401 follows). The
// returned source refreshes before expiry, single-flight through the Locker.
func (h *Handler) TokenSource(ctx context.Context) (oauth2.TokenSource, error) {
	g, err := h.currentGrant(ctx)
	if err != nil {
		return nil, err
	}
	if g == nil {
		return nil, nil
	}
	return &tokenSource{h: h, ctx: ctx}, nil
}

type tokenSource struct {
	h   *Handler
	ctx context.Context
}

// Token returns the current access token, refreshing it when it expires
// within RefreshMargin and a refresh token is held. When the grant is gone
// (invalid_grant) it returns an *oauth2.RetrieveError with ErrorCode
// "invalid_grant" inside an [ErrAuthorizationRequired]-coded error, which
// go-sdk's transport treats as "send without a token".
func (ts *tokenSource) Token() (*oauth2.Token, error) {
	h := ts.h
	ctx := context.WithoutCancel(ts.ctx)
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	g, err := h.currentGrant(ctx)
	if err != nil {
		return nil, err
	}
	if g == nil {
		return nil, errNoGrant()
	}
	h.mu.Lock()
	closed := h.closed
	h.mu.Unlock()
	if closed {
		return h.heldToken(g), nil // see Close: a token past its expiry is refused, and the session expires on the server
	}
	if h.expiring(g) && g.RefreshToken == "" && h.cfg.grantKind() != "" {
		// A non-interactive grant: obtain a new one rather than wait for
		// the 401.
		h.mu.Lock()
		ch := h.lastHint
		h.mu.Unlock()
		if err := h.run(ctx, ch, false, false); err == nil {
			if ng, err := h.currentGrant(ctx); err == nil && ng != nil {
				g = ng
			}
		}
	}
	if h.expiring(g) && g.RefreshToken != "" {
		ng, err := h.refresh(ctx, g)
		switch {
		case err == nil:
			g = ng
		case isCode(err, mcperr.AuthRequired):
			return nil, err
		default:
			// Network or server trouble: use the old token; a 401 follows.
		}
	}
	return h.heldToken(g), nil
}

// heldToken is g's access token as the transport takes it.
func (h *Handler) heldToken(g *Grant) *oauth2.Token {
	if g.dpopBound() {
		// go-sdk writes every token as Bearer; ResourceTransport finds it
		// here and presents it with the DPoP scheme and a proof instead.
		h.noteBound(g)
		return &oauth2.Token{AccessToken: g.AccessToken, TokenType: "DPoP", Expiry: g.Expiry}
	}
	return &oauth2.Token{AccessToken: g.AccessToken, TokenType: "Bearer", Expiry: g.Expiry}
}

func errNoGrant() error {
	return &Error{Code: mcperr.AuthRequired, Msg: "oauth: no grant; authorization required",
		Err: &oauth2.RetrieveError{Response: &http.Response{}, ErrorCode: "invalid_grant"}}
}

// expired reports whether g's access token is past its expiry.
func (h *Handler) expired(g *Grant) bool {
	return !g.Expiry.IsZero() && !h.now().Before(g.Expiry)
}

// expiring reports whether g's access token expires within the refresh
// margin: RefreshMargin, or half the token's lifetime when that is shorter,
// so a provider's short-lived tokens (a minute, or seconds) are used for
// half their life instead of being refreshed before every request.
func (h *Handler) expiring(g *Grant) bool {
	if g.Expiry.IsZero() {
		return false
	}
	margin := h.cfg.RefreshMargin
	if !g.IssuedAt.IsZero() {
		if half := g.Expiry.Sub(g.IssuedAt) / 2; half < margin {
			margin = half
		}
	}
	return !h.now().Add(margin).Before(g.Expiry)
}
