// jsapi.js: the JavaScript API's codes, states, options and the table of
// operations of the wasm module, generated from the Go package jsapi by
// `go generate ./jsapi`. Do not edit: a test fails when it is stale.

/** The MCPError codes. */
export const CODES = Object.freeze(["auth_required","declined","popup_blocked","redirect_unhandled","state_mismatch","discovery_failed","registration_failed","token_failed","insufficient_scope","aborted","timeout","network","http","protocol","invalid_argument","storage","closed","policy"]);

/** The states of a client. */
export const STATES = Object.freeze(["idle","connecting","needs_auth","authorizing","connected","declined","failed","closed","reconnecting"]);

/** The options of mcp.client() and the JavaScript type of each. */
export const CLIENT_OPTIONS = Object.freeze({
  clientName: "string",
  redirectUri: "string",
  scopes: "array",
  clientId: "string",
  clientMetadataUrl: "string",
  clientSecret: "string",
  authorizationEndpoint: "string",
  tokenEndpoint: "string",
  revocationEndpoint: "string",
  headers: "record",
  accessToken: "function",
  storage: "string",
  interactive: "boolean",
  authMode: "string",
  authTimeoutMs: "number",
  severedPopupTimeoutMs: "number",
  transport: "string",
  apps: "boolean",
  dpop: "any",
  identityAssertion: "function",
  idpTokenEndpoint: "string",
  idpIssuer: "string",
  idpClientId: "string",
  idpClientSecret: "string",
  idpSubjectTokenType: "string",
  grant: "string",
  relay: "string",
  relayMode: "string",
});

/** The options of mcp.catalog(). */
export const CATALOG_OPTIONS = Object.freeze({
  servers: "object",
  mcpServers: "object",
  maxServers: "integer",
  maxToolsPerServer: "integer",
  callTimeoutMs: "number",
  taskWaitMs: "number",
  idleTimeoutMs: "number",
  breaker: "object",
  approve: "function",
  serverTools: "boolean",
  skills: "boolean",
  approvalPolicy: "object",
  onElicitation: "function",
  toolBudget: "integer",
  apps: "boolean",
  policy: "object",
  relay: "string",
  relayMode: "string",
});

/** The options of cat.agent(). */
export const AGENT_OPTIONS = Object.freeze({
  model: "object",
  system: "string",
  maxSteps: "integer",
  authWaitMs: "number",
  compact: "object",
  contextLimit: "integer",
  prices: "object",
});

/** The options of mcp.policy(). */
export const POLICY_OPTIONS = Object.freeze({
  servers: "array",
  issuers: "array",
  allowHttpLoopback: "boolean",
});

/** Each options object's options, with the fields of object options: what rules.js checks kinds against. */
export const OPTION_LISTS = Object.freeze({
  client: [{"name":"clientName","kind":"string"},{"name":"redirectUri","kind":"string"},{"name":"scopes","kind":"array"},{"name":"clientId","kind":"string"},{"name":"clientMetadataUrl","kind":"string"},{"name":"clientSecret","kind":"string"},{"name":"authorizationEndpoint","kind":"string"},{"name":"tokenEndpoint","kind":"string"},{"name":"revocationEndpoint","kind":"string"},{"name":"headers","kind":"record"},{"name":"accessToken","kind":"function"},{"name":"storage","kind":"string"},{"name":"interactive","kind":"boolean"},{"name":"authMode","kind":"string"},{"name":"authTimeoutMs","kind":"number"},{"name":"severedPopupTimeoutMs","kind":"number"},{"name":"transport","kind":"string"},{"name":"apps","kind":"boolean"},{"name":"dpop","kind":"any"},{"name":"identityAssertion","kind":"function"},{"name":"idpTokenEndpoint","kind":"string"},{"name":"idpIssuer","kind":"string"},{"name":"idpClientId","kind":"string"},{"name":"idpClientSecret","kind":"string"},{"name":"idpSubjectTokenType","kind":"string"},{"name":"grant","kind":"string"},{"name":"relay","kind":"string"},{"name":"relayMode","kind":"string"}],
  catalog: [{"name":"servers","kind":"object"},{"name":"mcpServers","kind":"object"},{"name":"maxServers","kind":"integer"},{"name":"maxToolsPerServer","kind":"integer"},{"name":"callTimeoutMs","kind":"number"},{"name":"taskWaitMs","kind":"number"},{"name":"idleTimeoutMs","kind":"number"},{"name":"breaker","kind":"object","fields":[{"name":"failures","kind":"integer"},{"name":"cooldownMs","kind":"number"}]},{"name":"approve","kind":"function"},{"name":"serverTools","kind":"boolean"},{"name":"skills","kind":"boolean"},{"name":"approvalPolicy","kind":"object","fields":[{"name":"readOnly","kind":"string"},{"name":"destructive","kind":"string"},{"name":"servers","kind":"record"}]},{"name":"onElicitation","kind":"function"},{"name":"toolBudget","kind":"integer"},{"name":"apps","kind":"boolean"},{"name":"policy","kind":"object","fields":[{"name":"servers","kind":"array"},{"name":"issuers","kind":"array"},{"name":"allowHttpLoopback","kind":"boolean"}]},{"name":"relay","kind":"string"},{"name":"relayMode","kind":"string"}],
  agent: [{"name":"model","kind":"object","fields":[{"name":"kind","kind":"string"},{"name":"baseURL","kind":"string"},{"name":"apiKey","kind":"string"},{"name":"model","kind":"string"},{"name":"headers","kind":"record"},{"name":"maxTokens","kind":"integer"},{"name":"thinkingBudget","kind":"integer"},{"name":"reasoningEffort","kind":"string"},{"name":"reasoningSummary","kind":"string"},{"name":"includeThoughts","kind":"boolean"}]},{"name":"system","kind":"string"},{"name":"maxSteps","kind":"integer"},{"name":"authWaitMs","kind":"number"},{"name":"compact","kind":"object","fields":[{"name":"maxTokens","kind":"integer"},{"name":"summarize","kind":"string"}]},{"name":"contextLimit","kind":"integer"},{"name":"prices","kind":"object","fields":[{"name":"input","kind":"number"},{"name":"output","kind":"number"},{"name":"cachedInput","kind":"number"}]}],
  policy: [{"name":"servers","kind":"array"},{"name":"issuers","kind":"array"},{"name":"allowHttpLoopback","kind":"boolean"}],
});

/** The rules of each options object (see Rule in the Go package jsapi), in the order they are checked. */
export const RULES = Object.freeze({
  client: [
    {"if":[{"option":"storage","set":true}],"then":[{"option":"storage","in":["indexeddb","memory"]}],"message":"storage must be \"indexeddb\" or \"memory\""},
    {"if":[{"option":"authMode","set":true}],"then":[{"option":"authMode","in":["popup","redirect"]}],"message":"authMode must be \"popup\" or \"redirect\""},
    {"if":[{"option":"transport","set":true}],"then":[{"option":"transport","in":["auto","streamable","sse"]}],"message":"transport must be \"auto\", \"streamable\" or \"sse\""},
    {"if":[{"option":"authTimeoutMs","set":true}],"then":[{"option":"authTimeoutMs","above":0}],"message":"authTimeoutMs must be a positive number of milliseconds"},
    {"if":[{"option":"severedPopupTimeoutMs","set":true}],"then":[{"option":"severedPopupTimeoutMs","above":0}],"message":"severedPopupTimeoutMs must be a positive number of milliseconds"},
    {"if":[{"option":"dpop","set":true}],"then":[{"option":"dpop","in":["auto",true]}],"message":"dpop must be \"auto\", true or false"},
    {"if":[{"option":"authMode","in":["redirect"]},{"option":"storage","in":["memory"]}],"message":"authMode \"redirect\" needs storage \"indexeddb\": the page is gone while the user signs in"},
    {"if":[{"option":"clientSecret","set":true}],"then":[{"option":"clientId","set":true}],"message":"clientSecret needs clientId (a secret belongs to a pre-registered client)"},
    {"if":[{"option":"authorizationEndpoint","set":true}],"then":[{"option":"tokenEndpoint","set":true}],"message":"authorizationEndpoint, tokenEndpoint and clientId configure the authorization server by hand and go together: give all three, or none to discover the server"},
    {"if":[{"option":"tokenEndpoint","set":true}],"then":[{"option":"authorizationEndpoint","set":true}],"message":"authorizationEndpoint, tokenEndpoint and clientId configure the authorization server by hand and go together: give all three, or none to discover the server"},
    {"if":[{"option":"authorizationEndpoint","set":true}],"then":[{"option":"clientId","set":true}],"message":"authorizationEndpoint, tokenEndpoint and clientId configure the authorization server by hand and go together: give all three, or none to discover the server"},
    {"if":[{"option":"revocationEndpoint","set":true}],"then":[{"option":"authorizationEndpoint","set":true}],"message":"revocationEndpoint needs authorizationEndpoint, tokenEndpoint and clientId (it completes the authorization server configured by hand; a discovered server names its own)"},
    {"if":[{"option":"authorizationEndpoint","set":true},{"option":"clientMetadataUrl","set":true}],"message":"clientMetadataUrl needs the authorization server's metadata, which authorizationEndpoint and tokenEndpoint stand in for: leave one of them unset"},
    {"if":[{"option":"grant","in":["client_credentials"]}],"message":"grant \"client_credentials\" is refused in a page: its client secret or private key would be public to everyone who loads the page. Run that grant on a server (the Go package oauth, Config.ClientCredentials) and hand the page its tokens through accessToken"},
    {"if":[{"option":"grant","in":["workload_identity"]}],"message":"grant \"workload_identity\" is refused in a page: a workload identity belongs to a server, and its credential would be public to everyone who loads the page. Run that grant on a server (the Go package oauth, Config.WorkloadIdentity) and hand the page its tokens through accessToken"},
    {"if":[{"option":"grant","set":true}],"then":[{"option":"grant","in":["authorization_code"]}],"message":"grant must be \"authorization_code\" (refused in a page: \"client_credentials\", \"workload_identity\")"},
    {"if":[{"option":"idpTokenEndpoint","set":true}],"then":[{"option":"identityAssertion","set":true}],"message":"idpTokenEndpoint needs identityAssertion (the function returning the user's ID token)"},
    {"if":[{"option":"idpIssuer","set":true}],"then":[{"option":"identityAssertion","set":true}],"message":"idpIssuer needs identityAssertion (the function returning the user's ID token)"},
    {"if":[{"option":"idpClientId","set":true}],"then":[{"option":"identityAssertion","set":true}],"message":"idpClientId needs identityAssertion (the function returning the user's ID token)"},
    {"if":[{"option":"idpClientSecret","set":true}],"then":[{"option":"identityAssertion","set":true}],"message":"idpClientSecret needs identityAssertion (the function returning the user's ID token)"},
    {"if":[{"option":"idpSubjectTokenType","set":true}],"then":[{"option":"identityAssertion","set":true}],"message":"idpSubjectTokenType needs identityAssertion (the function returning the user's ID token)"},
    {"if":[{"option":"relayMode","set":true}],"then":[{"option":"relayMode","in":["fallback","always"]}],"message":"relayMode must be \"fallback\" or \"always\""},
    {"if":[{"option":"relayMode","set":true}],"then":[{"option":"relay","set":true}],"message":"relayMode needs relay (the URL of the relay the requests travel through)"},
    {"if":[{"option":"identityAssertion","set":true},{"option":"authorizationEndpoint","set":true}],"message":"authorizationEndpoint and tokenEndpoint are for the popup sign-in; leave them unset with identityAssertion"},
    {"if":[{"option":"identityAssertion","set":true},{"option":"accessToken","set":true}],"message":"identityAssertion and accessToken exclude each other: the page supplies either its tokens or the user's ID token"},
    {"if":[{"option":"identityAssertion","set":true},{"option":"grant","set":true}],"message":"identityAssertion signs in by enterprise-managed authorization; leave grant unset"},
    {"if":[{"option":"identityAssertion","set":true}],"then":[{"option":"idpTokenEndpoint","set":true},{"option":"idpIssuer","set":true}],"message":"identityAssertion needs idpTokenEndpoint or idpIssuer (the identity provider that exchanges the ID token)"},
    {"if":[{"option":"identityAssertion","set":true}],"then":[{"option":"idpClientId","set":true}],"message":"identityAssertion needs idpClientId (this app's client ID at the identity provider)"},
    {"if":[{"option":"identityAssertion","set":true}],"then":[{"option":"clientId","set":true}],"message":"identityAssertion needs clientId (this app's client ID at the MCP server's authorization server)"},
    {"if":[{"option":"identityAssertion","set":true},{"option":"clientMetadataUrl","set":true}],"message":"clientMetadataUrl is for the popup sign-in; leave it unset with identityAssertion"},
  ],
  catalog: [
    {"if":[{"option":"servers","set":true},{"option":"mcpServers","set":true}],"message":"give servers or mcpServers, not both"},
    {"if":[{"option":"maxServers","set":true}],"then":[{"option":"maxServers","above":0}],"message":"maxServers must be a positive number"},
    {"if":[{"option":"maxToolsPerServer","set":true}],"then":[{"option":"maxToolsPerServer","above":0}],"message":"maxToolsPerServer must be a positive number"},
    {"if":[{"option":"callTimeoutMs","set":true}],"then":[{"option":"callTimeoutMs","above":0}],"message":"callTimeoutMs must be a positive number of milliseconds"},
    {"if":[{"option":"taskWaitMs","set":true}],"then":[{"option":"taskWaitMs","above":0}],"message":"taskWaitMs must be a positive number of milliseconds"},
    {"if":[{"option":"idleTimeoutMs","set":true}],"then":[{"option":"idleTimeoutMs","atLeast":0}],"message":"idleTimeoutMs must be 0 (never close an idle session) or a positive number of milliseconds"},
    {"if":[{"option":"toolBudget","set":true}],"then":[{"option":"toolBudget","above":0}],"message":"toolBudget must be a positive number"},
    {"if":[{"option":"breaker.failures","set":true}],"then":[{"option":"breaker.failures","above":0}],"message":"breaker.failures must be a positive number"},
    {"if":[{"option":"breaker.cooldownMs","set":true}],"then":[{"option":"breaker.cooldownMs","above":0}],"message":"breaker.cooldownMs must be a positive number of milliseconds"},
    {"if":[{"option":"approvalPolicy.readOnly","set":true}],"then":[{"option":"approvalPolicy.readOnly","in":["allow","ask"]}],"message":"approvalPolicy.readOnly must be \"allow\" or \"ask\""},
    {"if":[{"option":"approvalPolicy.destructive","set":true}],"then":[{"option":"approvalPolicy.destructive","in":["ask","allow","deny"]}],"message":"approvalPolicy.destructive must be \"ask\", \"allow\" or \"deny\""},
    {"if":[{"option":"approvalPolicy.servers","set":true}],"then":[{"option":"approvalPolicy.servers","every":["allow","ask","deny"]}],"message":"approvalPolicy.servers must map server ids to \"allow\", \"ask\" or \"deny\""},
    {"if":[{"option":"approvalPolicy.readOnly","in":["ask"]}],"then":[{"option":"approve","set":true}],"message":"approvalPolicy.readOnly says \"ask\", which needs approve (the function that asks the user)"},
    {"if":[{"option":"approvalPolicy.destructive","in":["ask"]}],"then":[{"option":"approve","set":true}],"message":"approvalPolicy.destructive says \"ask\", which needs approve (the function that asks the user)"},
    {"if":[{"option":"approvalPolicy.servers","some":["ask"]}],"then":[{"option":"approve","set":true}],"message":"approvalPolicy.servers says \"ask\", which needs approve (the function that asks the user)"},
    {"if":[{"option":"policy","set":true}],"then":[{"option":"policy.servers","set":true},{"option":"policy.issuers","set":true}],"message":"policy needs servers or issuers (or both), as mcp.policy() does"},
    {"if":[{"option":"relayMode","set":true}],"then":[{"option":"relayMode","in":["fallback","always"]}],"message":"relayMode must be \"fallback\" or \"always\""},
    {"if":[{"option":"relayMode","set":true}],"then":[{"option":"relay","set":true}],"message":"relayMode needs relay (the URL of the relay the requests travel through)"},
  ],
  agent: [
    {"then":[{"option":"model.kind","in":["openai","anthropic","openai-responses","gemini","custom"]}],"message":"model must be mcp.models.openai(…), mcp.models.anthropic(…), mcp.models.openaiResponses(…), mcp.models.gemini(…) or an async function"},
    {"if":[{"option":"maxSteps","set":true}],"then":[{"option":"maxSteps","above":0}],"message":"maxSteps must be a positive number"},
    {"if":[{"option":"authWaitMs","set":true}],"then":[{"option":"authWaitMs","atLeast":0}],"message":"authWaitMs must be 0 or more"},
    {"if":[{"option":"model.maxTokens","set":true}],"then":[{"option":"model.maxTokens","above":0}],"message":"model.maxTokens must be a positive number"},
    {"if":[{"option":"compact","set":true}],"then":[{"option":"compact.maxTokens","above":0}],"message":"compact.maxTokens must be a positive number of tokens"},
    {"if":[{"option":"compact","set":true}],"then":[{"option":"compact.maxTokens","atMost":1048576}],"message":"compact.maxTokens must be at most 1048576 (a stored conversation's limit of 4 MiB / 4)"},
    {"if":[{"option":"compact.summarize","set":true}],"then":[{"option":"compact.summarize","in":["model","page"]}],"message":"compact.summarize must be \"model\" or an async function (messages) =\u003e summary"},
    {"if":[{"option":"model.thinkingBudget","set":true}],"then":[{"option":"model.thinkingBudget","atLeast":1024}],"message":"model.thinkingBudget must be at least 1024 (the Anthropic API's smallest thinking budget)"},
    {"if":[{"option":"model.reasoningEffort","set":true}],"then":[{"option":"model.reasoningEffort","in":["none","minimal","low","medium","high","xhigh"]}],"message":"model.reasoningEffort must be \"none\", \"minimal\", \"low\", \"medium\", \"high\" or \"xhigh\""},
    {"if":[{"option":"model.reasoningSummary","set":true}],"then":[{"option":"model.reasoningSummary","in":["auto","concise","detailed"]}],"message":"model.reasoningSummary must be \"auto\", \"concise\" or \"detailed\""},
    {"if":[{"option":"contextLimit","set":true}],"then":[{"option":"contextLimit","above":0}],"message":"contextLimit must be a positive number"},
    {"if":[{"option":"contextLimit","set":true}],"then":[{"option":"contextLimit","atMost":1073741824}],"message":"contextLimit must be at most 1073741824 tokens"},
    {"if":[{"option":"prices","set":true}],"then":[{"option":"prices.input","atLeast":0}],"message":"prices needs input and output (and optionally cachedInput), each a price of 0 or more per million tokens"},
    {"if":[{"option":"prices","set":true}],"then":[{"option":"prices.output","atLeast":0}],"message":"prices needs input and output (and optionally cachedInput), each a price of 0 or more per million tokens"},
    {"if":[{"option":"prices.cachedInput","set":true}],"then":[{"option":"prices.cachedInput","atLeast":0}],"message":"prices needs input and output (and optionally cachedInput), each a price of 0 or more per million tokens"},
  ],
  call: [
    {"if":[{"option":"timeoutMs","set":true}],"then":[{"option":"timeoutMs","above":0}],"message":"timeoutMs must be a positive number of milliseconds"},
  ],
  policy: [
    {"then":[{"option":"servers","set":true},{"option":"issuers","set":true}],"message":"give servers or issuers (or both): lists of URL patterns such as \"https://*.corp.example/*\""},
  ],
});

/** mcpclient.New's refusals of a server URL and headers: the headers the transport sets itself, and the messages. */
export const CLIENT_NEW = Object.freeze({"messages":{"badUrl":"mcp: server URL %q is not an absolute http(s) URL","headerName":"mcp: header name %q is not a valid HTTP header name","headerValue":"mcp: the value of header %q has characters a header cannot carry (control characters or non-ASCII)","headerReserved":"mcp: header %q is set by the MCP transport itself and cannot be replaced"},"reservedHeaders":["Mcp-Session-Id","Mcp-Protocol-Version","Content-Type","Accept","Last-Event-Id","Dpop"]});

/** The refusals of a relay option: not a relay's URL (jsapi.RelayURLMessage), a server entry's relay on another origin (jsapi.EntryRelayMessage); %q is the value. */
export const RELAY_URL = Object.freeze({"entry":"relay %q is not on this page's origin: a server entry (which may come from a pasted configuration) may name only a relay of the page's own origin, since a relay sees the server's tokens; give another origin's relay in code, with load({ relay }), catalog({ relay }) or mcp.client(url, { relay })","message":"relay %q must be an absolute https URL (http only on a loopback host) without query, fragment or user info, such as \"https://app.example/mcp-relay\""});

/** The refusal of an authorization server endpoint given by hand (jsapi.EndpointOptions, jsapi.EndpointURLMessage); %s is the option. */
export const ENDPOINT_URL = Object.freeze({"message":"%s must be an absolute https URL (http only on a loopback host) without fragment or user info","options":["authorizationEndpoint","tokenEndpoint","revocationEndpoint"]});

/** The owners a policy refusal names (hostpolicy.Refused). */
export const POLICY_OWNERS = Object.freeze({"catalog":"the catalog's policy (the policy option of mcp.catalog(), set by the page's code)","page":"the page's policy (mcp.policy(), set by the page's code)"});

/**
 * The host policy's checks, in order, and its sentences (package hostpolicy): patternChecks refuse a
 * pattern with their problem; plainChecks refuse a URL as written, as not a URL (no form) or with
 * plainForms[form]; forms are the refusals' fmt formats. rules.js has a test of each check's name.
 */
export const POLICY = Object.freeze({"forms":{"server":"the MCP server %s","issuer":"the authorization server %s (the server's sign-in)","notURL":"is not an http(s) URL without user info","why":"%s %s, so %s refuses it","whyFix":"%s %s, so %s refuses it; %s","listed":"%s is not allowed by %s, whose %s list is %s; use a server it lists, or ask whoever maintains the page to add it there","nothing":"nothing","sep":", ","entry":"%s entry %q %s","prefix":"policy: "},"patternChecks":[{"name":"form","problem":"must look like https://host/path"},{"name":"scheme","problem":"must start with https:// (or http:// for a loopback host)"},{"name":"chars","problem":"must not have a query, fragment, user info, space or backslash"},{"name":"bracket","problem":"has an unclosed [ in its host"},{"name":"ipv6","problem":"has an invalid IPv6 host"},{"name":"emptyPort","problem":"has an empty port"},{"name":"noHost","problem":"must name a host (a * alone would allow any)"},{"name":"ascii","problem":"has a non-ASCII host; write it in its xn-- (punycode) form"},{"name":"hostGlob","problem":"has a host that is not a valid glob pattern"},{"name":"port","problem":"has a port that is neither a number nor *"},{"name":"http","problem":"uses http, which is only for a loopback host (localhost, 127.0.0.1, [::1]); use https"},{"name":"pathGlob","problem":"has a path that is not a valid glob pattern"},{"name":"dots","problem":"has a . or .. segment or an encoded slash in its path; write the path as the server resolves it"}],"patternForbidden":"?#@\\ \t\r\n","plainChecks":[{"name":"control"},{"name":"scheme"},{"name":"escape"},{"name":"backslash","form":"path"},{"name":"userinfo"},{"name":"bracket"},{"name":"ipv6","form":"host"},{"name":"noHost"},{"name":"hostChars","form":"host"},{"name":"port"},{"name":"ipv4","form":"ipv4"},{"name":"encodedSlash","form":"path"},{"name":"dots","form":"path"}],"plainForms":{"host":{"why":"has a host that is not plain ASCII (letters, digits, -, . and _, or an IPv6 address in brackets)","fix":"write the host in ASCII, an international name in its xn-- (punycode) form"},"ipv4":{"why":"has a numeric host that is not an IPv4 address in dotted decimal","fix":"write the address as four decimal numbers without leading zeros, as in 127.0.0.1"},"path":{"why":"has a path that is not in plain form (a . or .. segment, an encoded slash or backslash such as %2F or %5C, or a backslash)","fix":"use its plain URL, with the path as the server resolves it"}}});

/** How mcperr.Present makes a sentence of an error's own message (mcperr.Sentences). */
export const SENTENCES = Object.freeze({"prefixes":["mcp: ","oauth: ","catalog: ","agent: ","policy: "],"identifier":"()._","ends":".?!"});

/** handleCallback()'s redirect_unhandled on a redirect sign-in's return no callback module took (jsapi.UnhandledReturn); {url} is the page's address. */
export const UNHANDLED_RETURN = Object.freeze({"message":"The sign-in to the server came back to {url}, but no page there finished it. Import mcpwasm/callback on that page, or pass a redirectUri whose page does.","detail":"the redirect sign-in returned to {url} and no callback module (mcpwasm/callback, oauth/callback.html) ran there; it left no result for handleCallback()"});

/** How a catalog's server entry is read (catalog.EntryForm): the keys, their aliases and kinds, the transports, the messages. */
export const ENTRY_FORM = Object.freeze({"localKey":"command","aliases":[["serverUrl","url"]],"negations":[{"key":"disabled","of":"enabled","message":"disabled must be true or false"}],"transportKeys":["type","transport"],"transports":{"":"auto","auto":"auto","http":"streamable","sse":"sse","stdio":"","streamable":"streamable","streamable-http":"streamable","streamable_http":"streamable","streamablehttp":"streamable"},"fields":[{"name":"url","kind":"string","message":"url has the wrong type"},{"name":"title","kind":"string","message":"title has the wrong type"},{"name":"description","kind":"string","message":"description has the wrong type"},{"name":"enabled","kind":"boolean","message":"enabled must be true or false"},{"name":"required","kind":"boolean","message":"required must be true or false"},{"name":"allowTools","kind":"array","message":"allowTools has the wrong type","globs":true},{"name":"denyTools","kind":"array","message":"denyTools has the wrong type","globs":true},{"name":"webmcp","kind":"boolean","message":"webmcp must be true or false"}],"messages":{"emptyId":"catalog: a server has an empty id; give it a name","entry":"catalog: server %q: %s","notObject":"the entry must be a JSON object","local":"server %q is a local command (stdio) server; a web page can only reach servers over HTTP: give it a url","transportString":"%s must be a string","transport":"transport %q is not one of \"http\", \"streamable-http\", \"sse\"","noUrl":"it has no url; give it the http(s) URL of its MCP endpoint","badUrl":"url %q is not an absolute http(s) URL","webmcpUrl":"a webmcp server is the page's own WebMCP tools and has no url; leave out url or webmcp","badGlob":"%s entry %q is not a valid glob pattern","requiredOff":"a required server cannot be disabled; leave out enabled: false (or disabled: true) or required","exists":"catalog: server %q exists; remove it first","full":"catalog: the catalog holds %d servers already, the most allowed (maxServers)"}});

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
  "client.complete": false,
  "client.subscribe": false,
  "client.unsubscribe": false,
  "client.skills": false,
  "client.getSkill": false,
  "client.loadSkill": false,
  "client.readSkillFile": false,
  "client.ping": false,
  "client.callTool": false,
  "client.tasks": false,
  "client.resumeTask": false,
  "client.cancelTask": false,
  "callback.deliver": false,
  "grants.apply": false,
  "views.state": false,
  "views.keep": false,
  "views.forget": false,
  "storage.clear": false,
  "storage.status": false,
  "network.changed": false,
  "catalog.new": true,
  "catalog.add": true,
  "catalog.remove": false,
  "catalog.enable": false,
  "catalog.disable": false,
  "catalog.authorize": false,
  "catalog.tools": false,
  "catalog.toolsFor": false,
  "catalog.callTool": false,
  "catalog.viewTools": false,
  "catalog.viewCall": false,
  "catalog.handleToolCalls": false,
  "catalog.close": false,
  "catalog.webmcpChanged": true,
  "catalog.addView": true,
  "catalog.viewChanged": true,
  "agent.new": true,
  "agent.run": false,
  "agent.close": true,
  "agent.conversation": false,
  "agent.conversations": false,
  "agent.renameConversation": false,
  "agent.deleteConversation": false,
});

/** The callbacks the wasm module calls on the host object. */
export const HOSTS = Object.freeze(["event","accessToken","identityAssertion","elicit","sample","openAuth","authDismissed","closeAuth","lock","announce","saveHints","approve","model","summarize","catalogElicit","webmcpTools","viewTools","viewCall","webmcpCall"]);

/**
 * Each host callback's call: target, it names one of the page's objects (its first argument, a
 * target()); reply, its caller waits for the answer (else it is a notice).
 */
export const HOST_CALLBACKS = Object.freeze({
  event: Object.freeze({ target: true, reply: false }),
  accessToken: Object.freeze({ target: true, reply: true }),
  identityAssertion: Object.freeze({ target: true, reply: true }),
  elicit: Object.freeze({ target: true, reply: true }),
  sample: Object.freeze({ target: true, reply: true }),
  openAuth: Object.freeze({ target: true, reply: true }),
  authDismissed: Object.freeze({ target: true, reply: true }),
  closeAuth: Object.freeze({ target: true, reply: false }),
  lock: Object.freeze({ target: false, reply: true }),
  announce: Object.freeze({ target: false, reply: false }),
  saveHints: Object.freeze({ target: false, reply: false }),
  approve: Object.freeze({ target: true, reply: true }),
  model: Object.freeze({ target: true, reply: true }),
  summarize: Object.freeze({ target: true, reply: true }),
  catalogElicit: Object.freeze({ target: true, reply: true }),
  webmcpTools: Object.freeze({ target: true, reply: true }),
  viewTools: Object.freeze({ target: true, reply: true }),
  viewCall: Object.freeze({ target: true, reply: true }),
  webmcpCall: Object.freeze({ target: true, reply: true }),
});

/** The arguments of the operations that carry an id the page chose (jsapi.IDFields): a worker prefixes each with its tab's. */
export const ID_FIELDS = Object.freeze(["catalog","id","run"]);

/** The kinds of the page's objects a host callback's target names, and the separator of "<kind>:<id>" (jsapi.Target). */
export const TARGET_KINDS = Object.freeze(["client","catalog","agent","run"]);
export const TARGET_SEP = ":";

/** The abort reason of the calls of a tab that went away, which keeps their tasks (jsapi.GoneReason). */
export const GONE_REASON = "mcpwasm: the page that made the call went away";

/** The target of the page's object id of kind (jsapi.Target). */
export function target(kind, id) {
  if (!TARGET_KINDS.includes(kind)) throw new Error(`jsapi.js: unknown target kind ${kind}`);
  return `${kind}${TARGET_SEP}${id}`;
}
