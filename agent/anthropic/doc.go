// Package anthropic is an [agent.Model] over the Anthropic Messages API
// (POST {BaseURL}/v1/messages with "stream": true).
//
// The agent's conversation is in the OpenAI Chat Completions shapes; this
// package converts it: system messages become the top-level "system";
// an assistant's tool calls become tool_use blocks (their JSON arguments
// the block's input object); tool messages become tool_result blocks in a
// user message, consecutive results merged into one message, as the API
// requires; the "openai" tool export becomes {name, description,
// input_schema}. "max_tokens" is required by the API: Config.MaxTokens,
// 4096 by default.
//
// The answer streams as named server-sent events (message_start,
// content_block_start, content_block_delta with text_delta or
// input_json_delta, content_block_stop, message_delta, message_stop, ping,
// error): text deltas are passed on as they arrive, and each tool_use
// block becomes a tool call whose arguments are the block's input JSON,
// assembled from its partial_json pieces. A stream that ends before
// message_stop is an error, never a short answer.
//
// Requests carry x-api-key, anthropic-version: 2023-06-01 and
// anthropic-dangerous-direct-browser-access: true. The last one is
// Anthropic's documented opt-in for calls made straight from a web page:
// without it the API refuses cross-origin (CORS) requests ("CORS requests
// must set 'anthropic-dangerous-direct-browser-access' header"). It exists
// because an API key used in a page is visible to that page's users: use a
// key the user supplied, or a proxy that adds the key (set BaseURL, leave
// APIKey empty).
package anthropic
