// react-agentstore.js — the running conversation of one useAgent: its
// messages as a UI shows them, built from the agent's events, and the
// questions of askUser waiting for the page's answer.
import { MCPError } from "./mcp.js";
import { runTurn } from "./conversation.js";
import { Store } from "./react-store.js";
import { agentStores, refusal } from "./react-ask.js";
import { addUsage, fromStored } from "./react-messages.js";

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

/** The running conversation of one useAgent. */
export class AgentStore extends Store {
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
      this.#publish({ messages: fromStored(conv.messages, (p) => this.#id(p), conv.views), ...patch });
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
          const patch = { name: ev.name, arguments: (p?.arguments ?? "") + (ev.argumentsDelta ?? "") };
          if (ev.app) patch.view = Object.freeze(ev.app); // its view may show the arguments as they come
          AgentStore.#tool(m, ev.id, patch, true);
        });
        break;
      case "toolcall": {
        const args = typeof ev.arguments === "string" ? ev.arguments : JSON.stringify(ev.arguments ?? {});
        const patch = { name: ev.name, serverId: ev.serverId ?? "", tool: ev.tool ?? "", arguments: args, state: "running" };
        if (ev.app) patch.view = Object.freeze(ev.app);
        this.#update((m) => AgentStore.#tool(m, ev.id, patch, true));
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
      done = this.conversation ? agent[runTurn](text, runOptions, this.conversation).done : agent.run(input, runOptions).done;
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
