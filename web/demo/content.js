// content.js — renders MCP content blocks (tool results, prompt and
// sampling messages) as DOM, text only.
import { h, fmtBytes, pretty, SAFE_MEDIA } from "./util.js";
import { readResource } from "./resources.js";

/** Renders one MCP content block. */
export function renderContent(item) {
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
        h("button", { type: "button", class: "btn btn-ghost btn-small", onclick: () => readResource(item.uri), text: "Read", "aria-label": `Read ${item.uri}` }));
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

/** Renders a prompt or sampling message {role, content}. */
export function renderMessage(m) {
  const content = Array.isArray(m.content) ? m.content : [m.content];
  return h("li", { class: `message role-${m.role === "assistant" ? "assistant" : "user"}` },
    h("span", { class: "role", text: m.role }),
    h("div", { class: "message-body" }, content.map(renderContent)));
}
