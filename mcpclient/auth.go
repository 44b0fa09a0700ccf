package mcpclient

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpwasm/mcpwasm/mcperr"
	"github.com/mcpwasm/mcpwasm/oauth"
)

// Authorizer is the sign-in side of a client: *oauth.Handler. The
// transport asks it for tokens and hands it 401s and 403s; the client
// follows its events.
type Authorizer interface {
	auth.OAuthHandler
	// Login signs in, for a user action.
	Login(ctx context.Context) error
	// Logout revokes and deletes the grant.
	Logout(ctx context.Context) error
	// Subscribe registers fn for the sign-in's events.
	Subscribe(fn func(oauth.Event)) (unsubscribe func())
	// Close stops the sign-in from hearing of grant changes and from
	// refreshing tokens; the client calls it before it ends its session.
	Close()
}

var _ Authorizer = (*oauth.Handler)(nil)

// presenter is implemented by an [Authorizer] whose tokens may need
// more than go-sdk's "Authorization: Bearer" (*oauth.Handler: DPoP-bound
// tokens, RFC 9449): its ResourceTransport wraps the credential guard, so
// that every MCP request (POST, the GET stream, the DELETE that ends a
// session) of such a grant carries the DPoP scheme and a fresh proof.
type presenter interface {
	ResourceTransport(next http.RoundTripper) http.RoundTripper
}

var _ presenter = (*oauth.Handler)(nil)

// present returns next, wrapped by auth's ResourceTransport when it has one.
func present(auth Authorizer, next http.RoundTripper) http.RoundTripper {
	if p, ok := auth.(presenter); ok {
		return p.ResourceTransport(next)
	}
	return next
}

// oauthHandler is the transport's OAuth hook: Auth, or nil.
func (c *Client) oauthHandler() auth.OAuthHandler {
	if c.opts.Auth == nil {
		return nil
	}
	return recordingAuth{c.opts.Auth}
}

// recordingAuth notes in the operation's record why a sign-in a 401 asked
// for did not happen. go-sdk may drop that error: a server/discover probe
// that fails for any reason falls back to initialize, and a server that
// lets initialize through unauthenticated then fails in some other way
// (400 for a missing protocol-version header); the operation's error must
// still say that a sign-in is needed.
type recordingAuth struct{ Authorizer }

func (a recordingAuth) Authorize(ctx context.Context, req *http.Request, resp *http.Response) error {
	err := a.Authorizer.Authorize(ctx, req, resp)
	if err != nil {
		recordFrom(ctx).authFailed(err)
	}
	return err
}

// follow subscribes the client to its sign-in's events, which become
// inputs of its state machine, and "tokenrefreshed" and "storageerror"
// events for the page.
func (c *Client) follow() {
	if c.opts.Auth == nil {
		return
	}
	c.unsub = c.opts.Auth.Subscribe(func(e oauth.Event) {
		switch e.Kind {
		case oauth.EventTokenRefreshed:
			c.emit("tokenrefreshed", map[string]string{"resource": e.Resource})
		case oauth.EventStoreFailed:
			c.emit("storageerror", map[string]string{"resource": e.Resource, "message": e.Err.Error()})
		case oauth.EventState:
			if in := authInput[e.State]; in == inAuthNeeded {
				c.authNeeded(e.Err)
			} else {
				c.apply(in, e.Err)
			}
		}
	})
}

// authNeeded applies inAuthNeeded, closing the session it ends in the
// background: the event may come from inside one of that session's calls
// (a 401 to a call runs Authorize on the call's goroutine), and closing a
// session waits for its calls in flight, so closing it here would never
// return and the call would hang past its timeout.
func (c *Client) authNeeded(err error) {
	c.mu.Lock()
	var cs *mcp.ClientSession
	if c.state == StateConnected && c.connecting == nil && !c.closing {
		cs, c.session = c.session, nil // the step drops it: nothing left to close there
	}
	after := c.applyLocked(inAuthNeeded, err)
	c.mu.Unlock()
	after()
	if cs != nil {
		go func() { _ = cs.Close() }()
	}
}

// authInput maps a sign-in state onto the client's input.
var authInput = map[oauth.State]input{
	oauth.StateNeedsAuth:   inAuthNeeded,
	oauth.StateAuthorizing: inAuthStarted,
	oauth.StateAuthorized:  inAuthGranted,
	oauth.StateDeclined:    inAuthDeclined,
	oauth.StateFailed:      inAuthFailed,
}

func (c *Client) noSignIn() error {
	if c.opts.NoSignIn != nil {
		return c.opts.NoSignIn
	}
	return mcperr.New(mcperr.InvalidArgument, "mcp: this client has no sign-in")
}

// Authorize signs in (call it for a user action: it may show the sign-in
// page) and then connects with co.
func (c *Client) Authorize(ctx context.Context, co ConnectOptions) error {
	if c.opts.Auth == nil {
		return c.noSignIn()
	}
	c.mu.Lock()
	closing := c.closing
	if !closing {
		c.wanted, c.lastCO = true, co
	}
	c.mu.Unlock()
	if closing {
		return errClosed
	}
	if err := c.opts.Auth.Login(ctx); err != nil {
		return mcperr.AtServer(err, Host(c.url))
	}
	return c.connectOnce(ctx, co)
}

// PopupBlocked records that the browser refused the sign-in window of an
// Authorize the host could not start: the client needs a sign-in, from a
// user action. It returns the error to give the caller.
func (c *Client) PopupBlocked() error {
	if c.opts.Auth == nil {
		return c.noSignIn()
	}
	err := mcperr.AtServer(oauth.ErrPopupBlocked, Host(c.url))
	c.apply(inAuthNeeded, err)
	return err
}

// Logout signs out: the session ends first, while its token still works
// (a DELETE sent after the revocation would be refused and leave the
// session on the server); then the grant is revoked where the server
// supports it and deleted, and the client needs a sign-in. The grant is
// deleted whatever happened before; a server that refused to end the
// session (a status other than 2xx, 404 "no such session" or 405 "not
// supported", or no answer) is reported in the error, after any error of
// the sign-out itself.
func (c *Client) Logout(ctx context.Context) error {
	if c.opts.Auth == nil {
		return c.noSignIn()
	}
	c.mu.Lock()
	var end *sessionEnd
	if c.session != nil && c.session.ID() != "" {
		end = &sessionEnd{id: c.session.ID()}
		c.ending = end
	}
	c.mu.Unlock()
	c.apply(inSignedOut, nil) // closes the session: go-sdk sends the DELETE
	c.mu.Lock()
	c.ending = nil
	endErr := end.result()
	c.mu.Unlock()
	err := c.opts.Auth.Logout(ctx)
	switch {
	case err == nil:
		err = endErr
	case endErr != nil:
		err = &bothErrors{err, endErr}
	}
	return mcperr.AtServer(err, Host(c.url))
}

// sessionEnd is what became of the DELETE ending session id; guarded by
// the client's mu.
type sessionEnd struct {
	id     string
	seen   bool
	status int
	err    error
}

// sawDelete notes how the DELETE of a session went, for the Logout
// waiting to hear of it.
func (c *Client) sawDelete(id string, status int, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e := c.ending; e != nil && e.id == id && !e.seen {
		e.seen, e.status, e.err = true, status, err
	}
}

// result is the error to report for the end of the session: nil when it
// ended (2xx), was gone already (404), the server does not end sessions
// on request (405, MCP Streamable HTTP "Session Management"), or no DELETE
// was sent (go-sdk sends none for a session the server already ended).
func (e *sessionEnd) result() error {
	switch {
	case e == nil || !e.seen:
		return nil
	case e.err != nil:
		var ue *url.Error
		cause := e.err
		if errors.As(cause, &ue) {
			cause = ue.Err // the URL is the server's, said elsewhere
		}
		return &mcperr.Error{Code: mcperr.Network, Msg: "mcp: ending the session failed; it may stay open on the server until it expires", Err: cause}
	case e.status >= 200 && e.status < 300, e.status == http.StatusNotFound, e.status == http.StatusMethodNotAllowed:
		return nil
	}
	return &mcperr.Error{Code: mcperr.HTTP, Status: e.status,
		Msg: fmt.Sprintf("mcp: the server refused to end the session (HTTP %d); you are signed out here, but the session may stay open on the server until it expires", e.status)}
}

// bothErrors is two errors of one call; the first one's code is the
// call's.
type bothErrors struct{ first, also error }

func (e *bothErrors) Error() string   { return e.first.Error() + "; also, " + e.also.Error() }
func (e *bothErrors) Unwrap() []error { return []error{e.first, e.also} }
