// Package gemini is an [agent.Model] over the Google Gemini API's
// streamGenerateContent (POST {BaseURL}/models/{model}:streamGenerateContent?alt=sse).
//
// The agent's conversation is in the Chat Completions shapes; this package
// converts it into contents: system messages become the systemInstruction;
// user text a "user" content; an assistant's text and tool calls a "model"
// content with text and functionCall parts (the arguments' JSON as the
// call's args object); tool messages functionResponse parts of a "user"
// content ({"output": text}), named after the call they answer. The tools
// are the catalog's "gemini" export ([Model.ToolFormat]), whose schemas are
// already in Gemini's OpenAPI subset; Chat Completions function tools are
// converted with [catalog.GeminiSchema].
//
// Each streamed chunk is a GenerateContentResponse: text parts are passed
// on as text, parts marked "thought" (asked for with Config.IncludeThoughts)
// as reasoning, and each functionCall part becomes a tool call, whole. The
// usageMetadata of the last chunk is the usage (thoughtsTokenCount counted
// in the output). A stream that ends without a finishReason is an error,
// never a short answer; an error chunk and a blocked prompt are errors.
//
// The thought signatures Gemini attaches to parts are kept in the answer's
// [agent.Message.ProviderState] and go back on the same parts, as the API
// requires of function calling with thinking models.
//
// The API key is sent in the x-goog-api-key header, never in the URL; it
// never appears in errors or events.
package gemini
