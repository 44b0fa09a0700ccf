// client.js — a connection to one MCP server (mcp.client(), a catalog's
// server): its calls, its events, and the sign-in window it opens in the
// user's gesture.
import { MCPError, closedError, errorOf, invalid } from "./errors.js";
import { LoginWindow, RETURN_KEY } from "./auth.js";
import { callProblem } from "./rules.js";

/** A tool's result as callTool() and resumeTask() resolve with it. */
const toolResult = (r) => ({ content: r.content ?? [], structuredContent: r.structuredContent, isError: !!r.isError, _meta: r._meta });

/** The runtime's progress reports (JSON) to the page's onProgress, which may throw. */
const progressOf = (onProgress) => onProgress && ((p) => {
  try { onProgress(JSON.parse(p)); } catch (e) { console.error("mcp: onProgress threw", e); }
});

const isSkillURI = (uri) => typeof uri === "string" && uri.endsWith("/SKILL.md");

/**
 * A connection to one MCP server. Events: statechange, toolschanged,
 * resourceschanged, resourceupdated, promptschanged, log, tokenrefreshed,
 * storageerror, storagefallback, warning, elicitationcomplete.
 */
export class Client extends EventTarget {
  #mcp;
  #id;
  #state = "idle";
  #closed = false;
  #lost = null; // the MCPError of the worker runtime's end, until connect() makes this client again
  #receiver;
  #login = null; // LoginWindow of the running sign-in
  #unwatch = null;
  #dismissed = null; // {resolve, reject} of the running sign-in's authDismissed
  #dismissedEarly = null; // {url} when the window ended before Go asked (authDismissed comes after openAuth)
  #subs = new Set(); // the resources subscribed to: a remade client subscribes to them again
  /** Handles elicitation/create: async (params) => ({ action, content }). Set before connect(). */
  onElicitation = null;
  /** Handles sampling/createMessage: async (params) => ({ role, content, model, stopReason }). Set before connect(). */
  onSampling = null;
  /** From the server's initialize result, once connected. */
  serverInfo = null;
  capabilities = null;
  instructions = null;
  protocolVersion = null;

  constructor(mcp, id, url, options, receiver) {
    super();
    this.#mcp = mcp;
    this.#id = id;
    this.url = url;
    this._options = options;
    this.#receiver = receiver;
  }

  /** "idle" | "connecting" | "needs_auth" | "authorizing" | "connected" | "reconnecting" | "declined" | "failed" | "closed" */
  get state() { return this.#state; }

  #call(op, args = {}, signal, onProgress) {
    if (this.#closed) return Promise.reject(closedError());
    if (signal !== undefined && !(signal instanceof AbortSignal)) return Promise.reject(invalid("signal must be an AbortSignal"));
    if (this.#lost) {
      return Promise.reject(new MCPError("closed", "this client's runtime ended; call connect() to connect it again (its sign-in is kept)", { detail: this.#lost.message }));
    }
    return this.#mcp._invoke(op, { id: this.#id, ...args }, signal, onProgress);
  }

  /**
   * Makes this client again in a new runtime when the last one ended
   * (mcp.js's _remake); says whether it did, so that the caller subscribes
   * the new client again once it connects.
   */
  #remake() {
    if (!this.#lost || this.#closed) return false;
    this._remake();
    this.#lost = null;
    return true;
  }

  // The new runtime's client knows none of the page's subscriptions: they
  // are made again, in the order the page made them, before connect()
  // resolves, so updates flow once it has; one the server refuses now is a
  // warning event.
  async #resubscribe() {
    for (const uri of [...this.#subs]) {
      try {
        await this.#call("client.subscribe", { uri });
      } catch (e) {
        this._event("warning", { message: `subscribing again to ${uri} in the new runtime failed: ${e.message}; subscribe() again to retry` });
      }
    }
  }

  #handlers() {
    return { elicitation: typeof this.onElicitation === "function", sampling: typeof this.onSampling === "function" };
  }

  #session(s) {
    if (!s) return;
    this.serverInfo = s.serverInfo ?? null;
    this.capabilities = s.capabilities ?? null;
    this.instructions = s.instructions || null;
    this.protocolVersion = s.protocolVersion ?? null;
  }

  /** Connects and initializes; rejects "auth_required" when a sign-in is needed. */
  async connect({ signal } = {}) {
    const remade = this.#remake();
    this.#session(await this.#call("client.connect", this.#handlers(), signal));
    if (remade) await this.#resubscribe();
  }

  /**
   * Signs in: call it from a user gesture (a click). It opens the login
   * window at once, runs the authorization flow, then connects. Rejects
   * "popup_blocked" (state needs_auth) when the browser blocked the window,
   * "declined" when the user closed it or said no.
   */
  authorize({ signal } = {}) {
    if (this.#closed) return Promise.reject(closedError());
    const popup = this._popup();
    const lw = this._login;
    const remade = this.#remake();
    return this.#call("client.authorize", { popup, ...this.#handlers() }, signal).then(async (s) => {
      this.#session(s);
      if (remade) await this.#resubscribe();
    }, (e) => {
      this._closeAuthOf(lw);
      throw e;
    });
  }

  /** The sign-in window showing now, if any. */
  get _login() { return this.#login; }

  /**
   * A sign-in call failed: the window it opened closes, but not another:
   * its rejection can arrive after the person clicked Sign in again.
   */
  _closeAuthOf(lw) {
    if (this.#login === lw) this._closeAuth();
  }

  /** Opens the sign-in window in the user's gesture: "open", "blocked", "redirect" or "none" (identityAssertion: no window). */
  _popup() {
    if (typeof this._options.identityAssertion === "function") return "none";
    if (this._options.authMode === "redirect") return "redirect";
    return this.#openWindow() ? "open" : "blocked";
  }

  /** Signs out: revokes the grant where the server supports it and deletes it here and in other tabs. */
  async logout({ signal } = {}) {
    await this.#call("client.logout", {}, signal);
  }

  /** Every tool, all pages. */
  listTools({ signal } = {}) { return this.#call("client.listTools", {}, signal); }

  /** Calls a tool; resolves { content, structuredContent, isError }. */
  async callTool(name, args = {}, { signal, onProgress, timeoutMs } = {}) {
    if (typeof name !== "string" || name === "") throw invalid("callTool(): name must be a non-empty string");
    if (args === null || typeof args !== "object" || Array.isArray(args)) throw invalid("callTool(): arguments must be a plain object");
    if (onProgress !== undefined && typeof onProgress !== "function") throw invalid("callTool(): onProgress must be a function");
    const problem = callProblem({ timeoutMs });
    if (problem) throw invalid(problem);
    try {
      JSON.stringify(args); // refused here, with a sentence, rather than as the runtime's error
    } catch (e) {
      throw invalid(`callTool(): arguments cannot be sent as JSON: ${e.message}`);
    }
    const r = await this.#call("client.callTool", { name, arguments: args, timeoutMs }, signal, progressOf(onProgress));
    return toolResult(r);
  }

  /**
   * The tasks of this server whose results nobody has received yet, started
   * by this page or an earlier one (before a reload, in another tab):
   * `[{taskId, tool, status, statusMessage?, createdAt, expiresAt?}]`.
   */
  tasks({ signal } = {}) { return this.#call("client.tasks", {}, signal); }

  /**
   * Follows a kept task (see tasks()) to its result, as the callTool() that
   * started it would have: onProgress, onElicitation, the result once.
   */
  async resumeTask(taskId, { signal, onProgress, timeoutMs } = {}) {
    if (typeof taskId !== "string" || taskId === "") throw invalid("resumeTask(): taskId must be a task's taskId, as tasks() lists it");
    if (onProgress !== undefined && typeof onProgress !== "function") throw invalid("resumeTask(): onProgress must be a function");
    const problem = callProblem({ timeoutMs }, "resumeTask()");
    if (problem) throw invalid(problem);
    return toolResult(await this.#call("client.resumeTask", { taskId, timeoutMs }, signal, progressOf(onProgress)));
  }

  /** Cancels a kept task at the server (tasks/cancel) and forgets it. */
  cancelTask(taskId, { signal } = {}) {
    if (typeof taskId !== "string" || taskId === "") return Promise.reject(invalid("cancelTask(): taskId must be a task's taskId, as tasks() lists it"));
    return this.#call("client.cancelTask", { taskId }, signal);
  }

  listResources({ signal } = {}) { return this.#call("client.listResources", {}, signal); }
  listResourceTemplates({ signal } = {}) { return this.#call("client.listResourceTemplates", {}, signal); }

  readResource(uri, { signal } = {}) {
    if (typeof uri !== "string" || uri === "") return Promise.reject(invalid("readResource(): uri must be a non-empty string"));
    return this.#call("client.readResource", { uri }, signal);
  }

  listPrompts({ signal } = {}) { return this.#call("client.listPrompts", {}, signal); }

  getPrompt(name, args = {}, { signal } = {}) {
    if (typeof name !== "string" || name === "") return Promise.reject(invalid("getPrompt(): name must be a non-empty string"));
    if (args === null || typeof args !== "object" || Array.isArray(args) || Object.values(args).some((v) => typeof v !== "string")) {
      return Promise.reject(invalid("getPrompt(): arguments must be an object of strings"));
    }
    return this.#call("client.getPrompt", { name, arguments: args }, signal);
  }

  /**
   * Values the server suggests for argument (`{name, value}`: what the
   * person typed so far) of ref (`{type: "ref/prompt", name}` or
   * `{type: "ref/resource", uri}`, a resource template's URI template);
   * context holds the arguments already chosen. Resolves
   * `{values, total?, hasMore?}`.
   */
  complete(ref, argument, { context, signal } = {}) {
    if (ref === null || typeof ref !== "object" || (ref.type !== "ref/prompt" && ref.type !== "ref/resource")) {
      return Promise.reject(invalid('complete(): ref must be {type: "ref/prompt", name} or {type: "ref/resource", uri}'));
    }
    if (ref.type === "ref/prompt" && (typeof ref.name !== "string" || ref.name === "")) {
      return Promise.reject(invalid("complete(): a ref/prompt reference needs the prompt's name"));
    }
    if (ref.type === "ref/resource" && (typeof ref.uri !== "string" || ref.uri === "")) {
      return Promise.reject(invalid("complete(): a ref/resource reference needs the resource template's uri"));
    }
    if (argument === null || typeof argument !== "object" || typeof argument.name !== "string" || argument.name === "" || typeof argument.value !== "string") {
      return Promise.reject(invalid("complete(): argument must be {name, value}, both strings (value may be empty)"));
    }
    if (context !== undefined && (context === null || typeof context !== "object" || Array.isArray(context) || Object.values(context).some((v) => typeof v !== "string"))) {
      return Promise.reject(invalid("complete(): context must be an object of strings (the arguments already chosen)"));
    }
    const r = { type: ref.type, ...(ref.type === "ref/prompt" ? { name: ref.name } : { uri: ref.uri }) };
    return this.#call("client.complete", { ref: r, argument: { name: argument.name, value: argument.value }, context }, signal);
  }

  /**
   * Asks the server to say when the resource at uri changes: a
   * resourceupdated event ({uri}) per change, also after a reconnect.
   * Rejects "protocol" when the server offers no subscriptions.
   */
  async subscribe(uri, { signal } = {}) {
    if (typeof uri !== "string" || uri === "") throw invalid("subscribe(): uri must be a non-empty string");
    await this.#call("client.subscribe", { uri }, signal);
    this.#subs.add(uri);
  }

  /** Ends subscribe(uri); a uri never subscribed to is no error. */
  async unsubscribe(uri, { signal } = {}) {
    if (typeof uri !== "string" || uri === "") throw invalid("unsubscribe(): uri must be a non-empty string");
    this.#subs.delete(uri);
    await this.#call("client.unsubscribe", { uri }, signal);
  }

  /**
   * The server's skills (the Skills extension): `[{uri, name, description,
   * frontmatter, files?, dynamic?}]`, none of their files read. Rejects
   * "protocol" when the server does not declare the extension.
   */
  skills({ signal } = {}) { return this.#call("client.skills", {}, signal); }

  /** The server's current entry for the skill whose SKILL.md is at uri. */
  getSkill(uri, { signal } = {}) {
    if (!isSkillURI(uri)) return Promise.reject(invalid("getSkill(): uri must be the URI of a skill's SKILL.md (…/SKILL.md)"));
    return this.#call("client.getSkill", { uri }, signal);
  }

  /**
   * Reads the skill's SKILL.md and verifies it against the skill's entry
   * (size, sha256 digest, frontmatter): resolves the entry with `text`.
   * Content that fails verification rejects "protocol" and is not used.
   */
  loadSkill(uri, { signal } = {}) {
    if (!isSkillURI(uri)) return Promise.reject(invalid("loadSkill(): uri must be the URI of a skill's SKILL.md (…/SKILL.md)"));
    return this.#call("client.loadSkill", { uri }, signal);
  }

  /**
   * Reads a file of a loaded skill, by its URI or its path in the skill
   * ("references/FORMS.md"), verified against the skill's entry; a file the
   * entry does not list rejects.
   */
  readSkillFile(skill, file, { signal } = {}) {
    if (!isSkillURI(skill)) return Promise.reject(invalid("readSkillFile(): skill must be the URI of a loaded skill's SKILL.md"));
    if (typeof file !== "string" || file === "") return Promise.reject(invalid("readSkillFile(): file must be the file's URI or its path in the skill"));
    return this.#call("client.readSkillFile", { skill, file }, signal);
  }

  async ping({ signal } = {}) { await this.#call("client.ping", {}, signal); }

  /** The catalog that owned this client closed it. */
  _gone() {
    this._closeAuth();
    this.#closed = true;
    this.#state = "closed";
    this._forget?.();
  }

  /** Ends the session; later calls reject "closed". */
  async close() {
    if (this.#closed) return;
    this._closeAuth();
    if (this.#lost) { // its runtime ended: nothing to end there
      this.#closed = true;
      this._forget?.();
      return;
    }
    try {
      await this.#mcp._invoke("client.close", { id: this.#id });
    } catch (e) {
      if (e.code !== "closed") throw e; // the runtime is gone: closed anyway
    } finally {
      this.#closed = true;
      this._forget?.();
    }
  }

  /**
   * Opens the login window now (in the user gesture); null when blocked. A
   * sign-in already showing its window keeps it (brought to the front): the
   * second call joins the running flow.
   */
  #openWindow() {
    // Only a sign-in still running is joined: once it said "declined" (its
    // window may still be closing), a click asks again in a new window.
    if (this.#login?.isOpen && this.#login.state && this.#state === "authorizing") {
      this.#login.focus();
      return this.#login;
    }
    this._closeAuth();
    const lw = new LoginWindow(() => {
      // A person closed the window: the sign-in ends as declined.
      if (lw === this.#login) this.#settleDismissed(undefined);
    }, this._options.severedPopupTimeoutMs, (url) => {
      // The window reached the redirect URI and nothing there sent the
      // result: the sign-in ends redirect_unhandled.
      if (lw === this.#login) this.#settleDismissed(url);
    });
    if (!lw.open(`mcpwasm-login-${Math.random().toString(36).slice(2)}`)) return null;
    this.#login = lw;
    this.#unwatch = this.#receiver?.watch(lw);
    return lw;
  }

  // host.openAuth: show the authorization URL.
  _openAuth(url) {
    if (this.#closed) throw closedError();
    if (this._options.authMode === "redirect") {
      this._closeAuth();
      sessionStorage.setItem(RETURN_KEY, location.href);
      location.assign(url);
      return;
    }
    const lw = this.#login ?? this.#openWindow(); // interactive connect(): still in the gesture, we hope
    if (!lw) {
      throw new MCPError("popup_blocked", "the browser blocked the sign-in window: call authorize() from a click or key press");
    }
    lw.state = new URL(url).searchParams.get("state");
    lw.navigate(url);
  }

  // host.authDismissed: resolves when a person closes the sign-in window
  // (undefined), or with the redirect URI it reached when no callback
  // module ran there.
  _authDismissed() {
    this.#dismissed?.reject(new Error("superseded"));
    const early = this.#dismissedEarly;
    this.#dismissedEarly = null;
    if (early) return Promise.resolve(early.url);
    return new Promise((resolve, reject) => { this.#dismissed = { resolve, reject }; });
  }

  // The window's end reaches Go through authDismissed, which Go asks for
  // right after openAuth: an end before that waits for it.
  #settleDismissed(url) {
    if (this.#dismissed) this.#dismissed.resolve(url);
    else this.#dismissedEarly = { url };
  }

  // host.closeAuth: the sign-in ended. From Go, state names the sign-in
  // (its authorization URL's state): the end of an earlier one, arriving
  // after the person started the next, leaves the next one's window open.
  _closeAuth(state) {
    if (state && this.#login && this.#login.state !== state) return;
    this.#dismissed?.reject(new Error("the sign-in ended"));
    this.#dismissed = null;
    this.#dismissedEarly = null;
    this.#unwatch?.();
    this.#unwatch = null;
    this.#login?.close();
    this.#login = null;
  }

  /**
   * The runtime is gone: this client fails. When it was a worker's
   * (remakeable), connect() or authorize() makes the client again in a new
   * one; until then calls reject "closed".
   */
  _fail(err, remakeable = false) {
    if (remakeable && typeof this._remake === "function") this.#lost = err;
    this._closeAuth();
    this._event("statechange", { state: "failed", error: { code: err.code, message: err.message } });
  }

  // host.event
  _event(type, detail) {
    if (type === "storageerror") {
      console.warn(`mcp: a refreshed sign-in could not be stored (${detail.message}); it is kept in memory for this page`);
    }
    if (type === "storagefallback") {
      console.warn(`mcp: sign-ins are kept in memory and last only until this page closes: ${detail.reason}`);
    }
    if (type === "warning") console.warn(`mcp: ${this.url}: ${detail.message}`);
    if (type === "statechange") {
      this.#state = detail.state;
      this.#session(detail.session);
      if (detail.error) detail.error = errorOf(detail.error);
      // An end the page must act on is said once, as a sentence; the Go
      // chain stays in the error's detail (and at console.debug).
      if ((detail.state === "failed" || detail.state === "declined") && detail.error) {
        console.warn(`mcp: ${this.url}: ${detail.state}: ${detail.error.message}`);
      }
    }
    this.dispatchEvent(new CustomEvent(type, { detail: detail ?? {} }));
  }

  async _handle(prop, json) {
    const fn = this[prop];
    if (typeof fn !== "function") throw new MCPError("protocol", `no ${prop} handler is set`);
    const result = await fn(JSON.parse(json));
    if (result === null || typeof result !== "object") throw invalid(`${prop} must resolve to an object`);
    return JSON.stringify(result);
  }
}
