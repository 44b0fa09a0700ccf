// react.js — the React binding of mcpwasm ("mcpwasm/react"; see react.d.ts).
//
//   const { state, tools, error, authorize, callTool } = useMcpClient(url, { redirectUri: "/oauth/callback" });
//   <button onClick={() => authorize()}>Sign in</button>
//
// Each hook owns one store: a plain object that creates the client (or
// catalog) when the component mounts, follows its events and publishes
// immutable snapshots through useSyncExternalStore. Unmounting releases the
// store; the client closes one macrotask later unless the component mounts
// again at once, which is what React's StrictMode does in development: one
// connection, one sign-in window, whatever the double mount.
export { useMcpClient } from "./react-usemcpclient.js";
export { useCatalog } from "./react-usecatalog.js";
export { useAgent } from "./react-useagent.js";
export { askUser } from "./react-ask.js";
export { McpAppView } from "./react-mcpappview.js";
