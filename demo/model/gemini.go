package model

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
)

// ThoughtSignature is the signature the stand-in puts on the first
// functionCall part of an answer. Like Gemini's thinking models, it
// refuses a conversation that sends one of its calls back without it.
const ThoughtSignature = "c3RhbmQtaW4gdGhvdWdodCBzaWduYXR1cmU="

// geminiRequest is a generateContent request; only what the stand-in
// reads.
type geminiRequest struct {
	Contents []struct {
		Role  string       `json:"role"`
		Parts []geminiPart `json:"parts"`
	} `json:"contents"`
	SystemInstruction *struct {
		Parts []geminiPart `json:"parts"`
	} `json:"systemInstruction"`
	Tools []struct {
		FunctionDeclarations []struct {
			Name string `json:"name"`
		} `json:"functionDeclarations"`
	} `json:"tools"`
	GenerationConfig *struct {
		ThinkingConfig *struct {
			IncludeThoughts bool `json:"includeThoughts"`
		} `json:"thinkingConfig"`
	} `json:"generationConfig"`
}

type geminiPart struct {
	Text             *string `json:"text"`
	ThoughtSignature string  `json:"thoughtSignature"`
	FunctionCall     *struct {
		ID   string          `json:"id"`
		Name string          `json:"name"`
		Args json.RawMessage `json:"args"`
	} `json:"functionCall"`
	FunctionResponse *struct {
		ID       string          `json:"id"`
		Name     string          `json:"name"`
		Response json.RawMessage `json:"response"`
	} `json:"functionResponse"`
}

// chatOf turns a Gemini request into the chat request the script reads;
// problem says what a real Gemini would refuse in it.
func (gr *geminiRequest) chatOf() (req *chatRequest, problem string) {
	req = &chatRequest{Stream: true}
	if si := gr.SystemInstruction; si != nil {
		var b strings.Builder
		for _, p := range si.Parts {
			if p.Text != nil {
				b.WriteString(*p.Text)
			}
		}
		req.Messages = append(req.Messages, textMessage("system", b.String()))
	}
	for _, c := range gr.Contents {
		var text strings.Builder
		var calls []string
		var tools []wireMessage
		for i, p := range c.Parts {
			switch {
			case p.Text != nil:
				text.WriteString(*p.Text)
			case p.FunctionCall != nil:
				if len(calls) == 0 && p.ThoughtSignature != ThoughtSignature {
					problem = fmt.Sprintf("Function call is missing a thought_signature in functionCall parts (contents part %d). Send the signatures back as they came.", i)
				}
				calls = append(calls, p.FunctionCall.Name)
			case p.FunctionResponse != nil:
				tools = append(tools, textMessage("tool", responseText(p.FunctionResponse.Response)))
			}
		}
		switch {
		case c.Role == "model":
			m := textMessage("assistant", text.String())
			for _, name := range calls {
				tc := toolNamed(name)
				m.ToolCalls = append(m.ToolCalls, struct {
					ID       string `json:"id"`
					Function struct {
						Name string `json:"name"`
					} `json:"function"`
				}{ID: name, Function: tc.Function})
			}
			req.Messages = append(req.Messages, m)
		case len(tools) > 0:
			req.Messages = append(req.Messages, tools...)
		default:
			req.Messages = append(req.Messages, textMessage("user", text.String()))
		}
	}
	for _, t := range gr.Tools {
		for _, d := range t.FunctionDeclarations {
			req.Tools = append(req.Tools, toolNamed(d.Name))
		}
	}
	return req, problem
}

// responseText is a functionResponse's response as text: its "output"
// (or "error") when that is a string, else its JSON.
func responseText(raw json.RawMessage) string {
	var r map[string]any
	if json.Unmarshal(raw, &r) == nil {
		for _, k := range []string{"output", "error"} {
			if s, ok := r[k].(string); ok {
				return s
			}
		}
	}
	return string(raw)
}

// writeGeminiError writes an error in Google's shape.
func writeGeminiError(w http.ResponseWriter, status int, reason, msg string) {
	writeJSON(w, status, map[string]any{"error": map[string]any{"code": status, "message": msg, "status": reason}})
}

// gemini answers POST /v1beta/models/{model}:streamGenerateContent (as
// server-sent events with alt=sse) and :generateContent.
func (s *Server) gemini(w http.ResponseWriter, r *http.Request) {
	model, method, _ := strings.Cut(r.PathValue("call"), ":")
	body, _, ok := s.receive(r)
	switch {
	case !ok:
		writeGeminiError(w, http.StatusRequestEntityTooLarge, "INVALID_ARGUMENT", "The request body is unreadable or larger than 4 MiB.")
		return
	case model != ModelID:
		writeGeminiError(w, http.StatusNotFound, "NOT_FOUND", fmt.Sprintf("models/%s is not found; this stand-in serves models/%s.", model, ModelID))
		return
	case method != "streamGenerateContent" && method != "generateContent":
		writeGeminiError(w, http.StatusNotFound, "NOT_FOUND", "Unknown method "+method+".")
		return
	case method == "streamGenerateContent" && r.URL.Query().Get("alt") != "sse":
		writeGeminiError(w, http.StatusBadRequest, "INVALID_ARGUMENT", "This stand-in streams only with alt=sse.")
		return
	}
	var gr geminiRequest
	if err := json.Unmarshal(body, &gr); err != nil || len(gr.Contents) == 0 {
		writeGeminiError(w, http.StatusBadRequest, "INVALID_ARGUMENT", "The body must be a JSON GenerateContentRequest with at least one content.")
		return
	}
	req, problem := gr.chatOf()
	if problem != "" {
		writeGeminiError(w, http.StatusBadRequest, "INVALID_ARGUMENT", problem)
		return
	}
	req.prompt = countChat(req)
	rep := respond(req)
	rep.reasoning = reasoningOf(rep)
	thoughts := gr.GenerationConfig != nil && gr.GenerationConfig.ThinkingConfig != nil && gr.GenerationConfig.ThinkingConfig.IncludeThoughts
	if method == "generateContent" {
		writeJSON(w, http.StatusOK, geminiChunk(geminiParts(rep, thoughts), "STOP", geminiUsage(req, rep)))
		return
	}
	sw := newStreamWriter(w, r, s.opts.ChunkDelay)
	running := map[string]any{"promptTokenCount": req.prompt.total}
	if thoughts {
		for _, p := range split(rep.reasoning, textPieces, true) {
			ok = ok && sw.event(geminiChunk([]any{map[string]any{"text": p, "thought": true}}, "", running))
		}
	}
	for _, p := range split(rep.text, textPieces, true) {
		ok = ok && sw.event(geminiChunk([]any{map[string]any{"text": p}}, "", running))
	}
	// The calls come whole, in the last chunk, with the finish reason and
	// the usage.
	ok = ok && sw.event(geminiChunk(geminiParts(reply{calls: rep.calls}, false), "STOP", geminiUsage(req, rep)))
	if !ok && s.opts.OnClientGone != nil {
		s.opts.OnClientGone()
	}
}

// geminiParts is rep as parts: its thoughts (when asked for), its text,
// its calls (the first with the thought signature).
func geminiParts(rep reply, thoughts bool) []any {
	var parts []any
	if thoughts && rep.reasoning != "" {
		parts = append(parts, map[string]any{"text": rep.reasoning, "thought": true})
	}
	if rep.text != "" {
		parts = append(parts, map[string]any{"text": rep.text})
	}
	for i, c := range rep.calls {
		p := map[string]any{"functionCall": map[string]any{"name": c.name, "args": json.RawMessage(argsOrEmpty(c.args))}}
		if i == 0 {
			p["thoughtSignature"] = ThoughtSignature
		}
		parts = append(parts, p)
	}
	return parts
}

// argsOrEmpty is a call's arguments as a JSON object: functionCall args
// cannot carry the script's deliberately broken JSON, which goes as {}.
func argsOrEmpty(args string) string {
	var v map[string]any
	if json.Unmarshal([]byte(args), &v) != nil {
		return "{}"
	}
	return args
}

func geminiChunk(parts []any, finish string, usage map[string]any) map[string]any {
	cand := map[string]any{"content": map[string]any{"role": "model", "parts": parts}, "index": 0}
	if finish != "" {
		cand["finishReason"] = finish
	}
	return map[string]any{"candidates": []any{cand}, "usageMetadata": usage, "modelVersion": ModelID, "responseId": "standin"}
}

// geminiUsage is the usage of rep in usageMetadata's names: the thoughts
// apart from the candidates.
func geminiUsage(req *chatRequest, rep reply) map[string]any {
	u := usageOf(req, rep)
	reasoning := u["completion_tokens_details"].(map[string]int)["reasoning_tokens"]
	out := u["completion_tokens"].(int) - reasoning
	return map[string]any{
		"promptTokenCount": req.prompt.total, "candidatesTokenCount": out, "thoughtsTokenCount": reasoning,
		"cachedContentTokenCount": req.prompt.cached, "totalTokenCount": req.prompt.total + out + reasoning,
	}
}
