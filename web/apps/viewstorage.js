// viewstorage.js — a view's storage that outlives the page (render()'s
// stateKey). A view runs on an opaque origin, so it has no localStorage of
// its own: the specification's pattern for view state ("Persisting view
// state": localStorage under a viewUUID from the tool result) would fail
// there. With a stateKey, the sandbox proxy gives the view a localStorage
// (storageScript, before the view's own scripts) that starts with what the
// page kept and posts each change to the page, which keeps it sealed in
// IndexedDB under the stateKey and the view's server (ViewStorage).

/** The notification the view's localStorage posts with its names and values after a change. */
export const STORAGE_CHANGED = "mcpwasm/notifications/storage";

/** A view's storage may hold this many UTF-16 code units of names and values (a localStorage's quota is of the same kind). */
export const MAX_VIEW_STORAGE = 1 << 20;

/** The size of names and values as the quota counts it. */
export const sizeOf = (items) => Object.entries(items).reduce((n, [k, v]) => n + k.length + v.length, 0);

/** Whether items is names and string values, within the quota. */
export function isStorage(items) {
  if (items === null || typeof items !== "object" || Array.isArray(items)) return false;
  return Object.values(items).every((v) => typeof v === "string") && sizeOf(items) <= MAX_VIEW_STORAGE;
}

// Runs in the view's document, before its own scripts: its source is put
// there as is, so it uses nothing from this module.
function viewLocalStorage(items, max, method) {
  const data = new Map(Object.entries(items));
  let size = 0;
  for (const [k, v] of data) size += k.length + v.length;
  let queued = false;
  const changed = () => {
    if (queued) return;
    queued = true;
    queueMicrotask(() => {
      queued = false;
      parent.postMessage({ jsonrpc: "2.0", method, params: { items: Object.fromEntries(data) } }, "*");
    });
  };
  const api = {
    get length() { return data.size; },
    key: (i) => [...data.keys()][Number(i) | 0] ?? null,
    getItem: (k) => data.get(String(k)) ?? null,
    setItem(k, v) {
      k = String(k);
      v = String(v);
      const old = data.get(k);
      const next = size - (old === undefined ? 0 : k.length + old.length) + k.length + v.length;
      if (next > max) throw new DOMException(`the view's storage holds at most ${max} characters (render()'s stateKey)`, "QuotaExceededError");
      if (old === v) return;
      data.set(k, v);
      size = next;
      changed();
    },
    removeItem(k) {
      k = String(k);
      const old = data.get(k);
      if (old === undefined) return;
      data.delete(k);
      size -= k.length + old.length;
      changed();
    },
    clear() {
      if (data.size === 0) return;
      data.clear();
      size = 0;
      changed();
    },
  };
  const own = (p) => typeof p === "symbol" || Object.hasOwn(api, p) || p in Object.prototype;
  // Names read and written as properties too, as a Storage's are.
  const storage = new Proxy(api, {
    get: (t, p) => (own(p) ? Reflect.get(t, p) : data.get(p)),
    set: (t, p, v) => (own(p) ? false : (api.setItem(p, v), true)),
    deleteProperty: (t, p) => (own(p) ? false : (api.removeItem(p), true)),
    has: (t, p) => own(p) || data.has(p),
    ownKeys: () => [...data.keys()],
    getOwnPropertyDescriptor: (t, p) => (typeof p === "string" && data.has(p) ? { value: data.get(p), writable: true, enumerable: true, configurable: true } : undefined),
  });
  Object.defineProperty(window, "localStorage", { configurable: true, enumerable: true, get: () => storage });
}

/** The script the proxy puts in the view's document, before the view's own: a localStorage holding items. */
export function storageScript(items) {
  const args = [items, MAX_VIEW_STORAGE, STORAGE_CHANGED].map((a) => JSON.stringify(a).replace(/</g, "\\u003c")).join(", ");
  return `<script>(${viewLocalStorage})(${args});</script>`;
}

/**
 * The page's side of a view's storage under a stateKey: what it held when
 * the view was made (items), and each change the view sends kept in turn
 * (one write at a time; a change that comes during a write is kept after
 * it, only the last one counting).
 */
export class ViewStorage {
  #views;
  #key;
  #writing = null; // the write in flight
  #next = null; // the items to write after it
  /** Called after each write with the items written and the error, or null. */
  onKept = () => {};
  /** Why what was kept could not be read (the view then starts empty), or "". */
  problem = "";

  constructor(views, key, items) {
    this.#views = views;
    this.#key = key;
    this.items = items;
  }

  /** Reads what views kept under stateKey for the server at url; never rejects (see problem). */
  static async open(views, stateKey, url) {
    const key = `${stateKey}\u0000${url}`;
    try {
      const kept = await views.read(key);
      return new ViewStorage(views, key, kept && isStorage(kept.storage) ? kept.storage : {});
    } catch (e) {
      const s = new ViewStorage(views, key, {});
      s.problem = `what the view kept under stateKey ${JSON.stringify(stateKey)} could not be read (${e?.message ?? e}); it starts with an empty storage`;
      return s;
    }
  }

  /** A change the view sent (its whole storage): kept, or refused (false) when it is not names and strings within the quota. */
  changed(items) {
    if (!isStorage(items)) return false;
    this.items = items;
    this.#next = items;
    this.#writing ??= this.#drain();
    return true;
  }

  /** Resolves once every change sent so far is kept (or failed). */
  async flush() {
    while (this.#writing) await this.#writing;
  }

  async #drain() {
    while (this.#next) {
      const items = this.#next;
      this.#next = null;
      let error = null;
      try {
        await this.#views.keep(this.#key, items);
      } catch (e) {
        error = e;
      }
      this.onKept(items, error);
    }
    this.#writing = null;
  }
}
