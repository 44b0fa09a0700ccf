// connect.js — the "Explore one server" connection: the URL form, the state
// badge, the sign-in row and the server facts. It owns the explorer's
// client; the tools, resources and prompts panels follow it through the
// `session` events:
//
//   statechange {state}   the client's state changed (or the client did)
//   connected {client}    connected: list what the server offers
//   reset {message}       the session is gone: empty your views
//   ending                the session is about to end: abort your calls
//   toolschanged / resourceschanged / promptschanged
//
// A server that wants a sign-in is an expected step, not a failure: the
// page shows a neutral "Sign in required" notice with the Sign in button,
// and logs it as info. Only real failures show the red error banner.
import { MCPError } from "./mcp.js";
import { $, h, describeError, announce, iconOf, pretty, validServerURL, SIGN_IN_CODES } from "./util.js";
import { addLog } from "./log.js";

export const session = new EventTarget();

let mcp = null;
let client = null;
let connectAbort = null;
let handlers = { elicit: null, sample: null };

const urlInput = $("#server-url");
const connectBtn = $("#connect");
const stateBadge = $("#state");
const stateError = $("#state-error");
const authSlot = $("#auth");
const authNotice = $("#auth-notice");
const authStatus = $("#auth-status");
const authDetail = $("#auth-detail");
const signInBtn = $("#sign-in");
const signOutBtn = $("#sign-out");

// RECONNECT_KEY remembers, per tab, the server to reconnect to on reload.
const RECONNECT_KEY = "mcpwasm-demo:connected";

const STATE_LABELS = {
  idle: "Not connected",
  connecting: "Connecting…",
  needs_auth: "Sign in required",
  authorizing: "Signing in…",
  connected: "Connected",
  declined: "Sign-in declined",
  failed: "Failed",
  closed: "Disconnected",
};

/** What the sign-in row says in each state that involves signing in. */
const AUTH_NOTICES = {
  needs_auth: ["info", "Sign in required", "This server asks you to sign in. Press Sign in: its sign-in page opens in a small window."],
  authorizing: ["info", "Signing in…", "Finish in the sign-in window (Approve or Deny). Closing it cancels."],
  declined: ["warn", "Sign-in declined", "You closed the sign-in window or said no. Press Sign in to try again."],
};

export function currentClient() {
  return client;
}

export function currentState() {
  return client ? client.state : "idle";
}

function emit(type, detail) {
  session.dispatchEvent(new CustomEvent(type, { detail }));
}

/** Shows state (and, for a real failure, the error banner). */
function renderState(state, error) {
  stateBadge.dataset.state = state;
  stateBadge.querySelector(".badge-text").textContent = STATE_LABELS[state] ?? state;
  stateBadge.title = `client.state = "${state}"`;
  const busy = state === "connecting" || state === "authorizing";
  const signIn = error && SIGN_IN_CODES.has(error.code);
  if (error && state === "failed" && !signIn) {
    const { message, code } = describeError(error);
    stateError.replaceChildren(h("span", { text: message }), code && h("code", { class: "code-chip", text: code }));
    stateError.hidden = false;
  } else if (state !== "failed" || signIn) {
    stateError.hidden = true;
    stateError.replaceChildren();
  }
  connectBtn.disabled = !mcp;
  connectBtn.textContent = state === "connected" ? "Disconnect" : busy ? "Cancel" : "Connect";
  connectBtn.classList.toggle("btn-primary", !(state === "connected" || busy));
  connectBtn.classList.toggle("btn-secondary", state === "connected" || busy);
  urlInput.readOnly = state === "connected" || busy;
  renderAuth(state, error);
  emit("statechange", { state });
}

// The sign-in row follows the client state: the notice and Sign in when the
// server wants a sign-in (or the last one was declined), Sign out when
// connected.
function renderAuth(state, error) {
  authSlot.hidden = !client || state === "idle" || state === "closed" || state === "failed" || state === "connecting";
  const notice = AUTH_NOTICES[state];
  authNotice.hidden = !notice;
  if (notice) {
    authNotice.dataset.tone = notice[0];
    authStatus.textContent = notice[1];
    authDetail.textContent = error?.code === "popup_blocked"
      ? "The browser blocked the sign-in window. Allow pop-ups for this page, then press Sign in again."
      : notice[2];
    if (error?.code === "popup_blocked") authNotice.dataset.tone = "warn";
  }
  signInBtn.hidden = !(state === "needs_auth" || state === "declined" || state === "authorizing");
  signInBtn.disabled = state === "authorizing";
  signOutBtn.hidden = state !== "connected";
}

// Sign in must run inside the click: authorize() opens the popup at once.
function signIn() {
  const c = client;
  if (!c) return;
  addLog("auth", "opening the sign-in window");
  c.authorize().then(() => {
    if (client !== c) return;
    addLog("auth", "signed in");
    afterConnect(c);
  }, (err) => {
    if (client !== c) return;
    const expected = SIGN_IN_CODES.has(err.code) || err.code === "aborted";
    addLog("auth", `sign-in: ${describeError(err).message}`, expected ? "warn" : "error");
    if (err.code === "popup_blocked") announce("The browser blocked the sign-in window. Allow pop-ups for this page, then press Sign in again.");
    renderState(c.state, err);
  });
}

async function signOut() {
  const c = client;
  if (!c) return;
  emit("ending");
  try {
    await c.logout();
    addLog("auth", "signed out: the grant was revoked and deleted");
  } catch (err) {
    addLog("auth", `sign-out: ${describeError(err).message}`, "error");
  }
  if (client === c) {
    renderState(c.state);
    emit("reset", { message: "Signed out. Sign in to use this server again." });
  }
}

async function connect() {
  const url = validServerURL(urlInput.value.trim());
  if (!url) {
    renderState("failed", new MCPError("invalid_argument", "Enter an http:// or https:// URL of an MCP endpoint."));
    urlInput.focus();
    return;
  }
  if (client) {
    const old = client;
    client = null;
    old.close().catch(() => {});
  }
  emit("reset", { message: "Connecting…" });
  let c;
  try {
    c = mcp.client(url.href, { clientName: "mcpwasm demo page" });
  } catch (err) {
    renderState("failed", err);
    return;
  }
  client = c;
  if (handlers.elicit) c.onElicitation = handlers.elicit;
  if (handlers.sample) c.onSampling = handlers.sample;
  c.addEventListener("statechange", (e) => {
    if (client !== c) return;
    const { state, error } = e.detail;
    // A sign-in request is a step of connecting, reported as info.
    const failed = state === "failed" && !(error && SIGN_IN_CODES.has(error.code));
    const why = error && !SIGN_IN_CODES.has(error.code) ? `: ${describeError(error).message}` : "";
    addLog("state", `${state}${why}`, failed ? "error" : "info");
    renderState(state, error);
    if (state === "closed" || state === "failed") onDisconnected();
  });
  for (const [type, what] of [["toolschanged", "tools"], ["resourceschanged", "resources"], ["promptschanged", "prompts"]]) {
    c.addEventListener(type, () => {
      if (client !== c) return;
      addLog("list_changed", `${what} changed: refreshing`);
      emit(type);
    });
  }
  c.addEventListener("log", (e) => {
    if (client !== c) return;
    const { level = "info", logger, data } = e.detail ?? {};
    const text = typeof data === "string" ? data : pretty(data);
    addLog(`log:${level}`, logger ? `[${logger}] ${text}` : text, /error|critical|alert|emergency/.test(level) ? "error" : level === "warning" ? "warn" : "info");
  });

  connectAbort = new AbortController();
  renderState("connecting");
  try {
    await c.connect({ signal: connectAbort.signal });
  } catch (err) {
    if (client !== c) return;
    if (err.code === "aborted") {
      addLog("state", "connection attempt cancelled");
      client = null;
      c.close().catch(() => {});
      renderState("idle");
      emit("reset", { message: "Not connected." });
      return;
    }
    if (SIGN_IN_CODES.has(err.code)) {
      addLog("auth", "sign in required: press Sign in");
      renderState(["needs_auth", "declined"].includes(c.state) ? c.state : "needs_auth", err);
      emit("reset", { message: "Sign in to see what this server offers." });
      signInBtn.focus();
      return;
    }
    if (c.state !== "failed") addLog("error", `connect: ${describeError(err).message}`, "error");
    renderState("failed", err);
    emit("reset", { message: "Not connected." });
    return;
  } finally {
    connectAbort = null;
  }
  if (client !== c) return;
  await afterConnect(c);
}

// afterConnect shows what a freshly connected server offers.
async function afterConnect(c) {
  renderState(c.state);
  sessionStorage.setItem(RECONNECT_KEY, c.url);
  const params = new URLSearchParams(location.search);
  if (params.get("server") !== c.url) {
    params.set("server", c.url);
    history.replaceState(null, "", `${location.pathname}?${params}`);
  }
  renderServerInfo(c);
  announce(`Connected to ${c.serverInfo?.title || c.serverInfo?.name || new URL(c.url).host}`);
  emit("connected", { client: c });
}

async function disconnect() {
  const c = client;
  if (!c) return;
  sessionStorage.removeItem(RECONNECT_KEY);
  emit("ending");
  try {
    await c.close();
  } catch (err) {
    addLog("error", `close: ${describeError(err).message}`, "error");
  }
  if (client === c) {
    renderState("closed");
    onDisconnected();
  }
}

function onDisconnected() {
  $("#server-info").hidden = true;
  emit("reset", { message: "Not connected." });
}

function renderServerInfo(c) {
  const info = c.serverInfo ?? {};
  $("#server-name").replaceChildren(iconOf(info.icons) ?? "", info.title && info.title !== info.name ? `${info.title} (${info.name})` : info.name || "unknown");
  $("#server-version").textContent = info.version || "—";
  $("#server-protocol").textContent = c.protocolVersion || "—";
  const caps = Object.keys(c.capabilities ?? {}).filter((k) => k !== "experimental");
  $("#server-caps").textContent = caps.length ? caps.join(", ") : "—";
  const instr = $("#instructions");
  instr.textContent = c.instructions || "";
  instr.hidden = !c.instructions;
  $("#server-info").hidden = false;
}

session.addEventListener("reset", () => { $("#server-info").hidden = true; });

/**
 * Fills the URL field (?server= wins over the dev server's demo server) and
 * shows the idle state; call before the module is loaded.
 */
export function initConnectForm(defaultURL) {
  urlInput.value = new URLSearchParams(location.search).get("server") || defaultURL || "";
  renderState("idle");
  $("#connect-form").addEventListener("submit", (e) => {
    e.preventDefault();
    if (!mcp) return;
    const state = currentState();
    if (state === "connected") disconnect();
    else if (state === "connecting" || state === "authorizing") connectAbort?.abort();
    else connect();
  });
  signInBtn.addEventListener("click", signIn);
  signOutBtn.addEventListener("click", signOut);
}

/**
 * The module is loaded: enables Connect. elicit and sample answer the
 * server's requests. A reload of a tab that was connected reconnects at
 * once (with a stored grant, no popup).
 */
export function startConnect(loaded, { elicit, sample }) {
  mcp = loaded;
  handlers = { elicit, sample };
  renderState("idle");
  const server = new URLSearchParams(location.search).get("server");
  if (server && sessionStorage.getItem(RECONNECT_KEY) === server) connect();
}
