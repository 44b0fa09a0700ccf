// rules.js — the page's checks of the options that the synchronous
// factories (mcp.client(), mcp.catalog(), cat.add(), cat.agent()) and the
// per-call options take, so that they throw at once, with Go's message, in
// every runtime. The kinds and rules are data from the Go package jsapi
// (jsapi.js, generated); this module only interprets them, as jsapi's
// Decode and Check do. What is not data yet: the syntax of a server URL
// and of header names (mcpclient.New) and a catalog entry's aliases
// (catalog.ParseServers), below. e2e/runtime_test.go generates its cases
// from the rules and compares the page's errors with Go's.
import { OPTION_LISTS, RULES } from "./jsapi.js";

/** Go's %q of s (close enough for option names and values). */
const q = (s) => JSON.stringify(String(s));

const article = (kind) => ({ array: "an array", object: "an object", record: "an object", integer: "a whole number", function: "a function" })[kind] ?? `a ${kind}`;

/** mcperr.Present's sentence of a message: its package prefix off, a capital, a full stop. */
export function sentence(msg) {
  let s = msg.replace(/^(mcp|oauth|catalog|agent): /, "").trim();
  if (s === "") return s;
  const first = s.split(" ")[0];
  if (!/[()._]/.test(first)) s = s[0].toUpperCase() + s.slice(1);
  if (!/[.?!]$/.test(s)) s += ".";
  return s;
}

const isObject = (v) => v !== null && typeof v === "object" && !Array.isArray(v);

/** Whether v, decoded from JSON, has the kind (jsapi's fits). */
function fits(kind, v) {
  switch (kind) {
    case "string": return typeof v === "string";
    case "boolean": case "function": return typeof v === "boolean"; // a function crosses as true
    case "number": return typeof v === "number";
    case "integer": return Number.isInteger(v) && Math.abs(v) < 2 ** 53;
    case "array": return Array.isArray(v) && v.every((s) => typeof s === "string");
    case "record": return isObject(v) && Object.values(v).every((s) => typeof s === "string");
    case "object": return isObject(v);
    case "any": return true;
  }
  throw new Error(`rules.js: unknown option kind ${kind}`);
}

/** jsapi's checkKinds: the first unknown option (name order), then the first of the wrong kind. */
function kindProblem(what, list, o, prefix = "") {
  const names = list.map((x) => x.name);
  for (const k of Object.keys(o).sort()) {
    if (!names.includes(k)) return `${what}: unknown option ${q(prefix + k)}; known: ${names.join(", ")}`;
  }
  for (const opt of list) {
    const v = o[opt.name];
    if (v === undefined || v === null) continue;
    if (!fits(opt.kind, v)) return `${what}: ${prefix}${opt.name} must be ${article(opt.kind)}`;
    if (opt.fields && isObject(v)) {
      const m = kindProblem(what, opt.fields, v, `${prefix}${opt.name}.`);
      if (m) return m;
    }
  }
  return null;
}

const isSet = (v) => v !== undefined && v !== null && v !== "" && v !== false;

function lookup(o, path) {
  let cur = o;
  for (const k of path.split(".")) {
    if (!isObject(cur) || !(k in cur)) return undefined;
    cur = cur[k];
  }
  return cur;
}

function holds(c, o) {
  const v = lookup(o, c.option);
  if (c.set !== undefined) return isSet(v) === c.set;
  if (c.in !== undefined) return v !== undefined && c.in.some((w) => JSON.stringify(w) === JSON.stringify(v));
  if (c.above !== undefined) return typeof v === "number" && v > c.above;
  if (c.atLeast !== undefined) return typeof v === "number" && v >= c.atLeast;
  throw new Error(`rules.js: a condition on ${c.option} says nothing`);
}

/** jsapi's Check: the message of the first rule that fails, or null. */
export function ruleProblem(what, rules, o) {
  for (const r of rules) {
    if ((r.if ?? []).every((c) => holds(c, o)) && !(r.then ?? []).some((c) => holds(c, o))) return `${what}: ${r.message}`;
  }
  return null;
}

/**
 * jsapi's Decode of options kind ("client", "catalog", "agent") as JSON
 * sends them (functions as true): the message of Go's invalid_argument
 * error, or null.
 */
export function optionsProblem(what, kind, o) {
  if (o === undefined || o === null) return ruleProblem(what, RULES[kind], {});
  if (!isObject(o)) return `${what}: options must be an object`;
  return kindProblem(what, OPTION_LISTS[kind], o) ?? ruleProblem(what, RULES[kind], o);
}

/** The sentence of Go's error for client(url, options), or null: sent is the options as mcp.js sends them. */
export function clientProblem(url, sent) {
  const m = optionsProblem("client()", "client", sent) ?? urlProblem(url, sent);
  return m && sentence(m);
}

/** The sentence of Go's error for a call's options ({timeoutMs}), or null. */
export function callProblem(options) {
  const m = ruleProblem("callTool()", RULES.call, options);
  return m && sentence(m);
}

const FORBIDDEN = new Set(["mcp-session-id", "mcp-protocol-version", "content-type", "accept", "last-event-id", "dpop"]);

/** mcpclient.New's checks of the server URL and the header names and values. */
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
 * catalog.ParseServers's reading of one entry: {config (the server's
 * client options, url first), problem} where problem is the message of
 * the warning that leaves the entry out, or null.
 */
export function readEntry(id, o) {
  const bad = (msg) => ({ problem: `catalog: server ${q(id)}: ${msg}` });
  if (id === "") return { problem: "catalog: a server has an empty id; give it a name" };
  if (!isObject(o)) return bad("the entry must be a JSON object");
  const m = { ...o };
  if ("command" in m) return { problem: stdio(id) };
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
      case "stdio": return { problem: stdio(id) };
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
  const config = { ...m };
  for (const k of ["url", "title", "description", "enabled", "allowTools", "denyTools"]) delete config[k];
  return { url, config, problem: null };
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
