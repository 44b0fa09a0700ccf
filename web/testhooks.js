// testhooks.js — the test hooks, read here only: globals that the e2e
// suites (and the benchmark) set on the page before mcp.js loads, so that
// one build runs every path a browser could take. A page never sets them;
// unset, each gives the library's own default. What each does:
//
//   __mcpwasmRuntime        the default of load()'s runtime option (the
//                           suites run every mode this way)
//   __mcpwasmTrace          a function that hears of every crossing between
//                           the page and Go: ("js→go", op), ("go→js", callback)
//   __mcpwasmRefuseKeys     worker modes (a list) whose worker acts as if it
//                           could not store WebCrypto keys, as WebKit's
//                           SharedWorker, so that Chromium takes that path too
//   __mcpwasmTrustKeys      worker modes (a list) whose key check is skipped,
//                           so that a benchmark can time WebKit's
//                           SharedWorker against a server without sign-in
//   __mcpwasmNoIndexedDB    true: the worker has no IndexedDB
//   __mcpwasmSeverWindowMs  how soon after navigating a closed-looking login
//                           window counts as severed by COOP (auth.js)
//
// skewClockForTest (below) is the one hook a test calls rather than sets
// (through mcp._skewClockForTest).

/** load()'s runtime when the page passes none. */
export const defaultRuntime = () => globalThis.__mcpwasmRuntime ?? "auto";

/** The crossing tracer, or null. */
export const tracer = () => (typeof globalThis.__mcpwasmTrace === "function" ? globalThis.__mcpwasmTrace : null);

/** What the worker of mode is told to pretend (remote.js carries it to worker.js). */
export function workerHooks(mode) {
  const listed = (hook) => Array.isArray(hook) && hook.includes(mode);
  return {
    refuseKeysForTest: listed(globalThis.__mcpwasmRefuseKeys),
    trustKeysForTest: listed(globalThis.__mcpwasmTrustKeys),
    noIndexedDBForTest: globalThis.__mcpwasmNoIndexedDB === true,
  };
}

/** The severed-window span of auth.js, or ms when no test set one. */
export function severWindowMs(ms) {
  const set = globalThis.__mcpwasmSeverWindowMs;
  return typeof set === "number" ? set : ms;
}

let clockSkewMs = 0;

/**
 * Moves this global's wall clock ms ahead (cumulative), leaving its
 * monotonic clock alone, as a computer that slept does in engines whose
 * performance.now() stands still during sleep. Go's runtime reads its wall
 * time from `new Date` (wasm_exec.js's runtime.walltime) and its monotonic
 * time from performance.now(), so time.Now() jumps while durations do not.
 * Only tests call it (on the page and in the worker); nothing changes
 * until they do.
 */
export function skewClockForTest(ms) {
  if (!Number.isFinite(ms)) throw new TypeError("skewClockForTest: ms must be a finite number");
  if (clockSkewMs === 0 && !globalThis.Date.__mcpwasmSkewed) {
    const RealDate = globalThis.Date;
    class SkewedDate extends RealDate {
      constructor(...args) {
        if (args.length === 0) super(RealDate.now() + clockSkewMs);
        else super(...args);
      }
      static now() { return RealDate.now() + clockSkewMs; }
      static __mcpwasmSkewed = true;
    }
    globalThis.Date = SkewedDate;
  }
  clockSkewMs += ms;
}
