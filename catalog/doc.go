// Package catalog puts many MCP servers behind one tool list for an agent
// that runs in a web page: it owns one [Server] per id (an
// [mcpclient.Client], through [FromClient]), connects each lazily, keeps its
// status and circuit breaker, names every tool uniquely for a model, exports
// the list in each model provider's tool format, and routes the model's
// tool calls back.
//
// # Configuration
//
// [ParseServers] reads this package's {"servers": {…}} form and the
// {"mcpServers": {…}} files desktop MCP hosts write; local command (stdio)
// entries are refused one by one, since a web page can only reach servers
// over HTTP. [New] validates a [Config]; nothing connects then.
//
// # Tool list
//
// [Catalog.Tools] connects the enabled servers that are not connected yet,
// in parallel (a few at a time; concurrent connects of one server share one
// attempt), never with user interaction: a server that needs a sign-in
// becomes needs_auth, fires an "authrequired" event once, and stays out of
// the list until the host calls [Catalog.Authorize] from a user action. A
// tool is exported as "${id}_${tool}" with every character outside
// [a-zA-Z0-9_-] replaced by "_", at most 64 characters; names that would
// collide carry a short hash of their server id and tool name, so the
// result never depends on the order servers answered in. Per-server
// allowTools/denyTools globs ([path.Match]; deny wins) and a per-server cap
// (with a "warning" event) keep the list safe. [Catalog.ToolsFor] and
// [Export] render it for OpenAI Chat Completions, the OpenAI Responses API,
// Anthropic's Messages API and Gemini (whose OpenAPI-subset schema is made
// by [GeminiSchema]). Tools come by server id, then tool name, whatever
// order the servers connected or listed them in, so that every request
// starts the same (providers' prompt caches hit).
//
// # Tool search
//
// When the servers' tool definitions exceed [Config.ToolBudget] (in tokens
// as [EstimateTokens] counts them), [Catalog.ToolsFor] offers the meta
// tools catalog_search_tools {query} (matching tools with their schemas,
// best first) and catalog_call_tool {name, arguments} instead, and
// [Catalog.ToolsForConversation] adds the full definitions of the tools a
// conversation already called ([UsedTools]). A call through
// catalog_call_tool goes the way a direct call of the tool goes, approval
// and honest texts included, and its result names the real server and
// tool.
//
// # Calls
//
// [Catalog.CallTool], [Catalog.ModelCall] and [Catalog.HandleToolCalls]
// never fail for what went wrong with a server or a call: each outcome is a
// result whose text says what happened and what the model should tell the
// user (the server needs a sign-in, the user declined it, the server is
// disabled or paused by its breaker, the user refused approval, the call
// timed out, the arguments are not JSON or fail the tool's input schema,
// the name is unknown). A model told the truth does not claim that a server
// it could not use answered. Only an aborted context, a closed catalog and
// a negative [CallOptions].Timeout are errors.
//
// A declined sign-in latches: the catalog does not connect or sign in to
// that server again until the host calls [Catalog.Authorize] or
// [Catalog.Enable] from a user action; a call to its tools meanwhile tells
// the model the user can still sign in from the app and fires
// authrequired ([AuthRequired].Declined) for the host to offer it. A
// server whose requests fail in a row (transport errors, HTTP 5xx,
// timeouts, lost connections) opens its breaker: calls fail fast without
// reaching it until the cooldown ends, then one probe decides.
//
// [Config.Approve] is asked before the calls [Config.ApprovalPolicy] says
// to ask about (by default every tool not annotated readOnlyHint: true);
// its AllowAlways and AllowServer answers hold for the rest of the call's
// [Approvals] scope (an agent's conversation, else the catalog's life).
//
// Events ([Event]) report every status change, every change of the tool
// list (once per change), sign-ins needed and warnings.
package catalog
