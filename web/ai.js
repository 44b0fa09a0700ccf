// ai.js — a catalog's tools as an AI SDK ToolSet ("mcpwasm/ai"). The AI
// SDK (the npm package "ai", version 7) is an optional peer dependency:
// only an app that imports this module needs it.
//
// The tools are made with the SDK's own dynamicTool and jsonSchema: an
// inputSchema must be a schema the SDK recognizes by a private brand, and
// jsonSchema is its public way to wrap a JSON Schema known only at run
// time; dynamicTool marks tools whose types are not known when the app is
// built, as MCP tools are (their UI parts are "dynamic-tool").
import { dynamicTool, jsonSchema } from "ai";
import { MCPError, invalid } from "./errors.js";

// What the model reads of one result, at most (the rest is cut, visibly),
// as the catalog's own exports to a model cut it.
const MAX_TEXT = 100_000;

/**
 * The catalog's tools (cat.tools(), every enabled server's) as an AI SDK
 * ToolSet, keyed by their catalog names. Each tool's execute runs
 * cat.callTool(): the catalog's approval policy and approve, its sign-in,
 * breaker, schema check and timeout; every outcome but an abort is a tool
 * result (an isError result says what happened), and the SDK's
 * abortSignal cancels the call. With approve, every call of the set is
 * asked about first (see docs/JSAPI.md, "mcpwasm/ai").
 */
export async function toolsFromCatalog(cat, { approve, signal } = {}) {
  if (cat === null || typeof cat !== "object" || typeof cat.tools !== "function" || typeof cat.callTool !== "function") {
    throw invalid("toolsFromCatalog(): cat must be a catalog made with mcp.catalog() (or useCatalog().catalog once it is loaded)");
  }
  if (approve !== undefined && typeof approve !== "function") {
    throw invalid("toolsFromCatalog(): approve must be a function (request) => true | false | \"always\" | \"server\"");
  }
  const ask = approve ? asker(approve) : null;
  const listed = await cat.tools({ signal });
  const set = {};
  for (const { name, serverId, tool } of listed) {
    set[name] = dynamicTool({
      description: tool.description ?? tool.title ?? "",
      inputSchema: jsonSchema(tool.inputSchema ?? { type: "object", properties: {} }),
      // Not sent to the model: the SDK puts it on the call's parts.
      metadata: { serverId, tool: tool.name },
      execute: async (input, { abortSignal, toolCallId } = {}) => {
        // No input is no arguments; anything but an object is the
        // catalog's honest answer to arguments that are not one.
        const args = input ?? {};
        if (typeof args !== "object" || Array.isArray(args)) return notObject(name);
        if (ask) {
          const req = { id: serverId, tool: tool.name, name, args, annotations: tool.annotations, toolCallId };
          if (!(await ask(req, abortSignal))) return refused(name);
        }
        return cat.callTool(name, args, { signal: abortSignal });
      },
      toModelOutput: ({ output }) => modelOutput(output),
    });
  }
  return set;
}

// The results of a call approve refused, and of arguments that are not an
// object: the catalog's own sentences.
function refused(name) {
  return errorResult(`The user refused to run ${name}. Do not retry it; tell the user.`);
}

function notObject(name) {
  return errorResult(`The arguments for ${name} must be a JSON object such as {"name": "value"}, so it was not run. Call it again with an object.`);
}

function errorResult(text) {
  return { content: [{ type: "text", text }], isError: true };
}

// asker asks approve(request, { signal }) about calls, one question per
// server at a time (signal: the call's, which aborts when the turn
// stops), and keeps "always" (this tool) and "server" (every tool of the
// server) for the life of the ToolSet. A rejection, or any answer but
// true, "always" and "server", refuses.
function asker(approve) {
  const tools = new Set(); // `${server}\0${tool}` answered "always"
  const servers = new Set(); // answered "server"
  const queues = new Map(); // server id → the end of its line of questions
  const allowed = (req) => servers.has(req.id) || tools.has(`${req.id}\0${req.tool}`);
  return async (req, signal) => {
    if (allowed(req)) return true;
    const before = queues.get(req.id) ?? Promise.resolve();
    let release;
    const gate = new Promise((r) => { release = r; });
    const mine = before.then(() => gate);
    queues.set(req.id, mine);
    try {
      await abortable(before, signal, req.name);
      if (allowed(req)) return true;
      let answer;
      try {
        // The signal lets the page withdraw its question when the turn stops.
        answer = await abortable(Promise.resolve().then(() => approve(req, { signal })), signal, req.name);
      } catch (e) {
        if (e instanceof MCPError && e.code === "aborted") throw e;
        console.warn(`mcp: toolsFromCatalog: approve() rejected, which refuses ${req.name}:`, e);
        return false;
      }
      if (answer === "always") tools.add(`${req.id}\0${req.tool}`);
      if (answer === "server") servers.add(req.id);
      if (answer === true || answer === "always" || answer === "server") return true;
      if (typeof answer === "string") console.warn(`mcp: toolsFromCatalog: approve() answered ${JSON.stringify(answer)}, which refuses the call; answer true, false, "always" or "server"`);
      return false;
    } finally {
      release();
      // The line ends when this place in it does (after the questions
      // before it), not when a waiter gives up early: a question still
      // open ahead keeps the next call waiting.
      mine.then(() => { if (queues.get(req.id) === mine) queues.delete(req.id); });
    }
  };
}

// abortable settles as p does, or rejects aborted when signal aborts first.
function abortable(p, signal, name) {
  if (!signal) return p;
  const aborted = () => new MCPError("aborted", `The call of ${name} was aborted.`, { cause: signal.reason });
  if (signal.aborted) return Promise.reject(aborted());
  return new Promise((resolve, reject) => {
    const onAbort = () => reject(aborted());
    signal.addEventListener("abort", onAbort, { once: true });
    p.then(resolve, reject).finally(() => signal.removeEventListener("abort", onAbort));
  });
}

/**
 * What the model reads of a CallToolResult: its text parts joined (the
 * structured content as JSON when there is no text; a line for each
 * image, audio or resource), as error text when isError.
 */
function modelOutput(result) {
  if (result === null || typeof result !== "object") {
    return { type: "error-text", value: "The tool returned no result. Tell the user; do not guess the result." };
  }
  const lines = [];
  for (const c of Array.isArray(result.content) ? result.content : []) {
    if (c?.type === "text" && typeof c.text === "string") lines.push(c.text);
    else if (c?.type === "image" || c?.type === "audio") lines.push(`[${c.type} ${String(c.mimeType ?? "")}: not shown to the model]`);
    else if (c?.type === "resource_link") lines.push(`[resource ${String(c.uri ?? "")}]`);
    else if (c?.type === "resource") lines.push(typeof c.resource?.text === "string" ? c.resource.text : `[resource ${String(c.resource?.uri ?? "")}]`);
  }
  let text = lines.join("\n");
  if (text === "" && result.structuredContent !== undefined) text = JSON.stringify(result.structuredContent);
  if (text.length > MAX_TEXT) text = text.slice(0, MAX_TEXT) + `\n[… cut: the result has ${text.length} characters; the model sees the first ${MAX_TEXT}]`;
  return { type: result.isError ? "error-text" : "text", value: text };
}
