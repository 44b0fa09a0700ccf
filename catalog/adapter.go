package catalog

import (
	"context"
	"encoding/json"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpwasm/mcpwasm/mcpclient"
)

// clientServer adapts an [mcpclient.Client] to [Server].
type clientServer struct {
	c  *mcpclient.Client
	co mcpclient.ConnectOptions
}

var _ Server = (*clientServer)(nil)

// FromClient adapts an mcpclient.Client to [Server], for a [Factory]:
// Connect is c.Connect(ctx, co) (which never opens a sign-in window when
// the client's sign-in is not interactive), Authorize is c.Authorize(ctx,
// co) (from a user action), and the rest is forwarded. Disable ends the
// client's session but keeps the client, so [ClientOf] keeps returning the
// same one.
//
// c's events must reach the catalog: set its Options.OnEvent to call the
// Factory's events function (and whatever else the host needs).
func FromClient(c *mcpclient.Client, co mcpclient.ConnectOptions) Server {
	return &clientServer{c: c, co: co}
}

// ClientOf returns the client under a [Server] made by [FromClient].
func ClientOf(s Server) (*mcpclient.Client, bool) {
	cs, ok := s.(*clientServer)
	if !ok {
		return nil, false
	}
	return cs.c, true
}

func (s *clientServer) State() mcpclient.State              { return s.c.State() }
func (s *clientServer) Connect(ctx context.Context) error   { return s.c.Connect(ctx, s.co) }
func (s *clientServer) Authorize(ctx context.Context) error { return s.c.Authorize(ctx, s.co) }
func (s *clientServer) Close() error                        { return s.c.Close() }

// Disconnect ends the session and leaves the client idle, to connect again
// later.
func (s *clientServer) Disconnect() { s.c.Disconnect() }

// HoldsSession: a client's resource subscriptions need its session (their
// updates arrive on it), and so do the tasks kept in it (some servers keep
// a task only for its session): it is not closed for idleness.
func (s *clientServer) HoldsSession() bool { return s.c.Subscribed() || s.c.HoldsTasks() }

// Leave closes the client as its page went away (see mcpclient.Client.Leave).
func (s *clientServer) Leave() error { return s.c.Leave() }

func (s *clientServer) ListTools(ctx context.Context) ([]*mcp.Tool, error) {
	return s.c.ListTools(ctx)
}

func (s *clientServer) CallTool(ctx context.Context, name string, args json.RawMessage, onProgress func(*mcp.ProgressNotificationParams)) (*mcp.CallToolResult, error) {
	return s.c.CallTool(ctx, name, args, onProgress)
}

var _ SkillServer = (*clientServer)(nil)

func (s *clientServer) OffersSkills() bool { return s.c.OffersSkills() }

func (s *clientServer) Skills(ctx context.Context) ([]mcpclient.Skill, error) { return s.c.Skills(ctx) }

func (s *clientServer) LoadSkill(ctx context.Context, uri string) (*mcpclient.LoadedSkill, error) {
	return s.c.LoadSkill(ctx, uri)
}

func (s *clientServer) ReadSkillFile(ctx context.Context, skillURI, file string) (string, error) {
	return s.c.ReadSkillFile(ctx, skillURI, file)
}
