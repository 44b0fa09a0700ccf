// Type declarations for react.js, the React binding of mcpwasm
// ("mcpwasm/react"). React (18 or later) is an optional peer dependency.
import type {
  Catalog, CatalogConfig, CatalogTool, CallOptions, CallToolOptions, CallToolResult,
  Agent, AgentEvent, AgentOptions, AgentUsage, ApprovalAnswer, ApprovalRequest, Client, ClientOptions, ClientState, ElicitParams, ElicitResult,
  Implementation, MCPError, SamplingParams, SamplingResult, ServerStatus, Tool, RenderOptions, AppView,
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

// ---- useAgent: a conversation over a catalog's tools.

export interface UseAgentOptions extends AgentOptions {
  /** Hears every event of the running turn, after the hook has. */
  onEvent?: (ev: AgentEvent) => void;
  /** A stored conversation's id: loaded on mount (status "loading"), saved by every turn, so it survives reloads. */
  conversation?: string;
}

/** The person's turn. */
export interface AgentUserMessage {
  readonly id: string;
  readonly role: "user";
  readonly text: string;
}

/** A tool call of the turn, from the moment the model writes it to its result. */
export interface AgentToolPart {
  readonly type: "tool";
  /** The model's call id. */
  readonly id: string;
  /** The exported tool name. */
  readonly name: string;
  readonly serverId?: string;
  /** The server's tool name. */
  readonly tool?: string;
  /** The arguments' JSON text as the model wrote it (growing while "writing"). */
  readonly arguments: string;
  readonly state: "writing" | "running" | "awaiting-approval" | "done" | "error" | "denied" | "stopped";
  /** The host's decision, when approve was asked. */
  readonly approved?: boolean;
  readonly progress?: { readonly progress: number; readonly total?: number; readonly message?: string };
  /** What the model reads back. */
  readonly result?: { readonly isError: boolean; readonly text: string };
  /**
   * The tool's view (MCP Apps), when it has one and the server answered
   * (also for a call of a stored conversation read again, e.g. after a
   * reload): render <McpAppView {...app}> under the call; in a stored
   * conversation, stateKey keeps what the view stores across reloads.
   */
  readonly app?: { readonly serverId: string; readonly tool: string; readonly resourceUri: string; readonly stateKey?: string };
  /**
   * The tool's view, known from the call's first toolcalldelta (or its
   * toolcall): render <McpAppView {...view} arguments={arguments}
   * inputPending={state === "writing"}> to show the arguments as the model
   * writes them.
   */
  readonly view?: { readonly serverId: string; readonly tool: string; readonly resourceUri: string; readonly stateKey?: string };
  /** The server's result, when app is set (the view's result). */
  readonly callResult?: CallToolResult;
}

export type AgentPart =
  | { readonly type: "text"; readonly text: string }
  /** The model's reasoning as it streamed: show it apart from the answer. */
  | { readonly type: "reasoning"; readonly text: string }
  | AgentToolPart
  /** A call needs the person to sign in to serverId (show a button calling the catalog's authorize(serverId)). */
  | { readonly type: "authrequired"; readonly serverId: string }
  /** Why a turn ended early without failing (code "max_steps" or "empty_response"). */
  | { readonly type: "notice"; readonly code: string; readonly text: string };

/** The assistant's turn, in the order it happened. */
export interface AgentAssistantMessage {
  readonly id: string;
  readonly role: "assistant";
  readonly parts: readonly AgentPart[];
  readonly state: "streaming" | "done" | "stopped" | "error";
  readonly finishReason?: string;
  /** This turn's tokens, from its usage events. */
  readonly usage?: AgentUsage;
  readonly error?: MCPError | Error;
}

export type AgentMessage = AgentUserMessage | AgentAssistantMessage;

/** A question of the catalog's hooks (askUser) waiting for the page's answer. */
export type AgentPendingRequest =
  | { readonly id: string; readonly kind: "approval"; readonly request: ApprovalRequest; /** The call it is about, once known. */ readonly toolCallId?: string }
  | { readonly id: string; readonly kind: "elicitation"; readonly request: ElicitParams; readonly serverId: string };

export type AgentStatus = "loading" | "idle" | "running" | "awaiting-approval" | "awaiting-input" | "error";

/** What approve() answers: the catalog's approve answer (mcp.d.ts). */
export type { ApprovalAnswer };

export interface UseAgentResult {
  readonly messages: readonly AgentMessage[];
  /**
   * "awaiting-approval" while an approval question is pending,
   * "awaiting-input" while only an elicitation is, "running" during a
   * turn, "error" after a failed one (until the next send), else "idle".
   */
  readonly status: AgentStatus;
  /** The conversation's token totals so far (null before any usage). */
  readonly usage: AgentUsage | null;
  /** The failure of the last turn (not a stop). */
  readonly error: MCPError | Error | null;
  /** The questions waiting for an answer, oldest first. */
  readonly pending: readonly AgentPendingRequest[];
  /**
   * Starts a turn. Rejects (code invalid_argument, nothing sent) while a
   * turn runs, before the catalog exists, or for empty text; else resolves
   * when the turn ends, however it ends.
   */
  send(text: string): Promise<void>;
  /** Aborts the running turn; its pending questions are refused. False when none ran. */
  stop(): boolean;
  /** Answers the pending approval with id (else the oldest); false when none was pending. */
  approve(answer: ApprovalAnswer, id?: string): boolean;
  /** Answers the pending elicitation with id (else the oldest); false when none was pending. */
  answerElicitation(answer: ElicitResult, id?: string): boolean;
}

/**
 * A conversation over a catalog's tools for the component's lifetime:
 * catalog is what useCatalog returned (or a Catalog, or null). Options are
 * read at each send(); a new catalog starts a new conversation; unmounting
 * aborts the running turn.
 */
export function useAgent(catalog: UseCatalogResult | Catalog | null, options: UseAgentOptions): UseAgentResult;

/**
 * The catalog's approve or onElicitation hook that asks the person through
 * useAgent: pass it in useCatalog's config; each question waits in
 * pending until approve() or answerElicitation() answers it.
 */
export function askUser(request: ApprovalRequest): Promise<ApprovalAnswer>;
export function askUser(request: ElicitParams, ctx: { serverId: string }): Promise<ElicitResult>;

export interface McpAppViewProps extends Omit<RenderOptions, "catalog" | "signal" | "arguments"> {
  /** The catalog (or useCatalog's result) whose server serverId has the tool; or pass client. */
  catalog?: Catalog | UseCatalogResult | null;
  /** The call's arguments: an object, or JSON text as a useAgent tool part has it (partial while inputPending). */
  arguments?: Record<string, unknown> | string;
  /** Called once the view is ready. */
  onReady?: (view: AppView) => void;
  /** Called when the view cannot be rendered or fails later (else a console warning). */
  onError?: (error: MCPError | Error) => void;
  className?: string;
  style?: Record<string, string | number>;
}

/** A tool's view (MCP Apps), rendered for the component's lifetime and closed on unmount. */
export function McpAppView(props: McpAppViewProps): unknown;
