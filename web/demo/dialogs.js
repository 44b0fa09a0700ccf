// dialogs.js — the server's requests to the person: elicitation (a form
// generated from the requested schema) and sampling (the person answers as
// the model, or sends a canned reply). One dialog at a time; requests that
// arrive together wait their turn.
import { $, h, validServerURL } from "./util.js";
import { buildFields } from "./fields.js";
import { renderMessage } from "./content.js";
import { addLog } from "./log.js";

let dialogQueue = Promise.resolve();

function queued(fn) {
  const p = dialogQueue.then(fn, fn);
  dialogQueue = p.catch(() => {});
  return p;
}

/** Answers elicitation/create: resolves { action, content }. */
export const elicit = (params) => queued(() => showElicit(params));

/** Answers sampling/createMessage: resolves the assistant message, or rejects when the person refuses. */
export const sample = (params) => queued(() => showSample(params));

/** Closes every open dialog (its request is answered as cancelled or refused). */
export function closeDialogs() {
  for (const d of document.querySelectorAll("dialog[open]")) d.close();
}

function showElicit(params) {
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

function showSample(params) {
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

export function initDialogs() {
  // Ctrl/Cmd+Enter in a textarea submits its form (Enter alone adds a line).
  document.addEventListener("keydown", (e) => {
    if (e.key === "Enter" && (e.ctrlKey || e.metaKey) && e.target instanceof HTMLTextAreaElement && e.target.form) {
      e.preventDefault();
      e.target.form.requestSubmit();
    }
  });
}
