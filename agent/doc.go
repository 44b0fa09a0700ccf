// Package agent is the tool-calling agent loop of mcpwasm: it runs in a web
// page (Go compiled for js/wasm, where net/http is the browser's fetch) and
// natively alike.
//
// An [Agent] joins a [Model] and [Tools] (a catalog of MCP servers):
// [Agent.Run] sends the conversation and the tools to the model, streams
// its text, runs the tool calls of each answer concurrently, feeds their
// results back, and repeats until the model answers without tools or
// Config.MaxSteps is reached. It reports everything as [Event]s with
// stable types (text, toolcall, toolresult, authrequired, approval, step,
// done, error; and from a [StreamingModel], reasoning, toolcalldelta and
// usage, whose sum the done event carries). Bad model output is ordinary input: unknown tools and
// invalid arguments come back to the model as error results, an empty
// answer ends the run with an event that says so, and provider failures
// become coded errors ([mcperr]); nothing hangs and nothing loops forever.
//
// Messages use the OpenAI Chat Completions shapes ([Message], [ToolCall]),
// the lingua franca of model APIs; the adapters in agent/openai (any
// OpenAI-compatible endpoint), agent/anthropic (the Messages API),
// agent/openairesponses (OpenAI's Responses API) and agent/gemini
// (Gemini's streamGenerateContent) convert them. A model that takes its
// tools in another catalog format says so ([ToolFormatter]).
//
// [Agent.Sample] serves MCP sampling requests with the same model; the
// caller decides whether a server may sample and answers refusals with
// [ErrSamplingRefused].
//
// API keys are [Secret]s: they live in memory, print as "[redacted]"
// everywhere, and are revealed only to build a request's headers.
package agent
