// servers.js — the Servers panel: one catalog of MCP servers behind one
// tool list (the chat's model sees it). It starts with the dev server's two
// demo servers and takes more by URL or as pasted {"mcpServers": {…}} JSON.
// Each server shows its status (state, tools, breaker) with Sign in,
// Enable/Disable and Remove; below come the aggregated tool list and the
// list exported in each model API's format.
//
// Listing tools never opens a sign-in window: a server that needs one
// shows "Sign in required" and its Sign in button, which calls
// cat.authorize(id) inside the click (the window must open in the gesture).
import { $, h, describeError, announce, pretty, validServerURL, updateChildren, SIGN_IN_CODES } from "./util.js";
import { addLog } from "./log.js";

/** Events: statuschange {id, status}, listchange (servers added or removed). */
export const serverEvents = new EventTarget();

let cat = null;
const order = []; // server ids as the page shows them
const info = new Map(); // id → {url, title}
const trusted = new Set(); // servers whose views the person lets run beyond the default policy
let toolsSeq = 0;
let exportFormat = "openai";

const list = $("#servers");
const messages = $("#servers-messages");
const toolList = $("#catalog-tools");
const exportBox = $("#export-json");

const STATUS_LABELS = {
  idle: "Not connected yet",
  connecting: "Connecting…",
  needs_auth: "Sign in required",
  authorizing: "Signing in…",
  connected: "Connected",
  declined: "Sign-in declined",
  failed: "Failed",
  closed: "Closed",
  disabled: "Disabled",
};

const CLIENT_NAME = "mcpwasm demo page";

/** The catalog, once made. */
export function getCatalog() {
  return cat;
}

/** A server's display name: its title, else its id. */
export function serverTitle(id) {
  return info.get(id)?.title || id;
}

/** Every server's status, {id: status}. */
export function statuses() {
  return cat ? cat.status() : {};
}

/**
 * The grants a server's views get beyond the specification's default
 * policy (mcp.apps.render's trust): all three for a server the person
 * marked "Trust its views", else none.
 */
export function viewTrust(id) {
  return trusted.has(id) ? ["eval", "wasm", "blob"] : undefined;
}

function emit(type, detail) {
  serverEvents.dispatchEvent(new CustomEvent(type, { detail }));
}

/**
 * Signs in to server id: call it from a click handler, synchronously (the
 * sign-in window opens at once).
 */
export function signIn(id) {
  if (!cat) return Promise.resolve();
  addLog("catalog", `${id}: opening the sign-in window`);
  return cat.authorize(id).then(() => {
    addLog("catalog", `${id}: signed in`);
    announce(`Signed in to ${serverTitle(id)}`);
    refreshTools();
  }, (err) => {
    const expected = SIGN_IN_CODES.has(err.code) || err.code === "aborted";
    addLog("catalog", `${id}: sign-in: ${describeError(err).message}`, expected ? "warn" : "error");
    if (err.code === "popup_blocked") say("warn", "The browser blocked the sign-in window. Allow pop-ups for this page, then press Sign in again.");
    renderServer(id);
  });
}

function say(tone, text) {
  messages.append(h("li", { class: "notice", dataset: { tone } }, text));
  while (messages.children.length > 6) messages.firstElementChild.remove();
}

// ------------------------------------------------------------ server rows

function statusChips(st) {
  const label = st.idle ? "Idle: reconnects when used" : STATUS_LABELS[st.state] ?? st.state ?? "unknown";
  const chips = [h("span", { class: "chip state-chip", dataset: { state: st.state ?? "idle" }, text: label })];
  if (st.pendingSignIn) chips.push(h("span", { class: "chip warn pending-chip", title: "The assistant waits for you to sign in to this server", text: "sign-in pending" }));
  if (st.required) chips.push(h("span", { class: "chip required-chip", title: "This app needs the server: it cannot be turned off", text: "required" }));
  if (st.state === "connected" || st.tools) chips.push(h("span", { class: "chip tools-chip", text: `${st.tools ?? 0} tool${st.tools === 1 ? "" : "s"}` }));
  if (st.breaker === "open") {
    const at = st.retryAt ? ` until ${new Date(st.retryAt).toLocaleTimeString([], { hour12: false })}` : "";
    chips.push(h("span", { class: "chip danger breaker-chip", title: "Calls failed repeatedly: the catalog pauses calls to this server", text: `paused${at}` }));
  } else if (st.breaker === "half_open") {
    chips.push(h("span", { class: "chip warn breaker-chip", title: "The catalog is checking whether the server is back", text: "checking" }));
  }
  return chips;
}

function serverRow(id) {
  const st = cat.status(id);
  const meta = info.get(id) ?? {};
  const title = meta.title || id;
  const needsSignIn = st.state === "needs_auth" || st.state === "declined";
  const disabled = st.state === "disabled";
  const failure = st.error && !SIGN_IN_CODES.has(st.error.code) && st.state === "failed";
  const note = needsSignIn
    ? (st.state === "declined" ? "Sign-in declined: its tools are left out until you sign in." : "Sign in to add its tools.")
    : failure ? st.error.message : "";
  const actions = h("div", { class: "server-actions" },
    needsSignIn && h("button", {
      type: "button", class: "btn btn-primary btn-small sign-in", "aria-label": `Sign in to ${title}`, text: "Sign in",
      onclick: () => { signIn(id); },
    }),
    h("button", {
      type: "button", class: `btn btn-secondary btn-small ${disabled ? "enable" : "disable"}`,
      "aria-label": `${disabled ? "Enable" : "Disable"} ${title}`, text: disabled ? "Enable" : "Disable",
      disabled: st.required === true, title: st.required ? "Required by this app: it stays on" : undefined,
      onclick: () => toggle(id, disabled),
    }),
    h("button", {
      type: "button", class: "btn btn-ghost btn-small remove", "aria-label": `Remove ${title}`, text: "Remove",
      onclick: () => remove(id),
    }),
    h("label", { class: "trust-views", title: "Its views may evaluate code, compile WebAssembly and run blob: workers, as the reference host lets them; the chat's log says so for each view" },
      h("input", {
        type: "checkbox", checked: trusted.has(id),
        onchange: (e) => {
          if (e.target.checked) trusted.add(id);
          else trusted.delete(id);
          say("info", e.target.checked ? `${title}: its next views may evaluate code, compile WebAssembly and run blob: workers.` : `${title}: its next views get the default policy.`);
        },
      }),
      " Trust its views"));
  return h("li", { class: "server", dataset: { server: id, state: st.state ?? "idle" } },
    h("div", { class: "server-head" },
      h("span", { class: "server-title", text: title }),
      title !== id && h("code", { class: "server-id", text: id })),
    h("code", { class: "server-url", text: meta.url ?? "" }),
    h("div", { class: "chips server-status", role: "status", "aria-label": `${title} status` }, statusChips(st)),
    note && h("p", { class: `server-note${failure ? " error-text" : ""}`, text: note }),
    actions);
}

function renderServers() {
  updateChildren(list, order.length ? order.map(serverRow) : [h("li", { class: "empty", text: "No servers yet: add one below." })]);
  $("#servers-count").textContent = order.length ? String(order.length) : "";
}

function renderServer(id) {
  const old = [...list.querySelectorAll("li.server")].find((li) => li.dataset.server === id);
  if (!old || !cat) return renderServers();
  const row = serverRow(id);
  // An unchanged row stays: replacing it under the pointer loses a click.
  if (old.isEqualNode(row)) return;
  const hadFocus = old.contains(document.activeElement) ? document.activeElement.className : null;
  old.replaceWith(row);
  if (hadFocus) {
    // Keep the keyboard where it was (the same button, else the first one).
    const again = [...row.querySelectorAll("button")].find((b) => b.className === hadFocus) ?? row.querySelector("button");
    again?.focus();
  }
}

async function toggle(id, enable) {
  try {
    if (enable) await cat.enable(id);
    else await cat.disable(id);
    addLog("catalog", `${id}: ${enable ? "enabled" : "disabled"}`);
  } catch (err) {
    say("error", `${enable ? "Enabling" : "Disabling"} ${id}: ${describeError(err).message}`);
  }
  renderServer(id);
  refreshTools();
}

async function remove(id) {
  try {
    await cat.remove(id);
  } catch (err) {
    say("error", `Removing ${id}: ${describeError(err).message}`);
    return;
  }
  order.splice(order.indexOf(id), 1);
  info.delete(id);
  trusted.delete(id);
  addLog("catalog", `${id}: removed`);
  announce(`Removed ${id}`);
  renderServers();
  emit("listchange");
  refreshTools();
  $("#servers-refresh").focus();
}

// ------------------------------------------------------------ adding servers

/** An id for a server at url that is not taken yet: "host", "host_2", … */
function freeId(url) {
  const base = (url.hostname.split(".").filter((p) => p !== "www")[0] || "server").replace(/[^A-Za-z0-9_-]/g, "_").slice(0, 24) || "server";
  let id = base;
  for (let n = 2; order.includes(id); n++) id = `${base}_${n}`;
  return id;
}

/** Adds one server; throws the catalog's error (its text says what is wrong). */
function addServer(id, config) {
  if (order.includes(id)) throw new Error(`There is already a server "${id}"; remove it first or pick another id.`);
  const cfg = { ...config };
  if (cfg.url === undefined && typeof cfg.serverUrl === "string") cfg.url = cfg.serverUrl;
  if (cfg.clientName === undefined && !("command" in cfg)) cfg.clientName = CLIENT_NAME;
  cat.add(id, cfg);
  order.push(id);
  info.set(id, { url: cfg.url, title: typeof cfg.title === "string" ? cfg.title : "" });
}

function onAddByURL(e) {
  e.preventDefault();
  const urlInput = $("#add-server-url");
  const idInput = $("#add-server-id");
  const url = validServerURL(urlInput.value.trim());
  if (!url) {
    urlInput.setCustomValidity("Enter the http:// or https:// URL of an MCP endpoint.");
    urlInput.reportValidity();
    urlInput.setCustomValidity("");
    return;
  }
  if (!idInput.checkValidity()) {
    idInput.setCustomValidity("Letters, digits, _ and - only (it prefixes the tool names).");
    idInput.reportValidity();
    idInput.setCustomValidity("");
    return;
  }
  const id = idInput.value.trim() || freeId(url);
  try {
    addServer(id, { url: url.href });
  } catch (err) {
    say("error", describeError(err).message);
    return;
  }
  addLog("catalog", `${id}: added (${url.href})`);
  say("ok", `Added ${id}.`);
  urlInput.value = "";
  idInput.value = "";
  renderServers();
  emit("listchange");
  refreshTools();
}

function onAddJSON(e) {
  e.preventDefault();
  const area = $("#servers-json");
  let doc;
  try {
    doc = JSON.parse(area.value);
  } catch (err) {
    area.setCustomValidity(`Not valid JSON: ${err.message}`);
    area.reportValidity();
    area.setCustomValidity("");
    return;
  }
  const entries = doc && typeof doc === "object" && !Array.isArray(doc) ? (doc.mcpServers ?? doc.servers) : undefined;
  if (!entries || typeof entries !== "object" || Array.isArray(entries)) {
    say("error", 'Paste an object like {"mcpServers": {"name": {"url": "https://…/mcp"}}}.');
    return;
  }
  let added = 0;
  for (const [id, entry] of Object.entries(entries)) {
    try {
      if (entry === null || typeof entry !== "object" || Array.isArray(entry)) throw new Error(`server "${id}": the entry must be an object with a "url"`);
      addServer(id, entry);
      added++;
      addLog("catalog", `${id}: added from JSON`);
    } catch (err) {
      // Entries the catalog cannot use (a local "command" server, a bad
      // url) are left out with the catalog's own explanation.
      say("warn", describeError(err).message);
      addLog("catalog", `${id}: left out: ${describeError(err).message}`, "warn");
    }
  }
  if (added) {
    say("ok", `Added ${added} server${added === 1 ? "" : "s"}.`);
    area.value = "";
  }
  renderServers();
  emit("listchange");
  refreshTools();
}

// ------------------------------------------------------------ tools and export

/** Lists the catalog's tools (connecting enabled servers; never a popup). */
export async function refreshTools() {
  if (!cat) return;
  const seq = ++toolsSeq;
  toolList.setAttribute("aria-busy", "true");
  let tools;
  try {
    tools = await cat.tools();
  } catch (err) {
    if (seq !== toolsSeq) return;
    toolList.replaceChildren(h("li", { class: "empty error-text", text: `Could not list the tools: ${describeError(err).message}` }));
    toolList.setAttribute("aria-busy", "false");
    return;
  }
  if (seq !== toolsSeq) return;
  toolList.setAttribute("aria-busy", "false");
  $("#catalog-tools-count").textContent = tools.length ? String(tools.length) : "";
  updateChildren(toolList, (tools.length ? tools.map((t) => h("li", { class: "catalog-tool", dataset: { name: t.name, server: t.serverId } },
    h("code", { class: "catalog-tool-name", text: t.name }),
    h("span", { class: "chip", title: `from the server "${t.serverId}"`, text: t.serverId }),
    t.tool?.annotations?.readOnlyHint !== true && h("span", { class: "chip warn", title: "Not marked read-only: the chat asks you before the model runs it", text: "asks first" }),
    (t.tool?.title || t.tool?.description) && h("span", { class: "catalog-tool-desc", text: t.tool.title || t.tool.description })))
    : [h("li", { class: "empty", text: "No tools yet: connect or sign in to a server." })]));
  for (const id of order) renderServer(id);
  if (!$("#export").hidden) renderExport();
}

async function renderExport() {
  if (!cat) return;
  const format = exportFormat;
  for (const b of document.querySelectorAll("#export-formats button")) b.setAttribute("aria-pressed", String(b.dataset.format === format));
  try {
    const out = await cat.toolsFor(format);
    if (format !== exportFormat) return;
    exportBox.textContent = pretty(out);
    exportBox.dataset.format = format;
  } catch (err) {
    exportBox.textContent = `Could not export: ${describeError(err).message}`;
  }
}

// ------------------------------------------------------------ start

/**
 * Makes the page's one catalog, with the dev server's demo servers (config
 * from /devserver/config.json) and approve, the chat's approval prompt, then
 * lists its tools.
 */
export function startServers(mcp, config, { approve, onElicitation }) {
  const servers = {};
  if (config.mcpURL) {
    servers.demo = {
      url: config.mcpURL, clientName: CLIENT_NAME, title: "Demo server", required: true,
      description: config.asURL ? "echo, add, slow, … behind an OAuth sign-in" : "echo, add, slow, …",
    };
  }
  if (config.mcp2URL) {
    servers.notes = { url: config.mcp2URL, clientName: CLIENT_NAME, title: "Notes server", description: "weather, text tools and notes, no sign-in" };
  }
  // serverTools: the model may list the servers and ask to turn one on,
  // which for a server that needs a sign-in shows the chat's sign-in card.
  cat = mcp.catalog({ servers, approve, onElicitation, apps: true, serverTools: true });
  for (const [id, s] of Object.entries(servers)) {
    order.push(id);
    info.set(id, { url: s.url, title: s.title });
  }
  const logged = new Map(); // id → the state last logged
  cat.addEventListener("statuschange", (e) => {
    const { id, status } = e.detail;
    const signIn = status.error && SIGN_IN_CODES.has(status.error.code);
    const why = status.error && !signIn ? `: ${status.error.message}` : "";
    if (logged.get(id) !== status.state + why) {
      logged.set(id, status.state + why);
      addLog("catalog", `${id}: ${status.state}${why}`, status.state === "failed" && !signIn ? "error" : "info");
    }
    renderServer(id);
    emit("statuschange", { id, status });
  });
  cat.addEventListener("toolschanged", () => refreshTools());
  cat.addEventListener("authrequired", (e) => {
    addLog("catalog", `${e.detail.id}: sign in required (Sign in in the Servers panel)`);
  });
  cat.addEventListener("warning", (e) => say("warn", `${e.detail.id}: ${e.detail.message}`));
  for (const w of cat.warnings) say("warn", w);

  $("#servers-refresh").disabled = false;
  $("#servers-refresh").addEventListener("click", () => refreshTools());
  $("#add-server-form").addEventListener("submit", onAddByURL);
  $("#add-json-form").addEventListener("submit", onAddJSON);
  for (const b of document.querySelectorAll("#export-formats button")) {
    b.addEventListener("click", () => {
      exportFormat = b.dataset.format;
      renderExport();
    });
  }
  $("#export-toggle").addEventListener("click", () => {
    const box = $("#export");
    box.hidden = !box.hidden;
    $("#export-toggle").setAttribute("aria-expanded", String(!box.hidden));
    if (!box.hidden) renderExport();
  });
  renderServers();
  emit("listchange");
  refreshTools();
  return cat;
}
