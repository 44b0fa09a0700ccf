package oauth

import (
	"context"
	"io"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/mcpwasm/mcpwasm/mcperr"
)

// challenge is what a 401/403 told us.
type challenge struct {
	prmURL string
	scopes []string
	err    string
}

// Authorize implements auth.OAuthHandler; the transport calls it after a
// 401 or 403. It refreshes a stale token, runs step-up authorization on
// 403 insufficient_scope (at most 3 flows per scope set, then
// [ErrInsufficientScope]), and otherwise starts a login, unless the handler
// is non-interactive ([ErrAuthorizationRequired]) or latched after a
// decline ([ErrDeclined]). Concurrent calls share one login.
func (h *Handler) Authorize(ctx context.Context, req *http.Request, resp *http.Response) error {
	if resp != nil && resp.Body != nil {
		defer resp.Body.Close()
		defer io.Copy(io.Discard, io.LimitReader(resp.Body, maxBody))
	}
	ch := parseChallenge(resp)
	status := 0
	if resp != nil {
		status = resp.StatusCode
	}
	if status == http.StatusForbidden && ch.err != "insufficient_scope" && !h.wantsMoreScope(ctx, ch) {
		return nil // not ours: let the retried request report the 403
	}
	h.mu.Lock()
	h.lastHint = ch
	h.mu.Unlock()
	if status == http.StatusForbidden {
		return h.run(ctx, ch, true, false)
	}
	if status == http.StatusUnauthorized && ch.err == "use_dpop_nonce" {
		// ResourceTransport already sent the request again with the
		// server's nonce, and the server asked for another: no sign-in
		// would help, and another try could loop.
		return newErr(mcperr.Protocol, "the server asked for a new DPoP nonce again right after the request was sent with the one it gave (RFC 9449 §9); the request was not repeated", nil)
	}
	if status == http.StatusUnauthorized {
		retry, err := h.unauthorized(ctx, presentedToken(req))
		if retry || err != nil {
			return err
		}
	}
	return h.run(ctx, ch, false, false)
}

// unauthorized handles a 401 to a request that carried bearer ("" for
// none). retry reports that a usable grant is there now (another tab's, a
// newer one, a refreshed one): the request is sent again. A refresh the
// authorization server could not answer (down, busy, failing) keeps the
// grant and returns its error. Otherwise the grant that failed is dropped,
// with the cached discovery, since the server may have moved to another
// authorization server; then a sign-in follows (or the error says why
// not).
func (h *Handler) unauthorized(ctx context.Context, bearer string) (retry bool, err error) {
	g, err := h.currentGrant(ctx)
	if err != nil {
		return false, err
	}
	if g == nil {
		// Another page or tab may have stored a grant since we last looked
		// (a redirect-mode login finished by CompletePending, a login in
		// another tab): use it rather than prompting.
		ng, err := h.storedGrant(ctx)
		if err != nil || ng == nil || ng.AccessToken == bearer {
			return false, nil
		}
		h.adoptIfNone(ng)
		return true, nil
	}
	if bearer != g.AccessToken {
		return true, nil // a newer token exists: retry with it
	}
	h.mu.Lock()
	isFresh := bearer == h.fresh && bearer != "" && h.now().Sub(h.freshAt) < freshWindow
	already := h.strikes > 0
	rescued := h.rescued
	switch {
	case isFresh:
		h.strikes++
	case bearer != rescued:
		h.strikes = 0 // a refresh for a refused fresh token does not clear its strike
	}
	h.mu.Unlock()
	if isFresh && already {
		err := newErr(mcperr.AuthRequired, "server rejected a freshly issued token", nil)
		h.setState(StateFailed, err)
		return false, err
	}
	if g.RefreshToken != "" && bearer != rescued {
		// Even a token this handler holds as valid, or a fresh one: the
		// server may judge expiry by another clock. Once per refusal: a
		// refreshed token refused too needs a sign-in.
		ng, err := h.refresh(ctx, g)
		if err == nil {
			h.mu.Lock()
			h.rescued = ng.AccessToken
			h.mu.Unlock()
			return true, nil
		}
		if refreshMayWorkLater(err) {
			// The grant stays for the next call's refresh; this call
			// fails with what kept the authorization server from
			// answering.
			return false, err
		}
	}
	h.dropGrant(ctx, g)
	_ = h.cfg.Store.DeleteMetadata(ctx, h.metaKey())
	return false, nil
}

// tokenAnswered hears how the server answered a request that carried
// bearer. When bearer comes from the refresh that followed the server's
// refusal of the token before, a refusal means refreshing again would not
// help (and may loop): the grant is dropped and the handler needs a
// sign-in, which a call cannot show (it needs a user gesture), so the
// caller gets the 401 as auth_required. Any other answer means the token
// works: a later refusal of it may be refreshed again.
func (h *Handler) tokenAnswered(ctx context.Context, bearer string, refused bool) {
	h.mu.Lock()
	again := bearer != "" && bearer == h.rescued
	if again && !refused {
		h.rescued = ""
	}
	g := h.grant
	h.mu.Unlock()
	if !again || !refused {
		return
	}
	if g != nil && g.AccessToken == bearer {
		h.dropGrant(ctx, g)
		_ = h.cfg.Store.DeleteMetadata(ctx, h.metaKey())
	}
	h.setState(StateNeedsAuth, newErr(mcperr.AuthRequired, "the server refused the access token again after a refresh; sign in again", nil))
}

// adoptIfNone takes g, stored by someone else, as the handler's grant unless a
// concurrent sign-in just set one.
func (h *Handler) adoptIfNone(g *Grant) {
	h.mu.Lock()
	if h.grant == nil {
		h.grant, h.loaded = g, true
	}
	changed := h.state != StateAuthorized
	h.mu.Unlock()
	if changed {
		h.setState(StateAuthorized, nil)
	}
}

// maxStepUps bounds step-up authorizations: per scope set, and in all
// between two explicit sign-ins (Login).
const maxStepUps = 3

// freshWindow: a token rejected this soon after a login counts as "fresh";
// a second such rejection in a row ends with an error instead of a loop.
const freshWindow = 30 * time.Second

// wantsMoreScope reports whether a 403's Bearer challenge names a scope the
// grant lacks (servers that omit error="insufficient_scope", such as
// go-sdk's auth.RequireBearerToken).
func (h *Handler) wantsMoreScope(ctx context.Context, ch challenge) bool {
	if len(ch.scopes) == 0 {
		return false
	}
	g, err := h.currentGrant(ctx)
	if err != nil || g == nil {
		return true
	}
	for _, s := range ch.scopes {
		if !slices.Contains(g.Scopes, s) {
			return true
		}
	}
	return false
}

func parseChallenge(resp *http.Response) challenge {
	var ch challenge
	if resp == nil {
		return ch
	}
	for _, c := range parseWWWAuthenticate(resp.Header.Values("WWW-Authenticate")) {
		if c.scheme != "bearer" && c.scheme != "dpop" {
			// A DPoP-protected server challenges with the DPoP scheme
			// (RFC 9449 §7.1), with the same parameters.
			continue
		}
		if v := c.params["resource_metadata"]; v != "" && ch.prmURL == "" {
			ch.prmURL = v
		}
		if v := c.params["scope"]; v != "" && ch.scopes == nil {
			ch.scopes = strings.Fields(v)
		}
		if v := c.params["error"]; v != "" && ch.err == "" {
			ch.err = v
		}
	}
	return ch
}

// authChallenge is one challenge of a WWW-Authenticate header: its scheme
// and parameters, names in lower case (RFC 9110 §11.2: both are
// case-insensitive).
type authChallenge struct {
	scheme string
	params map[string]string
}

// parseWWWAuthenticate reads the challenges of WWW-Authenticate values
// (RFC 9110 §11.6.1) leniently: parameter values quoted or not, empty ones
// (realm="", as Entra ID and others send), spaces around "=", several
// challenges in one value or in several, token68 credentials (skipped).
// A malformed part is skipped rather than costing the challenges around
// it; the first of a repeated parameter counts.
func parseWWWAuthenticate(values []string) []authChallenge {
	var out []authChallenge
	for _, v := range values {
		p := &headerParser{s: v}
		for !p.done() {
			p.skip(" \t,")
			scheme := p.token()
			if scheme == "" {
				if !p.done() {
					p.i++ // not a token: skip it
				}
				continue
			}
			c := authChallenge{scheme: strings.ToLower(scheme), params: map[string]string{}}
			for {
				save := p.i
				p.skip(" \t")
				name := p.token()
				p.skip(" \t")
				if name == "" || !p.eat('=') {
					p.i = save // the next challenge's scheme, or the end
					break
				}
				p.skip(" \t")
				var val string
				if p.peek() == '"' {
					val = p.quoted()
				} else {
					val = p.token()
					for p.peek() == '=' { // token68 padding
						p.i++
					}
				}
				if k := strings.ToLower(name); c.params[k] == "" {
					c.params[k] = val
				}
				p.skip(" \t")
				if !p.eat(',') {
					// Not a list of parameters: the rest of a token68 or
					// garbage; the next comma starts over.
					for !p.done() && p.peek() != ',' {
						p.i++
					}
					break
				}
			}
			out = append(out, c)
		}
	}
	return out
}

// headerParser reads a header value from i on.
type headerParser struct {
	s string
	i int
}

func (p *headerParser) done() bool { return p.i >= len(p.s) }

func (p *headerParser) peek() byte {
	if p.done() {
		return 0
	}
	return p.s[p.i]
}

func (p *headerParser) eat(c byte) bool {
	if p.peek() == c && !p.done() {
		p.i++
		return true
	}
	return false
}

func (p *headerParser) skip(set string) {
	for !p.done() && strings.IndexByte(set, p.s[p.i]) >= 0 {
		p.i++
	}
}

// token reads a token (RFC 9110 §5.6.2), with "/" and ":" taken too so that
// an unquoted URL or scope reads whole.
func (p *headerParser) token() string {
	start := p.i
	for !p.done() {
		c := p.s[p.i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("!#$%&'*+-.^_`|~/:", c) >= 0 {
			p.i++
			continue
		}
		break
	}
	return p.s[start:p.i]
}

// quoted reads a quoted-string, backslash escapes undone; an unterminated
// one ends at the end of the value.
func (p *headerParser) quoted() string {
	p.i++ // the opening quote
	var b strings.Builder
	for !p.done() {
		c := p.s[p.i]
		p.i++
		switch {
		case c == '"':
			return b.String()
		case c == '\\' && !p.done():
			b.WriteByte(p.s[p.i])
			p.i++
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}
