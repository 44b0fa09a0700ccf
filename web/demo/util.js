// util.js — small helpers every panel of the demo page uses: DOM building,
// formatting, error text, screen-reader announcements.
//
// Server data only ever reaches the DOM as text (textContent, attribute
// values), never as HTML: h() sets "text" as textContent.

export const $ = (sel) => document.querySelector(sel);

/** Creates an element; attrs set properties for class/text/dataset/on*, attributes otherwise. */
export function h(tag, attrs = {}, ...children) {
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

/**
 * Makes parent's children nodes (elements), keeping each child that already equals
 * (isEqualNode) its replacement. A button replaced while a person presses
 * it loses the click (mousedown hit the old one, mouseup the new one) and
 * its focus; panels that redraw on every status event must not do that to
 * controls whose look did not change.
 */
export function updateChildren(parent, nodes) {
  const old = [...parent.childNodes];
  nodes.forEach((n, i) => {
    if (i >= old.length) parent.append(n);
    else if (!old[i].isEqualNode(n)) old[i].replaceWith(n);
  });
  for (const o of old.slice(nodes.length)) o.remove();
}

/**
 * An <img> of the first of icons (a server's, a prompt's) this page may
 * show: its Content-Security-Policy allows images from itself and data:
 * URIs, so an icon on another origin is not fetched. Decorative: the name
 * beside it says what it is.
 */
export function iconOf(icons) {
  const icon = (icons ?? []).find((i) => typeof i?.src === "string" && i.src.startsWith("data:image/"));
  return icon ? h("img", { class: "icon", src: icon.src, alt: "", width: 16, height: 16 }) : null;
}

export function fmtBytes(n) {
  if (!Number.isFinite(n) || n <= 0) return "0 B";
  const units = ["B", "KB", "MB", "GB"];
  const i = Math.min(units.length - 1, Math.floor(Math.log(n) / Math.log(1024)));
  return `${(n / 1024 ** i).toFixed(i === 0 ? 0 : 1)} ${units[i]}`;
}

export function fmtMs(ms) {
  return ms < 1000 ? `${Math.round(ms)} ms` : `${(ms / 1000).toFixed(2)} s`;
}

export function pretty(v) {
  try {
    return JSON.stringify(v, null, 2);
  } catch {
    return String(v);
  }
}

/** Pretty JSON of a JSON text when it parses, else the text itself. */
export function prettyText(s) {
  try {
    return JSON.stringify(JSON.parse(s), null, 2);
  } catch {
    return String(s ?? "");
  }
}

/** { message, code } of an MCPError or anything thrown ("auth_required · status 401"). */
export function describeError(err) {
  if (!err) return { message: "Unknown error", code: "" };
  const code = err.code ? String(err.code) : "";
  const status = err.status ? `status ${err.status}` : "";
  return { message: err.message || String(err), code: [code, status].filter(Boolean).join(" · "), detail: err.detail ?? "" };
}

/** Media types the page shows inline (as data: URLs, which the CSP allows for images and audio). */
export const SAFE_MEDIA = /^(image|audio)\/[A-Za-z0-9.+-]+$/;

/** The states in which a server waits for the person to sign in: expected steps, not failures. */
export const SIGN_IN_STATES = new Set(["needs_auth", "declined"]);

/** Error codes that ask for a sign-in rather than report a failure. */
export const SIGN_IN_CODES = new Set(["auth_required", "declined", "popup_blocked", "insufficient_scope"]);

export function announce(text) {
  const a = $("#announcer");
  a.textContent = "";
  // A fresh text node after a tick makes screen readers repeat equal messages.
  setTimeout(() => { a.textContent = text; }, 30);
}

export function errorBox(title, err) {
  const { message, code, detail } = describeError(err);
  return h("div", { class: "error-box", role: "alert" },
    h("strong", { text: title }),
    h("p", { class: "error-message", text: message }),
    code && h("p", { class: "error-code" }, "code: ", h("code", { text: code })),
    detail && detail !== message && h("details", { class: "error-detail" },
      h("summary", { text: "Details for developers" }), h("code", { text: detail })));
}

/** The URL when value is an absolute http(s) URL, else null. */
export function validServerURL(value) {
  try {
    const u = new URL(value);
    return u.protocol === "http:" || u.protocol === "https:" ? u : null;
  } catch {
    return null;
  }
}
