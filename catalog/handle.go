package catalog

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"

	"golang.org/x/sync/errgroup"

	"github.com/mcpwasm/mcpwasm/mcperr"
)

// callLimit bounds how many calls of one HandleToolCalls run at once.
const callLimit = 8

// ToolCall is one tool call a model made, read from a provider's shape by
// [ParseToolCalls].
type ToolCall struct {
	ID   string          `json:"id,omitempty"` // the provider's call id ("" when the call had none)
	Name string          `json:"name"`
	Args json.RawMessage `json:"args"` // the arguments as the model wrote them (may be invalid)
}

// ParseToolCalls reads the tool calls out of a model's reply, in order:
//
//   - "openai": an assistant message with tool_calls, or the tool_calls
//     array ({id, type: "function", function: {name, arguments}});
//   - "openai-responses": an array of output items (or a response with
//     "output"), taking the function_call items {call_id, name, arguments};
//   - "anthropic": an assistant message {role, content: […]} or its content
//     array, taking the tool_use blocks {id, name, input};
//   - "gemini": a candidate's content {role: "model", parts: […]} (or the
//     candidate, or the parts array), taking the functionCall parts {name,
//     args, id?}.
//
// A malformed call is still returned (with what could be read) so that its
// result can say what is wrong. The error (invalid_argument) is for a
// document that is not of the format at all.
func ParseToolCalls(f Format, doc json.RawMessage) ([]ToolCall, error) {
	if _, err := formatOf(f); err != nil {
		return nil, err
	}
	t := bytes.TrimSpace(doc)
	if !json.Valid(t) {
		return nil, notFormat("JSON")
	}
	d := &callsDoc{raw: t}
	d.isObj = json.Unmarshal(t, &d.obj) == nil && d.obj != nil
	d.isArr = !d.isObj && json.Unmarshal(t, &d.arr) == nil
	var calls []ToolCall
	var err error
	switch f {
	case FormatOpenAI:
		calls, err = d.openAI()
	case FormatOpenAIResponses:
		calls, err = d.openAIResponses()
	case FormatAnthropic:
		calls, err = d.anthropic()
	case FormatGemini:
		if d.isObj && d.obj["parts"] == nil {
			if content, ok := d.obj["content"]; ok { // a candidate
				return ParseToolCalls(f, content)
			}
		}
		calls, err = d.gemini()
	}
	if err != nil {
		return nil, err
	}
	if calls == nil {
		calls = []ToolCall{}
	}
	return calls, nil
}

// notFormat is the error of a document that is not of a format.
func notFormat(what string) error {
	return mcperr.New(mcperr.InvalidArgument, "catalog: the tool calls are not %s", what)
}

// callsDoc is a model's reply as ParseToolCalls reads it: an object or an
// array.
type callsDoc struct {
	raw   json.RawMessage
	obj   map[string]json.RawMessage
	arr   []json.RawMessage
	isObj bool
	isArr bool
}

// items is the document itself when it is an array, else the array under
// key.
func (d *callsDoc) items(key string) ([]json.RawMessage, bool) {
	if d.isArr {
		return d.arr, true
	}
	if !d.isObj {
		return nil, false
	}
	raw, ok := d.obj[key]
	if !ok {
		return nil, false
	}
	var list []json.RawMessage
	if json.Unmarshal(raw, &list) != nil {
		return nil, false
	}
	return list, true
}

// message reports whether the document is a message (it has a role).
func (d *callsDoc) message() bool { return d.isObj && d.obj["role"] != nil }

func (d *callsDoc) openAI() ([]ToolCall, error) {
	list, ok := d.items("tool_calls")
	if !ok {
		if d.message() {
			return []ToolCall{}, nil // a message without tool calls
		}
		return nil, notFormat(`an OpenAI assistant message or "tool_calls" array`)
	}
	var calls []ToolCall
	for _, raw := range list {
		var c struct {
			ID       string `json:"id"`
			Function struct {
				Name      string          `json:"name"`
				Arguments json.RawMessage `json:"arguments"`
			} `json:"function"`
		}
		_ = json.Unmarshal(raw, &c)
		calls = append(calls, ToolCall{ID: c.ID, Name: c.Function.Name, Args: argText(c.Function.Arguments)})
	}
	return calls, nil
}

func (d *callsDoc) openAIResponses() ([]ToolCall, error) {
	list, ok := d.items("output")
	if !ok && d.isObj && isType(d.obj, "function_call") {
		list, ok = []json.RawMessage{d.raw}, true
	}
	if !ok {
		return nil, notFormat(`an array of OpenAI Responses output items`)
	}
	var calls []ToolCall
	for _, raw := range list {
		var c struct {
			Type      string          `json:"type"`
			CallID    string          `json:"call_id"`
			Name      string          `json:"name"`
			Arguments json.RawMessage `json:"arguments"`
		}
		if json.Unmarshal(raw, &c) != nil || c.Type != "function_call" {
			continue
		}
		calls = append(calls, ToolCall{ID: c.CallID, Name: c.Name, Args: argText(c.Arguments)})
	}
	return calls, nil
}

func (d *callsDoc) anthropic() ([]ToolCall, error) {
	list, ok := d.items("content")
	if !ok {
		if d.message() {
			return []ToolCall{}, nil // content as a string: no tool use
		}
		return nil, notFormat(`an Anthropic assistant message or its content array`)
	}
	var calls []ToolCall
	for _, raw := range list {
		var c struct {
			Type  string          `json:"type"`
			ID    string          `json:"id"`
			Name  string          `json:"name"`
			Input json.RawMessage `json:"input"`
		}
		if json.Unmarshal(raw, &c) != nil || c.Type != "tool_use" {
			continue
		}
		calls = append(calls, ToolCall{ID: c.ID, Name: c.Name, Args: c.Input})
	}
	return calls, nil
}

func (d *callsDoc) gemini() ([]ToolCall, error) {
	list, ok := d.items("parts")
	if !ok {
		return nil, notFormat(`a Gemini content {"role": "model", "parts": […]} or its parts array`)
	}
	var calls []ToolCall
	for _, raw := range list {
		var p struct {
			FunctionCall *struct {
				ID   string          `json:"id"`
				Name string          `json:"name"`
				Args json.RawMessage `json:"args"`
			} `json:"functionCall"`
		}
		if json.Unmarshal(raw, &p) != nil || p.FunctionCall == nil {
			continue
		}
		calls = append(calls, ToolCall{ID: p.FunctionCall.ID, Name: p.FunctionCall.Name, Args: p.FunctionCall.Args})
	}
	return calls, nil
}

func isType(obj map[string]json.RawMessage, typ string) bool {
	var s string
	return json.Unmarshal(obj["type"], &s) == nil && s == typ
}

// argText unwraps OpenAI's arguments, a JSON string holding JSON text; an
// object (as some compatible servers send) is taken as it is.
func argText(raw json.RawMessage) json.RawMessage {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return json.RawMessage(s)
	}
	return raw
}

// HandleToolCalls runs the tool calls of a model's reply (see
// [ParseToolCalls] for the shapes) concurrently and returns the messages
// that carry their results back, in call order:
//
//   - "openai": [{"role": "tool", "tool_call_id", "content"}, …];
//   - "openai-responses": [{"type": "function_call_output", "call_id",
//     "output"}, …];
//   - "anthropic": [{"role": "user", "content": [{"type": "tool_result",
//     "tool_use_id", "content": [blocks…], "is_error"}, …]}] (images as
//     image blocks);
//   - "gemini": [{"role": "user", "parts": [{"functionResponse": {"name",
//     "id"?, "response": {"output" | "error": text}}}, …]}].
//
// Every call gets a result, malformed ones (unknown name, arguments that
// are not JSON or fail the schema, a missing id) included, saying what is
// wrong. The only errors are aborted (ctx), closed, and invalid_argument
// for a document that is not of the format or a negative opts.Timeout.
func (c *Catalog) HandleToolCalls(ctx context.Context, f Format, calls json.RawMessage, opts CallOptions) (json.RawMessage, error) {
	if err := c.checkCallOptions(opts); err != nil {
		return nil, err
	}
	list, err := ParseToolCalls(f, calls)
	if err != nil {
		return nil, err
	}
	results := make([]ToolResult, len(list))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(callLimit)
	for i, call := range list {
		g.Go(func() error {
			r, err := c.runCall(gctx, f, call, opts)
			results[i] = r
			return err
		})
	}
	if err := g.Wait(); err != nil {
		if ctx.Err() != nil {
			return nil, aborted(ctx.Err())
		}
		return nil, err
	}
	return ResultMessages(f, list, results)
}

// runCall runs one parsed call, refusing the malformed ones.
func (c *Catalog) runCall(ctx context.Context, f Format, call ToolCall, opts CallOptions) (ToolResult, error) {
	refuse := func(text string) (ToolResult, error) {
		return outcome{name: call.Name, text: text}.render(), nil
	}
	switch {
	case strings.TrimSpace(call.Name) == "":
		return refuse(textMissingName)
	case call.ID == "" && f != FormatGemini: // Gemini's ids are optional
		return refuse(say(textMissingID, call.Name))
	}
	return c.ModelCall(ctx, call.Name, string(call.Args), opts)
}

// ResultMessages renders results (one per call, in order) as the messages
// of format f that carry them back to the model; see
// [Catalog.HandleToolCalls] for the shapes.
func ResultMessages(f Format, calls []ToolCall, results []ToolResult) (json.RawMessage, error) {
	if _, err := formatOf(f); err != nil {
		return nil, err
	}
	if len(calls) != len(results) {
		return nil, mcperr.New(mcperr.InvalidArgument, "catalog: %d calls but %d results", len(calls), len(results))
	}
	b, err := json.Marshal(resultRenderers[f](calls, results))
	if err != nil {
		return nil, mcperr.Wrap(mcperr.InvalidArgument, err, "catalog: rendering results")
	}
	return b, nil
}

// resultRenderers render the results of calls in each format, as a value
// to marshal; calls and results have the same length.
var resultRenderers = map[Format]func(calls []ToolCall, results []ToolResult) any{
	FormatOpenAI:          openAIResults,
	FormatOpenAIResponses: responsesResults,
	FormatAnthropic:       anthropicResults,
	FormatGemini:          geminiResults,
}

func openAIResults(calls []ToolCall, results []ToolResult) any {
	type msg struct {
		Role       string `json:"role"`
		ToolCallID string `json:"tool_call_id"`
		Content    string `json:"content"`
	}
	list := make([]msg, len(calls))
	for i, r := range results {
		list[i] = msg{Role: "tool", ToolCallID: calls[i].ID, Content: flagged(r)}
	}
	return list
}

func responsesResults(calls []ToolCall, results []ToolResult) any {
	type item struct {
		Type   string `json:"type"`
		CallID string `json:"call_id"`
		Output string `json:"output"`
	}
	list := make([]item, len(calls))
	for i, r := range results {
		list[i] = item{Type: "function_call_output", CallID: calls[i].ID, Output: flagged(r)}
	}
	return list
}

// anthropicBlock is a content block of an Anthropic tool_result.
type anthropicBlock struct {
	Type   string                `json:"type"`
	Text   string                `json:"text,omitempty"`
	Source *anthropicImageSource `json:"source,omitempty"`
}

type anthropicImageSource struct {
	Type      string `json:"type"`
	MediaType string `json:"media_type"`
	Data      string `json:"data"`
}

func anthropicResults(calls []ToolCall, results []ToolResult) any {
	type toolResult struct {
		Type      string           `json:"type"`
		ToolUseID string           `json:"tool_use_id"`
		Content   []anthropicBlock `json:"content"`
		IsError   bool             `json:"is_error"`
	}
	type message struct {
		Role    string       `json:"role"`
		Content []toolResult `json:"content"`
	}
	if len(calls) == 0 {
		return []message{}
	}
	parts := make([]toolResult, len(calls))
	for i, r := range results {
		parts[i] = toolResult{Type: "tool_result", ToolUseID: calls[i].ID, Content: anthropicBlocks(r), IsError: r.IsError}
	}
	return []message{{Role: "user", Content: parts}}
}

// anthropicBlocks is r's content as the Messages API takes it: images of
// the types it takes, a sentence for other images, and text.
func anthropicBlocks(r ToolResult) []anthropicBlock {
	var blocks []anthropicBlock
	for _, b := range r.Blocks {
		switch {
		case b.Type == "image" && anthropicImage(b.MIMEType):
			blocks = append(blocks, anthropicBlock{Type: "image", Source: &anthropicImageSource{Type: "base64", MediaType: b.MIMEType, Data: b.Data}})
		case b.Type == "image":
			blocks = append(blocks, anthropicBlock{Type: "text", Text: say(textImage, b.MIMEType, decodedLen(b.Data))})
		case b.Text != "":
			blocks = append(blocks, anthropicBlock{Type: "text", Text: b.Text})
		}
	}
	if len(blocks) == 0 {
		blocks = []anthropicBlock{{Type: "text", Text: textNoContent}}
	}
	return blocks
}

func geminiResults(calls []ToolCall, results []ToolResult) any {
	type response struct {
		Output *string `json:"output,omitempty"`
		Error  *string `json:"error,omitempty"`
	}
	type functionResponse struct {
		Name     string   `json:"name"`
		ID       string   `json:"id,omitempty"`
		Response response `json:"response"`
	}
	type part struct {
		FunctionResponse functionResponse `json:"functionResponse"`
	}
	type content struct {
		Role  string `json:"role"`
		Parts []part `json:"parts"`
	}
	if len(calls) == 0 {
		return []content{}
	}
	parts := make([]part, len(calls))
	for i, r := range results {
		text := r.Text
		resp := response{Output: &text}
		if r.IsError {
			resp = response{Error: &text}
		}
		parts[i] = part{FunctionResponse: functionResponse{Name: calls[i].Name, ID: calls[i].ID, Response: resp}}
	}
	return []content{{Role: "user", Parts: parts}}
}

// flagged is a result's text for formats without an error flag: error
// results say so first.
func flagged(r ToolResult) string {
	if r.IsError {
		return textErrorPrefix + r.Text
	}
	return r.Text
}

// anthropicImage reports whether the Messages API takes an image of this
// type.
func anthropicImage(mime string) bool {
	switch mime {
	case "image/jpeg", "image/png", "image/gif", "image/webp":
		return true
	}
	return false
}

// decodedLen is the byte length of base64 data.
func decodedLen(b64 string) int {
	n := len(b64) / 4 * 3
	switch {
	case strings.HasSuffix(b64, "=="):
		n -= 2
	case strings.HasSuffix(b64, "="):
		n--
	}
	return n
}
