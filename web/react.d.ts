// Type declarations for react.js, the React binding of mcpwasm
// ("mcpwasm/react"). React (18 or later) is an optional peer dependency.
import type {
  Catalog, CatalogConfig, CatalogTool, CallOptions, CallToolOptions, CallToolResult,
  Agent, AgentOptions, Client, ClientOptions, ClientState, ElicitParams, ElicitResult,
  Implementation, MCPError, SamplingParams, SamplingResult, ServerStatus, Tool,
} from "./mcp.js";

/** How the hooks load the module (see load()). */
export interface HookLoadOptions {
  /** Where mcp.wasm lives; default: the asset the bundler emitted for mcpwasm/mcp.wasm. */
  wasmURL?: string | URL;
  onLoadProgress?: (loaded: number, total: number) => void;
}

export interface UseMcpClientOptions extends ClientOptions, HookLoadOptions {
  /** Connect when the component mounts; default true. */
  autoConnect?: boolean;
  onElicitation?: (params: ElicitParams) => Promise<ElicitResult> | ElicitResult;
  onSampling?: (params: SamplingParams) => Promise<SamplingResult> | SamplingResult;
}

export interface UseMcpClientResult {
  /**
   * "loading" until the module is loaded and the client made, then the
   * client's state; "failed" when no client could be made (a bad option, a
   * failed load: error says which, and every call rejects with it).
   */
  state: ClientState | "loading";
  /** The client, once made (null while "loading"). */
  client: Client | null;
  /** The server's tools, refreshed on connect and on toolschanged. */
  tools: readonly Tool[];
  /**
   * The latest failure: of the state (its statechange error), the load, or
   * a call made through this hook (authorize, connect, callTool, logout;
   * not an abort). A state without an error, or a call that succeeds,
   * clears it.
   */
  error: MCPError | Error | null;
  serverInfo: Implementation | null;
  /**
   * Signs in: call it from a click handler. It calls client.authorize()
   * synchronously, so the browser lets the sign-in window open.
   */
  authorize(options?: CallOptions): Promise<void>;
  connect(options?: CallOptions): Promise<void>;
  callTool(name: string, args?: Record<string, unknown>, options?: CallToolOptions): Promise<CallToolResult>;
  logout(options?: CallOptions): Promise<void>;
}

/**
 * One MCP client for the component's lifetime: made and connected on mount
 * (once, also under StrictMode), closed on unmount. Options are read once;
 * a new url makes a new client.
 */
export function useMcpClient(url: string | URL, options?: UseMcpClientOptions): UseMcpClientResult;

export interface UseCatalogConfig extends CatalogConfig, HookLoadOptions {}

export interface UseCatalogResult {
  /** Every server's status, updated on statuschange. */
  status: Record<string, ServerStatus>;
  /** The aggregated tool list, refreshed on toolschanged. */
  tools: readonly CatalogTool[];
  /** The catalog, once made (null while loading). */
  catalog: Catalog | null;
  loading: boolean;
  /** The failure of the load or of mcp.catalog() (the hook's calls then reject with it), or of the latest tool refresh. */
  error: MCPError | Error | null;
  /** An agent over the catalog's tools (throws while loading, and the creation error when the catalog failed). */
  agent(options: AgentOptions): Agent;
  /** Signs in to one server: call it from a click handler (synchronous, like useMcpClient's). */
  authorize(id: string, options?: CallOptions): Promise<void>;
  callTool(name: string, args?: Record<string, unknown>, options?: CallToolOptions): Promise<CallToolResult>;
}

/** A catalog for the component's lifetime, closed on unmount; a config with another JSON form makes a new one. */
export function useCatalog(config?: UseCatalogConfig): UseCatalogResult;
