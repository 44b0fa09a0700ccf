package demo

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// schema is a JSON Schema object literal; the SDK validates tool arguments
// against it and applies its defaults.
type schema = map[string]any

func object(required []string, props schema) schema {
	s := schema{"type": "object", "properties": props, "additionalProperties": false}
	if len(required) > 0 {
		s["required"] = required
	}
	return s
}

// Built-in tool names.
const (
	ToolEcho       = "echo"
	ToolAdd        = "add"
	ToolSlow       = "slow"
	ToolAskUser    = "ask_user"
	ToolSummarize  = "summarize"
	ToolAddTool    = "add_tool"
	ToolRemoveTool = "remove_tool"
	ToolOpenLink   = "open_link"
)

var builtins = []string{ToolEcho, ToolAdd, ToolSlow, ToolAskUser, ToolSummarize, ToolAddTool, ToolRemoveTool, ToolOpenLink, ToolResearch}

// Input and output types. The JSON names are the wire names.
type (
	EchoInput struct {
		Text string `json:"text"`
	}
	AddInput struct {
		A float64 `json:"a"`
		B float64 `json:"b"`
	}
	AddOutput struct {
		Sum float64 `json:"sum"`
	}
	SlowInput struct {
		Steps   int `json:"steps"`
		DelayMs int `json:"delayMs"`
	}
	SlowOutput struct {
		Steps     int   `json:"steps"`
		ElapsedMs int64 `json:"elapsedMs"`
	}
	AskUserInput struct {
		Message string `json:"message"`
	}
	AskUserOutput struct {
		// Action is the user's choice: "accept", "decline" or "cancel".
		Action string `json:"action"`
		// Answers holds the form values when Action is "accept".
		Answers map[string]any `json:"answers,omitempty"`
	}
	OpenLinkInput struct {
		URL     string `json:"url"`
		Message string `json:"message"`
	}
	SummarizeInput struct {
		Text     string `json:"text"`
		MaxWords int    `json:"maxWords"`
	}
	SummarizeOutput struct {
		Summary string `json:"summary"`
		Model   string `json:"model"`
	}
	ToolNameInput struct {
		Name string `json:"name"`
	}
)

// Limits of the slow tool.
const (
	maxSteps   = 100
	maxDelayMs = 10_000
)

// Keys of the multi round-trip input requests.
const (
	inputAnswers = "answers"
	inputSummary = "summary"
	inputLink    = "link"
)

// dynamicToolPattern is what add_tool accepts as a tool name.
var dynamicToolPattern = regexp.MustCompile(`^[a-z][a-z0-9_]{0,31}$`)

func (d *demo) addTools() {
	readOnly := &mcp.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true}

	mcp.AddTool(d.server, &mcp.Tool{
		Name:        ToolEcho,
		Title:       "Echo",
		Description: "Returns the text you send, unchanged.",
		Annotations: readOnly,
		InputSchema: object([]string{"text"}, schema{
			"text": schema{"type": "string", "title": "Text", "description": "The text to echo back.", "default": "Hello, MCP!"},
		}),
	}, func(_ context.Context, _ *mcp.CallToolRequest, in EchoInput) (*mcp.CallToolResult, any, error) {
		return text(in.Text), nil, nil
	})

	mcp.AddTool(d.server, &mcp.Tool{
		Name:        ToolAdd,
		Title:       "Add two numbers",
		Description: "Adds a and b. The sum comes back as text and as structured content {sum}.",
		Annotations: readOnly,
		InputSchema: object([]string{"a", "b"}, schema{
			"a": schema{"type": "number", "title": "First number", "description": "The first addend.", "default": 2},
			"b": schema{"type": "number", "title": "Second number", "description": "The second addend.", "default": 3},
		}),
		OutputSchema: object([]string{"sum"}, schema{
			"sum": schema{"type": "number", "title": "Sum", "description": "a + b"},
		}),
	}, func(_ context.Context, _ *mcp.CallToolRequest, in AddInput) (*mcp.CallToolResult, AddOutput, error) {
		out := AddOutput{Sum: in.A + in.B}
		return text(fmt.Sprintf("%g + %g = %g", in.A, in.B, out.Sum)), out, nil
	})

	mcp.AddTool(d.server, &mcp.Tool{
		Name:  ToolSlow,
		Title: "Slow task",
		Description: "Works through a number of steps, waiting delayMs milliseconds per step and " +
			"reporting progress after each one. Cancel it to see cancellation reach the server.",
		Annotations: readOnly,
		InputSchema: object(nil, schema{
			"steps": schema{"type": "integer", "title": "Steps", "description": "How many steps to run.",
				"minimum": 1, "maximum": maxSteps, "default": 5},
			"delayMs": schema{"type": "integer", "title": "Delay per step (ms)", "description": "Milliseconds to wait in each step.",
				"minimum": 0, "maximum": maxDelayMs, "default": 500},
		}),
		OutputSchema: object([]string{"steps", "elapsedMs"}, schema{
			"steps":     schema{"type": "integer", "title": "Steps completed"},
			"elapsedMs": schema{"type": "integer", "title": "Elapsed time (ms)"},
		}),
	}, d.slow)

	mcp.AddTool(d.server, &mcp.Tool{
		Name:  ToolAskUser,
		Title: "Ask the user",
		Description: "Asks the user to fill in a short form (elicitation) and returns the answers, " +
			"or that the user declined or cancelled. The client must handle elicitation.",
		InputSchema: object(nil, schema{
			"message": schema{"type": "string", "title": "Message", "description": "What to tell the user when asking.",
				"default": "Tell us a little about yourself."},
		}),
		OutputSchema: object([]string{"action"}, schema{
			"action":  schema{"type": "string", "title": "Action", "enum": []string{"accept", "decline", "cancel"}},
			"answers": schema{"type": "object", "title": "Answers"},
		}),
	}, d.askUser)

	if d.opts.OpenLink {
		mcp.AddTool(d.server, &mcp.Tool{
			Name:  ToolOpenLink,
			Title: "Ask the user to open a page",
			Description: "Asks the user to open a web page (URL-mode elicitation: the client shows the link, " +
				"nothing is sent back but the user's choice) and returns whether the user agreed, declined or cancelled. " +
				"The client must handle URL-mode elicitation.",
			InputSchema: object([]string{"url"}, schema{
				"url": schema{"type": "string", "title": "URL", "description": "The page to open. It is passed on as given.",
					"default": "https://modelcontextprotocol.io/"},
				"message": schema{"type": "string", "title": "Message", "description": "What to tell the user when asking.",
					"default": "Please open this page to continue."},
			}),
		}, d.openLink)
	}

	mcp.AddTool(d.server, &mcp.Tool{
		Name:  ToolSummarize,
		Title: "Summarize with the client's model",
		Description: "Asks the client's language model (sampling) to summarize the text and returns the " +
			"model's answer. The client must handle sampling.",
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true},
		InputSchema: object([]string{"text"}, schema{
			"text": schema{"type": "string", "title": "Text", "description": "The text to summarize.", "minLength": 1,
				"default": "The Model Context Protocol lets applications provide context to language models in a standard way."},
			"maxWords": schema{"type": "integer", "title": "Maximum words", "description": "Upper bound on the summary's length.",
				"minimum": 1, "maximum": 500, "default": 20},
		}),
		OutputSchema: object([]string{"summary", "model"}, schema{
			"summary": schema{"type": "string", "title": "Summary"},
			"model":   schema{"type": "string", "title": "Model"},
		}),
	}, d.summarize)

	nameProp := func(desc string) schema {
		return schema{"type": "string", "title": "Tool name", "description": desc,
			"pattern": dynamicToolPattern.String(), "default": "dynamic_hello"}
	}
	mcp.AddTool(d.server, &mcp.Tool{
		Name:  ToolAddTool,
		Title: "Add a tool",
		Description: "Adds a tool with the given name (lower case letters, digits, underscores) that greets " +
			"whoever calls it. Connected clients receive notifications/tools/list_changed.",
		Annotations: &mcp.ToolAnnotations{IdempotentHint: true},
		InputSchema: object([]string{"name"}, schema{"name": nameProp("Name of the tool to add.")}),
	}, d.addTool)

	destructive := true
	mcp.AddTool(d.server, &mcp.Tool{
		Name:        ToolRemoveTool,
		Title:       "Remove a tool",
		Description: "Removes a tool added with add_tool. Connected clients receive notifications/tools/list_changed.",
		Annotations: &mcp.ToolAnnotations{IdempotentHint: true, DestructiveHint: &destructive},
		InputSchema: object([]string{"name"}, schema{"name": nameProp("Name of the tool to remove.")}),
	}, d.removeTool)
}

func text(s string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
}

func toolError(format string, args ...any) *mcp.CallToolResult {
	r := text(fmt.Sprintf(format, args...))
	r.IsError = true
	return r
}

func (d *demo) slow(ctx context.Context, req *mcp.CallToolRequest, in SlowInput) (*mcp.CallToolResult, SlowOutput, error) {
	start := time.Now()
	token := req.Params.GetProgressToken()
	delay := time.Duration(in.DelayMs) * time.Millisecond
	timer := time.NewTimer(delay)
	defer timer.Stop()
	for step := 1; step <= in.Steps; step++ {
		select {
		case <-ctx.Done():
			d.cancelled(ToolSlow)
			return nil, SlowOutput{}, ctx.Err()
		case <-timer.C:
		}
		if token != nil {
			err := req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{
				ProgressToken: token,
				Progress:      float64(step),
				Total:         float64(in.Steps),
				Message:       fmt.Sprintf("Step %d of %d done", step, in.Steps),
			})
			if err != nil && ctx.Err() != nil {
				d.cancelled(ToolSlow)
				return nil, SlowOutput{}, ctx.Err()
			}
		}
		timer.Reset(delay)
	}
	out := SlowOutput{Steps: in.Steps, ElapsedMs: time.Since(start).Milliseconds()}
	return text(fmt.Sprintf("Finished %d steps in %d ms.", out.Steps, out.ElapsedMs)), out, nil
}

// askUserForm is the requested schema of ask_user's elicitation: a flat
// object of primitives, as elicitation requires.
var askUserForm = object([]string{"name"}, schema{
	"name": schema{"type": "string", "title": "Your name", "description": "What should we call you?", "minLength": 1, "maxLength": 100},
	"color": schema{"type": "string", "title": "Favourite colour", "description": "Pick one.",
		"enum": []string{"red", "green", "blue", "purple"}, "default": "blue"},
	"age":       schema{"type": "integer", "title": "Age", "description": "Optional.", "minimum": 0, "maximum": 150},
	"subscribe": schema{"type": "boolean", "title": "Subscribe to updates", "description": "We will not really send any.", "default": false},
})

// askUser and summarize return no output (nil) with a tool error, which
// their output schemas would refuse.
func (d *demo) askUser(ctx context.Context, req *mcp.CallToolRequest, in AskUserInput) (*mcp.CallToolResult, any, error) {
	resp, ok := req.Params.InputResponses[inputAnswers]
	if !ok {
		if caps := clientCaps(req.Session); caps != nil && caps.Elicitation == nil {
			return toolError("This client does not handle elicitation, so ask_user cannot ask anything."), nil, nil
		}
		return &mcp.CallToolResult{
			InputRequests: mcp.InputRequestMap{inputAnswers: &mcp.ElicitParams{
				Mode:            "form",
				Message:         in.Message,
				RequestedSchema: askUserForm,
			}},
		}, nil, nil
	}
	er, ok := resp.(*mcp.ElicitResult)
	if !ok {
		return toolError("ask_user: unexpected response %T", resp), nil, nil
	}
	out := AskUserOutput{Action: er.Action}
	switch er.Action {
	case "accept":
		out.Answers = er.Content
		if out.Answers == nil {
			out.Answers = map[string]any{}
		}
		return text("The user answered: " + describe(out.Answers)), out, nil
	case "decline":
		return text("The user declined to answer."), out, nil
	case "cancel":
		return text("The user cancelled the request."), out, nil
	default:
		return toolError("ask_user: unknown elicitation action %q", er.Action), nil, nil
	}
}

// openLink asks for a URL-mode elicitation of in.URL, as given: a client
// must check it before showing it (the e2e tests send bad ones).
func (d *demo) openLink(_ context.Context, req *mcp.CallToolRequest, in OpenLinkInput) (*mcp.CallToolResult, any, error) {
	resp, ok := req.Params.InputResponses[inputLink]
	if !ok {
		if caps := clientCaps(req.Session); caps != nil && (caps.Elicitation == nil || caps.Elicitation.URL == nil) {
			return toolError("This client does not handle URL-mode elicitation, so open_link cannot show a page."), nil, nil
		}
		msg := in.Message
		if msg == "" {
			msg = "Please open this page to continue."
		}
		return &mcp.CallToolResult{
			InputRequests: mcp.InputRequestMap{inputLink: &mcp.ElicitParams{
				Mode:          "url",
				Message:       msg,
				URL:           in.URL,
				ElicitationID: fmt.Sprintf("open-link-%d", d.links.Add(1)),
			}},
		}, nil, nil
	}
	er, ok := resp.(*mcp.ElicitResult)
	if !ok {
		return toolError("open_link: unexpected response %T", resp), nil, nil
	}
	switch er.Action {
	case "accept":
		return text("The user agreed to open " + in.URL + "."), nil, nil
	case "decline":
		return text("The user declined to open the page."), nil, nil
	case "cancel":
		return text("The user cancelled the request to open the page."), nil, nil
	}
	return toolError("open_link: unknown elicitation action %q", er.Action), nil, nil
}

// describe renders form answers as "k: v" pairs in key order.
func describe(m map[string]any) string {
	if len(m) == 0 {
		return "(nothing)"
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s: %v", k, m[k])
	}
	return strings.Join(parts, ", ")
}

func (d *demo) summarize(ctx context.Context, req *mcp.CallToolRequest, in SummarizeInput) (*mcp.CallToolResult, any, error) {
	resp, ok := req.Params.InputResponses[inputSummary]
	if !ok {
		if caps := clientCaps(req.Session); caps != nil && caps.Sampling == nil {
			return toolError("This client does not handle sampling, so summarize has no model to ask."), nil, nil
		}
		return &mcp.CallToolResult{
			InputRequests: mcp.InputRequestMap{inputSummary: &mcp.CreateMessageParams{
				SystemPrompt: "You summarize text faithfully and briefly.",
				MaxTokens:    int64(in.MaxWords)*2 + 16,
				Messages: []*mcp.SamplingMessage{{
					Role:    "user",
					Content: &mcp.TextContent{Text: fmt.Sprintf("Summarize in at most %d words:\n\n%s", in.MaxWords, in.Text)},
				}},
			}},
		}, nil, nil
	}
	var (
		content []mcp.Content
		model   string
	)
	switch r := resp.(type) {
	case *mcp.CreateMessageWithToolsResult:
		content, model = r.Content, r.Model
	case *mcp.CreateMessageResult:
		content, model = []mcp.Content{r.Content}, r.Model
	default:
		return toolError("summarize: unexpected response %T", resp), nil, nil
	}
	var b strings.Builder
	for _, c := range content {
		if t, ok := c.(*mcp.TextContent); ok {
			b.WriteString(t.Text)
		}
	}
	if b.Len() == 0 {
		return toolError("summarize: the model returned no text"), nil, nil
	}
	out := SummarizeOutput{Summary: b.String(), Model: model}
	return text(out.Summary), out, nil
}

// clientCaps returns the capabilities the client declared, or nil when the
// server does not know them.
func clientCaps(ss *mcp.ServerSession) *mcp.ClientCapabilities {
	if ss == nil {
		return nil
	}
	if p := ss.InitializeParams(); p != nil {
		return p.Capabilities
	}
	return nil
}

func (d *demo) addTool(_ context.Context, _ *mcp.CallToolRequest, in ToolNameInput) (*mcp.CallToolResult, any, error) {
	name := in.Name
	if !dynamicToolPattern.MatchString(name) {
		return toolError("Tool names must match %s.", dynamicToolPattern), nil, nil
	}
	if slices.Contains(builtins, name) {
		return toolError("%q is a built-in tool.", name), nil, nil
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.dynamic[name] {
		return text(fmt.Sprintf("Tool %q already exists.", name)), nil, nil
	}
	d.dynamic[name] = true
	mcp.AddTool(d.server, &mcp.Tool{
		Name:        name,
		Title:       "Dynamic tool " + name,
		Description: "Added at run time by add_tool. Greets whoever calls it; remove it with remove_tool.",
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true},
		InputSchema: object(nil, schema{
			"who": schema{"type": "string", "title": "Who", "description": "Whom to greet.", "default": "world"},
		}),
	}, func(_ context.Context, _ *mcp.CallToolRequest, in struct {
		Who string `json:"who"`
	}) (*mcp.CallToolResult, any, error) {
		return text(fmt.Sprintf("Hello, %s, from %s!", in.Who, name)), nil, nil
	})
	return text(fmt.Sprintf("Added tool %q.", name)), nil, nil
}

func (d *demo) removeTool(_ context.Context, _ *mcp.CallToolRequest, in ToolNameInput) (*mcp.CallToolResult, any, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if !d.dynamic[in.Name] {
		return toolError("No tool %q was added with add_tool.", in.Name), nil, nil
	}
	delete(d.dynamic, in.Name)
	d.server.RemoveTools(in.Name)
	return text(fmt.Sprintf("Removed tool %q.", in.Name)), nil, nil
}
