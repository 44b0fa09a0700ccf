package model

import (
	"encoding/json"
	"fmt"
	"net/http"
)

// responsesRequest is an OpenAI Responses API request; only what the
// stand-in reads.
type responsesRequest struct {
	Instructions string          `json:"instructions"`
	Input        json.RawMessage `json:"input"`
	Tools        []struct {
		Type string `json:"type"`
		Name string `json:"name"`
	} `json:"tools"`
	Stream    bool `json:"stream"`
	Reasoning *struct {
		Summary string `json:"summary"`
	} `json:"reasoning"`
}

// responsesItem is an input item: a message, a function call or its
// output (reasoning items are read past).
type responsesItem struct {
	Type    string          `json:"type"`
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
	CallID  string          `json:"call_id"`
	Name    string          `json:"name"`
	Output  json.RawMessage `json:"output"`
}

// chatOf turns a Responses request into the chat request the script reads.
func (rr *responsesRequest) chatOf() (*chatRequest, error) {
	req := &chatRequest{Stream: rr.Stream}
	if rr.Instructions != "" {
		req.Messages = append(req.Messages, textMessage("system", rr.Instructions))
	}
	var items []responsesItem
	var text string
	if json.Unmarshal(rr.Input, &text) == nil {
		items = []responsesItem{{Type: "message", Role: "user", Content: rr.Input}}
	} else if err := json.Unmarshal(rr.Input, &items); err != nil {
		return nil, err
	}
	for _, it := range items {
		switch {
		case it.Type == "function_call":
			n := len(req.Messages)
			if n == 0 || req.Messages[n-1].Role != "assistant" {
				req.Messages = append(req.Messages, wireMessage{Role: "assistant"})
				n++
			}
			tc := req.Messages[n-1].ToolCalls
			tc = append(tc, struct {
				ID       string `json:"id"`
				Function struct {
					Name string `json:"name"`
				} `json:"function"`
			}{ID: it.CallID})
			tc[len(tc)-1].Function.Name = it.Name
			req.Messages[n-1].ToolCalls = tc
		case it.Type == "function_call_output":
			m := wireMessage{Role: "tool", ToolCallID: it.CallID, Content: it.Output}
			req.Messages = append(req.Messages, m)
		case it.Type == "message" || it.Type == "" && it.Role != "":
			role := it.Role
			if role == "developer" {
				role = "system"
			}
			m := wireMessage{Role: role, Content: it.Content}
			req.Messages = append(req.Messages, textMessage(role, m.text()))
		}
	}
	for _, t := range rr.Tools {
		if t.Type == "function" {
			req.Tools = append(req.Tools, toolNamed(t.Name))
		}
	}
	return req, nil
}

func textMessage(role, text string) wireMessage {
	b, _ := json.Marshal(text)
	return wireMessage{Role: role, Content: b}
}

// toolNamed is an offered function tool, as the script reads tools.
func toolNamed(name string) (t struct {
	Type     string `json:"type"`
	Function struct {
		Name string `json:"name"`
	} `json:"function"`
}) {
	t.Type = "function"
	t.Function.Name = name
	return t
}

// responses answers POST /v1/responses: the script's reply as a Response,
// streamed as the API's named events, or whole.
func (s *Server) responses(w http.ResponseWriter, r *http.Request) {
	body, fail, ok := s.receive(r)
	if !ok {
		writeError(w, http.StatusRequestEntityTooLarge, "invalid_request_error", "body_too_large", "The request body is unreadable or larger than 4 MiB.")
		return
	}
	var rr responsesRequest
	if err := json.Unmarshal(body, &rr); err != nil {
		writeError(w, http.StatusBadRequest, "invalid_request_error", "invalid_body", "The body must be a JSON Responses request.")
		return
	}
	req, err := rr.chatOf()
	if err != nil || len(req.Messages) == 0 {
		writeError(w, http.StatusBadRequest, "invalid_request_error", "invalid_input", "input must be a string or a list of input items with at least one message.")
		return
	}
	if fail == RateLimited || fail == ServerError || fail == ErrorBody || fail == EchoKey {
		s.fail(w, r, fail)
		return
	}
	req.prompt = countChat(req)
	rep := respond(req)
	rep.reasoning = reasoningOf(rep)
	summary := rr.Reasoning != nil && rr.Reasoning.Summary != ""
	if !rr.Stream {
		writeJSON(w, http.StatusOK, responseJSON(req, rep, summary, "completed"))
		return
	}
	sw := newStreamWriter(w, r, s.opts.ChunkDelay)
	seq := 0
	send := func(typ string, v map[string]any) bool {
		v["type"], v["sequence_number"] = typ, seq
		seq++
		return sw.named(typ, v)
	}
	ok = send("response.created", map[string]any{"response": responseJSON(req, rep, summary, "in_progress")})
	items := outputItems(rep, summary)
	for i, it := range items {
		added := map[string]any{}
		for k, v := range it {
			added[k] = v
		}
		switch it["type"] {
		case "reasoning":
			added["summary"] = []any{}
			ok = ok && send("response.output_item.added", map[string]any{"output_index": i, "item": added})
			if summary {
				ev := map[string]any{"item_id": it["id"], "output_index": i, "summary_index": 0}
				for _, p := range split(rep.reasoning, textPieces, true) {
					ok = ok && send("response.reasoning_summary_text.delta", with(ev, "delta", p))
				}
				ok = ok && send("response.reasoning_summary_text.done", with(ev, "text", rep.reasoning))
			}
		case "message":
			added["content"], added["status"] = []any{}, "in_progress"
			ok = ok && send("response.output_item.added", map[string]any{"output_index": i, "item": added})
			ev := map[string]any{"item_id": it["id"], "output_index": i, "content_index": 0}
			ok = ok && send("response.content_part.added", with(ev, "part", map[string]any{"type": "output_text", "text": "", "annotations": []any{}}))
			for _, p := range split(rep.text, textPieces, true) {
				ok = ok && send("response.output_text.delta", with(ev, "delta", p))
			}
			ok = ok && send("response.output_text.done", with(ev, "text", rep.text))
		case "function_call":
			added["arguments"], added["status"] = "", "in_progress"
			ok = ok && send("response.output_item.added", map[string]any{"output_index": i, "item": added})
			ev := map[string]any{"item_id": it["id"], "output_index": i}
			args, _ := it["arguments"].(string)
			for _, p := range split(args, argPieces, false) {
				ok = ok && send("response.function_call_arguments.delta", with(ev, "delta", p))
			}
			ok = ok && send("response.function_call_arguments.done", with(ev, "arguments", args))
		}
		ok = ok && send("response.output_item.done", map[string]any{"output_index": i, "item": it})
	}
	ok = ok && send("response.completed", map[string]any{"response": responseJSON(req, rep, summary, "completed")})
	if !ok && s.opts.OnClientGone != nil {
		s.opts.OnClientGone()
	}
}

// with returns a copy of m with k set to v.
func with(m map[string]any, k string, v any) map[string]any {
	out := map[string]any{k: v}
	for kk, vv := range m {
		out[kk] = vv
	}
	return out
}

// outputItems is rep as output items: its reasoning (with its summary when
// one was asked for), its text, its function calls.
func outputItems(rep reply, summary bool) []map[string]any {
	var items []map[string]any
	if rep.reasoning != "" {
		sum := []any{}
		if summary {
			sum = []any{map[string]any{"type": "summary_text", "text": rep.reasoning}}
		}
		items = append(items, map[string]any{"id": "rs_standin", "type": "reasoning", "summary": sum})
	}
	if rep.text != "" {
		items = append(items, map[string]any{"id": "msg_standin", "type": "message", "status": "completed", "role": "assistant",
			"content": []any{map[string]any{"type": "output_text", "text": rep.text, "annotations": []any{}}}})
	}
	for i, c := range rep.calls {
		items = append(items, map[string]any{"id": fmt.Sprintf("fc_standin_%d", i), "type": "function_call", "status": "completed",
			"call_id": c.id, "name": c.name, "arguments": c.args})
	}
	return items
}

// responseJSON is the Response object; a completed one has its output
// and usage (in the Responses API's names).
func responseJSON(req *chatRequest, rep reply, summary bool, status string) map[string]any {
	r := map[string]any{"id": "resp_standin", "object": "response", "created_at": 0, "status": status, "model": ModelID,
		"output": []any{}, "usage": nil, "error": nil, "incomplete_details": nil}
	if status == "completed" {
		r["output"] = outputItems(rep, summary)
		u := usageOf(req, rep)
		r["usage"] = map[string]any{
			"input_tokens": u["prompt_tokens"], "output_tokens": u["completion_tokens"], "total_tokens": u["total_tokens"],
			"input_tokens_details":  map[string]any{"cached_tokens": u["prompt_tokens_details"].(map[string]int)["cached_tokens"]},
			"output_tokens_details": map[string]any{"reasoning_tokens": u["completion_tokens_details"].(map[string]int)["reasoning_tokens"]},
		}
	}
	return r
}

// countChat counts a converted request's tokens as [countPrompt] counts a
// chat request's body.
func countChat(req *chatRequest) promptTokens {
	b, _ := json.Marshal(map[string]any{"messages": req.Messages, "tools": req.Tools})
	return countPrompt(b)
}

// named writes one event with its name, after the delay.
func (sw *streamWriter) named(name string, v any) bool {
	if !sw.wait() {
		return false
	}
	b, _ := json.Marshal(v)
	return sw.raw("event: " + name + "\ndata: " + string(b) + "\n\n")
}
