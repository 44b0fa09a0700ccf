// models.js — the model descriptions of cat.agent({model}) (mcp.models, and
// the `models` export of mcp.js): plain data, so that a page may make one
// before load(), as the React hooks' users do. Go's adapters read them.

/** One factory per API an agent can talk to; each returns a frozen description. */
export const models = Object.freeze({
  /** Any OpenAI-compatible Chat Completions endpoint (OpenAI, Ollama, vLLM, LM Studio, llama.cpp, OpenRouter). */
  openai: ({ baseURL, apiKey, model, headers } = {}) => Object.freeze({ kind: "openai", baseURL, apiKey, model, headers }),
  /** The Anthropic Messages API. */
  anthropic: ({ baseURL, apiKey, model, headers, maxTokens, thinkingBudget } = {}) => Object.freeze({ kind: "anthropic", baseURL, apiKey, model, headers, maxTokens, thinkingBudget }),
  /** The OpenAI Responses API (POST /v1/responses). */
  openaiResponses: ({ baseURL, apiKey, model, headers, reasoningEffort, reasoningSummary } = {}) => Object.freeze({ kind: "openai-responses", baseURL, apiKey, model, headers, reasoningEffort, reasoningSummary }),
  /** The Google Gemini API (streamGenerateContent). */
  gemini: ({ baseURL, apiKey, model, headers, includeThoughts } = {}) => Object.freeze({ kind: "gemini", baseURL, apiKey, model, headers, includeThoughts }),
});
