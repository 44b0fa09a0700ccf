// catalog.js — many MCP servers behind one tool list (mcp.catalog()), and
// the agents that run a model's turns over it.
import { AGENT_OPTIONS, CLIENT_OPTIONS } from "./jsapi.js";
import { MCPError, invalid } from "./errors.js";
import { checkFunctions, clientOptionsJSON, functionsAs } from "./options.js";
import { addProblem, callProblem, clientProblem, entryRelayProblem, optionsProblem, policyRefusal, readEntry, sentence } from "./rules.js";

/** The page's WebMCP API (document.modelContext), or null where the browser has none. */
function modelContext() {
  const mc = globalThis.document?.modelContext;
  return mc && typeof mc.getTools === "function" && typeof mc.executeTool === "function" && typeof mc.registerTool === "function" ? mc : null;
}

const NO_WEBMCP = "this browser has no WebMCP (document.modelContext; Chromium: --enable-features=WebMCP or the origin trial)";

// The names the page's catalogs registered with exposeToPage, with a count
// each: a catalog's webmcp server never lists them, so that no tool comes
// back to the catalog it came from.
const exposed = new Map();

/** path.Match for tool names: * and ? (a pattern with [ or \\ is refused before). */
const globRegExp = (p) => new RegExp(`^${p.replace(/[.+^${}()|\\]/g, "\\$&").replaceAll("*", ".*").replaceAll("?", ".")}$`, "s");

/**
 * Many MCP servers behind one tool list. Events: statuschange {id, status},
 * toolschanged {ids}, authrequired {id, declined?}, warning {id, message},
 * elicitationcomplete {id, elicitationId}.
 */
export class Catalog extends EventTarget {
  #mcp;
  #id;
  #statuses;
  #servers = new Map(); // server id → Client
  #approve;
  #views = new Map(); // AppView → the model context it set since an agent's last turn
  #onElicitation;
  #closed = false;
  #agents = new Set();
  #webmcp = new Set(); // ids of the servers that are the page's WebMCP tools
  #toolchange = null; // the listener on document.modelContext, while there are such servers
  #exposures = new Set(); // AbortControllers of exposeToPage()
  /** What the configuration left out (a stdio server, …), one sentence each. */
  warnings;

  #max; // maxServers, as Go reads it
  #policies; // the page's and the catalog's host policy ([{options, owner}])

  /**
   * id: the page's; servers: the configuration's entries; warnings: the
   * entries left out (the rest each get a client "<id>/<server>").
   */
  constructor(mcp, id, servers, warnings, approve, maxServers, onElicitation, policies = []) {
    super();
    this.#policies = policies;
    this.#max = Number.isInteger(maxServers) && maxServers > 0 ? maxServers : 32;
    this.#mcp = mcp;
    this.#id = id;
    this.#statuses = {};
    this.#approve = approve;
    this.#onElicitation = onElicitation;
    const all = [...warnings];
    for (const [s, sc] of Object.entries(servers)) {
      const entry = readEntry(s, sc);
      if (entry.problem) continue;
      this.#servers.set(s, mcp._wrap(`${id}/${s}`, sc?.url ?? sc?.serverUrl ?? "", sc ?? {}));
      if (entry.webmcp) {
        const w = this.#pageServer(s);
        if (w) all.push(w);
      }
    }
    this.warnings = Object.freeze(all);
  }

  /**
   * Server id is the page's WebMCP tools: follow their toolchange. Returns
   * the warning when the browser has no WebMCP (the server stays, with no
   * tools), also sent as a warning event once the caller can listen.
   */
  #pageServer(id) {
    this.#webmcp.add(id);
    const mc = modelContext();
    if (!mc) {
      const message = `${NO_WEBMCP}: server ${JSON.stringify(id)} has no tools`;
      queueMicrotask(() => this._event("warning", { id, message }));
      return message;
    }
    if (!this.#toolchange) {
      this.#toolchange = () => {
        if (this.#closed) return;
        try {
          this.#mcp._invokeSync("catalog.webmcpChanged", { id: this.#id });
        } catch (e) {
          // The runtime ended or the catalog closed meanwhile: nothing to list.
          if (e?.code !== "closed") console.warn("mcp: catalog: the page's WebMCP tools changed and could not be listed again:", e);
        }
      };
      mc.addEventListener("toolchange", this.#toolchange);
    }
    return null;
  }

  // host.webmcpTools: the tools this page registered (not its frames', not
  // those a catalog exposed), as the webmcp servers' list.
  async _webmcpTools() {
    const mc = modelContext();
    if (!mc) return "[]";
    const list = [];
    for (const t of await mc.getTools()) {
      if (t?.window !== globalThis.window || exposed.has(t.name)) continue;
      list.push({ name: t.name, title: t.title || undefined, description: t.description, inputSchema: t.inputSchema, annotations: t.annotations });
    }
    return JSON.stringify(list);
  }

  // host.webmcpCall: runs one of them through executeTool, as the
  // browser's agent would; a failure is the tool's, told to the model.
  async _webmcpCall(name, args) {
    const mc = modelContext();
    if (!mc) return JSON.stringify({ error: NO_WEBMCP });
    const tool = exposed.has(name) ? undefined : (await mc.getTools()).find((t) => t?.window === globalThis.window && t.name === name);
    if (!tool) return JSON.stringify({ error: `the page has no WebMCP tool ${JSON.stringify(name)} now` });
    try {
      const r = await mc.executeTool(tool, args);
      if (r === undefined || r === null) return "{}";
      return JSON.stringify({ result: typeof r === "string" ? r : JSON.stringify(r) });
    } catch (e) {
      return JSON.stringify({ error: `${e?.name ?? "Error"}: ${e?.message ?? String(e)}` });
    }
  }

  /**
   * Offers the catalog's tools whose exported names match one of tools
   * (glob patterns with * and ?) to the browser's own agent: each is
   * registered with document.modelContext.registerTool, and a call runs
   * through callTool (allow/deny, schema check, approve, honest results).
   * They are removed when signal aborts or the catalog closes. Resolves
   * the names registered; without WebMCP, [] and a warning event.
   */
  async exposeToPage({ tools = ["*"], signal } = {}) {
    if (!Array.isArray(tools) || tools.some((p) => typeof p !== "string" || /[[\\]/.test(p))) {
      throw invalid("exposeToPage(): tools must be an array of name patterns with * and ?, like [\"notes_*\"]");
    }
    if (signal !== undefined && !(signal instanceof AbortSignal)) throw invalid("exposeToPage(): signal must be an AbortSignal");
    if (this.#closed) throw new MCPError("closed", "this catalog is closed");
    const mc = modelContext();
    if (!mc) {
      this._event("warning", { id: "", message: `${NO_WEBMCP}: exposeToPage() registered no tools` });
      return [];
    }
    signal?.throwIfAborted();
    const list = await this.tools({ signal });
    // close() may have run while the tools were listed: it aborted the
    // exposures it knew of, and this one must not outlive it.
    if (this.#closed) throw new MCPError("closed", "this catalog is closed");
    const ac = new AbortController();
    this.#exposures.add(ac);
    const names = [];
    ac.signal.addEventListener("abort", () => {
      this.#exposures.delete(ac);
      for (const n of names) {
        const c = exposed.get(n) - 1;
        if (c > 0) exposed.set(n, c);
        else exposed.delete(n);
      }
    }, { once: true });
    signal?.addEventListener("abort", () => ac.abort(), { once: true, signal: ac.signal });
    const match = tools.map(globRegExp);
    for (const t of list) {
      // The page's own tools are the page's to offer, not the catalog's.
      if (ac.signal.aborted || this.#webmcp.has(t.serverId) || !match.some((r) => r.test(t.name))) continue;
      const name = t.name;
      // What a remote server answers is not the page's word: the browser's
      // agent is told so (untrustedContentHint).
      const annotations = { readOnlyHint: t.tool?.annotations?.readOnlyHint === true, untrustedContentHint: true };
      try {
        await mc.registerTool({
          name,
          ...(t.tool?.title ? { title: t.tool.title } : {}),
          description: t.tool?.description || name,
          inputSchema: t.tool?.inputSchema ?? { type: "object" },
          annotations,
          execute: (args, client) => this.callTool(name, args ?? {}, { signal: client?.signal instanceof AbortSignal ? client.signal : undefined }),
        }, { signal: ac.signal });
      } catch (e) {
        this._event("warning", { id: t.serverId, message: `exposeToPage(): the browser refused tool ${JSON.stringify(name)}: ${e?.message ?? e}` });
        continue;
      }
      names.push(name);
      exposed.set(name, (exposed.get(name) ?? 0) + 1);
    }
    return names;
  }

  #call(op, args = {}, signal, onProgress) {
    if (this.#closed) return Promise.reject(new MCPError("closed", "this catalog is closed"));
    if (signal !== undefined && !(signal instanceof AbortSignal)) return Promise.reject(invalid("signal must be an AbortSignal"));
    return this.#mcp._invoke(op, { id: this.#id, ...args }, signal, onProgress);
  }

  #known(id) {
    if (!this.#servers.has(id)) throw invalid(`the catalog has no server "${id}"; known: ${[...this.#servers.keys()].join(", ")}`);
  }

  /** One server's status, or every server's ({id: status}) without an id. */
  status(id) {
    if (id === undefined) return JSON.parse(JSON.stringify(this.#statuses));
    this.#known(id);
    return JSON.parse(JSON.stringify(this.#statuses[id] ?? {}));
  }

  /** The Client of a server. */
  server(id) {
    this.#known(id);
    return this.#servers.get(id);
  }

  /** Adds a server ({url, ...client options, title, …}); nothing connects yet. */
  add(id, config) {
    if (this.#closed) throw new MCPError("closed", "this catalog is closed");
    if (typeof id !== "string" || id === "") throw invalid("add(): id must be a non-empty string");
    const isObject = config !== null && typeof config === "object" && !Array.isArray(config);
    if (isObject) checkFunctions(`catalog: server ${JSON.stringify(id)}`, config, CLIENT_OPTIONS);
    const sent = isObject ? clientOptionsJSON(config, { entry: true }) : config; // not an object: readEntry says so
    const problem = this.#addProblem(id, sent);
    if (problem) throw invalid(sentence(problem));
    const entry = readEntry(id, sent);
    // The policy governs remote servers; a WebMCP entry is the page's own tools.
    const refused = entry.webmcp ? null : policyRefusal(this.#policies, "server", entry.url);
    if (refused) throw new MCPError("policy", sentence(refused));
    this.#mcp._invokeSync("catalog.add", { id: this.#id, server: id, config: sent });
    this.#servers.set(id, this.#mcp._wrap(`${this.#id}/${id}`, config?.url ?? config?.serverUrl ?? "", config));
    if (entry.webmcp) this.#pageServer(id);
  }

  /** Go's refusal of add(id, sent), or null. */
  #addProblem(id, sent) {
    const entry = readEntry(id, sent);
    if (entry.problem) return entry.problem;
    const what = `catalog: server ${JSON.stringify(id)}`;
    const bad = optionsProblem(what, "client", entry.config) ?? entryRelayProblem(what, entry.config);
    if (bad) return bad;
    const full = addProblem(id, this.#servers, this.#max);
    if (full) return full;
    // mcpclient.New's header checks: Go names only the server.
    if (!entry.webmcp && clientProblem(entry.url, entry.config)) return `catalog: server ${JSON.stringify(id)}`;
    return null;
  }

  /** Removes a server; its session ends. */
  async remove(id) {
    this.#known(id);
    await this.#call("catalog.remove", { server: id });
    this.#servers.get(id)?._gone();
    this.#servers.delete(id);
    this.#webmcp.delete(id);
    delete this.#statuses[id];
  }

  /**
   * Enables a server. It is a user action: a server whose sign-in the
   * user declined is asked again at once (call it from a click: the
   * sign-in popup opens in it).
   */
  enable(id) {
    try {
      this.#known(id);
    } catch (e) {
      return Promise.reject(e);
    }
    const c = this.#servers.get(id);
    const popup = this.#statuses[id]?.state === "declined" ? c._popup() : null;
    const lw = c._login;
    const enabled = this.#call("catalog.enable", { server: id });
    if (!popup) return enabled.then(() => {});
    return enabled.then(() => this.#call("catalog.authorize", { server: id, popup })).then(() => {}, (e) => {
      c._closeAuthOf(lw);
      throw e;
    });
  }

  /** Disables a server: its tools leave the list and its session ends. */
  async disable(id) { this.#known(id); await this.#call("catalog.disable", { server: id }); }

  /** Signs in to a server: call it from a click (it opens the popup at once). */
  authorize(id, { signal } = {}) {
    let c;
    try {
      this.#known(id);
      c = this.#servers.get(id);
    } catch (e) {
      return Promise.reject(e);
    }
    const popup = c._popup();
    const lw = c._login;
    return this.#call("catalog.authorize", { server: id, popup }, signal).catch((e) => {
      c._closeAuthOf(lw);
      throw e;
    });
  }

  /** The aggregated tool list [{name, serverId, tool}]; connects the enabled servers. */
  tools({ signal } = {}) { return this.#call("catalog.tools", {}, signal); }

  /** The tool list in a provider's format: "openai", "openai-responses", "anthropic" or "gemini". */
  toolsFor(format, { signal, used } = {}) { return this.#call("catalog.toolsFor", { format, used }, signal); }

  /** Calls a tool by its exported name; every outcome but an abort resolves (an honest isError result). */
  callTool(name, args = {}, { signal, onProgress, timeoutMs } = {}) {
    if (onProgress !== undefined && typeof onProgress !== "function") return Promise.reject(invalid("callTool(): onProgress must be a function"));
    const problem = callProblem({ timeoutMs });
    if (problem) return Promise.reject(invalid(problem));
    const progress = onProgress && ((p) => {
      try { onProgress(JSON.parse(p)); } catch (e) { console.error("mcp: onProgress threw", e); }
    });
    return this.#call("catalog.callTool", { name, arguments: args, timeoutMs }, signal, progress);
  }

  /** A model's tool calls in (the format's shapes), its tool-result messages out, in call order. */
  handleToolCalls(calls, { format = "openai", signal } = {}) {
    return this.#call("catalog.handleToolCalls", { format, calls }, signal);
  }

  /** An agent over this catalog: cat.agent({model, system, maxSteps, authWaitMs}). */
  agent(options = {}) {
    checkFunctions("agent()", options, AGENT_OPTIONS);
    const model = options.model;
    let spec = model;
    if (typeof model === "function") spec = { kind: "custom" };
    const given = { ...options, model: spec };
    // compact.summarize: "model", or the page's function (Go calls host.summarize).
    const summarize = options.compact?.summarize;
    if (summarize === "page") throw invalid(sentence(`agent(): compact.summarize must be "model" or an async function (messages) => summary`));
    if (typeof summarize === "function") given.compact = { ...options.compact, summarize: "page" };
    const sent = JSON.parse(JSON.stringify(given, functionsAs(AGENT_OPTIONS)));
    const problem = optionsProblem("agent()", "agent", sent);
    if (problem) throw invalid(sentence(problem));
    const id = this.#mcp._newId();
    this.#mcp._invokeSync("agent.new", { id, catalog: this.#id, options: sent });
    const a = new Agent(this.#mcp, id, typeof model === "function" ? model : null, typeof summarize === "function" ? summarize : null, this);
    this.#agents.add(a);
    return a;
  }

  /** Closes every server. */
  async close() {
    if (this.#closed) return;
    for (const a of this.#agents) a.close();
    for (const ac of [...this.#exposures]) ac.abort();
    if (this.#toolchange) modelContext()?.removeEventListener("toolchange", this.#toolchange);
    this.#toolchange = null;
    await this.#call("catalog.close");
    this.#closed = true;
    for (const c of this.#servers.values()) c._gone();
    this.#mcp._target(`catalog:${this.#id}`, null);
  }

  /** The tools of server id its views may call (apps/host.js's tools/list). */
  _viewTools(id, signal) { return this.#call("catalog.viewTools", { server: id }, signal); }

  /**
   * Calls a tool of server id for one of its views (apps/host.js's
   * tools/call): Go checks that views may call it and asks approve() with
   * via "app" under the approval policy; every outcome but an abort
   * resolves.
   */
  _viewCall(id, name, args, signal) { return this.#call("catalog.viewCall", { server: id, name, arguments: args }, signal); }

  /** A view of one of the catalog's servers set its model context (null: the view closed). */
  _viewContext(view, ctx) {
    if (ctx) this.#views.set(view, ctx);
    else this.#views.delete(view);
  }

  /** The views' model contexts not yet sent to a model, handed over once. */
  _takeViewContexts() {
    const views = [...this.#views];
    this.#views.clear();
    return views;
  }

  /** Go's answer to catalog.new: the statuses it knows. */
  _created(r) {
    for (const [id, st] of Object.entries(r.statuses ?? {})) this.#statuses[id] ??= st;
  }

  // host.approve: true, false, "always" (this tool, for the rest of the
  // agent's conversation, or of the catalog's life without an agent) or
  // "server" (every tool of the server, same scope). Anything else
  // refuses the call, with a warning for a string that is none of them.
  async _approve(req) {
    if (typeof this.#approve !== "function") return true;
    const answer = await this.#approve(req);
    if (answer === true || answer === "always" || answer === "server") return answer;
    if (typeof answer === "string") console.warn(`mcp: catalog: approve() answered ${JSON.stringify(answer)}, which refuses the call; answer true, false, "always" or "server"`);
    return false;
  }

  // host.catalogElicit: a server asks the user; context is {serverId, elicitationId}.
  async _elicit(request, context) {
    const fn = this.#onElicitation;
    if (typeof fn !== "function") throw new MCPError("protocol", "this catalog has no onElicitation handler");
    const result = await fn(request, context);
    if (result === null || typeof result !== "object" || Array.isArray(result)) throw invalid("onElicitation must resolve to an object {action, content?}");
    return JSON.stringify(result);
  }

  // host.event
  _event(type, detail) {
    if (type === "statuschange") this.#statuses[detail.id] = detail.status;
    if (type === "warning") console.warn(`mcp: catalog: ${detail.id}: ${detail.message}`);
    this.dispatchEvent(new CustomEvent(type, { detail: detail ?? {} }));
  }
}

/** An agent: runs turns of a model over a catalog's tools. */
class Agent {
  #mcp;
  #id;
  #model;
  #catalog;
  constructor(mcp, id, model, summarize, catalog) {
    this.#catalog = catalog;
    this.#mcp = mcp;
    this.#id = id;
    this.#model = model;
    if (summarize) {
      mcp._target(`agent:${id}`, {
        _summarize: async ({ previous, messages }) => {
          const summary = await summarize(messages, { previous });
          if (typeof summary !== "string") throw invalid("compact.summarize must resolve to a string (the summary)");
          return summary;
        },
      });
    }
  }

  /**
   * Runs one turn. input: a string (the user's message) or a list of
   * messages in the OpenAI Chat Completions shapes. Returns {done}, a
   * Promise of {messages, text, steps, finishReason}; onEvent hears text,
   * toolcall, toolresult, authrequired, approval, elicitation, step, done and error.
   */
  run(input, options = {}) {
    return this._run(input, options, undefined);
  }

  // The model contexts of the catalog's views go to the model once, with
  // the next user message of any of its agents, as a user message before
  // it (the last context of each view).
  #withViewContext(input) {
    if (typeof input !== "string" && !Array.isArray(input)) return input;
    const views = this.#catalog._takeViewContexts();
    const parts = [];
    for (const [view, ctx] of views) {
      const lines = (ctx.content ?? []).filter((c) => c?.type === "text" && typeof c.text === "string").map((c) => c.text);
      if (ctx.structuredContent !== undefined) lines.push(JSON.stringify(ctx.structuredContent));
      // As JSON strings: a view's text cannot pass for the end of the block.
      if (lines.length) parts.push(`From the view of ${view.serverId ? `${view.serverId}'s ` : ""}tool ${JSON.stringify(view.tool)}: ${JSON.stringify(lines)}`);
    }
    if (!parts.length) return input;
    const context = { role: "user", content: `[Context the app's views in the page set for you; the user did not write it]\n${parts.join("\n")}\n[End of the views' context]` };
    if (typeof input === "string") return [context, { role: "user", content: input }];
    return input.length ? [...input.slice(0, -1), context, input[input.length - 1]] : [context];
  }

  _run(input, { signal, onEvent } = {}, conversation) {
    if (onEvent !== undefined && typeof onEvent !== "function") throw invalid("run(): onEvent must be a function");
    if (signal !== undefined && !(signal instanceof AbortSignal)) throw invalid("run(): signal must be an AbortSignal");
    input = this.#withViewContext(input);
    const run = this.#mcp._newId();
    const model = this.#model;
    this.#mcp._target(`run:${run}`, {
      _model: async (req) => {
        if (!model) throw new MCPError("protocol", "this agent has no model function");
        const msg = await model({ ...req, signal });
        if (msg === null || typeof msg !== "object") throw invalid("the model function must resolve to an assistant message");
        return JSON.stringify(msg);
      },
    });
    const events = onEvent && ((json) => {
      try { onEvent(JSON.parse(json)); } catch (e) { console.error("mcp: onEvent threw", e); }
    });
    const done = this.#mcp._invoke("agent.run", { id: this.#id, run, input, conversation }, signal, events)
      .finally(() => this.#mcp._target(`run:${run}`, null));
    return { done };
  }

  /**
   * The stored conversation id (a new, empty one when none is stored):
   * kept in IndexedDB, sealed like the sign-ins, shared by the origin's tabs.
   */
  async conversation(id) {
    checkConversationId(id);
    return new Conversation(this, this.#mcp, this.#id, await this.#mcp._invoke("agent.conversation", { id: this.#id, conversation: id }));
  }

  /** The stored conversations, the most recently updated first: [{id, title, messages, revision, createdAt, updatedAt}]. */
  conversations() {
    return this.#mcp._invoke("agent.conversations", { id: this.#id });
  }

  /** Forgets the agent. */
  close() {
    try { this.#mcp._invokeSync("agent.close", { id: this.#id }); } catch { /* already gone */ }
    this.#mcp._target(`agent:${this.#id}`, null);
  }
}

function checkConversationId(id) {
  if (typeof id !== "string" || id === "") throw invalid("conversation(): id must be a non-empty string");
}

/**
 * A stored conversation of an agent. Its fields are as last loaded or
 * saved: id, title, summary, messages, revision, compactedTurns,
 * createdAt, updatedAt.
 */
class Conversation {
  #agent;
  #mcp;
  #agentId;
  constructor(agent, mcp, agentId, c) {
    this.#agent = agent;
    this.#mcp = mcp;
    this.#agentId = agentId;
    this._set(c);
  }

  _set(c) {
    this.id = c.id;
    this.title = c.title ?? "";
    this.summary = c.summary ?? "";
    this.messages = c.messages ?? [];
    this.revision = c.revision ?? 0;
    this.compactedTurns = c.compactedTurns ?? 0;
    this.createdAt = c.createdAt;
    this.updatedAt = c.updatedAt;
  }

  /**
   * Runs a turn of this conversation: the stored messages (and summary)
   * come first, input is appended, and every step is saved. Returns
   * {done}, a Promise of the run's result, whose messages are the
   * conversation's; this object is updated when it settles.
   */
  run(input, options = {}) {
    const { done } = this.#agent._run(input, options, this.id);
    return {
      done: done.then((r) => {
        if (r?.conversation) this._set(r.conversation);
        return r;
      }, async (e) => {
        await this.reload().catch(() => {});
        throw e;
      }),
    };
  }

  /** Reads the stored conversation again (another tab may have added to it). */
  async reload() {
    this._set(await this.#mcp._invoke("agent.conversation", { id: this.#agentId, conversation: this.id }));
    return this;
  }

  /** Sets the title (and stores the conversation if it was new). */
  async rename(title) {
    if (typeof title !== "string") throw invalid("rename(): title must be a string");
    this._set(await this.#mcp._invoke("agent.renameConversation", { id: this.#agentId, conversation: this.id, title }));
    return this;
  }

  /** Deletes the stored conversation; this object is left empty. */
  async delete() {
    await this.#mcp._invoke("agent.deleteConversation", { id: this.#agentId, conversation: this.id });
    this._set({ id: this.id });
  }
}
