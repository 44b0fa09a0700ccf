// resources.js — the explorer's resources and resource templates (RFC 6570
// variables become a small form), and the viewer of a read resource.
import { $, h, fmtBytes, describeError, errorBox, SAFE_MEDIA } from "./util.js";
import { addLog } from "./log.js";
import { session, currentClient } from "./connect.js";

let templateSeq = 0;

async function refreshResources() {
  const c = currentClient();
  if (!c || c.state !== "connected") return;
  const list = $("#resources");
  const tplList = $("#resource-templates");
  if (c.capabilities && !c.capabilities.resources) {
    list.replaceChildren(h("li", { class: "empty", text: "This server offers no resources." }));
    tplList.replaceChildren(h("li", { class: "empty", text: "None." }));
    return;
  }
  const [res, tpl] = await Promise.allSettled([c.listResources(), c.listResourceTemplates()]);
  if (currentClient() !== c) return;
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
  h("button", { type: "submit", class: "btn btn-secondary btn-small", text: "Read", "aria-label": `Read ${t.name}` }));
  return h("li", { class: "template" },
    h("div", { class: "item-title", text: t.title || t.name }),
    h("code", { class: "item-sub", text: t.uriTemplate }),
    t.description && h("span", { class: "item-desc", text: t.description }),
    form);
}

/** Reads a resource of the explorer's server into the viewer. */
export async function readResource(uri) {
  const c = currentClient();
  if (!c) return;
  const view = $("#resource-view");
  view.hidden = false;
  view.replaceChildren(h("p", { class: "muted", text: `Reading ${uri}…` }));
  addLog("read", uri);
  try {
    const r = await c.readResource(uri);
    if (currentClient() !== c) return;
    const contents = r.contents ?? [];
    view.replaceChildren(
      h("div", { class: "viewer-head" },
        h("h3", { text: "Contents" }),
        h("button", { type: "button", class: "btn btn-ghost btn-small", text: "Close", "aria-label": "Close the resource", onclick: () => { view.hidden = true; } })),
      ...contents.map((item) => h("div", { class: "embedded" },
        h("div", { class: "muted" }, h("code", { text: item.uri ?? uri }), item.mimeType ? ` · ${item.mimeType}` : ""),
        typeof item.text === "string"
          ? h("pre", { class: "text-content", text: item.text })
          : item.blob && SAFE_MEDIA.test(item.mimeType || "") && item.mimeType.startsWith("image/")
            ? h("img", { src: `data:${item.mimeType};base64,${item.blob}`, alt: item.uri ?? uri })
            : h("p", { class: "muted", text: `binary content, ${fmtBytes(Math.floor(((item.blob ?? "").length * 3) / 4))}` }))),
      ...(contents.length ? [] : [h("p", { class: "muted", text: "The resource is empty." })]));
  } catch (err) {
    if (currentClient() !== c) return;
    view.replaceChildren(errorBox(`Could not read ${uri}`, err));
  }
}

export function initResources() {
  session.addEventListener("connected", refreshResources);
  session.addEventListener("resourceschanged", refreshResources);
  session.addEventListener("reset", (e) => {
    for (const id of ["#resources", "#resource-templates"]) {
      $(id).replaceChildren(h("li", { class: "empty", text: e.detail.message }));
    }
    $("#resource-view").hidden = true;
  });
}
