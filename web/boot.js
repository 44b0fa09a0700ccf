// boot.js — starting the Go runtime, the same way on the page's main
// thread (mcp.js) and in a worker (worker.js): compile mcp.wasm (fetched
// with progress, or the copy modulecache.js kept) and instantiate it, the
// hand-shake through globalThis.__mcpwasmBoot, the call of one operation
// with its JSON decoded, and the grant notices of other runtimes.
import { Go } from "./wasm_exec.js"; // Go's wasm_exec.js as an ES module (written at build time; sets no global)
import { GRANTS_CHANNEL } from "./auth.js";
import { contentNamed, forgetModule, keepModule, keptModule } from "./modulecache.js";

/**
 * Instantiates mcp.wasm at url for go (a Go): compiled, a
 * WebAssembly.Module, when there is one, else what compileModule gives.
 * Rejects with makeError("network" | "http", …) when the file cannot be
 * had.
 */
export async function instantiate(url, go, { compiled, onProgress, makeError }) {
  return WebAssembly.instantiate(compiled ?? await compileModule(url, { onProgress, makeError }), go.importObject);
}

/**
 * Compiles mcp.wasm at url: the copy the Cache API keeps of a
 * content-hashed module (modulecache.js) when there is one that compiles,
 * else the fetched file, whose bytes are copied there for the next visit
 * a few seconds after they compiled (keepModule). Rejects with
 * makeError("network" | "http", …) when the file cannot be had.
 */
export async function compileModule(url, { onProgress, makeError }) {
  const href = String(url);
  const kept = await keptModule(href);
  if (kept) {
    try {
      return await compileResponse(withProgress(kept, onProgress));
    } catch {
      await forgetModule(href); // cut short or altered: fetch it anew
    }
  }
  let response;
  try {
    response = await fetch(url);
  } catch (e) {
    throw makeError("network", `load(): cannot fetch ${url}: ${e.message}`);
  }
  if (!response.ok) throw makeError("http", `load(): ${url} answered HTTP ${response.status}`, response.status);
  const copy = contentNamed(href) ? response.clone() : null;
  const module = compileResponse(withProgress(response, onProgress));
  if (copy) keepModule(href, copy, module);
  return module;
}

function compileResponse(response) {
  const type = (response.headers.get("Content-Type") || "").split(";")[0].trim();
  if (type === "application/wasm" && WebAssembly.compileStreaming) return WebAssembly.compileStreaming(response);
  // The server sent another MIME type: compile from the bytes instead.
  return response.arrayBuffer().then((bytes) => WebAssembly.compile(bytes));
}

/** Reports download progress (loaded, total bytes) while the body streams through. */
function withProgress(response, onProgress) {
  if (!onProgress || !response.body) return response;
  const encoded = response.headers.get("Content-Encoding");
  const total = Number(
    response.headers.get("X-Decoded-Content-Length") ??
      (encoded && encoded !== "identity" ? 0 : response.headers.get("Content-Length") ?? 0),
  ) || 0;
  let loaded = 0;
  onProgress(loaded, total);
  const body = response.body.pipeThrough(new TransformStream({
    transform(chunk, controller) {
      loaded += chunk.byteLength;
      onProgress(loaded, total);
      controller.enqueue(chunk);
    },
  }));
  return new Response(body, { status: response.status, headers: response.headers });
}

let booting = Promise.resolve(); // Go reads globalThis.__mcpwasmBoot at start: one start at a time

/**
 * Runs instance under go and resolves with the API Go hands back once it
 * is ready ({invoke, version}); boot is what Go reads at start (makeError,
 * host, hints). ended hears the program end (undefined when it exited, the
 * error when it crashed); an end before ready rejects.
 */
export async function run(go, instance, boot, ended) {
  const turn = booting;
  let done;
  booting = new Promise((r) => { done = r; });
  await turn;
  try {
    return await new Promise((resolve, reject) => {
      globalThis.__mcpwasmBoot = { ...boot, ready: resolve };
      go.run(instance).then(() => {
        reject(boot.makeError("closed", "the Go runtime exited before it was ready"));
        ended(undefined);
      }, (e) => {
        reject(e);
        ended(e);
      });
    });
  } finally {
    delete globalThis.__mcpwasmBoot;
    done();
  }
}

/** A new Go (wasm_exec.js's), for instantiate and run. */
export const newGo = () => new Go();

/**
 * Calls op of api with args (JSON-able): a Promise of its decoded result;
 * an operation that answers at once (sync) returns the decoded result or
 * throws.
 */
export function invokeJSON(api, op, args, { sync = false, signal, onProgress } = {}) {
  const r = sync ? api.invoke(op, JSON.stringify(args)) : api.invoke(op, JSON.stringify(args), signal, onProgress);
  if (sync) {
    if (r instanceof Error) throw r;
    return r === undefined ? undefined : JSON.parse(r);
  }
  if (r instanceof Error) return Promise.reject(r);
  return Promise.resolve(r).then((json) => (json === undefined ? undefined : JSON.parse(json)));
}

/**
 * Hears other runtimes' grant changes (other tabs, older builds) and
 * hands each to apply({kind, resource}); returns the channel, or null
 * where there is no BroadcastChannel.
 */
export function listenGrants(apply) {
  if (!("BroadcastChannel" in globalThis)) return null;
  const ch = new BroadcastChannel(GRANTS_CHANNEL);
  ch.addEventListener("message", (ev) => {
    const { kind, resource } = ev.data ?? {};
    if (typeof kind === "string") apply({ kind, resource });
  });
  return ch;
}
