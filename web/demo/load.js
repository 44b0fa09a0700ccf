// load.js — downloads and starts the MCP client module (mcp.wasm through
// mcp.js), with a progress bar, a Retry button, and a ready line that says
// what went over the network and how long it took.
import { load } from "./mcp.js";
import { hashedName } from "./wasmurl.js";
import { $, fmtBytes, fmtMs, describeError } from "./util.js";
import { addLog } from "./log.js";

const loadBox = $("#load-progress");
const loadBar = $("#load-bar");
const loadText = $("#load-text");
const loadRetry = $("#load-retry");

const TIMING_WAIT_MS = 2000;

let ready = null; // {resolve} of the promise loadModule returned

/**
 * Loads the module; resolves with it once loaded (a failed load shows Retry
 * and the promise waits for a retry that works).
 */
export function loadModule() {
  const p = new Promise((resolve) => { ready = resolve; });
  loadRetry.addEventListener("click", attempt);
  attempt();
  return p;
}

/** The resource timing of the module's download (mcp-<hash>.wasm, or mcp.wasm), the latest; null if the browser has none. */
function wasmTiming() {
  const entries = performance.getEntriesByType("resource")
    .filter((e) => {
      try {
        const path = new URL(e.name).pathname, name = path.slice(path.lastIndexOf("/") + 1);
        return name === "mcp.wasm" || hashedName.test(name);
      } catch {
        return false;
      }
    });
  return entries.at(-1) ?? null;
}

/** The module's resource timing, waiting up to TIMING_WAIT_MS for it to be queued; null without one. */
async function settledTiming() {
  const now = wasmTiming();
  if (now) return now;
  return new Promise((resolve) => {
    const observer = new PerformanceObserver(() => {
      const t = wasmTiming();
      if (t) done(t);
    });
    const timer = setTimeout(() => done(null), TIMING_WAIT_MS);
    function done(t) {
      observer.disconnect();
      clearTimeout(timer);
      resolve(t);
    }
    observer.observe({ type: "resource" });
  });
}

/**
 * "4.1 MB downloaded (15.2 MB unpacked)", "from the cache (4.1 MB, 15.2 MB
 * unpacked)": from the download's resource timing, which counts the bytes
 * that went over the network (compressed), not the module's size in memory.
 */
function downloadSummary(t) {
  if (!t || (!t.encodedBodySize && !t.transferSize)) return { text: "", transferred: 0 };
  const unpacked = t.decodedBodySize && t.decodedBodySize !== t.encodedBodySize ? `${fmtBytes(t.decodedBodySize)} unpacked` : "";
  // transferSize is 0 from the memory or disk cache, and just the headers
  // when the server said 304 Not Modified.
  if (t.transferSize === 0 || t.transferSize < t.encodedBodySize / 2) {
    return { text: `from the cache (${[fmtBytes(t.encodedBodySize), unpacked].filter(Boolean).join(", ")})`, transferred: t.transferSize };
  }
  return { text: `${fmtBytes(t.transferSize)} downloaded${unpacked ? ` (${unpacked})` : ""}`, transferred: t.transferSize };
}

async function attempt() {
  loadBox.dataset.state = "loading";
  loadRetry.hidden = true;
  loadBar.removeAttribute("value");
  loadText.textContent = "Downloading the MCP client…";
  let last = { loaded: 0, total: 0 };
  let frame = 0;
  const paint = () => {
    frame = 0;
    const { loaded, total } = last;
    if (total > 0) {
      loadBar.max = total;
      loadBar.value = Math.min(loaded, total);
      const pct = Math.floor((loaded / total) * 100);
      loadText.textContent = `Downloading the MCP client… ${pct}%`;
    } else {
      loadBar.removeAttribute("value");
      loadText.textContent = "Downloading the MCP client…";
    }
  };
  const started = performance.now();
  let mcp;
  try {
    mcp = await load({
      onProgress: (loaded, total) => {
        last = { loaded, total };
        if (!frame) frame = requestAnimationFrame(paint);
      },
    });
  } catch (err) {
    const { message, code } = describeError(err);
    loadBox.dataset.state = "error";
    loadBar.max = 1;
    loadBar.value = 0;
    loadText.textContent = `Could not load the MCP client: ${message}${code ? ` (${code})` : ""}`;
    loadRetry.hidden = false;
    addLog("load", `module failed to load: ${message}`, "error");
    return;
  }
  const took = performance.now() - started;
  if (frame) cancelAnimationFrame(frame);
  loadBar.max = 1;
  loadBar.value = 1;
  // The page downloaded the module only in the main runtime; its resource
  // timing can be queued a moment after load() resolved on a busy machine.
  const t = mcp.runtime === "main" ? await settledTiming() : null;
  const { text, transferred } = downloadSummary(t);
  loadBox.dataset.state = "done";
  if (t) {
    loadBox.dataset.transferredBytes = String(transferred);
    loadBox.dataset.encodedBytes = String(t.encodedBodySize);
    loadBox.dataset.decodedBytes = String(t.decodedBodySize);
  }
  loadText.textContent = `MCP client ready: ${text ? `${text} ` : ""}in ${fmtMs(took)}`;
  $("#version").textContent = mcp.version ? `(${mcp.version})` : "";
  addLog("load", `module ${mcp.version ? `${mcp.version} ` : ""}ready: ${text || "size unknown"}, ${fmtMs(took)}`);
  ready(mcp);
}
