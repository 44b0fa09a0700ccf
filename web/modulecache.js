// modulecache.js — mcp.wasm's decoded bytes, kept in the Cache API so
// that a repeat visit compiles them at once. The HTTP cache keeps the body
// as the server compressed it and decodes it on every load, which in
// Chromium takes about three times as long as compiling the decoded bytes
// (docs/JSAPI.md, "The module's URL and its caching"). Only a module under
// a content-hashed name (`mcp-<16 hex digits>.wasm`, the build's) is kept:
// its bytes never change under that name. Nothing here throws or logs:
// without the Cache API (an insecure context, storage disabled or full)
// the module comes from the network and the HTTP cache as before.

import { hashedName } from "./wasmurl.js";

/** The Cache API cache that holds the module (one entry: this build's). */
export const MODULE_CACHE = "mcpwasm-module";

/**
 * Whether href's file name carries the module's content hash (wasmurl.js's
 * hashedName), so that its bytes never change under it; judged from the
 * URL itself.
 */
export function contentNamed(href) {
  try {
    const path = new URL(href).pathname;
    return hashedName.test(path.slice(path.lastIndexOf("/") + 1));
  } catch {
    return false;
  }
}

async function openCache() {
  try {
    return globalThis.caches ? await globalThis.caches.open(MODULE_CACHE) : null;
  } catch {
    return null; // no Cache API here (an opaque origin, storage disabled)
  }
}

/** The kept copy of href's module (a Response), or null. */
export async function keptModule(href) {
  if (!contentNamed(href)) return null;
  try {
    // Asked first, so that a first visit does not create the cache (a
    // write) before the module is there.
    if (!(await globalThis.caches?.has(MODULE_CACHE))) return null;
    return (await (await openCache())?.match(href, { ignoreVary: true })) ?? null;
  } catch {
    return null;
  }
}

/**
 * How long after the module compiled its copy is written into the Cache
 * API: once the start-up and the first calls are done, so that the write
 * does not compete with them.
 */
export const KEEP_DELAY_MS = 2000;

/**
 * Keeps response, an unread 200 for href (a clone of the response being
 * compiled: the same bytes, no second download), in place of the module
 * kept before (another build's), KEEP_DELAY_MS after compiled (its
 * compile) resolves; a module that did not compile is not kept.
 */
export function keepModule(href, response, compiled) {
  const drop = () => response.body?.cancel().catch(() => {});
  compiled.then(() => new Promise((r) => setTimeout(r, KEEP_DELAY_MS))).then(async () => {
    const cache = await openCache();
    if (!cache) return drop();
    await cache.put(href, response);
    for (const req of await cache.keys()) {
      if (req.url !== href) await cache.delete(req);
    }
  }, drop).catch(() => {}); // quota, storage cleared meanwhile: the next visit fetches it
}

/** Deletes href's kept copy (it did not compile: cut short or altered). */
export async function forgetModule(href) {
  try {
    await (await openCache())?.delete(href);
  } catch {
    // nothing kept, or no Cache API: nothing to delete
  }
}
