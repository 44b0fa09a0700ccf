package relay_test

import (
	"fmt"
	"net/http"

	"github.com/mcpwasm/mcpwasm/relay"
)

// A host mounts the relay in its own backend, for its pages, to the MCP
// servers and authorization servers it trusts.
func ExampleNew() {
	h, err := relay.New(relay.Config{
		Targets:     []string{"https://mcp.example.com", "https://login.example.com"},
		PageOrigins: []string{"https://app.example"},
	})
	if err != nil {
		panic(err)
	}
	mux := http.NewServeMux()
	mux.Handle("/mcp-relay", h) // the page: mcp.client(url, { relay: "https://app.example/mcp-relay" })

	_, err = relay.New(relay.Config{PageOrigins: []string{"https://app.example"}})
	fmt.Println(err)
	// Output:
	// relay: Config.Targets is empty; list the origins of the MCP servers and authorization servers the relay may forward to (it is never an open relay)
}
