package mcpclient

import (
	"context"

	"github.com/mcpwasm/mcpwasm/mcperr"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// CompleteRef names what a completed argument belongs to: a prompt
// (Type "ref/prompt" with Name) or a resource template (Type
// "ref/resource" with its URI template as URI).
type CompleteRef struct {
	Type string `json:"type"`
	Name string `json:"name,omitempty"`
	URI  string `json:"uri,omitempty"`
}

// Completion is the server's suggestions for an argument's value.
type Completion struct {
	Values  []string `json:"values"`
	Total   int      `json:"total,omitempty"`
	HasMore bool     `json:"hasMore,omitempty"`
}

// maxCompletionValues is the spec's bound on one completion answer: a
// server that sends more is cut to it.
const maxCompletionValues = 100

// Complete asks the server for values of argument arg of ref that fit what
// the person typed so far (value), given the values of the other arguments
// already chosen (args, may be nil): completion/complete. It fails with
// protocol when the server does not offer completions (no completions
// capability), so a form can stop asking.
func (c *Client) Complete(ctx context.Context, ref CompleteRef, arg, value string, args map[string]string) (*Completion, error) {
	switch {
	case ref.Type == "ref/prompt" && ref.Name == "":
		return nil, mcperr.New(mcperr.InvalidArgument, "mcp: complete() needs the prompt's name for a ref/prompt reference")
	case ref.Type == "ref/resource" && ref.URI == "":
		return nil, mcperr.New(mcperr.InvalidArgument, "mcp: complete() needs the resource template's URI for a ref/resource reference")
	case ref.Type != "ref/prompt" && ref.Type != "ref/resource":
		return nil, mcperr.New(mcperr.InvalidArgument, "mcp: complete() reference type must be \"ref/prompt\" or \"ref/resource\", not %q", ref.Type)
	case arg == "":
		return nil, mcperr.New(mcperr.InvalidArgument, "mcp: complete() needs the argument's name")
	}
	return doBounded(ctx, c, func(ctx context.Context, cs *mcp.ClientSession) (*Completion, error) {
		if ir := cs.InitializeResult(); ir == nil || ir.Capabilities == nil || ir.Capabilities.Completions == nil {
			return nil, &mcperr.Unoffered{Feature: "completions", Next: "let the person type the value"}
		}
		params := &mcp.CompleteParams{
			Ref:      &mcp.CompleteReference{Type: ref.Type, Name: ref.Name, URI: ref.URI},
			Argument: mcp.CompleteParamsArgument{Name: arg, Value: value},
		}
		if len(args) > 0 {
			params.Context = &mcp.CompleteContext{Arguments: args}
		}
		r, err := cs.Complete(ctx, params)
		if err != nil {
			return nil, err
		}
		out := &Completion{Values: r.Completion.Values, Total: r.Completion.Total, HasMore: r.Completion.HasMore}
		if out.Values == nil {
			out.Values = []string{}
		}
		if len(out.Values) > maxCompletionValues {
			out.Values, out.HasMore = out.Values[:maxCompletionValues], true
		}
		if out.Total < 0 {
			out.Total = 0
		}
		return out, nil
	})
}
