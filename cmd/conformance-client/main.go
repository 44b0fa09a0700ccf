// Command conformance-client is an MCP client for the official conformance
// suite (@modelcontextprotocol/conformance), built on package oauth. The
// suite runs it with the server URL as the last argument and the scenario
// in MCP_CONFORMANCE_SCENARIO (context JSON in MCP_CONFORMANCE_CONTEXT).
//
// Its Courier GETs the authorization URL without following the redirect
// and delivers the Location header to the flow registry, as a browser's
// callback page would.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log"
	"net/http"
	"os"
	"time"

	"github.com/mcpwasm/mcpwasm/oauth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func main() {
	if len(os.Args) < 2 {
		log.Fatal("usage: conformance-client <server-url>")
	}
	serverURL := os.Args[len(os.Args)-1]
	scenario := os.Getenv("MCP_CONFORMANCE_SCENARIO")
	var cctx map[string]any
	if s := os.Getenv("MCP_CONFORMANCE_CONTEXT"); s != "" {
		if err := json.Unmarshal([]byte(s), &cctx); err != nil {
			log.Fatalf("MCP_CONFORMANCE_CONTEXT: %v", err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 25*time.Second)
	defer cancel()
	if err := run(ctx, scenario, serverURL, cctx); err != nil {
		log.Fatalf("scenario %q: %v", scenario, err)
	}
}

func run(ctx context.Context, scenario, serverURL string, cctx map[string]any) error {
	httpClient := &http.Client{Transport: http.DefaultTransport, Timeout: 20 * time.Second}
	reg := oauth.NewRegistry()
	courier := oauth.CourierFunc(func(ctx context.Context, authURL string) error {
		c := &http.Client{
			Transport:     http.DefaultTransport,
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, authURL, nil)
		if err != nil {
			return err
		}
		resp, err := c.Do(req)
		if err != nil {
			return err
		}
		resp.Body.Close()
		loc := resp.Header.Get("Location")
		if loc == "" {
			return fmt.Errorf("authorization endpoint answered %d without a redirect", resp.StatusCode)
		}
		// Deliver asynchronously, as a callback page would.
		go func() {
			if err := reg.Deliver(loc); err != nil {
				log.Printf("deliver: %v", err)
			}
		}()
		return nil
	})
	cfg := oauth.Config{
		ResourceURL:         serverURL,
		HTTPClient:          httpClient,
		RedirectURL:         "http://localhost:3000/callback",
		ClientName:          "mcpwasm conformance client",
		ClientMetadataURL:   "https://conformance-test.local/client-metadata.json",
		Registry:            reg,
		Courier:             courier,
		Interactive:         true,
		RequestRefreshToken: true,
		OnEvent: func(e oauth.Event) {
			if e.Err != nil {
				log.Printf("oauth event %s %s: %v", e.Kind, e.State, e.Err)
			} else {
				log.Printf("oauth event %s %s", e.Kind, e.State)
			}
		},
	}
	if id, ok := cctx["client_id"].(string); ok {
		cfg.ClientID = id
		cfg.ClientSecret, _ = cctx["client_secret"].(string)
	}
	h, err := oauth.New(cfg)
	if err != nil {
		return err
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "mcpwasm-conformance-client", Version: "0.1.0"}, nil)
	session, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: serverURL, HTTPClient: httpClient, OAuthHandler: h}, nil)
	if err != nil {
		return fmt.Errorf("connect: %w", err)
	}
	defer session.Close()
	if _, err := session.ListTools(ctx, nil); err != nil {
		return fmt.Errorf("list tools: %w", err)
	}
	switch scenario {
	case "tools_call":
		_, err = session.CallTool(ctx, &mcp.CallToolParams{Name: "add_numbers", Arguments: map[string]any{"a": 5, "b": 3}})
	case "initialize":
	default:
		_, err = session.CallTool(ctx, &mcp.CallToolParams{Name: "test-tool", Arguments: map[string]any{}})
	}
	if err != nil && !errors.Is(err, context.Canceled) {
		return fmt.Errorf("call tool: %w", err)
	}
	return nil
}
