package catalog_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"

	"github.com/mcpwasm/mcpwasm/catalog"
	"github.com/mcpwasm/mcpwasm/demo"
	"github.com/mcpwasm/mcpwasm/mcpclient"
)

// A catalog over one MCP server: the tool list in a provider's format, and
// a model's call run by its exported name.
func Example() {
	srv := httptest.NewServer(demo.Handler(demo.Options{}))
	defer srv.Close()

	servers, warnings, err := catalog.ParseServers([]byte(`{"mcpServers": {
		"demo": {"url": "` + srv.URL + `/mcp", "type": "http"},
		"files": {"command": "npx", "args": ["@modelcontextprotocol/server-filesystem"]}
	}}`))
	if err != nil {
		panic(err)
	}
	for _, w := range warnings {
		fmt.Println("warning:", w)
	}
	cat, err := catalog.New(catalog.Config{
		Servers: servers,
		Factory: func(id string, sc catalog.ServerConfig, events func(mcpclient.Event)) (catalog.Server, error) {
			var o struct{ Transport mcpclient.Transport }
			_ = json.Unmarshal(sc.Client, &o)
			c, err := mcpclient.New(sc.URL, mcpclient.Options{
				Transport:  o.Transport,
				HTTPClient: &http.Client{Transport: http.DefaultTransport},
				OnEvent:    events,
			})
			if err != nil {
				return nil, err
			}
			return catalog.FromClient(c, mcpclient.ConnectOptions{}), nil
		},
	})
	if err != nil {
		panic(err)
	}
	defer cat.Close()

	ctx := context.Background()
	tools, _ := cat.Tools(ctx)
	fmt.Println(len(tools), "tools, first:", tools[0].Name)

	r, _ := cat.ModelCall(ctx, "demo_add", `{"a": 2, "b": 3}`, catalog.CallOptions{})
	fmt.Println(r.Text)
	r, _ = cat.ModelCall(ctx, "demo_add", `{"a": "two"}`, catalog.CallOptions{})
	fmt.Println(r.IsError, r.Text)
	// Output:
	// warning: server "files" is a local command (stdio) server; a web page can only reach servers over HTTP: give it a url
	// 7 tools, first: demo_add
	// 2 + 3 = 5
	// true The arguments for demo_add do not match its input schema (property "a": type: two has type "string", want "number"), so it was not run. Fix the arguments and call it again.
}
