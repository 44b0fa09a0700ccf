// mcp.js — loader and JavaScript API of the mcpwasm MCP client (see
// docs/JSAPI.md).
//
//   import { load, MCPError } from "./mcp.js";
//   const mcp = await load();
//   const client = mcp.client("https://mcp.example.com/mcp");
//   await client.connect();
//
// The work happens in Go compiled to WebAssembly (mcp.wasm beside this file):
// it exports one function, invoke(op, argsJSON, signal, onProgress), for the
// operations listed in jsapi.js, and calls back into this module through the
// host object of the same table; with load({ runtime }) the module runs in
// a SharedWorker or Worker instead (worker.js) and the same table crosses a
// MessagePort (remote.js). This module keeps what only a page can do:
// the login window (opened in the user's gesture), relaying sign-in results
// and grant changes between tabs, the page's handlers, and DOM events. Every
// rejection is an MCPError. Options are checked by rules.js from Go's
// tables before anything is sent, so that the factories throw at once in
// every runtime; Go checks them again from the same tables.
import { CLIENT_OPTIONS, CATALOG_OPTIONS, OPS, HOSTS, POLICY_OWNERS } from "./jsapi.js";
import { CallbackReceiver, acquireLock, RETURN_KEY, CALLBACK_KEY } from "./auth.js";
import { Remote, Refused } from "./remote.js";
import { instantiate, invokeJSON, listenGrants, newGo, run, skewClockForTest } from "./boot.js";
import { clientProblem, policyProblem, policyRefusal, readEntry, sentence } from "./rules.js";
import { MCPError, asMCPError, errorOf, goError, invalid } from "./errors.js";
import { catalogProblems, catalogRelay, checkFunctions, clientOptionsJSON, functionsAs, setPageRelay, withDefaults } from "./options.js";
import { Client } from "./client.js";
import { Catalog } from "./catalog.js";
// This build's module under its content-hashed name, written by make build
// (docs/JSAPI.md, "The module's URL and its caching").
import { wasmURL as builtWasmURL } from "./wasmurl.js";

export { MCPError };

/**
 * Model descriptions for cat.agent({model}), also mcp.models: plain data,
 * so a page may make one before load() (as the React hooks' users do).
 */
export const models = Object.freeze({
  /** Any OpenAI-compatible Chat Completions endpoint (OpenAI, Ollama, vLLM, LM Studio, llama.cpp, OpenRouter). */
  openai: ({ baseURL, apiKey, model, headers } = {}) => Object.freeze({ kind: "openai", baseURL, apiKey, model, headers }),
  /** The Anthropic Messages API. */
  anthropic: ({ baseURL, apiKey, model, headers, maxTokens, thinkingBudget } = {}) => Object.freeze({ kind: "anthropic", baseURL, apiKey, model, headers, maxTokens, thinkingBudget }),
  /** The OpenAI Responses API (POST /v1/responses). */
  openaiResponses: ({ baseURL, apiKey, model, headers, reasoningEffort, reasoningSummary } = {}) => Object.freeze({ kind: "openai-responses", baseURL, apiKey, model, headers, reasoningEffort, reasoningSummary }),
  /** The Google Gemini API (streamGenerateContent). */
  gemini: ({ baseURL, apiKey, model, headers, includeThoughts } = {}) => Object.freeze({ kind: "gemini", baseURL, apiKey, model, headers, includeThoughts }),
});

let instance = null; // Promise<MCP>
// The host policy (mcp.policy()): page-wide, set once before any client or
// catalog exists. It travels with each client.new and catalog.new, so that
// Go applies it per client in every runtime (a SharedWorker serves tabs
// with different policies).
let pagePolicy = null; // the options, frozen
let madeAny = false; // a client or catalog exists: too late for policy()
let early = null; // preload() on the main thread: {href, module: Promise<WebAssembly.Module | null>}

/**
 * Starts loading at once, for a page that calls it as it imports mcp.js
 * (before its own start-up work): in a worker runtime load(options) starts
 * now (the worker fetches and compiles mcp.wasm off the main thread); on the
 * main thread mcp.wasm is fetched and compiled now and started by load().
 * A later load() joins the started work (one download). Never throws or
 * rejects: load() reports what went wrong.
 */
export function preload(options = {}) {
  if (instance || early) return;
  const runtime = options?.runtime ?? globalThis.__mcpwasmRuntime ?? "auto";
  if (runtime !== "main" || typeof options?.onProgress === "function") {
    // A worker runtime (or the main thread if the browser refuses workers),
    // or progress to report: the whole load starts now.
    load(options).catch(() => {});
    return;
  }
  let url;
  try {
    url = options.wasmURL === undefined ? builtWasmURL : new URL(options.wasmURL, import.meta.url);
  } catch {
    return; // load() says what is wrong
  }
  early = {
    href: url.href,
    module: fetch(url).then((r) => {
      if (!r.ok) return null; // load() fetches again and reports the status
      const type = (r.headers.get("Content-Type") || "").split(";")[0].trim();
      return type === "application/wasm" && WebAssembly.compileStreaming ? WebAssembly.compileStreaming(r) : r.arrayBuffer().then((b) => WebAssembly.compile(b));
    }).catch(() => null),
  };
}

/**
 * Streams, instantiates and starts the wasm module; resolves when the API is
 * ready. Calling it again returns the same instance (a failed load may be
 * retried).
 */
export function load(options = {}) {
  if (!instance) {
    instance = start(options).catch((e) => {
      instance = null;
      throw asMCPError(e, "network");
    });
  }
  return instance;
}

/** The values of load()'s runtime option. */
const RUNTIMES = ["auto", "shared-worker", "worker", "main"];

// A test hook: globalThis.__mcpwasmRuntime, when set, is the default of
// load()'s runtime option (the e2e suite runs in every mode this way).
async function start({ wasmURL, onProgress, runtime = globalThis.__mcpwasmRuntime ?? "auto", relay, relayMode } = {}) {
  if (onProgress !== undefined && typeof onProgress !== "function") {
    throw invalid("load(): onProgress must be a function");
  }
  if (!RUNTIMES.includes(runtime)) throw invalid(`load(): runtime must be ${RUNTIMES.map((r) => `"${r}"`).join(", ")}`);
  setPageRelay(relay, relayMode);
  // wasmurl.js holds the literal new URL("./mcp-<hash>.wasm", import.meta.url),
  // the pattern that Vite, webpack 5 and Parcel turn into an emitted asset
  // (esbuild does not). A name that changes with the content names the
  // build: a SharedWorker needs no request to tell builds apart.
  const url = wasmURL === undefined ? builtWasmURL : new URL(wasmURL, import.meta.url);
  // A worker runtime where asked for and allowed; else the main thread
  // (below). What the browser refused is said once, with where Go runs.
  const refused = []; // Refused
  const notice = (chosen) => {
    if (!refused.length) return;
    const csp = refused.some((e) => !e.keys) ? ", and the Content-Security-Policy a worker needs" : "";
    console.info(`mcp: ${refused.map((e) => e.message).join("; ")}; running ${chosen} (see docs/JSAPI.md, "Runtimes", for why${csp})`);
  };
  for (const mode of workerModes(runtime)) {
    const trace = typeof globalThis.__mcpwasmTrace === "function" ? globalThis.__mcpwasmTrace : null;
    const host = new Host(trace);
    let mcp = null;
    // Test hooks, each a list of modes: globalThis.__mcpwasmRefuseKeys makes
    // those workers act as if they could not store WebCrypto keys (as
    // WebKit's SharedWorker), so that Chromium takes that path too;
    // globalThis.__mcpwasmTrustKeys skips the check, so that a benchmark can
    // time WebKit's SharedWorker against a server without sign-in.
    const listed = (hook) => Array.isArray(hook) && hook.includes(mode);
    const refuseKeysForTest = listed(globalThis.__mcpwasmRefuseKeys);
    const trustKeysForTest = listed(globalThis.__mcpwasmTrustKeys);
    // globalThis.__mcpwasmNoIndexedDB: the worker has no IndexedDB.
    const noIndexedDBForTest = globalThis.__mcpwasmNoIndexedDB === true;
    const remote = new Remote(mode, { wasmURL: url.href, hints: readHints(), refuseKeysForTest, trustKeysForTest, noIndexedDBForTest }, host.callbacks(), errorOf,
      (err) => mcp?._ended(err), onProgress && ((l, t) => {
        try { onProgress(l, t); } catch (e) { console.error("mcp: onProgress threw", e); }
      }));
    let ready;
    try {
      ready = await remote.start();
    } catch (e) {
      if (!(e instanceof Refused)) throw e;
      refused.push(e);
      continue;
    }
    notice("in a dedicated Worker");
    mcp = new MCP(remote, null, url, host, trace, ready.version);
    return mcp;
  }
  notice("on the main thread");
  const go = newGo();
  // preload() fetched and compiled it already (or tried: null).
  const compiled = early?.href === url.href ? await early.module : null;
  early = null;
  const progress = onProgress && ((l, t) => {
    try { onProgress(l, t); } catch (e) { console.error("mcp: onProgress threw", e); }
  });
  const wasm = await instantiate(url, go, { compiled, onProgress: progress, makeError: (code, message, status) => new MCPError(code, message, { status }) });
  // A test hook: a function at globalThis.__mcpwasmTrace hears of every
  // crossing between this module and Go ("js→go", op) and ("go→js", callback).
  const trace = typeof globalThis.__mcpwasmTrace === "function" ? globalThis.__mcpwasmTrace : null;
  const host = new Host(trace);
  let mcp = null;
  let ended = null; // the MCPError of the Go program's end
  const api = await run(go, wasm, {
    makeError: goError,
    host: host.callbacks(),
    // What each server negotiated (transport, protocol version; no
    // secrets), so a reload skips the probes.
    hints: readHints(),
  }, (e) => {
    ended = e === undefined ? new MCPError("closed", "the Go runtime exited; reload the page") : asMCPError(e);
    mcp?._exited(ended); // never silently: every pending call rejects
  });
  mcp = new MCP(api, go, url, host, trace, api.version);
  if (ended) mcp._exited(ended);
  // Other tabs' grant changes: Go applies them to this page's clients (a
  // worker runtime hears them itself).
  host.grants = listenGrants((change) => mcp._invoke("grants.apply", change).catch(() => {}));
  return mcp;
}

/** The worker modes to try, in order, for load()'s runtime option (none: the main thread). */
function workerModes(runtime) {
  const modes = [];
  if ((runtime === "auto" || runtime === "shared-worker") && typeof SharedWorker === "function") modes.push("shared-worker");
  if (runtime !== "main" && typeof Worker === "function") modes.push("worker");
  return modes;
}

const HINTS_KEY = "mcpwasm:hints";

function readHints() {
  try {
    return localStorage.getItem(HINTS_KEY) ?? "{}";
  } catch {
    return "{}"; // storage disabled: probe every time
  }
}

/**
 * The host object the Go runtime calls (HOSTS in jsapi.js): callbacks for a
 * client are routed by target ("client:<id>") to the Client, the rest are
 * page-wide.
 */
class Host {
  targets = new Map(); // "client:<id>" → Client
  #trace;
  constructor(trace) { this.#trace = trace; }
  /** The last id the page chose (for a client, catalog, agent or run). */
  lastId = 0;
  grants = null; // the BroadcastChannel of grant notices (main thread only)

  #to(target) {
    const c = this.targets.get(target);
    if (!c) throw new MCPError("closed", `${target.split(":")[0]} is closed`);
    return c;
  }

  callbacks() {
    const cb = {
      event: (target, type, json) => this.targets.get(target)?._event(type, json === undefined ? undefined : JSON.parse(json)),
      accessToken: async (target) => {
        const token = await this.#to(target)._options.accessToken();
        if (typeof token !== "string") throw invalid("accessToken() must resolve to a string");
        return token;
      },
      identityAssertion: async (target) => {
        const token = await this.#to(target)._options.identityAssertion();
        if (typeof token !== "string") throw invalid("identityAssertion() must resolve to a string (the user's ID token)");
        return token;
      },
      elicit: (target, json) => this.#to(target)._handle("onElicitation", json),
      sample: (target, json) => this.#to(target)._handle("onSampling", json),
      openAuth: async (target, url) => this.#to(target)._openAuth(url),
      authDismissed: (target) => this.#to(target)._authDismissed(),
      closeAuth: (target, state) => this.targets.get(target)?._closeAuth(state),
      lock: acquireLock,
      announce: (json) => this.grants?.postMessage(JSON.parse(json)),
      saveHints: (json) => { try { localStorage.setItem(HINTS_KEY, json); } catch { /* storage off */ } },
      approve: (target, json) => this.#to(target)._approve(JSON.parse(json)),
      model: (target, json) => this.#to(target)._model(JSON.parse(json)),
      summarize: (target, json) => this.#to(target)._summarize(JSON.parse(json)),
      catalogElicit: (target, json, context) => this.#to(target)._elicit(JSON.parse(json), JSON.parse(context)),
      webmcpTools: (target) => this.#to(target)._webmcpTools(),
      webmcpCall: (target, name, json) => this.#to(target)._webmcpCall(name, JSON.parse(json)),
    };
    for (const name of HOSTS) {
      if (typeof cb[name] !== "function") throw new Error(`mcp.js: host callback ${name} is missing`);
      if (this.#trace) {
        const fn = cb[name];
        cb[name] = (...args) => { this.#trace("go→js", name === "event" ? `event:${args[1]}` : name); return fn(...args); };
      }
    }
    return cb;
  }
}

/**
 * Throws redirect_unhandled when this page is itself a redirect sign-in's
 * return (a result in its query, a return address the sign-in left) that
 * no callback module took: the app's server answered at the redirect URI
 * with this page.
 */
function unhandledReturn() {
  const q = new URLSearchParams(globalThis.location?.search ?? "");
  let returning = null;
  try { returning = sessionStorage.getItem(RETURN_KEY); } catch { /* storage off */ }
  if (!returning || !q.has("state") || !(q.has("code") || q.has("error"))) return;
  sessionStorage.removeItem(RETURN_KEY);
  const at = location.origin + location.pathname;
  throw new MCPError("redirect_unhandled", `The sign-in came back to ${at}, but no page there finished it. Import mcpwasm/callback on that page, or pass a redirectUri whose page does.`,
    { detail: `the redirect sign-in returned to ${at} and no callback module (mcpwasm/callback, oauth/callback.html) ran there; it left no result for handleCallback()` });
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
    try { localStorage.removeItem(HINTS_KEY); } catch { /* storage off */ }
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
    this.#host.targets.set(`client:${id}`, c);
    c._forget = () => this.#host.targets.delete(`client:${id}`);
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
   * maxServers, maxToolsPerServer, callTimeoutMs, breaker, approve,
   * serverTools, onElicitation, toolBudget. Nothing connects until a call needs a server.
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
    this.#host.targets.set(`catalog:${id}`, cat);
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
    render: async (element, options) => (await import("./apps/host.js")).render(this.version, element, options),
  });
}
