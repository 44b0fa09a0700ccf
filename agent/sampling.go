package agent

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// errNoText is returned when a model gives a sampling request no text.
var errNoText = errors.New("agent: the model returned no text for the sampling request; the server may ask again")

// Sample serves an MCP server's sampling/createMessage request with the
// agent's model: the server's system prompt and messages become the
// conversation (no tools are offered), and the model's text is the result,
// with the model's name and the stop reason in MCP's vocabulary ("endTurn",
// "maxTokens", …). Image and audio parts are replaced by a one-line note:
// the adapters pass text only.
//
// Sample does not ask anyone: whether a server may sample is the caller's
// decision (see [Agent.SamplingHandler]). Its signature is that of
// go-sdk's and mcpclient's sampling hooks.
func (a *Agent) Sample(ctx context.Context, p *mcp.CreateMessageParams) (*mcp.CreateMessageResult, error) {
	if p == nil || len(p.Messages) == 0 {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "agent: a sampling request needs at least one message"}
	}
	var msgs []Message
	if p.SystemPrompt != "" {
		msgs = append(msgs, Message{Role: RoleSystem, Content: p.SystemPrompt})
	}
	for i, m := range p.Messages {
		if m == nil {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("agent: sampling message %d is null", i)}
		}
		role := string(m.Role)
		if role != RoleUser && role != RoleAssistant {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("agent: sampling message %d has role %q; want user or assistant", i, role)}
		}
		msgs = append(msgs, Message{Role: role, Content: samplingText(m.Content)})
	}
	req := Request{Messages: msgs, Stop: p.StopSequences}
	if p.MaxTokens > 0 && p.MaxTokens <= math.MaxInt32 {
		req.MaxTokens = int(p.MaxTokens)
	}
	if p.Temperature != 0 {
		t := p.Temperature
		req.Temperature = &t
	}
	msg, err := a.cfg.Model.Generate(ctx, req, nil)
	if err != nil {
		return nil, fmt.Errorf("agent: sampling: %w", err)
	}
	if strings.TrimSpace(msg.Content) == "" {
		return nil, errNoText
	}
	model := msg.Model
	if model == "" {
		model = "unknown"
	}
	return &mcp.CreateMessageResult{
		Content:    &mcp.TextContent{Text: msg.Content},
		Model:      model,
		Role:       "assistant",
		StopReason: stopReason(msg.FinishReason, len(msg.ToolCalls) > 0),
	}, nil
}

// SamplingHandler returns a sampling hook (for mcpclient's
// ConnectOptions.Sampling or go-sdk's CreateMessageHandler) that asks allow
// before every request and serves the allowed ones with [Agent.Sample]. A
// refusal, an error from allow, or a nil allow answers [ErrSamplingRefused].
func (a *Agent) SamplingHandler(allow func(context.Context, *mcp.CreateMessageParams) (bool, error)) func(context.Context, *mcp.CreateMessageParams) (*mcp.CreateMessageResult, error) {
	return func(ctx context.Context, p *mcp.CreateMessageParams) (*mcp.CreateMessageResult, error) {
		if allow == nil {
			return nil, ErrSamplingRefused
		}
		ok, err := allow(ctx, p)
		if err != nil || !ok {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			return nil, ErrSamplingRefused
		}
		return a.Sample(ctx, p)
	}
}

// samplingText renders a sampling message's content as text.
func samplingText(c mcp.Content) string {
	switch c := c.(type) {
	case *mcp.TextContent:
		return c.Text
	case *mcp.ImageContent:
		return "[An image (" + c.MIMEType + ") was attached; this model adapter passes text only.]"
	case *mcp.AudioContent:
		return "[An audio clip (" + c.MIMEType + ") was attached; this model adapter passes text only.]"
	case nil:
		return ""
	default:
		return fmt.Sprintf("[A %T part was attached; this model adapter passes text only.]", c)
	}
}

// stopReason maps a Chat Completions finish reason to MCP's stopReason.
func stopReason(finish string, toolCalls bool) string {
	switch finish {
	case "stop", "":
		if toolCalls {
			return "toolUse"
		}
		return "endTurn"
	case "length":
		return "maxTokens"
	case "tool_calls":
		return "toolUse"
	}
	return finish
}
