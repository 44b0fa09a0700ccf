// Package model is a scripted, deterministic stand-in for a language model
// behind an OpenAI-compatible API, for the offline demo and the tests. It
// is not a model: it follows fixed rules and says so (its /v1/models entry,
// [ModelID], describes it as a scripted stand-in).
//
// Endpoints: POST /v1/chat/completions (streamed with "stream": true, as
// server-sent events, or as one JSON completion) and GET /v1/models, behind
// the CORS middleware of demo/cors so that a page on another origin can
// call it. The same script also answers in two other wire formats, written
// from their API references: POST /v1/responses (the OpenAI Responses API:
// named events from response.created to response.completed, a reasoning
// item whose summary streams when reasoning.summary is asked for, output
// text, function calls with their argument deltas, usage in the API's
// names) and POST /v1beta/models/mcpwasm-standin:streamGenerateContent?alt=sse
// or :generateContent (Gemini: text parts, thought parts when
// thinkingConfig.includeThoughts is set, functionCall parts whole in the
// last chunk with finishReason and usageMetadata). Its first functionCall
// part carries [ThoughtSignature], and a conversation that sends that call
// back without it is refused, as Gemini's thinking models do. Failures
// are injected into the Responses API's requests as HTTP errors only.
//
// The rules look at the tools offered and at the last user message:
//
//   - "add 2 and 40": calls the tool whose name is add or ends in _add
//     with {"a": 2, "b": 40};
//   - "echo hello there": calls the tool ending in _echo with {"text":
//     "hello there"};
//   - "slow" (or "slow 3"): calls the tool ending in _slow with {"steps":
//     20 (or 3), "delayMs": 250};
//   - "ask me who I am" (or "ask me"): calls the tool ending in _ask_user
//     with {"message": "who I am"} (or a default question);
//   - "open link https://…": calls the tool ending in _open_link with
//     {"url": "https://…"};
//   - several of these in one message ("add 2 and 40 and echo hi"): all
//     the calls in one answer, to run in parallel;
//   - "unknown tool": calls no_such_tool; "bad json": calls the _echo tool
//     with arguments that are not JSON; "keep calling": calls the _echo tool
//     again after every result; "say nothing": answers with no text and no
//     tool call;
//   - "Summarize in at most N words: …" (a sampling request): the first N
//     words;
//   - anything else: a plain answer that says what it can do.
//
// When the conversation ends with tool results, it answers "Results: "
// followed by the results' texts verbatim, so a test can check that an
// honest error text reached the model. A rule whose tool is not offered is
// answered in plain text that says so.
//
// Text is streamed in pieces of a few characters and tool-call arguments in
// pieces of a few bytes, interleaved between parallel calls, and the raw
// event stream is written in slices that split lines and events at awkward
// places, so clients are tested against the worst legal stream.
//
// Before its answer it streams a sentence of "reasoning" (which rule
// answered) as reasoning_content deltas, as reasoning models behind
// compatible servers do; with stream_options.include_usage the stream
// ends with a usage chunk in OpenAI's shape: the request's JSON at a token
// per 4 bytes as prompt_tokens (the tools and the conversation up to its
// last assistant message as prompt_tokens_details.cached_tokens), and the
// reasoning, text and tool calls as completion_tokens (the reasoning as
// completion_tokens_details.reasoning_tokens). It has no tokenizer: the
// counts are a rule of thumb, deterministic for tests.
//
// For tests, [Server] counts requests, keeps the last request body, and
// injects a [Failure] (429 with Retry-After, 500, an error body, a body
// that echoes the API key, a stream cut mid-event, an error inside the
// stream, a stream that stalls) either queued with [Server.FailNext] or
// asked for by a request's [FailHeader].
package model
