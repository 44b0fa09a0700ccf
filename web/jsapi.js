// jsapi.js: the JavaScript API's codes, states, options and the table of
// operations of the wasm module, generated from the Go package jsapi by
// `go generate ./jsapi`. Do not edit: a test fails when it is stale.

/** The MCPError codes. */
export const CODES = Object.freeze(["auth_required","declined","popup_blocked","redirect_unhandled","state_mismatch","discovery_failed","registration_failed","token_failed","insufficient_scope","aborted","timeout","network","http","protocol","invalid_argument","storage","closed"]);

/** The states of a client. */
export const STATES = Object.freeze(["idle","connecting","needs_auth","authorizing","connected","declined","failed","closed"]);

/** The options of mcp.client() and the JavaScript type of each (Go checks their values). */
export const CLIENT_OPTIONS = Object.freeze({
  clientName: "string",
  redirectUri: "string",
  scopes: "array",
  clientId: "string",
  clientMetadataUrl: "string",
  clientSecret: "string",
  headers: "object",
  accessToken: "function",
  storage: "string",
  interactive: "boolean",
  authMode: "string",
  authTimeoutMs: "number",
  severedPopupTimeoutMs: "number",
  transport: "string",
  dpop: "string|boolean",
  identityAssertion: "function",
  idpTokenEndpoint: "string",
  idpIssuer: "string",
  idpClientId: "string",
  idpClientSecret: "string",
  idpSubjectTokenType: "string",
  grant: "string",
});

/** The options of mcp.catalog(). */
export const CATALOG_OPTIONS = Object.freeze({
  servers: "object",
  mcpServers: "object",
  maxServers: "number",
  maxToolsPerServer: "number",
  callTimeoutMs: "number",
  breaker: "object",
  approve: "function",
  serverTools: "boolean",
});

/** The options of cat.agent(). */
export const AGENT_OPTIONS = Object.freeze({
  model: "object",
  system: "string",
  maxSteps: "number",
  authWaitMs: "number",
});

/** The operations the wasm module exports (invoke(name, argsJSON, signal, onProgress)); true marks one that answers at once, not with a Promise. */
export const OPS = Object.freeze({
  "client.new": true,
  "client.connect": false,
  "client.authorize": false,
  "client.logout": false,
  "client.close": false,
  "client.listTools": false,
  "client.listResources": false,
  "client.listResourceTemplates": false,
  "client.listPrompts": false,
  "client.readResource": false,
  "client.getPrompt": false,
  "client.ping": false,
  "client.callTool": false,
  "callback.deliver": false,
  "grants.apply": false,
  "storage.clear": false,
  "catalog.new": true,
  "catalog.add": true,
  "catalog.remove": false,
  "catalog.enable": false,
  "catalog.disable": false,
  "catalog.authorize": false,
  "catalog.tools": false,
  "catalog.toolsFor": false,
  "catalog.callTool": false,
  "catalog.handleToolCalls": false,
  "catalog.close": false,
  "agent.new": true,
  "agent.run": false,
  "agent.close": true,
});

/** The callbacks the wasm module calls on the host object. */
export const HOSTS = Object.freeze(["event","accessToken","identityAssertion","elicit","sample","openAuth","authDismissed","closeAuth","lock","announce","saveHints","approve","model"]);
