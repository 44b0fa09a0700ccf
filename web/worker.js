// worker.js — the Go runtime of mcp.js off the page's main thread (see
// docs/JSAPI.md, "Runtimes"). mcp.js starts it as a SharedWorker (one
// runtime per origin and build, shared by every tab) or a dedicated Worker,
// and talks to it over a MessagePort with the messages of remote.js: the
// same operations (OPS) and host callbacks (HOSTS) of jsapi.js as the
// main-thread mode, checked on both sides.
//
// The page chooses the ids of its clients, catalogs, agents and agent runs
// (so that it creates them synchronously); the worker prefixes them with
// the tab's own ("t3.") on the way to Go and strips that prefix from a
// host callback's target on the way back, which names the tab to call. It
// releases a tab's objects when the tab says goodbye or its port closes.
// Page-wide callbacks run here: Web Locks, the grant notices between
// runtimes (BroadcastChannel); saveHints goes to a tab (workers have no
// localStorage).
import { GONE_REASON, HOST_CALLBACKS, HOSTS, ID_FIELDS, OPS, TARGET_SEP } from "./jsapi.js";
import { acquireLock } from "./auth.js";
import { PROTOCOL, wireError } from "./remote.js";
import { instantiate, invokeJSON, listenGrants, newGo, run } from "./boot.js";
import { skewClockForTest } from "./testhooks.js";
import { contentNamed } from "./modulecache.js";

/** An Error like the page's MCPError, for Go's error factory (crosses as wireError). */
function makeError(code, message, status, detail, rpcCode) {
  const e = new Error(message);
  e.name = "MCPError";
  Object.assign(e, { code, status, detail, rpcCode });
  return e;
}

const runtimes = new Map(); // build key → Promise<Runtime>
let alive = null; // Promise of the name of the Web Lock this worker holds while it lives

/**
 * Takes a Web Lock that this worker holds until it ends, and resolves
 * with its name (null without Web Locks). A page asks for the same lock:
 * the browser grants it only when this worker is gone, however it ended
 * (killed, crashed, closed), which no message would say.
 */
function holdAlive() {
  alive ??= new Promise((resolve) => {
    const locks = globalThis.navigator?.locks;
    if (!locks) return resolve(null);
    const name = `mcpwasm-worker ${crypto.randomUUID?.() ?? Math.random().toString(36).slice(2)}`;
    locks.request(name, () => {
      resolve(name);
      return new Promise(() => {}); // held for the worker's life
    }).catch(() => resolve(null));
  });
  return alive;
}
let keysProbe = null; // Promise of keysRefusal()'s answer, once per worker

/**
 * Why this worker cannot keep the store's keys, or null when it can. The
 * store keeps its AES-GCM and DPoP keys as non-extractable CryptoKeys in
 * IndexedDB, which structured-clones them; WebKit (Safari) cannot clone a
 * CryptoKey in a SharedWorker (a DataCloneError, for IndexedDB and
 * postMessage alike), while its dedicated Workers can. Asked before Go is
 * loaded, so that the page runs Go where the keys work. When WebCrypto or
 * structuredClone is missing, or generateKey fails, the answer is null:
 * the store then says what is missing itself.
 */
function keysRefusal() {
  keysProbe ??= (async () => {
    const subtle = globalThis.crypto?.subtle;
    if (!subtle || typeof structuredClone !== "function") return null;
    const key = await subtle.generateKey({ name: "AES-GCM", length: 256 }, false, ["encrypt", "decrypt"]);
    try {
      structuredClone(key);
      return null;
    } catch (e) {
      return `${e?.name ?? "Error"}: ${e?.message ?? e}`;
    }
  })().catch(() => null);
  return keysProbe;
}

/** One Go runtime of one build of mcp.wasm and the tabs it serves. */
class Runtime {
  tabs = new Set();
  byPrefix = new Map(); // a tab's id prefix → Tab
  api = null;
  exited = null; // the wire error once Go ended
  grants = null; // the BroadcastChannel of grant notices

  constructor(key) {
    this.key = key;
    /** Tells runtimes apart (tests: which tabs share one). */
    this.id = `${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 10)}`;
  }

  async start(wasmURL, hints, progress) {
    const go = newGo();
    const instance = await instantiate(wasmURL, go, { onProgress: progress, makeError });
    this.api = await run(go, instance, { makeError, host: this.#callbacks(), hints }, (e) => this.#exit(e === undefined
      ? { code: "closed", message: "the mcpwasm runtime exited; the next call starts a new one" }
      : { code: "closed", message: `the mcpwasm runtime crashed (${e?.message ?? e}); the next call starts a new one` }));
    // Other runtimes' grant changes (older builds, main-thread or
    // dedicated-worker tabs): this runtime applies them to its clients.
    this.grants = listenGrants((change) => this.invoke("grants.apply", change).catch(() => {}));
    // The worker's own online and offline events (WorkerGlobalScope has
    // them): the network is the same for every tab it serves.
    for (const online of [true, false]) {
      globalThis.addEventListener?.(online ? "online" : "offline", () => this.invoke("network.changed", { online }).catch(() => {}));
    }
    return this;
  }

  /** Ends as a crash would (a test hook). */
  crash() {
    this.#exit({ code: "closed", message: "the mcpwasm runtime crashed (a test asked it to); the next call starts a new one" });
  }

  #exit(err) {
    if (this.exited) return;
    this.exited = err;
    runtimes.delete(this.key);
    for (const tab of this.tabs) tab.post({ t: "exit", error: err });
    this.grants?.close();
  }

  /** Calls op with args (an object); a Promise of its parsed result. */
  invoke(op, args, signal, onProgress) {
    if (this.exited) return Promise.reject(this.exited);
    return invokeJSON(this.api, op, args, { signal, onProgress });
  }

  /**
   * The host object Go calls: a targeted callback (HOST_CALLBACKS) goes
   * to the tab that owns its target, the page-wide ones run here.
   */
  #callbacks() {
    // A target is "<kind>:<tab prefix><the page's id>"; the tab sees "<kind>:<the page's id>".
    const forward = (name, reply) => (target, ...args) => {
      const sep = target.indexOf(TARGET_SEP);
      const dot = target.indexOf(".", sep);
      const tab = dot < 0 ? undefined : this.byPrefix.get(target.slice(sep + TARGET_SEP.length, dot + 1));
      if (!tab) {
        if (reply) return Promise.reject(makeError("closed", `${target.slice(0, sep)} is closed`));
        return undefined;
      }
      return tab.host(name, target.slice(0, sep + TARGET_SEP.length) + target.slice(dot + 1), args, reply);
    };
    const cb = {
      lock: acquireLock,
      announce: (json) => this.grants?.postMessage(JSON.parse(json)),
      // Hints go to localStorage, which only a page has: any tab keeps them.
      saveHints: (json) => this.tabs.values().next().value?.host("saveHints", null, [json], HOST_CALLBACKS.saveHints.reply),
    };
    for (const [name, { target, reply }] of Object.entries(HOST_CALLBACKS)) {
      if (target) cb[name] = forward(name, reply);
    }
    for (const name of HOSTS) {
      if (typeof cb[name] !== "function") throw new Error(`worker.js: host callback ${name} is missing`);
    }
    return cb;
  }
}

/**
 * What identifies a build of mcp.wasm, so that a page of a newer build
 * never uses a runtime started by an older one: its URL alone when the
 * URL's file name carries the module's content hash (the build's
 * mcp-<hash>.wasm, also as a bundler renames it); else its URL and
 * validator (the server's ETag, a content hash where the server makes
 * one), which costs a request.
 */
async function buildKey(wasmURL) {
  if (contentNamed(wasmURL)) return wasmURL;
  try {
    const r = await fetch(wasmURL, { method: "HEAD", cache: "no-cache" });
    return `${wasmURL}#${r.headers.get("ETag") ?? r.headers.get("Last-Modified") ?? r.headers.get("Content-Length") ?? ""}`;
  } catch {
    return wasmURL;
  }
}

let nextTab = 0;

/** One tab: its port, its objects and its calls in flight. */
class Tab {
  rt = null; // Runtime
  prefix = `t${++nextTab}.`; // before each of the tab's ids, in Go
  owned = { client: new Set(), catalog: new Set(), agent: new Set() }; // the page's ids, released at goodbye
  calls = new Map(); // call id → AbortController
  // The page's clients with authMode "redirect": the tab leaves while their
  // sign-in goes on, so its goodbye keeps them (and their calls) for the
  // return, which delivers the callback to this runtime.
  redirect = new Set();
  replies = new Map(); // host call id → {resolve, reject}
  nextHost = 0;
  queue = Promise.resolve();

  constructor(port) {
    this.port = port;
    port.onmessage = (ev) => {
      const m = ev.data;
      // Replies act at once; everything else in order, after the runtime starts.
      if (m?.t === "hostReply") return this.#hostReply(m);
      // The page holds its calls until this worker is heard from (see remote.js).
      if (m?.t === "hello") this.post({ t: "hi" });
      this.queue = this.queue.then(() => this.#handle(m)).catch((e) => console.error("mcp worker:", e));
    };
    port.addEventListener?.("close", () => this.bye());
    port.start?.();
  }

  post(m) {
    try { this.port.postMessage(m); } catch { /* the tab is gone */ }
  }

  async #handle(m) {
    switch (m?.t) {
      case "hello": return this.#hello(m);
      case "call": return this.#call(m);
      case "abort": return this.calls.get(m.id)?.abort();
      case "bye": return this.bye();
      case "crash": // a test hook: the runtime ends as a crash would
        if (m.test === true) this.rt?.crash();
        return undefined;
      case "die": // a test hook: the worker ends at once, telling no tab (as when the browser kills it)
        if (m.test === true) globalThis.close();
        return undefined;
      case "skew": // a test hook: see skewClockForTest
        if (m.test === true) skewClockForTest(m.ms);
        return undefined;
    }
  }

  async #hello({ wasmURL, hints, protocol, progress, refuseKeysForTest, trustKeysForTest, noIndexedDBForTest }) {
    if (protocol !== PROTOCOL) {
      this.post({ t: "stale" }); // a worker of another version of mcp.js: the page starts its own
      return;
    }
    // Test hooks: refuseKeysForTest (Chromium takes WebKit's path),
    // trustKeysForTest (a benchmark times WebKit's SharedWorker).
    const why = refuseKeysForTest === true ? "a test asked for it" : trustKeysForTest === true ? null : await keysRefusal();
    // Test hook: IndexedDB unavailable in this worker, as where storage is
    // disabled (a page cannot reach a worker's globals).
    if (noIndexedDBForTest === true) Object.defineProperty(globalThis, "indexedDB", { configurable: true, get: () => undefined });
    if (why) {
      this.post({ t: "nokeys", reason: why }); // the page runs Go elsewhere
      return;
    }
    try {
      const key = await buildKey(wasmURL);
      let p = runtimes.get(key);
      if (!p) {
        const rt = new Runtime(key);
        p = rt.start(wasmURL, hints, progress ? (loaded, total) => this.post({ t: "progress", loaded, total }) : null);
        runtimes.set(key, p);
        p.catch(() => runtimes.delete(key));
      }
      this.rt = await p;
      this.rt.tabs.add(this);
      this.rt.byPrefix.set(this.prefix, this);
      this.post({ t: "ready", version: this.rt.api.version, runtimeId: this.rt.id, alive: await holdAlive() });
    } catch (e) {
      this.post({ t: "failed", error: wireError(e, "network") });
    }
  }

  /** The runtime's arguments for the page's: each id gets the tab's prefix. */
  #args(args) {
    const out = { ...args };
    for (const f of ID_FIELDS) if (typeof out[f] === "string") out[f] = this.prefix + out[f];
    return out;
  }

  #call({ id, op, args, progress }) {
    const rt = this.rt;
    if (!rt || rt.exited) {
      this.post({ t: "result", id, error: rt?.exited ?? { code: "closed", message: "the mcpwasm runtime is not running" } });
      return;
    }
    if (!(op in OPS)) {
      this.post({ t: "result", id, error: { code: "protocol", message: `mcp worker: unknown operation ${op}` } });
      return;
    }
    const kind = op.slice(0, op.indexOf("."));
    if (op.endsWith(".new")) this.owned[kind]?.add(args.id);
    const opts = op === "client.new" ? args.options : op === "catalog.add" ? args.config : null;
    if (opts?.authMode === "redirect") this.redirect.add(op === "client.new" ? args.id : `${args.id}/${args.server}`);
    // Every call can end: by the page's signal, or when the tab goes away.
    const ac = OPS[op] ? null : new AbortController();
    if (ac) this.calls.set(id, ac);
    if (ac && kind === "client" && this.redirect.has(args.id)) ac.keep = true;
    const onProgress = progress ? (json) => this.post({ t: "progress", id, json }) : undefined;
    let p;
    try {
      // A synchronous operation's result is ready before the next message is handled.
      p = OPS[op] ? Promise.resolve(invokeJSON(rt.api, op, this.#args(args), { sync: true })) : rt.invoke(op, this.#args(args), ac?.signal, onProgress);
    } catch (e) {
      p = Promise.reject(e);
    }
    p.then(
      (value) => this.post({ t: "result", id, value }),
      (e) => this.post({ t: "result", id, error: wireError(e) }),
    ).finally(() => this.calls.delete(id));
  }

  /** Calls the page's host callback name for target; a Promise of its answer when reply. */
  host(name, target, args, reply) {
    if (!reply) {
      this.post({ t: "host", name, target, args });
      return undefined;
    }
    const id = ++this.nextHost;
    this.post({ t: "host", id, name, target, args });
    return new Promise((resolve, reject) => this.replies.set(id, { resolve, reject }));
  }

  #hostReply({ id, value, error }) {
    const r = this.replies.get(id);
    if (!r) return;
    this.replies.delete(id);
    if (error) r.reject(makeError(error.code, error.message, error.status, error.detail));
    else r.resolve(value);
  }

  /**
   * The tab went away: its calls end, its sessions close, its objects are
   * forgotten. Its calls end as gone, and its clients close as gone: the
   * tasks they follow are kept for the next page rather than cancelled, as
   * when a page without a worker unloads.
   */
  bye() {
    const rt = this.rt;
    if (!rt || !rt.tabs.has(this)) return;
    rt.tabs.delete(this);
    for (const ac of this.calls.values()) if (!ac.keep) ac.abort(GONE_REASON);
    for (const r of this.replies.values()) r.reject(makeError("closed", "the page that owned this object went away"));
    this.replies.clear();
    const close = (op, id, more) => rt.invoke(op, { id: this.prefix + id, ...more }).catch(() => {});
    for (const id of this.owned.agent) close("agent.close", id);
    for (const id of this.owned.catalog) close("catalog.close", id, { gone: true });
    for (const id of this.owned.client) if (!this.redirect.has(id)) close("client.close", id, { gone: true });
    // A redirect sign-in's client stays for the return; its callbacks now
    // reject "closed", as nobody is left to answer them.
    rt.byPrefix.delete(this.prefix);
    for (const k of Object.keys(this.owned)) this.owned[k].clear();
  }
}

if (typeof SharedWorkerGlobalScope !== "undefined" && globalThis instanceof SharedWorkerGlobalScope) {
  globalThis.onconnect = (ev) => new Tab(ev.ports[0]);
} else {
  new Tab(globalThis); // a dedicated Worker: the global scope is the port
}
