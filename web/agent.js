// agent.js — an agent (cat.agent()): runs a model's turns over its
// catalog's tools in Go, with the page's model and summary functions
// called back, and keeps its stored conversations (conversation.js).
import { MCPError, invalid } from "./errors.js";
import { Conversation, checkConversationId, runTurn } from "./conversation.js";
import { target } from "./jsapi.js";

/** An agent: runs turns of a model over a catalog's tools. */
export class Agent {
  #mcp;
  #id;
  #model;
  #takeViewContexts;
  /**
   * id: the page's (agent.new has made it in Go); model and summarize: the
   * page's functions, or null; takeViewContexts(): the catalog's views'
   * model contexts not yet sent to a model, handed over once.
   */
  constructor(mcp, id, model, summarize, takeViewContexts) {
    this.#takeViewContexts = takeViewContexts;
    this.#mcp = mcp;
    this.#id = id;
    this.#model = model;
    if (summarize) {
      mcp._target(target("agent", id), {
        _summarize: async ({ previous, messages }) => {
          const summary = await summarize(messages, { previous });
          if (typeof summary !== "string") throw invalid("compact.summarize must resolve to a string (the summary)");
          return summary;
        },
      });
    }
  }

  /**
   * Runs one turn. input: a string (the user's message) or a list of
   * messages in the OpenAI Chat Completions shapes. Returns {done}, a
   * Promise of {messages, text, steps, finishReason}; onEvent hears text,
   * toolcall, toolresult, authrequired, approval, elicitation, step, done and error.
   */
  run(input, options = {}) {
    return this[runTurn](input, options, undefined);
  }

  // The model contexts of the catalog's views go to the model once, with
  // the next user message of any of its agents, as a user message before
  // it (the last context of each view).
  #withViewContext(input) {
    if (typeof input !== "string" && !Array.isArray(input)) return input;
    const views = this.#takeViewContexts();
    const parts = [];
    for (const [view, ctx] of views) {
      const lines = (ctx.content ?? []).filter((c) => c?.type === "text" && typeof c.text === "string").map((c) => c.text);
      if (ctx.structuredContent !== undefined) lines.push(JSON.stringify(ctx.structuredContent));
      // As JSON strings: a view's text cannot pass for the end of the block.
      if (lines.length) parts.push(`From the view of ${view.serverId ? `${view.serverId}'s ` : ""}tool ${JSON.stringify(view.tool)}: ${JSON.stringify(lines)}`);
    }
    if (!parts.length) return input;
    const context = { role: "user", content: `[Context the app's views in the page set for you; the user did not write it]\n${parts.join("\n")}\n[End of the views' context]` };
    if (typeof input === "string") return [context, { role: "user", content: input }];
    return input.length ? [...input.slice(0, -1), context, input[input.length - 1]] : [context];
  }

  /** A turn, in the stored conversation with id conversation (or none): see runTurn. */
  [runTurn](input, { signal, onEvent } = {}, conversation) {
    if (onEvent !== undefined && typeof onEvent !== "function") throw invalid("run(): onEvent must be a function");
    if (signal !== undefined && !(signal instanceof AbortSignal)) throw invalid("run(): signal must be an AbortSignal");
    input = this.#withViewContext(input);
    const run = this.#mcp._newId();
    const model = this.#model;
    this.#mcp._target(target("run", run), {
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
    const done = this.#mcp._invoke("agent.run", { id: this.#id, run, input, conversation }, signal, events)
      .finally(() => this.#mcp._target(target("run", run), null));
    return { done };
  }

  /**
   * The stored conversation id (a new, empty one when none is stored):
   * kept in IndexedDB, sealed like the sign-ins, shared by the origin's tabs.
   */
  async conversation(id) {
    checkConversationId(id);
    return new Conversation(this, this.#mcp, this.#id, await this.#mcp._invoke("agent.conversation", { id: this.#id, conversation: id }));
  }

  /** The stored conversations, the most recently updated first: [{id, title, messages, revision, createdAt, updatedAt}]. */
  conversations() {
    return this.#mcp._invoke("agent.conversations", { id: this.#id });
  }

  /** Forgets the agent. */
  close() {
    try { this.#mcp._invokeSync("agent.close", { id: this.#id }); } catch { /* already gone */ }
    this.#mcp._target(target("agent", this.#id), null);
  }
}
