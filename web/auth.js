// auth.js — the browser half of the login (used by mcp.js): the login
// popup, the receiver of oauth/callback.html's relays, cross-tab locks and
// grant notices. The OAuth logic itself (PKCE, state, registration, token
// exchange) runs in Go; this file only opens windows and carries messages.
import { severWindowMs } from "./testhooks.js";

/** BroadcastChannel the callback page relays on (must match oauth/callback.js). */
export const CALLBACK_CHANNEL = "mcpwasm-oauth";
/** BroadcastChannel on which tabs tell each other about grants and logouts. */
export const GRANTS_CHANNEL = "mcpwasm-grants";
/** sessionStorage keys of the full-page redirect mode (shared with oauth/callback.js). */
export const RETURN_KEY = "mcpwasm:returnTo";
export const CALLBACK_KEY = "mcpwasm:callback";

const POLL_MS = 250;
// A popup that looks closed this soon after being sent to the authorization
// server was most likely severed by a Cross-Origin-Opener-Policy on the
// server's pages, not closed by a person: keep waiting for the
// BroadcastChannel relay, for severedTimeoutMs (then it counts as closed).
// A test may shorten it (testhooks.js).
const SEVER_WINDOW_MS = 3000;
/** Default of the severedPopupTimeoutMs client option. */
export const SEVERED_TIMEOUT_MS = 120000;
// After a real close, results still in flight get this long to arrive.
const CLOSE_GRACE_MS = 1500;
// A window whose document at the redirect URI has loaded gets this long
// for the callback module there to send its result; after that, no
// callback module ran there (the app's server answered with another page,
// often the app itself by a single-page app's fallback route).
const UNHANDLED_GRACE_MS = 3000;

/**
 * The login window of one authorization attempt. Open it synchronously in
 * the user gesture (open()), navigate it once the authorization URL is known
 * (navigate()), close it when the flow ends (close()).
 */
export class LoginWindow {
  #win = null;
  #timer = 0;
  #navigatedAt = 0;
  #severed = false;
  #relayed = false;
  #closedAt = 0;
  #onClosed;
  #onUnhandled;
  #redirect = null; // the redirect URI without query or fragment
  #landedAt = 0; // when the window's document at the redirect URI had loaded

  #severedTimeoutMs;

  /**
   * onClosed() is called once when a person closed the window before the
   * flow ended; for a window hidden by COOP, when no result came within
   * severedTimeoutMs. onUnhandled(url) is called once when the window's
   * document at the redirect URI (url, without query) loaded and no
   * result came from it within UNHANDLED_GRACE_MS.
   */
  constructor(onClosed, severedTimeoutMs = SEVERED_TIMEOUT_MS, onUnhandled = () => {}) {
    this.#onClosed = onClosed;
    this.#severedTimeoutMs = severedTimeoutMs;
    this.#onUnhandled = onUnhandled;
  }

  /** Opens a blank same-origin popup; false when the browser blocked it. */
  open(name) {
    const w = 520, h = 680;
    const left = Math.max(0, (screen.availWidth - w) / 2), top = Math.max(0, (screen.availHeight - h) / 2);
    let win = null;
    try {
      win = window.open("about:blank", name, `popup,width=${w},height=${h},left=${left},top=${top}`);
    } catch { /* blocked */ }
    if (!win || win.closed) return false;
    try {
      win.document.title = "Signing in…";
      win.document.body.textContent = "Connecting to the sign-in page…";
      win.document.body.style.font = "16px system-ui, sans-serif";
      win.document.body.style.padding = "2rem";
    } catch { /* not same-origin any more */ }
    this.#win = win;
    return true;
  }

  /** The window, for checking message sources (null once severed or closed). */
  get window() { return this.#severed ? null : this.#win; }

  get isOpen() { return !!this.#win; }

  /**
   * The window sent its result by postMessage, so it is not severed: when
   * it closes now (the callback page closes itself), that is the end of
   * this sign-in attempt, not a Cross-Origin-Opener-Policy at work.
   */
  relayed() { this.#relayed = true; }

  /** Brings the window to the front (a second click on Sign in). */
  focus() {
    try { this.#win?.focus(); } catch { /* severed */ }
  }

  /** Sends the popup to the authorization URL and starts watching it. */
  navigate(url) {
    if (!this.#win) throw new Error("no login window");
    this.#redirect = null;
    this.#landedAt = 0;
    try {
      const r = new URL(new URL(url).searchParams.get("redirect_uri") ?? "");
      this.#redirect = r.origin + r.pathname;
    } catch { /* no redirect URI to watch for */ }
    if (this.#win.closed) {
      // Closed while it still said "Connecting…": a person's close.
      this.#navigatedAt = -Infinity;
    } else {
      this.#win.location.href = url;
      this.#navigatedAt = Date.now();
    }
    clearInterval(this.#timer);
    this.#timer = setInterval(() => this.#poll(), POLL_MS);
  }

  #poll() {
    if (!this.#win || (!this.#severed && !this.#win.closed)) {
      this.#closedAt = 0;
      // Until the server's page commits, the popup is still our readable
      // about:blank: a slow server's response time must not count.
      try {
        if (this.#win?.location.href === "about:blank") this.#navigatedAt = Date.now();
      } catch { /* on the server's page: cross-origin */ }
      this.#watchLanding();
      return;
    }
    const now = Date.now();
    if (!this.#closedAt) {
      this.#closedAt = now;
      if (now - this.#navigatedAt < severWindowMs(SEVER_WINDOW_MS)) {
        // COOP severed the opener: the window most likely lives on and only
        // the relay will tell; a person may also have closed it at once.
        this.#severed = true;
        console.info(`mcp: the sign-in window's page cut its link to this page (Cross-Origin-Opener-Policy); waiting up to ${this.#severedTimeoutMs / 1000} s for its result`);
      }
    }
    if (now - this.#closedAt >= (this.#severed ? this.#severedTimeoutMs : CLOSE_GRACE_MS)) {
      clearInterval(this.#timer);
      this.#win = null;
      this.#onClosed();
    }
  }

  /**
   * Once the window is back on this origin at the redirect URI and its
   * document has loaded, the callback module there has UNHANDLED_GRACE_MS
   * to run (it marks its window) or send its result (relayed()); else no
   * such module ran there, and waiting longer would only end in
   * authTimeoutMs.
   */
  #watchLanding() {
    if (!this.#win || this.#relayed || !this.#redirect) return;
    try {
      if (this.#win.__mcpwasmCallback === true) return; // oauth/callback.js ran there: it speaks for itself
    } catch { /* cross-origin */ }
    if (!this.#landedAt) {
      let here = null;
      try {
        const loc = this.#win.location;
        if (loc.origin + loc.pathname === this.#redirect && this.#win.document.readyState === "complete") here = loc;
      } catch { /* at the authorization server: cross-origin until it sends the window back */ }
      if (here) this.#landedAt = Date.now();
      return;
    }
    if (Date.now() - this.#landedAt >= UNHANDLED_GRACE_MS) {
      clearInterval(this.#timer);
      this.#onUnhandled(this.#redirect);
    }
  }

  /** Stops watching and closes the window (if this page can). */
  close() {
    clearInterval(this.#timer);
    try { this.#win?.close(); } catch { /* severed */ }
    this.#win = null;
  }
}

/**
 * Receives the callback page's relays (postMessage from popups this page
 * opened, and the BroadcastChannel) and hands each URL to deliver(url),
 * which routes it by state to the waiting flow. Anything else is ignored and
 * logged, never fatal.
 */
export class CallbackReceiver {
  #deliver;
  #windows = new Set();
  #channel = null;
  #seen = new Set(); // callback URLs already handed over: the popup's postMessage and the BroadcastChannel relay the same one

  constructor(deliver) {
    this.#deliver = deliver;
    window.addEventListener("message", (ev) => this.#onMessage(ev));
    if ("BroadcastChannel" in globalThis) {
      this.#channel = new BroadcastChannel(CALLBACK_CHANNEL);
      this.#channel.addEventListener("message", (ev) => this.#relay(ev.data, "BroadcastChannel"));
    }
  }

  /** Registers a login window whose messages are accepted. */
  watch(loginWindow) {
    this.#windows.add(loginWindow);
    return () => this.#windows.delete(loginWindow);
  }

  #onMessage(ev) {
    if (!ev.data || ev.data.type !== "mcpwasm:oauth-callback") return; // not ours
    if (ev.origin !== location.origin) {
      console.warn(`mcp: ignored a sign-in message from another origin (${ev.origin})`);
      return;
    }
    // While a popup's opener link exists, only that popup may speak.
    const from = [...this.#windows].find((w) => w.window && w.window === ev.source);
    if (!from) {
      console.warn("mcp: ignored a sign-in message from a window this page did not open");
      return;
    }
    from.relayed();
    this.#relay(ev.data, "postMessage");
  }

  async #relay(data, via) {
    if (!data || data.type !== "mcpwasm:oauth-callback" || typeof data.url !== "string") return;
    let url;
    try {
      url = new URL(data.url);
    } catch {
      return;
    }
    if (url.origin !== location.origin) {
      console.warn("mcp: ignored a sign-in result for another origin");
      return;
    }
    const state = url.searchParams.get("state");
    for (const w of this.#windows) if (state && w.state === state) w.relayed();
    if (this.#seen.has(url.href)) return;
    this.#seen.add(url.href);
    if (this.#seen.size > 64) this.#seen.delete(this.#seen.values().next().value);
    try {
      await this.#deliver(url.href);
    } catch (e) {
      // Unknown, expired or replayed state: not for this page (other tabs
      // hear the BroadcastChannel too), or a duplicate of a relay already taken.
      if (via === "postMessage") console.warn(`mcp: ignored a sign-in result: ${e.message}`);
    }
  }
}

/**
 * Takes the lock name: a Web Lock, held across this origin's tabs; without
 * Web Locks (an insecure context), a lock held within this runtime only.
 * Resolves to the function that releases it.
 */
export function acquireLock(name) {
  if (!globalThis.navigator?.locks) return localLock(name);
  return new Promise((resolve, reject) => {
    navigator.locks.request(name, () => new Promise((release) => resolve(release))).catch(reject);
  });
}

// The tail of each local lock's queue: the promise that settles when its
// last holder releases it.
const localTails = new Map();

function localLock(name) {
  const before = localTails.get(name) ?? Promise.resolve();
  let release;
  const held = new Promise((r) => { release = r; });
  const tail = before.then(() => held);
  localTails.set(name, tail);
  tail.then(() => { if (localTails.get(name) === tail) localTails.delete(name); });
  let done = false;
  return before.then(() => () => {
    if (!done) { done = true; release(); }
  });
}
