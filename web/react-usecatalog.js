// react-usecatalog.js — the useCatalog hook.
import { useCallback, useSyncExternalStore } from "react";
import { CatalogStore } from "./react-catalogstore.js";
import { notReady, useStore } from "./react-store.js";

/**
 * A catalog (many servers, one tool list) for the component's lifetime.
 * config: what mcp.catalog() takes, plus wasmURL and onLoadProgress; read
 * once (a new JSON form of it makes a new catalog).
 */
export function useCatalog(config = {}) {
  let key;
  try {
    key = JSON.stringify(config);
  } catch {
    key = "";
  }
  const store = useStore(key, () => new CatalogStore(config));
  const snap = useSyncExternalStore(store.subscribe, store.getSnapshot, store.getSnapshot);
  const agent = useCallback((options) => {
    if (!store.catalog) throw store.failure ?? Object.assign(new Error("agent(): the catalog is not created yet"), { code: "invalid_argument" });
    return store.catalog.agent(options);
  }, [store]);
  // Synchronous in the click handler, like useMcpClient's authorize().
  const authorize = useCallback((id, opts) => store.catalog ? store.catalog.authorize(id, opts) : store.failure ? Promise.reject(store.failure) : notReady("authorize()"), [store]);
  const callTool = useCallback((name, args, opts) => store.catalog ? store.catalog.callTool(name, args, opts) : store.failure ? Promise.reject(store.failure) : notReady("callTool()"), [store]);
  return { ...snap, agent, authorize, callTool };
}
