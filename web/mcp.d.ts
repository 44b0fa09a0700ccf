// Type declarations for mcp.js, the loader and JavaScript API of the mcpwasm
// MCP client (see docs/JSAPI.md). Everything async returns a Promise; every
// rejection is an MCPError.

/** The codes an MCPError carries. */
export type MCPErrorCode =
  | "auth_required" | "declined" | "popup_blocked" | "redirect_unhandled" | "state_mismatch"
  | "discovery_failed" | "registration_failed" | "token_failed" | "insufficient_scope"
  | "aborted" | "timeout" | "network" | "http" | "protocol" | "invalid_argument"
  | "storage" | "closed" | "policy";

/** The error of every rejection (and of synchronous throws from client()). */
export class MCPError extends Error {
  constructor(code: MCPErrorCode, message: string, options?: { status?: number; detail?: string; rpcCode?: number; cause?: unknown });
  readonly name: "MCPError";
  /** What went wrong, machine-readable. */
  readonly code: MCPErrorCode;
  /** The HTTP status, for code "http" (and auth errors that came with one). */
  readonly status?: number;
  /** What happened underneath (the error chain), for developers; the message is what to tell a person. */
  readonly detail?: string;
  /** The server's JSON-RPC error code, when it answered with a JSON-RPC error. */
  readonly rpcCode?: number;
}

export interface LoadOptions {
  /** Where mcp.wasm lives; default: this build's content-hashed mcp-<hash>.wasm beside mcp.js (docs/JSAPI.md, "The module's URL and its caching"). */
  wasmURL?: string | URL;
  /** Download progress in bytes; total is 0 when the size is unknown. */
  onProgress?: (loaded: number, total: number) => void;
  /**
   * Where the Go runtime runs: a SharedWorker shared by the app's tabs, a
   * dedicated Worker, or the main thread; "auto" picks the first the
   * browser allows and that can store WebCrypto keys (Safari's SharedWorker
   * cannot: a Worker then). Default: "auto" (see docs/JSAPI.md, "Runtimes").
   */
  runtime?: "auto" | "shared-worker" | "worker" | "main";
  /**
   * Page-wide relay: the default relay of every client and catalog server
   * that names none (see ClientOptions.relay, docs/JSAPI.md, "Relay").
   */
  relay?: string;
  /** Page-wide default of ClientOptions.relayMode (with relay). */
  relayMode?: "fallback" | "always";
}

/**
 * Streams, instantiates and starts the wasm module. Calling it again returns
 * the same instance; a failed load may be retried.
 */
export function load(options?: LoadOptions): Promise<MCP>;
/**
 * Starts loading at once: call it right after importing mcp.js, before the
 * page's own start-up work. In a worker runtime the whole load starts (off
 * the main thread); on the main thread mcp.wasm is fetched and compiled
 * now and started by load(). A later load() joins it (one download).
 * Never throws: load() reports what went wrong.
 */
export function preload(options?: LoadOptions): void;

export interface MCP {
  /** The module's version. */
  readonly version: string;
  /** Where the module was loaded from. */
  readonly wasmURL: string;
  /** Where the Go runtime runs. */
  readonly runtime: "shared-worker" | "worker" | "main";
  /** A client for one MCP server (Streamable HTTP endpoint, or legacy SSE endpoint). */
  client(url: string | URL, options?: ClientOptions): Client;
  /**
   * Delivers an OAuth redirect URL (the return of a full-page redirect, a
   * pasted URL) to the sign-in waiting on its state. Without an argument it
   * takes the result oauth/callback.html saved before sending the page back
   * (redirect mode). Resolves true when a sign-in took it and succeeded;
   * false for an unknown, expired or replayed state; rejects with the
   * sign-in's MCPError (e.g. "declined", "token_failed") when it took it and
   * failed. (The url argument is optional: without it, the saved redirect return.)
   */
  handleCallback(url?: string | URL): Promise<boolean>;
  /** Deletes every stored grant, client registration and cached metadata of this origin. */
  clearStorage(): Promise<void>;
  /**
   * Where sign-ins of storage "indexeddb" are kept (opens the store if
   * needed). persistent false: in memory until this tab closes, because
   * IndexedDB is unavailable, full, or holds a newer build's schema; error
   * (code "storage") says which and what to do.
   */
  storageStatus(): Promise<StorageStatus>;
}

/** What mcp.storageStatus() resolves with. */
export interface StorageStatus {
  /** true: sign-ins are kept in IndexedDB; false: in memory, gone when this tab closes. */
  persistent: boolean;
  /** Why they are in memory (code "storage"), when persistent is false. */
  error?: MCPError;
}

/** "reconnecting": the network or the server lost the session; the client reconnects by itself (backoff, or at once on "online"). */
export type ClientState =
  | "idle" | "connecting" | "needs_auth" | "authorizing"
  | "connected" | "declined" | "failed" | "closed" | "reconnecting";

export type Transport = "auto" | "streamable" | "sse";

export interface ClientOptions {
  /** Your app's name: shown at the authorization server (client_name) and sent to the MCP server (clientInfo.name); default: document.title. */
  clientName?: string;
  /** Static headers sent with every request, e.g. an API key. */
  headers?: Record<string, string>;
  /**
   * Supplies a bearer token for every request, when the host app already
   * holds one. A rejection fails the request with code "auth_required".
   */
  accessToken?: () => Promise<string> | string;
  /**
   * "auto" (default) tries Streamable HTTP and falls back to the legacy
   * HTTP+SSE transport when the server rejects the first POST with 400, 404
   * or 405; "streamable" or "sse" pins one.
   */
  transport?: Transport;
  /**
   * The page renders the server's views (MCP Apps, mcp.apps.render):
   * initialize declares the io.modelcontextprotocol/ui extension, so a
   * server that checks for it offers its tools with views. Default false.
   */
  apps?: boolean;
  /**
   * OAuth redirect receiver, registered with the authorization server: a
   * page that serves oauth/callback.html or imports "mcpwasm/callback". A
   * relative URI resolves against the page (location.href). Default:
   * oauth/callback.html beside mcp.js, which in a bundle is beside the
   * bundle's chunk, where no such page is: bundled apps pass redirectUri.
   */
  redirectUri?: string;
  /** Scopes to request; default: from the server's challenge or metadata. A step-up (a 403 insufficient_scope) adds the scopes its challenge names. */
  scopes?: string[];
  /** A pre-registered public client ID. */
  clientId?: string;
  /** URL of this app's client ID metadata document. */
  clientMetadataUrl?: string;
  /**
   * Only for authorization servers that insist on one. WARNING: anything
   * shipped to a browser is public; this is not a secret, and the server
   * must not treat this client as confidential.
   */
  clientSecret?: string;
  /**
   * The authorization server's authorization endpoint, given by hand for a
   * server that publishes no metadata (RFC 9728, RFC 8414 or OpenID), as
   * behind some gateways. authorizationEndpoint, tokenEndpoint and clientId
   * go together: all three, or none to discover the server. With them
   * nothing is discovered: the sign-in goes to these endpoints as the
   * pre-registered client, with PKCE, asking for `scopes` or the server's
   * challenge's. Each is https (http only on a loopback host), without
   * fragment or user info.
   */
  authorizationEndpoint?: string;
  /** The authorization server's token endpoint, given by hand (see authorizationEndpoint). */
  tokenEndpoint?: string;
  /** Optional, with authorizationEndpoint: where a sign-out revokes the tokens; without it a sign-out forgets them. */
  revocationEndpoint?: string;
  /**
   * Where grants persist: "indexeddb" (default; encrypted at rest with a
   * non-extractable WebCrypto key, shared by the tabs of this origin) or
   * "memory" (gone with the page). Without IndexedDB the client falls back to
   * memory and fires "storagefallback".
   */
  storage?: "indexeddb" | "memory";
  /** true: connect() may open the login popup itself (call it from a user gesture). */
  interactive?: boolean;
  /** "popup" (default) or "redirect": the page itself goes to the sign-in and comes back through oauth/callback.html; then call mcp.handleCallback(). Redirect needs storage "indexeddb". */
  authMode?: "popup" | "redirect";
  /** A sign-in nobody finishes ends as "timeout" (state declined) after this long; default 300000 (5 min). */
  authTimeoutMs?: number;
  /**
   * When the authorization server's Cross-Origin-Opener-Policy hides the
   * sign-in popup from this page (it then looks closed at once), how long to
   * wait for its result before the attempt counts as closed ("declined");
   * default 120000 (2 min). A popup a person closes while it is visible
   * declines within 1.5 s.
   */
  severedPopupTimeoutMs?: number;
  /**
   * DPoP (RFC 9449): tokens bound to a non-extractable key of this page, so
   * a stolen token is useless elsewhere. "auto" (default): when the
   * authorization server advertises ES256 DPoP; true: always; false: never.
   */
  dpop?: "auto" | boolean;
  /**
   * Enterprise-managed authorization (ID-JAG): returns the user's identity
   * assertion from your single sign-on (an OpenID Connect ID token whose
   * audience is idpClientId). connect() then signs in without a popup: the
   * ID token is exchanged at the identity provider (RFC 8693) for an
   * ID-JAG, which the MCP server's authorization server takes (RFC 7523).
   * Needs idpTokenEndpoint or idpIssuer, idpClientId and clientId. A
   * rejection fails the sign-in with code "auth_required".
   */
  identityAssertion?: () => Promise<string> | string;
  /** The identity provider's token endpoint (with identityAssertion). */
  idpTokenEndpoint?: string;
  /** The identity provider's issuer, when its token endpoint is to be discovered (with identityAssertion). */
  idpIssuer?: string;
  /** This app's client ID at the identity provider (with identityAssertion). */
  idpClientId?: string;
  /** Only for identity providers that insist on one. WARNING: public in a browser, like clientSecret. */
  idpClientSecret?: string;
  /** The RFC 8693 type of the identity assertion; default "urn:ietf:params:oauth:token-type:id_token". */
  idpSubjectTokenType?: string;
  /**
   * "authorization_code" (the default: the sign-in popup, or identityAssertion).
   * "client_credentials" and "workload_identity" are refused with
   * "invalid_argument": their secret, key or workload credential would be
   * public in a page; run them on a server (Go package oauth) and pass the
   * tokens through accessToken.
   */
  grant?: "authorization_code" | "client_credentials" | "workload_identity";
  /**
   * A relay for a server (and its authorization server) that does not
   * allow this page's origin (CORS): the URL where the host mounted the Go
   * package relay, such as "https://app.example/mcp-relay". The relay sees
   * the tokens in transit; discovery, issuers and stored sign-ins stay
   * keyed by the real server. In a catalog's server entry (which may come
   * from a pasted configuration) only a relay on the page's own origin is
   * accepted; give another origin's relay with load(), the catalog's relay
   * or mcp.client(). See docs/JSAPI.md, "Relay".
   */
  relay?: string;
  /**
   * "fallback" (default): direct first; an origin that refuses the page
   * (CORS) or cannot be reached goes through the relay for the page's
   * life. "always": every request goes through the relay.
   */
  relayMode?: "fallback" | "always";
}

export interface CallOptions {
  /** Aborting rejects with "aborted" and cancels the request on the server (on protocol 2026-07-28 by closing its response stream; before, with notifications/cancelled). */
  signal?: AbortSignal;
}

export interface CallToolOptions extends CallOptions {
  /** Every progress notification the server sends before the result arrives here first. */
  onProgress?: (progress: Progress) => void;
  /** Rejects with "timeout" (and cancels on the server) after this many ms. */
  timeoutMs?: number;
}

/** One progress notification of a call, as the server sent it. */
export interface Progress {
  progress: number;
  total?: number;
  message?: string;
}

/**
 * An icon of a server, tool, prompt, resource or template: an https URL or
 * an image data: URI (others never reach the page). Show it with <img>,
 * which runs no script, even in an SVG.
 */
export interface Icon {
  src: string;
  mimeType?: string;
  /** "48x48", "any", … */
  sizes?: string[];
  /** The background it is drawn for. */
  theme?: "light" | "dark";
}

export interface Implementation {
  name: string;
  title?: string;
  version: string;
  icons?: Icon[];
  [key: string]: unknown;
}

export type JSONSchema = Record<string, unknown>;

export interface Tool {
  name: string;
  title?: string;
  description?: string;
  inputSchema: JSONSchema;
  outputSchema?: JSONSchema;
  annotations?: Record<string, unknown>;
  icons?: Icon[];
  _meta?: Record<string, unknown>;
  /** The tool's view (MCP Apps), when the server names a ui:// resource. */
  ui?: ToolUI;
}

/** A tool's view (MCP Apps): its ui:// resource, and who may call the tool. */
export interface ToolUI {
  /** Absent when the tool only says who may call it. */
  resourceUri?: string;
  /** "model" and/or "app"; both when the server names neither. */
  visibility: ("model" | "app")[];
}

export type Content =
  | { type: "text"; text: string; annotations?: unknown; _meta?: unknown }
  | { type: "image" | "audio"; data: string; mimeType: string; annotations?: unknown; _meta?: unknown }
  | { type: "resource_link"; uri: string; name: string; mimeType?: string; [key: string]: unknown }
  | { type: "resource"; resource: ResourceContents; annotations?: unknown; _meta?: unknown };

/** A task a client keeps until its result is delivered (client.tasks()). */
export interface KeptTask {
  taskId: string;
  /** The tool whose call started it. */
  tool: string;
  /** As last seen: "working", "input_required", or a terminal status not yet delivered. */
  status: string;
  statusMessage?: string;
  /** When the call started it (ISO 8601). */
  createdAt: string;
  /** When the server may delete it and its result (ISO 8601); absent when the server set no limit. */
  expiresAt?: string;
}

export interface CallToolResult {
  content: Content[];
  structuredContent?: unknown;
  isError: boolean;
  _meta?: Record<string, unknown>;
}

export interface Resource {
  uri: string;
  name: string;
  title?: string;
  description?: string;
  mimeType?: string;
  size?: number;
  icons?: Icon[];
  [key: string]: unknown;
}

export interface ResourceTemplate {
  uriTemplate: string;
  name: string;
  title?: string;
  description?: string;
  mimeType?: string;
  icons?: Icon[];
  [key: string]: unknown;
}

export interface ResourceContents {
  uri: string;
  mimeType?: string;
  text?: string;
  blob?: string;
  _meta?: Record<string, unknown>;
}

export interface ReadResourceResult {
  contents: ResourceContents[];
  /** Protocol 2026-07-28 caching hint: how long (ms) the result may be cached; only when the server sent it. */
  ttlMs?: number;
  /** Protocol 2026-07-28 caching hint ("public" or "private"); only when the server sent it. */
  cacheScope?: string;
  _meta?: Record<string, unknown>;
}

export interface Prompt {
  name: string;
  title?: string;
  description?: string;
  icons?: Icon[];
  arguments?: { name: string; title?: string; description?: string; required?: boolean }[];
}

/** What a completed argument belongs to: a prompt, or a resource template (its URI template). */
export type CompleteRef = { type: "ref/prompt"; name: string } | { type: "ref/resource"; uri: string };

export interface CompleteOptions extends CallOptions {
  /** The values of the arguments already chosen, by name. */
  context?: Record<string, string>;
}

/** A server's suggestions for an argument (at most 100; hasMore when it has more). */
export interface Completion {
  values: string[];
  total?: number;
  hasMore?: boolean;
}

/** One file of a skill, as the skill's entry lists it. */
export interface SkillFile {
  uri: string;
  /** "sha256:" and 64 lowercase hex digits. */
  digest: string;
  size: number;
}

/** A server's entry for one skill (the Skills extension, io.modelcontextprotocol/skills). */
export interface Skill {
  /** The URI of its SKILL.md: the skill's name within its server. */
  uri: string;
  name: string;
  description: string;
  /** The SKILL.md frontmatter as the server states it. */
  frontmatter: Record<string, unknown> & { name: string; description: string };
  files?: SkillFile[];
  /** The server generates its content: no digests, so loadSkill() refuses it. */
  dynamic?: boolean;
}

/** A skill whose SKILL.md was read and verified: text is the whole file, untrusted input for a model. */
export interface LoadedSkill extends Skill {
  text: string;
}

export interface GetPromptResult {
  description?: string;
  messages: { role: "user" | "assistant"; content: Content }[];
  _meta?: Record<string, unknown>;
}

export interface ElicitParams {
  message: string;
  mode?: "form" | "url";
  requestedSchema?: JSONSchema;
  url?: string;
  /** URL mode: the server's id of this request (its notifications/elicitation/complete names it). */
  elicitationId?: string;
  [key: string]: unknown;
}

export interface ElicitResult {
  action: "accept" | "decline" | "cancel";
  content?: Record<string, string | number | boolean | string[]>;
}

export interface SamplingParams {
  messages: { role: "user" | "assistant"; content: Content | Content[] }[];
  systemPrompt?: string;
  maxTokens: number;
  [key: string]: unknown;
}

export interface SamplingResult {
  role: "assistant";
  content: Content;
  model: string;
  stopReason?: string;
}

/** The server's capabilities object, as the server declared it (false flags, empty objects and unknown members included). */
export interface ServerCapabilities {
  tools?: { listChanged?: boolean; [key: string]: unknown };
  resources?: { subscribe?: boolean; listChanged?: boolean; [key: string]: unknown };
  prompts?: { listChanged?: boolean; [key: string]: unknown };
  logging?: Record<string, unknown>;
  completions?: Record<string, unknown>;
  experimental?: Record<string, unknown>;
  extensions?: Record<string, unknown>;
  [key: string]: unknown;
}

/** What the server said when a session started. */
export interface SessionInfo {
  serverInfo: Implementation | null;
  capabilities: ServerCapabilities | null;
  instructions?: string;
  protocolVersion: string;
}

export interface StateChangeDetail {
  state: ClientState;
  /** Why, when the state is "failed", "needs_auth", "declined" or "reconnecting" (e.g. code "network"). */
  error?: MCPError;
  /**
   * Set when the state becomes "connected", also when the client connected
   * by itself (a grant arrived from another tab or a redirect return while
   * it waited for one); the client's serverInfo and the rest are updated.
   */
  session?: SessionInfo;
}

export interface LogDetail {
  level: string;
  logger?: string;
  data: unknown;
}

export interface ClientEventMap {
  statechange: CustomEvent<StateChangeDetail>;
  /** IndexedDB is unavailable, full or from a newer build; grants are kept in memory for this page only. */
  storagefallback: CustomEvent<{ reason: string }>;
  /** The access token was refreshed (no secrets in the detail). */
  tokenrefreshed: CustomEvent<{ resource: string }>;
  /** A refreshed grant could not be stored (quota, storage gone); it is used from memory. */
  storageerror: CustomEvent<{ resource: string; message: string }>;
  toolschanged: CustomEvent<Record<string, never>>;
  resourceschanged: CustomEvent<Record<string, never>>;
  /** A resource subscribed to (or a part of it) changed: read it again to see how. */
  resourceupdated: CustomEvent<{ uri: string }>;
  promptschanged: CustomEvent<Record<string, never>>;
  log: CustomEvent<LogDetail>;
  /** Something failed that ends nothing (a notification the server refused); also console.warn. */
  warning: CustomEvent<{ message: string }>;
  /** The server says the person finished its URL-mode elicitation elicitationId (notifications/elicitation/complete). */
  elicitationcomplete: CustomEvent<{ elicitationId: string }>;
}

export interface Client extends EventTarget {
  /** The server URL. */
  readonly url: string;
  readonly state: ClientState;
  /** From the server's initialize result, after connect(). */
  readonly serverInfo: Implementation | null;
  readonly capabilities: ServerCapabilities | null;
  readonly instructions: string | null;
  /** The protocol version the session negotiated. */
  readonly protocolVersion: string | null;

  /** Answers the server's elicitation requests; set before connect() to advertise the capability. A throw answers the server with an error. */
  onElicitation: ((params: ElicitParams) => Promise<ElicitResult> | ElicitResult) | null;
  /** Answers the server's sampling requests; set before connect() to advertise the capability. A throw answers the server with an error. */
  onSampling: ((params: SamplingParams) => Promise<SamplingResult> | SamplingResult) | null;

  /**
   * Connects and initializes; rejects "auth_required" (state needs_auth)
   * when a sign-in is needed and the client is not interactive. An
   * interactive client opens the sign-in popup itself, so call it from a
   * click; outside one the browser blocks the popup ("popup_blocked").
   */
  connect(options?: CallOptions): Promise<void>;
  /**
   * Signs in, then connects. Call it from a user gesture (a click): it opens
   * the sign-in popup at once. Rejects "popup_blocked" (state needs_auth)
   * when the browser blocked the popup, "declined" when the user closed it or
   * said no (no other popup opens until the next authorize()),
   * "redirect_unhandled" (state failed) when the popup reached redirectUri
   * and no callback page ran there, "aborted" on signal, "timeout" after
   * authTimeoutMs.
   */
  authorize(options?: CallOptions): Promise<void>;
  /** Signs out: revokes the grant where the server supports it (RFC 7009) and deletes it here and in other tabs. */
  logout(options?: CallOptions): Promise<void>;
  /** Every tool, all pages. */
  listTools(options?: CallOptions): Promise<Tool[]>;
  /**
   * Calls a tool. A tool the server runs only as a task (2025-11-25
   * taskSupport "required") is followed to its result, and kept until then:
   * a page that reloads or closes meanwhile leaves the task running (and
   * its session open), for tasks() and resumeTask() in the next page. An
   * abandoned call (signal, timeoutMs) cancels its task.
   */
  callTool(name: string, args?: Record<string, unknown>, options?: CallToolOptions): Promise<CallToolResult>;
  /**
   * The tasks of this server whose results nobody has received yet,
   * started by this page or an earlier one (a reload, another tab), oldest
   * first, with their status as last seen; expired ones are forgotten.
   */
  tasks(options?: CallOptions): Promise<KeptTask[]>;
  /**
   * Follows a kept task to its result as the callTool() that started it
   * would have (onProgress, onElicitation while it needs input), once:
   * then the task is forgotten. Call it once connected. Rejects
   * "invalid_argument" for a task that is not kept, "protocol" when the
   * server no longer knows it (it is forgotten); an abort cancels it.
   */
  resumeTask(taskId: string, options?: CallToolOptions): Promise<CallToolResult>;
  /** Cancels a kept task at the server (tasks/cancel) and forgets it. */
  cancelTask(taskId: string, options?: CallOptions): Promise<void>;
  listResources(options?: CallOptions): Promise<Resource[]>;
  listResourceTemplates(options?: CallOptions): Promise<ResourceTemplate[]>;
  readResource(uri: string, options?: CallOptions): Promise<ReadResourceResult>;
  listPrompts(options?: CallOptions): Promise<Prompt[]>;
  getPrompt(name: string, args?: Record<string, string>, options?: CallOptions): Promise<GetPromptResult>;
  /**
   * Values the server suggests for a prompt's or resource template's
   * argument, given what the person typed so far (completion/complete).
   * Rejects "protocol" when the server offers no completions.
   */
  complete(ref: CompleteRef, argument: { name: string; value: string }, options?: CompleteOptions): Promise<Completion>;
  /**
   * A resourceupdated event per change of the resource at uri, until
   * unsubscribe(uri); it lasts across reconnects. Rejects "protocol" when
   * the server offers no subscriptions.
   */
  subscribe(uri: string, options?: CallOptions): Promise<void>;
  /** Ends subscribe(uri); a uri never subscribed to is no error. */
  unsubscribe(uri: string, options?: CallOptions): Promise<void>;
  /**
   * The server's skills (skills/list, every page), none of their files
   * read. Rejects "protocol" when the server does not declare the Skills
   * extension.
   */
  skills(options?: CallOptions): Promise<Skill[]>;
  /** The server's current entry for the skill whose SKILL.md is at uri (skills/get). */
  getSkill(uri: string, options?: CallOptions): Promise<Skill>;
  /**
   * Reads the skill's SKILL.md and verifies its size, sha256 digest and
   * frontmatter against the skill's entry; content that fails rejects
   * "protocol" and is not used.
   */
  loadSkill(uri: string, options?: CallOptions): Promise<LoadedSkill>;
  /** Reads a file of a loaded skill (its URI, or its path in the skill), verified against the skill's entry. */
  readSkillFile(skill: string, file: string, options?: CallOptions): Promise<string>;
  ping(options?: CallOptions): Promise<void>;
  /** Ends the session; every later call rejects "closed". */
  close(): Promise<void>;

  addEventListener<K extends keyof ClientEventMap>(type: K, listener: (ev: ClientEventMap[K]) => void, options?: boolean | AddEventListenerOptions): void;
  addEventListener(type: string, listener: EventListenerOrEventListenerObject | null, options?: boolean | AddEventListenerOptions): void;
  removeEventListener<K extends keyof ClientEventMap>(type: K, listener: (ev: ClientEventMap[K]) => void, options?: boolean | EventListenerOptions): void;
  removeEventListener(type: string, listener: EventListenerOrEventListenerObject | null, options?: boolean | EventListenerOptions): void;
}

// ---- Catalog: many servers behind one tool list (docs/JSAPI.md, "Catalog").
// MCP is declared again here: TypeScript merges the two declarations.

export interface MCP {
  /** Many MCP servers behind one tool list; nothing connects until a call needs a server. */
  catalog(config?: CatalogConfig): Catalog;
  /** Model descriptions for cat.agent({model}); a custom model is an async function. */
  readonly models: Models;
}

/** One server of a catalog: a client's options plus how the catalog shows and filters it. */
export interface CatalogServerConfig extends ClientOptions {
  url?: string;
  /** The spelling of desktop MCP hosts' configuration files. */
  serverUrl?: string;
  title?: string;
  description?: string;
  /** Default true. */
  enabled?: boolean;
  /** Keeps the server on: disable() rejects (invalid_argument); not with enabled: false. */
  required?: boolean;
  /** `*` globs on the server's tool names; deny wins. */
  allowTools?: string[];
  denyTools?: string[];
  /**
   * WebMCP: this server is the page's own tools (document.modelContext),
   * with no url; without the API it has no tools and the catalog warns.
   */
  webmcp?: boolean;
  /** A stdio server (desktop configurations): left out with a warning. */
  command?: string;
  args?: string[];
  [key: string]: unknown;
}

export interface ApprovalRequest {
  /** The server id. */
  id: string;
  /** The server's tool name. */
  tool: string;
  /** The exported name (for a tool only views may call, the server id, "_" and its name). */
  name: string;
  args: Record<string, unknown>;
  annotations?: Record<string, unknown>;
  /** "app" when a view (MCP Apps) makes the call, not the model or the page. */
  via?: "app";
}

export interface CatalogConfig {
  servers?: Record<string, CatalogServerConfig>;
  /** The same, as desktop MCP hosts write it. */
  mcpServers?: Record<string, CatalogServerConfig>;
  maxServers?: number;
  maxToolsPerServer?: number;
  /** Narrows the page's mcp.policy() for this catalog's servers: a server must pass both. */
  policy?: PolicyOptions;
  /** The relay of every server whose entry names none (default: load()'s page-wide relay); see ClientOptions.relay. */
  relay?: string;
  /** The relayMode that goes with relay. */
  relayMode?: "fallback" | "always";
  callTimeoutMs?: number;
  /**
   * How long a call waits for a tool the server runs as a task before it resolves with a
   * "running" result naming the task (not an error; _meta["io.modelcontextprotocol/related-task"]
   * holds its taskId): the task goes on, and its end is a taskresult event. Default 30000;
   * a call's timeout, when shorter, makes it half that.
   */
  taskWaitMs?: number;
  /**
   * Closes a server's session (and its GET stream) after this long without a call; its
   * tools stay listed and the next call connects it again without a sign-in. 0 never
   * closes one. Default 600000 (10 minutes).
   */
  idleTimeoutMs?: number;
  breaker?: { failures?: number; cooldownMs?: number };
  /**
   * Asked before every call approvalPolicy says to ask about (by default, every tool not
   * annotated readOnlyHint: true). Resolve true to allow this call, false to refuse it,
   * "always" to allow this tool and "server" every tool of its server for the rest of the
   * agent's conversation (without an agent: the catalog's life).
   */
  approve?: (req: ApprovalRequest) => Promise<ApprovalAnswer> | ApprovalAnswer;
  /** Which calls run without asking, are asked about, or never run (docs/JSAPI.md, "Approval"). */
  approvalPolicy?: ApprovalPolicy;
  /** Adds the model-facing meta tools catalog_list_servers and catalog_enable_server. */
  serverTools?: boolean;
  /**
   * Gives the model the servers' skills (the Skills extension) through the
   * meta tools catalog_list_skills, catalog_load_skill and
   * catalog_read_skill_file.
   */
  skills?: boolean;
  /**
   * Tokens (schema bytes / 4) the servers' tool definitions may take in a
   * model request; over it toolsFor() and an agent offer
   * catalog_search_tools and catalog_call_tool (and the tools already
   * used) instead. Default 10000.
   */
  toolBudget?: number;
  /** The page renders the servers' views (MCP Apps): the client option apps for every server. */
  apps?: boolean;
  /**
   * Answers the servers' elicitation requests, form and URL mode (a URL is
   * never opened by the library: show it). Without it the servers are told
   * elicitation is not supported.
   */
  onElicitation?: (request: ElicitParams, context: ElicitationContext) => Promise<ElicitResult> | ElicitResult;
}

/** Who asks, for a catalog's onElicitation. */
export interface ElicitationContext {
  serverId: string;
  /** Unique in the catalog; the agent's elicitation event carries the same. */
  elicitationId: string;
}

/** approve's answer: this call, this tool from now on ("always"), or every tool of the server ("server"). */
export type ApprovalAnswer = boolean | "always" | "server";

/**
 * "deny" always wins; a server's own setting comes before the tools' annotations (a
 * readOnlyHint on a server set to "ask" is asked); then readOnly for read-only tools and
 * destructive for the others ("deny" only for those not saying destructiveHint: false).
 */
export interface ApprovalPolicy {
  /** Tools annotated readOnlyHint: true. Default "allow". */
  readOnly?: "allow" | "ask";
  /** Every other tool. Default "ask". */
  destructive?: "ask" | "allow" | "deny";
  /** By server id. */
  servers?: Record<string, "allow" | "ask" | "deny">;
}

export type CatalogServerState = ClientState | "disabled";

export interface ServerStatus {
  state: CatalogServerState;
  /** How many tools the server contributes. */
  tools: number;
  breaker: "closed" | "open" | "half_open";
  /** When an open breaker lets the next probe through (ms since the epoch). */
  retryAt?: number;
  error?: { code: MCPErrorCode; message: string };
  title?: string;
  description?: string;
  /** The entry's required: disable() refuses it. */
  required?: boolean;
  /** Its session was closed after idleTimeoutMs unused (state "idle"); its tools stay listed and the next call reconnects. */
  idle?: boolean;
  /** A call (an agent's turn) waits for a sign-in to this server (authWaitMs): show its Sign in. */
  pendingSignIn?: boolean;
}

/** A tool of the aggregated list. */
export interface CatalogTool {
  /** The exported name: `${serverId}_${tool}`, sanitized, at most 64 characters. */
  name: string;
  serverId: string;
  tool: Tool;
  /** The tool's view (MCP Apps). Tools only a view may call are never listed. */
  ui?: ToolUI;
}

export type ToolFormat = "openai" | "openai-responses" | "anthropic" | "gemini";

export interface CatalogEventMap {
  statuschange: CustomEvent<{ id: string; status: ServerStatus }>;
  toolschanged: CustomEvent<{ ids: string[] }>;
  /** declined: the user declined this server's sign-in, and a call wanted it again: offer a Sign in (nothing waits). */
  authrequired: CustomEvent<{ id: string; declined?: boolean }>;
  warning: CustomEvent<{ id: string; message: string }>;
  /** Server id says the person finished its URL-mode elicitation elicitationId (the request's own id). */
  elicitationcomplete: CustomEvent<{ id: string; elicitationId: string }>;
  /** A task a call handed off (taskWaitMs) ended on server id: tool is the exported name the call used. */
  taskresult: CustomEvent<{ id: string; taskId: string; tool: string; result?: CallToolResult; error?: { code: MCPErrorCode; message: string } }>;
}

/** Catalog.exposeToPage's options. */
export interface ExposeToPageOptions {
  /** Exported tool names, with * and ? globs; default ["*"]. */
  tools?: string[];
  /** Aborting it removes the tools from document.modelContext. */
  signal?: AbortSignal;
}

export interface Catalog extends EventTarget {
  /** Entries the configuration left out (a stdio server, …), one sentence each. */
  readonly warnings: readonly string[];
  /** Every server's status. */
  status(): Record<string, ServerStatus>;
  /** One server's status. */
  status(id: string): ServerStatus;
  /** The Client underneath a server. */
  server(id: string): Client;
  /** Adds a server; nothing connects yet. */
  add(id: string, config: CatalogServerConfig): void;
  remove(id: string): Promise<void>;
  /** A user action: a declined server is asked again (the popup opens: call it in a click). */
  enable(id: string): Promise<void>;
  disable(id: string): Promise<void>;
  /** Signs in to a server: call it from a click, as client.authorize(). */
  authorize(id: string, options?: CallOptions): Promise<void>;
  /** The aggregated tool list; connects the enabled servers. */
  tools(options?: CallOptions): Promise<CatalogTool[]>;
  /** The tool list in a provider's format. */
  toolsFor(format: ToolFormat, options?: CallOptions & { used?: string[] }): Promise<unknown[]>;
  /** Every outcome but an abort resolves (an honest isError result). */
  callTool(name: string, args?: Record<string, unknown>, options?: CallToolOptions): Promise<CallToolResult>;
  /** A model's tool calls in (the format's shapes), its tool-result messages out, in call order. */
  handleToolCalls(calls: unknown[], options?: { format?: ToolFormat; signal?: AbortSignal }): Promise<unknown[]>;
  /** An agent over this catalog's tools. */
  agent(options: AgentOptions): Agent;
  /**
   * WebMCP: registers the catalog's tools that match options.tools with
   * document.modelContext.registerTool for the browser's agent; their
   * calls run through callTool. Removed when options.signal aborts or the
   * catalog closes. Resolves the names registered ([] and a warning event
   * without WebMCP).
   */
  exposeToPage(options?: ExposeToPageOptions): Promise<string[]>;
  /** Closes every server. */
  close(): Promise<void>;

  addEventListener<K extends keyof CatalogEventMap>(type: K, listener: (ev: CatalogEventMap[K]) => void, options?: boolean | AddEventListenerOptions): void;
  addEventListener(type: string, listener: EventListenerOrEventListenerObject | null, options?: boolean | AddEventListenerOptions): void;
  removeEventListener<K extends keyof CatalogEventMap>(type: K, listener: (ev: CatalogEventMap[K]) => void, options?: boolean | EventListenerOptions): void;
  removeEventListener(type: string, listener: EventListenerOrEventListenerObject | null, options?: boolean | EventListenerOptions): void;
}

// ---- Agent: a model's turns over the catalog's tools (docs/JSAPI.md, "Agent").

/** A message in the OpenAI Chat Completions shapes. */
export interface ChatMessage {
  role: "system" | "user" | "assistant" | "tool";
  content?: string | null | unknown[];
  tool_calls?: { id: string; type: "function"; function: { name: string; arguments: string } }[];
  tool_call_id?: string;
  [key: string]: unknown;
}

export interface OpenAIModelOptions {
  /** Any OpenAI-compatible Chat Completions endpoint (OpenAI, Ollama, vLLM, LM Studio, llama.cpp, OpenRouter). */
  baseURL?: string;
  apiKey?: string;
  model?: string;
  headers?: Record<string, string>;
}

export interface AnthropicModelOptions extends OpenAIModelOptions {
  maxTokens?: number;
  /** Extended thinking with this many tokens for it (at least 1024, below maxTokens, 4096 by default); it streams as reasoning events. */
  thinkingBudget?: number;
}

export interface OpenAIResponsesModelOptions extends OpenAIModelOptions {
  /** reasoning.effort, for reasoning models (others refuse it). */
  reasoningEffort?: "none" | "minimal" | "low" | "medium" | "high" | "xhigh";
  /** reasoning.summary: reasoning models then stream a summary of their reasoning as reasoning events. */
  reasoningSummary?: "auto" | "concise" | "detailed";
}

export interface GeminiModelOptions extends OpenAIModelOptions {
  /** thinkingConfig.includeThoughts: thinking models stream summaries of their thoughts as reasoning events. */
  includeThoughts?: boolean;
}

/** What mcp.models makes: a description the runtime turns into an adapter. */
export interface ModelSpec {
  readonly kind: "openai" | "anthropic" | "openai-responses" | "gemini";
  readonly [key: string]: unknown;
}

export interface Models {
  openai(options?: OpenAIModelOptions): ModelSpec;
  anthropic(options?: AnthropicModelOptions): ModelSpec;
  /** The OpenAI Responses API (POST {baseURL}/responses; baseURL https://api.openai.com/v1 by default). */
  openaiResponses(options?: OpenAIResponsesModelOptions): ModelSpec;
  /** The Gemini API (POST {baseURL}/models/{model}:streamGenerateContent?alt=sse; baseURL https://generativelanguage.googleapis.com/v1beta by default). */
  gemini(options?: GeminiModelOptions): ModelSpec;
}

/** mcp.models, also usable before load(). */
export const models: Models;

/** A model written by the app: one assistant message per request. */
export type ModelFunction = (req: { messages: ChatMessage[]; tools: unknown[]; signal?: AbortSignal; [key: string]: unknown }) => Promise<ChatMessage>;

export interface AgentOptions {
  model: ModelSpec | ModelFunction;
  system?: string;
  maxSteps?: number;
  /** How long a call waits for a sign-in the agent asked for (authrequired); default 300000. */
  authWaitMs?: number;
  /** Bounds stored conversations: past maxTokens (bytes of JSON / 4, scaled to the model's own counts once it reported usage), a turn first replaces the oldest turns by a summary. */
  compact?: {
    maxTokens: number;
    /** "model" (default): the agent's model writes the summary; or the page's function. */
    summarize?: "model" | ((messages: ChatMessage[], context: { previous: string }) => Promise<string>);
  };
  /** The model's context window in tokens: every usage then carries it as contextLimit beside contextTokens. */
  contextLimit?: number;
  /** The model's prices per million tokens, in your currency: every usage then carries its cost. cachedInput defaults to input. */
  prices?: { input: number; output: number; cachedInput?: number };
}

export type AgentEvent =
  | { type: "text"; delta: string }
  | { type: "toolcall"; id: string; name: string; serverId: string; tool: string; arguments: unknown }
  | {
      type: "toolresult"; id: string; name: string; serverId: string; isError: boolean; text: string;
      /** The tool's view (MCP Apps), when it has one and the server answered: render it with mcp.apps.render and result. */
      app?: ToolApp;
      /** The server's result, when app is set. */
      result?: CallToolResult;
    }
  | { type: "authrequired"; serverId: string; id?: string; declined?: boolean }
  | {
      type: "approval"; id?: string; serverId: string; tool: string; name: string; approved: boolean;
      /** host: approve answered; policy: approvalPolicy, unasked; remembered: an earlier "always" or "server". */
      decidedBy: "host" | "policy" | "remembered";
      /** The approval holds for the rest of this agent's conversation: this tool, or every tool of the server. */
      scope?: "tool" | "server";
      /** The approvalPolicy rule that decided. */
      policy?: "server" | "readOnly" | "destructive";
    }
  | { type: "elicitation"; id?: string; elicitationId: string; serverId: string; mode: "form" | "url"; message: string; requestedSchema?: JSONSchema; url?: string }
  | { type: "step"; index: number; finishReason: string }
  | { type: "done"; text: string; finishReason: string; steps: number; usage?: AgentUsage }
  | { type: "error"; code: MCPErrorCode | string; message: string }
  // The model's work as it streams (the adapters of mcp.models).
  | ({ type: "usage" } & AgentUsage)
  | { type: "reasoning"; delta: string }
  | { type: "toolcalldelta"; id: string; name: string; argumentsDelta: string }
  // A stored conversation's oldest turns were replaced by a summary (compact).
  | { type: "compaction"; turns: number; tokensBefore: number; tokensAfter: number; scale?: number };

/** Token usage of one model response (a usage event), or a run's sum (done, AgentResult). */
export interface AgentUsage {
  /** Every input token of the request, cached ones included. */
  inputTokens: number;
  /** The tokens generated, reasoning included. */
  outputTokens: number;
  /** The part of inputTokens read from the provider's prompt cache, when it said so. */
  cachedInputTokens?: number;
  /** The part of outputTokens spent reasoning, when the provider said so. */
  reasoningTokens?: number;
  /** How full the model's context is after the response: its input plus output tokens (of a sum: the last response's). */
  contextTokens?: number;
  /** The agent's contextLimit option, when given. */
  contextLimit?: number;
  /** The tokens' price at the agent's prices option, when given (of a sum: the sum). */
  cost?: number;
}

export interface AgentResult {
  messages: ChatMessage[];
  text: string;
  steps: number;
  finishReason: "stop" | "max_steps" | "empty" | string;
  /** The sum of the run's usage events; absent when the model reported none. */
  usage?: AgentUsage;
}

export interface RunOptions {
  signal?: AbortSignal;
  onEvent?: (ev: AgentEvent) => void;
}

export interface Agent {
  /** Runs one turn: input is the user's message or a list of messages. */
  run(input: string | ChatMessage[], options?: RunOptions): { done: Promise<AgentResult> };
  /** The stored conversation id (IndexedDB, sealed like the sign-ins), or a new empty one. */
  conversation(id: string): Promise<Conversation>;
  /** The stored conversations, the most recently updated first. */
  conversations(): Promise<ConversationInfo[]>;
  /** Forgets the agent. */
  close(): void;
}

/**
 * A tool's view (MCP Apps) in an agent's events and a stored
 * conversation: render it with mcp.apps.render({catalog, ...app}).
 */
export interface ToolApp {
  serverId: string;
  tool: string;
  resourceUri: string;
  /** In a stored conversation's turn: render()'s stateKey for this call's view (deleting the conversation forgets what it kept). */
  stateKey?: string;
}

/** What a stored conversation keeps of a call whose tool has a view, to show the view again. */
export interface KeptView {
  app: ToolApp;
  /** The server's whole result (what the view shows; the model saw its text). */
  result: CallToolResult;
}

/** A stored conversation's description. */
export interface ConversationInfo {
  id: string;
  title: string;
  /** How many messages it holds. */
  messages: number;
  /** Incremented by every save of a turn (not by a rename). */
  revision: number;
  createdAt?: string;
  updatedAt?: string;
}

/** A stored conversation's data, as a turn's result carries it. */
export interface StoredConversation {
  id: string;
  title: string;
  /** The summary of the turns compaction replaced; absent when none. */
  summary?: string;
  messages: ChatMessage[];
  revision: number;
  /** Turns compaction replaced so far; absent when none. */
  compactedTurns?: number;
  /** The model's tokens per estimated token (bytes / 4), from its last usage report; compaction counts with it. Absent before one. */
  tokenScale?: number;
  /** Absent until the conversation is first stored. */
  createdAt?: string;
  updatedAt?: string;
  /** By tool call id, the calls of messages whose tool has a view (a result over 256 KiB is not kept); absent when none. */
  views?: Record<string, KeptView>;
}

/** A stored conversation (docs/JSAPI.md, "Conversations that last"); its fields are as last loaded or saved. */
export interface Conversation {
  readonly id: string;
  title: string;
  /** The summary of the turns compaction replaced ("" when none). */
  summary: string;
  messages: ChatMessage[];
  revision: number;
  compactedTurns: number;
  /** The model's tokens per estimated token (bytes / 4), from its last usage report; 0 before one. */
  tokenScale: number;
  createdAt?: string;
  updatedAt?: string;
  /** By tool call id, the calls of messages whose tool has a view: render each again with mcp.apps.render({catalog, ...v.app, result: v.result}). */
  views: Record<string, KeptView>;
  /** Runs a turn on the stored conversation plus input, saving after every step. */
  run(input: string | ChatMessage[], options?: RunOptions): { done: Promise<AgentResult & { conversation: StoredConversation }> };
  /** Reads the stored conversation again. */
  reload(): Promise<Conversation>;
  /** Sets the title (storing a new conversation). */
  rename(title: string): Promise<Conversation>;
  /** Deletes the stored conversation. */
  delete(): Promise<void>;
}

// ---- Host policy (docs/JSAPI.md, "Host policy").

export interface MCP {
  /**
   * Sets the page's host policy: which MCP servers and which authorization
   * servers (issuers) every client and catalog of the page may use. Once,
   * before any client or catalog exists; it cannot change afterwards
   * (throws MCPError invalid_argument). A server it does not list is refused
   * with MCPError "policy" before anything is sent to it.
   */
  policy(options: PolicyOptions): void;
  /** The policy policy() set (frozen), or null. */
  readonly currentPolicy: Readonly<PolicyOptions> | null;
}

/**
 * URL patterns: scheme://host[:port][/path], where host and each path
 * segment are globs (path.Match: *, [a-z]; no ?), port a number or *, and a
 * pattern without a path (or ending in /*) covers everything below:
 * https://x.example/mcp/* covers /mcp/ and below it, not /mcp itself. A
 * pattern's host is ASCII (an international name in its xn-- form).
 * An unset list does not restrict; an empty one refuses everything.
 *
 * URLs are matched as written, so a server or issuer URL whose path has a
 * . or .. segment (also %2e), an encoded slash or backslash (%2F, %5C) or a
 * backslash, whose host is not plain ASCII, or whose numeric host is not a
 * dotted-decimal IPv4 address (127.1, 0x7f.0.0.1) is refused with
 * MCPError "policy", listed or not (docs/JSAPI.md, "Host policy").
 */
export interface PolicyOptions {
  /** The MCP servers allowed, e.g. ["https://*.corp.example/*"]. */
  servers?: string[];
  /** The authorization servers trusted, by issuer, e.g. ["https://login.corp.example"]. */
  issuers?: string[];
  /** Also allow any server and issuer on a loopback host (localhost, 127.0.0.0/8, [::1]), listed or not: for development. */
  allowHttpLoopback?: boolean;
}

// ---- MCP Apps: servers' interactive views (docs/JSAPI.md, "MCP Apps").

export interface MCP {
  /** MCP Apps: render a tool's view in a sandboxed frame. */
  readonly apps: Apps;
}

export interface Apps {
  /**
   * Reads the tool's view (resources/read, cached per client), frames the
   * sandbox proxy at sandboxUrl (another origin than the page's) in
   * element and runs the view's protocol. Resolves once the frame is in
   * the page (state "loading"); rejects invalid_argument for bad options,
   * a tool without a view or a sandboxUrl on the page's origin, and the
   * read's MCPError when the view cannot be read.
   */
  render(element: Element, options: RenderOptions): Promise<AppView>;
  /** Deletes what views kept under stateKeys that start with prefix ("" for every one); resolves how many. */
  forgetState(prefix?: string): Promise<number>;
}

export type DisplayMode = "inline" | "fullscreen" | "pip";

export interface RenderOptions {
  /** The view's server: a client, or a catalog with serverId. */
  client?: Client;
  catalog?: Catalog;
  serverId?: string;
  /** The tool whose view this is: its name on the server, or a tool from listTools() or a catalog's tools(). */
  tool: string | Tool | CatalogTool;
  /** The call's arguments, sent to the view once it is ready (ui/notifications/tool-input). */
  arguments?: Record<string, unknown>;
  /** The call's result, when known (else view.sendToolResult later). */
  result?: CallToolResult;
  /**
   * The model is still writing the call: the view gets its arguments from
   * view.sendToolInputPartial() (tool-input-partial) and sendToolInput();
   * not with arguments or result.
   */
  inputPending?: boolean;
  /** The sandbox proxy (apps/sandbox.html of the package) on an origin of its own. */
  sandboxUrl: string | URL;
  theme?: "light" | "dark";
  /** The display modes the page offers; ["inline"] by default. */
  displayModes?: DisplayMode[];
  /**
   * With catalog: once the view is ready and declares tools of its own, the
   * catalog's model gets them, as server view.offeredAs ("<serverId>-view-<n>"),
   * under the catalog's rules and approval; they leave when the view ends.
   */
  offerTools?: boolean;
  /** ui/message: the view asks to send a message as the user; resolve false to refuse. Without it, refused. */
  onMessage?: (message: { role: "user"; content: Content[] }, context: { view: AppView }) => unknown;
  /** ui/open-link: the view asks to open a URL (http(s) only); the page decides. Without it, refused. */
  onOpenLink?: (url: string, context: { view: AppView }) => unknown;
  /**
   * ui/download-file: the view asks the page to save files; the page should
   * ask the person first. Returning false refuses. Without it, the view is
   * not offered downloads and its requests are refused.
   */
  onDownloadFile?: (files: AppDownloadFile[], context: { view: AppView }) => unknown;
  /**
   * sampling/createMessage: the view asks for a model's completion (MCP's
   * CreateMessageRequest params: messages, maxTokens, systemPrompt, …; no
   * tools). The page answers with its own model, after its person agrees
   * if it costs them; resolve {role: "assistant", content, model,
   * stopReason?}, reject to refuse (the view gets the error's message).
   * signal aborts when the view ends. Without it, the view is not offered
   * sampling and its requests are "method not found".
   */
  onSampling?: (request: SamplingParams, context: { view: AppView; signal: AbortSignal }) => Promise<SamplingResult> | SamplingResult;
  /** ui/update-model-context: the view's context for the model (the last one counts). */
  onModelContext?: (context: ModelContext, info: { view: AppView }) => unknown;
  /** Aborting closes the view. */
  signal?: AbortSignal;
  /**
   * How long the view may take, from its HTML reaching the sandbox to its
   * ui/notifications/initialized, before it fails (state "failed", an
   * error event with code "timeout" saying how far it got); 30000 by default.
   */
  initTimeoutMs?: number;
  /**
   * Grants beyond the specification's default policy for a server the page
   * trusts: "eval" ('unsafe-eval'), "wasm" ('wasm-unsafe-eval'), "blob"
   * (workers and scripts from blob:/data:, blob: images, media, fonts,
   * styles). Each is a warning and in view.trust; any other name rejects
   * invalid_argument.
   */
  trust?: AppTrust[];
  /**
   * Names this view instance (at most 1024 characters; e.g. its
   * conversation and tool call, as a stored conversation's ToolApp gives
   * it): the view gets a localStorage (its opaque origin has none) that
   * starts with what a view of this server kept under this key, on any
   * page of the origin, and the page keeps each change, sealed in
   * IndexedDB. Never shown to a model. Without it, the view has no storage.
   */
  stateKey?: string;
}

/** A file a view asks to download: an embedded resource's bytes, or a resource_link's URI. */
export interface AppDownloadFile {
  /** The URI's last path segment, safe as a file name. */
  name: string;
  mimeType: string;
  blob?: Blob;
  uri?: string;
}

/** A grant of render()'s trust option (docs/JSAPI.md, MCP Apps). */
export type AppTrust = "eval" | "wasm" | "blob";

export interface ModelContext {
  content?: Content[];
  structuredContent?: Record<string, unknown>;
}

export interface AppViewEventMap {
  ready: CustomEvent<Record<string, never>>;
  sizechange: CustomEvent<{ width?: number; height?: number }>;
  message: CustomEvent<{ role: "user"; content: Content[] }>;
  openlink: CustomEvent<{ url: string }>;
  downloadfile: CustomEvent<{ files: { name: string; mimeType: string; size?: number; uri?: string }[] }>;
  /** The view asked for a completion (sampling/createMessage), before onSampling answers it. */
  sampling: CustomEvent<{ request: SamplingParams }>;
  modelcontext: CustomEvent<ModelContext>;
  displaymodechange: CustomEvent<{ mode: DisplayMode }>;
  log: CustomEvent<{ level: string; data: unknown }>;
  teardownrequest: CustomEvent<Record<string, never>>;
  /** The view's own tools changed (notifications/tools/list_changed): listTools() again. */
  toolschanged: CustomEvent<Record<string, never>>;
  /** With stateKey: what the view keeps was saved (size: its names' and values' characters). */
  statesave: CustomEvent<{ size: number }>;
  warning: CustomEvent<{ message: string }>;
  error: CustomEvent<MCPError>;
}

export interface AppViewCallOptions {
  signal?: AbortSignal;
  /** How long the view has to answer; 60000 by default. */
  timeoutMs?: number;
}

export interface AppView extends EventTarget {
  readonly state: "loading" | "ready" | "closed" | "failed";
  readonly serverId: string | null;
  readonly tool: string;
  readonly resourceUri: string;
  readonly displayMode: DisplayMode;
  /** The sandbox proxy's iframe. */
  readonly frame: HTMLIFrameElement;
  /** The view's last ui/update-model-context, or null. */
  readonly modelContext: ModelContext | null;
  /** What was left out of the view's declarations (e.g. a CSP entry that would widen its policy) and what trust granted, one sentence each. */
  readonly warnings: readonly string[];
  /** The Content-Security-Policy put first in the view's document (also at console.debug when the view is made). */
  readonly policy: string;
  /** What render()'s trust granted the view beyond the default policy. */
  readonly trust: readonly AppTrust[];
  readonly hostContext: Record<string, unknown>;
  /** With offerTools: the catalog server whose tools are the view's own, once it is ready and offers some (kept after the view ends and the server leaves); else null. */
  readonly offeredAs: string | null;
  /** Whether the view offers tools of its own (it declared appCapabilities.tools at ui/initialize); false until it is ready. */
  readonly offersTools: boolean;
  /** render()'s stateKey, or null. */
  readonly stateKey: string | null;
  /** With stateKey: a copy of the view's storage (its localStorage's names and values) as last sent; else null. */
  readonly storage: Record<string, string> | null;
  /** The view's own tools (tools/list to the view, every page), once it is ready; rejects when it offers none or ends. */
  listTools(options?: AppViewCallOptions): Promise<Tool[]>;
  /** Calls one of the view's own tools (tools/call to the view) once it is ready; an abort tells the view (notifications/cancelled). */
  callTool(name: string, args?: Record<string, unknown>, options?: AppViewCallOptions): Promise<CallToolResult>;
  /** Sends the tool's result (at once, or once the view is ready and has its input). */
  sendToolResult(result: CallToolResult): void;
  /** With inputPending: the arguments so far (tool-input-partial); refused after sendToolInput. */
  sendToolInputPartial(args: Record<string, unknown>): void;
  /** With inputPending: the whole arguments, once (tool-input). */
  sendToolInput(args: Record<string, unknown>): void;
  /** Tells the view its tool call was cancelled. */
  cancel(reason?: string): void;
  setTheme(theme: "light" | "dark"): void;
  /** ui/resource-teardown (answered within 3 s or not), then the frame is removed; with stateKey, resolves once what the view wrote is saved. */
  close(): Promise<void>;
  addEventListener<K extends keyof AppViewEventMap>(type: K, listener: (ev: AppViewEventMap[K]) => void, options?: boolean | AddEventListenerOptions): void;
  addEventListener(type: string, listener: EventListenerOrEventListenerObject | null, options?: boolean | AddEventListenerOptions): void;
  removeEventListener(type: string, listener: EventListenerOrEventListenerObject | null, options?: boolean | EventListenerOptions): void;
}
