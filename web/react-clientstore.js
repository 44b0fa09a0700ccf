// react-clientstore.js — the state of one client for useMcpClient.
import { load } from "./mcp.js";
import { Store, notReady } from "./react-store.js";

/** The state of one client for useMcpClient. */
export class ClientStore extends Store {
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
