// validate.js — the checks of mcp.client() and catalog.add() that Go makes
// synchronously (package jsapi's Decode and ClientOptions.Validate, and
// mcpclient.New's URL and header checks), ported for the worker runtimes:
// there the page cannot wait for Go, yet client() must still throw
// invalid_argument at once, with the same message as on the main thread.
// e2e/runtime_test.go feeds the same bad inputs in both modes and compares.
import { CLIENT_OPTIONS } from "./jsapi.js";

const NAMES = Object.keys(CLIENT_OPTIONS);

/** Go's %q of s (close enough for option names and values). */
const q = (s) => JSON.stringify(String(s));

/** Go's quoteList: "a", "b" or "c". */
const quoteList = (l) => (l.length === 1 ? q(l[0]) : `${l.slice(0, -1).map(q).join(", ")} or ${q(l[l.length - 1])}`);

const article = (kind) => ({ array: "an array", object: "an object", function: "a function" })[kind] ?? `a ${kind}`;

/** mcperr.Present's sentence of a message: its package prefix off, a capital, a full stop. */
function sentence(msg) {
  let s = msg.replace(/^(mcp|oauth|catalog|agent): /, "").trim();
  if (s === "") return s;
  const first = s.split(" ")[0];
  if (!/[()._]/.test(first)) s = s[0].toUpperCase() + s.slice(1);
  if (!/[.?!]$/.test(s)) s += ".";
  return s;
}

/** Whether v, decoded from JSON, fits Go's type of option kind. */
function fits(kind, v) {
  if (v === null) return true; // JSON null leaves a Go value at its zero
  switch (kind) {
    case "string": return typeof v === "string";
    case "boolean": case "function": return typeof v === "boolean";
    case "number": return typeof v === "number";
    case "array": return Array.isArray(v) && v.every((s) => typeof s === "string");
    case "object": return typeof v === "object" && !Array.isArray(v) && Object.values(v).every((s) => typeof s === "string");
    default: return true; // "string|boolean": checked by value below
  }
}

/**
 * The message (a sentence) of the invalid_argument error Go gives for
 * client(url, options) with what (e.g. "client()"), or null: sent is the
 * options as mcp.js sends them (JSON-decoded).
 */
export function clientProblem(url, sent) {
  const m = decodeProblem("client()", sent) ?? valueProblem(sent) ?? urlProblem(url, sent);
  return m && sentence(m);
}

function decodeProblem(what, o) {
  if (o === null || o === undefined) return null;
  if (typeof o !== "object" || Array.isArray(o)) return `${what}: options must be an object`;
  for (const k of Object.keys(o)) {
    if (!NAMES.includes(k)) return `${what}: unknown option ${q(k)}; known: ${NAMES.join(", ")}`;
  }
  for (const [k, v] of Object.entries(o)) {
    if (!fits(CLIENT_OPTIONS[k], v)) return `${what}: ${k} must be ${article(CLIENT_OPTIONS[k])}`;
  }
  return null;
}

function valueProblem(o) {
  const s = (k) => (typeof o[k] === "string" ? o[k] : "");
  const oneOf = (name, allowed) => (s(name) !== "" && !allowed.includes(s(name)) ? `client(): ${name} must be ${quoteList(allowed)}` : null);
  const positive = (name) => (typeof o[name] === "number" && !(o[name] > 0) ? `client(): ${name} must be a positive number of milliseconds` : null);
  const found = oneOf("storage", ["indexeddb", "memory"]) ?? oneOf("authMode", ["popup", "redirect"]) ??
    oneOf("transport", ["auto", "streamable", "sse"]) ?? positive("authTimeoutMs") ?? positive("severedPopupTimeoutMs");
  if (found) return found;
  if (o.dpop !== undefined && o.dpop !== null && o.dpop !== "auto" && o.dpop !== true && o.dpop !== false) {
    return `client(): dpop must be "auto", true or false`;
  }
  if (s("authMode") === "redirect" && s("storage") === "memory") {
    return `client(): authMode "redirect" needs storage "indexeddb": the page is gone while the user signs in`;
  }
  if (s("clientSecret") !== "" && s("clientId") === "") {
    return "client(): clientSecret needs clientId (a secret belongs to a pre-registered client)";
  }
  switch (s("grant")) {
    case "": case "authorization_code": break;
    case "client_credentials":
      return `client(): grant "client_credentials" is refused in a page: its client secret or private key would be public to everyone who loads the page. Run that grant on a server (the Go package oauth, Config.ClientCredentials) and hand the page its tokens through accessToken`;
    case "workload_identity":
      return `client(): grant "workload_identity" is refused in a page: a workload identity belongs to a server, and its credential would be public to everyone who loads the page. Run that grant on a server (the Go package oauth, Config.WorkloadIdentity) and hand the page its tokens through accessToken`;
    default:
      return `client(): grant must be "authorization_code" (refused in a page: "client_credentials", "workload_identity")`;
  }
  if (o.identityAssertion !== true) {
    for (const name of ["idpTokenEndpoint", "idpIssuer", "idpClientId", "idpClientSecret", "idpSubjectTokenType"]) {
      if (s(name) !== "") return `client(): ${name} needs identityAssertion (the function returning the user's ID token)`;
    }
    return null;
  }
  if (o.accessToken === true) return "client(): identityAssertion and accessToken exclude each other: the page supplies either its tokens or the user's ID token";
  if (s("grant") !== "") return "client(): identityAssertion signs in by enterprise-managed authorization; leave grant unset";
  if (s("idpTokenEndpoint") === "" && s("idpIssuer") === "") return "client(): identityAssertion needs idpTokenEndpoint or idpIssuer (the identity provider that exchanges the ID token)";
  if (s("idpClientId") === "") return "client(): identityAssertion needs idpClientId (this app's client ID at the identity provider)";
  if (s("clientId") === "") return "client(): identityAssertion needs clientId (this app's client ID at the MCP server's authorization server)";
  if (s("clientMetadataUrl") !== "") return "client(): clientMetadataUrl is for the popup sign-in; leave it unset with identityAssertion";
  return null;
}

const FORBIDDEN = new Set(["mcp-session-id", "mcp-protocol-version", "content-type", "accept", "last-event-id", "dpop"]);

function urlProblem(url, o) {
  const m = /^([A-Za-z][A-Za-z0-9+.-]*):\/\/([^/?#]*)/.exec(url);
  const scheme = m?.[1].toLowerCase();
  if (!m || (scheme !== "http" && scheme !== "https") || m[2].replace(/^[^@]*@/, "") === "") {
    return `mcp: server URL ${q(url)} is not an absolute http(s) URL`;
  }
  for (const [k, v] of Object.entries(o?.headers ?? {})) {
    if (k === "" || /[\x00-\x20\x7f-\uffff"(),/:;<=>?@[\\\]{}]/.test(k)) return `mcp: header name ${q(k)} is not a valid HTTP header name`;
    if (/[\x00-\x08\x0a-\x1f\x7f-\uffff]/.test(v)) return `mcp: the value of header ${q(k)} has characters a header cannot carry (control characters or non-ASCII)`;
    if (FORBIDDEN.has(k.toLowerCase())) return `mcp: header ${q(k)} is set by the MCP transport itself and cannot be replaced`;
  }
  return null;
}

/**
 * The message (a sentence) of the invalid_argument error Go gives for
 * catalog.add(id, config), or null: sent is the config as mcp.js sends it
 * (JSON-decoded), known the ids the catalog holds, max its maxServers.
 * Ported from package catalog's parseEntry, validateServer and Add.
 */
export function catalogAddProblem(id, sent, known, max) {
  const m = entryProblem(id, sent, known, max);
  return m && sentence(m);
}

function entryProblem(id, o, known, max) {
  const bad = (msg) => `catalog: server ${q(id)}: ${msg}`;
  if (o === null || typeof o !== "object" || Array.isArray(o)) return bad("the entry must be a JSON object");
  const m = { ...o };
  if ("command" in m) return stdio(id);
  if ("serverUrl" in m) {
    if (!("url" in m)) m.url = m.serverUrl;
    delete m.serverUrl;
  }
  if ("disabled" in m) {
    if (m.disabled !== null && typeof m.disabled !== "boolean") return bad("disabled must be true or false");
    delete m.disabled;
  }
  for (const k of ["type", "transport"]) {
    if (!(k in m)) continue;
    if (m[k] !== null && typeof m[k] !== "string") return bad(`${k} must be a string`);
    const s = m[k] ?? "";
    switch (s.toLowerCase()) {
      case "stdio": return stdio(id);
      case "http": case "streamable-http": case "streamable_http": case "streamablehttp": case "streamable": m.transport = "streamable"; break;
      case "sse": m.transport = "sse"; break;
      case "auto": case "": m.transport = "auto"; break;
      default: return bad(`transport ${q(s)} is not one of "http", "streamable-http", "sse"`);
    }
    if (k === "type") delete m.type;
  }
  if ("enabled" in m && m.enabled !== null && typeof m.enabled !== "boolean") return bad("enabled must be true or false");
  for (const k of ["url", "title", "description"]) {
    if (k in m && m[k] !== null && typeof m[k] !== "string") return bad(`${k} has the wrong type`);
  }
  for (const k of ["allowTools", "denyTools"]) {
    if (k in m && m[k] !== null && !(Array.isArray(m[k]) && m[k].every((p) => typeof p === "string"))) return bad(`${k} has the wrong type`);
  }
  const url = m.url ?? "";
  if (url === "") return bad("it has no url; give it the http(s) URL of its MCP endpoint");
  const u = /^([A-Za-z][A-Za-z0-9+.-]*):\/\/([^/?#]*)/.exec(url);
  const scheme = u?.[1].toLowerCase();
  if (!u || (scheme !== "http" && scheme !== "https") || u[2].replace(/^[^@]*@/, "") === "" || /[\x00-\x20\x7f]/.test(url)) {
    return bad(`url ${q(url)} is not an absolute http(s) URL`);
  }
  for (const k of ["allowTools", "denyTools"]) {
    for (const p of m[k] ?? []) {
      if (!validGlob(p)) return bad(`${k} entry ${q(p)} is not a valid glob pattern`);
    }
  }
  if (known.has(id)) return `catalog: server ${q(id)} exists; remove it first`;
  if (known.size >= max) return `catalog: the catalog holds ${max} servers already, the most allowed (maxServers)`;
  // The rest are the server's client options: Go names only the server.
  const client = { ...m };
  for (const k of ["url", "title", "description", "enabled", "allowTools", "denyTools"]) delete client[k];
  if (clientProblem(url, client)) return `catalog: server ${q(id)}`;
  return null;
}

const stdio = (id) => `server ${q(id)} is a local command (stdio) server; a web page can only reach servers over HTTP: give it a url`;

/** Whether p is a pattern Go's path.Match accepts (a closed class, no trailing backslash). */
function validGlob(p) {
  for (let i = 0; i < p.length; i++) {
    const c = p[i];
    if (c === "\\") {
      if (++i >= p.length) return false;
    } else if (c === "[") {
      i++;
      if (p[i] === "^") i++;
      let n = 0;
      for (;;) {
        if (i >= p.length) return false;
        if (p[i] === "]" && n > 0) break;
        // one character or a range lo-hi, each possibly escaped
        const one = () => {
          if (p[i] === "\\") i++;
          if (i >= p.length || ((p[i] === "-" || p[i] === "]") && p[i - 1] !== "\\")) return false;
          i++;
          return true;
        };
        if (!one()) return false;
        if (p[i] === "-") {
          i++;
          if (!one()) return false;
        }
        n++;
      }
    }
  }
  return true;
}
