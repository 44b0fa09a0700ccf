package agent

import (
	"bytes"
	"encoding/json"
	"net/url"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The types of [Event]. They are stable: hosts switch on them.
const (
	EventText         = "text"         // *TextEvent
	EventToolCall     = "toolcall"     // *ToolCallEvent
	EventToolResult   = "toolresult"   // *ToolResultEvent
	EventProgress     = "progress"     // *ProgressEvent
	EventAuthRequired = "authrequired" // *AuthRequiredEvent
	EventApproval     = "approval"     // *ApprovalEvent
	EventStep         = "step"         // *StepEvent
	EventDone         = "done"         // *DoneEvent
	EventError        = "error"        // *ErrorEvent
	EventElicitation  = "elicitation"  // *ElicitationEvent
)

// The types of the events that show the model's work as it streams (from
// a [StreamingModel]).
const (
	EventUsage         = "usage"         // *UsageEvent
	EventReasoning     = "reasoning"     // *ReasoningEvent
	EventToolCallDelta = "toolcalldelta" // *ToolCallDeltaEvent
)

// Event is something that happened during [Agent.Run]. Data is a pointer to
// the struct its Type names. Its JSON is Data's fields with "type" added:
// {"type": "text", "delta": "Hel"}.
type Event struct {
	Type string
	Data any
}

// MarshalJSON writes {"type": Type, ...Data's fields}.
func (e Event) MarshalJSON() ([]byte, error) {
	if b, ok := e.deltaJSON(); ok {
		return b, nil
	}
	t, err := json.Marshal(e.Type)
	if err != nil {
		return nil, err
	}
	d := []byte("{}")
	if e.Data != nil {
		if d, err = json.Marshal(e.Data); err != nil {
			return nil, err
		}
	}
	var b bytes.Buffer
	b.WriteString(`{"type":`)
	b.Write(t)
	if inner := bytes.TrimSpace(d[1 : len(d)-1]); len(inner) > 0 {
		b.WriteByte(',')
		b.Write(inner)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// TextEvent is a piece of the model's answer as it streams.
type TextEvent struct {
	Delta string `json:"delta"`
}

// ToolCallEvent: the model asked for a tool call, which starts now.
// ServerID and Tool are known when the tools implement [ToolLister] and
// the name is one of theirs.
type ToolCallEvent struct {
	ID        string `json:"id"`   // the model's call id
	Name      string `json:"name"` // the exported tool name the model used
	ServerID  string `json:"serverId,omitempty"`
	Tool      string `json:"tool,omitempty"`
	Arguments string `json:"arguments"` // JSON text as the model wrote it
	// App is the tool's view (MCP Apps) when it has one, for the page to
	// show it while the call runs; its result comes with the toolresult.
	App *ToolApp `json:"app,omitempty"`
}

// ToolResultEvent: a tool call ended; Text is what the model reads.
type ToolResultEvent struct {
	ID       string `json:"id"`
	Name     string `json:"name"`
	ServerID string `json:"serverId,omitempty"`
	Tool     string `json:"tool,omitempty"`
	IsError  bool   `json:"isError"`
	Text     string `json:"text"`
	// App is the tool's view when it has one and the server answered, and
	// Result the server's result, for the page to render the view under
	// the call (MCP Apps).
	App    *ToolApp            `json:"app,omitempty"`
	Result *mcp.CallToolResult `json:"result,omitempty"`
}

// ToolApp names a tool's view: the server, its tool and the view's ui:// resource.
type ToolApp struct {
	ServerID    string `json:"serverId"`
	Tool        string `json:"tool"`
	ResourceURI string `json:"resourceUri"`
	// StateKey, for a call of a stored conversation, is where the page
	// keeps the view's own storage (render()'s stateKey,
	// [ViewStateKey]); deleting the conversation forgets it.
	StateKey string `json:"stateKey,omitempty"`
}

// ViewStateKey is the stateKey of the view of call callID in stored
// conversation id.
func ViewStateKey(id, callID string) string { return ViewStatePrefix(id) + callID }

// ViewStatePrefix begins the stateKey of every view of stored
// conversation id (and of no other conversation's).
func ViewStatePrefix(id string) string { return "conversation:" + url.QueryEscape(id) + "/" }

// ProgressEvent is a server's progress notification for a running call.
type ProgressEvent struct {
	ID       string  `json:"id"`
	Name     string  `json:"name"`
	Progress float64 `json:"progress"`
	Total    float64 `json:"total,omitempty"`
	Message  string  `json:"message,omitempty"`
}

// AuthRequiredEvent: a call went to a server that needs the user to sign
// in; with Config.AuthWait the call waits that long for it.
type AuthRequiredEvent struct {
	ServerID string `json:"serverId"`
	ID       string `json:"id,omitempty"` // the call that found out
	// Declined: the user declined this server's sign-in earlier; the call
	// did not wait (the model is told the user can still sign in), and
	// only a Sign in the user starts asks again.
	Declined bool `json:"declined,omitempty"`
}

// ApprovalEvent reports how the approval of a call was decided (see
// [catalog.ApprovalDecision]).
type ApprovalEvent struct {
	ID       string `json:"id,omitempty"`
	ServerID string `json:"serverId"`
	Tool     string `json:"tool"`
	Name     string `json:"name"`
	Approved bool   `json:"approved"`
	// DecidedBy is "host" (the approve hook answered), "policy" (the
	// catalog's approval policy, without asking) or "remembered" (an
	// earlier "always" or "server" answer in this agent's conversation).
	DecidedBy string `json:"decidedBy,omitempty"`
	// Scope is "tool" or "server" when the approval holds for the rest of
	// this agent's conversation: the host answered "always" or "server",
	// or such an answer decided.
	Scope string `json:"scope,omitempty"`
	// Policy is the policy's rule that decided: "server", "readOnly" or
	// "destructive".
	Policy string `json:"policy,omitempty"`
}

// StepEvent: the model finished answering step Index (from 0). Its tool
// calls, if any, run next.
type StepEvent struct {
	Index        int    `json:"index"`
	FinishReason string `json:"finishReason"`
}

// DoneEvent: the run ended without failing. FinishReason is one of the
// Finish* constants.
type DoneEvent struct {
	Text         string `json:"text"`
	FinishReason string `json:"finishReason"`
	Steps        int    `json:"steps"`
	// Usage sums the usage events of the run; nil when the model
	// reported none.
	Usage *Usage `json:"usage,omitempty"`
}

// ErrorEvent reports a failure (the run then returns an error with this
// code) or, with [CodeMaxSteps] or [CodeEmptyResponse], why a run ended
// early (a DoneEvent follows).
type ErrorEvent struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// UsageEvent: the token usage of one model response, as its provider
// reported it (counts it could not mean are dropped: [Usage.Checked]). It
// comes after the response's text and before its step event.
type UsageEvent struct {
	Usage
}

// ReasoningEvent is a piece of the model's reasoning as it streams. It is
// shown, never sent back to a model as text.
type ReasoningEvent struct {
	Delta string `json:"delta"`
}

// ToolCallDeltaEvent is a piece of a tool call as the model writes it,
// before its [ToolCallEvent]: each names the tool (the first may carry no
// arguments yet), and their ArgumentsDelta joined are the arguments as
// the model wrote them. ID is the one the toolcall event will carry.
type ToolCallDeltaEvent struct {
	ID             string `json:"id"`
	Name           string `json:"name"`
	ArgumentsDelta string `json:"argumentsDelta"`
	// App, on the first event of a call whose tool has a view, lets the
	// page show the view as the model writes the arguments
	// (ui/notifications/tool-input-partial).
	App *ToolApp `json:"app,omitempty"`
}

// ElicitationEvent: the server of a running call asks the user for input
// (form or URL mode), for a chat to show inline; the catalog's Elicit
// handler, asked the same request under the same ElicitationID, gives the
// answer. It carries what the server sent, never the user's answer.
type ElicitationEvent struct {
	ID              string `json:"id,omitempty"` // the call that the request belongs to
	ElicitationID   string `json:"elicitationId"`
	ServerID        string `json:"serverId"`
	Mode            string `json:"mode"` // "form" or "url"
	Message         string `json:"message"`
	RequestedSchema any    `json:"requestedSchema,omitempty"` // form mode
	URL             string `json:"url,omitempty"`             // URL mode
}

// deltaJSON writes the events a model's stream brings by the dozen (text,
// reasoning, toolcalldelta) directly: the bytes the reflective path
// writes, without its cost on every piece of an answer.
func (e Event) deltaJSON() ([]byte, bool) {
	var b []byte
	start := func(n int) {
		b = make([]byte, 0, 32+len(e.Type)+n)
		b = append(b, `{"type":`...)
		b = appendJSONString(b, e.Type)
	}
	switch d := e.Data.(type) {
	case *TextEvent:
		if d == nil {
			return nil, false
		}
		start(len(d.Delta))
		b = append(b, `,"delta":`...)
		b = appendJSONString(b, d.Delta)
	case *ReasoningEvent:
		if d == nil {
			return nil, false
		}
		start(len(d.Delta))
		b = append(b, `,"delta":`...)
		b = appendJSONString(b, d.Delta)
	case *ToolCallDeltaEvent:
		if d == nil || d.App != nil { // the first of a call with a view: the reflective path
			return nil, false
		}
		start(len(d.ID) + len(d.Name) + len(d.ArgumentsDelta) + 40)
		b = append(b, `,"id":`...)
		b = appendJSONString(b, d.ID)
		b = append(b, `,"name":`...)
		b = appendJSONString(b, d.Name)
		b = append(b, `,"argumentsDelta":`...)
		b = appendJSONString(b, d.ArgumentsDelta)
	default:
		return nil, false
	}
	return append(b, '}'), true
}
