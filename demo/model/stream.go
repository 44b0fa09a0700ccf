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

// event writes one data event, after the delay.
func (sw *streamWriter) event(v any) bool {
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

// stream writes rep as a Chat Completions event stream.
func (s *Server) stream(w http.ResponseWriter, r *http.Request, rep reply, usage bool) {
	sw := newStreamWriter(w, r, s.opts.ChunkDelay)
	ok := sw.event(chunk(map[string]any{"role": "assistant", "content": ""}, nil))
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
	if usage {
		ok = ok && sw.event(map[string]any{
			"id": "chatcmpl-standin", "object": "chat.completion.chunk", "created": 0, "model": ModelID,
			"choices": []any{}, "usage": usageOf(rep),
		})
	}
	ok = ok && sw.raw("data: [DONE]\n\n")
	if !ok && s.opts.OnClientGone != nil {
		s.opts.OnClientGone()
	}
}

func usageOf(rep reply) map[string]int {
	n := len(strings.Fields(rep.text))
	for _, c := range rep.calls {
		n += len(c.args) / 4
	}
	return map[string]int{"prompt_tokens": 0, "completion_tokens": n, "total_tokens": n}
}

// completionJSON is rep as a non-streamed chat.completion.
func completionJSON(rep reply) map[string]any {
	msg := map[string]any{"role": "assistant", "content": rep.text}
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
		"usage":   usageOf(rep),
	}
}
