// csp.js — the Content-Security-Policy of an MCP App view, built from the
// domains its resource declares (_meta.ui.csp) and never wider: the
// specification's restrictive default for what is not declared, widened
// only by what the page grants a server's views by name (TRUST). The host
// page checks the declaration with it (to warn about what is dropped) and
// the sandbox proxy builds the policy it puts in front of the view with it,
// so a host that was bypassed still cannot widen the policy.

/** The directives each declared list feeds. */
const FEEDS = Object.freeze({
  connectDomains: ["connect-src"],
  resourceDomains: ["script-src", "style-src", "img-src", "font-src", "media-src"],
  frameDomains: ["frame-src"],
  baseUriDomains: ["base-uri"],
});

/** What a view gets with nothing declared (the specification's default). */
const BASE = Object.freeze({
  "default-src": ["'none'"],
  "script-src": ["'self'", "'unsafe-inline'"],
  "style-src": ["'self'", "'unsafe-inline'"],
  "img-src": ["'self'", "data:"],
  "font-src": ["'self'"],
  "media-src": ["'self'", "data:"],
  "connect-src": ["'none'"],
  "frame-src": ["'none'"],
  "object-src": ["'none'"],
  "base-uri": ["'self'"],
  "form-action": ["'none'"],
});

/**
 * What a page may grant the views of a server it trusts beyond the
 * default (render()'s trust option), by name: each adds sources to
 * directives, and all three together are the reference host's base.
 */
export const TRUST = Object.freeze({
  eval: { what: "evaluate strings as code (eval, new Function)", add: { "script-src": ["'unsafe-eval'"] } },
  wasm: { what: "compile WebAssembly", add: { "script-src": ["'wasm-unsafe-eval'"] } },
  blob: {
    what: "run workers and scripts from blob: and data: URLs and load blob: images, media, fonts and styles",
    add: {
      "script-src": ["blob:", "data:"],
      "worker-src": ["'self'", "blob:", "data:"],
      "style-src": ["blob:"],
      "img-src": ["blob:"],
      "font-src": ["blob:", "data:"],
      "media-src": ["blob:"],
    },
  },
});

/**
 * trustProblem says what is wrong with a trust option (a list of TRUST
 * names), or returns "" when it is one.
 */
export function trustProblem(trust) {
  if (!Array.isArray(trust)) return "must be a list of grants";
  for (const g of trust) {
    if (typeof g !== "string" || !Object.hasOwn(TRUST, g)) return `names ${JSON.stringify(g)}, which is not one of ${Object.keys(TRUST).join(", ")}`;
  }
  return "";
}

const LOOPBACK = new Set(["localhost", "127.0.0.1", "[::1]"]);

/**
 * source turns one declared domain into a CSP source expression, or
 * returns a reason it is refused: an origin (scheme, host, port; no path,
 * query, credentials), https or wss (http and ws on loopback only), a
 * host of letters, digits, dots and dashes with at most a leading "*."
 * (never a bare "*"), so that nothing can add a source, a directive or a
 * policy to the one built.
 */
export function source(domain, refused = []) {
  if (typeof domain !== "string" || domain === "") return { problem: "not a non-empty string" };
  if (/[\s;,'"`<>\\]/.test(domain)) return { problem: "has a space, quote or separator" };
  const m = /^(https?|wss?):\/\/(\*\.)?([a-z0-9.-]+|\[[0-9a-f:.]+\])(:\d{1,5})?\/?$/i.exec(domain);
  if (!m) return { problem: "is not an origin such as https://api.example.com or https://*.example.com" };
  const scheme = m[1].toLowerCase();
  const host = m[3].toLowerCase();
  if (host.startsWith(".") || host.endsWith(".") || host.includes("..")) return { problem: "has an empty host label" };
  if ((scheme === "http" || scheme === "ws") && (m[2] || !LOOPBACK.has(host))) {
    return { problem: `uses ${scheme}:, allowed for loopback hosts only; use ${scheme === "http" ? "https" : "wss"}:` };
  }
  if (m[2] && !host.includes(".")) return { problem: "is a wildcard over a whole top-level domain" };
  const src = `${scheme}://${m[2] ?? ""}${host}${m[4] ?? ""}`;
  // The page's and the sandbox's own origins: a view that could frame the
  // proxy could give a view of its own any policy.
  if (refused.includes(src.replace(/^ws/, "http"))) return { problem: "is the page's or the sandbox's own origin" };
  return { source: src };
}

/**
 * policy builds the view's policy from a declaration ({connectDomains,
 * resourceDomains, frameDomains, baseUriDomains}, each a list of
 * origins), the origins never allowed (the page's and the sandbox's) and
 * the grants the page gives the server's views (TRUST names; any other
 * name adds nothing). Returns {policy, kept, dropped}: the policy string,
 * the declaration as kept, and the declared entries refused, each {list,
 * domain, problem}.
 */
export function policy(csp, refused = [], trust = []) {
  const directives = Object.fromEntries(Object.entries(BASE).map(([k, v]) => [k, [...v]]));
  const add = (d, src) => {
    const sources = (directives[d] ??= []);
    if (sources[0] === "'none'") sources.length = 0;
    if (!sources.includes(src)) sources.push(src);
  };
  for (const g of Array.isArray(trust) ? trust : []) {
    if (!Object.hasOwn(TRUST, g)) continue;
    for (const [d, sources] of Object.entries(TRUST[g].add)) for (const src of sources) add(d, src);
  }
  const dropped = [];
  const kept = {};
  const declared = csp !== null && typeof csp === "object" && !Array.isArray(csp) ? csp : {};
  for (const [list, feeds] of Object.entries(FEEDS)) {
    const entries = declared[list];
    if (entries === undefined) continue;
    if (!Array.isArray(entries)) {
      dropped.push({ list, domain: String(entries), problem: "is not a list" });
      continue;
    }
    for (const domain of entries) {
      const r = source(domain, refused);
      if (r.problem) {
        dropped.push({ list, domain: String(domain), problem: r.problem });
        continue;
      }
      (kept[list] ??= []).push(r.source);
      for (const d of feeds) add(d, r.source);
    }
  }
  return { policy: Object.entries(directives).map(([k, v]) => `${k} ${v.join(" ")}`).join("; "), kept, dropped };
}

/** The iframe `allow` features of a view's declared permissions. */
const FEATURES = Object.freeze({ camera: "camera", microphone: "microphone", geolocation: "geolocation", clipboardWrite: "clipboard-write" });

/** allow maps declared permissions ({camera: {}, …}) to an iframe's allow attribute. */
export function allow(permissions) {
  if (permissions === null || typeof permissions !== "object" || Array.isArray(permissions)) return "";
  return Object.keys(FEATURES).filter((k) => permissions[k] != null && typeof permissions[k] === "object")
    .map((k) => `${FEATURES[k]} *`).join("; ");
}
