package mcpclient

import (
	"context"
	"fmt"
	"slices"

	"github.com/mcpwasm/mcpwasm/mcperr"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// ResourceUpdated is the Data of a "resourceupdated" [Event]: the server
// says the resource at URI (one the page subscribed to, or a part of it)
// changed; read it again to see how.
type ResourceUpdated struct {
	URI string `json:"uri"`
}

// Subscribe asks the server to say when the resource at uri changes: a
// "resourceupdated" event then comes for it (resources/subscribe, or a
// subscriptions/listen stream on protocol 2026-07-28). The subscription
// outlives the session: after a reconnect the client subscribes again. It
// fails with protocol when the server does not offer subscriptions.
func (c *Client) Subscribe(ctx context.Context, uri string) error {
	if uri == "" {
		return mcperr.New(mcperr.InvalidArgument, "mcp: subscribe() needs the resource's URI")
	}
	_, err := doBounded(ctx, c, func(ctx context.Context, cs *mcp.ClientSession) (struct{}, error) {
		if err := c.canSubscribe(cs); err != nil {
			return struct{}{}, err
		}
		return struct{}{}, cs.Subscribe(ctx, &mcp.SubscribeParams{URI: uri})
	})
	if err != nil {
		return err
	}
	c.mu.Lock()
	if !slices.Contains(c.subs, uri) {
		c.subs = append(c.subs, uri)
	}
	c.mu.Unlock()
	return nil
}

// Subscribed reports whether the client holds a resource subscription
// (which a later session subscribes again).
func (c *Client) Subscribed() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.subs) > 0
}

// Unsubscribe ends Subscribe for uri; a uri never subscribed is no error.
// The client forgets it even when the server cannot be told (it is gone):
// no later session subscribes again.
func (c *Client) Unsubscribe(ctx context.Context, uri string) error {
	if uri == "" {
		return mcperr.New(mcperr.InvalidArgument, "mcp: unsubscribe() needs the resource's URI")
	}
	c.mu.Lock()
	i := slices.Index(c.subs, uri)
	if i >= 0 {
		c.subs = slices.Delete(c.subs, i, i+1)
	}
	c.mu.Unlock()
	if i < 0 {
		return nil
	}
	_, err := doBounded(ctx, c, func(ctx context.Context, cs *mcp.ClientSession) (struct{}, error) {
		return struct{}{}, cs.Unsubscribe(ctx, &mcp.UnsubscribeParams{URI: uri})
	})
	return err
}

func (c *Client) canSubscribe(cs *mcp.ClientSession) error {
	ir := cs.InitializeResult()
	if ir == nil || ir.Capabilities == nil || ir.Capabilities.Resources == nil || !ir.Capabilities.Resources.Subscribe {
		return &mcperr.Unoffered{Feature: "resource subscriptions", Next: "read the resource again when you need it, or listen for resourceschanged"}
	}
	return nil
}

// resubscribe subscribes session cs, new after a reconnect, to every
// resource the page subscribed to, in the order it did; a refusal is a
// warning event.
func (c *Client) resubscribe(cs *mcp.ClientSession) {
	c.mu.Lock()
	uris := slices.Clone(c.subs)
	c.mu.Unlock()
	for _, u := range uris {
		err := c.canSubscribe(cs)
		if err == nil {
			ctx, cancel := context.WithTimeout(c.ctx, DefaultRequestTimeout)
			err = cs.Subscribe(ctx, &mcp.SubscribeParams{URI: u})
			cancel()
		}
		if err != nil && c.ctx.Err() == nil {
			c.emit("warning", Warning{Message: fmt.Sprintf("mcp: subscribing again to %s after the reconnect failed: %v; subscribe() again to retry", u, err)})
		}
	}
}

// resourceUpdated forwards the server's notifications/resources/updated.
func (c *Client) resourceUpdated(_ context.Context, r *mcp.ResourceUpdatedNotificationRequest) {
	if r == nil || r.Params == nil || r.Params.URI == "" {
		return
	}
	c.emit("resourceupdated", ResourceUpdated{URI: r.Params.URI})
}
