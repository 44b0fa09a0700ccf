// host.js — the host object the Go runtime calls back (HOSTS in jsapi.js),
// on the main thread or across the worker's port: a callback for a client,
// catalog, agent or run goes by its target ("client:<id>", …) to the page's
// object; the rest are page-wide. Also the servers' hints Go keeps in the
// page's storage.
import { HOSTS } from "./jsapi.js";
import { acquireLock } from "./auth.js";
import { MCPError, invalid } from "./errors.js";

const HINTS_KEY = "mcpwasm:hints";

/**
 * What each server negotiated (transport, protocol version; no secrets),
 * so that a reload skips the probes: "{}" when none are stored.
 */
export function readHints() {
  try {
    return localStorage.getItem(HINTS_KEY) ?? "{}";
  } catch {
    return "{}"; // storage disabled: probe every time
  }
}

/** Forgets the hints (mcp.clearStorage()). */
export function clearHints() {
  try { localStorage.removeItem(HINTS_KEY); } catch { /* storage off */ }
}

/** The page's side of Go's callbacks: its targets and page-wide state. */
export class Host {
  targets = new Map(); // "client:<id>" → Client, "catalog:<id>" → Catalog, …
  #trace;
  /** trace: the crossing tracer of testhooks.js, or null. */
  constructor(trace) { this.#trace = trace; }
  /** The last id the page chose (for a client, catalog, agent or run). */
  lastId = 0;
  grants = null; // the BroadcastChannel of grant notices (main thread only)

  #to(target) {
    const c = this.targets.get(target);
    if (!c) throw new MCPError("closed", `${target.split(":")[0]} is closed`);
    return c;
  }

  /** The callbacks, one per name of HOSTS, for boot.js or remote.js to hand to Go. */
  callbacks() {
    const cb = {
      event: (target, type, json) => this.targets.get(target)?._event(type, json === undefined ? undefined : JSON.parse(json)),
      accessToken: async (target) => {
        const token = await this.#to(target)._options.accessToken();
        if (typeof token !== "string") throw invalid("accessToken() must resolve to a string");
        return token;
      },
      identityAssertion: async (target) => {
        const token = await this.#to(target)._options.identityAssertion();
        if (typeof token !== "string") throw invalid("identityAssertion() must resolve to a string (the user's ID token)");
        return token;
      },
      elicit: (target, json) => this.#to(target)._handle("onElicitation", json),
      sample: (target, json) => this.#to(target)._handle("onSampling", json),
      openAuth: async (target, url) => this.#to(target)._openAuth(url),
      authDismissed: (target) => this.#to(target)._authDismissed(),
      closeAuth: (target, state) => this.targets.get(target)?._closeAuth(state),
      lock: acquireLock,
      announce: (json) => this.grants?.postMessage(JSON.parse(json)),
      saveHints: (json) => { try { localStorage.setItem(HINTS_KEY, json); } catch { /* storage off */ } },
      approve: (target, json) => this.#to(target)._approve(JSON.parse(json)),
      model: (target, json) => this.#to(target)._model(JSON.parse(json)),
      summarize: (target, json) => this.#to(target)._summarize(JSON.parse(json)),
      catalogElicit: (target, json, context) => this.#to(target)._elicit(JSON.parse(json), JSON.parse(context)),
      webmcpTools: (target) => this.#to(target)._webmcpTools(),
      webmcpCall: (target, name, json) => this.#to(target)._webmcpCall(name, JSON.parse(json)),
      viewTools: (target, server) => this.#to(target)._viewServerTools(server),
      viewCall: (target, server, name, json) => this.#to(target)._viewServerCall(server, name, JSON.parse(json)),
    };
    for (const name of HOSTS) {
      if (typeof cb[name] !== "function") throw new Error(`host.js: host callback ${name} is missing`);
      if (this.#trace) {
        const fn = cb[name];
        cb[name] = (...args) => { this.#trace("go→js", name === "event" ? `event:${args[1]}` : name); return fn(...args); };
      }
    }
    return cb;
  }
}
