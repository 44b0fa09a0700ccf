// mcp.js — loader and JavaScript API of the mcpwasm MCP client (JSAPI.md).
//
//   import { load, MCPError } from "./mcp.js";
//   const mcp = await load();
//   const client = mcp.client("https://mcp.example.com/mcp");
//   await client.connect();
//
// The work happens in Go compiled to WebAssembly (mcp.wasm beside this file);
// this module streams and starts it and turns its low-level exports into the
// API below. Every rejection is an MCPError.
import "./wasm_exec.js"; // defines globalThis.Go (copied from the Go toolchain at build time)
import {
  CallbackReceiver, LoginWindow, acquireLock, GRANTS_CHANNEL, RETURN_KEY, CALLBACK_KEY,
} from "./auth.js";

/** The error every rejection of this API uses; `code` is one of JSAPI.md's. */
export class MCPError extends Error {
  constructor(code, message, options = {}) {
    super(message, options.cause !== undefined ? { cause: options.cause } : undefined);
    this.name = "MCPError";
    this.code = code;
    if (options.status) this.status = options.status;
  }
}

const CODES = new Set([
  "auth_required", "declined", "popup_blocked", "state_mismatch", "discovery_failed",
  "registration_failed", "token_failed", "insufficient_scope", "aborted", "timeout",
  "network", "http", "protocol", "invalid_argument", "storage", "closed",
]);

function asMCPError(e, fallbackCode = "protocol") {
  if (e instanceof MCPError) return e;
  if (e && e.name === "AbortError") return new MCPError("aborted", "aborted", { cause: e });
  const message = e && typeof e.message === "string" ? e.message : String(e);
  return new MCPError(fallbackCode, message, { cause: e });
}

const invalid = (message) => new MCPError("invalid_argument", message);

let instance = null; // Promise<MCP>

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

async function start({ wasmURL, onProgress } = {}) {
  if (onProgress !== undefined && typeof onProgress !== "function") {
    throw invalid("load(): onProgress must be a function");
  }
  const url = new URL(wasmURL ?? "mcp.wasm", import.meta.url);
  let response;
  try {
    response = await fetch(url);
  } catch (e) {
    throw new MCPError("network", `load(): cannot fetch ${url}: ${e.message}`, { cause: e });
  }
  if (!response.ok) {
    throw new MCPError("http", `load(): ${url} answered HTTP ${response.status}`, { status: response.status });
  }
  const go = new globalThis.Go();
  const counted = withProgress(response, onProgress);
  const type = (response.headers.get("Content-Type") || "").split(";")[0].trim();
  let result;
  if (type === "application/wasm" && WebAssembly.instantiateStreaming) {
    result = await WebAssembly.instantiateStreaming(counted, go.importObject);
  } else {
    // The server sent another MIME type: compile from the bytes instead.
    result = await WebAssembly.instantiate(await counted.arrayBuffer(), go.importObject);
  }
  const grants = "BroadcastChannel" in globalThis ? new BroadcastChannel(GRANTS_CHANNEL) : null;
  let exited; // resolves with an MCPError when the Go program ends
  const api = await new Promise((resolve, reject) => {
    globalThis.__mcpwasmBoot = {
      makeError: (code, message, status) =>
        new MCPError(CODES.has(code) ? code : "protocol", message, { status }),
      ready: resolve,
      host: {
        lock: acquireLock,
        broadcast: (json) => grants?.postMessage(JSON.parse(json)),
        // What each server negotiated (transport, protocol version; no
        // secrets), so a reload skips the probes.
        hints: readHints(),
        saveHints: (json) => { try { localStorage.setItem(HINTS_KEY, json); } catch { /* storage off */ } },
      },
    };
    exited = go.run(result.instance).then(
      () => new MCPError("closed", "the Go runtime exited; reload the page"),
      (e) => asMCPError(e),
    );
    exited.then(reject);
  });
  delete globalThis.__mcpwasmBoot;
  const mcp = new MCP(api, go, url, grants);
  // Never silently: if the runtime ends later, every pending call rejects.
  exited.then((err) => mcp._exited(err));
  return mcp;
}

const HINTS_KEY = "mcpwasm:hints";

function readHints() {
  try {
    return localStorage.getItem(HINTS_KEY) ?? "{}";
  } catch {
    return "{}"; // storage disabled: probe every time
  }
}

/** Reports download progress while the body streams through. */
function withProgress(response, onProgress) {
  if (!onProgress || !response.body) return response;
  const encoded = response.headers.get("Content-Encoding");
  const total = Number(
    response.headers.get("X-Decoded-Content-Length") ??
      (encoded && encoded !== "identity" ? 0 : response.headers.get("Content-Length") ?? 0),
  ) || 0;
  let loaded = 0;
  const report = () => {
    try { onProgress(loaded, total); } catch (e) { console.error("mcp: onProgress threw", e); }
  };
  report();
  const body = response.body.pipeThrough(new TransformStream({
    transform(chunk, controller) {
      loaded += chunk.byteLength;
      report();
      controller.enqueue(chunk);
    },
  }));
  return new Response(body, { status: response.status, headers: response.headers });
}

const CLIENT_OPTIONS = new Set([
  "clientName", "redirectUri", "scopes", "clientId", "clientMetadataUrl", "clientSecret",
  "headers", "accessToken", "storage", "interactive", "authMode", "authTimeoutMs", "transport",
  "severedPopupTimeoutMs",
]);

/** The loaded module: a factory of clients, one per MCP server. */
class MCP {
  #api;
  #go;
  #clients = new Set();
  #receiver;
  #deliverURL;
  #exit = null; // MCPError once the Go runtime has ended
  #pending = new Set(); // reject functions of calls in flight
  constructor(api, go, wasmURL, grants) {
    this.#api = api;
    this.#go = go;
    /** The module's version string. */
    this.version = api.version;
    Object.defineProperty(this, "wasmURL", { value: wasmURL.href });
    this.#deliverURL = async (url) => {
      const r = JSON.parse(await this.#invoke(() => api.deliver(url)));
      if (r.taken && r.resource && !r.error) {
        // A sign-in finished from storage (redirect return): clients of this
        // page waiting for it connect now. Other tabs hear the grant notice.
        for (const c of this.#clients) c._peer("grant", r.resource);
      }
      return r;
    };
    const deliver = async (url) => {
      const r = await this.#deliverURL(url);
      if (!r.taken) throw new Error(r.error?.message ?? "no sign-in of this page waits for that state");
    };
    this.#receiver = typeof window !== "undefined" ? new CallbackReceiver(deliver) : null;
    // Other tabs' new grants and logouts, for this page's clients of the same server.
    grants?.addEventListener("message", (ev) => {
      const { kind, resource } = ev.data ?? {};
      for (const c of this.#clients) c._peer(kind, resource);
    });
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
      if (url === undefined) return false;
      sessionStorage.removeItem(CALLBACK_KEY);
    }
    if (typeof url !== "string" && !(url instanceof URL)) throw invalid("handleCallback(): url must be a string or URL");
    const r = await this.#deliverURL(String(url));
    if (r.taken && r.error) {
      // A sign-in took the URL and failed (declined, token_failed, …).
      throw new MCPError(r.error.code, r.error.message, { status: r.error.status });
    }
    return r.taken;
  }

  /** Removes every stored grant, client registration and cached metadata of this origin. */
  async clearStorage() {
    try { localStorage.removeItem(HINTS_KEY); } catch { /* storage off */ }
    await this.#invoke(() => this.#api.clearStorage());
  }

  /** The Go runtime ended: fail every client and pending call. */
  _exited(err) {
    this.#exit = err;
    for (const reject of this.#pending) reject(err);
    this.#pending.clear();
    for (const c of this.#clients) c._fail(err);
  }

  /**
   * invoke(fn) calls into Go (fn returns a Promise or an MCPError value) and
   * settles like its result, or rejects with an MCPError when the Go runtime
   * is gone or ends first.
   */
  #invoke = (fn) => {
    if (this.#exit) return Promise.reject(this.#exit);
    let p;
    try {
      p = fn();
    } catch (e) {
      return Promise.reject(asMCPError(e, "closed")); // the runtime is gone
    }
    if (p instanceof Error) return Promise.reject(p);
    return new Promise((resolve, reject) => {
      this.#pending.add(reject);
      Promise.resolve(p).then(resolve, reject).finally(() => this.#pending.delete(reject));
    });
  };

  /** Creates a client for the MCP server at url. Throws MCPError invalid_argument on bad input. */
  client(url, options = {}) {
    if (this.#go.exited) throw new MCPError("closed", "the Go runtime exited; reload the page");
    if (typeof url !== "string" && !(url instanceof URL)) throw invalid("client(): url must be a string or URL");
    if (options === null || typeof options !== "object") throw invalid("client(): options must be an object");
    for (const k of Object.keys(options)) {
      if (!CLIENT_OPTIONS.has(k)) throw invalid(`client(): unknown option "${k}"; known: ${[...CLIENT_OPTIONS].join(", ")}`);
    }
    const { headers, accessToken, transport, clientName } = options;
    if (headers !== undefined) {
      if (headers === null || typeof headers !== "object" || Array.isArray(headers)) throw invalid("client(): headers must be an object of strings");
      for (const [k, v] of Object.entries(headers)) {
        if (typeof v !== "string") throw invalid(`client(): header "${k}" must be a string`);
      }
    }
    if (accessToken !== undefined && typeof accessToken !== "function") throw invalid("client(): accessToken must be an async function returning a token");
    if (transport !== undefined && !["auto", "streamable", "sse"].includes(transport)) throw invalid(`client(): transport must be "auto", "streamable" or "sse"`);
    if (clientName !== undefined && typeof clientName !== "string") throw invalid("client(): clientName must be a string");
    const { storage, authMode, interactive, authTimeoutMs, scopes, redirectUri } = options;
    if (storage !== undefined && storage !== "indexeddb" && storage !== "memory") throw invalid(`client(): storage must be "indexeddb" or "memory"`);
    if (authMode !== undefined && authMode !== "popup" && authMode !== "redirect") throw invalid(`client(): authMode must be "popup" or "redirect"`);
    if (interactive !== undefined && typeof interactive !== "boolean") throw invalid("client(): interactive must be a boolean");
    if (authTimeoutMs !== undefined && !(typeof authTimeoutMs === "number" && authTimeoutMs > 0)) throw invalid("client(): authTimeoutMs must be a positive number");
    const { severedPopupTimeoutMs } = options;
    if (severedPopupTimeoutMs !== undefined && !(typeof severedPopupTimeoutMs === "number" && severedPopupTimeoutMs > 0)) throw invalid("client(): severedPopupTimeoutMs must be a positive number");
    if (authMode === "redirect" && storage === "memory") throw invalid(`client(): authMode "redirect" needs storage "indexeddb": the page is gone while the user signs in`);
    if (scopes !== undefined && !(Array.isArray(scopes) && scopes.every((s) => typeof s === "string"))) throw invalid("client(): scopes must be an array of strings");
    for (const k of ["clientId", "clientMetadataUrl", "clientSecret"]) {
      if (options[k] !== undefined && typeof options[k] !== "string") throw invalid(`client(): ${k} must be a string`);
    }
    let redirect;
    try {
      redirect = new URL(redirectUri ?? "oauth/callback.html", import.meta.url);
    } catch {
      throw invalid("client(): redirectUri must be a URL");
    }
    const c = new Client(this.#api, String(url), { ...options, redirectUri: redirect.href }, this.#receiver, this.#clients, this.#invoke);
    this.#clients.add(c);
    return c;
  }
}

function sameResource(a, b) {
  try {
    const x = new URL(a), y = new URL(b);
    return x.origin === y.origin && x.pathname.replace(/\/$/, "") === y.pathname.replace(/\/$/, "");
  } catch {
    return false;
  }
}

function parse(json) {
  return json === undefined || json === null ? undefined : JSON.parse(json);
}

/** A connection to one MCP server. Events: statechange, toolschanged, resourceschanged, promptschanged, log. */
class Client extends EventTarget {
  #api;
  #id;
  #state = "idle";
  #closed = false;
  /** Handles elicitation/create: async (params) => ({ action, content }). Set before connect(). */
  onElicitation = null;
  /** Handles sampling/createMessage: async (params) => ({ role, content, model, stopReason }). Set before connect(). */
  onSampling = null;
  /** From the server's initialize result, after connect(). */
  serverInfo = null;
  capabilities = null;
  instructions = null;
  protocolVersion = null;

  #options;
  #receiver;
  #clients;
  #login = null; // LoginWindow of the running sign-in
  #unwatch = null;

  #invoke;

  constructor(api, url, options, receiver, clients, invoke) {
    super();
    this.#invoke = invoke;
    this.#api = api;
    this.#options = options;
    this.#receiver = receiver;
    this.#clients = clients;
    this.url = url;
    const host = {
      emit: (type, detailJSON) => this.#emit(type, parse(detailJSON)),
      accessToken: async () => {
        const token = await options.accessToken();
        if (typeof token !== "string") throw invalid("accessToken() must resolve to a string");
        return token;
      },
      elicit: (json) => this.#handle("onElicitation", json),
      sample: (json) => this.#handle("onSampling", json),
      openAuth: async (url) => this.#openAuth(url),
      closeAuth: () => this.#closeAuth(),
    };
    const opts = JSON.stringify({
      clientName: options.clientName ?? globalThis.document?.title ?? "",
      headers: options.headers,
      hasAccessToken: typeof options.accessToken === "function",
      transport: options.transport ?? "auto",
      redirectUri: options.redirectUri,
      scopes: options.scopes,
      clientId: options.clientId,
      clientMetadataUrl: options.clientMetadataUrl,
      clientSecret: options.clientSecret,
      storage: options.storage ?? "indexeddb",
      interactive: options.interactive ?? false,
      authMode: options.authMode ?? "popup",
      authTimeoutMs: options.authTimeoutMs,
    });
    const id = api.newClient(url, opts, host);
    if (id instanceof Error) throw id;
    this.#id = id;
  }

  /** "idle" | "connecting" | "needs_auth" | "authorizing" | "connected" | "declined" | "failed" | "closed" */
  get state() { return this.#state; }

  /**
   * Opens the login window now (in the user gesture); null when blocked. A
   * sign-in already showing its window keeps it (brought to the front): the
   * second call joins the running flow.
   */
  #openWindow() {
    if (this.#login?.isOpen && this.#login.state) {
      this.#login.focus();
      return this.#login;
    }
    this.#closeAuth();
    const lw = new LoginWindow(() => this.#windowClosed(lw), this.#options.severedPopupTimeoutMs);
    if (!lw.open(`mcpwasm-login-${Math.random().toString(36).slice(2)}`)) return null;
    this.#login = lw;
    this.#unwatch = this.#receiver?.watch(lw);
    return lw;
  }

  // The courier (Go) shows the authorization URL.
  #openAuth(url) {
    if (this.#closed) throw new MCPError("closed", "this client is closed; create a new one with mcp.client()");
    if (this.#options.authMode === "redirect") {
      this.#closeAuth();
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

  #closeAuth() {
    this.#unwatch?.();
    this.#unwatch = null;
    this.#login?.close();
    this.#login = null;
  }

  // A person closed the login window: that is a decline (LESSONS 7).
  #windowClosed(lw) {
    if (lw !== this.#login || !lw.state) return;
    const u = new URL(this.#options.redirectUri);
    u.search = new URLSearchParams({
      error: "access_denied", error_description: "The sign-in window was closed.", state: lw.state,
    }).toString();
    this.#invoke(() => this.#api.deliver(u.href)).catch(() => {});
  }

  /** The module is gone: this client can do nothing more. */
  _fail(err) {
    this.#closeAuth();
    this.#emit("statechange", { state: "failed", error: { code: err.code, message: err.message } });
  }

  /** Another tab stored a grant for, or signed out of, a server. */
  _peer(kind, resource) {
    if (kind === "clear") kind = "logout"; // another tab cleared this origin's storage
    else if (!sameResource(resource, this.url)) return;
    if (this.#closed) return;
    this.#invoke(() => this.#api.call(this.#id, "peer", JSON.stringify({ kind }))).then(() => {
      if (kind === "grant" && (this.#state === "needs_auth" || this.#state === "declined")) {
        this.connect().catch(() => {});
      }
    }, () => {});
  }

  #emit(type, detail) {
    if (type === "storageerror") {
      console.warn(`mcp: a refreshed sign-in could not be stored (${detail.message}); it is kept in memory for this page`);
    }
    if (type === "storagefallback") {
      console.warn(`mcp: IndexedDB is unavailable (${detail.reason}); sign-ins are kept in memory and last only until this page closes`);
    }
    if (type === "statechange") {
      this.#state = detail.state;
      if (detail.error) detail.error = new MCPError(detail.error.code, detail.error.message, { status: detail.error.status });
    }
    this.dispatchEvent(new CustomEvent(type, { detail: detail ?? {} }));
  }

  async #handle(prop, json) {
    const fn = this[prop];
    if (typeof fn !== "function") throw new MCPError("protocol", `no ${prop} handler is set`);
    const result = await fn(JSON.parse(json));
    if (result === null || typeof result !== "object") throw invalid(`${prop} must resolve to an object`);
    return JSON.stringify(result);
  }

  async #call(method, args, { signal, onProgress } = {}) {
    if (this.#closed) throw new MCPError("closed", "this client is closed; create a new one with mcp.client()");
    if (signal !== undefined && !(signal instanceof AbortSignal)) throw invalid("signal must be an AbortSignal");
    let json;
    try {
      json = args === undefined ? undefined : JSON.stringify(args);
    } catch (e) {
      throw invalid(`${method}: arguments cannot be sent as JSON: ${e.message}`);
    }
    const progress = onProgress && ((p) => {
      try { onProgress(JSON.parse(p)); } catch (e) { console.error("mcp: onProgress threw", e); }
    });
    return parse(await this.#invoke(() => this.#api.call(this.#id, method, json, signal, progress)));
  }

  /** Connects and initializes; rejects "auth_required" when a login is needed. */
  async connect({ signal } = {}) {
    this.#connected(await this.#call("connect", {
      elicitation: typeof this.onElicitation === "function",
      sampling: typeof this.onSampling === "function",
    }, { signal }));
  }

  #connected(r) {
    this.serverInfo = r.serverInfo ?? null;
    this.capabilities = r.capabilities ?? null;
    this.instructions = r.instructions || null;
    this.protocolVersion = r.protocolVersion ?? null;
  }

  /**
   * Signs in: call it from a user gesture (a click). It opens the login
   * window at once, runs the authorization flow, then connects. Rejects
   * "popup_blocked" (state needs_auth) when the browser blocked the window,
   * "declined" when the user closed it or said no.
   */
  authorize({ signal } = {}) {
    if (this.#closed) return Promise.reject(new MCPError("closed", "this client is closed; create a new one with mcp.client()"));
    let popup = "redirect";
    if (this.#options.authMode !== "redirect") popup = this.#openWindow() ? "open" : "blocked";
    return this.#call("authorize", {
      popup,
      elicitation: typeof this.onElicitation === "function",
      sampling: typeof this.onSampling === "function",
    }, { signal }).then((r) => this.#connected(r), (e) => {
      this.#closeAuth();
      throw e;
    });
  }

  /** Signs out: revokes the grant where the server supports it and deletes it here and in other tabs. */
  async logout({ signal } = {}) {
    await this.#call("logout", {}, { signal });
  }

  /** Every tool, all pages. */
  listTools({ signal } = {}) { return this.#call("listTools", {}, { signal }); }

  /** Calls a tool; resolves { content, structuredContent, isError }. */
  async callTool(name, args = {}, { signal, onProgress, timeoutMs } = {}) {
    if (typeof name !== "string" || name === "") throw invalid("callTool(): name must be a non-empty string");
    if (args === null || typeof args !== "object" || Array.isArray(args)) throw invalid("callTool(): arguments must be a plain object");
    if (onProgress !== undefined && typeof onProgress !== "function") throw invalid("callTool(): onProgress must be a function");
    if (timeoutMs !== undefined && !(typeof timeoutMs === "number" && timeoutMs > 0)) throw invalid("callTool(): timeoutMs must be a positive number");
    const r = await this.#call("callTool", { name, arguments: args, timeoutMs }, { signal, onProgress });
    return { content: r.content ?? [], structuredContent: r.structuredContent, isError: !!r.isError, _meta: r._meta };
  }

  listResources({ signal } = {}) { return this.#call("listResources", {}, { signal }); }
  listResourceTemplates({ signal } = {}) { return this.#call("listResourceTemplates", {}, { signal }); }

  readResource(uri, { signal } = {}) {
    if (typeof uri !== "string" || uri === "") return Promise.reject(invalid("readResource(): uri must be a non-empty string"));
    return this.#call("readResource", { uri }, { signal });
  }

  listPrompts({ signal } = {}) { return this.#call("listPrompts", {}, { signal }); }

  getPrompt(name, args = {}, { signal } = {}) {
    if (typeof name !== "string" || name === "") return Promise.reject(invalid("getPrompt(): name must be a non-empty string"));
    if (args === null || typeof args !== "object" || Array.isArray(args) || Object.values(args).some((v) => typeof v !== "string")) {
      return Promise.reject(invalid("getPrompt(): arguments must be an object of strings"));
    }
    return this.#call("getPrompt", { name, promptArguments: args }, { signal });
  }

  async ping({ signal } = {}) { await this.#call("ping", {}, { signal }); }

  /** Ends the session; later calls reject "closed". */
  async close() {
    if (this.#closed) return;
    this.#closed = true;
    this.#clients.delete(this);
    this.#closeAuth();
    try {
      await this.#invoke(() => this.#api.call(this.#id, "close"));
    } catch (e) {
      if (e.code !== "closed") throw e; // the runtime is gone: closed anyway
    }
  }
}
