// react-useagent.js — the useAgent hook.
import { useCallback, useSyncExternalStore } from "react";
import { AgentStore } from "./react-agentstore.js";
import { useStore } from "./react-store.js";

/** One key per catalog and conversation id, for useStore. */
const agentKeys = new WeakMap();
const noCatalog = {};
function agentKey(cat, conversation) {
  const owner = cat ?? noCatalog;
  if (!agentKeys.has(owner)) agentKeys.set(owner, new Map());
  const keys = agentKeys.get(owner);
  if (!keys.has(conversation)) keys.set(conversation, { cat, conversation });
  return keys.get(conversation);
}


/**
 * A conversation with a model over a catalog's tools, as a UI shows it.
 * catalog: what useCatalog returned (or a Catalog, or null while there is
 * none); options: the agent's (model, system, maxSteps, authWaitMs, contextLimit, prices,
 * compact) plus onEvent, read at each send(), and conversation: the id of
 * a stored conversation, loaded on mount (status "loading") and saved by
 * every turn. A new catalog or conversation id starts anew.
 */
export function useAgent(catalog, options = {}) {
  const cat = (catalog && "catalog" in catalog && !(catalog instanceof EventTarget) ? catalog.catalog : catalog) ?? null;
  const conversation = typeof options?.conversation === "string" && options.conversation !== "" ? options.conversation : undefined;
  const store = useStore(agentKey(cat, conversation), () => new AgentStore(cat, options, conversation));
  store.options = options;
  const snap = useSyncExternalStore(store.subscribe, store.getSnapshot, store.getSnapshot);
  const send = useCallback((text) => store.send(text), [store]);
  const stop = useCallback(() => store.stop(), [store]);
  const approve = useCallback((answer, id) => store.answer("approval", answer, id), [store]);
  const answerElicitation = useCallback((answer, id) => store.answer("elicitation", answer, id), [store]);
  return { ...snap, send, stop, approve, answerElicitation };
}
