// sandbox.js — the MCP Apps sandbox proxy: the page that frames this one
// (the host) sends the view's HTML; this page loads it in an inner iframe
// of an opaque origin (no allow-same-origin: the view reaches neither this
// origin's storage nor this page) under the policy its declaration allows
// (csp.js), and relays JSON-RPC messages between the two. Only the
// frame's parent is listened to, and only from the origin that sent the
// view; only the view's window is listened to besides. With the page's
// stateKey, the view gets a localStorage the page keeps (viewstorage.js).
import { allow, policy } from "./csp.js";
import { isStorage, storageScript } from "./viewstorage.js";

const PROXY_READY = "ui/notifications/sandbox-proxy-ready";
const RESOURCE_READY = "ui/notifications/sandbox-resource-ready";
const SANDBOX_PREFIX = "ui/notifications/sandbox-";
// This proxy's own word to the host (not in the specification): the view
// left its document and was removed.
const VIEW_GONE = "ui/notifications/sandbox-view-gone";

/** A JSON-RPC 2.0 message, as far as a relay needs to know. */
const isMessage = (d) => d !== null && typeof d === "object" && !Array.isArray(d) && d.jsonrpc === "2.0";

/**
 * The view's HTML with its policy first, so that it governs everything the
 * view's own markup loads. trust is the grants of the page that sent it:
 * the page decides what its servers' views may do, and csp.js adds only
 * what a grant it knows names. storage, when the page keeps the view's
 * state, is what its localStorage starts with (a script right after the
 * policy, so before any of the view's).
 */
function withPolicy(html, csp, trust, host, storage) {
  let meta = `<meta http-equiv="Content-Security-Policy" content="${policy(csp, [host, location.origin], trust).policy}">`;
  if (isStorage(storage)) meta += storageScript(storage);
  // After a doctype (before it would put the document in quirks mode);
  // the parser puts a meta before <html> into the head it creates.
  const m = /^\uFEFF?\s*<!doctype[^>]*>/i.exec(html);
  return m ? m[0] + meta + html.slice(m[0].length) : meta + html;
}

function start() {
  if (window.parent === window) {
    document.body.textContent = "This page hosts MCP App views inside another page; open that page instead.";
    return;
  }
  let host = null; // the origin of the page that sent the view
  let view = null; // the inner iframe

  function load(params) {
    if (params === null || typeof params !== "object" || typeof params.html !== "string") return;
    view = document.createElement("iframe");
    // The view's sandbox is fixed here: a host cannot widen it.
    view.setAttribute("sandbox", "allow-scripts allow-forms");
    const features = allow(params.permissions);
    if (features) view.setAttribute("allow", features);
    view.setAttribute("title", document.title);
    view.srcdoc = withPolicy(params.html, params.csp, params.trust, host, params.storage);
    // A view may navigate its own frame, to a document its policy no
    // longer governs: that document gets no more messages either way.
    let loads = 0;
    view.addEventListener("load", () => {
      if (++loads < 2) return;
      view.remove();
      view = null;
      window.parent.postMessage({ jsonrpc: "2.0", method: VIEW_GONE, params: {} }, host);
    });
    document.body.appendChild(view);
  }

  window.addEventListener("message", (e) => {
    const d = e.data;
    if (view && e.source === view.contentWindow) {
      // The proxy's own notifications (sandbox-*) are never the view's.
      if (isMessage(d) && !String(d.method ?? "").startsWith(SANDBOX_PREFIX)) window.parent.postMessage(d, host);
      return;
    }
    if (e.source !== window.parent || !isMessage(d)) return;
    if (host === null) {
      if (d.method !== RESOURCE_READY) return;
      host = e.origin;
      load(d.params);
      return;
    }
    if (e.origin !== host || d.method === RESOURCE_READY) return; // one view per proxy, from one host
    view?.contentWindow?.postMessage(d, "*"); // an opaque origin can only be addressed as "*"
  });
  // Says nothing but "ready"; the host checks that it came from its frame.
  window.parent.postMessage({ jsonrpc: "2.0", method: PROXY_READY, params: {} }, "*");
}

start();
