package catalog

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpwasm/mcpwasm/mcpclient"
	"github.com/mcpwasm/mcpwasm/mcperr"
)

// clientServer adapts an [mcpclient.Client] to [Server].
type clientServer struct {
	c     *mcpclient.Client
	login func(context.Context) error
	co    mcpclient.ConnectOptions
}

var _ Server = (*clientServer)(nil)

// FromClient adapts an mcpclient.Client to [Server], for a [Factory]:
// Connect is c.Connect(ctx, co) (which never opens a sign-in window when
// the client's OAuth handler is not interactive), Authorize is login(ctx)
// (the OAuth handler's Login, from a user action) and then c.Connect, and
// the rest is forwarded. Disable ends the client's session but keeps the
// client, so [ClientOf] keeps returning the same one. login may be nil for
// a server without sign-in; Authorize then only connects.
//
// c's events must reach the catalog: set its Options.OnEvent to call the
// Factory's events function (and whatever else the host needs).
func FromClient(c *mcpclient.Client, login func(context.Context) error, co mcpclient.ConnectOptions) Server {
	return &clientServer{c: c, login: login, co: co}
}

// ClientOf returns the client under a [Server] made by [FromClient].
func ClientOf(s Server) (*mcpclient.Client, bool) {
	cs, ok := s.(*clientServer)
	if !ok {
		return nil, false
	}
	return cs.c, true
}

func (s *clientServer) State() mcpclient.State            { return s.c.State() }
func (s *clientServer) Connect(ctx context.Context) error { return s.c.Connect(ctx, s.co) }
func (s *clientServer) Close() error                      { return s.c.Close() }

// Disconnect ends the session and leaves the client idle, to connect again
// later.
func (s *clientServer) Disconnect() { s.c.Disconnect(mcpclient.StateIdle, nil) }

func (s *clientServer) Authorize(ctx context.Context) error {
	if s.login != nil {
		if err := s.login(ctx); err != nil {
			if mcperr.CodeOf(err, "") == mcperr.Declined {
				s.c.SetState(mcpclient.StateDeclined, err)
			}
			return err
		}
	}
	return s.c.Connect(ctx, s.co)
}

func (s *clientServer) ListTools(ctx context.Context) ([]*mcp.Tool, error) {
	tools, err := s.c.ListTools(ctx)
	s.dropDead(err)
	return tools, err
}

func (s *clientServer) CallTool(ctx context.Context, name string, args json.RawMessage, onProgress func(*mcp.ProgressNotificationParams)) (*mcp.CallToolResult, error) {
	res, err := s.c.CallTool(ctx, name, args, onProgress)
	s.dropDead(err)
	return res, err
}

// dropDead ends a session the server no longer knows (404 on its session
// id, after a server restart) or whose connection closed, at once: the
// client's own watcher would too, a moment later, and a call arriving in
// that moment would otherwise use the dead session again instead of
// reconnecting.
func (s *clientServer) dropDead(err error) {
	if err == nil || s.c.State() != mcpclient.StateConnected {
		return
	}
	if errors.Is(err, mcp.ErrSessionMissing) || errors.Is(err, mcp.ErrConnectionClosed) || mcperr.CodeOf(err, "") == mcperr.Closed {
		s.c.Disconnect(mcpclient.StateFailed, mcperr.Wrap(mcperr.Closed, err, "mcp: the server ended the session"))
	}
}
