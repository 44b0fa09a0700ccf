// worker.js — the Go runtime of mcp.js off the page's main thread (see
// docs/JSAPI.md, "Runtimes"). mcp.js starts it as a SharedWorker (one
// runtime per origin and build, shared by every tab) or a dedicated Worker,
// and talks to it over a MessagePort with the messages of remote.js: the
// same operations (OPS) and host callbacks (HOSTS) of jsapi.js as the
// main-thread mode, checked on both sides.
//
// Per tab (per port) it keeps the ids the page chose for its clients,
// catalogs, agents and agent runs and maps them to the runtime's own, so
// the page can create objects synchronously; it routes each host callback
// to the tab that owns its target, and releases a tab's objects when the
// tab says goodbye or its port closes. Page-wide callbacks run here: Web
// Locks, the grant notices between runtimes (BroadcastChannel); saveHints
// goes to a tab (workers have no localStorage).
import { OPS, HOSTS } from "./jsapi.js";
import { acquireLock } from "./auth.js";
import { PROTOCOL, KINDS, wireError } from "./remote.js";
import { instantiate, invokeJSON, listenGrants, newGo, run } from "./boot.js";

/** An Error like the page's MCPError, for Go's error factory (crosses as wireError). */
function makeError(code, message, status, detail, rpcCode) {
  const e = new Error(message);
  e.name = "MCPError";
  Object.assign(e, { code, status, detail, rpcCode });
  return e;
}

const runtimes = new Map(); // build key → Promise<Runtime>
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
  owners = new Map(); // "client:<go id>" etc. → {tab, target (the page's)}
  nextRun = 0;
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

  /** The host object Go calls; targeted callbacks go to the owning tab. */
  #callbacks() {
    const forward = (name, reply) => (target, ...args) => {
      const owner = this.owners.get(target);
      if (!owner) {
        if (reply) return Promise.reject(makeError("closed", `${target.split(":")[0]} is closed`));
        return undefined;
      }
      return owner.tab.host(name, owner.target, args, reply);
    };
    const cb = {
      event: forward("event", false),
      accessToken: forward("accessToken", true),
      identityAssertion: forward("identityAssertion", true),
      elicit: forward("elicit", true),
      sample: forward("sample", true),
      openAuth: forward("openAuth", true),
      authDismissed: forward("authDismissed", true),
      closeAuth: forward("closeAuth", false),
      approve: forward("approve", true),
      model: forward("model", true),
      lock: acquireLock,
      announce: (json) => this.grants?.postMessage(JSON.parse(json)),
      // Hints go to localStorage, which only a page has: any tab keeps them.
      saveHints: (json) => this.tabs.values().next().value?.host("saveHints", null, [json], false),
    };
    for (const name of HOSTS) {
      if (typeof cb[name] !== "function") throw new Error(`worker.js: host callback ${name} is missing`);
    }
    return cb;
  }
}

/**
 * What identifies a build of mcp.wasm: its URL and validator (the server's
 * ETag, a content hash where the server makes one), so that a page of a
 * newer build never uses a runtime started by an older one.
 */
async function buildKey(wasmURL) {
  try {
    const r = await fetch(wasmURL, { method: "HEAD", cache: "no-cache" });
    return `${wasmURL}#${r.headers.get("ETag") ?? r.headers.get("Last-Modified") ?? r.headers.get("Content-Length") ?? ""}`;
  } catch {
    return wasmURL;
  }
}

/** One tab: its port, its ids and its calls in flight. */
class Tab {
  rt = null; // Runtime
  ids = Object.fromEntries(KINDS.map((k) => [k, new Map()])); // kind → page id → go id
  failed = new Map(); // "kind:page id" → wire error of its creation
  runs = new Map(); // page run → runtime run
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
    }
  }

  async #hello({ wasmURL, hints, protocol, progress, refuseKeysForTest, trustKeysForTest }) {
    if (protocol !== PROTOCOL) {
      this.post({ t: "stale" }); // a worker of another version of mcp.js: the page starts its own
      return;
    }
    // Test hooks: refuseKeysForTest (Chromium takes WebKit's path),
    // trustKeysForTest (a benchmark times WebKit's SharedWorker).
    const why = refuseKeysForTest === true ? "a test asked for it" : trustKeysForTest === true ? null : await keysRefusal();
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
      this.post({ t: "ready", version: this.rt.api.version, runtimeId: this.rt.id });
    } catch (e) {
      this.post({ t: "failed", error: wireError(e, "network") });
    }
  }

  #goID(kind, id) {
    const g = this.ids[kind].get(id);
    if (g === undefined) {
      throw this.failed.get(`${kind}:${id}`) ?? { code: "closed", message: kind === "client" ? "this client is closed; create a new one with mcp.client()" : `this ${kind} is closed` };
    }
    return g;
  }

  #own(kind, id, goID) {
    this.ids[kind].set(id, goID);
    if (kind !== "agent") this.rt.owners.set(`${kind}:${goID}`, { tab: this, target: `${kind}:${id}` });
  }

  /** The runtime's arguments for the page's: its ids become the runtime's. */
  #args(op, args) {
    const kind = op.split(".")[0];
    const out = { ...args };
    if (KINDS.includes(kind) && !op.endsWith(".new") && "id" in out) out.id = this.#goID(kind, out.id);
    if (op === "agent.new") out.catalog = this.#goID("catalog", out.catalog);
    if (op === "agent.run") {
      const run = ++this.rt.nextRun;
      this.runs.set(out.run, run);
      this.rt.owners.set(`run:${run}`, { tab: this, target: `run:${out.run}` });
      out.run = run;
    }
    return out;
  }

  /** Records the runtime's ids of what op created under the page's (bind). */
  #bind(op, bind, r) {
    if (op === "client.new") this.#own("client", bind.client, r.id);
    if (op === "catalog.add") this.#own("client", bind.client, r.client);
    if (op === "agent.new") this.#own("agent", bind.agent, r.id);
    if (op === "catalog.new") {
      this.#own("catalog", bind.catalog, r.id);
      const clients = {};
      for (const [server, id] of Object.entries(bind.clients ?? {})) {
        if (r.clients?.[server] === undefined) continue;
        this.#own("client", id, r.clients[server]);
        clients[server] = id;
      }
      return { ...r, id: bind.catalog, clients };
    }
    return undefined;
  }

  #fail(bind, err) {
    for (const [kind, id] of Object.entries(bind ?? {})) {
      if (kind === "clients") for (const c of Object.values(id)) this.failed.set(`client:${c}`, err);
      else this.failed.set(`${kind}:${id}`, err);
    }
  }

  #call({ id, op, args, bind, progress }) {
    const rt = this.rt;
    if (!rt || rt.exited) {
      this.post({ t: "result", id, error: rt?.exited ?? { code: "closed", message: "the mcpwasm runtime is not running" } });
      return;
    }
    if (!(op in OPS)) {
      this.post({ t: "result", id, error: { code: "protocol", message: `mcp worker: unknown operation ${op}` } });
      return;
    }
    let goArgs;
    try {
      goArgs = this.#args(op, args);
    } catch (e) {
      if (bind) this.#fail(bind, wireError(e));
      this.post({ t: "result", id, error: wireError(e) });
      return;
    }
    // Every call can end: by the page's signal, or when the tab goes away.
    const ac = OPS[op] ? null : new AbortController();
    if (ac) this.calls.set(id, ac);
    if (ac && op.startsWith("client.") && this.redirect.has(args.id)) ac.keep = true;
    const opts = op === "client.new" ? args.options : op === "catalog.add" ? args.config : null;
    if (opts?.authMode === "redirect") this.redirect.add(bind?.client);
    const onProgress = progress ? (json) => this.post({ t: "progress", id, json }) : undefined;
    let p;
    if (OPS[op]) {
      // A synchronous operation: its result is ready before the next message is handled.
      try {
        const v = invokeJSON(rt.api, op, goArgs, { sync: true });
        p = Promise.resolve(bind ? this.#bind(op, bind, v) ?? v : v);
      } catch (e) {
        if (bind) this.#fail(bind, wireError(e));
        p = Promise.reject(e);
      }
    } else {
      p = rt.invoke(op, goArgs, ac?.signal, onProgress);
    }
    p.then(
      (value) => this.post({ t: "result", id, value }),
      (e) => this.post({ t: "result", id, error: wireError(e) }),
    ).finally(() => {
      this.calls.delete(id);
      if (op === "agent.run") this.rt?.owners.delete(`run:${goArgs.run}`);
    });
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

  /** The tab went away: its calls end, its sessions close, its objects are forgotten. */
  bye() {
    const rt = this.rt;
    if (!rt || !rt.tabs.has(this)) return;
    rt.tabs.delete(this);
    for (const ac of this.calls.values()) if (!ac.keep) ac.abort();
    for (const r of this.replies.values()) r.reject(makeError("closed", "the page that owned this object went away"));
    this.replies.clear();
    for (const [, g] of this.ids.agent) rt.invoke("agent.close", { id: g }).catch(() => {});
    for (const [, g] of this.ids.catalog) {
      rt.owners.delete(`catalog:${g}`);
      rt.invoke("catalog.close", { id: g }).catch(() => {});
    }
    for (const [id, g] of this.ids.client) {
      rt.owners.delete(`client:${g}`);
      if (!this.redirect.has(id)) rt.invoke("client.close", { id: g }).catch(() => {});
    }
    for (const [, run] of this.runs) rt.owners.delete(`run:${run}`);
    for (const k of KINDS) this.ids[k].clear();
  }
}

if (typeof SharedWorkerGlobalScope !== "undefined" && globalThis instanceof SharedWorkerGlobalScope) {
  globalThis.onconnect = (ev) => new Tab(ev.ports[0]);
} else {
  new Tab(globalThis); // a dedicated Worker: the global scope is the port
}
