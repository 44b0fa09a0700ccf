package demo

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpwasm/mcpwasm/demo/cors"
)

// ManyOptions configure [ManyHandler].
type ManyOptions struct {
	Options
	// Tools is how many tools the server offers (40 when 0).
	Tools int
	// Index picks the server's subjects, so that servers made with other
	// indexes offer other tools.
	Index int
	// Reverse makes one of the tools "reverse" (the text reversed), a tool
	// a test can look for among the others.
	Reverse bool
	// Shuffle lists the tools in an order of its own on every tools/list.
	Shuffle bool
}

var (
	manyVerbs = []string{"list", "get", "create", "update", "delete", "search", "archive", "export"}
	manyNouns = []string{"invoice", "contact", "ticket", "order", "page", "event", "file", "project",
		"repository", "message", "payment", "shipment", "account", "report", "comment", "calendar",
		"dashboard", "alert", "deployment", "customer"}
)

// ManyHandler serves an MCP server (Streamable HTTP at StreamablePath, no
// sign-in) with many tools of realistic size, for tests and measurements of
// big catalogs: each is a verb and a subject ("create_ticket") with a
// description and an input schema of a few properties; a call answers
// what it was called with.
func ManyHandler(o ManyOptions) http.Handler {
	if o.Tools <= 0 {
		o.Tools = 40
	}
	logger := o.Logger
	if logger == nil {
		logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	s := mcp.NewServer(&mcp.Implementation{Name: fmt.Sprintf("mcpwasm-demo-many-%d", o.Index), Version: Version},
		&mcp.ServerOptions{Logger: logger})
	var tools []*mcp.Tool
	for i := range o.Tools {
		verb := manyVerbs[i%len(manyVerbs)]
		noun := manyNouns[(i/len(manyVerbs)+o.Index*5)%len(manyNouns)]
		suffix := ""
		if i/(len(manyVerbs)*len(manyNouns)) > 0 {
			suffix = fmt.Sprintf("_%d", i/(len(manyVerbs)*len(manyNouns)))
		}
		t := &mcp.Tool{
			Name: verb + "_" + noun + suffix,
			Description: fmt.Sprintf("%s %ss of the workspace. Give the %s's id or a query; "+
				"the answer lists matching %ss with their fields, newest first.", strings.ToUpper(verb[:1])+verb[1:], noun, noun, noun),
			InputSchema: json.RawMessage(fmt.Sprintf(`{"type":"object","properties":{`+
				`"id":{"type":"string","description":"The %[1]s's id, as other tools return it."},`+
				`"query":{"type":"string","description":"Words to match in the %[1]s's title and text."},`+
				`"limit":{"type":"integer","minimum":1,"maximum":100,"description":"At most this many %[1]ss."},`+
				`"fields":{"type":"array","items":{"type":"string"},"description":"The fields of each %[1]s to return."}}}`, noun)),
		}
		if o.Reverse && i == o.Tools-1 {
			t = &mcp.Tool{
				Name:        ToolReverse,
				Description: "Reverses a text, character by character.",
				InputSchema: json.RawMessage(`{"type":"object","properties":{"text":{"type":"string","description":"The text to reverse."}},"required":["text"]}`),
			}
		}
		tools = append(tools, t)
	}
	for _, t := range tools {
		s.AddTool(t, func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			if t.Name == ToolReverse {
				var a struct {
					Text string `json:"text"`
				}
				_ = json.Unmarshal(req.Params.Arguments, &a)
				r := []rune(a.Text)
				for i, j := 0, len(r)-1; i < j; i, j = i+1, j-1 {
					r[i], r[j] = r[j], r[i]
				}
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(r)}}}, nil
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{
				Text: fmt.Sprintf("%s called with %s", t.Name, string(req.Params.Arguments))}}}, nil
		})
	}
	if o.Shuffle {
		s.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
			return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
				res, err := next(ctx, method, req)
				if l, ok := res.(*mcp.ListToolsResult); ok && err == nil {
					rand.Shuffle(len(l.Tools), func(i, j int) { l.Tools[i], l.Tools[j] = l.Tools[j], l.Tools[i] })
				}
				return res, err
			}
		})
	}
	if o.OnRequest != nil {
		s.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
			return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
				o.OnRequest(method)
				return next(ctx, method, req)
			}
		})
	}
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, &mcp.StreamableHTTPOptions{Logger: logger})
	mux := http.NewServeMux()
	mux.Handle(StreamablePath, h)
	return cors.Wrap(mux, o.CORS)
}
