// tasks.js — the explorer's kept tasks: tool calls the server runs as
// tasks whose results nobody has received yet, such as a call that was
// running when the page reloaded. Resume follows one to its result, shown
// as a call's result; Cancel ends it at the server.
import { $, h, describeError, announce, errorBox, fmtMs } from "./util.js";
import { addLog } from "./log.js";
import { session, currentClient } from "./connect.js";
import { renderResult } from "./tools.js";

async function refreshTasks() {
  const c = currentClient();
  if (!c || c.state !== "connected") return;
  let tasks;
  try {
    tasks = await c.tasks();
  } catch (err) {
    addLog("error", `tasks: ${describeError(err).message}`, "error");
    return;
  }
  if (currentClient() !== c) return;
  $("#tasks-section").hidden = tasks.length === 0;
  $("#tasks").replaceChildren(...tasks.map((t) => h("li", { class: "task-item", dataset: { task: t.taskId } },
    h("span", { class: "item-title", text: t.tool }),
    h("span", { class: "item-sub", dataset: { taskStatus: t.taskId }, text: statusText(t) }),
    h("span", { class: "task-actions" },
      h("button", { type: "button", class: "btn btn-secondary btn-small", dataset: { resume: t.taskId }, text: "Resume", onclick: () => resume(c, t) }),
      h("button", { type: "button", class: "btn btn-ghost btn-small", dataset: { cancelTask: t.taskId }, text: "Cancel", onclick: () => cancel(c, t) })))));
}

function statusText(t) {
  const started = new Date(t.createdAt).toLocaleTimeString();
  return `${t.status}${t.statusMessage ? `: ${t.statusMessage}` : ""} · started ${started}`;
}

function busy(id, on) {
  for (const b of document.querySelectorAll(`#tasks li[data-task="${CSS.escape(id)}"] button`)) b.disabled = on;
}

async function resume(c, t) {
  busy(t.taskId, true);
  const status = document.querySelector(`#tasks [data-task-status="${CSS.escape(t.taskId)}"]`);
  const result = $("#result");
  result.dataset.state = "running";
  result.replaceChildren(h("p", { class: "muted", text: `Following the task of ${t.tool}…` }));
  addLog("call", `resume task ${t.taskId} of ${t.tool}`);
  const started = performance.now();
  try {
    const r = await c.resumeTask(t.taskId, { onProgress: (p) => { if (status && p.message) status.textContent = `working: ${p.message}`; } });
    const ms = performance.now() - started;
    renderResult({ name: t.tool }, r, ms);
    addLog("result", `${t.tool} (task): ${r.isError ? "tool error" : "ok"} after ${fmtMs(ms)}`, r.isError ? "warn" : "info");
    announce(`The task of ${t.tool} finished`);
  } catch (err) {
    result.dataset.state = "failed";
    result.replaceChildren(errorBox(`Following the task of ${t.tool} failed`, err));
    addLog("error", `${t.tool} (task): ${describeError(err).message}`, "error");
  }
  if (currentClient() === c) await refreshTasks();
}

async function cancel(c, t) {
  busy(t.taskId, true);
  try {
    await c.cancelTask(t.taskId);
    addLog("call", `cancelled task ${t.taskId} of ${t.tool}`, "warn");
    announce(`The task of ${t.tool} was cancelled`);
  } catch (err) {
    addLog("error", `cancel task ${t.taskId}: ${describeError(err).message}`, "error");
    busy(t.taskId, false);
  }
  if (currentClient() === c) await refreshTasks();
}

export function initTasks() {
  session.addEventListener("connected", refreshTasks);
  session.addEventListener("reset", () => {
    $("#tasks-section").hidden = true;
    $("#tasks").replaceChildren();
  });
}
