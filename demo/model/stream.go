package model

import (
	"encoding/json"
	"net/http"
	"strings"
	"time"
	"unicode/utf8"
)

// Piece sizes: text in runes, arguments in bytes, the raw stream in bytes.
// Co-prime cycles, so boundaries fall everywhere.
var (
	textPieces = []int{1, 3, 2, 5, 4}
	argPieces  = []int{3, 1, 4, 2, 5}
	wirePieces = []int{7, 13, 1, 29, 2, 64, 5}
)

// streamWriter writes server-sent events in awkward slices, flushing
// after each.
type streamWriter struct {
	w     http.ResponseWriter
	rc    *http.ResponseController
	r     *http.Request
	delay time.Duration
	n     int // slices written, for the piece cycle
	gone  bool
}

func newStreamWriter(w http.ResponseWriter, r *http.Request, delay time.Duration) *streamWriter {
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	return &streamWriter{w: w, rc: http.NewResponseController(w), r: r, delay: delay}
}

// raw writes s in slices; it reports false once the client is gone.
func (sw *streamWriter) raw(s string) bool {
	for len(s) > 0 && !sw.gone {
		n := min(wirePieces[sw.n%len(wirePieces)], len(s))
		sw.n++
		if _, err := sw.w.Write([]byte(s[:n])); err != nil {
			sw.gone = true
			break
		}
		if err := sw.rc.Flush(); err != nil {
			sw.gone = true
		}
		s = s[n:]
	}
	return !sw.gone
}

// wait waits the delay between events; it reports false once the client
// is gone.
func (sw *streamWriter) wait() bool {
	if sw.delay > 0 {
		t := time.NewTimer(sw.delay)
		select {
		case <-sw.r.Context().Done():
			t.Stop()
			sw.gone = true
			return false
		case <-t.C:
		}
	}
	return true
}

// event writes one data event, after the delay.
func (sw *streamWriter) event(v any) bool {
	if !sw.wait() {
		return false
	}
	b, _ := json.Marshal(v)
	return sw.raw("data: " + string(b) + "\n\n")
}

// chunk is a chat.completion.chunk with one choice.
func chunk(delta map[string]any, finish any) map[string]any {
	return map[string]any{
		"id": "chatcmpl-standin", "object": "chat.completion.chunk", "created": 0, "model": ModelID,
		"choices": []map[string]any{{"index": 0, "delta": delta, "logprobs": nil, "finish_reason": finish}},
	}
}

// split cuts s into pieces of the given sizes (cycling), never inside a
// UTF-8 sequence (the pieces travel as JSON strings).
func split(s string, sizes []int, runes bool) []string {
	var out []string
	for i := 0; len(s) > 0; i++ {
		n := sizes[i%len(sizes)]
		end := 0
		if runes {
			for k := 0; k < n && end < len(s); k++ {
				_, w := utf8.DecodeRuneInString(s[end:])
				end += w
			}
		} else {
			end = min(n, len(s))
			for end < len(s) && !utf8.RuneStart(s[end]) {
				end++
			}
		}
		out = append(out, s[:end])
		s = s[end:]
	}
	return out
}

// stream writes rep as a Chat Completions event stream: its reasoning
// (as reasoning_content deltas), its text, its tool calls, and, when the
// request asked with stream_options.include_usage, a usage chunk.
func (s *Server) stream(w http.ResponseWriter, r *http.Request, req *chatRequest, rep reply) {
	sw := newStreamWriter(w, r, s.opts.ChunkDelay)
	ok := sw.event(chunk(map[string]any{"role": "assistant", "content": ""}, nil))
	for _, p := range split(rep.reasoning, textPieces, true) {
		ok = ok && sw.event(chunk(map[string]any{"reasoning_content": p}, nil))
	}
	for _, p := range split(rep.text, textPieces, true) {
		ok = ok && sw.event(chunk(map[string]any{"content": p}, nil))
	}
	// Tool calls: a head delta each, then their argument pieces
	// interleaved round-robin (legal: deltas are matched by index).
	pieces := make([][]string, len(rep.calls))
	for i, c := range rep.calls {
		ok = ok && sw.event(chunk(map[string]any{"tool_calls": []map[string]any{{
			"index": i, "id": c.id, "type": "function",
			"function": map[string]any{"name": c.name, "arguments": ""},
		}}}, nil))
		pieces[i] = split(c.args, argPieces, false)
	}
	for more := true; more; {
		more = false
		for i := range pieces {
			if len(pieces[i]) == 0 {
				continue
			}
			more = true
			ok = ok && sw.event(chunk(map[string]any{"tool_calls": []map[string]any{{
				"index": i, "function": map[string]any{"arguments": pieces[i][0]},
			}}}, nil))
			pieces[i] = pieces[i][1:]
		}
	}
	finish := "stop"
	if len(rep.calls) > 0 {
		finish = "tool_calls"
	}
	ok = ok && sw.event(chunk(map[string]any{}, finish))
	if req.StreamOptions != nil && req.StreamOptions.IncludeUsage {
		ok = ok && sw.event(map[string]any{
			"id": "chatcmpl-standin", "object": "chat.completion.chunk", "created": 0, "model": ModelID,
			"choices": []any{}, "usage": usageOf(req, rep),
		})
	}
	ok = ok && sw.raw("data: [DONE]\n\n")
	if !ok && s.opts.OnClientGone != nil {
		s.opts.OnClientGone()
	}
}

// tokens is the stand-in's token count of s: a token per 4 bytes, as a
// rule of thumb for English text (it has no tokenizer).
func tokens(s string) int { return (len(s) + 3) / 4 }

// promptTokens is a request's size in tokens: all of it, and the part a
// prompt cache would hold (the tools and the conversation up to its last
// assistant message, which the previous request of a run sent too).
type promptTokens struct{ total, cached int }

// countPrompt counts the tokens of a chat request's body: each message's
// JSON and the tools' JSON.
func countPrompt(body []byte) promptTokens {
	var raw struct {
		Messages []json.RawMessage `json:"messages"`
		Tools    json.RawMessage   `json:"tools"`
	}
	if json.Unmarshal(body, &raw) != nil {
		return promptTokens{}
	}
	p := promptTokens{total: tokens(string(raw.Tools))}
	for _, m := range raw.Messages {
		p.total += tokens(string(m))
		var role struct {
			Role string `json:"role"`
		}
		if json.Unmarshal(m, &role) == nil && role.Role == "assistant" {
			p.cached = p.total // nothing is cached before the first answer
		}
	}
	return p
}

// usageOf is the usage of rep to req, in the Chat Completions shape with
// the details OpenAI reports (cached prompt tokens, reasoning tokens).
func usageOf(req *chatRequest, rep reply) map[string]any {
	reasoning := tokens(rep.reasoning)
	out := reasoning + tokens(rep.text)
	for _, c := range rep.calls {
		out += tokens(c.name) + tokens(c.args)
	}
	return map[string]any{
		"prompt_tokens": req.prompt.total, "completion_tokens": out, "total_tokens": req.prompt.total + out,
		"prompt_tokens_details":     map[string]int{"cached_tokens": req.prompt.cached},
		"completion_tokens_details": map[string]int{"reasoning_tokens": reasoning},
	}
}

// reasoningOf is what the stand-in "thinks" before rep: a sentence that
// says which rule answered (nothing for an answer that is empty on
// purpose).
func reasoningOf(rep reply) string {
	switch {
	case len(rep.calls) > 0:
		names := make([]string, len(rep.calls))
		for i, c := range rep.calls {
			names[i] = c.name
		}
		return "The message matches my script for " + strings.Join(names, " and ") + ", so I call it with the arguments it names."
	case strings.HasPrefix(rep.text, "Results: "):
		return "The tools answered, so I pass their results on verbatim."
	case rep.text != "":
		return "No rule of my script calls a tool here, so I answer in text."
	}
	return ""
}

// completionJSON is rep as a non-streamed chat.completion.
func completionJSON(req *chatRequest, rep reply) map[string]any {
	msg := map[string]any{"role": "assistant", "content": rep.text}
	if rep.reasoning != "" {
		msg["reasoning_content"] = rep.reasoning
	}
	finish := "stop"
	if len(rep.calls) > 0 {
		finish = "tool_calls"
		if rep.text == "" {
			msg["content"] = nil
		}
		calls := make([]map[string]any, len(rep.calls))
		for i, c := range rep.calls {
			calls[i] = map[string]any{"id": c.id, "type": "function", "function": map[string]any{"name": c.name, "arguments": c.args}}
		}
		msg["tool_calls"] = calls
	}
	return map[string]any{
		"id": "chatcmpl-standin", "object": "chat.completion", "created": 0, "model": ModelID,
		"choices": []map[string]any{{"index": 0, "message": msg, "logprobs": nil, "finish_reason": finish}},
		"usage":   usageOf(req, rep),
	}
}
