//go:build js && wasm

// Command floor is the size floor of the bench's payload table: a go-sdk
// MCP client over jsfetch (the module's fetch transport) that connects and
// calls one tool (the server's URL is its argument), and nothing else of mcpwasm. What mcp.wasm weighs above
// it is the OAuth client, the catalog, the agent, storage and the JS API.
package main

import (
	"context"
	"net/http"
	"os"

	"github.com/mcpwasm/mcpwasm/jsbridge/jsfetch"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func main() {
	if len(os.Args) < 2 {
		println("usage: floor <MCP server URL>")
		return
	}
	url := os.Args[1]
	c := mcp.NewClient(&mcp.Implementation{Name: "floor", Version: "0"}, nil)
	s, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{
		Endpoint:   url,
		HTTPClient: &http.Client{Transport: &jsfetch.Transport{}},
	}, nil)
	if err != nil {
		println(err.Error())
		return
	}
	r, err := s.CallTool(context.Background(), &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "hello"}})
	if err != nil {
		println(err.Error())
		return
	}
	println(len(r.Content))
}
