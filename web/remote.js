// remote.js — the page's half of the worker runtimes (see worker.js): it
// starts the SharedWorker or Worker, sends it the operations of jsapi.js
// (OPS) and answers its host callbacks (HOST_CALLBACKS), so that mcp.js's classes
// work the same in every runtime mode.
//
// Messages, page → worker: hello {wasmURL, hints, protocol, progress,
// refuseKeysForTest?, trustKeysForTest? (test hooks)},
// call {id, op, args, signal?, progress?}, abort {id},
// hostReply {id, value | error}, bye, and the test hooks crash, die and
// skew {ms}, each with {test: true}.
// Worker → page: hi (at once, on hello), ready {version, runtimeId, alive (the name of a Web Lock
// the worker holds while it lives, or null)}, failed {error}, stale,
// nokeys {reason} (the worker cannot keep WebCrypto keys in IndexedDB),
// progress {loaded, total} (load) or {id, json} (a call), result {id,
// value | error}, host {id?, name, target, args}, exit {error}.
// Errors cross as {code, message, status?, detail?, rpcCode?}.
import { HOST_CALLBACKS, HOSTS, ID_FIELDS, OPS } from "./jsapi.js";

/**
 * The version of these messages together with the tables of jsapi.js
 * they carry (operations, callbacks and which wait for a reply, the id
 * arguments): a worker of another version of mcp.js is not used.
 */
export const PROTOCOL = `5:${Object.entries(OPS).map(([k, v]) => `${k}${v ? "!" : ""}`).join(",")}:${HOSTS.map((h) => `${h}${HOST_CALLBACKS[h].reply ? "?" : ""}`).join(",")}:${ID_FIELDS.join(",")}`;

// Joins of the SharedWorker without an answer (1 + 2 + 4 s) before a tab
// starts a Worker runtime of its own.
const SHARED_ATTEMPTS = 3;

/** An error as it crosses the boundary. */
export function wireError(e, fallbackCode = "protocol") {
  if (e && typeof e === "object" && typeof e.code === "string" && typeof e.message === "string") {
    const w = { code: e.code, message: e.message };
    if (e.status) w.status = e.status;
    if (e.detail) w.detail = e.detail;
    if (typeof e.rpcCode === "number") w.rpcCode = e.rpcCode;
    return w;
  }
  if (e && e.name === "AbortError") return { code: "aborted", message: "aborted" };
  return { code: fallbackCode, message: e && typeof e.message === "string" ? e.message : String(e) };
}

/**
 * Thrown by connect() when the browser refused the worker (no such
 * constructor, CSP), or the worker cannot store WebCrypto keys (keys).
 */
export class Refused extends Error {
  constructor(message, { keys = false } = {}) {
    super(message);
    this.keys = keys;
  }
}

/**
 * A connection to a worker runtime. connect() starts the worker and says
 * hello at once; ready settles when it answers.
 */
class Connection {
  pending = new Map(); // call id → {resolve, reject, onProgress, signal, abort}
  ended = false;
  held = null; // messages posted before a SharedWorker was heard from
  attempts = 0;

  constructor(mode, hello, remote) {
    this.remote = remote;
    this.mode = mode;
    if (mode === "shared-worker") this.held = [];
    this.hello = hello;
    this.kind = mode === "shared-worker" ? "SharedWorker" : "Worker";
    this.ready = new Promise((resolve, reject) => { this.settle = { resolve, reject }; });
    this.#attach();
  }

  /**
   * Starts the worker (or joins the SharedWorker) and says hello. A worker
   * answers hello with "hi" at once. A SharedWorker that is ending (its
   * last tab went, or it closed itself) can still be joined in Firefox and
   * then never answers: calls are held here until "hi", and after a second
   * without it the connection joins the SharedWorker again, so that calls
   * go to one that answers, never twice. After SHARED_ATTEMPTS joins
   * without an answer it starts a dedicated Worker, which is always new.
   */
  #attach() {
    const url = new URL("./worker.js", import.meta.url);
    const kind = this.kind;
    let w;
    // The literal new (Shared)Worker(new URL("./worker.js", import.meta.url),
    // { type: "module" }) is the pattern that bundlers turn into a worker chunk.
    try {
      w = this.mode === "shared-worker"
        ? new SharedWorker(new URL("./worker.js", import.meta.url), { type: "module", name: "mcpwasm" })
        : new Worker(new URL("./worker.js", import.meta.url), { type: "module", name: "mcpwasm" });
    } catch (e) {
      throw new Refused(`${kind} ${url} refused: ${e.message}`);
    }
    const port = this.mode === "shared-worker" ? w.port : w;
    this.worker = w;
    this.port = port;
    const mine = (f) => (ev) => { if (this.port === port) f(ev); };
    w.addEventListener("error", mine((ev) => {
      const reason = ev?.message || "the worker script could not start (Content-Security-Policy worker-src, or the script is missing)";
      if (this.settle) return this.settle.reject(new Refused(`${kind} ${url} refused: ${reason}`));
      this.end({ code: "closed", message: `the mcpwasm runtime crashed (${reason}); the next call starts a new one` });
    }));
    port.addEventListener("message", mine((ev) => this.#message(ev.data)));
    port.addEventListener("close", mine(() => this.end({ code: "closed", message: "the mcpwasm runtime ended; call connect() to start a new one" })));
    port.start?.();
    port.postMessage({ t: "hello", ...this.hello, protocol: PROTOCOL });
    if (this.held === null) return;
    this.attempts++;
    // Slower each time: a worker that is only slow to start still answers.
    this.silence = setTimeout(() => {
      if (this.held === null || this.ended) return;
      try { port.close?.(); } catch { /* gone */ }
      if (this.mode === "shared-worker" && this.attempts >= SHARED_ATTEMPTS) {
        // Firefox can keep handing out the ending SharedWorker for
        // minutes: this tab runs a Worker of its own instead.
        console.warn(`mcp: the SharedWorker runtime did not answer ${this.attempts} times (one that is ending can still be joined); this tab runs its own Worker runtime`);
        this.mode = "worker";
        this.kind = "Worker";
      }
      try {
        this.#attach();
      } catch (e) {
        this.end(wireError(e, "closed"));
      }
    }, 1000 * 2 ** Math.min(this.attempts - 1, 4));
  }

  /** The worker answered: the held messages go to it, in order. */
  #heard() {
    if (this.held === null) return;
    clearTimeout(this.silence);
    const held = this.held;
    this.held = null;
    for (const m of held) this.port.postMessage(m);
  }

  post(m) {
    if (this.held !== null) this.held.push(m);
    else this.port.postMessage(m);
  }

  #message(m) {
    if (m?.t !== undefined) this.#heard();
    switch (m?.t) {
      case "hi":
        return;
      case "ready":
        this.remote.runtimeId = m.runtimeId;
        if (typeof m.alive === "string") this.#watch(m.alive);
        this.settle?.resolve(m);
        this.settle = null;
        return;
      case "failed":
        this.settle?.reject(this.remote.error(m.error));
        this.settle = null;
        return this.end(m.error);
      case "stale":
        this.settle?.reject(new Refused("a worker of another version of mcp.js is running"));
        this.settle = null;
        return;
      case "nokeys":
        // Sign-ins need their keys stored: Go runs where they can be.
        this.settle?.reject(new Refused(`${this.kind} cannot store a WebCrypto key in IndexedDB in this browser (${m.reason}), so sign-ins could not start there`, { keys: true }));
        this.settle = null;
        return this.end({ code: "closed", message: "the mcpwasm worker cannot store its keys" });
      case "progress":
        if (m.id === undefined) return this.remote.loadProgress?.(m.loaded, m.total);
        return this.pending.get(m.id)?.onProgress?.(m.json);
      case "result": {
        const p = this.pending.get(m.id);
        if (!p) return;
        this.pending.delete(m.id);
        p.unlisten?.();
        if (m.error) p.reject(this.remote.error(m.error));
        else p.resolve(m.value);
        return;
      }
      case "host":
        return this.#host(m);
      case "exit":
        return this.end(m.error);
    }
  }

  /**
   * Asks for the lock the worker holds while it lives: granted when the
   * worker is gone without a word (the browser killed it, it crashed),
   * which ends this connection as such. A closed port says it too, but
   * only in some engines.
   */
  #watch(name) {
    const locks = globalThis.navigator?.locks;
    if (!locks) return;
    this.unwatch = new AbortController();
    locks.request(name, { signal: this.unwatch.signal }, () => {
      this.end({ code: "closed", message: `the mcpwasm ${this.kind} stopped (the browser ended it, or it crashed); call connect() to start a new one` });
    }).catch(() => { /* this connection ended first */ });
  }

  async #host({ id, name, target, args }) {
    const fn = this.remote.callbacks[name];
    let value, error;
    try {
      if (typeof fn !== "function") throw new Error(`mcp.js: host callback ${name} is missing`);
      value = await (target === null ? fn(...args) : fn(target, ...args));
    } catch (e) {
      error = wireError(e);
    }
    if (id !== undefined) this.post(error ? { t: "hostReply", id, error } : { t: "hostReply", id, value });
  }

  /** The runtime is gone: every pending call rejects, the next call starts a new one. */
  end(wire) {
    if (this.ended) return;
    this.ended = true;
    clearTimeout(this.silence);
    this.unwatch?.abort();
    const err = this.remote.error(wire);
    this.settle?.reject(err);
    this.settle = null;
    for (const p of this.pending.values()) {
      p.unlisten?.();
      p.reject(err);
    }
    this.pending.clear();
    try { this.worker.terminate?.(); } catch { /* gone */ }
    try { this.port.close?.(); } catch { /* gone */ }
    this.remote.ended(this, err);
  }
}

/**
 * The page's handle on a worker runtime: invoke() and send() have the
 * meaning of the main-thread module's invoke, with results parsed and
 * errors made by error(wire).
 */
export class Remote {
  remote = true;
  #conn = null;
  #mode;
  #hello;
  #nextCall = 0;

  /**
   * mode: "shared-worker" or "worker"; hello: {wasmURL, hints}; callbacks:
   * the host object (HOSTS); error(wire) makes the page's MCPError;
   * onEnd(err) hears that a runtime ended.
   */
  constructor(mode, hello, callbacks, error, onEnd, loadProgress) {
    this.#mode = mode;
    this.#hello = hello;
    this.callbacks = callbacks;
    this.error = error;
    this.onEnd = onEnd;
    this.loadProgress = loadProgress;
  }

  get mode() { return this.#mode; }

  /** Starts the first runtime; resolves with {version, shared}; rejects Refused when the browser refused the worker. */
  async start() {
    const c = this.#connection(true);
    const r = await c.ready;
    this.loadProgress = null;
    if (typeof window !== "undefined") {
      // The tab goes away: the runtime releases its clients and sessions.
      window.addEventListener("pagehide", () => { try { this.#conn?.post({ t: "bye" }); } catch { /* gone */ } });
    }
    return r;
  }

  #connection(progress = false) {
    if (!this.#conn) {
      this.#conn = new Connection(this.#mode, { ...this.#hello, progress }, this);
      // A later runtime's failure to start reaches the calls queued behind its hello.
      if (!progress) this.#conn.ready.catch(() => {});
    }
    return this.#conn;
  }

  ended(conn, err) {
    if (this.#conn === conn) this.#conn = null;
    this.onEnd?.(err);
  }

  /** A Promise of op's parsed result. */
  invoke(op, args, signal, onProgress) {
    let c;
    try {
      c = this.#connection();
    } catch (e) {
      return Promise.reject(this.error(wireError(e, "closed")));
    }
    const id = ++this.#nextCall;
    return new Promise((resolve, reject) => {
      const p = { resolve, reject, onProgress };
      if (signal) {
        const abort = () => c.post({ t: "abort", id });
        signal.addEventListener("abort", abort);
        p.unlisten = () => signal.removeEventListener("abort", abort);
      }
      c.pending.set(id, p);
      c.post({ t: "call", id, op, args, signal: !!signal, progress: !!onProgress });
      if (signal?.aborted) c.post({ t: "abort", id });
    });
  }

  /** A test hook: the runtime ends as a crash would. */
  crashForTest() {
    this.#conn?.post({ t: "crash", test: true });
  }

  /** A test hook: the worker ends at once without a word, as when the browser kills it. */
  killForTest() {
    this.#conn?.post({ t: "die", test: true });
  }

  /** A test hook: the worker's wall clock moves ms ahead (boot.js, skewClockForTest). */
  skewClockForTest(ms) {
    this.#connection().post({ t: "skew", ms, test: true });
  }
}
