// conversation.js — a stored conversation of an agent (agent.conversation()),
// and runTurn, the agent's one way to run a turn inside such a conversation.
import { invalid } from "./errors.js";

/**
 * agent[runTurn](input, options, conversationId) runs a turn as
 * agent.run(input, options) does, in the stored conversation with that id
 * (undefined: none); returns {done}. Not public API: an internal export for
 * Conversation and the React binding's useAgent, which runs a stored
 * conversation's turns without holding its Conversation.
 */
export const runTurn = Symbol("mcpwasm: an agent's turn in a stored conversation");

/** Refuses a conversation id that is not a non-empty string. */
export function checkConversationId(id) {
  if (typeof id !== "string" || id === "") throw invalid("conversation(): id must be a non-empty string");
}

/**
 * A stored conversation of an agent. Its fields are as last loaded or
 * saved: id, title, summary, messages, revision, compactedTurns,
 * tokenScale, createdAt, updatedAt, and views: by tool call id, each call
 * of messages whose tool has a view ({app, result}: the view, with the
 * stateKey its storage is kept under, and the server's whole result), to
 * show it again with mcp.apps.render.
 */
export class Conversation {
  #agent;
  #mcp;
  #agentId;
  constructor(agent, mcp, agentId, c) {
    this.#agent = agent;
    this.#mcp = mcp;
    this.#agentId = agentId;
    this._set(c);
  }

  _set(c) {
    this.id = c.id;
    this.title = c.title ?? "";
    this.summary = c.summary ?? "";
    this.messages = c.messages ?? [];
    this.revision = c.revision ?? 0;
    this.compactedTurns = c.compactedTurns ?? 0;
    this.tokenScale = c.tokenScale ?? 0;
    this.createdAt = c.createdAt;
    this.updatedAt = c.updatedAt;
    this.views = c.views ?? {};
  }

  /**
   * Runs a turn of this conversation: the stored messages (and summary)
   * come first, input is appended, and every step is saved. Returns
   * {done}, a Promise of the run's result, whose messages are the
   * conversation's; this object is updated when it settles.
   */
  run(input, options = {}) {
    const { done } = this.#agent[runTurn](input, options, this.id);
    return {
      done: done.then((r) => {
        if (r?.conversation) this._set(r.conversation);
        return r;
      }, async (e) => {
        await this.reload().catch(() => {});
        throw e;
      }),
    };
  }

  /** Reads the stored conversation again (another tab may have added to it). */
  async reload() {
    this._set(await this.#mcp._invoke("agent.conversation", { id: this.#agentId, conversation: this.id }));
    return this;
  }

  /** Sets the title (and stores the conversation if it was new). */
  async rename(title) {
    if (typeof title !== "string") throw invalid("rename(): title must be a string");
    this._set(await this.#mcp._invoke("agent.renameConversation", { id: this.#agentId, conversation: this.id, title }));
    return this;
  }

  /** Deletes the stored conversation, and what its views kept; this object is left empty. */
  async delete() {
    await this.#mcp._invoke("agent.deleteConversation", { id: this.#agentId, conversation: this.id });
    this._set({ id: this.id });
  }
}
