package mcpclient

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpwasm/mcpwasm/demo"
	"github.com/mcpwasm/mcpwasm/mcperr"
)

// subServer is a go-sdk server that offers subscriptions to demo://watched
// and remembers who subscribed; a new one (a restart) knows nobody.
type subServer struct {
	*mcp.Server
	mu   sync.Mutex
	subs map[*mcp.ServerSession]string
}

func newSubServer() *subServer {
	s := &subServer{subs: map[*mcp.ServerSession]string{}}
	s.Server = mcp.NewServer(&mcp.Implementation{Name: "subs", Version: "1"}, &mcp.ServerOptions{
		SubscribeHandler: func(_ context.Context, r *mcp.SubscribeRequest) error {
			s.mu.Lock()
			s.subs[r.Session] = r.Params.URI
			s.mu.Unlock()
			return nil
		},
		UnsubscribeHandler: func(_ context.Context, r *mcp.UnsubscribeRequest) error {
			s.mu.Lock()
			delete(s.subs, r.Session)
			s.mu.Unlock()
			return nil
		},
	})
	s.AddResource(&mcp.Resource{URI: "demo://watched", Name: "watched"}, func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: "demo://watched", Text: "v"}}}, nil
	})
	return s
}

func (s *subServer) subscribers() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.subs)
}

// A subscription brings a resourceupdated event per change, lasts across
// a server restart (the client subscribes its new session again), and
// ends with unsubscribe.
func TestSubscribeOutlivesTheSession(t *testing.T) {
	s := newSubServer()
	srv, restart := restartable(t, mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s.Server }, nil))
	updates := make(chan string, 10)
	c := newClient(t, srv.URL, Options{OnEvent: func(e Event) {
		if e.Type == "resourceupdated" {
			updates <- e.Data.(ResourceUpdated).URI
		}
	}})
	ctx := ctxT(t)
	if err := c.Connect(ctx, ConnectOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := c.Subscribe(ctx, "demo://watched"); err != nil {
		t.Fatal(err)
	}
	updated := func(s *subServer) {
		t.Helper()
		if err := s.ResourceUpdated(ctx, &mcp.ResourceUpdatedNotificationParams{URI: "demo://watched"}); err != nil {
			t.Fatal(err)
		}
		select {
		case u := <-updates:
			if u != "demo://watched" {
				t.Fatalf("resourceupdated for %q; want demo://watched", u)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("no resourceupdated event within 10s of the change")
		}
	}
	updated(s)

	// The server restarts: the next request meets a 404 and a new session.
	s2 := newSubServer()
	restart(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s2.Server }, nil))
	if _, err := c.ListResources(ctx); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for s2.subscribers() != 1 {
		if time.Now().After(deadline) {
			t.Fatal("the client did not subscribe its new session within 10s")
		}
		time.Sleep(20 * time.Millisecond)
	}
	updated(s2)

	if err := c.Unsubscribe(ctx, "demo://watched"); err != nil {
		t.Fatal(err)
	}
	if n := s2.subscribers(); n != 0 {
		t.Errorf("subscribers after unsubscribe = %d; want 0", n)
	}
	if err := c.Unsubscribe(ctx, "demo://watched"); err != nil {
		t.Errorf("a second unsubscribe = %v; want no error", err)
	}
}

// A server without subscriptions is a protocol error that says so; an
// empty URI is the caller's mistake.
func TestSubscribeRefusals(t *testing.T) {
	srv := httptest.NewServer(demo.Handler(demo.Options{}))
	t.Cleanup(srv.Close)
	c := newClient(t, srv.URL+demo.StreamablePath, Options{})
	ctx := ctxT(t)
	wantCode(t, c.Subscribe(ctx, ""), mcperr.InvalidArgument)
	wantCode(t, c.Unsubscribe(ctx, ""), mcperr.InvalidArgument)
	if err := c.Connect(ctx, ConnectOptions{}); err != nil {
		t.Fatal(err)
	}
	wantCode(t, c.Subscribe(ctx, demo.ReadmeURI), mcperr.Protocol)
}
