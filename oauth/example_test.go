package oauth_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/mcpwasm/mcpwasm/oauth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A handler per MCP server, one registry for the page's callback.
func Example() {
	reg := oauth.NewRegistry()
	h, err := oauth.New(oauth.Config{
		ResourceURL: "https://mcp.example.com/mcp",
		HTTPClient:  &http.Client{Transport: http.DefaultTransport},
		RedirectURL: "https://app.example.com/oauth/callback.html",
		ClientName:  "My App",
		Registry:    reg,
		Courier: oauth.CourierFunc(func(ctx context.Context, authURL string) error {
			// Show authURL to the user; the callback page calls reg.Deliver.
			return nil
		}),
		OnEvent: func(e oauth.Event) { fmt.Println(e.Kind, e.State) },
	})
	if err != nil {
		panic(err)
	}
	transport := &mcp.StreamableClientTransport{Endpoint: h.Resource(), OAuthHandler: h}
	_ = transport
	// connect(...) fails with ErrAuthorizationRequired until the user acts;
	// then, from the user gesture: h.Login(ctx).
	fmt.Println(errors.Is(fmt.Errorf("wrapped: %w", oauth.ErrDeclined), oauth.ErrDeclined))
	// Output: true
}
