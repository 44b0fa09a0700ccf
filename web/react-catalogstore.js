// react-catalogstore.js — the state of one catalog for useCatalog.
import { load } from "./mcp.js";
import { Store } from "./react-store.js";
import { ask, askUser } from "./react-ask.js";

/** The state of one catalog for useCatalog. */
export class CatalogStore extends Store {
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
