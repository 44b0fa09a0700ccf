package mcpclient

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// deprecatedHandlers sets the handlers of the features protocol 2026-07-28
// deprecates (SEP-2577: sampling and logging), which go-sdk marks
// deprecated: servers still use them during the deprecation window (at
// least twelve months), so the page's onSampling handler and "log" events
// keep working. This is the one place that touches them; when go-sdk
// drops them, only this adapter changes.
func (c *Client) deprecatedHandlers(mo *mcp.ClientOptions, co ConnectOptions) {
	mo.LoggingMessageHandler = func(_ context.Context, r *mcp.LoggingMessageRequest) {
		c.emit("log", r.Params)
	}
	if co.Sampling != nil {
		mo.CreateMessageHandler = func(ctx context.Context, r *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			return co.Sampling(ctx, r.Params)
		}
	}
}
