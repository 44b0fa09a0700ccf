// boot.js — starting the Go runtime, the same way on the page's main
// thread (mcp.js) and in a worker (worker.js): fetch and instantiate
// mcp.wasm with progress, the hand-shake through globalThis.__mcpwasmBoot,
// the call of one operation with its JSON decoded, and the grant notices
// of other runtimes.
import { Go } from "./wasm_exec.js"; // Go's wasm_exec.js as an ES module (written at build time; sets no global)
import { GRANTS_CHANNEL } from "./auth.js";

/**
 * Fetches and instantiates mcp.wasm at url for go (a Go); a compiled
 * WebAssembly.Module skips the fetch. Rejects with makeError("network" |
 * "http", …) when the file cannot be had.
 */
export async function instantiate(url, go, { compiled, onProgress, makeError }) {
  if (compiled) return WebAssembly.instantiate(compiled, go.importObject);
  let response;
  try {
    response = await fetch(url);
  } catch (e) {
    throw makeError("network", `load(): cannot fetch ${url}: ${e.message}`);
  }
  if (!response.ok) throw makeError("http", `load(): ${url} answered HTTP ${response.status}`, response.status);
  const counted = withProgress(response, onProgress);
  const type = (response.headers.get("Content-Type") || "").split(";")[0].trim();
  if (type === "application/wasm" && WebAssembly.instantiateStreaming) {
    return (await WebAssembly.instantiateStreaming(counted, go.importObject)).instance;
  }
  // The server sent another MIME type: compile from the bytes instead.
  return (await WebAssembly.instantiate(await counted.arrayBuffer(), go.importObject)).instance;
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
