// start.js — where load() starts the Go runtime: in a SharedWorker or
// Worker (worker.js, over remote.js) where load()'s runtime option asks
// for one and the browser allows it, else on the page's main thread
// (boot.js); and preload()'s early fetch and compile of mcp.wasm.
import { Remote, Refused } from "./remote.js";
import { compileModule, instantiate, newGo, run } from "./boot.js";
import { MCPError, asMCPError, errorOf, goError, invalid } from "./errors.js";
import { setPageRelay } from "./options.js";
import { Host, readHints } from "./host.js";
import { defaultRuntime, tracer, workerHooks } from "./testhooks.js";
// This build's module under its content-hashed name, written by make build
// (docs/JSAPI.md, "The module's URL and its caching").
import { wasmURL as builtWasmURL } from "./wasmurl.js";

/** The values of load()'s runtime option. */
const RUNTIMES = ["auto", "shared-worker", "worker", "main"];

let early = null; // preload() on the main thread: {href, module: Promise<WebAssembly.Module | null>}

/**
 * preload()'s part on the main thread: fetches and compiles mcp.wasm now,
 * for start() to take, and returns true (also when it did already, or when
 * wasmURL is bad: load() says so). Returns false when the whole load should
 * start now instead: a worker runtime (the worker fetches and compiles off
 * the main thread), or progress to report.
 */
export function compileEarly(options) {
  if (early) return true;
  const runtime = options?.runtime ?? defaultRuntime();
  if (runtime !== "main" || typeof options?.onProgress === "function") return false;
  let url;
  try {
    url = options.wasmURL === undefined ? builtWasmURL : new URL(options.wasmURL, import.meta.url);
  } catch {
    return true; // load() says what is wrong
  }
  early = {
    href: url.href,
    // On a failure load() fetches again and reports it.
    module: compileModule(url, { makeError: (code, message) => new MCPError(code, message) }).catch(() => null),
  };
  return true;
}

/**
 * Starts the Go runtime for load(options) and resolves make(api, go, url,
 * host, trace, version): the MCP object (mcp.js), which hears the
 * runtime's end through its _ended (a worker's: the next call starts a new
 * one) or _exited (the main thread's: for good).
 */
export async function start({ wasmURL, onProgress, runtime = defaultRuntime(), relay, relayMode } = {}, make) {
  if (onProgress !== undefined && typeof onProgress !== "function") {
    throw invalid("load(): onProgress must be a function");
  }
  if (!RUNTIMES.includes(runtime)) throw invalid(`load(): runtime must be ${RUNTIMES.map((r) => `"${r}"`).join(", ")}`);
  setPageRelay(relay, relayMode);
  // wasmurl.js holds the literal new URL("./mcp-<hash>.wasm", import.meta.url),
  // the pattern that Vite, webpack 5 and Parcel turn into an emitted asset
  // (esbuild does not). A name that changes with the content names the
  // build: a SharedWorker needs no request to tell builds apart.
  const url = wasmURL === undefined ? builtWasmURL : new URL(wasmURL, import.meta.url);
  const progress = onProgress && ((l, t) => {
    try { onProgress(l, t); } catch (e) { console.error("mcp: onProgress threw", e); }
  });
  // A worker runtime where asked for and allowed; else the main thread
  // (below). What the browser refused is said once, with where Go runs.
  const refused = []; // Refused
  const notice = (chosen) => {
    if (!refused.length) return;
    const csp = refused.some((e) => !e.keys) ? ", and the Content-Security-Policy a worker needs" : "";
    console.info(`mcp: ${refused.map((e) => e.message).join("; ")}; running ${chosen} (see docs/JSAPI.md, "Runtimes", for why${csp})`);
  };
  for (const mode of workerModes(runtime)) {
    const trace = tracer();
    const host = new Host(trace);
    let mcp = null;
    const remote = new Remote(mode, { wasmURL: url.href, hints: readHints(), ...workerHooks(mode) }, host.callbacks(), errorOf,
      (err) => mcp?._ended(err), progress);
    let ready;
    try {
      ready = await remote.start();
    } catch (e) {
      if (!(e instanceof Refused)) throw e;
      refused.push(e);
      continue;
    }
    notice("in a dedicated Worker");
    mcp = make(remote, null, url, host, trace, ready.version);
    return mcp;
  }
  notice("on the main thread");
  const go = newGo();
  // preload() fetched and compiled it already (or tried: null).
  const compiled = early?.href === url.href ? await early.module : null;
  early = null;
  const wasm = await instantiate(url, go, { compiled, onProgress: progress, makeError: (code, message, status) => new MCPError(code, message, { status }) });
  const trace = tracer();
  const host = new Host(trace);
  let mcp = null;
  let ended = null; // the MCPError of the Go program's end
  const api = await run(go, wasm, { makeError: goError, host: host.callbacks(), hints: readHints() }, (e) => {
    ended = e === undefined ? new MCPError("closed", "the Go runtime exited; reload the page") : asMCPError(e);
    mcp?._exited(ended); // never silently: every pending call rejects
  });
  mcp = make(api, go, url, host, trace, api.version);
  if (ended) mcp._exited(ended);
  return mcp;
}

/** The worker modes to try, in order, for load()'s runtime option (none: the main thread). */
function workerModes(runtime) {
  const modes = [];
  if ((runtime === "auto" || runtime === "shared-worker") && typeof SharedWorker === "function") modes.push("shared-worker");
  if (runtime !== "main" && typeof Worker === "function") modes.push("worker");
  return modes;
}
