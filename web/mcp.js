// mcp.js — the entry of the mcpwasm MCP client (see docs/JSAPI.md):
// load() and the object it resolves, a factory of clients and catalogs.
//
//   import { load, MCPError } from "./mcp.js";
//   const mcp = await load();
//   const client = mcp.client("https://mcp.example.com/mcp");
//   await client.connect();
//
// The work happens in Go compiled to WebAssembly (mcp.wasm beside this file):
// it exports one function, invoke(op, argsJSON, signal, onProgress), for the
// operations listed in jsapi.js, and calls back into the page through the
// host object of the same table (host.js); with load({ runtime }) the
// module runs in a SharedWorker or Worker instead (worker.js) and the same
// table crosses a MessagePort (remote.js); start.js chooses. The page keeps
// what only a page can do: the login window (opened in the user's gesture),
// relaying sign-in results and grant changes between tabs, the page's
// handlers, and DOM events. Every rejection is an MCPError. Options are
// checked by rules.js from Go's tables before anything is sent, so that the
// factories throw at once in every runtime; Go checks them again from the
// same tables.
import { CLIENT_OPTIONS, CATALOG_OPTIONS, OPS, POLICY_OWNERS, target } from "./jsapi.js";
import { CallbackReceiver, CALLBACK_KEY } from "./auth.js";
import { invokeJSON, listenGrants } from "./boot.js";
import { clientProblem, policyProblem, policyRefusal, readEntry, sentence } from "./rules.js";
import { MCPError, asMCPError, errorOf, invalid } from "./errors.js";
import { catalogProblems, catalogRelay, checkFunctions, clientOptionsJSON, functionsAs, withDefaults } from "./options.js";
import { Client } from "./client.js";
import { Catalog } from "./catalog.js";
import { clearHints } from "./host.js";
import { models } from "./models.js";
import { unhandledReturn } from "./redirect.js";
import { compileEarly, start } from "./start.js";
import { skewClockForTest } from "./testhooks.js";

export { MCPError, models };

let instance = null; // Promise<MCP>
// The host policy (mcp.policy()): page-wide, set once before any client or
// catalog exists. It travels with each client.new and catalog.new, so that
// Go applies it per client in every runtime (a SharedWorker serves tabs
// with different policies).
let pagePolicy = null; // the options, frozen
let madeAny = false; // a client or catalog exists: too late for policy()

/**
 * Starts loading at once, for a page that calls it as it imports mcp.js
 * (before its own start-up work): in a worker runtime load(options) starts
 * now (the worker fetches and compiles mcp.wasm off the main thread); on the
 * main thread mcp.wasm is fetched and compiled now and started by load().
 * A later load() joins the started work (one download). Never throws or
 * rejects: load() reports what went wrong.
 */
export function preload(options = {}) {
  if (instance) return;
  if (!compileEarly(options)) load(options).catch(() => {});
}

/**
 * Streams, instantiates and starts the wasm module; resolves when the API is
 * ready. Calling it again returns the same instance (a failed load may be
 * retried).
 */
export function load(options = {}) {
  if (!instance) {
    instance = start(options, (...parts) => new MCP(...parts)).catch((e) => {
      instance = null;
      throw asMCPError(e, "network");
    });
  }
  return instance;
}

/** The loaded module: a factory of clients, one per MCP server. */
class MCP {
  #api;
  #go;
  #host;
  #receiver;
  #exit = null; // MCPError once the Go runtime has ended
  #pending = new Set(); // reject functions of calls in flight
  #trace;
  constructor(api, go, wasmURL, host, trace, version) {
    this.#trace = trace;
    this.#api = api;
    this.#go = go;
    this.#host = host;
    /** The module's version string. */
    this.version = version;
    /** Where the Go runtime runs: "shared-worker", "worker" or "main". */
    Object.defineProperty(this, "runtime", { value: api.remote ? api.mode : "main", enumerable: true });
    Object.defineProperty(this, "wasmURL", { value: wasmURL.href });
    // The browser's online and offline events reach every client: offline
    // moves a connected one to "reconnecting" at once, online makes a
    // reconnecting one try now (docs/JSAPI.md, "State and events").
    if (typeof addEventListener === "function") {
      for (const online of [true, false]) {
        addEventListener(online ? "online" : "offline", () => {
          if (!this.#exit) this._invoke("network.changed", { online }).catch(() => {});
        });
      }
    }
    // Other tabs' grant changes: Go applies them to this page's clients (a
    // worker runtime hears them itself).
    if (!api.remote) host.grants = listenGrants((change) => this._invoke("grants.apply", change).catch(() => {}));
    if (typeof window !== "undefined") {
      this.#receiver = new CallbackReceiver(async (url) => {
        const r = await this.#deliver(url);
        if (!r.taken) throw new Error(r.error?.message ?? "no sign-in of this page waits for that state");
      });
    }
  }

  #deliver(url) {
    return this._invoke("callback.deliver", { url });
  }

  /**
   * Delivers an OAuth redirect URL (a full-page redirect return, a pasted
   * URL) to the sign-in waiting on its state. Without an argument it takes
   * the result that oauth/callback.html saved when it sent the page back
   * here. Resolves true when a sign-in took it and succeeded, false when no
   * sign-in waits on its state (unknown, expired, replayed); rejects with
   * the sign-in's MCPError when it took it and failed (e.g. "declined").
   */
  async handleCallback(url) {
    if (url === undefined) {
      url = sessionStorage.getItem(CALLBACK_KEY) ?? undefined;
      if (url === undefined) {
        unhandledReturn();
        return false;
      }
      sessionStorage.removeItem(CALLBACK_KEY);
    }
    if (typeof url !== "string" && !(url instanceof URL)) throw invalid("handleCallback(): url must be a string or URL");
    const r = await this.#deliver(String(url));
    if (r.taken && r.error) throw errorOf(r.error); // taken, and it failed (declined, token_failed, …)
    return r.taken;
  }

  /** Removes every stored grant, client registration and cached metadata of this origin. */
  async clearStorage() {
    clearHints();
    await this._invoke("storage.clear", {});
  }

  /**
   * Where sign-ins (storage "indexeddb") are kept: { persistent: true } in
   * IndexedDB; else { persistent: false, error } with the MCPError (code
   * "storage") that says why they live in memory until the tab closes.
   */
  async storageStatus() {
    const r = await this._invoke("storage.status", {});
    return r.error ? { persistent: false, error: errorOf(r.error) } : { persistent: true };
  }

  /**
   * A worker runtime ended: every client fails; the next call starts a new
   * runtime, where a client's next connect() or authorize() makes it again.
   */
  _ended(err) {
    for (const c of this.#host.targets.values()) c._fail?.(err, true);
  }

  /** For tests: an id of the worker runtime serving this page (undefined on the main thread). */
  get _runtimeId() { return this.#api.runtimeId; }

  /** A test hook: a worker runtime ends as a crash would. */
  _crashForTest() {
    this.#api.crashForTest?.();
  }

  /** A test hook: the worker ends without a word, as when the browser kills it. */
  _killWorkerForTest() {
    this.#api.killForTest?.();
  }

  /**
   * A test hook: the wall clock of this page and of its runtime moves ms
   * ahead, its monotonic clock does not (a computer that slept; boot.js).
   */
  _skewClockForTest(ms) {
    skewClockForTest(ms);
    this.#api.skewClockForTest?.(ms);
  }

  /** The Go runtime ended: fail every client and pending call. */
  _exited(err) {
    this.#exit = err;
    for (const reject of this.#pending) reject(err);
    this.#pending.clear();
    for (const c of this.#host.targets.values()) c._fail?.(err);
  }

  /**
   * Calls operation op of the wasm module with args (JSON-able) and settles
   * like its result (parsed), or rejects with an MCPError when the Go
   * runtime is gone or ends first.
   */
  _invoke(op, args, signal, onProgress) {
    if (!(op in OPS)) return Promise.reject(new MCPError("protocol", `mcp.js: unknown operation ${op}`));
    if (this.#exit) return Promise.reject(this.#exit);
    this.#trace?.("js→go", op);
    if (this.#api.remote) return this.#api.invoke(op, args, signal, onProgress);
    let p;
    try {
      p = invokeJSON(this.#api, op, args, { signal, onProgress });
    } catch (e) {
      return Promise.reject(asMCPError(e, "closed")); // the runtime is gone
    }
    return new Promise((resolve, reject) => {
      this.#pending.add(reject);
      p.then(resolve, reject).finally(() => this.#pending.delete(reject));
    });
  }

  /** A new id for an object of the page: the page chooses ids in every runtime. */
  _newId() {
    return String(++this.#host.lastId);
  }

  /**
   * An operation that answers at once (OPS[op] is true): on the main thread
   * its result, or its MCPError thrown; settled(result) hears the result.
   * In a worker runtime the page does not wait: the options were checked
   * already (rules.js), the ids are the page's, and settled hears the
   * answer when it comes.
   */
  _invokeSync(op, args, settled) {
    this.#trace?.("js→go", op);
    if (this.#api.remote) {
      this.#api.invoke(op, args).then(settled, (e) => console.error(`mcp: ${op}: ${e.message}`));
      return;
    }
    if (this.#exit || this.#go.exited) throw this.#exit ?? new MCPError("closed", "the Go runtime exited; reload the page");
    const r = invokeJSON(this.#api, op, args, { sync: true });
    settled?.(r);
  }

  /**
   * Sets the page's host policy (see docs/JSAPI.md, "Host policy"):
   * {servers, issuers, allowHttpLoopback}. Once, before any client or
   * catalog exists; it cannot change afterwards.
   */
  policy(options) {
    if (pagePolicy) throw invalid("policy(): the page's policy is set already and cannot change; set it once, when the page starts");
    if (madeAny) throw invalid("policy(): a client or catalog exists already; set the policy before mcp.client() or mcp.catalog(), so that it covers every server");
    const sent = options !== null && typeof options === "object" && !Array.isArray(options) ? JSON.parse(JSON.stringify(options)) : options;
    const problem = policyProblem("policy()", sent);
    if (problem) throw invalid(sentence(problem));
    pagePolicy = Object.freeze({ ...sent, servers: sent.servers && Object.freeze([...sent.servers]), issuers: sent.issuers && Object.freeze([...sent.issuers]) });
  }

  /** The page's policy as set by policy() (frozen), or null. */
  get currentPolicy() { return pagePolicy; }

  /** Creates a client for the MCP server at url. Throws MCPError invalid_argument on bad input, policy when the page's policy does not list it. */
  client(url, options = {}) {
    if (typeof url !== "string" && !(url instanceof URL)) throw invalid("client(): url must be a string or URL");
    checkFunctions("client()", options, CLIENT_OPTIONS);
    const sent = clientOptionsJSON(options);
    const problem = clientProblem(String(url), sent);
    if (problem) throw invalid(problem);
    const refused = policyRefusal([pagePolicy && { options: pagePolicy, owner: POLICY_OWNERS.page }], "server", String(url));
    if (refused) throw new MCPError("policy", sentence(refused));
    madeAny = true;
    const id = this._newId();
    const args = { id, url: String(url), options: sent, ...(pagePolicy && { policy: pagePolicy }) };
    this._invokeSync("client.new", args);
    const c = this._wrap(id, String(url), options);
    // A worker runtime that ended took the client with it: its next
    // connect() makes it again in the new one (the grant is in storage).
    c._remake = () => this._invokeSync("client.new", args);
    return c;
  }

  /** The page's object for client id (of a client or a catalog's server). */
  _wrap(id, url, options) {
    const c = new Client(this, id, url, options, this.#receiver);
    this.#host.targets.set(target("client", id), c);
    c._forget = () => this.#host.targets.delete(target("client", id));
    return c;
  }

  _target(name, obj) {
    if (obj) this.#host.targets.set(name, obj);
    else this.#host.targets.delete(name);
  }

  /**
   * Many MCP servers behind one tool list (see docs/JSAPI.md, "Catalog").
   * config: { servers: {id: {url, ...client options, title, description,
   * enabled, allowTools, denyTools}} } or { mcpServers: {...} }, with
   * maxServers, maxToolsPerServer, callTimeoutMs, taskWaitMs, breaker, approve,
   * serverTools, skills, onElicitation, toolBudget. Nothing connects until a call needs a server.
   */
  catalog(config = {}) {
    checkFunctions("catalog()", config, CATALOG_OPTIONS);
    const key = config.servers === undefined && config.mcpServers !== undefined ? "mcpServers" : "servers";
    const sent = { ...config };
    let servers = {};
    if (config[key] !== null && typeof config[key] === "object" && !Array.isArray(config[key])) {
      servers = config[key];
      const wire = {};
      for (const [id, sc] of Object.entries(servers)) {
        if (sc !== null && typeof sc === "object" && !Array.isArray(sc)) {
          checkFunctions(`catalog: server ${JSON.stringify(id)}`, sc, CLIENT_OPTIONS);
          wire[id] = "command" in sc ? sc : withDefaults(sc, { entry: true });
        } else {
          wire[id] = sc;
        }
      }
      sent[key] = wire;
    }
    Object.assign(sent, catalogRelay(config));
    // One encoding for the whole configuration: a function option, of the
    // catalog or of a server, is sent as true.
    const options = JSON.parse(JSON.stringify(sent, functionsAs({ ...CLIENT_OPTIONS, ...CATALOG_OPTIONS })));
    catalogProblems(options); // throws Go's error for bad options
    const own = policyProblem("catalog()", options.policy, "policy.");
    if (own) throw invalid(sentence(own));
    // The page's policy, then the catalog's: a server must pass both. An
    // entry either refuses is left out with a warning, as Go does, in
    // the order of the ids.
    const policies = [pagePolicy && { options: pagePolicy, owner: POLICY_OWNERS.page }, options.policy && { options: options.policy, owner: POLICY_OWNERS.catalog }];
    const warnings = [];
    const allowed = {};
    const wire = options[key] !== null && typeof options[key] === "object" ? options[key] : {};
    for (const sid of Object.keys(wire).sort()) {
      const entry = readEntry(sid, wire[sid]);
      // The policy governs remote servers; a WebMCP entry is the page's own tools.
      const refused = entry.problem || entry.webmcp ? null : policyRefusal(policies, "server", entry.url);
      if (entry.problem) warnings.push(entry.problem);
      else if (refused) warnings.push(`server ${JSON.stringify(sid)}: ${refused}`);
      else allowed[sid] = servers[sid];
    }
    madeAny = true;
    const id = this._newId();
    let created = null; // Go's answer, at once on the main thread
    let cat = null;
    this._invokeSync("catalog.new", { id, options, ...(pagePolicy && { policy: pagePolicy }) }, (r) => {
      created = r;
      cat?._created(r);
    });
    cat = new Catalog(this, id, allowed, warnings, config.approve, config.maxServers, config.onElicitation, policies);
    if (created) cat._created(created);
    this.#host.targets.set(target("catalog", id), cat);
    for (const w of cat.warnings) console.warn(`mcp: catalog(): ${w}`);
    return cat;
  }

  /** Model descriptions for cat.agent({model}); a custom model is an async function. */
  models = models;

  /**
   * MCP Apps: servers' interactive views (see docs/JSAPI.md, "MCP Apps").
   * render(element, options) resolves an AppView; apps/host.js is fetched
   * on the first render only.
   */
  apps = Object.freeze({
    render: async (element, options) => (await import("./apps/host.js")).render(this.version, element, options, this.#viewStates),
    /** Deletes what views kept under stateKeys that start with prefix ("" for all); resolves how many. */
    forgetState: (prefix = "") => {
      if (typeof prefix !== "string") return Promise.reject(invalid("apps.forgetState(): prefix must be a string"));
      return this._invoke("views.forget", { prefix });
    },
  });

  // Where render()'s stateKey keeps a view's storage: sealed in IndexedDB
  // by the runtime, as conversations are.
  #viewStates = Object.freeze({
    read: (key) => this._invoke("views.state", { key }),
    keep: (key, storage) => this._invoke("views.keep", { key, storage }),
  });
}
