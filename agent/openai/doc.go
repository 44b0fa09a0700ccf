// Package openai is an [agent.Model] over the OpenAI Chat Completions API
// (POST {BaseURL}/chat/completions with "stream": true), which works with
// any OpenAI-compatible endpoint: OpenAI (https://api.openai.com/v1),
// Ollama (http://localhost:11434/v1), vLLM, LM Studio, the llama.cpp
// server, OpenRouter.
//
// It reads the server-sent event stream ("data: {chunk}" … "data: [DONE]"),
// streams text deltas as they arrive, and assembles tool calls from their
// indexed deltas, whose arguments may be split across chunks at any byte.
// A server that answers with a whole JSON completion instead of a stream is
// read too. A stream that breaks off, an error chunk, an error status and a
// 429 or 5xx are reported as coded errors; 408, 409, 429 and 5xx are
// retried a bounded number of times, honouring Retry-After.
//
// The API key is optional (local servers need none) and is sent as
// "Authorization: Bearer …" only; it never appears in errors.
//
// Under GOOS=js, net/http is the browser's fetch: the endpoint must allow
// the page's origin (CORS). OpenAI does; a local Ollama needs
// OLLAMA_ORIGINS set to the page's origin.
package openai
