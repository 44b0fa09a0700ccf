// rules.js — the page's checks of the options that the synchronous
// factories (mcp.client(), mcp.catalog(), cat.add(), cat.agent()) and the
// per-call options take, so that they throw at once, with Go's message, in
// every runtime. The kinds and rules are data from the Go package jsapi
// (jsapi.js, generated); this module only interprets them, as jsapi's
// Decode and Check do, and a catalog entry is read from catalog's
// EntryForm as ParseEntry reads it. What is code on both sides: the syntax
// of a URL, a header and a glob pattern (Go's net/url, mcpclient.New and
// path.Match). e2e/rules_test.go generates its cases from the tables and
// compares the page's errors with Go's.
import { CLIENT_NEW, ENTRY_FORM, OPTION_LISTS, RELAY_URL, RULES } from "./jsapi.js";

/** Go's %q of s (close enough for option names and values). */
const q = (s) => JSON.stringify(String(s));

const article = (kind) => ({ array: "an array", object: "an object", record: "an object", integer: "a whole number", function: "a function" })[kind] ?? `a ${kind}`;

/** mcperr.Present's sentence of a message: its package prefix off, a capital, a full stop. */
export function sentence(msg) {
  let s = msg.replace(/^(mcp|oauth|catalog|agent|policy): /, "").trim();
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
  if (c.atMost !== undefined) return typeof v === "number" && v <= c.atMost;
  const oneOf = (values) => (e) => values.some((w) => JSON.stringify(w) === JSON.stringify(e));
  if (c.every !== undefined) return isObject(v) && Object.values(v).every(oneOf(c.every));
  if (c.some !== undefined) return isObject(v) && Object.values(v).some(oneOf(c.some));
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
  return kindProblem(what, OPTION_LISTS[kind], o) ?? ruleProblem(what, RULES[kind], o) ?? (kind === "client" || kind === "catalog" ? relayProblem(what, o.relay) : null);
}

/** relay.CheckURL: a relay's URL is absolute https (http on a loopback host), without query, fragment or user info. */
function relayProblem(what, relay) {
  if (typeof relay !== "string" || relay === "") return null;
  let u = null;
  try {
    u = new URL(relay);
  } catch { /* below */ }
  const host = u?.hostname ?? "";
  const loopback = isLoopbackHost(host.replace(/^\[|\]$/g, ""));
  const ok = u && u.host !== "" && u.username === "" && u.password === "" && !/[?#]/.test(relay) && /^[a-z][a-z0-9+.-]*:\/\/[^/@]+(\/|$)/i.test(relay) &&
    (u.protocol === "https:" || (u.protocol === "http:" && loopback));
  return ok ? null : `${what}: ${fmt(RELAY_URL.message, relay)}`;
}

/** jsapi.CheckEntryRelay: a relay a catalog's server entry names must be on the page's origin, or null. */
export function entryRelayProblem(what, config) {
  const relay = config?.relay;
  if (typeof relay !== "string" || relay === "") return null;
  let origin = null;
  try {
    origin = new URL(relay).origin;
  } catch { /* below */ }
  return origin !== null && origin === globalThis.location?.origin ? null : `${what}: ${fmt(RELAY_URL.entry, relay)}`;
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

const RESERVED = new Set(CLIENT_NEW.reservedHeaders.map((h) => h.toLowerCase()));

/** mcpclient.New's checks of the server URL and the header names and values (CLIENT_NEW's messages). */
function urlProblem(url, o) {
  const msg = CLIENT_NEW.messages;
  const m = /^([A-Za-z][A-Za-z0-9+.-]*):\/\/([^/?#]*)/.exec(url);
  const scheme = m?.[1].toLowerCase();
  if (!m || (scheme !== "http" && scheme !== "https") || m[2].replace(/^[^@]*@/, "") === "") return fmt(msg.badUrl, url);
  for (const [k, v] of Object.entries(o?.headers ?? {})) {
    if (k === "" || /[\x00-\x20\x7f-\uffff"(),/:;<=>?@[\\\]{}]/.test(k)) return fmt(msg.headerName, k);
    if (/[\x00-\x08\x0a-\x1f\x7f-\uffff]/.test(v)) return fmt(msg.headerValue, k);
    if (RESERVED.has(k.toLowerCase())) return fmt(msg.headerReserved, k);
  }
  return null;
}

/** Go's fmt of the formats of ENTRY_FORM's messages (%q, %s, %d). */
const fmt = (format, ...args) => format.replace(/%[qsd]/g, (v) => (v === "%q" ? q(args.shift()) : String(args.shift())));

/**
 * catalog.ParseEntry's reading of one entry, from ENTRY_FORM: {url,
 * webmcp, config (the server's client options), problem} where problem is the
 * message of the error that refuses the entry (a warning in catalog()), or
 * null.
 */
export function readEntry(id, o) {
  const f = ENTRY_FORM;
  const msg = f.messages;
  const bad = (format, ...args) => ({ problem: fmt(msg.entry, id, fmt(format, ...args)) });
  if (id === "") return { problem: msg.emptyId };
  if (!isObject(o)) return bad(msg.notObject);
  const local = { problem: fmt(msg.local, id) };
  const m = { ...o };
  if (f.localKey in m) return local;
  for (const [theirs, ours] of f.aliases) {
    if (!(theirs in m)) continue;
    if (!(ours in m)) m[ours] = m[theirs];
    delete m[theirs];
  }
  for (const n of f.negations) {
    if (!(n.key in m)) continue;
    if (m[n.key] !== null && typeof m[n.key] !== "boolean") return bad(n.message);
    if (!(n.of in m)) m[n.of] = !m[n.key];
    delete m[n.key];
  }
  for (const k of f.transportKeys) {
    if (!(k in m)) continue;
    if (m[k] !== null && typeof m[k] !== "string") return bad(msg.transportString, k);
    const s = m[k] ?? "";
    const t = f.transports[s.toLowerCase()];
    if (t === undefined) return bad(msg.transport, s);
    if (t === "") return local;
    delete m[k];
    m.transport = t;
  }
  for (const fd of f.fields) {
    if (!(fd.name in m) || m[fd.name] === null) continue;
    if (fd.kind === "array" ? !Array.isArray(m[fd.name]) || m[fd.name].some((p) => typeof p !== "string") : typeof m[fd.name] !== fd.kind) {
      return bad(fd.message);
    }
  }
  const url = m.url ?? "";
  if (m.webmcp === true) {
    if (url !== "") return bad(msg.webmcpUrl);
  } else {
    if (url === "") return bad(msg.noUrl);
    const u = /^([A-Za-z][A-Za-z0-9+.-]*):\/\/([^/?#]*)/.exec(url);
    const scheme = u?.[1].toLowerCase();
    if (!u || (scheme !== "http" && scheme !== "https") || u[2].replace(/^[^@]*@/, "") === "" || /[\x00-\x20\x7f]/.test(url)) {
      return bad(msg.badUrl, url);
    }
  }
  for (const fd of f.fields) {
    for (const p of (fd.globs && m[fd.name]) || []) {
      if (!validGlob(p)) return bad(msg.badGlob, fd.name, p);
    }
  }
  const config = { ...m };
  for (const fd of f.fields) delete config[fd.name];
  return { url, webmcp: m.webmcp === true, config, problem: null };
}

/** catalog.Add's refusals: an id in use, a full catalog; null when neither. */
export function addProblem(id, known, max) {
  if (known.has(id)) return fmt(ENTRY_FORM.messages.exists, id);
  if (known.size >= max) return fmt(ENTRY_FORM.messages.full, max);
  return null;
}

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

// ------------------------------------------------------------ host policy
// hostpolicy's patterns and refusals (Go's hostpolicy package is the
// enforcer, where the requests are made; these make mcp.policy(),
// mcp.client(), mcp.catalog() and cat.add() answer at once in every
// runtime, with Go's messages).

const OCTET = "(25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d)";
/** netip's reading of an IPv4 address: four decimal numbers, no leading zeros. */
const DOTTED = new RegExp(`^${OCTET}(\\.${OCTET}){3}$`);

/** hostpolicy's isLoopback of a host without brackets (netip's IsLoopback, an IPv4-mapped address included). */
function isLoopbackHost(h) {
  if (h === "localhost") return true;
  if (DOTTED.test(h)) return h.startsWith("127.");
  if (!/^[0-9a-f:.]+$/i.test(h)) return false;
  let n = "";
  try { n = new URL(`http://[${h}]/`).hostname; } catch { return false; }
  return n === "[::1]" || /^\[::ffff:7f[0-9a-f]{2}:[0-9a-f]{1,4}\]$/.test(n);
}

/** A path.Match pattern (checked by validGlob) as an anchored RegExp. */
function globRegExp(p) {
  const esc = (c) => c.replace(/[\\^$.*+?()[\]{}|\/-]/g, "\\$&");
  let re = "";
  for (let i = 0; i < p.length; i++) {
    const c = p[i];
    if (c === "*") re += "[^/]*";
    else if (c === "?") re += "[^/]";
    else if (c === "\\") re += esc(p[++i]);
    else if (c === "[") {
      let cls = "[";
      i++;
      if (p[i] === "^") { cls += "^"; i++; }
      for (let first = true; first || p[i] !== "]"; first = false) {
        if (p[i] === "\\") i++;
        cls += esc(p[i++]);
        if (p[i] === "-") {
          i++;
          if (p[i] === "\\") i++;
          cls += "-" + esc(p[i++]);
        }
      }
      re += cls + "]";
    } else re += esc(c);
  }
  return new RegExp(`^${re}$`, "s");
}

/** hostpolicy's parsePattern: {scheme, host, port, path} or {problem}. */
function parsePolicyPattern(s) {
  const cut = s.indexOf("://");
  if (cut < 0) return { problem: "must look like https://host/path" };
  const scheme = s.slice(0, cut).toLowerCase();
  const rest = s.slice(cut + 3);
  if (scheme !== "https" && scheme !== "http") return { problem: "must start with https:// (or http:// for a loopback host)" };
  if (/[?#@\\ \t\r\n]/.test(rest)) return { problem: "must not have a query, fragment, user info, space or backslash" };
  const slash = rest.indexOf("/");
  const authority = slash < 0 ? rest : rest.slice(0, slash);
  const p = slash < 0 ? "" : rest.slice(slash + 1);
  let host = authority;
  let port = "";
  if (authority.startsWith("[")) {
    const end = authority.indexOf("]");
    if (end < 0) return { problem: "has an unclosed [ in its host" };
    host = authority.slice(0, end + 1);
    port = authority.slice(end + 1).replace(/^:/, "");
    try { new URL(`http://${host}/`); } catch { return { problem: "has an invalid IPv6 host" }; }
  } else {
    const i = authority.lastIndexOf(":");
    if (i >= 0) {
      host = authority.slice(0, i);
      port = authority.slice(i + 1);
      if (port === "") return { problem: "has an empty port" };
    }
  }
  host = host.toLowerCase();
  if (host === "" || host.replace(/^[*.]+|[*.]+$/g, "") === "") return { problem: "must name a host (a * alone would allow any)" };
  if (/[^\x00-\x7f]/.test(host)) return { problem: "has a non-ASCII host; write it in its xn-- (punycode) form" };
  if (!host.startsWith("[") && !validGlob(host)) return { problem: "has a host that is not a valid glob pattern" };
  if (port !== "" && port !== "*" && !/^[0-9]+$/.test(port)) return { problem: "has a port that is neither a number nor *" };
  if (scheme === "http" && !isLoopbackHost(host.replace(/^\[|\]$/g, ""))) {
    return { problem: "uses http, which is only for a loopback host (localhost, 127.0.0.1, [::1]); use https" };
  }
  let path = null;
  if (p !== "" && p !== "*") {
    path = p.split("/");
    for (const seg of path) {
      if (!validGlob(seg)) return { problem: "has a path that is not a valid glob pattern" };
      const l = seg.toLowerCase().replaceAll("%2e", ".");
      if (l === "." || l === ".." || l.includes("%2f") || l.includes("%5c")) {
        return { problem: "has a . or .. segment or an encoded slash in its path; write the path as the server resolves it" };
      }
    }
  }
  return { scheme, host, port, path };
}

const defaultPort = (scheme) => (scheme === "https" ? "443" : "80");

function patternMatches(pt, u) {
  if (u.protocol.slice(0, -1) !== pt.scheme) return false;
  const host = u.hostname.toLowerCase();
  if (pt.host.startsWith("[")) {
    if (new URL(`http://${pt.host}/`).hostname !== host) return false;
  } else if (!globRegExp(pt.host).test(host) || /[[\]]/.test(host)) return false;
  const port = u.port || defaultPort(pt.scheme);
  const want = pt.port || defaultPort(pt.scheme);
  if (want !== "*" && want.replace(/^0+/, "") !== port.replace(/^0+/, "")) return false;
  if (pt.path === null) return true;
  const segs = decodeURIComponentSafe(u.pathname).replace(/^\//, "").split("/");
  const last = pt.path.length - 1;
  for (let i = 0; i < pt.path.length; i++) {
    if (i >= segs.length) return false;
    if (i === last && pt.path[i] === "*") return true;
    if (!globRegExp(pt.path[i]).test(segs[i])) return false;
  }
  return segs.length === pt.path.length;
}

// hostpolicy's refusals of a URL not in plain form, read from the string
// as written: the URL parser resolves dot segments, takes a backslash for
// a slash and rewrites hosts (127.1, punycode) before its parts can be
// looked at, while Go's net/url keeps them as written.
const WHY_PATH = "has a path that is not in plain form (a . or .. segment, an encoded slash or backslash such as %2F or %5C, or a backslash)";
const FIX_PATH = "use its plain URL, with the path as the server resolves it";
const WHY_HOST = "has a host that is not plain ASCII (letters, digits, -, . and _, or an IPv6 address in brackets)";
const FIX_HOST = "write the host in ASCII, an international name in its xn-- (punycode) form";
const WHY_IPV4 = "has a numeric host that is not an IPv4 address in dotted decimal";
const FIX_IPV4 = "write the address as four decimal numbers without leading zeros, as in 127.0.0.1";

const cut = (s, sep) => {
  const i = s.indexOf(sep);
  return i < 0 ? [s, "", false] : [s.slice(0, i), s.slice(i + sep.length), true];
};
const badEscape = (s) => /%(?![0-9a-fA-F]{2})/.test(s);

/** hostpolicy's plainProblem: {notURL} or {why, fix} or {}. The two must stay identical. */
function plainProblem(raw) {
  const notURL = { notURL: true };
  if (/[\x00-\x20\x7f]/.test(raw)) return notURL;
  const [scheme, rest, ok] = cut(raw, "://");
  if (!ok || (scheme.toLowerCase() !== "http" && scheme.toLowerCase() !== "https")) return notURL;
  const [beforeFragment, fragment] = cut(rest, "#");
  const [pre] = cut(beforeFragment, "?");
  if (badEscape(pre) || badEscape(fragment)) return notURL;
  if (pre.includes("\\")) return { why: WHY_PATH, fix: FIX_PATH };
  const [authority, p] = cut(pre, "/");
  if (authority.includes("@")) return notURL;
  let host = authority;
  let port = "";
  if (authority.startsWith("[")) {
    const end = authority.indexOf("]");
    if (end < 0) return notURL;
    host = authority.slice(0, end + 1);
    port = authority.slice(end + 1);
    if (port !== "" && !port.startsWith(":")) return notURL;
    port = port.replace(/^:/, "");
    if (!/^[0-9a-fA-F:.]*$/.test(host.slice(1, end))) return { why: WHY_HOST, fix: FIX_HOST };
  } else {
    const i = authority.lastIndexOf(":");
    if (i >= 0) {
      host = authority.slice(0, i);
      port = authority.slice(i + 1);
    }
    if (host === "") return notURL;
    if (!/^[A-Za-z0-9._-]+$/.test(host)) return { why: WHY_HOST, fix: FIX_HOST };
  }
  if (!/^[0-9]*$/.test(port) || port.replace(/^0+/, "").length > 5 || (port !== "" && Number(port) > 65535)) return notURL;
  if (!host.startsWith("[") && endsInNumber(host) && !DOTTED.test(host)) return { why: WHY_IPV4, fix: FIX_IPV4 };
  const lower = p.toLowerCase();
  if (lower.includes("%2f") || lower.includes("%5c")) return { why: WHY_PATH, fix: FIX_PATH };
  for (const seg of lower.split("/")) {
    const l = seg.replaceAll("%2e", ".");
    if (l === "." || l === "..") return { why: WHY_PATH, fix: FIX_PATH };
  }
  return {};
}

/** The URL Standard's "ends in a number": a browser reads such a host as an IPv4 address in any form. */
function endsInNumber(host) {
  const labels = host.split(".");
  if (labels.length > 1 && labels[labels.length - 1] === "") labels.pop();
  const last = labels[labels.length - 1].toLowerCase();
  return last !== "" && (/^[0-9]+$/.test(last) || /^0x[0-9a-f]*$/.test(last));
}

function decodeURIComponentSafe(s) {
  try { return decodeURIComponent(s); } catch { return s; }
}

/**
 * jsapi's checks of policy options p (mcp.policy()'s, or a catalog's
 * policy with prefix "policy."): Go's invalid_argument message, or null.
 */
export function policyProblem(what, p, prefix = "") {
  if (prefix === "") {
    const m = optionsProblem(what, "policy", p);
    if (m) return m;
  }
  for (const list of ["servers", "issuers"]) {
    for (const s of p?.[list] ?? []) {
      const pt = parsePolicyPattern(s);
      if (pt.problem) return `${what}: ${prefix}${list} entry ${q(s)} ${pt.problem}`;
    }
  }
  return null;
}

/**
 * hostpolicy.Chain's CheckServer (kind "server") or CheckIssuer
 * ("issuer") of url under policies [{options, owner}] (null entries
 * allow all): Go's refusal message, or null.
 */
export function policyRefusal(policies, kind, url) {
  const listName = kind === "server" ? "servers" : "issuers";
  for (const pol of policies) {
    const list = pol?.options?.[listName];
    if (!pol || !Array.isArray(list)) continue;
    const what = kind === "issuer" ? `the authorization server ${url} (the server's sign-in)` : `the MCP server ${url}`;
    const plain = plainProblem(String(url));
    let u = null;
    if (!plain.notURL && !plain.why) {
      try { u = new URL(url); } catch { /* refused below */ }
    }
    if (plain.why) return `policy: ${what} ${plain.why}, so ${pol.owner} refuses it; ${plain.fix}`;
    if (!u || (u.protocol !== "http:" && u.protocol !== "https:") || u.hostname === "" || u.username !== "" || u.password !== "") {
      return `policy: ${what} is not an http(s) URL without user info, so ${pol.owner} refuses it`;
    }
    if (pol.options.allowHttpLoopback === true && isLoopbackHost(u.hostname.replace(/^\[|\]$/g, ""))) continue;
    if (list.some((s) => patternMatches(parsePolicyPattern(s), u))) continue;
    const listed = list.length ? list.join(", ") : "nothing";
    return `policy: ${what} is not allowed by ${pol.owner}, whose ${listName} list is ${listed}; use a server it lists, or ask whoever maintains the page to add it there`;
  }
  return null;
}
