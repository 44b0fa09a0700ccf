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
import { createElement, useEffect, useRef, useSyncExternalStore, useCallback } from "react";
import { load, MCPError } from "./mcp.js";

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
    // askUser in a hook's slot: the question goes to this catalog's useAgent.
    if (config.approve === askUser) config.approve = (req) => ask(this.catalog, "approval", req);
    if (config.onElicitation === askUser) config.onElicitation = (req, ctx) => ask(this.catalog, "elicitation", req, ctx);
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

// ------------------------------------------------------------ useAgent

/** The mounted useAgent stores, in the order they mounted (askUser's routes). */
const agentStores = new Set();

/**
 * A question from the catalog's approve or onElicitation hook goes to a
 * mounted useAgent of that catalog (any, when the catalog is unknown): the
 * one whose turn runs, else the latest mounted. With none mounted nobody
 * can answer, so the question is refused at once.
 */
function ask(catalog, kind, request, ctx) {
  const stores = [...agentStores].filter((s) => !catalog || !s.catalog || s.catalog === catalog);
  const to = stores.findLast((s) => s.running) ?? stores.at(-1);
  if (!to) {
    console.warn(`mcp: useAgent: ${kind === "approval" ? `the call of ${request?.name ?? "a tool"} was refused` : "an elicitation was cancelled"}: no useAgent is mounted to ask the user`);
    return Promise.resolve(refusal(kind));
  }
  return to.ask(kind, request, ctx);
}

/** The answer to a question nobody answered (a stop, an unmount). */
const refusal = (kind) => (kind === "approval" ? false : { action: "cancel" });

/**
 * Pass it as the catalog's approve (and onElicitation) option in
 * useCatalog's config: each question then waits in the pending list of the
 * catalog's useAgent until the page answers it with approve(answer) (or
 * answerElicitation(answer)). Called plainly (a catalog made with
 * mcp.catalog()), it asks the mounted useAgent whose turn runs.
 */
export function askUser(request, ctx) {
  const elicitation = ctx !== undefined || (request !== null && typeof request === "object" && "requestedSchema" in request);
  return ask(null, elicitation ? "elicitation" : "approval", request, ctx);
}

/** Functions' identities, for optionsKey. */
const functionIds = new WeakMap();
let functionCount = 0;

/**
 * A key of an agent's options that changes when they do: their JSON, with
 * each function (a custom model) known by its identity. It stays in memory.
 */
function optionsKey(options) {
  return JSON.stringify(options ?? {}, (_, v) => {
    if (typeof v !== "function") return v;
    if (!functionIds.has(v)) functionIds.set(v, `function#${++functionCount}`);
    return functionIds.get(v);
  });
}

/** One key per catalog and conversation id, for useStore. */
const agentKeys = new WeakMap();
const noCatalog = {};
function agentKey(cat, conversation) {
  const owner = cat ?? noCatalog;
  if (!agentKeys.has(owner)) agentKeys.set(owner, new Map());
  const keys = agentKeys.get(owner);
  if (!keys.has(conversation)) keys.set(conversation, { cat, conversation });
  return keys.get(conversation);
}

/** The running conversation of one useAgent. */
class AgentStore extends Store {
  #history = []; // the conversation as the model reads it (Chat Completions shapes)
  #run = null; // {ctrl, agent} of the running turn
  #agent = null; // the conversation's agent: its "always" and "server" answers hold across turns
  #agentKey = "";
  #pending = []; // {id, kind, request, serverId, toolCallId, resolve}
  #seq = 0;
  running = false;

  #loaded = false; // the stored conversation (options.conversation) is read

  constructor(catalog, options, conversation) {
    super({ messages: Object.freeze([]), status: conversation && catalog ? "loading" : "idle", usage: null, error: null, pending: Object.freeze([]) });
    this.catalog = catalog;
    this.options = options; // the latest render's (read at each send)
    this.conversation = conversation; // the stored conversation's id, or undefined
  }

  start() {
    agentStores.add(this);
    if (this.conversation && this.catalog) this.#load();
  }

  /** Reads the stored conversation and shows its messages. */
  async #load(patch = {}) {
    this.#loading = true;
    try {
      const conv = await this.#agentFor(this.#agentOptions()).conversation(this.conversation);
      if (this.disposed) return;
      this.#loaded = true;
      this.#publish({ messages: fromStored(conv.messages, (p) => this.#id(p)), ...patch });
    } catch (error) {
      this.#publish({ error });
    } finally {
      this.#loading = false;
      this.#publish();
    }
  }

  #loading = false;

  /** The agent's options: the render's, without the hook's own. */
  #agentOptions() {
    const { onEvent, conversation, ...options } = this.options;
    return options;
  }

  dispose() {
    agentStores.delete(this);
    this.#run?.ctrl.abort();
    this.#settleAll();
    this.#agent?.close();
    this.#agent = null;
  }

  /**
   * The agent for a turn with these options: the conversation's, while
   * its options stay the same (so that an approval answered "always" or
   * "server" holds for the rest of the chat), a new one when they change.
   */
  #agentFor(options) {
    const key = optionsKey(options);
    if (this.#agent && key === this.#agentKey) return this.#agent;
    const agent = this.catalog.agent(options);
    this.#agent?.close();
    this.#agent = agent;
    this.#agentKey = key;
    return agent;
  }

  #id(prefix) {
    return `${prefix}${++this.#seq}`;
  }

  #status(error) {
    if (this.conversation && !this.#loaded && !error && this.catalog) return "loading";
    if (this.#pending.some((p) => p.kind === "approval")) return "awaiting-approval";
    if (this.#pending.length) return "awaiting-input";
    if (this.running) return "running";
    return error ? "error" : "idle";
  }

  /** Publishes patch with the status and pending list that follow from it. */
  #publish(patch = {}) {
    const error = "error" in patch ? patch.error : this.snapshot.error;
    const pending = Object.freeze(this.#pending.map((p) => Object.freeze({ id: p.id, kind: p.kind, request: p.request, serverId: p.serverId, toolCallId: p.toolCallId })));
    this.set({ ...patch, status: this.#status(error), pending });
  }

  /** The assistant message of the running turn, replaced with fn(copy of its parts). */
  #update(fn) {
    const msgs = [...this.snapshot.messages];
    const last = msgs.at(-1);
    if (!last || last.role !== "assistant") return;
    const m = { ...last, parts: [...last.parts] };
    fn(m);
    m.parts = Object.freeze(m.parts);
    msgs[msgs.length - 1] = Object.freeze(m);
    this.#publish({ messages: Object.freeze(msgs) });
  }

  /** Appends text to the last part of type, or starts one. */
  static #append(m, type, delta) {
    const last = m.parts.at(-1);
    if (last?.type === type) m.parts[m.parts.length - 1] = Object.freeze({ ...last, text: last.text + delta });
    else m.parts.push(Object.freeze({ type, text: delta }));
  }

  /** The tool part of call id, replaced with patch (made when missing and make is set). */
  static #tool(m, id, patch, make) {
    const i = m.parts.findIndex((p) => p.type === "tool" && p.id === id);
    if (i < 0) {
      if (make) m.parts.push(Object.freeze({ type: "tool", id, name: "", arguments: "", state: "writing", ...patch }));
      return;
    }
    m.parts[i] = Object.freeze({ ...m.parts[i], ...patch });
  }

  #event(ev) {
    switch (ev.type) {
      case "text":
        this.#update((m) => AgentStore.#append(m, "text", ev.delta ?? ""));
        break;
      case "reasoning":
        this.#update((m) => AgentStore.#append(m, "reasoning", ev.delta ?? ""));
        break;
      case "toolcalldelta":
        this.#update((m) => {
          const p = m.parts.find((x) => x.type === "tool" && x.id === ev.id);
          AgentStore.#tool(m, ev.id, { name: ev.name, arguments: (p?.arguments ?? "") + (ev.argumentsDelta ?? "") }, true);
        });
        break;
      case "toolcall": {
        const args = typeof ev.arguments === "string" ? ev.arguments : JSON.stringify(ev.arguments ?? {});
        this.#update((m) => AgentStore.#tool(m, ev.id, { name: ev.name, serverId: ev.serverId ?? "", tool: ev.tool ?? "", arguments: args, state: "running" }, true));
        this.#link();
        break;
      }
      case "progress":
        this.#update((m) => AgentStore.#tool(m, ev.id, { progress: Object.freeze({ progress: ev.progress, total: ev.total, message: ev.message }) }));
        break;
      case "approval":
        this.#update((m) => AgentStore.#tool(m, ev.id, { approved: ev.approved, state: ev.approved ? "running" : "denied" }));
        break;
      case "toolresult":
        this.#update((m) => {
          const p = m.parts.find((x) => x.type === "tool" && x.id === ev.id);
          const state = p?.state === "denied" ? "denied" : this.#run?.ctrl.signal.aborted && ev.isError ? "stopped" : ev.isError ? "error" : "done";
          const patch = { state, result: Object.freeze({ isError: ev.isError, text: ev.text }) };
          if (ev.app) Object.assign(patch, { app: Object.freeze(ev.app), callResult: ev.result });
          AgentStore.#tool(m, ev.id, patch, true);
        });
        break;
      case "authrequired":
        this.#update((m) => m.parts.push(Object.freeze({ type: "authrequired", serverId: ev.serverId })));
        break;
      case "usage": {
        const add = (u) => addUsage(u, ev);
        this.#update((m) => { m.usage = add(m.usage); });
        this.#publish({ usage: add(this.snapshot.usage) });
        break;
      }
      case "error":
        // max_steps and empty_response end a run early without failing it.
        if (ev.code === "max_steps" || ev.code === "empty_response") {
          this.#update((m) => m.parts.push(Object.freeze({ type: "notice", code: ev.code, text: ev.message })));
        }
        break;
    }
  }

  /**
   * Starts a turn. Refused (a rejection, nothing sent) while a turn runs,
   * before the catalog exists, and for empty text. Resolves when the turn
   * ends, however it ends (messages, status and error say how).
   */
  send(text) {
    const refuse = (why) => Promise.reject(new MCPError("invalid_argument", `send(): ${why}`));
    if (this.disposed) return refuse("the component using useAgent has unmounted");
    if (this.running) return refuse("a turn is running: wait for it to end, or call stop() first");
    if (!this.catalog) return refuse("the catalog is not created yet (useCatalog is still loading)");
    if (typeof text !== "string" || text.trim() === "") return refuse("text must be a non-empty string");
    if (this.conversation && !this.#loaded) {
      if (this.#loading) return refuse("the stored conversation is still loading");
      this.#load();
      return refuse("the stored conversation could not be read (see error); reading it again");
    }
    const { onEvent } = this.options;
    let agent;
    try {
      agent = this.#agentFor(this.#agentOptions());
    } catch (error) {
      return Promise.reject(error);
    }
    const ctrl = new AbortController();
    this.#run = { ctrl, agent };
    this.running = true;
    const user = Object.freeze({ id: this.#id("u"), role: "user", text });
    const reply = Object.freeze({ id: this.#id("a"), role: "assistant", parts: Object.freeze([]), state: "streaming" });
    this.#publish({ messages: Object.freeze([...this.snapshot.messages, user, reply]), error: null });
    const input = [...this.#history, { role: "user", content: text }];
    let done;
    const runOptions = {
      signal: ctrl.signal,
      onEvent: (ev) => {
        if (this.#run?.ctrl !== ctrl) return;
        this.#event(ev);
        if (typeof onEvent === "function") onEvent(ev);
      },
    };
    try {
      // A stored conversation keeps its own history.
      done = this.conversation ? agent._run(text, runOptions, this.conversation).done : agent.run(input, runOptions).done;
    } catch (error) {
      done = Promise.reject(error);
    }
    return done.then((res) => {
      this.#history = res.messages;
      this.#end(ctrl, (m) => {
        m.state = "done";
        m.finishReason = res.finishReason;
        // A custom model function answers whole: no text events came.
        if (!m.parts.some((p) => p.type === "text") && res.text) m.parts.push(Object.freeze({ type: "text", text: res.text }));
      });
    }, (error) => {
      const stopped = error?.code === "aborted";
      if (this.conversation && !stopped) {
        // Show what is stored (another tab's turn, or nothing of a first
        // step that failed), with the error.
        this.#end(ctrl, (m) => { m.state = "error"; m.error = error; }, error);
        this.#load({ error });
        return;
      }
      // What the person saw stays in the conversation the model reads next.
      const said = this.snapshot.messages.at(-1)?.parts?.filter((p) => p.type === "text").map((p) => p.text).join("") ?? "";
      this.#history = [...input, ...(said ? [{ role: "assistant", content: said }] : [])];
      this.#end(ctrl, (m) => {
        m.state = stopped ? "stopped" : "error";
        if (!stopped) m.error = error;
        m.parts = m.parts.map((p) => (p.type === "tool" && (p.state === "running" || p.state === "writing") ? Object.freeze({ ...p, state: "stopped" }) : p));
      }, stopped ? null : error);
    });
  }

  #end(ctrl, fn, error = null) {
    if (this.#run?.ctrl !== ctrl) return;
    this.#run = null;
    this.running = false;
    this.#settleAll();
    this.#update(fn);
    this.#publish({ error });
  }

  /** Aborts the running turn: the model request and its tool calls are cancelled. */
  stop() {
    if (!this.#run) return false;
    this.#run.ctrl.abort();
    this.#settleAll();
    this.#publish();
    return true;
  }

  /** A question from the catalog's hooks: pending until answered. */
  ask(kind, request, ctx) {
    return new Promise((resolve) => {
      const p = { id: this.#id(kind === "approval" ? "approval-" : "elicitation-"), kind, request, resolve };
      if (kind === "elicitation") p.serverId = ctx?.serverId ?? "";
      this.#pending.push(p);
      this.#link();
      this.#publish();
    });
  }

  /**
   * Ties pending approvals to the tool calls they are about: the request
   * names the exported tool, and its call shows "awaiting-approval".
   */
  #link() {
    const last = this.snapshot.messages.at(-1);
    if (!this.running || last?.role !== "assistant") return;
    for (const p of this.#pending) {
      // A view's call (via "app") is not one of the model's.
      if (p.kind !== "approval" || p.toolCallId || p.request?.via === "app") continue;
      const call = last.parts.find((x) => x.type === "tool" && x.state === "running" && x.name === p.request?.name &&
        !this.#pending.some((q) => q.toolCallId === x.id));
      if (!call) continue;
      p.toolCallId = call.id;
      this.#update((m) => AgentStore.#tool(m, call.id, { state: "awaiting-approval" }));
    }
  }

  /** Answers a pending question of kind: the one with id, else the oldest. */
  answer(kind, answer, id) {
    const i = this.#pending.findIndex((p) => p.kind === kind && (id === undefined || p.id === id));
    if (i < 0) return false;
    const [p] = this.#pending.splice(i, 1);
    if (p.toolCallId) this.#update((m) => AgentStore.#tool(m, p.toolCallId, { state: "running" }));
    p.resolve(answer);
    this.#publish();
    return true;
  }

  /** Every pending question gets the answer of nobody. */
  #settleAll() {
    const all = this.#pending;
    this.#pending = [];
    for (const p of all) p.resolve(refusal(p.kind));
  }
}

/** Text of a stored message's content (a string, or parts). */
const textOf = (c) => (typeof c === "string" ? c : Array.isArray(c) ? c.map((p) => p?.text ?? "").join("") : "");

/**
 * A stored conversation's messages (Chat Completions shapes) as useAgent
 * shows them: each user message, then one assistant message per turn with
 * its text and tool parts (a stored tool result does not say whether it
 * was an error: it shows as done).
 */
function fromStored(messages, nextId) {
  const out = [];
  let reply = null;
  const close = () => {
    if (!reply) return;
    out[out.length - 1] = Object.freeze({ ...reply, parts: Object.freeze(reply.parts.map((p) => Object.freeze(p))) });
    reply = null;
  };
  for (const m of messages) {
    if (m.role === "system") continue;
    if (m.role === "user") {
      close();
      out.push(Object.freeze({ id: nextId("u"), role: "user", text: textOf(m.content) }));
      continue;
    }
    if (!reply) {
      reply = { id: nextId("a"), role: "assistant", parts: [], state: "done" };
      out.push(reply);
    }
    if (m.role === "assistant") {
      const text = textOf(m.content);
      if (text) reply.parts.push({ type: "text", text });
      for (const tc of m.tool_calls ?? []) reply.parts.push({ type: "tool", id: tc.id, name: tc.function?.name ?? "", arguments: tc.function?.arguments ?? "", state: "done" });
    } else if (m.role === "tool") {
      const p = reply.parts.find((x) => x.type === "tool" && x.id === m.tool_call_id);
      if (p) p.result = Object.freeze({ isError: false, text: textOf(m.content) });
    }
  }
  close();
  return Object.freeze(out);
}

/** a + b of two usages (a may be null). */
function addUsage(a, b) {
  const sum = { inputTokens: (a?.inputTokens ?? 0) + (b.inputTokens ?? 0), outputTokens: (a?.outputTokens ?? 0) + (b.outputTokens ?? 0) };
  const cached = (a?.cachedInputTokens ?? 0) + (b.cachedInputTokens ?? 0);
  const reasoning = (a?.reasoningTokens ?? 0) + (b.reasoningTokens ?? 0);
  if (cached) sum.cachedInputTokens = cached;
  if (reasoning) sum.reasoningTokens = reasoning;
  return Object.freeze(sum);
}

/**
 * A conversation with a model over a catalog's tools, as a UI shows it.
 * catalog: what useCatalog returned (or a Catalog, or null while there is
 * none); options: the agent's (model, system, maxSteps, authWaitMs,
 * compact) plus onEvent, read at each send(), and conversation: the id of
 * a stored conversation, loaded on mount (status "loading") and saved by
 * every turn. A new catalog or conversation id starts anew.
 */
export function useAgent(catalog, options = {}) {
  const cat = (catalog && "catalog" in catalog && !(catalog instanceof EventTarget) ? catalog.catalog : catalog) ?? null;
  const conversation = typeof options?.conversation === "string" && options.conversation !== "" ? options.conversation : undefined;
  const store = useStore(agentKey(cat, conversation), () => new AgentStore(cat, options, conversation));
  store.options = options;
  const snap = useSyncExternalStore(store.subscribe, store.getSnapshot, store.getSnapshot);
  const send = useCallback((text) => store.send(text), [store]);
  const stop = useCallback(() => store.stop(), [store]);
  const approve = useCallback((answer, id) => store.answer("approval", answer, id), [store]);
  const answerElicitation = useCallback((answer, id) => store.answer("elicitation", answer, id), [store]);
  return { ...snap, send, stop, approve, answerElicitation };
}

/**
 * A tool's view (MCP Apps; docs/JSAPI.md) for the component's lifetime:
 * mcp.apps.render into a div of its own, a new `result` sent to the view,
 * `theme` followed, and the view closed on unmount. Props: `catalog` (or
 * useCatalog's result) with `serverId`, or `client`; `tool`, `arguments`,
 * `result`, `sandboxUrl`, `theme`, `displayModes`, `onMessage`,
 * `onOpenLink`, `onModelContext`, `onReady(view)`, `onError(error)` (the
 * view could not be rendered, or failed later);
 * `className` and `style` for the div. A tool part of useAgent with `app`
 * renders as <McpAppView catalog={cat} {...part.app} arguments={…}
 * result={part.callResult} sandboxUrl={…} />.
 */
export function McpAppView(props) {
  const ref = useRef(null);
  const viewRef = useRef(null);
  const latest = useRef(props);
  latest.current = props;
  const given = props.catalog;
  const cat = (given && "catalog" in given && !(given instanceof EventTarget) ? given.catalog : given) ?? null;
  const client = props.client ?? null;
  const tool = typeof props.tool === "string" ? props.tool : props.tool?.tool?.name ?? props.tool?.name;
  const sandboxUrl = props.sandboxUrl === undefined ? undefined : String(props.sandboxUrl);
  useEffect(() => {
    if (!cat && !client) return undefined; // the catalog is still loading
    let gone = false;
    let view = null;
    const p = latest.current;
    // A handler the view may use only when the page gave one (the view
    // is told what the host handles when it starts).
    const relay = (k) => (p[k] ? (...a) => latest.current[k]?.(...a) : undefined);
    load()
      .then((mcp) => mcp.apps.render(ref.current, {
        catalog: cat ?? undefined, client: cat ? undefined : client, serverId: p.serverId, tool, arguments: p.arguments,
        result: p.result, sandboxUrl, theme: p.theme, displayModes: p.displayModes,
        onMessage: relay("onMessage"), onOpenLink: relay("onOpenLink"), onModelContext: relay("onModelContext"),
      }))
      .then((v) => {
        if (gone) return v.close();
        view = viewRef.current = v;
        v.addEventListener("ready", () => latest.current.onReady?.(v), { once: true });
        v.addEventListener("error", (e) => {
          if (v.state !== "failed") return; // a teardown the view did not answer
          if (latest.current.onError) latest.current.onError(e.detail);
          else console.warn(`mcp: McpAppView: ${e.detail.message}`);
        });
        if (latest.current.result && latest.current.result !== p.result) v.sendToolResult(latest.current.result);
      }, (error) => {
        if (gone) return;
        if (latest.current.onError) latest.current.onError(error);
        else console.warn(`mcp: McpAppView: ${error.message}`);
      });
    return () => {
      gone = true;
      viewRef.current = null;
      view?.close();
    };
  }, [cat, client, props.serverId, tool, sandboxUrl]);
  useEffect(() => {
    if (props.result && viewRef.current) viewRef.current.sendToolResult(props.result);
  }, [props.result]);
  useEffect(() => {
    if (props.theme && viewRef.current) viewRef.current.setTheme(props.theme);
  }, [props.theme]);
  return createElement("div", { ref, className: props.className, style: props.style, "data-mcp-app-view": tool ?? "" });
}
