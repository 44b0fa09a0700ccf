// host.js — the page's side of MCP Apps (io.modelcontextprotocol/ui,
// specification 2026-01-26): mcp.apps.render() reads a tool's view from its
// server, frames the sandbox proxy (sandbox.html on another origin) and
// speaks the view's JSON-RPC over postMessage. The view reaches its own
// server only, through this page: tools it may call (visibility "app"),
// resources, and the host's handlers for links, messages and model
// context. Loaded on the first render, so that pages without views never
// fetch it.
import { MCPError, asMCPError, invalid } from "../errors.js";
import { policy, allow, trustProblem, TRUST } from "./csp.js";
import { MAX_VIEW_STORAGE, STORAGE_CHANGED, ViewStorage, sizeOf } from "./viewstorage.js";

const PROTOCOL = "2026-01-26";
const MIME = "text/html;profile=mcp-app";
const PROXY_READY = "ui/notifications/sandbox-proxy-ready";
const VIEW_GONE = "ui/notifications/sandbox-view-gone"; // sandbox.js's own
const RESOURCE_READY = "ui/notifications/sandbox-resource-ready";
const DISPLAY_MODES = ["inline", "fullscreen", "pip"];
const THEMES = ["light", "dark"];
const TEARDOWN_MS = 3000;
const PROXY_WAIT_MS = 5000; // after the proxy's frame loaded
const INIT_TIMEOUT_MS = 30000; // from the view's HTML sent to its initialized, unless initTimeoutMs
const VIEW_CALL_MS = 60000; // a call of one of the view's own tools, unless timeoutMs
const MAX_VIEW_TOOLS = 1000; // the tools a view may list, over all its pages
const MAX_HTML = 8 << 20; // a view's HTML, decoded
const MAX_SAMPLING = 4 << 20; // a sampling request or its answer, as JSON (images included)
const MAX_DOWNLOAD = 64 << 20; // the files of one ui/download-file, decoded
const MAX_STATE_KEY = 1024; // render()'s stateKey, in characters

// JSON-RPC error codes the view gets.
const METHOD_NOT_FOUND = -32601;
const INVALID_PARAMS = -32602;
const INTERNAL = -32603;

/** Per client, the views' resources read so far: uri → Promise of {html, meta}; a read that failed is forgotten. */
const resources = new WeakMap();

class RPCError extends Error {
  constructor(code, message) {
    super(message);
    this.code = code;
  }
}

const isObject = (v) => v !== null && typeof v === "object" && !Array.isArray(v);
const isMessage = (d) => isObject(d) && d.jsonrpc === "2.0";

function decodeBase64(b64) {
  const bin = atob(b64);
  const bytes = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
  return new TextDecoder("utf-8", { fatal: true }).decode(bytes);
}

/** The view's HTML and its resource _meta.ui from a resources/read result. */
function viewOf(uri, r) {
  const contents = Array.isArray(r?.contents) ? r.contents : [];
  const c = contents.find((x) => isObject(x) && x.uri === uri) ?? contents.find(isObject);
  if (!c) throw new MCPError("protocol", `the server sent no content for the view ${uri}`);
  const mime = typeof c.mimeType === "string" ? c.mimeType.replace(/\s+/g, "").toLowerCase() : "";
  if (!mime.startsWith("text/html")) throw new MCPError("protocol", `the view ${uri} is ${JSON.stringify(c.mimeType ?? "of no type")}, not ${MIME}`);
  let html;
  try {
    html = typeof c.text === "string" ? c.text : typeof c.blob === "string" ? decodeBase64(c.blob) : undefined;
  } catch {
    throw new MCPError("protocol", `the view ${uri} is not valid base64 UTF-8 text`);
  }
  if (html === undefined) throw new MCPError("protocol", `the view ${uri} has neither text nor blob`);
  if (html.length > MAX_HTML) throw new MCPError("protocol", `the view ${uri} is larger than ${MAX_HTML} characters`);
  const ui = isObject(c._meta?.ui) ? c._meta.ui : {};
  return { html, csp: isObject(ui.csp) ? ui.csp : undefined, permissions: isObject(ui.permissions) ? ui.permissions : undefined, prefersBorder: ui.prefersBorder };
}

// The read is shared, so no caller's signal stops it; each caller stops
// waiting on its own.
function readView(client, uri, signal) {
  let byURI = resources.get(client);
  if (!byURI) resources.set(client, (byURI = new Map()));
  let p = byURI.get(uri);
  if (!p) {
    p = client.readResource(uri).then((r) => viewOf(uri, r));
    byURI.set(uri, p);
    p.catch(() => byURI.delete(uri));
  }
  if (!signal) return p;
  return new Promise((resolve, reject) => {
    const stop = () => reject(new MCPError("aborted", "aborted"));
    if (signal.aborted) return stop();
    signal.addEventListener("abort", stop, { once: true });
    p.then(resolve, reject).finally(() => signal.removeEventListener("abort", stop));
  });
}

const MAX_CONTEXT = 64 << 10; // a model context or message, as JSON

/**
 * One entry of ui/download-file's contents as the page gets it: {name,
 * mimeType, blob} for an embedded resource, {name, mimeType, uri} for a
 * resource_link. The name is the URI's last path segment, with nothing
 * that could name a directory or hide an extension.
 */
function downloadable(c) {
  if (!isObject(c)) throw new RPCError(INVALID_PARAMS, "ui/download-file contents must be resources or resource links");
  const r = c.type === "resource" ? c.resource : c.type === "resource_link" ? c : null;
  if (!isObject(r) || typeof r.uri !== "string" || r.uri === "") throw new RPCError(INVALID_PARAMS, "ui/download-file: each entry needs type resource (with resource.uri) or resource_link (with uri)");
  const mimeType = typeof r.mimeType === "string" && /^[\w.+-]+\/[\w.+-]+$/.test(r.mimeType) ? r.mimeType : "application/octet-stream";
  let name = "";
  try {
    name = decodeURIComponent(new URL(r.uri).pathname.split("/").pop() ?? "");
  } catch { /* not a URL: no name from it */ }
  name = name.replace(/[\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069/\\:*?"<>|]/g, "_").replace(/^\.+/, "").slice(0, 200) || "download";
  if (c.type === "resource_link") return { name, mimeType, uri: r.uri };
  if (typeof r.text === "string") return { name, mimeType, blob: new Blob([r.text], { type: mimeType }) };
  if (typeof r.blob !== "string") throw new RPCError(INVALID_PARAMS, "ui/download-file: an embedded resource needs text or a base64 blob");
  if (r.blob.length > (MAX_DOWNLOAD / 3) * 4 + 4) throw new RPCError(INVALID_PARAMS, `ui/download-file: the files are larger than ${MAX_DOWNLOAD} bytes`);
  let bytes;
  try {
    bytes = Uint8Array.from(atob(r.blob), (ch) => ch.charCodeAt(0));
  } catch {
    throw new RPCError(INVALID_PARAMS, "ui/download-file: a resource's blob is not base64");
  }
  return { name, mimeType, blob: new Blob([bytes], { type: mimeType }) };
}

/** A copy of what the view sent that is plain JSON of at most limit bytes. */
function plainJSON(v, what, limit = MAX_CONTEXT) {
  let json;
  try {
    json = JSON.stringify(v);
  } catch {
    throw new RPCError(INVALID_PARAMS, `${what} must be plain JSON`);
  }
  if (json.length > limit) throw new RPCError(INVALID_PARAMS, `${what} is larger than ${limit} bytes of JSON`);
  return JSON.parse(json);
}

/** The sandbox proxy's URL, refused on the page's own origin (the view would then run beside the page). */
function sandboxURL(s) {
  let u;
  try {
    u = new URL(String(s), location.href);
  } catch {
    throw invalid(`apps.render(): sandboxUrl ${JSON.stringify(String(s))} is not a URL`);
  }
  if (u.protocol !== "https:" && u.protocol !== "http:") throw invalid("apps.render(): sandboxUrl must be an http(s) URL");
  if (u.origin === location.origin) {
    throw invalid("apps.render(): sandboxUrl must be on another origin than the page (a sub-domain of its own), so that views never run on the page's origin; see docs/JSAPI.md, MCP Apps");
  }
  return u;
}

function checkOptions(element, o) {
  if (!(element instanceof Element)) throw invalid("apps.render(): element must be a DOM element to put the view in");
  if (!isObject(o)) throw invalid("apps.render(): options must be an object");
  if (!o.client === !o.catalog) throw invalid("apps.render(): pass one of client or catalog");
  if (o.catalog && typeof o.serverId !== "string") throw invalid("apps.render(): with a catalog, serverId names the server whose tool it is");
  if (o.sandboxUrl === undefined) throw invalid("apps.render(): sandboxUrl is required: the URL of sandbox.html on an origin of its own; see docs/JSAPI.md, MCP Apps");
  if (typeof o.tool !== "string" && !(isObject(o.tool) && typeof (o.tool.tool?.name ?? o.tool.name) === "string")) {
    throw invalid("apps.render(): tool must be a tool's name or a tool from listTools() or a catalog's tools()");
  }
  if (o.arguments !== undefined && !isObject(o.arguments)) throw invalid("apps.render(): arguments must be a plain object");
  if (o.inputPending !== undefined && typeof o.inputPending !== "boolean") throw invalid("apps.render(): inputPending must be a boolean");
  if (o.inputPending && (o.arguments !== undefined || o.result !== undefined)) {
    throw invalid("apps.render(): with inputPending, send the arguments with view.sendToolInput() (and the result after them), not as options");
  }
  if (o.result !== undefined && !isObject(o.result)) throw invalid("apps.render(): result must be a tool result object");
  if (o.theme !== undefined && !THEMES.includes(o.theme)) throw invalid(`apps.render(): theme must be one of ${THEMES.join(", ")}`);
  if (o.displayModes !== undefined && (!Array.isArray(o.displayModes) || o.displayModes.some((m) => !DISPLAY_MODES.includes(m)))) {
    throw invalid(`apps.render(): displayModes must list modes of ${DISPLAY_MODES.join(", ")}`);
  }
  for (const k of ["onMessage", "onOpenLink", "onModelContext", "onDownloadFile", "onSampling"]) {
    if (o[k] !== undefined && typeof o[k] !== "function") throw invalid(`apps.render(): ${k} must be a function`);
  }
  if (o.signal !== undefined && !(o.signal instanceof AbortSignal)) throw invalid("apps.render(): signal must be an AbortSignal");
  if (o.initTimeoutMs !== undefined && !(Number.isFinite(o.initTimeoutMs) && o.initTimeoutMs > 0 && o.initTimeoutMs <= 2 ** 31 - 1)) {
    throw invalid(`apps.render(): initTimeoutMs must be a positive number of milliseconds, at most ${2 ** 31 - 1}`);
  }
  if (o.offerTools !== undefined && typeof o.offerTools !== "boolean") throw invalid("apps.render(): offerTools must be a boolean");
  if (o.stateKey !== undefined && (typeof o.stateKey !== "string" || o.stateKey === "" || o.stateKey.length > MAX_STATE_KEY)) {
    throw invalid(`apps.render(): stateKey must be a non-empty string of at most ${MAX_STATE_KEY} characters that names this view instance (e.g. its conversation and tool call)`);
  }
  if (o.offerTools && !o.catalog) throw invalid("apps.render(): offerTools offers the view's own tools to a catalog's model: pass catalog (and serverId)");
  const problem = o.trust === undefined ? "" : trustProblem(o.trust);
  if (problem) throw invalid(`apps.render(): trust ${problem}; grant only what you trust this server's views to do (docs/JSAPI.md, MCP Apps)`);
}

/** The name of a tool as a server knows it, from a name, a listTools() tool or a catalog's tools() entry. */
const toolName = (t) => (typeof t === "string" ? t : t.tool?.name ?? t.name);

/**
 * Renders the view of a tool into element; see docs/JSAPI.md, MCP Apps.
 * Resolves an AppView once the view's HTML is read and its frame is in
 * the page (state "loading"); "ready" follows the view's initialization.
 */
export async function render(version, element, options = {}, views = null) {
  checkOptions(element, options);
  const sandbox = sandboxURL(options.sandboxUrl);
  const client = options.catalog ? options.catalog.server(options.serverId) : options.client;
  if (options.catalog) await connected(options.catalog, options.serverId, client, options.signal);
  const name = toolName(options.tool);
  const tools = await appTools(client, options.signal);
  const tool = tools.find((t) => t.name === name);
  if (!tool) throw invalid(`apps.render(): the server has no tool named ${JSON.stringify(name)}`);
  if (!tool.ui?.resourceUri) throw invalid(`apps.render(): the tool ${JSON.stringify(name)} has no view (no _meta.ui.resourceUri)`);
  const [view, storage] = await Promise.all([
    readView(client, tool.ui.resourceUri, options.signal),
    options.stateKey === undefined || !views ? null : ViewStorage.open(views, options.stateKey, client.url),
  ]);
  return new AppView(version, element, sandbox, client, tool, tools, view, options, storage);
}

/**
 * A catalog connects its servers as their tools are listed (an agent's
 * turn does): a view rendered before that, as a page shows a stored
 * conversation again as it loads, has its server connected first, or is
 * refused saying why the server is not.
 */
async function connected(cat, serverId, client, signal) {
  if (client.state === "connected") return;
  await cat.tools({ signal });
  if (client.state === "connected") return;
  const s = cat.status(serverId);
  const why = s.error?.message ? `: ${s.error.message}` : s.state === "needs_auth" ? ": it needs a sign-in (cat.authorize)" : "";
  throw new MCPError(s.error?.code ?? (s.state === "needs_auth" ? "auth_required" : "closed"), `apps.render(): the server ${JSON.stringify(serverId)} is ${s.state ?? "not in the catalog"}${why}; its view can be shown once it is connected`);
}

/** Every tool of the server with its ui (app-only tools included), as listTools() answers. */
async function appTools(client, signal) {
  const tools = await client.listTools({ signal });
  return Array.isArray(tools) ? tools : [];
}

/**
 * A view on the page. state: "loading" | "ready" | "closed" | "failed".
 * Events: ready, sizechange ({width, height}), message ({role, content}),
 * openlink ({url}), modelcontext ({content, structuredContent}), log
 * ({level, data}), toolschanged ({}: the view's own tools changed),
 * statesave ({size}: what the view keeps under stateKey was saved),
 * error (an MCPError), warning ({message}).
 */
export class AppView extends EventTarget {
  #state = "loading";
  #frame;
  #origin;
  #client;
  #tool;
  #tools;
  #view;
  #o;
  #sent = false; // the view's HTML went to the proxy
  #context;
  #result; // a result to send once the view is ready (and has its input)
  #input; // the tool's arguments, undefined while the page streams them (inputPending)
  #partial; // the last partial arguments, sent when the view is ready if the input is not
  #next = 1;
  #pending = new Map(); // our requests to the view: id → {resolve, reject}
  #version;
  #modes; // the display modes the page offers
  #csp; // the view's declared domains as kept
  #cancelled; // the reason of a cancel() before the view was ready
  #closing = null; // close()'s promise
  #asked = false; // the view sent ui/initialize
  #offersTools = false; // the view declared appCapabilities.tools
  #ready = null; // {promise, resolve}: resolved once the view is ready or ends
  #initTimer = null; // fails a view that does not initialize in time
  #calls = new AbortController(); // the view's calls through a catalog: aborted when it ends
  #abort = null; // the render's signal's listener
  #resize = null; // ResizeObserver of the frame's width
  #storage; // the view's storage kept under stateKey (a ViewStorage), or null
  /** The last ui/update-model-context of the view ({content?, structuredContent?}), or null. */
  modelContext = null;
  /** What was left out of the view's declarations, one sentence each. */
  warnings = [];
  /** The Content-Security-Policy the proxy puts first in the view's document. */
  policy;
  /** What the page granted the view beyond the default policy (render()'s trust). */
  trust;
  /** With offerTools: the catalog server whose tools are the view's own, once it is ready and offers some (kept after the view ends and the server leaves); else null. */
  offeredAs = null;
  /** render()'s stateKey: the view's storage is kept under it (and its server); else null. */
  stateKey;

  constructor(version, element, sandbox, client, tool, tools, view, o, storage) {
    super();
    this.stateKey = o.stateKey ?? null;
    this.#storage = storage;
    this.#version = version;
    this.#origin = sandbox.origin;
    this.#client = client;
    this.#tool = tool;
    this.#tools = tools.filter(callable);
    this.#view = view;
    this.#o = o;
    this.#result = o.result;
    this.#input = o.inputPending ? undefined : o.arguments ?? {};
    this.serverId = o.serverId ?? null;
    this.tool = tool.name;
    this.resourceUri = tool.ui.resourceUri;
    const modes = (this.#modes = [...(o.displayModes ?? ["inline"])]);
    this.displayMode = modes.includes("inline") ? "inline" : modes[0] ?? "inline";
    this.#context = {
      theme: o.theme ?? (matchMedia?.("(prefers-color-scheme: dark)").matches ? "dark" : "light"),
      displayMode: this.displayMode,
      availableDisplayModes: [...modes], // narrowed to the view's own at ui/initialize
      locale: navigator.language,
      timeZone: Intl.DateTimeFormat().resolvedOptions().timeZone,
      platform: "web",
      userAgent: `mcpwasm/${version}`,
      toolInfo: { tool: publicTool(tool) },
    };
    this.trust = [...new Set(o.trust ?? [])];
    const checked = policy(view.csp, [location.origin, sandbox.origin], this.trust);
    this.#csp = checked.kept;
    // The proxy builds the same policy from the same declaration, origins
    // (the page's and its own) and grants, so this is the one the view gets.
    this.policy = checked.policy;
    console.debug(`mcp: apps: the view ${this.resourceUri} runs under the policy "${checked.policy}"`);
    for (const d of checked.dropped) this.#warn(`the view ${this.resourceUri} declares ${d.list} entry ${JSON.stringify(d.domain)}, which ${d.problem}; it is left out of the view's policy`);
    for (const g of this.trust) this.#warn(`the page lets the view ${this.resourceUri} ${TRUST[g].what} (trust "${g}"), beyond the specification's default policy`);
    if (storage) {
      if (storage.problem) this.#warn(storage.problem);
      storage.onKept = (items, error) => {
        if (error) this.#warn(`what the view ${this.resourceUri} keeps under stateKey ${JSON.stringify(this.stateKey)} could not be saved: ${asMCPError(error).message}`);
        else this.#emit("statesave", { size: sizeOf(items) });
      };
    }
    const f = (this.#frame = document.createElement("iframe"));
    // allow-forms lets the view's forms run their submit handlers; its
    // policy (form-action 'none') lets no form leave the view.
    f.setAttribute("sandbox", "allow-scripts allow-same-origin allow-forms");
    const features = allow(view.permissions);
    if (features) f.setAttribute("allow", features);
    f.setAttribute("referrerpolicy", "no-referrer");
    f.setAttribute("title", tool.title ?? tool.name);
    f.dataset.mcpView = this.resourceUri;
    f.style.cssText = "display:block;width:100%;height:150px;border:0;";
    f.src = sandbox.href;
    // A proxy that never says it is ready is a page that is not
    // sandbox.html (a wrong sandboxUrl) or a frame the page's policy
    // blocked (frame-src): say so rather than wait.
    f.addEventListener("load", () => {
      setTimeout(() => {
        if (this.#sent || this.#state !== "loading") return;
        this.#fail(new MCPError("network", `the sandbox proxy at ${sandbox.href} did not start: check that sandboxUrl serves the package's apps/sandbox.html and that the page's Content-Security-Policy allows it in frame-src`));
      }, PROXY_WAIT_MS);
    }, { once: true });
    addEventListener("message", this.#onMessage);
    element.appendChild(f);
    if (typeof ResizeObserver === "function") {
      this.#resize = new ResizeObserver(() => {
        const d = this.#dimensions();
        if (d.width === this.#context.containerDimensions?.width) return;
        this.#context.containerDimensions = d;
        if (this.#state === "ready") this.#notify("ui/notifications/host-context-changed", { containerDimensions: d });
      });
      this.#resize.observe(f);
    }
    if (o.signal) {
      this.#abort = () => this.close();
      o.signal.addEventListener("abort", this.#abort, { once: true });
    }
  }

  /** "loading" | "ready" | "closed" | "failed" */
  get state() { return this.#state; }
  /** The iframe of the sandbox proxy. */
  get frame() { return this.#frame; }
  /** The host context the view was given and its changes since. */
  get hostContext() { return structuredClone(this.#context); }
  /** Whether the view offers tools of its own (it declared appCapabilities.tools); false until it is ready. */
  get offersTools() { return this.#offersTools; }
  /** With stateKey: a copy of the view's storage (its localStorage's names and values) as last sent; else null. */
  get storage() { return this.#storage ? { ...this.#storage.items } : null; }

  /**
   * The view's own tools (tools/list to the view, every page of it), once
   * it is ready. Rejects when the view offers none, ends, or does not
   * answer within timeoutMs (60 s).
   */
  async listTools(options = {}) {
    const { signal, ms } = callOptions("listTools", options);
    await this.#whenReady("listTools", signal);
    const tools = [];
    let cursor;
    do {
      const r = await this.#request("tools/list", cursor === undefined ? {} : { cursor }, ms, signal);
      if (!isObject(r) || !Array.isArray(r.tools)) throw new MCPError("protocol", `the view ${this.resourceUri} answered tools/list without a list of tools`);
      for (const t of r.tools) {
        const problem = viewToolProblem(t);
        if (problem) this.#warn(`the view ${this.resourceUri} lists a tool that ${problem}; it is left out`);
        else tools.push(t);
      }
      if (tools.length > MAX_VIEW_TOOLS) throw new MCPError("protocol", `the view ${this.resourceUri} lists more than ${MAX_VIEW_TOOLS} tools`);
      cursor = typeof r.nextCursor === "string" && r.nextCursor !== "" ? r.nextCursor : undefined;
    } while (cursor !== undefined);
    return tools;
  }

  /**
   * Calls one of the view's own tools (tools/call to the view), once it is
   * ready; resolves its result ({content, structuredContent?, isError?}).
   * An abort sends notifications/cancelled and rejects "aborted".
   */
  async callTool(name, args = {}, options = {}) {
    if (typeof name !== "string" || name === "") throw invalid("callTool(): name must be a non-empty string");
    if (!isObject(args)) throw invalid("callTool(): arguments must be a plain object");
    const { signal, ms } = callOptions("callTool", options);
    await this.#whenReady("callTool", signal);
    const r = await this.#request("tools/call", { name, arguments: args }, ms, signal);
    if (!isObject(r) || !Array.isArray(r.content)) throw new MCPError("protocol", `the view ${this.resourceUri} answered tools/call of ${JSON.stringify(name)} without a result's content`);
    return r;
  }

  // offerTools: the catalog's model gets the view's own tools, under the
  // catalog's rules (its approval policy and approve() among them).
  #offer() {
    try {
      this.offeredAs = this.#o.catalog._offerView(this);
    } catch (e) {
      this.#warn(`the tools of the view ${this.resourceUri} could not be offered to the catalog: ${asMCPError(e).message}`);
    }
  }

  // Resolves once the view is ready and offers tools; rejects when it
  // ends first, declares no tools, or signal aborts.
  async #whenReady(what, signal) {
    if (signal?.aborted) throw new MCPError("aborted", `${what}(): aborted`);
    if (this.#state === "loading") {
      this.#ready ??= (() => {
        let resolve;
        const promise = new Promise((res) => { resolve = res; });
        return { promise, resolve };
      })();
      let onAbort;
      const aborted = signal && new Promise((_, reject) => {
        onAbort = () => reject(new MCPError("aborted", `${what}(): aborted`));
        signal.addEventListener("abort", onAbort, { once: true });
      });
      try {
        await (aborted ? Promise.race([this.#ready.promise, aborted]) : this.#ready.promise);
      } finally {
        if (onAbort) signal.removeEventListener("abort", onAbort);
      }
    }
    if (this.#state !== "ready") throw new MCPError("closed", `${what}(): the view ${this.resourceUri} ${this.#state === "failed" ? "failed" : "is closed"}`);
    if (!this.#offersTools) throw new MCPError("protocol", `${what}(): the view ${this.resourceUri} offers no tools of its own (it declared no appCapabilities.tools)`);
  }

  // Also kept in warnings: those of the constructor fire after render()
  // resolves, once the page could listen.
  #warn(message) {
    console.warn(`mcp: apps: ${message}`);
    this.warnings.push(message);
    setTimeout(() => this.dispatchEvent(new CustomEvent("warning", { detail: { message } })));
  }

  #emit(type, detail) { this.dispatchEvent(new CustomEvent(type, { detail })); }

  #post(msg) { this.#frame.contentWindow?.postMessage(msg, this.#origin); }

  #notify(method, params) { this.#post({ jsonrpc: "2.0", method, params }); }

  // A request to the view; an abort of signal tells the view
  // (notifications/cancelled) and rejects "aborted".
  #request(method, params, ms, signal) {
    const id = `host-${this.#next++}`;
    if (signal?.aborted) return Promise.reject(new MCPError("aborted", `${method} to the view was aborted`));
    return new Promise((resolve, reject) => {
      const done = () => {
        clearTimeout(timer);
        signal?.removeEventListener("abort", onAbort);
      };
      const timer = setTimeout(() => {
        this.#pending.delete(id);
        done();
        reject(new MCPError("timeout", `the view did not answer ${method} within ${ms} ms`));
      }, ms);
      const onAbort = () => {
        if (!this.#pending.delete(id)) return;
        done();
        this.#notify("notifications/cancelled", { requestId: id, reason: "the page aborted the request" });
        reject(new MCPError("aborted", `${method} to the view was aborted`));
      };
      signal?.addEventListener("abort", onAbort, { once: true });
      this.#pending.set(id, { resolve: (v) => { done(); resolve(v); }, reject: (e) => { done(); reject(e); } });
      this.#post({ jsonrpc: "2.0", id, method, params });
    });
  }

  // Only the proxy's window, from the sandbox origin: anything else (the
  // page's other frames, a view posting to the top window) is ignored.
  #onMessage = (e) => {
    if (this.#state === "closed" || e.source !== this.#frame.contentWindow || e.origin !== this.#origin) return;
    const d = e.data;
    if (!isMessage(d)) return;
    if (typeof d.method === "string") {
      if (d.id === undefined) this.#onNotification(d.method, d.params);
      else if (typeof d.id === "string" || typeof d.id === "number") this.#answer(d.id, d.method, d.params);
      return;
    }
    const p = this.#pending.get(d.id);
    if (!p) return;
    this.#pending.delete(d.id);
    if (isObject(d.error)) p.reject(new MCPError("protocol", `the view answered: ${String(d.error.message ?? "an error")}`, typeof d.error.code === "number" ? { rpcCode: d.error.code } : {}));
    else p.resolve(d.result);
  };

  #onNotification(method, params) {
    switch (method) {
      case PROXY_READY:
        if (this.#sent || this.#state !== "loading") return; // once: the view cannot have its HTML sent again
        this.#sent = true;
        this.#notify(RESOURCE_READY, {
          html: this.#view.html, csp: this.#view.csp ?? {}, permissions: this.#view.permissions ?? {}, trust: this.trust,
          ...(this.#storage && { storage: this.#storage.items }),
        });
        this.#awaitInit(this.#o.initTimeoutMs ?? INIT_TIMEOUT_MS);
        return;
      case "ui/notifications/initialized":
        if (this.#state !== "loading") return;
        clearTimeout(this.#initTimer);
        this.#state = "ready";
        if (this.#input === undefined) {
          if (this.#partial) this.#notify("ui/notifications/tool-input-partial", { arguments: this.#partial });
        } else {
          this.#notify("ui/notifications/tool-input", { arguments: this.#input });
          if (this.#result) this.#notify("ui/notifications/tool-result", this.#result);
        }
        if (!this.#result && this.#cancelled !== undefined) this.#notify("ui/notifications/tool-cancelled", this.#cancelled);
        this.#ready?.resolve();
        if (this.#o.offerTools && this.#offersTools) this.#offer();
        this.#emit("ready", {});
        return;
      case VIEW_GONE:
        this.#fail(new MCPError("protocol", `the view ${this.resourceUri} left its document and was removed`));
        return;
      case "ui/notifications/size-changed": {
        const size = {};
        for (const k of ["width", "height"]) if (Number.isFinite(params?.[k]) && params[k] >= 0) size[k] = Math.ceil(params[k]);
        if (size.height !== undefined) this.#frame.style.height = `${Math.min(size.height, 100000)}px`;
        this.#emit("sizechange", size);
        return;
      }
      case "notifications/message":
        this.#emit("log", { level: String(params?.level ?? "info"), data: params?.data });
        return;
      case "ui/notifications/request-teardown":
        this.#emit("teardownrequest", {});
        return;
      case STORAGE_CHANGED:
        if (this.#storage && !this.#storage.changed(params?.items)) {
          this.#warn(`the view ${this.resourceUri} sent a storage that is not names and string values of at most ${MAX_VIEW_STORAGE} characters; it is not kept`);
        }
        return;
      case "notifications/tools/list_changed":
        if (this.#state !== "ready" || !this.#offersTools) return;
        if (this.offeredAs) this.#o.catalog._viewChanged(this.offeredAs);
        this.#emit("toolschanged", {});
    }
  }

  async #answer(id, method, params) {
    let reply;
    try {
      reply = { jsonrpc: "2.0", id, result: (await this.#handle(method, isObject(params) ? params : {})) ?? {} };
    } catch (e) {
      const code = e instanceof RPCError ? e.code : INTERNAL;
      reply = { jsonrpc: "2.0", id, error: { code, message: e?.message ?? String(e) } };
    }
    if (this.#state !== "closed") this.#post(reply);
  }

  async #handle(method, params) {
    switch (method) {
      case "ui/initialize": {
        this.#asked = true;
        this.#offersTools = isObject(params.appCapabilities?.tools);
        // Only modes both offer: the page's displayModes and the view's
        // own list (inline when it declares none).
        const declared = params.appCapabilities?.availableDisplayModes;
        const views = Array.isArray(declared) ? declared.filter((m) => DISPLAY_MODES.includes(m)) : ["inline"];
        this.#context.availableDisplayModes = this.#modes.filter((m) => views.includes(m));
        this.#context.containerDimensions = this.#dimensions();
        return {
          protocolVersion: PROTOCOL,
          hostInfo: { name: "mcpwasm", version: this.#version },
          hostCapabilities: this.#capabilities(),
          hostContext: this.#context,
        };
      }
      case "ping":
        return {};
      case "tools/call":
        return this.#callServerTool(params);
      case "tools/list":
        return { tools: (await this.#serverTools()).map(publicTool) }; // only tools views may call
      case "resources/read":
        if (typeof params.uri !== "string" || params.uri === "") throw new RPCError(INVALID_PARAMS, "resources/read needs a uri");
        return this.#client.readResource(params.uri);
      case "resources/list": {
        const r = await this.#client.listResources(); // every page
        return Array.isArray(r) ? { resources: r } : r;
      }
      case "resources/templates/list": {
        const r = await this.#client.listResourceTemplates();
        return Array.isArray(r) ? { resourceTemplates: r } : r;
      }
      case "ui/open-link":
        return this.#openLink(params);
      case "ui/download-file":
        return this.#downloadFile(params);
      case "ui/message":
        return this.#message(params);
      case "sampling/createMessage":
        return this.#sample(params);
      case "ui/update-model-context":
        return this.#modelContext(params);
      case "ui/request-display-mode": {
        const modes = this.#context.availableDisplayModes;
        if (modes.includes(params.mode) && params.mode !== this.displayMode) {
          this.displayMode = this.#context.displayMode = params.mode;
          // Before initialized, the mode reaches the view in ui/initialize's context.
          if (this.#state === "ready") this.#notify("ui/notifications/host-context-changed", { displayMode: params.mode });
          this.#emit("displaymodechange", { mode: params.mode });
        }
        return { mode: this.displayMode };
      }
      default:
        throw new RPCError(METHOD_NOT_FOUND, `this host does not handle ${method}`);
    }
  }

  // The frame's width is the page's; its height follows the view.
  #dimensions() { return { width: Math.round(this.#frame.clientWidth) }; }

  #capabilities() {
    const o = this.#o;
    const caps = { serverTools: {}, serverResources: {}, logging: {}, sandbox: { csp: this.#csp, permissions: this.#view.permissions ?? {} } };
    if (o.onOpenLink) caps.openLinks = {};
    if (o.onDownloadFile) caps.downloadFile = {};
    if (o.onMessage) caps.message = { text: {}, image: {}, resource: {}, resourceLink: {} };
    if (o.onSampling) caps.sampling = {};
    caps.updateModelContext = { text: {}, structuredContent: {} }; // what reaches a model
    return caps;
  }

  // With a catalog, its rules say which tools a view may call (its
  // allow and deny lists too).
  async #serverTools() {
    const cat = this.#o.catalog;
    this.#tools = cat ? (await cat._viewTools(this.serverId, this.#calls.signal)) ?? [] : (await appTools(this.#client)).filter(callable);
    return this.#tools;
  }

  // A view calls tools of its own server that let views call them. With a
  // catalog, the call is the catalog's: its allow and deny lists, its
  // approval policy and approve() (asked with via "app") decide, as they
  // do a model's calls.
  async #callServerTool(params) {
    const name = params.name;
    if (typeof name !== "string" || name === "") throw new RPCError(INVALID_PARAMS, "tools/call needs a tool name");
    const args = params.arguments ?? {};
    if (!isObject(args)) throw new RPCError(INVALID_PARAMS, "tools/call arguments must be an object");
    const cat = this.#o.catalog;
    if (cat) {
      try {
        return publicResult(await cat._viewCall(this.serverId, name, args, this.#calls.signal));
      } catch (e) {
        const err = asMCPError(e);
        if (err.code === "invalid_argument") throw new RPCError(INVALID_PARAMS, err.message.replace(/^catalog: /, ""));
        throw err;
      }
    }
    let tool = this.#tools.find((t) => t.name === name);
    if (!tool) tool = (await this.#serverTools()).find((t) => t.name === name);
    if (!tool) {
      const all = await appTools(this.#client);
      if (all.some((t) => t.name === name)) throw new RPCError(INVALID_PARAMS, `the tool ${JSON.stringify(name)} is for the model only; a view may not call it`);
      throw new RPCError(INVALID_PARAMS, `the server has no tool named ${JSON.stringify(name)}`);
    }
    try {
      return publicResult(await this.#client.callTool(name, args));
    } catch (e) {
      const err = asMCPError(e);
      return { content: [{ type: "text", text: `The call of ${name} failed: ${err.message}` }], isError: true };
    }
  }

  async #openLink(params) {
    let url;
    try {
      url = new URL(params.url);
    } catch {
      throw new RPCError(INVALID_PARAMS, "ui/open-link needs an absolute URL");
    }
    if (url.protocol !== "https:" && url.protocol !== "http:") throw new RPCError(INVALID_PARAMS, "ui/open-link opens http(s) URLs only");
    this.#emit("openlink", { url: url.href });
    if (!this.#o.onOpenLink) return { isError: true };
    const ok = await this.#o.onOpenLink(url.href, { view: this });
    return ok === false ? { isError: true } : {};
  }

  // The view's files, each a Blob (embedded text or base64) or, for a
  // resource_link, its URI for the page to fetch or read if it wants;
  // the page's handler decides whether to save them (it should ask).
  async #downloadFile(params) {
    if (!Array.isArray(params.contents) || params.contents.length === 0) throw new RPCError(INVALID_PARAMS, "ui/download-file needs a non-empty contents list");
    const files = [];
    let size = 0;
    for (const c of params.contents) {
      const f = downloadable(c);
      size += f.blob?.size ?? 0;
      if (size > MAX_DOWNLOAD) throw new RPCError(INVALID_PARAMS, `ui/download-file: the files are larger than ${MAX_DOWNLOAD} bytes`);
      files.push(f);
    }
    this.#emit("downloadfile", { files: files.map(({ name, mimeType, blob, uri }) => ({ name, mimeType, size: blob?.size, uri })) });
    if (!this.#o.onDownloadFile) return { isError: true };
    const ok = await this.#o.onDownloadFile(files, { view: this });
    return ok === false ? { isError: true } : {};
  }

  async #message(params) {
    if (params.role !== "user" || !Array.isArray(params.content)) throw new RPCError(INVALID_PARAMS, "ui/message needs role \"user\" and a content list");
    const msg = { role: "user", content: plainJSON(params.content, "ui/message content") };
    this.#emit("message", msg);
    if (!this.#o.onMessage) return { isError: true };
    const ok = await this.#o.onMessage(msg, { view: this });
    return ok === false ? { isError: true } : {};
  }

  // sampling/createMessage: the view asks for a model's completion. The
  // page's onSampling answers it (its model, its costs, its person's
  // consent); without one the method is not offered. Tools in a request
  // are refused: this host does not offer sampling.tools.
  async #sample(params) {
    if (!this.#o.onSampling) throw new RPCError(METHOD_NOT_FOUND, "this host takes no sampling/createMessage from views (the page gave render() no onSampling)");
    const { messages, maxTokens } = params;
    if (!Array.isArray(messages) || messages.length === 0) throw new RPCError(INVALID_PARAMS, "sampling/createMessage needs a non-empty messages list");
    for (const m of messages) {
      if (!isObject(m) || (m.role !== "user" && m.role !== "assistant") || !(isObject(m.content) || Array.isArray(m.content))) {
        throw new RPCError(INVALID_PARAMS, "sampling/createMessage: each message needs role \"user\" or \"assistant\" and a content block (or a list of them)");
      }
    }
    if (!Number.isInteger(maxTokens) || maxTokens <= 0) throw new RPCError(INVALID_PARAMS, "sampling/createMessage needs maxTokens, a positive integer");
    if (params.tools !== undefined || params.toolChoice !== undefined) throw new RPCError(INVALID_PARAMS, "sampling/createMessage: this host offers no tools to a view's sampling (hostCapabilities.sampling has no tools)");
    const request = plainJSON(params, "sampling/createMessage", MAX_SAMPLING);
    this.#emit("sampling", { request });
    const r = await this.#o.onSampling(request, { view: this, signal: this.#calls.signal });
    if (!isObject(r) || r.role !== "assistant" || !(isObject(r.content) || Array.isArray(r.content)) || typeof r.model !== "string") {
      throw new RPCError(INTERNAL, "the page's onSampling did not resolve a message {role: \"assistant\", content, model}");
    }
    return plainJSON(r, "onSampling's result", MAX_SAMPLING);
  }

  async #modelContext(params) {
    const ctx = {};
    if (params.content !== undefined) {
      if (!Array.isArray(params.content)) throw new RPCError(INVALID_PARAMS, "ui/update-model-context content must be a list");
      ctx.content = params.content;
    }
    if (params.structuredContent !== undefined) {
      if (!isObject(params.structuredContent)) throw new RPCError(INVALID_PARAMS, "ui/update-model-context structuredContent must be an object");
      ctx.structuredContent = params.structuredContent;
    }
    const kept = (this.modelContext = plainJSON(ctx, "ui/update-model-context")); // the last one counts
    this.#o.catalog?._viewContext(this, kept);
    this.#emit("modelcontext", kept);
    await this.#o.onModelContext?.(kept, { view: this });
    return {};
  }

  /**
   * With inputPending: the model's arguments so far (the agent's
   * toolcalldelta), as ui/notifications/tool-input-partial; before the view
   * is ready only the last one is kept. Refused once sendToolInput sent the
   * whole input.
   */
  sendToolInputPartial(args) {
    if (!isObject(args)) throw invalid("sendToolInputPartial(): arguments must be a plain object");
    if (this.#input !== undefined) throw invalid("sendToolInputPartial(): the view already has the tool's whole input");
    this.#partial = args; // as sendToolInput's: the model's arguments have no size bound of the host's
    if (this.#state === "ready") this.#notify("ui/notifications/tool-input-partial", { arguments: this.#partial });
  }

  /**
   * With inputPending: the tool's whole arguments, once (now, or once the
   * view is ready); a result sent before follows it.
   */
  sendToolInput(args) {
    if (!isObject(args)) throw invalid("sendToolInput(): arguments must be a plain object");
    if (this.#input !== undefined) throw invalid("sendToolInput(): the view already has the tool's input");
    this.#input = args;
    if (this.#state !== "ready") return;
    this.#notify("ui/notifications/tool-input", { arguments: args });
    if (this.#result) this.#notify("ui/notifications/tool-result", this.#result);
  }

  /** Sends the tool's result (now, or once the view is ready and has its input). */
  sendToolResult(result) {
    if (!isObject(result)) throw invalid("sendToolResult(): result must be a tool result object");
    this.#result = result;
    if (this.#state === "ready" && this.#input !== undefined) this.#notify("ui/notifications/tool-result", result);
  }

  /** Tells the view that its tool call was cancelled (now, or once it is ready). */
  cancel(reason) {
    const params = reason === undefined ? {} : { reason: String(reason) };
    if (this.#state === "ready") this.#notify("ui/notifications/tool-cancelled", params);
    else if (this.#state === "loading") this.#cancelled = params;
  }

  /** Changes the theme the view was given ("light" or "dark"). */
  setTheme(theme) {
    if (!THEMES.includes(theme)) throw invalid(`setTheme(): theme must be one of ${THEMES.join(", ")}`);
    if (this.#context.theme === theme) return;
    this.#context.theme = theme;
    if (this.#state === "ready") this.#notify("ui/notifications/host-context-changed", { theme });
  }

  /**
   * Asks the view to tear down (ui/resource-teardown, answered within 3 s
   * or not), then removes its frame; with stateKey, resolves once what the
   * view wrote is saved. Later messages from it are ignored.
   */
  close() {
    this.#closing ??= (async () => {
      if (this.#state === "ready") {
        try {
          await this.#request("ui/resource-teardown", {}, TEARDOWN_MS);
        } catch (e) {
          // A view with nothing to tear down may say so ("method not
          // found", as the App SDK does without a handler): an answer.
          if (e?.rpcCode !== METHOD_NOT_FOUND) this.#emit("error", asMCPError(e));
        }
      }
      if (this.#storage) {
        // What the view wrote as it tore down is posted a moment before
        // or after its answer: keep it too.
        if (this.#state === "ready") await new Promise((r) => setTimeout(r));
        this.#end("closed");
        await this.#storage.flush();
        return;
      }
      this.#end("closed");
    })();
    return this.#closing;
  }

  // A view that never initializes would show a frame that does nothing,
  // in state "loading" for ever: it fails, saying how far it got.
  #awaitInit(ms) {
    this.#initTimer = setTimeout(() => {
      if (this.#state !== "loading") return;
      const s = ms % 1000 === 0 ? `${ms / 1000} s` : `${ms} ms`;
      const got = this.#asked ? "it asked ui/initialize but never sent ui/notifications/initialized" : "it never sent ui/initialize";
      this.#fail(new MCPError("timeout", `the view ${this.resourceUri} did not initialize within ${s}: ${got}; check the browser console for the view's errors (its policy may refuse a script it needs), or raise initTimeoutMs`));
    }, ms);
  }

  #fail(err) {
    this.#end("failed");
    this.#emit("error", err);
  }

  // Everything the view held goes: its frame, listeners, observer,
  // pending requests and model context.
  #end(state) {
    if (this.#state === "closed" || this.#state === "failed") return;
    this.#state = state;
    clearTimeout(this.#initTimer);
    this.#calls.abort(); // its calls in flight, and their approval, end with it
    this.#o.catalog?._viewContext(this, null);
    if (this.offeredAs) this.#o.catalog._withdrawView(this.offeredAs);
    this.#resize?.disconnect();
    if (this.#abort) this.#o.signal.removeEventListener("abort", this.#abort);
    removeEventListener("message", this.#onMessage);
    this.#ready?.resolve(); // its waiters see the state
    for (const p of this.#pending.values()) p.reject(new MCPError("closed", "the view is closed"));
    this.#pending.clear();
    this.#frame.remove();
  }
}

/** The signal and the timeout of listTools() and callTool() options. */
function callOptions(what, o) {
  if (!isObject(o)) throw invalid(`${what}(): options must be an object`);
  if (o.signal !== undefined && !(o.signal instanceof AbortSignal)) throw invalid(`${what}(): signal must be an AbortSignal`);
  if (o.timeoutMs !== undefined && !(Number.isFinite(o.timeoutMs) && o.timeoutMs > 0 && o.timeoutMs <= 2 ** 31 - 1)) {
    throw invalid(`${what}(): timeoutMs must be a positive number of milliseconds, at most ${2 ** 31 - 1}`);
  }
  return { signal: o.signal, ms: o.timeoutMs ?? VIEW_CALL_MS };
}

/** What is wrong with a tool a view lists, or null: a name and an object input schema are required. */
function viewToolProblem(t) {
  if (!isObject(t)) return "is not an object";
  if (typeof t.name !== "string" || t.name === "") return "has no name";
  if (!isObject(t.inputSchema) || t.inputSchema.type !== "object") return `(${JSON.stringify(t.name).slice(0, 80)}) has no object inputSchema`;
  return null;
}

/** Whether a view may call the tool (its visibility lists "app"). */
const callable = (t) => !t.ui || !Array.isArray(t.ui.visibility) || t.ui.visibility.includes("app");

/** A tool's result as the view sees it: the server's, without what this library added. */
function publicResult(r) {
  const out = { content: r.content ?? [] };
  if (r.structuredContent !== undefined) out.structuredContent = r.structuredContent;
  if (r.isError) out.isError = true;
  if (r._meta !== undefined) out._meta = r._meta;
  return out;
}

/** A tool as the view sees it: the server's definition, without what this library added. */
function publicTool(t) {
  const { ui: _ui, ...rest } = t;
  return rest;
}
