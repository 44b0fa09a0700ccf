// catalog.js — many MCP servers behind one tool list (mcp.catalog()); its
// agents (agent.js) run a model's turns over it, webmcp.js joins it to the
// page's WebMCP.
import { AGENT_OPTIONS, CLIENT_OPTIONS, target } from "./jsapi.js";
import { MCPError, invalid } from "./errors.js";
import { checkFunctions, clientOptionsJSON, functionsAs } from "./options.js";
import { addProblem, callProblem, clientProblem, entryRelayProblem, optionsProblem, policyRefusal, readEntry, sentence } from "./rules.js";
import { Agent } from "./agent.js";
import { CatalogWebMCP } from "./webmcp.js";

/**
 * Many MCP servers behind one tool list. Events: statuschange {id, status},
 * toolschanged {ids}, authrequired {id, declined?}, warning {id, message},
 * elicitationcomplete {id, elicitationId}, taskresult {id, taskId, tool, result?, error?}.
 */
export class Catalog extends EventTarget {
  #mcp;
  #id;
  #statuses;
  #servers = new Map(); // server id → Client
  #approve;
  #views = new Map(); // AppView → the model context it set since an agent's last turn
  #viewServers = new Map(); // server id → the AppView whose own tools it is (render()'s offerTools)
  #viewCount = 0;
  #onElicitation;
  #closed = false;
  #agents = new Set();
  #webmcp = new CatalogWebMCP(this, {
    closed: () => this.#closed,
    warn: (id, message) => this._event("warning", { id, message }),
    changed: () => {
      try {
        this.#mcp._invokeSync("catalog.webmcpChanged", { id: this.#id });
      } catch (e) {
        // The runtime ended or the catalog closed meanwhile: nothing to list.
        if (e?.code !== "closed") console.warn("mcp: catalog: the page's WebMCP tools changed and could not be listed again:", e);
      }
    },
  });
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
        const w = this.#webmcp.add(s);
        if (w) all.push(w);
      }
    }
    this.warnings = Object.freeze(all);
  }

  // host.webmcpTools and host.webmcpCall: the page's WebMCP tools, as the
  // webmcp servers' list, and a call of one of them.
  _webmcpTools() { return this.#webmcp.tools(); }
  _webmcpCall(name, args) { return this.#webmcp.call(name, args); }

  /**
   * Offers the catalog's tools whose exported names match one of tools
   * (glob patterns with * and ?) to the browser's own agent: each is
   * registered with document.modelContext.registerTool, and a call runs
   * through callTool (allow/deny, schema check, approve, honest results).
   * They are removed when signal aborts or the catalog closes. Resolves
   * the names registered; without WebMCP, [] and a warning event.
   */
  exposeToPage(options) { return this.#webmcp.expose(options); }

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
    if (!this.#viewServers.has(id)) this.#known(id);
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
    if (entry.webmcp) this.#webmcp.add(id);
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
    const a = new Agent(this.#mcp, id, typeof model === "function" ? model : null, typeof summarize === "function" ? summarize : null, () => this.#takeViewContexts());
    this.#agents.add(a);
    return a;
  }

  /** Closes every server. */
  async close() {
    if (this.#closed) return;
    for (const a of this.#agents) a.close();
    this.#webmcp.close();
    await this.#call("catalog.close");
    this.#closed = true;
    for (const c of this.#servers.values()) c._gone();
    this.#mcp._target(target("catalog", this.#id), null);
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

  /**
   * apps/host.js: offers a ready view's own tools to the catalog's model
   * as server "<serverId>-view-<n>" (render()'s offerTools); returns its id.
   */
  _offerView(view) {
    if (this.#closed) throw new MCPError("closed", "this catalog is closed");
    const id = `${view.serverId}-view-${++this.#viewCount}`;
    this.#viewServers.set(id, view);
    try {
      this.#mcp._invokeSync("catalog.addView", { id: this.#id, server: id, title: `The view of ${view.tool}` });
    } catch (e) {
      this.#viewServers.delete(id);
      throw e;
    }
    return id;
  }

  /** The own tools of the view behind server id changed: the catalog lists them again. */
  _viewChanged(id) {
    if (this.#closed || !this.#viewServers.has(id)) return;
    try {
      this.#mcp._invokeSync("catalog.viewChanged", { id: this.#id, server: id });
    } catch (e) {
      if (e?.code !== "closed") console.warn(`mcp: catalog: the tools of the view behind ${id} changed and could not be listed again:`, e);
    }
  }

  /** The view behind server id ended: its tools leave the catalog. */
  _withdrawView(id) {
    if (!this.#viewServers.delete(id) || this.#closed) return;
    this.#call("catalog.remove", { server: id }).then(() => { delete this.#statuses[id]; }, (e) => {
      if (e?.code !== "closed") console.warn(`mcp: catalog: the tools of the view behind ${id} could not be withdrawn:`, e);
    });
  }

  #viewOf(id) {
    const view = this.#viewServers.get(id);
    if (!view) throw new MCPError("closed", `the view behind the catalog's server ${JSON.stringify(id)} is gone`);
    return view;
  }

  // host.viewTools: the view's own tools, as its server's list.
  async _viewServerTools(id) {
    const tools = await this.#viewOf(id).listTools();
    return JSON.stringify(tools.map((t) => ({ name: t.name, title: t.title, description: t.description ?? "", inputSchema: t.inputSchema, annotations: t.annotations })));
  }

  // host.viewCall: {result} (the view's result as JSON) or {error}: an
  // error answer, a timeout or the view's end is the tool's failure,
  // which the model reads.
  async _viewServerCall(id, name, args) {
    try {
      return JSON.stringify({ result: JSON.stringify(await this.#viewOf(id).callTool(name, args)) });
    } catch (e) {
      return JSON.stringify({ error: String(e?.message ?? e) });
    }
  }

  /** A view of one of the catalog's servers set its model context (null: the view closed). */
  _viewContext(view, ctx) {
    if (ctx) this.#views.set(view, ctx);
    else this.#views.delete(view);
  }

  /** The views' model contexts not yet sent to a model, handed over once (to an agent's next turn). */
  #takeViewContexts() {
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

