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
import { CODES, CLIENT_OPTIONS, CATALOG_OPTIONS, AGENT_OPTIONS, OPS, HOSTS } from "./jsapi.js";
import {
  CallbackReceiver, LoginWindow, acquireLock, RETURN_KEY, CALLBACK_KEY,
} from "./auth.js";
import { Remote, Refused } from "./remote.js";
import { instantiate, invokeJSON, listenGrants, newGo, run } from "./boot.js";
import { callProblem, clientProblem, optionsProblem, readEntry, sentence } from "./rules.js";

/** The error every rejection of this API uses; `code` is one of CODES. */
export class MCPError extends Error {
  /**
   * code: one of CODES; message: one sentence a person can act on;
   * options: status (HTTP), detail (what happened underneath, for
   * developers), rpcCode (the server's JSON-RPC error code), cause.
   */
  constructor(code, message, options = {}) {
    super(message, options.cause !== undefined ? { cause: options.cause } : undefined);
    this.name = "MCPError";
    this.code = code;
    if (options.status) this.status = options.status;
    if (options.detail) this.detail = options.detail;
    if (typeof options.rpcCode === "number") this.rpcCode = options.rpcCode;
  }
}

const KNOWN_CODES = new Set(CODES);

function asMCPError(e, fallbackCode = "protocol") {
  if (e instanceof MCPError) return e;
  if (e && e.name === "AbortError") return new MCPError("aborted", "aborted", { cause: e });
  const message = e && typeof e.message === "string" ? e.message : String(e);
  return new MCPError(fallbackCode, message, { cause: e });
}

/** An MCPError from Go's JSON or factory call; its detail goes to the console at debug level. */
function goError(code, message, status, detail, rpcCode) {
  if (detail && detail !== message) console.debug(`mcp: ${message}\n  detail: ${detail}`);
  return new MCPError(KNOWN_CODES.has(code) ? code : "protocol", message, { status, detail, rpcCode });
}
const errorOf = (e) => goError(e.code, e.message, e.status, e.detail, e.rpcCode);
const invalid = (message) => new MCPError("invalid_argument", message);
const closedError = () => new MCPError("closed", "this client is closed; create a new one with mcp.client()");

let instance = null; // Promise<MCP>
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
    url = options.wasmURL === undefined ? new URL("./mcp.wasm", import.meta.url) : new URL(options.wasmURL, import.meta.url);
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
async function start({ wasmURL, onProgress, runtime = globalThis.__mcpwasmRuntime ?? "auto" } = {}) {
  if (onProgress !== undefined && typeof onProgress !== "function") {
    throw invalid("load(): onProgress must be a function");
  }
  if (!RUNTIMES.includes(runtime)) throw invalid(`load(): runtime must be ${RUNTIMES.map((r) => `"${r}"`).join(", ")}`);
  // The literal new URL("./mcp.wasm", import.meta.url) is the pattern that
  // Vite, webpack 5, Rollup and esbuild turn into an emitted, hashed asset.
  const url = wasmURL === undefined ? new URL("./mcp.wasm", import.meta.url) : new URL(wasmURL, import.meta.url);
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
    const remote = new Remote(mode, { wasmURL: url.href, hints: readHints(), refuseKeysForTest, trustKeysForTest }, host.callbacks(), errorOf,
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

/** Throws Go's error unless every option of kind "function" in kinds is a function (JSON cannot tell). */
function checkFunctions(what, options, kinds) {
  if (options === null || typeof options !== "object" || Array.isArray(options)) throw invalid(sentence(`${what}: options must be an object`));
  for (const [k, v] of Object.entries(options)) {
    if (kinds[k] === "function" && typeof v !== "function" && v !== undefined) throw invalid(sentence(`${what}: ${k} must be a function`));
  }
}

/**
 * Throws the invalid_argument error Go gives for catalog options (as JSON
 * sends them), and returns the warnings of the servers it leaves out.
 */
function catalogProblems(options) {
  const problem = optionsProblem("catalog()", "catalog", options);
  if (problem) throw invalid(sentence(problem));
  const servers = options.servers ?? options.mcpServers ?? {};
  const warnings = [];
  for (const id of Object.keys(servers).sort()) {
    const entry = readEntry(id, servers[id]);
    if (entry.problem) {
      warnings.push(entry.problem);
      continue;
    }
    const bad = optionsProblem(`catalog: server ${JSON.stringify(id)}`, "client", entry.config);
    if (bad) throw invalid(sentence(bad));
  }
  return warnings;
}

/**
 * Functions cannot travel as JSON: a function option is sent as true (Go
 * learns that there is one); a function anywhere else as {} (Go says the
 * option has the wrong type).
 */
const functionsAs = (kinds) => (k, v) => typeof v === "function" ? (kinds[k] === "function" ? true : {}) : v;

/**
 * A client's options as Go reads them, with the page's defaults. A
 * redirectUri the page gives resolves against the page; the default,
 * oauth/callback.html, against this module (beside it in the package).
 */
function clientOptionsJSON(options) {
  let redirectUri = options.redirectUri;
  try {
    if (redirectUri === undefined) redirectUri = new URL("oauth/callback.html", import.meta.url).href;
    else if (typeof redirectUri === "string") redirectUri = new URL(redirectUri, globalThis.location?.href).href;
  } catch { /* not a URL: Go says so */ }
  const sent = { ...options, redirectUri, clientName: options.clientName ?? globalThis.document?.title ?? "" };
  return JSON.parse(JSON.stringify(sent, functionsAs(CLIENT_OPTIONS)));
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

  /** A worker runtime ended: every client fails; the next call starts a new runtime. */
  _ended(err) {
    for (const c of this.#host.targets.values()) c._fail?.(err);
  }

  /** For tests: an id of the worker runtime serving this page (undefined on the main thread). */
  get _runtimeId() { return this.#api.runtimeId; }

  /** A test hook: a worker runtime ends as a crash would. */
  _crashForTest() {
    this.#api.crashForTest?.();
  }

  /** The Go runtime ended: fail every client and pending call. */
  _exited(err) {
    this.#exit = err;
    for (const reject of this.#pending) reject(err);
    this.#pending.clear();
    for (const c of this.#host.targets.values()) c._fail(err);
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

  /** Creates a client for the MCP server at url. Throws MCPError invalid_argument on bad input. */
  client(url, options = {}) {
    if (typeof url !== "string" && !(url instanceof URL)) throw invalid("client(): url must be a string or URL");
    checkFunctions("client()", options, CLIENT_OPTIONS);
    const sent = clientOptionsJSON(options);
    const problem = clientProblem(String(url), sent);
    if (problem) throw invalid(problem);
    const id = this._newId();
    this._invokeSync("client.new", { id, url: String(url), options: sent });
    return this._wrap(id, String(url), options);
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
   * serverTools. Nothing connects until a call needs a server.
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
          wire[id] = "command" in sc ? sc : clientOptionsJSON(sc);
        } else {
          wire[id] = sc;
        }
      }
      sent[key] = wire;
    }
    const options = JSON.parse(JSON.stringify(sent, functionsAs(CATALOG_OPTIONS)));
    const warnings = catalogProblems(options);
    const id = this._newId();
    let created = null; // Go's answer, at once on the main thread
    let cat = null;
    this._invokeSync("catalog.new", { id, options }, (r) => {
      created = r;
      cat?._created(r);
    });
    cat = new Catalog(this, id, servers, warnings, config.approve, config.maxServers);
    if (created) cat._created(created);
    this.#host.targets.set(`catalog:${id}`, cat);
    for (const w of cat.warnings) console.warn(`mcp: catalog(): ${w}`);
    return cat;
  }

  /** Model descriptions for cat.agent({model}); a custom model is an async function. */
  models = Object.freeze({
    /** Any OpenAI-compatible Chat Completions endpoint (OpenAI, Ollama, vLLM, LM Studio, llama.cpp, OpenRouter). */
    openai: ({ baseURL, apiKey, model, headers } = {}) => Object.freeze({ kind: "openai", baseURL, apiKey, model, headers }),
    /** The Anthropic Messages API. */
    anthropic: ({ baseURL, apiKey, model, headers, maxTokens } = {}) => Object.freeze({ kind: "anthropic", baseURL, apiKey, model, headers, maxTokens }),
  });
}

/**
 * A connection to one MCP server. Events: statechange, toolschanged,
 * resourceschanged, promptschanged, log, tokenrefreshed, storageerror,
 * storagefallback, warning.
 */
class Client extends EventTarget {
  #mcp;
  #id;
  #state = "idle";
  #closed = false;
  #receiver;
  #login = null; // LoginWindow of the running sign-in
  #unwatch = null;
  #dismissed = null; // {resolve, reject} of the running sign-in's authDismissed
  /** Handles elicitation/create: async (params) => ({ action, content }). Set before connect(). */
  onElicitation = null;
  /** Handles sampling/createMessage: async (params) => ({ role, content, model, stopReason }). Set before connect(). */
  onSampling = null;
  /** From the server's initialize result, once connected. */
  serverInfo = null;
  capabilities = null;
  instructions = null;
  protocolVersion = null;

  constructor(mcp, id, url, options, receiver) {
    super();
    this.#mcp = mcp;
    this.#id = id;
    this.url = url;
    this._options = options;
    this.#receiver = receiver;
  }

  /** "idle" | "connecting" | "needs_auth" | "authorizing" | "connected" | "declined" | "failed" | "closed" */
  get state() { return this.#state; }

  #call(op, args = {}, signal, onProgress) {
    if (this.#closed) return Promise.reject(closedError());
    if (signal !== undefined && !(signal instanceof AbortSignal)) return Promise.reject(invalid("signal must be an AbortSignal"));
    return this.#mcp._invoke(op, { id: this.#id, ...args }, signal, onProgress);
  }

  #handlers() {
    return { elicitation: typeof this.onElicitation === "function", sampling: typeof this.onSampling === "function" };
  }

  #session(s) {
    if (!s) return;
    this.serverInfo = s.serverInfo ?? null;
    this.capabilities = s.capabilities ?? null;
    this.instructions = s.instructions || null;
    this.protocolVersion = s.protocolVersion ?? null;
  }

  /** Connects and initializes; rejects "auth_required" when a sign-in is needed. */
  async connect({ signal } = {}) {
    this.#session(await this.#call("client.connect", this.#handlers(), signal));
  }

  /**
   * Signs in: call it from a user gesture (a click). It opens the login
   * window at once, runs the authorization flow, then connects. Rejects
   * "popup_blocked" (state needs_auth) when the browser blocked the window,
   * "declined" when the user closed it or said no.
   */
  authorize({ signal } = {}) {
    if (this.#closed) return Promise.reject(closedError());
    const popup = this._popup();
    const lw = this._login;
    return this.#call("client.authorize", { popup, ...this.#handlers() }, signal).then((s) => this.#session(s), (e) => {
      this._closeAuthOf(lw);
      throw e;
    });
  }

  /** The sign-in window showing now, if any. */
  get _login() { return this.#login; }

  /**
   * A sign-in call failed: the window it opened closes, but not another:
   * its rejection can arrive after the person clicked Sign in again.
   */
  _closeAuthOf(lw) {
    if (this.#login === lw) this._closeAuth();
  }

  /** Opens the sign-in window in the user's gesture: "open", "blocked", "redirect" or "none" (identityAssertion: no window). */
  _popup() {
    if (typeof this._options.identityAssertion === "function") return "none";
    if (this._options.authMode === "redirect") return "redirect";
    return this.#openWindow() ? "open" : "blocked";
  }

  /** Signs out: revokes the grant where the server supports it and deletes it here and in other tabs. */
  async logout({ signal } = {}) {
    await this.#call("client.logout", {}, signal);
  }

  /** Every tool, all pages. */
  listTools({ signal } = {}) { return this.#call("client.listTools", {}, signal); }

  /** Calls a tool; resolves { content, structuredContent, isError }. */
  async callTool(name, args = {}, { signal, onProgress, timeoutMs } = {}) {
    if (typeof name !== "string" || name === "") throw invalid("callTool(): name must be a non-empty string");
    if (args === null || typeof args !== "object" || Array.isArray(args)) throw invalid("callTool(): arguments must be a plain object");
    if (onProgress !== undefined && typeof onProgress !== "function") throw invalid("callTool(): onProgress must be a function");
    const problem = callProblem({ timeoutMs });
    if (problem) throw invalid(problem);
    let json;
    try {
      json = JSON.stringify(args);
    } catch (e) {
      throw invalid(`callTool(): arguments cannot be sent as JSON: ${e.message}`);
    }
    const progress = onProgress && ((p) => {
      try { onProgress(JSON.parse(p)); } catch (e) { console.error("mcp: onProgress threw", e); }
    });
    const r = await this.#call("client.callTool", { name, arguments: JSON.parse(json), timeoutMs }, signal, progress);
    return { content: r.content ?? [], structuredContent: r.structuredContent, isError: !!r.isError, _meta: r._meta };
  }

  listResources({ signal } = {}) { return this.#call("client.listResources", {}, signal); }
  listResourceTemplates({ signal } = {}) { return this.#call("client.listResourceTemplates", {}, signal); }

  readResource(uri, { signal } = {}) {
    if (typeof uri !== "string" || uri === "") return Promise.reject(invalid("readResource(): uri must be a non-empty string"));
    return this.#call("client.readResource", { uri }, signal);
  }

  listPrompts({ signal } = {}) { return this.#call("client.listPrompts", {}, signal); }

  getPrompt(name, args = {}, { signal } = {}) {
    if (typeof name !== "string" || name === "") return Promise.reject(invalid("getPrompt(): name must be a non-empty string"));
    if (args === null || typeof args !== "object" || Array.isArray(args) || Object.values(args).some((v) => typeof v !== "string")) {
      return Promise.reject(invalid("getPrompt(): arguments must be an object of strings"));
    }
    return this.#call("client.getPrompt", { name, arguments: args }, signal);
  }

  async ping({ signal } = {}) { await this.#call("client.ping", {}, signal); }

  /** The catalog that owned this client closed it. */
  _gone() {
    this._closeAuth();
    this.#closed = true;
    this.#state = "closed";
    this._forget?.();
  }

  /** Ends the session; later calls reject "closed". */
  async close() {
    if (this.#closed) return;
    this._closeAuth();
    try {
      await this.#mcp._invoke("client.close", { id: this.#id });
    } catch (e) {
      if (e.code !== "closed") throw e; // the runtime is gone: closed anyway
    } finally {
      this.#closed = true;
      this._forget?.();
    }
  }

  /**
   * Opens the login window now (in the user gesture); null when blocked. A
   * sign-in already showing its window keeps it (brought to the front): the
   * second call joins the running flow.
   */
  #openWindow() {
    // Only a sign-in still running is joined: once it said "declined" (its
    // window may still be closing), a click asks again in a new window.
    if (this.#login?.isOpen && this.#login.state && this.#state === "authorizing") {
      this.#login.focus();
      return this.#login;
    }
    this._closeAuth();
    const lw = new LoginWindow(() => {
      // A person closed the window: the sign-in ends as declined.
      if (lw === this.#login) this.#dismissed?.resolve();
    }, this._options.severedPopupTimeoutMs, (url) => {
      // The window reached the redirect URI and nothing there sent the
      // result: the sign-in ends redirect_unhandled.
      if (lw === this.#login) this.#dismissed?.resolve(url);
    });
    if (!lw.open(`mcpwasm-login-${Math.random().toString(36).slice(2)}`)) return null;
    this.#login = lw;
    this.#unwatch = this.#receiver?.watch(lw);
    return lw;
  }

  // host.openAuth: show the authorization URL.
  _openAuth(url) {
    if (this.#closed) throw closedError();
    if (this._options.authMode === "redirect") {
      this._closeAuth();
      sessionStorage.setItem(RETURN_KEY, location.href);
      location.assign(url);
      return;
    }
    const lw = this.#login ?? this.#openWindow(); // interactive connect(): still in the gesture, we hope
    if (!lw) {
      throw new MCPError("popup_blocked", "the browser blocked the sign-in window: call authorize() from a click or key press");
    }
    lw.state = new URL(url).searchParams.get("state");
    lw.navigate(url);
  }

  // host.authDismissed: resolves when a person closes the sign-in window
  // (undefined), or with the redirect URI it reached when no callback
  // module ran there.
  _authDismissed() {
    this.#dismissed?.reject(new Error("superseded"));
    return new Promise((resolve, reject) => { this.#dismissed = { resolve, reject }; });
  }

  // host.closeAuth: the sign-in ended. From Go, state names the sign-in
  // (its authorization URL's state): the end of an earlier one, arriving
  // after the person started the next, leaves the next one's window open.
  _closeAuth(state) {
    if (state && this.#login && this.#login.state !== state) return;
    this.#dismissed?.reject(new Error("the sign-in ended"));
    this.#dismissed = null;
    this.#unwatch?.();
    this.#unwatch = null;
    this.#login?.close();
    this.#login = null;
  }

  /** The module is gone: this client can do nothing more. */
  _fail(err) {
    this._closeAuth();
    this._event("statechange", { state: "failed", error: { code: err.code, message: err.message } });
  }

  // host.event
  _event(type, detail) {
    if (type === "storageerror") {
      console.warn(`mcp: a refreshed sign-in could not be stored (${detail.message}); it is kept in memory for this page`);
    }
    if (type === "storagefallback") {
      console.warn(`mcp: IndexedDB is unavailable (${detail.reason}); sign-ins are kept in memory and last only until this page closes`);
    }
    if (type === "warning") console.warn(`mcp: ${this.url}: ${detail.message}`);
    if (type === "statechange") {
      this.#state = detail.state;
      this.#session(detail.session);
      if (detail.error) detail.error = errorOf(detail.error);
      // An end the page must act on is said once, as a sentence; the Go
      // chain stays in the error's detail (and at console.debug).
      if ((detail.state === "failed" || detail.state === "declined") && detail.error) {
        console.warn(`mcp: ${this.url}: ${detail.state}: ${detail.error.message}`);
      }
    }
    this.dispatchEvent(new CustomEvent(type, { detail: detail ?? {} }));
  }

  async _handle(prop, json) {
    const fn = this[prop];
    if (typeof fn !== "function") throw new MCPError("protocol", `no ${prop} handler is set`);
    const result = await fn(JSON.parse(json));
    if (result === null || typeof result !== "object") throw invalid(`${prop} must resolve to an object`);
    return JSON.stringify(result);
  }
}

/**
 * Many MCP servers behind one tool list. Events: statuschange {id, status},
 * toolschanged {ids}, authrequired {id}, warning {id, message}.
 */
class Catalog extends EventTarget {
  #mcp;
  #id;
  #statuses;
  #servers = new Map(); // server id → Client
  #approve;
  #closed = false;
  #agents = new Set();
  /** What the configuration left out (a stdio server, …), one sentence each. */
  warnings;

  #max; // maxServers, as Go reads it

  /**
   * id: the page's; servers: the configuration's entries; warnings: the
   * entries left out (the rest each get a client "<id>/<server>").
   */
  constructor(mcp, id, servers, warnings, approve, maxServers) {
    super();
    this.#max = Number.isInteger(maxServers) && maxServers > 0 ? maxServers : 32;
    this.#mcp = mcp;
    this.#id = id;
    this.#statuses = {};
    this.#approve = approve;
    this.warnings = Object.freeze([...warnings]);
    for (const [s, sc] of Object.entries(servers)) {
      if (readEntry(s, sc).problem) continue;
      this.#servers.set(s, mcp._wrap(`${id}/${s}`, sc?.url ?? sc?.serverUrl ?? "", sc ?? {}));
    }
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
    checkFunctions(`catalog: server ${JSON.stringify(id)}`, config, CLIENT_OPTIONS);
    const sent = clientOptionsJSON(config);
    const problem = this.#addProblem(id, sent);
    if (problem) throw invalid(sentence(problem));
    this.#mcp._invokeSync("catalog.add", { id: this.#id, server: id, config: sent });
    this.#servers.set(id, this.#mcp._wrap(`${this.#id}/${id}`, config?.url ?? config?.serverUrl ?? "", config));
  }

  /** Go's refusal of add(id, sent), or null. */
  #addProblem(id, sent) {
    const entry = readEntry(id, sent);
    if (entry.problem) return entry.problem;
    const bad = optionsProblem(`catalog: server ${JSON.stringify(id)}`, "client", entry.config);
    if (bad) return bad;
    if (this.#servers.has(id)) return `catalog: server ${JSON.stringify(id)} exists; remove it first`;
    if (this.#servers.size >= this.#max) return `catalog: the catalog holds ${this.#max} servers already, the most allowed (maxServers)`;
    // mcpclient.New's header checks: Go names only the server.
    if (clientProblem(entry.url, entry.config)) return `catalog: server ${JSON.stringify(id)}`;
    return null;
  }

  /** Removes a server; its session ends. */
  async remove(id) {
    this.#known(id);
    await this.#call("catalog.remove", { server: id });
    this.#servers.get(id)?._gone();
    this.#servers.delete(id);
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
  toolsFor(format, { signal } = {}) { return this.#call("catalog.toolsFor", { format }, signal); }

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
    const sent = JSON.parse(JSON.stringify({ ...options, model: spec }, functionsAs(AGENT_OPTIONS)));
    const problem = optionsProblem("agent()", "agent", sent);
    if (problem) throw invalid(sentence(problem));
    const id = this.#mcp._newId();
    this.#mcp._invokeSync("agent.new", { id, catalog: this.#id, options: sent });
    const a = new Agent(this.#mcp, id, typeof model === "function" ? model : null);
    this.#agents.add(a);
    return a;
  }

  /** Closes every server. */
  async close() {
    if (this.#closed) return;
    for (const a of this.#agents) a.close();
    await this.#call("catalog.close");
    this.#closed = true;
    for (const c of this.#servers.values()) c._gone();
    this.#mcp._target(`catalog:${this.#id}`, null);
  }

  /** Go's answer to catalog.new: the statuses it knows. */
  _created(r) {
    for (const [id, st] of Object.entries(r.statuses ?? {})) this.#statuses[id] ??= st;
  }

  // host.approve
  async _approve(req) {
    if (typeof this.#approve !== "function") return true;
    return (await this.#approve(req)) === true;
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
  constructor(mcp, id, model) {
    this.#mcp = mcp;
    this.#id = id;
    this.#model = model;
  }

  /**
   * Runs one turn. input: a string (the user's message) or a list of
   * messages in the OpenAI Chat Completions shapes. Returns {done}, a
   * Promise of {messages, text, steps, finishReason}; onEvent hears text,
   * toolcall, toolresult, authrequired, approval, step, done and error.
   */
  run(input, { signal, onEvent } = {}) {
    if (onEvent !== undefined && typeof onEvent !== "function") throw invalid("run(): onEvent must be a function");
    if (signal !== undefined && !(signal instanceof AbortSignal)) throw invalid("run(): signal must be an AbortSignal");
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
    const done = this.#mcp._invoke("agent.run", { id: this.#id, run, input }, signal, events)
      .finally(() => this.#mcp._target(`run:${run}`, null));
    return { done };
  }

  /** Forgets the agent. */
  close() {
    try { this.#mcp._invokeSync("agent.close", { id: this.#id }); } catch { /* already gone */ }
  }
}
