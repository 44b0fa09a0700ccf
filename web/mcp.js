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
  const api = await new Promise((resolve, reject) => {
    globalThis.__mcpwasmBoot = {
      makeError: (code, message, status) =>
        new MCPError(CODES.has(code) ? code : "protocol", message, { status }),
      ready: resolve,
    };
    go.run(result.instance).then(
      () => reject(new MCPError("closed", "the Go runtime exited")),
      (e) => reject(asMCPError(e)),
    );
  });
  delete globalThis.__mcpwasmBoot;
  return new MCP(api, go, url);
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
]);

/** The loaded module: a factory of clients, one per MCP server. */
class MCP {
  #api;
  #go;
  constructor(api, go, wasmURL) {
    this.#api = api;
    this.#go = go;
    /** The module's version string. */
    this.version = api.version;
    Object.defineProperty(this, "wasmURL", { value: wasmURL.href });
  }

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
    return new Client(this.#api, String(url), options);
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

  constructor(api, url, options) {
    super();
    this.#api = api;
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
    };
    const opts = JSON.stringify({
      clientName: options.clientName ?? globalThis.document?.title ?? "",
      headers: options.headers,
      hasAccessToken: typeof options.accessToken === "function",
      transport: options.transport ?? "auto",
    });
    const id = api.newClient(url, opts, host);
    if (id instanceof Error) throw id;
    this.#id = id;
  }

  /** "idle" | "connecting" | "needs_auth" | "authorizing" | "connected" | "declined" | "failed" | "closed" */
  get state() { return this.#state; }

  #emit(type, detail) {
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
    const p = this.#api.call(this.#id, method, json, signal, progress);
    if (p instanceof Error) throw p;
    return parse(await p);
  }

  /** Connects and initializes; rejects "auth_required" when a login is needed. */
  async connect({ signal } = {}) {
    const r = await this.#call("connect", {
      elicitation: typeof this.onElicitation === "function",
      sampling: typeof this.onSampling === "function",
    }, { signal });
    this.serverInfo = r.serverInfo ?? null;
    this.capabilities = r.capabilities ?? null;
    this.instructions = r.instructions || null;
    this.protocolVersion = r.protocolVersion ?? null;
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
    await this.#api.call(this.#id, "close");
  }
}
