// prompts.js — the explorer's prompts: the list, the argument form of the
// selected prompt, and the messages it expands to.
import { $, h, describeError, errorBox, iconOf } from "./util.js";
import { renderMessage } from "./content.js";
import { addLog } from "./log.js";
import { session, currentClient } from "./connect.js";

let prompts = [];
let selectedPrompt = null;

async function refreshPrompts() {
  const c = currentClient();
  if (!c || c.state !== "connected") return;
  const list = $("#prompts");
  if (c.capabilities && !c.capabilities.prompts) {
    list.replaceChildren(h("li", { class: "empty", text: "This server offers no prompts." }));
    return;
  }
  try {
    prompts = await c.listPrompts();
  } catch (err) {
    if (currentClient() !== c) return;
    list.replaceChildren(h("li", { class: "empty error-text", text: `Could not list prompts: ${describeError(err).message}` }));
    return;
  }
  if (currentClient() !== c) return;
  list.replaceChildren(...(prompts.length ? prompts.map((p) => h("li", {},
    h("button", { type: "button", class: "item", dataset: { prompt: p.name }, onclick: () => selectPrompt(p.name) },
      h("span", { class: "item-title" }, iconOf(p.icons), p.title || p.name),
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
  const completes = !!currentClient()?.capabilities?.completions;
  (p.arguments ?? []).forEach((a, i) => {
    const id = `prompt-arg-${i}`;
    const desc = a.description ? `${id}-desc` : undefined;
    const list = completes ? h("datalist", { id: `${id}-values` }) : null;
    const input = h("input", { id, name: a.name, type: "text", required: !!a.required, autocomplete: "off", "aria-describedby": desc, list: list?.id });
    if (list) {
      input.addEventListener("input", () => suggest(p, input, list));
      input.addEventListener("focus", () => suggest(p, input, list), { once: true });
    }
    fields.append(h("div", { class: "field" },
      h("label", { for: id, class: "field-label" }, a.title || a.name,
        a.required && h("span", { class: "req", "aria-hidden": "true", text: " *" }),
        a.required && h("span", { class: "visually-hidden", text: " (required)" })),
      input, list,
      desc && h("small", { id: desc, class: "hint", text: a.description })));
  });
  if (!(p.arguments ?? []).length) fields.append(h("p", { class: "muted", text: "This prompt takes no arguments." }));
  $("#prompt-form").hidden = false;
  $("#prompt-view").hidden = true;
  fields.querySelector("input")?.focus();
}

/** The values typed in the prompt form's other fields, for a completion's context. */
function otherArgs(input) {
  const args = {};
  for (const other of $("#prompt-fields").querySelectorAll("input")) {
    if (other !== input && other.value !== "") args[other.name] = other.value;
  }
  return args;
}

/**
 * Fills an argument's suggestions (its datalist) with the server's
 * completions of what is typed; an answer to an older value is dropped.
 */
async function suggest(p, input, list) {
  const c = currentClient();
  const value = input.value;
  let values;
  try {
    ({ values } = await c.complete({ type: "ref/prompt", name: p.name }, { name: input.name, value }, { context: otherArgs(input) }));
  } catch (err) {
    addLog("prompt", `completions of ${input.name}: ${describeError(err).message}`);
    return;
  }
  if (currentClient() !== c || selectedPrompt !== p || input.value !== value) return;
  list.replaceChildren(...values.map((v) => h("option", { value: v })));
}

async function getPrompt(e) {
  e.preventDefault();
  const form = e.currentTarget;
  const c = currentClient();
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
    if (currentClient() !== c) return;
    view.replaceChildren(
      h("div", { class: "viewer-head" }, h("h3", { text: r.description || "Messages" })),
      h("ol", { class: "messages" }, (r.messages ?? []).map(renderMessage)));
  } catch (err) {
    if (currentClient() !== c) return;
    view.replaceChildren(errorBox(`Could not get ${p.name}`, err));
  }
}

export function initPrompts() {
  $("#prompt-form").addEventListener("submit", getPrompt);
  session.addEventListener("connected", refreshPrompts);
  session.addEventListener("promptschanged", refreshPrompts);
  session.addEventListener("reset", (e) => {
    $("#prompts").replaceChildren(h("li", { class: "empty", text: e.detail.message }));
    $("#prompt-form").hidden = true;
    $("#prompt-view").hidden = true;
  });
}
