// rules.js — the page's checks of the options that the synchronous
// factories (mcp.client(), mcp.catalog(), cat.add(), cat.agent()) and the
// per-call options take, and of the host policy, so that they throw at
// once, with Go's message, in every runtime (a worker's Go answers only
// asynchronously). The kinds, rules, the policy's checks in order and
// every sentence are data from Go (jsapi.js, generated); this module only
// interprets them, as jsapi's Decode and Check and hostpolicy do, and a
// catalog entry is read from catalog's EntryForm as ParseEntry reads it.
// What is code on both sides: the syntax of a URL, a header and a glob
// pattern (Go's net/url, mcpclient.New and path.Match). e2e/rules_test.go
// and e2e/xengine's parity tests compare the page's answers with Go's.
import { CLIENT_NEW, ENDPOINT_URL, ENTRY_FORM, OPTION_LISTS, POLICY, RELAY_URL, RULES, SENTENCES } from "./jsapi.js";

/** Go's %q of s (close enough for option names and values). */
const q = (s) => JSON.stringify(String(s));

const article = (kind) => ({ array: "an array", object: "an object", record: "an object", integer: "a whole number", function: "a function" })[kind] ?? `a ${kind}`;

/** mcperr.Present's sentence of a message (SENTENCES): its package prefixes off, a capital unless it starts with an identifier, a full stop. */
export function sentence(msg) {
  let s = msg;
  for (const p of SENTENCES.prefixes) if (s.startsWith(p)) s = s.slice(p.length);
  s = s.trim();
  if (s === "") return s;
  const first = s.split(" ")[0];
  if (![...SENTENCES.identifier].some((c) => first.includes(c))) s = s[0].toUpperCase() + s.slice(1);
  if (!SENTENCES.ends.includes(s[s.length - 1])) s += ".";
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
  return kindProblem(what, OPTION_LISTS[kind], o) ?? ruleProblem(what, RULES[kind], o) ??
    (kind === "client" ? endpointProblem(what, o) : null) ?? (kind === "client" || kind === "catalog" ? relayProblem(what, o.relay) : null);
}

/** oauth.CheckEndpoint: an endpoint given by hand is absolute https (http on a loopback host), without fragment or user info. */
function endpointProblem(what, o) {
  for (const name of ENDPOINT_URL.options) {
    const v = o[name];
    if (typeof v !== "string" || v === "") continue;
    if (!webURL(v, { query: true })) return `${what}: ${fmt(ENDPOINT_URL.message, name)}`;
  }
  return null;
}

/** An absolute https URL (http on a loopback host), without fragment or user info, and without query unless query. */
function webURL(s, { query }) {
  let u = null;
  try {
    u = new URL(s);
  } catch { /* below */ }
  const loopback = isLoopbackHost((u?.hostname ?? "").replace(/^\[|\]$/g, ""));
  return !!u && u.host !== "" && u.username === "" && u.password === "" && !(query ? /#/ : /[?#]/).test(s) &&
    /^[a-z][a-z0-9+.-]*:\/\/[^/@]+(\/|$)/i.test(s) && (u.protocol === "https:" || (u.protocol === "http:" && loopback));
}

/** relay.CheckURL: a relay's URL is absolute https (http on a loopback host), without query, fragment or user info. */
function relayProblem(what, relay) {
  if (typeof relay !== "string" || relay === "") return null;
  return webURL(relay, { query: false }) ? null : `${what}: ${fmt(RELAY_URL.message, relay)}`;
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
export function callProblem(options, what = "callTool()") {
  const m = ruleProblem(what, RULES.call, options);
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
  if (m.required === true && m.enabled === false) return bad(msg.requiredOff);
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
// runtime, with Go's messages). The checks' order and sentences are
// POLICY (jsapi.js); here is each check's test, by its name, as
// hostpolicy has it: the syntax of a URL is code on both sides.

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

/** Go's path.Match as an anchored RegExp (p checked by validGlob): * and ? never match a /. */
export function globRegExp(p) {
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

const cut = (s, sep) => {
  const i = s.indexOf(sep);
  return i < 0 ? [s, "", false] : [s.slice(0, i), s.slice(i + sep.length), true];
};

/** hostpolicy's cutPattern: scheme://host[:port][/path] cut into its parts, before any is checked. */
function cutPattern(s) {
  const [scheme, rest, hasScheme] = cut(s, "://");
  const [authority, pathPart] = cut(rest, "/");
  const p = { hasScheme, scheme: scheme.toLowerCase(), rest, host: authority, port: "", hasColon: false, bracketed: authority.startsWith("["), unclosed: false, segments: [] };
  const end = authority.indexOf("]");
  const colon = authority.lastIndexOf(":");
  if (p.bracketed && end >= 0) [p.host, p.port] = [authority.slice(0, end + 1), authority.slice(end + 1).replace(/^:/, "")];
  else if (p.bracketed) p.unclosed = true;
  else if (colon >= 0) [p.host, p.port, p.hasColon] = [authority.slice(0, colon), authority.slice(colon + 1), true];
  p.host = p.host.toLowerCase();
  if (pathPart !== "" && pathPart !== "*") p.segments = pathPart.split("/");
  return p;
}

const dotted = (seg) => {
  const l = seg.toLowerCase().replaceAll("%2e", ".");
  return l === "." || l === "..";
};

/** hostpolicy.PatternChecks' tests, by name: true refuses the pattern. */
const PATTERN_TESTS = {
  form: (p) => !p.hasScheme,
  scheme: (p) => p.scheme !== "https" && p.scheme !== "http",
  chars: (p) => [...POLICY.patternForbidden].some((c) => p.rest.includes(c)),
  bracket: (p) => p.unclosed,
  ipv6: (p) => {
    if (!p.bracketed) return false;
    try { new URL(`http://${p.host}/`); } catch { return true; }
    return false;
  },
  emptyPort: (p) => p.hasColon && p.port === "",
  noHost: (p) => p.host.replace(/^[*.]+|[*.]+$/g, "") === "",
  ascii: (p) => /[^\x00-\x7f]/.test(p.host),
  hostGlob: (p) => !p.bracketed && !validGlob(p.host),
  port: (p) => p.port !== "" && p.port !== "*" && !/^[0-9]+$/.test(p.port),
  http: (p) => p.scheme === "http" && !isLoopbackHost(p.host.replace(/^\[|\]$/g, "")),
  pathGlob: (p) => !p.segments.every(validGlob),
  dots: (p) => p.segments.some((seg) => dotted(seg) || /%2f|%5c/i.test(seg)),
};

/** hostpolicy's cutURL: a URL cut into its parts as written, before any URL parser resolves it. */
function cutURL(raw) {
  const [scheme, rest, hasScheme] = cut(raw, "://");
  const [beforeFragment, fragment] = cut(rest, "#");
  const [pre] = cut(beforeFragment, "?");
  const [authority, path] = cut(pre, "/");
  const u = { raw, hasScheme, scheme: scheme.toLowerCase(), pre, fragment, authority, path: path.toLowerCase(), host: authority, port: "", bracketed: authority.startsWith("["), unclosed: false, portJunk: false };
  const end = authority.indexOf("]");
  const colon = authority.lastIndexOf(":");
  if (u.bracketed && end >= 0) {
    const after = authority.slice(end + 1);
    [u.host, u.port, u.portJunk] = [authority.slice(0, end + 1), after.replace(/^:/, ""), after !== "" && !after.startsWith(":")];
  } else if (u.bracketed) u.unclosed = true;
  else if (colon >= 0) [u.host, u.port] = [authority.slice(0, colon), authority.slice(colon + 1)];
  return u;
}

const badEscape = (s) => /%(?![0-9a-fA-F]{2})/.test(s);

/** hostpolicy.PlainChecks' tests, by name: true refuses the URL. */
const PLAIN_TESTS = {
  control: (u) => /[\x00-\x20\x7f]/.test(u.raw),
  scheme: (u) => !u.hasScheme || (u.scheme !== "http" && u.scheme !== "https"),
  escape: (u) => badEscape(u.pre) || badEscape(u.fragment),
  backslash: (u) => u.pre.includes("\\"),
  userinfo: (u) => u.authority.includes("@"),
  bracket: (u) => u.unclosed || u.portJunk,
  ipv6: (u) => u.bracketed && !/^[0-9a-fA-F:.]*$/.test(u.host.slice(1, -1)),
  noHost: (u) => u.host === "",
  hostChars: (u) => !u.bracketed && !/^[A-Za-z0-9._-]*$/.test(u.host),
  port: (u) => !/^[0-9]*$/.test(u.port) || u.port.replace(/^0+/, "").length > 5 || (u.port !== "" && Number(u.port) > 65535),
  ipv4: (u) => !u.bracketed && endsInNumber(u.host) && !DOTTED.test(u.host),
  encodedSlash: (u) => u.path.includes("%2f") || u.path.includes("%5c"),
  dots: (u) => u.path.split("/").some(dotted),
};

// A check jsapi.js names that has no test here, or a test it does not
// name, is a rule that drifted: refuse to run rather than check wrongly.
for (const [tests, checks] of [[PATTERN_TESTS, POLICY.patternChecks], [PLAIN_TESTS, POLICY.plainChecks]]) {
  const names = checks.map((c) => c.name);
  const drift = [...names.filter((n) => !(n in tests)), ...Object.keys(tests).filter((n) => !names.includes(n))];
  if (drift.length) throw new Error(`rules.js: the host policy's checks ${drift.join(", ")} differ from jsapi.js; regenerate it (go generate ./jsapi) or update rules.js`);
}

/** hostpolicy's parsePattern: {scheme, host, port, path} or {problem}. */
function parsePolicyPattern(s) {
  const p = cutPattern(s);
  const bad = POLICY.patternChecks.find((c) => PATTERN_TESTS[c.name](p));
  return bad ? { problem: bad.problem } : { scheme: p.scheme, host: p.host, port: p.port, path: p.segments.length ? p.segments : null };
}

/** hostpolicy's plainProblem: {notURL} or {why, fix} or {}. */
function plainProblem(raw) {
  const bad = POLICY.plainChecks.find((c) => PLAIN_TESTS[c.name](cutURL(raw)));
  if (!bad) return {};
  return bad.form ? POLICY.plainForms[bad.form] : { notURL: true };
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
      if (pt.problem) return `${what}: ${prefix}${fmt(POLICY.forms.entry, list, s, pt.problem)}`;
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
  const F = POLICY.forms;
  const listName = kind === "server" ? "servers" : "issuers";
  for (const pol of policies) {
    const list = pol?.options?.[listName];
    if (!pol || !Array.isArray(list)) continue;
    const what = fmt(kind === "issuer" ? F.issuer : F.server, url);
    const plain = plainProblem(String(url));
    if (plain.why) return F.prefix + (plain.fix ? fmt(F.whyFix, what, plain.why, pol.owner, plain.fix) : fmt(F.why, what, plain.why, pol.owner));
    let u = null;
    if (!plain.notURL) {
      try { u = new URL(url); } catch { /* refused below */ }
    }
    if (!u || (u.protocol !== "http:" && u.protocol !== "https:") || u.hostname === "" || u.username !== "" || u.password !== "") {
      return F.prefix + fmt(F.why, what, F.notURL, pol.owner);
    }
    if (pol.options.allowHttpLoopback === true && isLoopbackHost(u.hostname.replace(/^\[|\]$/g, ""))) continue;
    if (list.some((s) => patternMatches(parsePolicyPattern(s), u))) continue;
    return F.prefix + fmt(F.listed, what, pol.owner, listName, list.length ? list.join(F.sep) : F.nothing);
  }
  return null;
}
