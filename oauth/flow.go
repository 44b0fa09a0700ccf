package oauth

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/mcpwasm/mcpwasm/mcperr"
	"golang.org/x/oauth2"
)

// run starts a login or joins the running one.
func (h *Handler) run(ctx context.Context, ch challenge, stepUp, explicit bool) error {
	h.mu.Lock()
	if h.latch != nil && !explicit {
		err := h.latch
		h.mu.Unlock()
		return err
	}
	if f := h.fl; f != nil {
		h.mu.Unlock()
		return f.wait(ctx)
	}
	if !h.cfg.Interactive && !explicit && h.cfg.grantKind() == "" {
		h.mu.Unlock()
		h.setState(StateNeedsAuth, ErrAuthorizationRequired)
		return ErrAuthorizationRequired
	}
	f := &flight{done: make(chan struct{})}
	h.fl = f
	h.mu.Unlock()

	h.setState(StateAuthorizing, nil)
	err := h.login(ctx, ch, stepUp)

	h.mu.Lock()
	h.fl = nil
	switch {
	case err == nil:
	case isCode(err, mcperr.Declined):
		h.latch = err
	case ctx.Err() != nil:
		// Aborted: waiters see a decline; no new flow until Login.
		h.latch = &Error{Code: mcperr.Declined, Msg: "oauth: authorization aborted", Err: ctx.Err()}
	case nobodyFinished(err):
		// The user never finished: like a dismissal. A slow server
		// (a timeout in discovery or the exchange) is a failure instead.
		h.latch = &Error{Code: mcperr.Declined, Msg: "oauth: authorization timed out", Err: err}
	}
	f.err = err
	if err != nil && h.latch != nil && ctx.Err() != nil {
		f.err = h.latch
	}
	latched := err != nil && h.latch != nil
	h.mu.Unlock()
	close(f.done)

	h.settle(ctx, err, latched)
	if ctx.Err() != nil {
		return fmt.Errorf("oauth: authorization aborted: %w", ctx.Err())
	}
	return err
}

// wait returns the outcome of the login flight f, which another caller
// started: concurrent callers share one sign-in. A caller whose ctx ends
// stops waiting without ending the flight.
func (f *flight) wait(ctx context.Context) error {
	select {
	case <-f.done:
		if f.err != nil {
			return f.err
		}
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// settle publishes how a login that run started ended: the handler's state
// and, for a grant or a person's refusal, the change that the page's other
// handlers of this server follow. latched says that err is now latched
// (no new flow until Login). h.mu must not be held.
func (h *Handler) settle(ctx context.Context, err error, latched bool) {
	switch {
	case err == nil:
		h.setState(StateAuthorized, nil)
		h.mu.Lock()
		g := h.grant
		h.mu.Unlock()
		h.changed(ChangeGranted, g, nil)
	case latched:
		// Declined, aborted or nobody finished: the state says what the
		// next Authorize will do (return ErrDeclined until Login).
		h.setState(StateDeclined, err)
		if isCode(err, mcperr.Declined) && ctx.Err() == nil && !nobodyFinished(err) {
			// The person said no to this server: its other clients of
			// this page do not ask again either.
			h.changed(ChangeDeclined, nil, err)
		}
	case isCode(err, mcperr.AuthRequired):
		h.setState(StateNeedsAuth, err)
	default:
		h.setState(StateFailed, err)
	}
}

// nobodyFinished reports whether err is a timeout while waiting for the
// user (mcperr.SignInUnfinished): it ends the attempt as declined
// (latched), unlike a slow server.
func nobodyFinished(err error) bool {
	var u *mcperr.SignInUnfinished
	return errors.As(err, &u)
}

// phaseErr turns a failure in a phase bounded by pctx (a child of ctx)
// into the caller's abort (ctx's error) or a timeout.
func (h *Handler) phaseErr(ctx, pctx context.Context, err error, what string) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if errors.Is(pctx.Err(), context.DeadlineExceeded) {
		return newErr(mcperr.Timeout, what+" did not finish within "+h.cfg.AuthTimeout.String(), nil)
	}
	return err
}

func (h *Handler) login(ctx context.Context, ch challenge, stepUp bool) (retErr error) {
	if h.cfg.grantKind() != "" {
		return h.loginGrant(ctx, ch, stepUp) // no user: no Courier
	}
	if h.cfg.Courier == nil {
		// Before discovery and registration: nothing is registered for a
		// flow that cannot be shown.
		return newErr(mcperr.AuthRequired, "no Courier configured to show the login", nil)
	}
	pctx, pcancel := context.WithTimeout(ctx, h.cfg.AuthTimeout)
	p, cl, authURL, err := h.prepare(pctx, ch, stepUp)
	pcancel()
	if err != nil {
		return h.phaseErr(ctx, pctx, err, "discovery and registration")
	}

	w := h.cfg.Registry.add(p.State, h.resource)
	defer h.cfg.Registry.remove(w)
	if h.cfg.PersistFlows {
		if err := h.cfg.Store.PutPending(ctx, p); err != nil {
			return newErr(mcperr.Storage, "storing the pending flow", err)
		}
		defer func() {
			// Idempotent; harmless when CompletePending took it. Expiry
			// covers a failure here.
			dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
			defer cancel()
			_ = h.cfg.Store.DeletePending(dctx, p.State)
		}()
	}
	fctx, cancel := context.WithTimeout(ctx, h.cfg.AuthTimeout)
	defer cancel()
	timedOut := func() error {
		return &Error{Code: mcperr.Timeout, Msg: "oauth: login not finished", Err: &mcperr.SignInUnfinished{Within: h.cfg.AuthTimeout}}
	}
	ended, err := h.open(fctx, authURL)
	if err != nil {
		switch {
		case ctx.Err() != nil:
			return ctx.Err()
		case fctx.Err() != nil:
			return timedOut()
		case isCode(err, mcperr.PopupBlocked):
			return err
		}
		return newErr(mcperr.AuthRequired, "courier could not show the login", redactURLError(err))
	}
	var cb *Callback
	took := false
	defer func() {
		if took {
			w.done <- retErr // buffered; the callback's deliverer may wait for it
		}
	}()
	select {
	case cb = <-w.ch:
	case cerr := <-ended:
		// The window is gone (or failed), but a result sent just before
		// still wins.
		select {
		case cb = <-w.ch:
		default:
			if cerr != nil {
				return cerr
			}
			return &Error{Code: mcperr.Declined, Msg: "oauth: the sign-in window was closed"}
		}
	case <-fctx.Done():
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return timedOut()
	}
	took = true
	if h.cfg.PersistFlows {
		// Single use before the exchange: a replay through CompletePending
		// must not find it.
		if err := h.cfg.Store.DeletePending(ctx, p.State); err != nil {
			return newErr(mcperr.Storage, "deleting the pending flow", err)
		}
	}
	ectx, ecancel := context.WithTimeout(ctx, h.cfg.AuthTimeout)
	defer ecancel()
	g, err := finishFlow(ectx, flowEnv{store: h.cfg.Store, hc: h.cfg.HTTPClient, clock: h.cfg.Clock, keys: h.cfg.DPoPKeys}, p, cl, cb)
	if err != nil {
		return h.phaseErr(ctx, ectx, err, "token exchange")
	}
	h.mu.Lock()
	h.grant, h.loaded = g, true
	h.fresh, h.freshAt = g.AccessToken, h.now()
	h.mu.Unlock()
	return nil
}

// open calls Courier.Open, returning when it does or when ctx ends (a
// courier that ignores ctx must not hang the flow and its waiters).
func (h *Handler) open(ctx context.Context, authURL string) (<-chan error, error) {
	type opened struct {
		ended <-chan error
		err   error
	}
	done := make(chan opened, 1)
	go func() {
		d, err := h.cfg.Courier.Open(ctx, authURL)
		done <- opened{d, err}
	}()
	select {
	case o := <-done:
		return o.ended, o.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// prepare runs discovery and registration and builds the authorization
// request: the flow (verifier, state, everything the exchange needs), the
// client and the authorization URL.
func (h *Handler) prepare(ctx context.Context, ch challenge, stepUp bool) (*PendingFlow, clientCreds, string, error) {
	d, err := h.discover(ctx, ch.prmURL)
	if err != nil {
		return nil, clientCreds{}, "", err
	}
	scopes, err := h.scopesFor(d, ch, stepUp)
	if err != nil {
		return nil, clientCreds{}, "", err
	}
	cl, err := h.resolveClient(ctx, d, scopes)
	if err != nil {
		return nil, clientCreds{}, "", err
	}

	p := &PendingFlow{
		State:              rand.Text(), // 26 base32 characters: 130 random bits
		Verifier:           oauth2.GenerateVerifier(),
		RedirectURI:        h.cfg.RedirectURL,
		Resource:           h.resource,
		Issuer:             d.AS.Issuer,
		ClientID:           cl.id,
		Scopes:             scopes,
		Expiry:             h.now().Add(h.cfg.AuthTimeout),
		ResourceIndicator:  d.Resource,
		TokenEndpoint:      d.AS.TokenEndpoint,
		RevocationEndpoint: d.AS.RevocationEndpoint,
		AuthMethod:         cl.method,
		RequireIss:         d.AS.AuthorizationResponseIssParameterSupported,
	}
	oc := &oauth2.Config{
		ClientID:    cl.id,
		Endpoint:    oauth2.Endpoint{AuthURL: d.AS.AuthorizationEndpoint, TokenURL: d.AS.TokenEndpoint},
		RedirectURL: p.RedirectURI,
		Scopes:      scopes,
	}
	opts := []oauth2.AuthCodeOption{oauth2.S256ChallengeOption(p.Verifier), oauth2.SetAuthURLParam("resource", p.resourceIndicator())}
	dpop, err := useDPoP(h.cfg.DPoP, d.AS.Issuer, d.DPoPAlgs)
	if err != nil {
		return nil, clientCreds{}, "", err
	}
	if dpop {
		// One key per client registration; its thumbprint binds the code
		// to it (dpop_jkt, RFC 9449 §10).
		p.DPoPKeyID = dpopKeyID(p.Issuer, cl.id)
		p.DPoPRequired = h.cfg.DPoP == DPoPOn
		key, err := storedDPoPKey(ctx, h.cfg.DPoPKeys, p.DPoPKeyID)
		if err != nil {
			return nil, clientCreds{}, "", err
		}
		opts = append(opts, oauth2.SetAuthURLParam("dpop_jkt", dpopThumbprint(key)))
	}
	authURL := oc.AuthCodeURL(p.State, opts...)
	return p, cl, authURL, nil
}

// scopesFor picks the scopes of a sign-in (Config.Scopes, else the
// challenge's, else the resource metadata's; offline_access when a
// refresh token is wanted and the server lists it; on step-up the grant's
// too) and counts the attempt, refusing one step-up too many. A 403's
// scopes (step-up, or a sign-in after a step-up the browser kept from
// opening its window) are always asked for: they name what the call
// needs, whatever Config.Scopes says.
func (h *Handler) scopesFor(d *discovery, ch challenge, stepUp bool) ([]string, error) {
	scopes := h.cfg.Scopes
	if len(scopes) == 0 {
		scopes = ch.scopes
	}
	if len(scopes) == 0 {
		scopes = d.ScopesSupported
	}
	scopes = slices.Clone(scopes)
	if stepUp || ch.err == "insufficient_scope" {
		scopes = union(scopes, ch.scopes)
	}
	if h.cfg.RequestRefreshToken && slices.Contains(d.AS.ScopesSupported, "offline_access") && !slices.Contains(scopes, "offline_access") {
		scopes = append(scopes, "offline_access")
	}
	if stepUp {
		h.mu.Lock()
		if h.grant != nil {
			scopes = union(h.grant.Scopes, scopes)
		}
		h.mu.Unlock()
	}
	key := strings.Join(sortedCopy(scopes), " ")
	h.mu.Lock()
	if stepUp && h.attempts[key] >= maxStepUps {
		h.mu.Unlock()
		return nil, newErr(mcperr.InsufficientScope, fmt.Sprintf("server still requires more scope after %d authorizations for %q", maxStepUps, sanitize(key)), nil)
	}
	if stepUp && h.stepUps >= maxStepUps {
		// A server that asks for another new scope on every 403 would
		// otherwise get a sign-in for each.
		h.mu.Unlock()
		return nil, newErr(mcperr.InsufficientScope, fmt.Sprintf("server asked for more scope %d times in a row (now %q); no more step-up sign-ins until the next authorize()", maxStepUps, sanitize(key)), nil)
	}
	h.attempts[key]++
	if stepUp {
		h.stepUps++
	}
	h.mu.Unlock()
	return scopes, nil
}

// checkIss checks the RFC 9207 iss parameter: required and equal to the
// issuer when the AS advertises it (required); when present otherwise, it
// must equal. Equal is simple string comparison (RFC 9207 §2.4): no
// trailing-slash, case, port or percent-encoding normalisation.
func checkIss(iss, issuer string, required bool) error {
	mismatch := func(msg string) error { return &Error{Code: mcperr.StateMismatch, Msg: "oauth: " + msg} }
	if iss == "" {
		if required {
			return mismatch("authorization response lacks the iss parameter the server advertises (RFC 9207)")
		}
		return nil
	}
	if iss != issuer {
		return mismatch(fmt.Sprintf("authorization response issuer %q is not %q (RFC 9207); the response came from another authorization server than the one asked: an OAuth proxy must redirect with its own issuer, not pass its upstream's iss through", sanitize(iss), sanitize(issuer)))
	}
	return nil
}

func union(a, b []string) []string {
	out := slices.Clone(a)
	for _, s := range b {
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}

func sortedCopy(s []string) []string {
	c := slices.Clone(s)
	sort.Strings(c)
	return c
}
