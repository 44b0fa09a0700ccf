// options.js — the page's side of options: the defaults it adds, what
// JSON cannot carry (functions), and the checks of rules.js applied to a
// whole catalog configuration.
import { CLIENT_OPTIONS } from "./jsapi.js";
import { entryRelayProblem, optionsProblem, readEntry, sentence } from "./rules.js";
import { invalid } from "./errors.js";

/** Throws Go's error unless every option of kind "function" in kinds is a function (JSON cannot tell). */
export function checkFunctions(what, options, kinds) {
  if (options === null || typeof options !== "object" || Array.isArray(options)) throw invalid(sentence(`${what}: options must be an object`));
  for (const [k, v] of Object.entries(options)) {
    if (kinds[k] === "function" && typeof v !== "function" && v !== undefined) throw invalid(sentence(`${what}: ${k} must be a function`));
  }
}

/**
 * Throws the invalid_argument error Go gives for catalog options (as JSON
 * sends them), and returns the warnings of the servers it leaves out.
 */
export function catalogProblems(options) {
  const problem = optionsProblem("catalog()", "catalog", options);
  if (problem) throw invalid(sentence(problem));
  const servers = options.servers ?? options.mcpServers ?? {};
  const warnings = [];
  for (const id of Object.keys(servers).sort()) {
    const entry = readEntry(id, servers[id]);
    if (entry.problem) {
      warnings.push(entry.problem);
      continue;
    }
    const what = `catalog: server ${JSON.stringify(id)}`;
    const bad = optionsProblem(what, "client", entry.config) ?? entryRelayProblem(what, entry.config);
    if (bad) throw invalid(sentence(bad));
  }
  return warnings;
}

/**
 * Functions cannot travel as JSON: a function option is sent as true (Go
 * learns that there is one); a function anywhere else as {} (Go says the
 * option has the wrong type).
 */
export const functionsAs = (kinds) => (k, v) => typeof v === "function" ? (kinds[k] === "function" ? true : {}) : v;

/** load()'s page-wide relay ({relay, relayMode}), or null. */
let pageRelay = null;

/** Sets the page-wide relay of load({ relay, relayMode }); throws Go's message for a bad relayMode. */
export function setPageRelay(relay, relayMode) {
  if (relay === undefined && relayMode === undefined) return;
  if (typeof relay !== "string" || relay === "") throw invalid("load(): relay must be the URL of the relay (relayMode needs relay)");
  if (relayMode !== undefined && relayMode !== "fallback" && relayMode !== "always") throw invalid(`load(): relayMode must be "fallback" or "always"`);
  pageRelay = { relay, relayMode };
}

/** A relay URL resolved against the page (a relay mounted on the page's own origin may be given as a path). */
function resolveRelay(relay) {
  try {
    return typeof relay === "string" && relay !== "" ? new URL(relay, globalThis.location?.href).href : relay;
  } catch {
    return relay; // not a URL: Go says so
  }
}

/**
 * A client's options as Go reads them, with the page's defaults. A
 * redirectUri the page gives resolves against the page; the default,
 * oauth/callback.html, against this module (beside it in the package).
 * The page-wide relay of load() fills in a client that names none; a relay
 * given as a path resolves against the page.
 */
export function withDefaults(options, { entry = false } = {}) {
  let redirectUri = options.redirectUri;
  try {
    if (redirectUri === undefined) redirectUri = new URL("oauth/callback.html", import.meta.url).href;
    else if (typeof redirectUri === "string") redirectUri = new URL(redirectUri, globalThis.location?.href).href;
  } catch { /* not a URL: Go says so */ }
  // A catalog's server entry gets the page-wide relay through its catalog
  // (catalogRelay), not in the entry: an entry's own relay must be on the
  // page's origin.
  const relay = options.relay === undefined && pageRelay && !entry
    ? { relay: resolveRelay(pageRelay.relay), relayMode: options.relayMode ?? pageRelay.relayMode }
    : options.relay === undefined ? {} : { relay: resolveRelay(options.relay) };
  return { ...options, ...relay, redirectUri, clientName: options.clientName ?? globalThis.document?.title ?? "" };
}

/** A catalog's relay ({relay, relayMode}) as Go reads it: its own, or else load()'s page-wide one. */
export function catalogRelay(config) {
  if (config.relay !== undefined) return { relay: resolveRelay(config.relay), relayMode: config.relayMode };
  return pageRelay ? { relay: resolveRelay(pageRelay.relay), relayMode: config.relayMode ?? pageRelay.relayMode } : {};
}

/** A client's options with the page's defaults, as JSON decodes them (what rules.js and Go check); entry: a catalog's server entry. */
export const clientOptionsJSON = (options, how) => JSON.parse(JSON.stringify(withDefaults(options, how), functionsAs(CLIENT_OPTIONS)));
