// react.js — the React binding of mcpwasm ("mcpwasm/react"; see react.d.ts).
//
//   const { state, tools, error, authorize, callTool } = useMcpClient(url, { redirectUri: "/oauth/callback" });
//   <button onClick={() => authorize()}>Sign in</button>
//
// Each hook owns one store: a plain object that creates the client (or
// catalog) when the component mounts, follows its events and publishes
// immutable snapshots through useSyncExternalStore. Unmounting releases the
// store; the client closes one macrotask later unless the component mounts
// again at once, which is what React's StrictMode does in development: one
// connection, one sign-in window, whatever the double mount.
import { useEffect, useRef, useSyncExternalStore, useCallback } from "react";
import { load } from "./mcp.js";

/** Shared by both stores: listeners, snapshots, deferred disposal. */
class Store {
  #listeners = new Set();
  #users = 0;
  #disposeTimer = 0;
  disposed = false;
  snapshot;

  constructor(initial) {
    this.snapshot = Object.freeze(initial);
  }

  subscribe = (fn) => {
    this.#listeners.add(fn);
    return () => this.#listeners.delete(fn);
  };

  getSnapshot = () => this.snapshot;

  set(patch) {
    if (this.disposed) return;
    this.snapshot = Object.freeze({ ...this.snapshot, ...patch });
    for (const fn of this.#listeners) fn();
  }

  /** A component mounted: start (once) or keep the object alive. */
  retain() {
    this.#users++;
    clearTimeout(this.#disposeTimer);
    this.#disposeTimer = 0;
    if (!this.started) {
      this.started = true;
      this.start();
    }
  }

  /** A component unmounted: dispose unless it mounts again right away. */
  release() {
    if (--this.#users > 0) return;
    clearTimeout(this.#disposeTimer);
    this.#disposeTimer = setTimeout(() => {
      if (this.#users > 0) return;
      this.disposed = true;
      this.#listeners.clear();
      this.dispose();
    }, 0);
  }
}

/** The state of one client for useMcpClient. */
class ClientStore extends Store {
  client = null;
  #off = [];

  constructor(url, options) {
    super({ state: "loading", client: null, tools: [], error: null, serverInfo: null });
    this.url = url;
    this.options = options;
  }

  async start() {
    const { wasmURL, onLoadProgress, autoConnect = true, onElicitation, onSampling, ...clientOptions } = this.options;
    let mcp;
    try {
      mcp = await load({ wasmURL, onProgress: onLoadProgress });
    } catch (error) {
      this.#failed(error);
      return;
    }
    if (this.disposed) return;
    let client;
    try {
      client = mcp.client(this.url, clientOptions);
    } catch (error) {
      this.#failed(error);
      return;
    }
    if (onElicitation) client.onElicitation = onElicitation;
    if (onSampling) client.onSampling = onSampling;
    this.client = client;
    const on = (type, fn) => {
      client.addEventListener(type, fn);
      this.#off.push(() => client.removeEventListener(type, fn));
    };
    on("statechange", (ev) => {
      const { state, error } = ev.detail;
      this.set({ state, error: error ?? null, serverInfo: client.serverInfo });
      if (state === "connected") this.#refreshTools();
    });
    on("toolschanged", () => this.#refreshTools());
    this.set({ state: client.state, client });
    if (autoConnect) {
      // Its failures arrive as statechange events (needs_auth, failed).
      client.connect().catch((error) => {
        if (client.state !== "needs_auth") this.set({ error });
      });
    }
  }

  /** No client could be made: the hook's calls reject with error from now on. */
  #failed(error) {
    this.failure = error;
    if (!this.disposed) console.warn(`mcp: ${this.url}: failed: ${error.message}`);
    this.set({ state: "failed", error });
  }

  /**
   * Runs a call of the client (started synchronously, so authorize() keeps
   * the click's gesture): error follows its outcome, the latest failure
   * or null after a success. An abort the page asked for is no failure.
   */
  run(what, call) {
    const client = this.client;
    if (!client) return this.failure ? Promise.reject(this.failure) : notReady(what);
    const p = call(client);
    p.then(() => {
      if (client === this.client) this.set({ error: null });
    }, (error) => {
      if (client === this.client && error?.code !== "aborted") this.set({ error });
    });
    return p;
  }

  #refreshTools() {
    const client = this.client;
    client.listTools().then((r) => {
      if (client === this.client) this.set({ tools: Object.freeze([...r]) });
    }, (error) => this.set({ error }));
  }

  dispose() {
    for (const off of this.#off) off();
    this.#off = [];
    this.client?.close().catch(() => {});
  }
}

/** Keeps one store per hook instance, replaced when its key changes. */
function useStore(key, make) {
  const ref = useRef(null);
  if (ref.current === null || ref.current.key !== key) ref.current = { key, store: make() };
  const store = ref.current.store;
  useEffect(() => {
    store.retain();
    return () => store.release();
  }, [store]);
  return store;
}

const notReady = (what) => Promise.reject(Object.assign(new Error(`${what}: the client is not created yet (state "loading")`), { code: "invalid_argument" }));

/**
 * One MCP client for the component's lifetime. options: the client's
 * options (redirectUri, clientName, …) plus wasmURL and onLoadProgress for
 * load(), autoConnect (default true), onElicitation and onSampling. They are
 * read once, when the client is made; a new url makes a new client.
 */
export function useMcpClient(url, options = {}) {
  const store = useStore(String(url), () => new ClientStore(String(url), options));
  const snap = useSyncExternalStore(store.subscribe, store.getSnapshot, store.getSnapshot);
  // authorize() calls client.authorize() synchronously: inside a click
  // handler it keeps the user gesture, so the sign-in window may open.
  // Each rejects with the client's creation error when none could be made
  // (a typo'd option: state "failed").
  const authorize = useCallback((opts) => store.run("authorize()", (c) => c.authorize(opts)), [store]);
  const connect = useCallback((opts) => store.run("connect()", (c) => c.connect(opts)), [store]);
  const callTool = useCallback((name, args, opts) => store.run("callTool()", (c) => c.callTool(name, args, opts)), [store]);
  const logout = useCallback((opts) => store.run("logout()", (c) => c.logout(opts)), [store]);
  return { ...snap, authorize, connect, callTool, logout };
}

/** The state of one catalog for useCatalog. */
class CatalogStore extends Store {
  catalog = null;
  #off = [];

  constructor(config) {
    super({ status: {}, tools: [], catalog: null, error: null, loading: true });
    this.config = config;
  }

  async start() {
    const { wasmURL, onLoadProgress, ...config } = this.config;
    let cat;
    try {
      const mcp = await load({ wasmURL, onProgress: onLoadProgress });
      if (this.disposed) return;
      cat = mcp.catalog(config);
    } catch (error) {
      this.failure = error;
      console.warn(`mcp: catalog(): ${error.message}`);
      this.set({ error, loading: false });
      return;
    }
    this.catalog = cat;
    const on = (type, fn) => {
      cat.addEventListener(type, fn);
      this.#off.push(() => cat.removeEventListener(type, fn));
    };
    on("statuschange", () => this.set({ status: cat.status() }));
    on("toolschanged", () => this.#refreshTools());
    this.set({ catalog: cat, status: cat.status(), loading: false });
    this.#refreshTools();
  }

  #refreshTools() {
    const cat = this.catalog;
    cat.tools().then((tools) => {
      if (cat === this.catalog) this.set({ tools: Object.freeze([...tools]), status: cat.status() });
    }, (error) => this.set({ error }));
  }

  dispose() {
    for (const off of this.#off) off();
    this.#off = [];
    this.catalog?.close().catch(() => {});
  }
}

/**
 * A catalog (many servers, one tool list) for the component's lifetime.
 * config: what mcp.catalog() takes, plus wasmURL and onLoadProgress; read
 * once (a new JSON form of it makes a new catalog).
 */
export function useCatalog(config = {}) {
  let key;
  try {
    key = JSON.stringify(config);
  } catch {
    key = "";
  }
  const store = useStore(key, () => new CatalogStore(config));
  const snap = useSyncExternalStore(store.subscribe, store.getSnapshot, store.getSnapshot);
  const agent = useCallback((options) => {
    if (!store.catalog) throw store.failure ?? Object.assign(new Error("agent(): the catalog is not created yet"), { code: "invalid_argument" });
    return store.catalog.agent(options);
  }, [store]);
  // Synchronous in the click handler, like useMcpClient's authorize().
  const authorize = useCallback((id, opts) => store.catalog ? store.catalog.authorize(id, opts) : store.failure ? Promise.reject(store.failure) : notReady("authorize()"), [store]);
  const callTool = useCallback((name, args, opts) => store.catalog ? store.catalog.callTool(name, args, opts) : store.failure ? Promise.reject(store.failure) : notReady("callTool()"), [store]);
  return { ...snap, agent, authorize, callTool };
}
