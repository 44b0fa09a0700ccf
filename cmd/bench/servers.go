package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"sort"
	"strings"
	"sync"

	"github.com/mcpwasm/mcpwasm/devkit/devserver"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpwasm/mcpwasm/demo"
	"github.com/mcpwasm/mcpwasm/demo/cors"
	"github.com/mcpwasm/mcpwasm/demo/model"
)

// counter counts the requests an origin receives, by kind: discovery,
// registration, token (the OAuth kinds: zero against the demo server
// without sign-in, counted in the OAuth phase against the protected one and
// its authorization server) and MCP, the latter split by HTTP method and
// JSON-RPC method so the extra round trips are visible.
type counter struct {
	mu sync.Mutex
	m  map[string]int
}

func (c *counter) reset() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.m = map[string]int{}
}

func (c *counter) snapshot() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make(map[string]int, len(c.m))
	for k, v := range c.m {
		out[k] = v
	}
	return out
}

func (c *counter) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		kind := requestKind(r)
		c.mu.Lock()
		if c.m == nil {
			c.m = map[string]int{}
		}
		c.m[kind]++
		c.mu.Unlock()
		h.ServeHTTP(w, r)
	})
}

// requestKind classifies r; it peeks at a POST body for the JSON-RPC method
// and puts the body back.
func requestKind(r *http.Request) string {
	p := r.URL.Path
	switch {
	case r.Method == http.MethodOptions:
		return "MCP preflight" // CORS preflights (MCP or OAuth endpoints) are counted apart
	case strings.HasPrefix(p, "/.well-known/"):
		return "discovery"
	case strings.HasSuffix(p, "/register"):
		return "registration"
	case strings.HasSuffix(p, "/token"):
		return "token"
	case p == "/authorize" || p == "/consent":
		return "authorize"
	}
	switch r.Method {
	case http.MethodOptions:
		return "MCP preflight"
	case http.MethodPost:
		b, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
		r.Body = io.NopCloser(bytes.NewReader(b))
		var msg struct {
			Method string `json:"method"`
		}
		if json.Unmarshal(b, &msg) == nil && msg.Method != "" {
			return "MCP " + msg.Method
		}
		return "MCP POST (response)"
	}
	return "MCP " + r.Method
}

// formatCounts renders counts as "N (k1 n1, k2 n2, …)" with the OAuth kinds
// always listed, so a reader sees the zeros.
func formatCounts(m map[string]int) string {
	total := 0
	var mcp []string
	for k, v := range m {
		total += v
		if strings.HasPrefix(k, "MCP ") {
			mcp = append(mcp, fmt.Sprintf("%s %d", strings.TrimPrefix(k, "MCP "), v))
		}
	}
	sort.Strings(mcp)
	mcpTotal := 0
	for k, v := range m {
		if strings.HasPrefix(k, "MCP ") {
			mcpTotal += v
		}
	}
	auth := ""
	if m["authorize"] > 0 {
		auth = fmt.Sprintf(", authorize %d", m["authorize"])
	}
	return fmt.Sprintf("%d: discovery %d, registration %d, token %d%s, MCP %d (%s)",
		total, m["discovery"], m["registration"], m["token"], auth, mcpTotal, strings.Join(mcp, ", "))
}

// servers are the dev server's page origin (serving the bench web dir) and
// the demo MCP server on its own origin, both on loopback.
type servers struct {
	PageURL  string
	MCPURL   string
	ModelURL string // the stand-in model's OpenAI-compatible base URL
	MCP      *counter
	Timeline *timeline // the agent scenario's model and tools/call spans
	close    []func()
}

// jsonResponseHandler is the demo server answering every POST with
// application/json instead of an SSE stream (go-sdk's
// StreamableHTTPOptions.JSONResponse), as many servers do.
func jsonResponseHandler() http.Handler {
	s := demo.NewServer(demo.Options{})
	mux := http.NewServeMux()
	mux.Handle(demo.StreamablePath, mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s },
		&mcp.StreamableHTTPOptions{JSONResponse: true, PropagateRequestCancellation: true}))
	return cors.Wrap(mux, cors.Options{})
}

func startServers(webDir string, jsonResponse bool) (*servers, error) {
	s := &servers{MCP: &counter{}, Timeline: &timeline{}}
	lns, err := listenLoopback(3)
	if err != nil {
		return nil, err
	}
	mcpLn, pageLn, modelLn := lns[0], lns[1], lns[2]
	s.ModelURL = "http://" + modelLn.Addr().String() + "/v1"
	s.MCPURL = "http://" + mcpLn.Addr().String() + demo.StreamablePath
	origins, err := devserver.Handlers(devserver.Config{Web: os.DirFS(webDir), Demo: true},
		devserver.PageConfig{MCPURL: s.MCPURL})
	if err != nil {
		return nil, err
	}
	s.PageURL = "http://" + pageLn.Addr().String()
	if jsonResponse {
		origins[1].Handler = jsonResponseHandler()
	}
	for _, o := range []struct {
		ln net.Listener
		h  http.Handler
	}{
		{pageLn, origins[0].Handler},
		{mcpLn, s.Timeline.wrap(requestKind, s.MCP.wrap(origins[1].Handler))},
		// The stand-in as the dev server serves it, without its 15 ms
		// pause between events: the scenario times the loop, not the pause.
		{modelLn, s.Timeline.wrap(modelKind, model.New(model.Options{}))},
	} {
		srv := &http.Server{Handler: o.h}
		go srv.Serve(o.ln)
		s.close = append(s.close, func() { srv.Close() })
	}
	return s, nil
}

// listenLoopback opens n listeners on 127.0.0.1.
func listenLoopback(n int) ([]net.Listener, error) {
	var lns []net.Listener
	for range n {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			for _, l := range lns {
				l.Close()
			}
			return nil, err
		}
		lns = append(lns, ln)
	}
	return lns, nil
}

func (s *servers) Close() {
	for _, f := range s.close {
		f()
	}
}
