// Package openairesponses is an [agent.Model] over the OpenAI Responses API
// (POST {BaseURL}/responses with "stream": true).
//
// The agent's conversation is in the Chat Completions shapes; this package
// converts it into the API's input items: system messages become the
// request's "instructions"; user and assistant text become messages; an
// assistant's tool calls become function_call items (their call_id the
// tool call's id) and tool messages function_call_output items. The tools
// are the catalog's "openai-responses" export ([Model.ToolFormat]); Chat
// Completions function tools are flattened into the same shape.
//
// The answer streams as named server-sent events: response.output_text.delta
// (and response.refusal.delta) as text, response.reasoning_summary_text.delta
// and response.reasoning_text.delta as reasoning, response.output_item.added
// and response.function_call_arguments.delta as tool calls being written,
// response.output_item.done with each whole item, and response.completed
// (or response.incomplete) with the usage. response.failed and error events
// are provider errors. A stream that ends before response.completed or
// response.incomplete is an error, never a short answer.
//
// Reasoning items (with their encrypted content when the API sends it) are
// kept in the answer's [agent.Message.ProviderState] and go back, unchanged,
// before the answer's function calls, as the API asks of reasoning models.
//
// The API key is sent as "Authorization: Bearer …" only; it never appears
// in errors or events.
package openairesponses
