package agent

import (
	"bytes"
	"encoding/json"
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

// Event is something that happened during [Agent.Run]. Data is a pointer to
// the struct its Type names. Its JSON is Data's fields with "type" added:
// {"type": "text", "delta": "Hel"}.
type Event struct {
	Type string
	Data any
}

// MarshalJSON writes {"type": Type, ...Data's fields}.
func (e Event) MarshalJSON() ([]byte, error) {
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
}

// ToolResultEvent: a tool call ended; Text is what the model reads.
type ToolResultEvent struct {
	ID       string `json:"id"`
	Name     string `json:"name"`
	ServerID string `json:"serverId,omitempty"`
	Tool     string `json:"tool,omitempty"`
	IsError  bool   `json:"isError"`
	Text     string `json:"text"`
}

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
}

// ApprovalEvent reports the host's approval decision for a call.
type ApprovalEvent struct {
	ID       string `json:"id,omitempty"`
	ServerID string `json:"serverId"`
	Tool     string `json:"tool"`
	Name     string `json:"name"`
	Approved bool   `json:"approved"`
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
}

// ErrorEvent reports a failure (the run then returns an error with this
// code) or, with [CodeMaxSteps] or [CodeEmptyResponse], why a run ended
// early (a DoneEvent follows).
type ErrorEvent struct {
	Code    string `json:"code"`
	Message string `json:"message"`
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
