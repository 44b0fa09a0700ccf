// react-usemcpclient.js — the useMcpClient hook.
import { useCallback, useSyncExternalStore } from "react";
import { ClientStore } from "./react-clientstore.js";
import { useStore } from "./react-store.js";

/**
 * One MCP client for the component's lifetime. options: the client's
 * options (redirectUri, clientName, …) plus wasmURL and onLoadProgress for
 * load(), autoConnect (default true), onElicitation and onSampling. They are
 * read once, when the client is made; a new url makes a new client.
 */
export function useMcpClient(url, options = {}) {
  const store = useStore(String(url), () => new ClientStore(String(url), options));
  const snap = useSyncExternalStore(store.subscribe, store.getSnapshot, store.getSnapshot);
  // authorize() calls client.authorize() synchronously: inside a click
  // handler it keeps the user gesture, so the sign-in window may open.
  // Each rejects with the client's creation error when none could be made
  // (a typo'd option: state "failed").
  const authorize = useCallback((opts) => store.run("authorize()", (c) => c.authorize(opts)), [store]);
  const connect = useCallback((opts) => store.run("connect()", (c) => c.connect(opts)), [store]);
  const callTool = useCallback((name, args, opts) => store.run("callTool()", (c) => c.callTool(name, args, opts)), [store]);
  const logout = useCallback((opts) => store.run("logout()", (c) => c.logout(opts)), [store]);
  return { ...snap, authorize, connect, callTool, logout };
}
