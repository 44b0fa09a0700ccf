// tools.js — the explorer's tools: the list (arrow keys move), the form
// generated from the selected tool's input schema, the call with progress
// and Cancel, and the result.
import { $, h, fmtMs, pretty, describeError, announce, errorBox } from "./util.js";
import { buildFields } from "./fields.js";
import { renderContent } from "./content.js";
import { addLog } from "./log.js";
import { session, currentClient, currentState } from "./connect.js";

let tools = [];
let selectedTool = null;
let toolFields = null;
let callController = null;

const toolList = $("#tools");
const progressBox = $("#progress");
const progressBar = $("#progress-bar");
const progressText = $("#progress-text");

const ANNOTATION_CHIPS = [
  ["readOnlyHint", true, "read-only", "ok"],
  ["destructiveHint", true, "destructive", "danger"],
  ["idempotentHint", true, "idempotent", ""],
  ["openWorldHint", true, "open world", ""],
];

async function refreshTools() {
  const c = currentClient();
  if (!c || c.state !== "connected") return;
  if (c.capabilities && !c.capabilities.tools) {
    tools = [];
    renderTools("This server offers no tools.");
    return;
  }
  try {
    const list = await c.listTools();
    if (currentClient() !== c) return;
    tools = list;
    renderTools("This server offers no tools.");
  } catch (err) {
    if (currentClient() !== c) return;
    addLog("error", `tools/list: ${describeError(err).message}`, "error");
    toolList.replaceChildren(h("li", { class: "empty error-text", text: `Could not list tools: ${describeError(err).message}` }));
  }
}

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
      if (currentState() === "connected") {
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

function onListKey(e) {
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
}

function clearToolDetail() {
  selectedTool = null;
  toolFields = null;
  $("#tool-detail").hidden = true;
  $("#tool-empty").hidden = false;
  for (const b of toolList.querySelectorAll("button[data-tool]")) b.removeAttribute("aria-current");
}

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
  progressBox.hidden = true;
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
  const c = currentClient();
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

/** Shows a call's result r (of tool, {name}) in the result area. */
export function renderResult(tool, r, ms) {
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

export function initTools() {
  $("#tools-refresh").addEventListener("click", refreshTools);
  toolList.addEventListener("keydown", onListKey);
  $("#tool-form").addEventListener("submit", (e) => {
    e.preventDefault();
    callSelectedTool();
  });
  $("#cancel").addEventListener("click", () => callController?.abort());
  session.addEventListener("statechange", (e) => {
    $("#tools-refresh").disabled = e.detail.state !== "connected";
    updateCallButtons();
  });
  session.addEventListener("connected", refreshTools);
  session.addEventListener("toolschanged", refreshTools);
  session.addEventListener("ending", () => callController?.abort());
  session.addEventListener("reset", (e) => {
    tools = [];
    renderTools(e.detail.message);
  });
}
