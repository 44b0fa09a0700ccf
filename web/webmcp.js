// webmcp.js — a catalog's side of WebMCP (document.modelContext): the
// page's own tools as a catalog's "webmcp" servers (Go lists and calls
// them through the host callbacks webmcpTools and webmcpCall), and the
// catalog's tools offered to the browser's agent (exposeToPage).
import { MCPError, invalid } from "./errors.js";
import { globRegExp } from "./rules.js";

/** The page's WebMCP API (document.modelContext), or null where the browser has none. */
function modelContext() {
  const mc = globalThis.document?.modelContext;
  return mc && typeof mc.getTools === "function" && typeof mc.executeTool === "function" && typeof mc.registerTool === "function" ? mc : null;
}

const NO_WEBMCP = "this browser has no WebMCP (document.modelContext; Chromium: --enable-features=WebMCP or the origin trial)";

// The names the page's catalogs registered with exposeToPage, with a count
// each: a catalog's webmcp server never lists them, so that no tool comes
// back to the catalog it came from.
const exposed = new Map();

/** The WebMCP glue of one catalog. */
export class CatalogWebMCP {
  #catalog;
  #closed;
  #warn;
  #changed;
  #servers = new Set(); // ids of the servers that are the page's WebMCP tools
  #toolchange = null; // the listener on document.modelContext, while there are such servers
  #exposures = new Set(); // AbortControllers of expose()

  /**
   * catalog: its tools() and callTool() serve expose(); closed() tells
   * whether it closed; warn(id, message) sends its warning event;
   * changed() has Go list the page's tools again.
   */
  constructor(catalog, { closed, warn, changed }) {
    this.#catalog = catalog;
    this.#closed = closed;
    this.#warn = warn;
    this.#changed = changed;
  }

  /**
   * Server id is the page's WebMCP tools: follow their toolchange. Returns
   * the warning when the browser has no WebMCP (the server stays, with no
   * tools), also sent as a warning event once the caller can listen.
   */
  add(id) {
    this.#servers.add(id);
    const mc = modelContext();
    if (!mc) {
      const message = `${NO_WEBMCP}: server ${JSON.stringify(id)} has no tools`;
      queueMicrotask(() => this.#warn(id, message));
      return message;
    }
    if (!this.#toolchange) {
      this.#toolchange = () => {
        if (!this.#closed()) this.#changed();
      };
      mc.addEventListener("toolchange", this.#toolchange);
    }
    return null;
  }

  /** Server id is gone. */
  delete(id) {
    this.#servers.delete(id);
  }

  // host.webmcpTools: the tools this page registered (not its frames', not
  // those a catalog exposed), as the webmcp servers' list.
  async tools() {
    const mc = modelContext();
    if (!mc) return "[]";
    const list = [];
    for (const t of await mc.getTools()) {
      if (t?.window !== globalThis.window || exposed.has(t.name)) continue;
      list.push({ name: t.name, title: t.title || undefined, description: t.description, inputSchema: t.inputSchema, annotations: t.annotations });
    }
    return JSON.stringify(list);
  }

  // host.webmcpCall: runs one of them through executeTool, as the
  // browser's agent would; a failure is the tool's, told to the model.
  async call(name, args) {
    const mc = modelContext();
    if (!mc) return JSON.stringify({ error: NO_WEBMCP });
    const tool = exposed.has(name) ? undefined : (await mc.getTools()).find((t) => t?.window === globalThis.window && t.name === name);
    if (!tool) return JSON.stringify({ error: `the page has no WebMCP tool ${JSON.stringify(name)} now` });
    try {
      const r = await mc.executeTool(tool, args);
      if (r === undefined || r === null) return "{}";
      return JSON.stringify({ result: typeof r === "string" ? r : JSON.stringify(r) });
    } catch (e) {
      return JSON.stringify({ error: `${e?.name ?? "Error"}: ${e?.message ?? String(e)}` });
    }
  }

  /** The catalog's exposeToPage() (see there). */
  async expose({ tools = ["*"], signal } = {}) {
    if (!Array.isArray(tools) || tools.some((p) => typeof p !== "string" || /[[\\]/.test(p))) {
      throw invalid("exposeToPage(): tools must be an array of name patterns with * and ?, like [\"notes_*\"]");
    }
    if (signal !== undefined && !(signal instanceof AbortSignal)) throw invalid("exposeToPage(): signal must be an AbortSignal");
    if (this.#closed()) throw new MCPError("closed", "this catalog is closed");
    const mc = modelContext();
    if (!mc) {
      this.#warn("", `${NO_WEBMCP}: exposeToPage() registered no tools`);
      return [];
    }
    signal?.throwIfAborted();
    const list = await this.#catalog.tools({ signal });
    // close() may have run while the tools were listed: it aborted the
    // exposures it knew of, and this one must not outlive it.
    if (this.#closed()) throw new MCPError("closed", "this catalog is closed");
    const ac = new AbortController();
    this.#exposures.add(ac);
    const names = [];
    ac.signal.addEventListener("abort", () => {
      this.#exposures.delete(ac);
      for (const n of names) {
        const c = exposed.get(n) - 1;
        if (c > 0) exposed.set(n, c);
        else exposed.delete(n);
      }
    }, { once: true });
    signal?.addEventListener("abort", () => ac.abort(), { once: true, signal: ac.signal });
    const match = tools.map(globRegExp);
    for (const t of list) {
      // The page's own tools are the page's to offer, not the catalog's.
      if (ac.signal.aborted || this.#servers.has(t.serverId) || !match.some((r) => r.test(t.name))) continue;
      const name = t.name;
      // What a remote server answers is not the page's word: the browser's
      // agent is told so (untrustedContentHint).
      const annotations = { readOnlyHint: t.tool?.annotations?.readOnlyHint === true, untrustedContentHint: true };
      try {
        await mc.registerTool({
          name,
          ...(t.tool?.title ? { title: t.tool.title } : {}),
          description: t.tool?.description || name,
          inputSchema: t.tool?.inputSchema ?? { type: "object" },
          annotations,
          execute: (args, client) => this.#catalog.callTool(name, args ?? {}, { signal: client?.signal instanceof AbortSignal ? client.signal : undefined }),
        }, { signal: ac.signal });
      } catch (e) {
        this.#warn(t.serverId, `exposeToPage(): the browser refused tool ${JSON.stringify(name)}: ${e?.message ?? e}`);
        continue;
      }
      names.push(name);
      exposed.set(name, (exposed.get(name) ?? 0) + 1);
    }
    return names;
  }

  /** The catalog closes: its exposed tools leave the page, toolchange is no longer heard. */
  close() {
    for (const ac of [...this.#exposures]) ac.abort();
    if (this.#toolchange) modelContext()?.removeEventListener("toolchange", this.#toolchange);
    this.#toolchange = null;
  }
}
