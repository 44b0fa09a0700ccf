package demo

import (
	"context"
	"encoding/base64"
	"fmt"
	"net/url"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Resource URIs.
const (
	ReadmeURI        = "demo://readme"
	GreetingTemplate = "demo://greeting/{name}"
	greetingPrefix   = "demo://greeting/"
	PromptExplain    = "explain"
)

const readme = `# mcpwasm demo server

This server exists to show off a browser MCP client.

- **echo**, **add**: the basics; add returns structured content.
- **slow**: progress notifications and cancellation.
- **ask_user**: elicitation (the page shows a form).
- **summarize**: sampling (the page plays the model).
- **add_tool**, **remove_tool**: the tool list changes while you watch.

Read ` + "`demo://greeting/{name}`" + ` for a resource template, and try the **explain** prompt.
`

func (d *demo) addResources() {
	d.server.AddResource(&mcp.Resource{
		URI:         ReadmeURI,
		Name:        "readme",
		Title:       "About this server",
		Description: "What the demo server offers, in Markdown.",
		MIMEType:    "text/markdown",
		Size:        int64(len(readme)),
	}, func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{
			URI: ReadmeURI, MIMEType: "text/markdown", Text: readme,
		}}}, nil
	})

	d.server.AddResourceTemplate(&mcp.ResourceTemplate{
		URITemplate: GreetingTemplate,
		Name:        "greeting",
		Title:       "A personal greeting",
		Description: "A plain-text greeting for the name in the URI.",
		MIMEType:    "text/plain",
	}, func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		uri := req.Params.URI
		raw, ok := strings.CutPrefix(uri, greetingPrefix)
		if !ok || raw == "" || strings.Contains(raw, "/") {
			return nil, mcp.ResourceNotFoundError(uri)
		}
		name, err := url.PathUnescape(raw)
		if err != nil {
			return nil, mcp.ResourceNotFoundError(uri)
		}
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{
			URI: uri, MIMEType: "text/plain", Text: fmt.Sprintf("Hello, %s! Greetings from the mcpwasm demo server.", name),
		}}}, nil
	})
}

func (d *demo) addPrompts() {
	d.server.AddPrompt(&mcp.Prompt{
		Icons:       []mcp.Icon{Icon},
		Name:        PromptExplain,
		Title:       "Explain a topic",
		Description: "Asks the model to explain a topic for a given audience.",
		Arguments: []*mcp.PromptArgument{
			{Name: "topic", Title: "Topic", Description: "What to explain, e.g. \"WebAssembly\".", Required: true},
			{Name: "audience", Title: "Audience", Description: "Who the explanation is for (default: a curious beginner)."},
		},
	}, func(_ context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		topic := strings.TrimSpace(req.Params.Arguments["topic"])
		if topic == "" {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "the topic argument is required"}
		}
		audience := strings.TrimSpace(req.Params.Arguments["audience"])
		if audience == "" {
			audience = "a curious beginner"
		}
		return &mcp.GetPromptResult{
			Description: "Explain " + topic,
			Messages: []*mcp.PromptMessage{{
				Role:    "user",
				Content: &mcp.TextContent{Text: fmt.Sprintf("Explain %s to %s in three short paragraphs.", topic, audience)},
			}},
		}, nil
	})
}

// Audiences are the explain prompt's suggested audiences, and Names the
// greeting template's suggested names: what completion/complete offers.
var (
	Audiences = []string{"a curious beginner", "a child", "a designer", "an engineer", "an executive"}
	Names     = []string{"Ada", "Alan", "Barbara", "Grace", "Linus"}
)

// complete answers completion/complete for the explain prompt's audience
// and the greeting template's name: the suggestions that start with what
// was typed, ignoring case.
func complete(_ context.Context, req *mcp.CompleteRequest) (*mcp.CompleteResult, error) {
	p := req.Params
	var from []string
	switch {
	case p.Ref == nil:
	case p.Ref.Type == "ref/prompt" && p.Ref.Name == PromptExplain && p.Argument.Name == "audience":
		from = Audiences
	case p.Ref.Type == "ref/resource" && p.Ref.URI == GreetingTemplate && p.Argument.Name == "name":
		from = Names
	}
	values := []string{}
	for _, v := range from {
		if strings.HasPrefix(strings.ToLower(v), strings.ToLower(p.Argument.Value)) {
			values = append(values, v)
		}
	}
	return &mcp.CompleteResult{Completion: mcp.CompletionResultDetails{Values: values, Total: len(values)}}, nil
}

// Icon is the demo server's icon (of the server and its prompt): an SVG
// as a data: URI, which a page shows without fetching anything.
var Icon = mcp.Icon{
	Source:   "data:image/svg+xml;base64," + base64.StdEncoding.EncodeToString([]byte(`<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 16 16"><rect width="16" height="16" rx="3" fill="#4b6bfb"/><path d="M4 11V5l4 4 4-4v6" stroke="#fff" fill="none" stroke-width="1.5"/></svg>`)),
	MIMEType: "image/svg+xml",
	Sizes:    []string{"any"},
}
