// app.js — the mcpwasm demo page: connect to an MCP server, browse and call
// its tools, read resources, get prompts, and answer the server's
// elicitation and sampling requests, all through web/mcp.js.
//
// Rules this file keeps: no framework, no inline script or style (the page
// runs under a strict CSP), and server data only ever reaches the DOM as
// text (textContent, attribute values), never as HTML.
import { load, MCPError } from "./mcp.js";
import { buildFields } from "./fields.js";

const DEFAULT_SERVER = "http://127.0.0.1:8081/mcp";
const LOG_LIMIT = 300;

// ---------------------------------------------------------------- helpers

const $ = (sel) => document.querySelector(sel);

/** Creates an element; attrs set properties for class/text/dataset/on*, attributes otherwise. */
function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === null || v === false) continue;
    if (k === "class") el.className = v;
    else if (k === "text") el.textContent = v;
    else if (k === "dataset") Object.assign(el.dataset, v);
    else if (k.startsWith("on")) el.addEventListener(k.slice(2), v);
    else el.setAttribute(k, v === true ? "" : String(v));
  }
  for (const c of children.flat()) {
    if (c === undefined || c === null || c === false) continue;
    el.append(c instanceof Node ? c : String(c));
  }
  return el;
}

function fmtBytes(n) {
  if (!Number.isFinite(n) || n <= 0) return "0 B";
  const units = ["B", "KB", "MB", "GB"];
  const i = Math.min(units.length - 1, Math.floor(Math.log(n) / Math.log(1024)));
  return `${(n / 1024 ** i).toFixed(i === 0 ? 0 : 1)} ${units[i]}`;
}

function fmtMs(ms) {
  return ms < 1000 ? `${Math.round(ms)} ms` : `${(ms / 1000).toFixed(2)} s`;
}

function pretty(v) {
  try {
    return JSON.stringify(v, null, 2);
  } catch {
    return String(v);
  }
}

/** "message (code, HTTP 404)" for an MCPError or anything thrown. */
function describeError(err) {
  if (!err) return { message: "Unknown error", code: "" };
  const code = err.code ? String(err.code) : "";
  const status = err.status ? `status ${err.status}` : "";
  return { message: err.message || String(err), code: [code, status].filter(Boolean).join(" · ") };
}

function announce(text) {
  const a = $("#announcer");
  a.textContent = "";
  // A fresh text node after a tick makes screen readers repeat equal messages.
  setTimeout(() => { a.textContent = text; }, 30);
}

function errorBox(title, err) {
  const { message, code } = describeError(err);
  return h("div", { class: "error-box", role: "alert" },
    h("strong", { text: title }),
    h("p", { class: "error-message", text: message }),
    code && h("p", { class: "error-code" }, "code: ", h("code", { text: code })));
}

// ---------------------------------------------------------------- event log

const logList = $("#log");

function addLog(kind, text, level = "info") {
  const stick = logList.scrollTop + logList.clientHeight >= logList.scrollHeight - 8;
  const now = new Date();
  const time = now.toLocaleTimeString([], { hour12: false });
  logList.append(h("li", { class: `log-entry log-${level}`, dataset: { kind } },
    h("time", { datetime: now.toISOString(), text: time }),
    h("span", { class: "log-kind", text: kind }),
    h("span", { class: "log-text", text })));
  while (logList.children.length > LOG_LIMIT) logList.firstElementChild.remove();
  if (stick) logList.scrollTop = logList.scrollHeight;
}

$("#log-clear").addEventListener("click", () => logList.replaceChildren());

// The page runs under a strict CSP (see index.html): report anything it blocks.
document.addEventListener("securitypolicyviolation", (e) => {
  document.body.dataset.cspViolations = String(Number(document.body.dataset.cspViolations || 0) + 1);
  addLog("csp", `blocked by ${e.effectiveDirective}: ${e.blockedURI || "inline"}`, "error");
});

// ---------------------------------------------------------------- module loading

let mcp = null;

const loadBox = $("#load-progress");
const loadBar = $("#load-bar");
const loadText = $("#load-text");
const loadRetry = $("#load-retry");

async function loadModule() {
  loadBox.dataset.state = "loading";
  loadRetry.hidden = true;
  loadBar.removeAttribute("value");
  loadText.textContent = "Downloading the MCP client…";
  let last = { loaded: 0, total: 0 };
  let frame = 0;
  const paint = () => {
    frame = 0;
    const { loaded, total } = last;
    if (total > 0) {
      loadBar.max = total;
      loadBar.value = Math.min(loaded, total);
      const pct = Math.floor((loaded / total) * 100);
      loadText.textContent = `Downloading the MCP client… ${fmtBytes(loaded)} of ${fmtBytes(total)} (${pct}%)`;
    } else {
      loadBar.removeAttribute("value");
      loadText.textContent = `Downloading the MCP client… ${fmtBytes(loaded)}`;
    }
  };
  const started = performance.now();
  try {
    mcp = await load({
      onProgress: (loaded, total) => {
        last = { loaded, total };
        if (!frame) frame = requestAnimationFrame(paint);
      },
    });
  } catch (err) {
    const { message, code } = describeError(err);
    loadBox.dataset.state = "error";
    loadBar.max = 1;
    loadBar.value = 0;
    loadText.textContent = `Could not load the MCP client: ${message}${code ? ` (${code})` : ""}`;
    loadRetry.hidden = false;
    addLog("load", `module failed to load: ${message}`, "error");
    return;
  }
  if (frame) cancelAnimationFrame(frame);
  loadBar.max = 1;
  loadBar.value = 1;
  loadBox.dataset.state = "done";
  const size = last.loaded ? `${fmtBytes(last.loaded)}, ` : "";
  loadText.textContent = `MCP client ready (${size}${fmtMs(performance.now() - started)})`;
  $("#version").textContent = mcp.version ? `(${mcp.version})` : "";
  document.body.dataset.ready = "true";
  addLog("load", `module ${mcp.version || ""} ready`.replace("  ", " "));
  renderState("idle");
  // A reload of a tab that was connected reconnects at once: with a stored
  // grant that needs no popup.
  const server = new URLSearchParams(location.search).get("server");
  if (server && sessionStorage.getItem(RECONNECT_KEY) === server) connect();
}

loadRetry.addEventListener("click", loadModule);

// ---------------------------------------------------------------- connection

let client = null;
let connectAbort = null;

const urlInput = $("#server-url");
const connectBtn = $("#connect");
const stateBadge = $("#state");
const stateError = $("#state-error");

const STATE_LABELS = {
  idle: "Not connected",
  connecting: "Connecting…",
  needs_auth: "Sign-in needed",
  authorizing: "Signing in…",
  connected: "Connected",
  declined: "Sign-in declined",
  failed: "Failed",
  closed: "Disconnected",
};

function currentState() {
  return client ? client.state : "idle";
}

function renderState(state, error) {
  stateBadge.dataset.state = state;
  stateBadge.querySelector(".badge-text").textContent = STATE_LABELS[state] ?? state;
  stateBadge.title = `client.state = "${state}"`;
  const busy = state === "connecting" || state === "authorizing";
  if (error && (state === "failed" || state === "declined" || state === "needs_auth")) {
    const { message, code } = describeError(error);
    stateError.replaceChildren(h("span", { text: message }), code && h("code", { class: "code-chip", text: code }));
    stateError.hidden = false;
  } else if (state !== "failed") {
    stateError.hidden = true;
    stateError.replaceChildren();
  }
  connectBtn.disabled = !mcp;
  connectBtn.textContent = state === "connected" ? "Disconnect" : busy ? "Cancel" : "Connect";
  connectBtn.classList.toggle("btn-primary", !(state === "connected" || busy));
  connectBtn.classList.toggle("btn-secondary", state === "connected" || busy);
  urlInput.readOnly = state === "connected" || busy;
  $("#tools-refresh").disabled = state !== "connected";
  renderAuth(state);
  updateCallButtons();
}

// ---------------------------------------------------------------- sign-in

const authSlot = $("#auth");
const authStatus = $("#auth-status");
const signInBtn = $("#sign-in");
const signOutBtn = $("#sign-out");

const AUTH_LABELS = {
  needs_auth: "Sign-in needed",
  authorizing: "Signing in…",
  declined: "Sign-in declined",
};

// The sign-in controls follow the client state: Sign in when the server
// wants a login (or the last one was declined), Sign out when connected.
function renderAuth(state) {
  authSlot.hidden = !client || state === "idle" || state === "closed";
  authStatus.textContent = AUTH_LABELS[state] ?? "";
  signInBtn.hidden = !(state === "needs_auth" || state === "declined");
  signInBtn.disabled = state === "authorizing";
  signOutBtn.hidden = state !== "connected";
}

// Sign in must run inside the click: authorize() opens the popup at once.
signInBtn.addEventListener("click", () => {
  const c = client;
  if (!c) return;
  addLog("auth", "opening the sign-in window");
  c.authorize().then(() => {
    if (client !== c) return;
    addLog("auth", "signed in");
    afterConnect(c);
  }, (err) => {
    if (client !== c) return;
    addLog("auth", `sign-in: ${describeError(err).message}`, err.code === "declined" ? "warn" : "error");
    if (err.code === "popup_blocked") announce("The browser blocked the sign-in window. Allow pop-ups for this page, then press Sign in again.");
    renderState(c.state, err);
  });
});

signOutBtn.addEventListener("click", async () => {
  const c = client;
  if (!c) return;
  callController?.abort();
  try {
    await c.logout();
    addLog("auth", "signed out: the grant was revoked and deleted");
  } catch (err) {
    addLog("auth", `sign-out: ${describeError(err).message}`, "error");
  }
  if (client === c) {
    renderState(c.state);
    resetServerViews("Signed out. Sign in to use this server again.");
  }
});

$("#connect-form").addEventListener("submit", (e) => {
  e.preventDefault();
  if (!mcp) return;
  const state = currentState();
  if (state === "connected") disconnect();
  else if (state === "connecting" || state === "authorizing") connectAbort?.abort();
  else connect();
});

function validServerURL(value) {
  try {
    const u = new URL(value);
    return u.protocol === "http:" || u.protocol === "https:" ? u : null;
  } catch {
    return null;
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
  resetServerViews("Connecting…");
  let c;
  try {
    c = mcp.client(url.href, { clientName: "mcpwasm demo page" });
  } catch (err) {
    renderState("failed", err);
    return;
  }
  client = c;
  c.onElicitation = (params) => queued(() => elicit(params));
  c.onSampling = (params) => queued(() => sample(params));
  c.addEventListener("statechange", (e) => {
    if (client !== c) return;
    const { state, error } = e.detail;
    addLog("state", error ? `${state}: ${describeError(error).message}` : state, state === "failed" ? "error" : "info");
    renderState(state, error);
    if (state === "closed" || state === "failed") onDisconnected();
  });
  c.addEventListener("toolschanged", () => {
    if (client !== c) return;
    addLog("list_changed", "tools changed: refreshing the tool list");
    refreshTools();
  });
  c.addEventListener("resourceschanged", () => {
    if (client !== c) return;
    addLog("list_changed", "resources changed: refreshing");
    refreshResources();
  });
  c.addEventListener("promptschanged", () => {
    if (client !== c) return;
    addLog("list_changed", "prompts changed: refreshing");
    refreshPrompts();
  });
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
      resetServerViews("Not connected.");
      return;
    }
    if (c.state !== "failed") addLog("error", `connect: ${describeError(err).message}`, "error");
    renderState(["needs_auth", "declined"].includes(c.state) ? c.state : "failed", err);
    resetServerViews("Not connected.");
    return;
  } finally {
    connectAbort = null;
  }
  if (client !== c) return;
  await afterConnect(c);
}

// RECONNECT_KEY remembers, per tab, the server to reconnect to on reload.
const RECONNECT_KEY = "mcpwasm-demo:connected";

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
  await Promise.all([refreshTools(), refreshResources(), refreshPrompts()]);
}

async function disconnect() {
  const c = client;
  if (!c) return;
  sessionStorage.removeItem(RECONNECT_KEY);
  callController?.abort();
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
  resetServerViews("Not connected.");
  // Requests of a session that ended cannot be answered any more.
  for (const d of document.querySelectorAll("dialog[open]")) d.close();
}

function renderServerInfo(c) {
  const info = c.serverInfo ?? {};
  $("#server-name").textContent = info.title && info.title !== info.name ? `${info.title} (${info.name})` : info.name || "unknown";
  $("#server-version").textContent = info.version || "—";
  $("#server-protocol").textContent = c.protocolVersion || "—";
  const caps = Object.keys(c.capabilities ?? {}).filter((k) => k !== "experimental");
  $("#server-caps").textContent = caps.length ? caps.join(", ") : "—";
  const instr = $("#instructions");
  instr.textContent = c.instructions || "";
  instr.hidden = !c.instructions;
  $("#server-info").hidden = false;
}

/** Empties everything that belongs to a server session. */
function resetServerViews(message) {
  $("#server-info").hidden = true;
  tools = [];
  renderTools(message);
  for (const id of ["#resources", "#resource-templates", "#prompts"]) {
    $(id).replaceChildren(h("li", { class: "empty", text: message }));
  }
  $("#resource-view").hidden = true;
  $("#prompt-form").hidden = true;
  $("#prompt-view").hidden = true;
}

// ---------------------------------------------------------------- tools

let tools = [];
let selectedTool = null;
let toolFields = null;
let callController = null;

const toolList = $("#tools");

async function refreshTools() {
  const c = client;
  if (!c || c.state !== "connected") return;
  if (c.capabilities && !c.capabilities.tools) {
    tools = [];
    renderTools("This server offers no tools.");
    return;
  }
  try {
    const list = await c.listTools();
    if (client !== c) return;
    tools = list;
    renderTools("This server offers no tools.");
  } catch (err) {
    if (client !== c) return;
    addLog("error", `tools/list: ${describeError(err).message}`, "error");
    toolList.replaceChildren(h("li", { class: "empty error-text", text: `Could not list tools: ${describeError(err).message}` }));
  }
}

$("#tools-refresh").addEventListener("click", refreshTools);

function toolLabel(t) {
  return t.title || t.annotations?.title || t.name;
}

function renderTools(emptyMessage) {
  $("#tools-count").textContent = tools.length ? String(tools.length) : "";
  if (!tools.length) {
    toolList.replaceChildren(h("li", { class: "empty", text: emptyMessage }));
  } else {
    const focusedName = document.activeElement?.dataset?.tool;
    toolList.replaceChildren(...tools.map((t) => {
      const label = toolLabel(t);
      const btn = h("button", {
        type: "button",
        class: "tool",
        dataset: { tool: t.name },
        "aria-current": selectedTool?.name === t.name ? "true" : undefined,
        onclick: () => selectTool(t.name),
      },
      h("span", { class: "tool-title" }, h("span", { text: label }), label !== t.name && h("code", { class: "tool-code", text: t.name })),
      t.description && h("span", { class: "tool-desc", text: t.description }));
      return h("li", {}, btn);
    }));
    if (focusedName) toolButton(focusedName)?.focus();
  }
  if (selectedTool) {
    const fresh = tools.find((t) => t.name === selectedTool.name);
    if (!fresh) {
      const gone = selectedTool.name;
      clearToolDetail();
      if (client?.state === "connected") {
        $("#result").replaceChildren(h("p", { class: "muted", text: `The tool "${gone}" is no longer offered by the server.` }));
      }
    } else {
      selectedTool = fresh;
    }
  }
  rovingTabindex();
}

function toolButton(name) {
  return [...toolList.querySelectorAll("button[data-tool]")].find((b) => b.dataset.tool === name);
}

/** One tab stop for the list: the selected tool, else the first; arrows move within. */
function rovingTabindex(focusTarget) {
  const buttons = [...toolList.querySelectorAll("button[data-tool]")];
  const current = focusTarget ?? buttons.find((b) => b.getAttribute("aria-current") === "true") ?? buttons[0];
  for (const b of buttons) b.tabIndex = b === current ? 0 : -1;
}

toolList.addEventListener("keydown", (e) => {
  const buttons = [...toolList.querySelectorAll("button[data-tool]")];
  const i = buttons.indexOf(document.activeElement);
  if (i < 0) return;
  let next = null;
  if (e.key === "ArrowDown" || e.key === "ArrowRight") next = buttons[(i + 1) % buttons.length];
  else if (e.key === "ArrowUp" || e.key === "ArrowLeft") next = buttons[(i - 1 + buttons.length) % buttons.length];
  else if (e.key === "Home") next = buttons[0];
  else if (e.key === "End") next = buttons[buttons.length - 1];
  if (!next) return;
  e.preventDefault();
  rovingTabindex(next);
  next.focus();
});

function clearToolDetail() {
  selectedTool = null;
  toolFields = null;
  $("#tool-detail").hidden = true;
  $("#tool-empty").hidden = false;
  for (const b of toolList.querySelectorAll("button[data-tool]")) b.removeAttribute("aria-current");
}

const ANNOTATION_CHIPS = [
  ["readOnlyHint", true, "read-only", "ok"],
  ["destructiveHint", true, "destructive", "danger"],
  ["idempotentHint", true, "idempotent", ""],
  ["openWorldHint", true, "open world", ""],
];

function selectTool(name) {
  const tool = tools.find((t) => t.name === name);
  if (!tool) return;
  if (callController && selectedTool?.name !== name) callController.abort();
  selectedTool = tool;
  for (const b of toolList.querySelectorAll("button[data-tool]")) {
    if (b.dataset.tool === name) b.setAttribute("aria-current", "true");
    else b.removeAttribute("aria-current");
  }
  rovingTabindex();
  $("#tool-empty").hidden = true;
  $("#tool-detail").hidden = false;
  $("#tool-name").textContent = toolLabel(tool);
  $("#tool-id").textContent = tool.name;
  $("#tool-id").hidden = toolLabel(tool) === tool.name;
  $("#tool-description").textContent = tool.description || "";
  $("#tool-description").hidden = !tool.description;
  const a = tool.annotations ?? {};
  $("#tool-annotations").replaceChildren(...ANNOTATION_CHIPS
    .filter(([k, v]) => a[k] === v)
    .map(([, , label, tone]) => h("li", { class: `chip ${tone}`, text: label })));
  if (tool.outputSchema) $("#tool-annotations").append(h("li", { class: "chip", text: "structured output" }));

  toolFields = buildFields($("#tool-fields"), tool.inputSchema, { idPrefix: "arg", h });
  if (!toolFields.count) $("#tool-fields").append(h("p", { class: "muted", text: "This tool takes no arguments." }));
  $("#progress").hidden = true;
  $("#result").replaceChildren();
  $("#result").dataset.state = "empty";
  updateCallButtons();
}

function updateCallButtons() {
  const running = !!callController;
  $("#call").disabled = !selectedTool || running || currentState() !== "connected";
  $("#cancel").disabled = !running;
  $("#call").textContent = running ? "Calling…" : "Call tool";
  $("#tool-form").setAttribute("aria-busy", running ? "true" : "false");
}

$("#tool-form").addEventListener("submit", (e) => {
  e.preventDefault();
  callSelectedTool();
});

$("#cancel").addEventListener("click", () => callController?.abort());

const progressBox = $("#progress");
const progressBar = $("#progress-bar");
const progressText = $("#progress-text");

function showProgress(p) {
  progressBox.hidden = false;
  progressBox.dataset.state = "running";
  const total = Number(p.total) || 0;
  const done = Number(p.progress) || 0;
  let text = p.message || "";
  if (total > 0) {
    progressBar.max = total;
    progressBar.value = Math.min(done, total);
    const pct = Math.round((Math.min(done, total) / total) * 100);
    text = `${text || `${done} of ${total}`} · ${pct}%`;
  } else {
    progressBar.removeAttribute("value");
    text = text || `Progress: ${done}`;
  }
  progressText.textContent = text;
  progressBox.dataset.updates = String(Number(progressBox.dataset.updates || 0) + 1);
}

async function callSelectedTool() {
  const c = client;
  const tool = selectedTool;
  if (!c || !tool || callController || c.state !== "connected") return;
  const form = $("#tool-form");
  const args = toolFields.read();
  if (!args) {
    form.reportValidity();
    return;
  }
  const ctrl = new AbortController();
  callController = ctrl;
  updateCallButtons();
  progressBox.hidden = false;
  progressBox.dataset.state = "waiting";
  progressBox.dataset.updates = "0";
  progressBar.removeAttribute("value");
  progressText.textContent = "Waiting for the server…";
  const result = $("#result");
  result.dataset.state = "running";
  result.replaceChildren(h("p", { class: "muted", text: `Calling ${tool.name}…` }));
  addLog("call", `${tool.name}(${JSON.stringify(args)})`);
  const started = performance.now();
  try {
    const r = await c.callTool(tool.name, args, { signal: ctrl.signal, onProgress: (p) => { if (callController === ctrl) showProgress(p); } });
    const ms = performance.now() - started;
    renderResult(tool, r, ms);
    addLog("result", `${tool.name}: ${r.isError ? "tool error" : "ok"} in ${fmtMs(ms)}`, r.isError ? "warn" : "info");
    if (progressBox.dataset.updates === "0") progressBox.hidden = true;
    else progressBox.dataset.state = "done";
    announce(`${tool.name} ${r.isError ? "returned an error" : "finished"} in ${fmtMs(ms)}`);
  } catch (err) {
    const ms = performance.now() - started;
    if (err.code === "aborted") {
      result.dataset.state = "cancelled";
      result.replaceChildren(h("div", { class: "result-head" },
        h("h3", { text: "Cancelled" }),
        h("span", { class: "chip warn", text: "aborted" }),
        h("span", { class: "muted", text: `after ${fmtMs(ms)}` })),
      h("p", { class: "muted", text: "The call was cancelled; the server was told to stop." }));
      progressBox.dataset.state = "cancelled";
      progressText.textContent = `Cancelled · ${progressText.textContent}`;
      addLog("call", `${tool.name} cancelled`, "warn");
      announce(`${tool.name} cancelled`);
    } else {
      result.dataset.state = "failed";
      result.replaceChildren(errorBox(`Calling ${tool.name} failed`, err));
      progressBox.hidden = true;
      addLog("error", `${tool.name}: ${describeError(err).message}`, "error");
    }
  } finally {
    if (callController === ctrl) callController = null;
    updateCallButtons();
  }
}

function renderResult(tool, r, ms) {
  const result = $("#result");
  result.dataset.state = r.isError ? "error" : "ok";
  const parts = [h("div", { class: "result-head" },
    h("h3", { text: r.isError ? "Tool error" : "Result" }),
    h("span", { class: `chip ${r.isError ? "danger" : "ok"}`, text: r.isError ? "isError" : "ok" }),
    h("span", { class: "muted", text: `${tool.name} · ${fmtMs(ms)}` }))];
  const content = Array.isArray(r.content) ? r.content : [];
  if (content.length) parts.push(h("div", { class: "content-list" }, content.map(renderContent)));
  if (r.structuredContent !== undefined && r.structuredContent !== null) {
    parts.push(h("details", { class: "structured", open: true },
      h("summary", { text: "Structured content" }),
      h("pre", { class: "json", text: pretty(r.structuredContent) })));
  }
  if (!content.length && r.structuredContent == null) parts.push(h("p", { class: "muted", text: "The tool returned no content." }));
  result.replaceChildren(...parts);
}

const SAFE_MEDIA = /^(image|audio)\/[A-Za-z0-9.+-]+$/;

/** Renders one MCP content block (tool results, prompt and sampling messages). */
function renderContent(item) {
  if (!item || typeof item !== "object") return h("pre", { class: "text-content", text: String(item) });
  switch (item.type) {
    case "text":
      return h("pre", { class: "text-content", text: item.text ?? "" });
    case "image":
    case "audio": {
      const mime = String(item.mimeType || "");
      if (typeof item.data === "string" && SAFE_MEDIA.test(mime) && mime.startsWith(item.type)) {
        const src = `data:${mime};base64,${item.data}`;
        return item.type === "image"
          ? h("figure", { class: "media" }, h("img", { src, alt: `Image returned by the server (${mime})` }), h("figcaption", { text: mime }))
          : h("figure", { class: "media" }, h("audio", { src, controls: true }), h("figcaption", { text: mime }));
      }
      return h("p", { class: "muted", text: `${item.type} content (${mime || "unknown type"}) that cannot be shown` });
    }
    case "resource_link":
      return h("div", { class: "resource-link" },
        h("span", { text: item.title || item.name || item.uri }),
        h("code", { text: item.uri }),
        h("button", { type: "button", class: "btn btn-ghost btn-small", onclick: () => readResource(item.uri), text: "Read" }));
    case "resource": {
      const res = item.resource ?? {};
      return h("div", { class: "embedded" },
        h("div", { class: "muted" }, h("code", { text: res.uri ?? "" }), res.mimeType ? ` · ${res.mimeType}` : ""),
        typeof res.text === "string"
          ? h("pre", { class: "text-content", text: res.text })
          : h("p", { class: "muted", text: `binary content, ${fmtBytes(Math.floor(((res.blob ?? "").length * 3) / 4))}` }));
    }
    default:
      return h("pre", { class: "json", text: pretty(item) });
  }
}

// ---------------------------------------------------------------- resources

async function refreshResources() {
  const c = client;
  if (!c || c.state !== "connected") return;
  const list = $("#resources");
  const tplList = $("#resource-templates");
  if (c.capabilities && !c.capabilities.resources) {
    list.replaceChildren(h("li", { class: "empty", text: "This server offers no resources." }));
    tplList.replaceChildren(h("li", { class: "empty", text: "None." }));
    return;
  }
  const [res, tpl] = await Promise.allSettled([c.listResources(), c.listResourceTemplates()]);
  if (client !== c) return;
  if (res.status === "fulfilled") {
    list.replaceChildren(...(res.value.length ? res.value.map((r) => h("li", {},
      h("button", { type: "button", class: "item", dataset: { uri: r.uri }, onclick: () => readResource(r.uri) },
        h("span", { class: "item-title", text: r.title || r.name || r.uri }),
        h("code", { class: "item-sub", text: r.uri }),
        r.description && h("span", { class: "item-desc", text: r.description }),
        r.mimeType && h("span", { class: "chip", text: r.mimeType })))) : [h("li", { class: "empty", text: "No resources." })]));
  } else {
    list.replaceChildren(h("li", { class: "empty error-text", text: `Could not list resources: ${describeError(res.reason).message}` }));
  }
  if (tpl.status === "fulfilled") {
    tplList.replaceChildren(...(tpl.value.length ? tpl.value.map(renderTemplate) : [h("li", { class: "empty", text: "No resource templates." })]));
  } else {
    tplList.replaceChildren(h("li", { class: "empty error-text", text: `Could not list templates: ${describeError(tpl.reason).message}` }));
  }
}

/** Variables of an RFC 6570 template, with the operator of their expression. */
function templateVars(template) {
  const vars = [];
  for (const m of String(template).matchAll(/\{([+#./;?&]?)([^}]+)\}/g)) {
    for (const v of m[2].split(",")) vars.push({ op: m[1], name: v.replace(/[*]|:\d+$/g, "") });
  }
  return vars;
}

function expandTemplate(template, values) {
  return String(template).replace(/\{([+#./;?&]?)([^}]+)\}/g, (_, op, list) => {
    const names = list.split(",").map((v) => v.replace(/[*]|:\d+$/g, ""));
    const enc = op === "+" || op === "#" ? encodeURI : encodeURIComponent;
    const vals = names.map((n) => values[n]).filter((v) => v !== undefined && v !== "");
    if (!vals.length) return "";
    switch (op) {
      case "?": case "&":
        return op + names.filter((n) => values[n]).map((n) => `${n}=${enc(values[n])}`).join("&");
      case ";":
        return names.filter((n) => values[n]).map((n) => `;${n}=${enc(values[n])}`).join("");
      case ".": case "/":
        return op + vals.map(enc).join(op);
      case "#":
        return "#" + vals.map(enc).join(",");
      default:
        return vals.map(enc).join(",");
    }
  });
}

let templateSeq = 0;

function renderTemplate(t) {
  const vars = templateVars(t.uriTemplate);
  const seq = ++templateSeq;
  const inputs = vars.map((v, i) => {
    const id = `tpl-${seq}-${i}`;
    return h("div", { class: "field field-compact" },
      h("label", { for: id, class: "field-label", text: v.name }),
      h("input", { id, name: v.name, type: "text", required: true, autocomplete: "off", placeholder: v.name }));
  });
  const form = h("form", { class: "template-form", novalidate: true, onsubmit: (e) => {
    e.preventDefault();
    if (!e.target.checkValidity()) return e.target.reportValidity();
    const values = Object.fromEntries(new FormData(e.target));
    readResource(expandTemplate(t.uriTemplate, values));
  } },
  inputs,
  h("button", { type: "submit", class: "btn btn-secondary btn-small", text: "Read" }));
  return h("li", { class: "template" },
    h("div", { class: "item-title", text: t.title || t.name }),
    h("code", { class: "item-sub", text: t.uriTemplate }),
    t.description && h("span", { class: "item-desc", text: t.description }),
    form);
}

async function readResource(uri) {
  const c = client;
  if (!c) return;
  const view = $("#resource-view");
  view.hidden = false;
  view.replaceChildren(h("p", { class: "muted", text: `Reading ${uri}…` }));
  addLog("read", uri);
  try {
    const r = await c.readResource(uri);
    if (client !== c) return;
    const contents = r.contents ?? [];
    view.replaceChildren(
      h("div", { class: "viewer-head" },
        h("h3", { text: "Contents" }),
        h("button", { type: "button", class: "btn btn-ghost btn-small", text: "Close", onclick: () => { view.hidden = true; } })),
      ...contents.map((item) => h("div", { class: "embedded" },
        h("div", { class: "muted" }, h("code", { text: item.uri ?? uri }), item.mimeType ? ` · ${item.mimeType}` : ""),
        typeof item.text === "string"
          ? h("pre", { class: "text-content", text: item.text })
          : item.blob && SAFE_MEDIA.test(item.mimeType || "") && item.mimeType.startsWith("image/")
            ? h("img", { src: `data:${item.mimeType};base64,${item.blob}`, alt: item.uri ?? uri })
            : h("p", { class: "muted", text: `binary content, ${fmtBytes(Math.floor(((item.blob ?? "").length * 3) / 4))}` }))),
      ...(contents.length ? [] : [h("p", { class: "muted", text: "The resource is empty." })]));
  } catch (err) {
    if (client !== c) return;
    view.replaceChildren(errorBox(`Could not read ${uri}`, err));
  }
}

// ---------------------------------------------------------------- prompts

let prompts = [];
let selectedPrompt = null;

async function refreshPrompts() {
  const c = client;
  if (!c || c.state !== "connected") return;
  const list = $("#prompts");
  if (c.capabilities && !c.capabilities.prompts) {
    list.replaceChildren(h("li", { class: "empty", text: "This server offers no prompts." }));
    return;
  }
  try {
    prompts = await c.listPrompts();
  } catch (err) {
    if (client !== c) return;
    list.replaceChildren(h("li", { class: "empty error-text", text: `Could not list prompts: ${describeError(err).message}` }));
    return;
  }
  if (client !== c) return;
  list.replaceChildren(...(prompts.length ? prompts.map((p) => h("li", {},
    h("button", { type: "button", class: "item", dataset: { prompt: p.name }, onclick: () => selectPrompt(p.name) },
      h("span", { class: "item-title", text: p.title || p.name }),
      h("code", { class: "item-sub", text: p.name }),
      p.description && h("span", { class: "item-desc", text: p.description })))) : [h("li", { class: "empty", text: "No prompts." })]));
  if (selectedPrompt && !prompts.some((p) => p.name === selectedPrompt.name)) {
    selectedPrompt = null;
    $("#prompt-form").hidden = true;
  }
}

function selectPrompt(name) {
  const p = prompts.find((x) => x.name === name);
  if (!p) return;
  selectedPrompt = p;
  for (const b of $("#prompts").querySelectorAll("button[data-prompt]")) {
    if (b.dataset.prompt === name) b.setAttribute("aria-current", "true");
    else b.removeAttribute("aria-current");
  }
  $("#prompt-name").textContent = p.title || p.name;
  $("#prompt-description").textContent = p.description || "";
  $("#prompt-description").hidden = !p.description;
  const fields = $("#prompt-fields");
  fields.replaceChildren();
  (p.arguments ?? []).forEach((a, i) => {
    const id = `prompt-arg-${i}`;
    const desc = a.description ? `${id}-desc` : undefined;
    fields.append(h("div", { class: "field" },
      h("label", { for: id, class: "field-label" }, a.title || a.name,
        a.required && h("span", { class: "req", "aria-hidden": "true", text: " *" }),
        a.required && h("span", { class: "visually-hidden", text: " (required)" })),
      h("input", { id, name: a.name, type: "text", required: !!a.required, autocomplete: "off", "aria-describedby": desc }),
      desc && h("small", { id: desc, class: "hint", text: a.description })));
  });
  if (!(p.arguments ?? []).length) fields.append(h("p", { class: "muted", text: "This prompt takes no arguments." }));
  $("#prompt-form").hidden = false;
  $("#prompt-view").hidden = true;
  fields.querySelector("input")?.focus();
}

$("#prompt-form").addEventListener("submit", async (e) => {
  e.preventDefault();
  const form = e.currentTarget;
  const c = client;
  const p = selectedPrompt;
  if (!c || !p) return;
  if (!form.checkValidity()) return form.reportValidity();
  const args = {};
  for (const input of $("#prompt-fields").querySelectorAll("input")) {
    if (input.value !== "") args[input.name] = input.value;
  }
  const view = $("#prompt-view");
  view.hidden = false;
  view.replaceChildren(h("p", { class: "muted", text: `Getting ${p.name}…` }));
  addLog("prompt", `${p.name}(${JSON.stringify(args)})`);
  try {
    const r = await c.getPrompt(p.name, args);
    if (client !== c) return;
    view.replaceChildren(
      h("div", { class: "viewer-head" }, h("h3", { text: r.description || "Messages" })),
      h("ol", { class: "messages" }, (r.messages ?? []).map(renderMessage)));
  } catch (err) {
    if (client !== c) return;
    view.replaceChildren(errorBox(`Could not get ${p.name}`, err));
  }
});

function renderMessage(m) {
  const content = Array.isArray(m.content) ? m.content : [m.content];
  return h("li", { class: `message role-${m.role === "assistant" ? "assistant" : "user"}` },
    h("span", { class: "role", text: m.role }),
    h("div", { class: "message-body" }, content.map(renderContent)));
}

// ---------------------------------------------------------------- server requests (dialogs)

// One dialog at a time: requests that arrive together wait their turn.
let dialogQueue = Promise.resolve();
function queued(fn) {
  const p = dialogQueue.then(fn, fn);
  dialogQueue = p.catch(() => {});
  return p;
}

/** Shows the elicitation dialog; resolves { action, content }. */
function elicit(params) {
  const dialog = $("#elicit-dialog");
  const form = $("#elicit-form");
  addLog("elicitation", params?.message || "the server asks for input");
  $("#elicit-message").textContent = params?.message || "The server asks for some information.";
  const container = $("#elicit-fields");
  let fields;
  if (params?.mode === "url" && params.url) {
    container.replaceChildren(h("p", {}, "The server asks you to open ",
      h("a", { href: validServerURL(params.url)?.href ?? "#", target: "_blank", rel: "noopener noreferrer", text: params.url })));
    fields = { read: () => ({}), count: 0 };
  } else {
    fields = buildFields(container, params?.requestedSchema, { idPrefix: "elicit", h });
    if (!fields.count) container.append(h("p", { class: "muted", text: "No fields requested: Accept to confirm." }));
  }
  return new Promise((resolve) => {
    const done = (result) => {
      form.removeEventListener("submit", onSubmit);
      dialog.removeEventListener("cancel", onCancel);
      dialog.removeEventListener("close", onClose);
      $("#elicit-decline").removeEventListener("click", onDecline);
      $("#elicit-cancel").removeEventListener("click", onCancelClick);
      dialog.close();
      addLog("elicitation", `answered: ${result.action}`);
      resolve(result);
    };
    const onSubmit = (e) => {
      e.preventDefault();
      const content = fields.read();
      if (!content) return form.reportValidity();
      done({ action: "accept", content });
    };
    const onCancel = (e) => { e.preventDefault(); done({ action: "cancel" }); };
    const onDecline = () => done({ action: "decline" });
    const onCancelClick = () => done({ action: "cancel" });
    // Closed any other way (a disconnect, the browser's close watcher): cancel.
    const onClose = () => done({ action: "cancel" });
    form.addEventListener("submit", onSubmit);
    dialog.addEventListener("cancel", onCancel);
    dialog.addEventListener("close", onClose);
    $("#elicit-decline").addEventListener("click", onDecline);
    $("#elicit-cancel").addEventListener("click", onCancelClick);
    dialog.showModal();
    (container.querySelector("input, select, textarea") ?? $("#elicit-accept")).focus();
  });
}

/** Text of a sampling message's content (a block or an array of blocks). */
function contentText(content) {
  const blocks = Array.isArray(content) ? content : [content];
  return blocks.filter((b) => b?.type === "text").map((b) => b.text).join("\n");
}

/** A plausible reply without a model: the first sentence of the user's text, trimmed to the asked length. */
function cannedReply(params) {
  const last = [...(params.messages ?? [])].reverse().find((m) => m.role === "user");
  const text = contentText(last?.content ?? "").trim();
  if (!text) return "Hello from the mcpwasm demo page! (canned reply)";
  const limit = Number(/at most (\d+) words/i.exec(text)?.[1]) || 25;
  const body = text.includes("\n\n") ? text.slice(text.indexOf("\n\n") + 2) : text;
  const sentence = (body.match(/[^.!?]+[.!?]?/) ?? [body])[0].trim();
  const words = sentence.split(/\s+/);
  return words.length > limit ? `${words.slice(0, limit).join(" ")}…` : sentence;
}

/** Shows the sampling dialog; resolves the assistant message, or rejects when the user refuses. */
function sample(params) {
  const dialog = $("#sampling-dialog");
  const form = $("#sampling-form");
  const reply = $("#sampling-reply");
  addLog("sampling", `the server asks for a model reply (${(params?.messages ?? []).length} messages)`);
  const sys = $("#sampling-system");
  sys.textContent = params?.systemPrompt ? `System: ${params.systemPrompt}` : "";
  sys.hidden = !params?.systemPrompt;
  $("#sampling-messages").replaceChildren(...(params?.messages ?? []).map(renderMessage));
  const hints = (params?.modelPreferences?.hints ?? []).map((x) => x.name).filter(Boolean);
  $("#sampling-meta").textContent = [
    params?.maxTokens ? `Up to ${params.maxTokens} tokens.` : "",
    hints.length ? `Preferred models: ${hints.join(", ")}.` : "",
  ].filter(Boolean).join(" ");
  reply.value = "";
  return new Promise((resolve, reject) => {
    const finish = () => {
      form.removeEventListener("submit", onSubmit);
      dialog.removeEventListener("cancel", onCancel);
      dialog.removeEventListener("close", onClose);
      $("#sampling-reject").removeEventListener("click", onReject);
      $("#sampling-canned").removeEventListener("click", onCanned);
      dialog.close();
    };
    const onSubmit = (e) => {
      e.preventDefault();
      if (!reply.value.trim()) {
        reply.setCustomValidity("Type a reply, or use the canned one.");
        reply.reportValidity();
        reply.setCustomValidity("");
        return;
      }
      finish();
      addLog("sampling", "replied");
      resolve({
        role: "assistant",
        content: { type: "text", text: reply.value },
        model: $("#sampling-model").value.trim() || "human-in-the-loop",
        stopReason: "endTurn",
      });
    };
    const refuse = () => {
      finish();
      addLog("sampling", "rejected by the user", "warn");
      reject(new Error("The user rejected the sampling request."));
    };
    const onCancel = (e) => { e.preventDefault(); refuse(); };
    const onReject = () => refuse();
    const onCanned = () => { reply.value = cannedReply(params ?? {}); reply.focus(); };
    const onClose = () => refuse();
    form.addEventListener("submit", onSubmit);
    dialog.addEventListener("cancel", onCancel);
    dialog.addEventListener("close", onClose);
    $("#sampling-reject").addEventListener("click", onReject);
    $("#sampling-canned").addEventListener("click", onCanned);
    dialog.showModal();
    reply.focus();
  });
}

// Ctrl/Cmd+Enter in a textarea submits its form (Enter alone adds a line).
document.addEventListener("keydown", (e) => {
  if (e.key === "Enter" && (e.ctrlKey || e.metaKey) && e.target instanceof HTMLTextAreaElement && e.target.form) {
    e.preventDefault();
    e.target.form.requestSubmit();
  }
});

// ---------------------------------------------------------------- start

urlInput.value = new URLSearchParams(location.search).get("server") || DEFAULT_SERVER;
renderState("idle");
loadModule();

// For debugging in the console; the page does not rely on it.
Object.defineProperty(window, "demo", { value: { get client() { return client; }, get mcp() { return mcp; } } });
